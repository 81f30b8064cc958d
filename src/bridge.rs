//! The Rust entry points the generic C++ registration (`csrc/`) calls: the
//! op table's queries and the boxed kernel and gradient calls, by op index.
//! C++ never knows individual ops: it registers whatever the table holds.
//!
//! This is the one boundary where errors become exceptions: each call
//! returns an [`Outcome`] whose kind C++ raises as the matching c10 class
//! (`OutOfMemoryError`, `IndexError`, `NotImplementedError`, `ValueError`,
//! `TypeError`, else `Error`: Python's `RuntimeError`). Panics are caught
//! here and never cross into C++.

use crate::ffi::{Arg, Key, Outcome};
use crate::op::{cabi::panic_message, into_raw, BackwardCall, OpSpec};
use crate::types::{Error, ErrorKind, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cxx::bridge(namespace = "myns")]
mod rust_side {
    extern "C++" {
        include!("myns/src/ffi.rs.h");
        type Arg = crate::ffi::Arg;
        type Key = crate::ffi::Key;
        type Outcome = crate::ffi::Outcome;
    }

    extern "Rust" {
        fn op_count() -> usize;
        fn op_name(op: usize) -> &'static str;
        fn op_schema(op: usize) -> &'static str;
        fn op_has_backward(op: usize) -> bool;
        fn op_saves_outputs(op: usize) -> bool;
        /// Whether autograd keeps argument `arg` (a tensor) for backward;
        /// bit i of `requires_grad`: argument i is a tensor requiring grad.
        fn op_saves_input(op: usize, arg: usize, requires_grad: u64) -> bool;
        /// The op autograd runs instead while recording ("" for none).
        fn op_train_with(op: usize) -> &'static str;
        /// The op's autocast policy for CUDA (`cuda`) or CPU autocast: 0
        /// none, 1 the autocast dtype, 2 float32, 3 the autocast dtype in and
        /// float32 out.
        fn op_autocast(op: usize, cuda: bool) -> u8;
        /// Runs op `op` for dispatch key `key` on PyTorch's current `stream`;
        /// writes owned `at::Tensor*`s to `outs` (their number in `count`).
        fn run_kernel(op: usize, key: Key, args: &[Arg], stream: usize, outs: &mut [usize]) -> Outcome;
        /// Gradients of op `op` for each tensor input (0 where none), given
        /// the inputs, the forward outputs and the output gradients;
        /// `inputs[i]`, per tensor input: `InputFlag` bits (autograd wants
        /// its gradient; this call holds it alone, see
        /// `Backward::owns_input`); `release`: autograd frees what the node
        /// saved after this call (no `retain_graph`), so backward may write
        /// into the kept outputs.
        fn run_backward(
            op: usize,
            args: &[Arg],
            outputs: &[Arg],
            grads: &[Arg],
            inputs: &[u8],
            release: bool,
            outs: &mut [usize],
        ) -> Outcome;
    }
}

fn table() -> &'static [&'static OpSpec] {
    crate::ops::all()
}

/// Kind numbers C++ maps to exception classes (csrc/registration.cc `raise`).
fn kind_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::Runtime => 1,
        ErrorKind::OutOfMemory => 2,
        ErrorKind::Index => 3,
        ErrorKind::NotImplemented => 4,
        ErrorKind::Value => 5,
        ErrorKind::Type => 6,
        _ => 7,
    }
}

/// Runs `f` for op `op`: a panic becomes an internal error, an error an
/// `Outcome` with its kind, and a message that does not name the op yet
/// (a tch error) is prefixed with it.
fn outcome(op: usize, f: impl FnOnce(&'static OpSpec) -> Result<usize>) -> Outcome {
    let spec = table().get(op);
    let r = match spec {
        None => Err(Error::runtime(format!("myns: no op #{op}"))),
        Some(&spec) => match catch_unwind(AssertUnwindSafe(|| f(spec))) {
            Ok(r) => r,
            Err(p) => Err(Error::new(ErrorKind::Internal, format!("internal error (panic): {}", panic_message(&*p)))),
        },
    };
    match r {
        Ok(count) => Outcome { kind: 0, count, message: String::new() },
        Err(e) => {
            let name = spec.map_or("", |s| s.name);
            let e = if e.message().starts_with("myns::") { e } else { e.context(format_args!("myns::{name}")) };
            Outcome { kind: kind_code(e.kind()), count: 0, message: e.message().to_string() }
        }
    }
}

fn op_count() -> usize {
    table().len()
}

fn op_name(op: usize) -> &'static str {
    table().get(op).map_or("", |s| s.name)
}

fn op_schema(op: usize) -> &'static str {
    table().get(op).map_or("", |s| s.schema())
}

fn op_has_backward(op: usize) -> bool {
    table().get(op).is_some_and(|s| s.backward.is_some())
}

fn op_saves_outputs(op: usize) -> bool {
    table().get(op).is_some_and(|s| s.save_outputs)
}

fn op_saves_input(op: usize, arg: usize, requires_grad: u64) -> bool {
    table().get(op).is_none_or(|s| s.backward_keeps(arg, requires_grad))
}

fn op_train_with(op: usize) -> &'static str {
    table().get(op).and_then(|s| s.train_with).unwrap_or("")
}

fn op_autocast(op: usize, cuda: bool) -> u8 {
    table().get(op).map_or(0, |s| s.autocast.code(cuda))
}

fn write_outs(spec: &OpSpec, results: Vec<Option<tch::Tensor>>, outs: &mut [usize]) -> Result<usize> {
    if results.len() > outs.len() {
        return Err(spec.error(format_args!("too many results ({})", results.len())));
    }
    let n = results.len();
    for (slot, t) in outs.iter_mut().zip(results) {
        *slot = t.map_or(0, into_raw);
    }
    Ok(n)
}

fn run_kernel(op: usize, key: Key, args: &[Arg], stream: usize, outs: &mut [usize]) -> Outcome {
    outcome(op, |spec| {
        let results = spec.run(key, args, stream)?;
        write_outs(spec, results.into_iter().map(Some).collect(), outs)
    })
}

fn run_backward(op: usize, args: &[Arg], outputs: &[Arg], grads: &[Arg], inputs: &[u8], release: bool, outs: &mut [usize]) -> Outcome {
    outcome(op, |spec| {
        let backward = spec.backward.ok_or_else(|| spec.error("has no backward"))?;
        let grads = backward(spec, &BackwardCall::new(args, outputs, grads, inputs, release))?;
        write_outs(spec, grads, outs)
    })
}
