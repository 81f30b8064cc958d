//! The cxx bridge between the generic C++ registration layer (`csrc/`) and the
//! Rust op table. C++ never knows individual ops: it asks Rust for the table,
//! registers every schema, and forwards boxed calls here by op index.
//!
//! Every `extern "Rust"` function catches panics: a panic must never unwind
//! into C++ (cxx would abort the process).

use crate::registry::{self, Backend};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cxx::bridge(namespace = "myns")]
pub(crate) mod ffi {
    /// What one argument or result of a boxed call holds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    enum ArgKind {
        None,
        Tensor,
        Float,
        Int,
        Bool,
    }

    /// Device type of a tensor argument, as far as myns cares.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    enum DeviceKind {
        Cpu,
        Cuda,
        Meta,
        Other,
    }

    /// Which dispatch key a kernel was called for.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    enum Key {
        Cpu,
        Cuda,
        Meta,
    }

    /// One boxed argument. For tensors the C++ side fills the metadata once, so
    /// Rust reads sizes, strides, dtype and device without further FFI calls.
    /// Pointers travel as `usize`: `tensor` is an `at::Tensor*` (tch's
    /// `C_tensor`), `sizes`/`strides` point at `dim` int64s (0 when symbolic).
    #[derive(Clone, Copy, Debug)]
    struct Arg {
        kind: ArgKind,
        tensor: usize,
        data: usize,
        sizes: usize,
        strides: usize,
        dim: i64,
        numel: i64,
        dtype: i8,
        device: DeviceKind,
        device_index: i16,
        contiguous: bool,
        float_value: f64,
        int_value: i64,
    }

    extern "Rust" {
        fn op_count() -> usize;
        fn op_name(op: usize) -> &'static str;
        fn op_schema(op: usize) -> &'static str;
        fn op_has_backward(op: usize) -> bool;
        fn op_saves_outputs(op: usize) -> bool;
        /// Runs op `op` for dispatch key `key`; writes owned `at::Tensor*`s to
        /// `outs` and returns how many.
        fn run_kernel(op: usize, key: Key, args: &[Arg], stream: usize, outs: &mut [usize]) -> Result<usize>;
        /// Gradients of op `op` for each tensor input (0 where none), given
        /// the inputs, the forward outputs and the output gradients.
        fn run_backward(
            op: usize,
            args: &[Arg],
            outputs: &[Arg],
            grads: &[Arg],
            needs_grad: &[u8],
            outs: &mut [usize],
        ) -> Result<usize>;
    }

    unsafe extern "C++" {
        include!("myns/csrc/bridge.h");
        /// Resolves `myns::<name>` in the dispatcher once; the handle lives forever.
        fn find_op(name: &str) -> Result<usize>;
        /// Calls an op through the dispatcher (autograd and all): owned
        /// `at::Tensor*` results go to `outs`.
        fn call_op(handle: usize, args: &[Arg], outs: &mut [usize]) -> Result<usize>;
        /// A new contiguous tensor (an owned `at::Tensor*`) of c10 ScalarType
        /// `dtype` on the CPU (`cuda_device` < 0) or on CUDA device
        /// `cuda_device`, allocated as aten's own kernels allocate outputs
        /// (`at::detail::empty_cpu` / `empty_cuda`: no dispatcher round trip).
        fn new_empty(sizes: &[i64], dtype: i8, cuda_device: i16) -> Result<usize>;
        /// Whether float32 matrix products may use TF32 tensor cores, as
        /// `torch.backends.cuda.matmul.allow_tf32` (or
        /// `torch.set_float32_matmul_precision`) says right now. An error
        /// where PyTorch raises one too (legacy and new precision APIs mixed).
        fn allow_tf32_matmul() -> Result<bool>;
    }
}

pub(crate) use ffi::{Arg, ArgKind, DeviceKind, Key};

/// Runs `f`, turning a panic into an error so it never crosses into C++.
fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(anyhow::anyhow!("myns: internal error (panic): {msg}"))
        }
    }
}

/// Formats an error chain for C++, which raises it as a `c10::Error`
/// (a `RuntimeError` in Python).
fn to_cxx<T>(r: anyhow::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("{e:#}"))
}

fn op_count() -> usize {
    registry::ops().len()
}

fn op_name(op: usize) -> &'static str {
    registry::ops().get(op).map_or("", |s| s.name)
}

fn op_schema(op: usize) -> &'static str {
    registry::ops().get(op).map_or("", |s| s.schema)
}

fn op_has_backward(op: usize) -> bool {
    registry::ops().get(op).is_some_and(|s| s.backward.is_some())
}

fn op_saves_outputs(op: usize) -> bool {
    registry::ops().get(op).is_some_and(|s| s.save_outputs)
}

fn run_kernel(op: usize, key: Key, args: &[Arg], stream: usize, outs: &mut [usize]) -> Result<usize, String> {
    to_cxx(guarded(|| {
        let spec = registry::ops().get(op).ok_or_else(|| anyhow::anyhow!("myns: no op #{op}"))?;
        let backend = match key {
            Key::Cpu => Backend::Cpu,
            Key::Cuda => Backend::Cuda { stream },
            _ => Backend::Meta,
        };
        let call = registry::Call::new(spec, args);
        let results = if backend == Backend::Meta { (spec.meta)(&call)? } else { (spec.forward)(&call, backend)? };
        registry::write_outputs(spec, results, outs)
    }))
}

fn run_backward(
    op: usize,
    args: &[Arg],
    outputs: &[Arg],
    grads: &[Arg],
    needs_grad: &[u8],
    outs: &mut [usize],
) -> Result<usize, String> {
    to_cxx(guarded(|| {
        let spec = registry::ops().get(op).ok_or_else(|| anyhow::anyhow!("myns: no op #{op}"))?;
        let backward = spec.backward.ok_or_else(|| anyhow::anyhow!("myns::{}: has no backward", spec.name))?;
        let ctx = registry::BackwardCtx::new(spec, args, outputs, grads, needs_grad);
        let results = backward(&ctx)?;
        registry::write_grads(spec, results, outs)
    }))
}
