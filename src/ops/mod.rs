//! Every op of the library, one module each. Adding an op: write its module
//! (an `OpSpec` named `SPEC` plus its public Rust function), its kernel in
//! `kernels/`, and list it here. The C++ layer and the Python package pick it
//! up from this table.

use crate::registry::OpSpec;

pub mod add;
pub mod matmul;

/// The op table, in registration order.
pub static ALL: &[&OpSpec] = &[&add::SPEC, &matmul::SPEC];
