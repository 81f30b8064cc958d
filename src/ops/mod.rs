//! Every op of the library, one module each. Adding an op: write its module
//! (an `OpSpec` named `SPEC` plus its public Rust function), its kernel in
//! `kernels/`, and list it here. The C++ layer and the Python package pick it
//! up from this table.

use crate::registry::OpSpec;

pub mod add;
pub mod bmm;
pub mod fused_add_rms_norm;
pub mod matmul;
pub mod rms_norm;
pub mod scale;
pub mod silu_and_mul;
pub mod softmax;

/// The op table, in registration order.
pub static ALL: &[&OpSpec] = &[
    &add::SPEC,
    &matmul::SPEC,
    &rms_norm::SPEC,
    &rms_norm::BACKWARD_SPEC,
    &fused_add_rms_norm::SPEC,
    &silu_and_mul::SPEC,
    &silu_and_mul::BACKWARD_SPEC,
    &softmax::SPEC,
    &softmax::BACKWARD_SPEC,
    &scale::SPEC,
    &scale::INPLACE_SPEC,
    &bmm::SPEC,
];
