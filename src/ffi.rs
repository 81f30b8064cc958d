//! The cxx bridge's C++ half: the boxed-argument structs C++ fills for Rust,
//! and the few C++ functions Rust calls (the dispatcher, PyTorch's allocator,
//! PyTorch settings). Only `op` (the op framework) and `bridge` use it: op
//! modules never see these types.

#[cxx::bridge(namespace = "myns")]
pub(crate) mod cpp {
    /// What one argument or result of a boxed call holds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    enum ArgKind {
        None,
        Tensor,
        Float,
        Int,
        Bool,
        Str,
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

    /// Bits of the per-input flags autograd's backward passes to Rust
    /// (`run_backward`'s `inputs`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    enum InputFlag {
        /// Autograd wants the input's gradient.
        NeedsGrad = 1,
        /// The call holds the input alone (`Backward::owns_input`).
        Owned = 2,
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
    /// `C_tensor`), `sizes`/`strides` point at `dim` int64s (0 when symbolic),
    /// `str_ptr` at `str_len` UTF-8 bytes of a `str` argument.
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
        str_ptr: usize,
        str_len: usize,
    }

    /// How a call from C++ into Rust ended; `kind` is an `ErrorKind` number
    /// (0 = success) that C++ maps to the matching c10 exception class.
    #[derive(Debug)]
    struct Outcome {
        kind: u8,
        count: usize,
        message: String,
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

pub(crate) use cpp::{Arg, ArgKind, DeviceKind, InputFlag, Key, Outcome};

impl Arg {
    /// An empty (`None`) argument.
    pub(crate) fn none() -> Arg {
        Arg {
            kind: ArgKind::None,
            tensor: 0,
            data: 0,
            sizes: 0,
            strides: 0,
            dim: 0,
            numel: 0,
            dtype: -1,
            device: DeviceKind::Other,
            device_index: -1,
            contiguous: false,
            float_value: 0.0,
            int_value: 0,
            str_ptr: 0,
            str_len: 0,
        }
    }
}
