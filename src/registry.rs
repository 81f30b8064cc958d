//! The op table and the typed view of a boxed call that every op is written
//! against. An op is one `OpSpec` (schema, doc, forward, meta, backward) in its
//! own module under `src/ops/`; `ops::ALL` lists them and the C++ layer
//! registers whatever is there.

use crate::bridge::{Arg, ArgKind, DeviceKind};
use anyhow::{bail, Result};
use std::mem::ManuallyDrop;
use tch::Tensor;

/// Where a forward call runs; CUDA carries PyTorch's current stream for the
/// input's device (a `cudaStream_t`, 0 for the legacy default stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Cuda { stream: usize },
    Meta,
}

pub type Forward = fn(&Call, Backend) -> Result<Vec<Tensor>>;
pub type Meta = fn(&Call) -> Result<Vec<Tensor>>;
/// Returns one gradient per tensor input (`None` where there is none).
pub type Backward = fn(&BackwardCtx) -> Result<Vec<Option<Tensor>>>;

/// Everything the library knows about one op.
pub struct OpSpec {
    /// Name in the `myns` namespace, e.g. `"matmul"`.
    pub name: &'static str,
    /// Full schema as PyTorch parses it, e.g. `"matmul(Tensor a, Tensor b) -> Tensor"`.
    pub schema: &'static str,
    /// One-paragraph user documentation (Python docstring, C ABI query).
    pub doc: &'static str,
    /// CPU and CUDA kernel.
    pub forward: Forward,
    /// Output metadata only. Sizes may be symbolic (`torch.compile(dynamic=True)`):
    /// build outputs from aten ops on the inputs, never from concrete sizes.
    pub meta: Meta,
    /// Gradient formula; may call only dispatcher ops (aten or `myns::`).
    pub backward: Option<Backward>,
    /// Whether backward needs the forward outputs (kept alive until then).
    pub save_outputs: bool,
    /// The dispatcher handle, resolved on first call from Rust.
    pub handle: std::sync::OnceLock<usize>,
}

pub fn ops() -> &'static [&'static OpSpec] {
    crate::ops::ALL
}

pub use crate::types::DType;

/// `torch.float32`-style name of a raw c10 ScalarType, for error messages.
pub fn dtype_display(raw: i8) -> String {
    crate::types::dtype_name(raw)
}

/// A typed view of one boxed call: arguments by position, with error messages
/// that name the op and the argument.
pub struct Call<'a> {
    pub spec: &'static OpSpec,
    args: &'a [Arg],
}

impl<'a> Call<'a> {
    pub fn new(spec: &'static OpSpec, args: &'a [Arg]) -> Self {
        Call { spec, args }
    }

    fn arg(&self, i: usize) -> Result<&'a Arg> {
        match self.args.get(i) {
            Some(a) => Ok(a),
            None => bail!("myns::{}: missing argument #{i}", self.spec.name),
        }
    }

    pub fn tensor(&self, i: usize) -> Result<TensorArg<'a>> {
        let arg = self.arg(i)?;
        if arg.kind != ArgKind::Tensor {
            bail!("myns::{}: argument `{}` must be a tensor", self.spec.name, arg_name(self.spec, i));
        }
        Ok(TensorArg { spec: self.spec, index: i, arg })
    }

    pub fn float(&self, i: usize) -> Result<f64> {
        let arg = self.arg(i)?;
        match arg.kind {
            ArgKind::Float => Ok(arg.float_value),
            ArgKind::Int => Ok(arg.int_value as f64),
            _ => bail!("myns::{}: argument `{}` must be a float", self.spec.name, arg_name(self.spec, i)),
        }
    }

    pub fn int(&self, i: usize) -> Result<i64> {
        let arg = self.arg(i)?;
        match arg.kind {
            ArgKind::Int => Ok(arg.int_value),
            _ => bail!("myns::{}: argument `{}` must be an int", self.spec.name, arg_name(self.spec, i)),
        }
    }

    pub fn error(&self, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("myns::{}: {msg}", self.spec.name)
    }
}

/// Name of argument `i` as written in the schema (cold path: errors only).
pub fn arg_name(spec: &OpSpec, i: usize) -> String {
    let inner = spec.schema.split_once('(').and_then(|(_, r)| r.rsplit_once(')')).map_or("", |(a, _)| a);
    inner
        .split(',')
        .nth(i)
        .and_then(|a| a.split_whitespace().last())
        .map(|n| n.split('=').next().unwrap_or(n).to_string())
        .unwrap_or_else(|| format!("#{i}"))
}

/// A tensor argument borrowed from the dispatcher's stack, with its metadata.
#[derive(Clone, Copy)]
pub struct TensorArg<'a> {
    spec: &'static OpSpec,
    index: usize,
    arg: &'a Arg,
}

impl<'a> TensorArg<'a> {
    /// The tensor itself, borrowed without touching its refcount.
    pub fn tensor(&self) -> ManuallyDrop<Tensor> {
        // SAFETY: `arg.tensor` is an `at::Tensor*` on the dispatcher stack that
        // outlives this call.
        unsafe { borrow_tensor(self.arg.tensor) }
    }
    pub fn name(&self) -> String {
        arg_name(self.spec, self.index)
    }
    pub fn error(&self, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("myns::{}: argument `{}` {msg}", self.spec.name, self.name())
    }
    /// The dtype, or an error naming it if myns does not support it.
    pub fn dtype(&self) -> Result<DType> {
        DType::from_raw(self.arg.dtype).ok_or_else(|| {
            self.error(format_args!(
                "has unsupported dtype {} (supported: torch.float32, torch.float64, torch.float16, torch.bfloat16)",
                dtype_display(self.arg.dtype)
            ))
        })
    }
    pub fn device(&self) -> DeviceKind {
        self.arg.device
    }
    pub fn device_index(&self) -> i16 {
        self.arg.device_index
    }
    pub fn dim(&self) -> usize {
        self.arg.dim as usize
    }
    /// Concrete sizes; `None` when they are symbolic (meta under dynamic shapes).
    pub fn sizes(&self) -> Option<&'a [i64]> {
        // SAFETY: C++ points `sizes` at the tensor's `dim` int64 sizes, valid for the call.
        (self.arg.sizes != 0).then(|| unsafe { std::slice::from_raw_parts(self.arg.sizes as *const i64, self.dim()) })
    }
    /// Concrete sizes for a real (CPU/CUDA) kernel.
    pub fn sizes_real(&self) -> Result<&'a [i64]> {
        self.sizes().ok_or_else(|| self.error("has symbolic sizes in a real kernel"))
    }
    pub fn strides(&self) -> Option<&'a [i64]> {
        // SAFETY: as for `sizes`.
        (self.arg.strides != 0)
            .then(|| unsafe { std::slice::from_raw_parts(self.arg.strides as *const i64, self.dim()) })
    }
    pub fn numel(&self) -> i64 {
        self.arg.numel
    }
    pub fn is_contiguous(&self) -> bool {
        self.arg.contiguous
    }
    /// Address of the first element (storage offset applied); 0 for meta.
    pub fn data_ptr(&self) -> usize {
        self.arg.data
    }

    /// Checks rank.
    pub fn expect_dim(&self, dim: usize) -> Result<()> {
        if self.dim() != dim {
            return Err(self.error(format_args!("must be {dim}-D, got a {}-D tensor", self.dim())));
        }
        Ok(())
    }
    /// Checks that an argument written in place has no overlapping elements
    /// (such as an `expand()`ed view), before anything is written.
    pub fn expect_writable(&self) -> Result<()> {
        if let (Some(sizes), Some(strides)) = (self.sizes(), self.strides()) {
            if sizes.iter().zip(strides).any(|(&n, &s)| n > 1 && s == 0) {
                return Err(self.error(
                    "has overlapping memory (e.g. an expand()ed view) and cannot be written in place; pass .clone() of it",
                ));
            }
        }
        Ok(())
    }

    /// Checks that `other` has the same shape as `self` (where both are concrete).
    pub fn expect_same_shape(&self, other: &TensorArg) -> Result<()> {
        if let (Some(a), Some(b)) = (self.sizes(), other.sizes()) {
            if a != b {
                return Err(other.error(format_args!("has shape {b:?} but `{}` has shape {a:?}", self.name())));
            }
        }
        Ok(())
    }

    /// Checks that `other` has the same dtype and device as `self`.
    pub fn expect_same_dtype_device(&self, other: &TensorArg) -> Result<()> {
        if other.arg.dtype != self.arg.dtype {
            return Err(other.error(format_args!(
                "has dtype {} but `{}` has dtype {}",
                dtype_display(other.arg.dtype),
                self.name(),
                dtype_display(self.arg.dtype)
            )));
        }
        if other.arg.device != self.arg.device || other.arg.device_index != self.arg.device_index {
            return Err(other.error(format_args!(
                "is on {} but `{}` is on {}",
                other.device_string(),
                self.name(),
                self.device_string()
            )));
        }
        Ok(())
    }
    pub fn device_string(&self) -> String {
        match self.arg.device {
            DeviceKind::Cpu => "cpu".into(),
            DeviceKind::Cuda => format!("cuda:{}", self.arg.device_index),
            DeviceKind::Meta => "meta".into(),
            _ => "an unsupported device".into(),
        }
    }
    /// The tch device for real kernels.
    pub fn tch_device(&self) -> Result<tch::Device> {
        match self.arg.device {
            DeviceKind::Cpu => Ok(tch::Device::Cpu),
            DeviceKind::Cuda => Ok(tch::Device::Cuda(self.arg.device_index.max(0) as usize)),
            _ => Err(self.unsupported_device()),
        }
    }
    /// The error for a tensor on a device myns has no kernel for.
    pub fn unsupported_device(&self) -> anyhow::Error {
        self.error(format_args!("is on {}, which myns does not support", self.device_string()))
    }
}

/// Writes owned results for C++ (which takes ownership of each `at::Tensor*`).
pub(crate) fn write_outputs(spec: &OpSpec, results: Vec<Tensor>, outs: &mut [usize]) -> Result<usize> {
    if results.len() > outs.len() {
        bail!("myns::{}: too many outputs ({})", spec.name, results.len());
    }
    let n = results.len();
    for (slot, t) in outs.iter_mut().zip(results) {
        *slot = into_raw(t);
    }
    Ok(n)
}

pub(crate) fn write_grads(spec: &OpSpec, results: Vec<Option<Tensor>>, outs: &mut [usize]) -> Result<usize> {
    if results.len() > outs.len() {
        bail!("myns::{}: too many gradients ({})", spec.name, results.len());
    }
    let n = results.len();
    for (slot, t) in outs.iter_mut().zip(results) {
        *slot = t.map_or(0, into_raw);
    }
    Ok(n)
}

/// A tch view of an `at::Tensor*` someone else owns; ManuallyDrop keeps tch
/// from freeing it.
///
/// # Safety
/// `ptr` must be a live `at::Tensor*` that outlives the returned value.
pub(crate) unsafe fn borrow_tensor(ptr: usize) -> ManuallyDrop<Tensor> {
    ManuallyDrop::new(Tensor::from_ptr(ptr as *mut torch_sys::C_tensor))
}

/// Gives up ownership of a tch tensor as an `at::Tensor*`.
pub(crate) fn into_raw(t: Tensor) -> usize {
    let mut t = ManuallyDrop::new(t);
    t.as_mut_ptr() as usize
}

/// What a backward formula sees: the forward's arguments and outputs and the
/// gradients of the outputs.
pub struct BackwardCtx<'a> {
    pub inputs: Call<'a>,
    outputs: &'a [Arg],
    grads: &'a [Arg],
    needs_grad: &'a [u8],
}

impl<'a> BackwardCtx<'a> {
    pub(crate) fn new(
        spec: &'static OpSpec,
        args: &'a [Arg],
        outputs: &'a [Arg],
        grads: &'a [Arg],
        needs_grad: &'a [u8],
    ) -> Self {
        BackwardCtx { inputs: Call::new(spec, args), outputs, grads, needs_grad }
    }
    /// Forward input `i` (by argument position).
    pub fn input(&self, i: usize) -> Result<ManuallyDrop<Tensor>> {
        Ok(self.inputs.tensor(i)?.tensor())
    }
    pub fn output(&self, i: usize) -> Result<ManuallyDrop<Tensor>> {
        borrowed(self.outputs.get(i), self.inputs.spec, "output")
    }
    /// Gradient of output `i`; `None` when autograd passed an undefined gradient.
    pub fn grad(&self, i: usize) -> Option<ManuallyDrop<Tensor>> {
        // SAFETY: an `at::Tensor*` owned by the C++ caller for this call.
        self.grads.get(i).filter(|a| a.kind == ArgKind::Tensor).map(|a| unsafe { borrow_tensor(a.tensor) })
    }
    /// Whether autograd wants the gradient of tensor input number `i`
    /// (counting tensor arguments only).
    pub fn needs_grad(&self, i: usize) -> bool {
        self.needs_grad.get(i).is_some_and(|&b| b != 0)
    }
}

fn borrowed(arg: Option<&Arg>, spec: &OpSpec, what: &str) -> Result<ManuallyDrop<Tensor>> {
    match arg {
        // SAFETY: an `at::Tensor*` owned by the C++ caller for this call.
        Some(a) if a.kind == ArgKind::Tensor => Ok(unsafe { borrow_tensor(a.tensor) }),
        _ => bail!("myns::{}: missing {what}", spec.name),
    }
}

/// Builds boxed arguments for a dispatcher call from Rust.
pub enum Value<'a> {
    Tensor(&'a Tensor),
    Float(f64),
    Int(i64),
    Bool(bool),
    None,
}

impl Value<'_> {
    pub(crate) fn to_arg(&self) -> Arg {
        let mut a = Arg {
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
        };
        match self {
            Value::Tensor(t) => {
                a.kind = ArgKind::Tensor;
                a.tensor = t.as_ptr() as usize;
            }
            Value::Float(f) => {
                a.kind = ArgKind::Float;
                a.float_value = *f;
            }
            Value::Int(i) => {
                a.kind = ArgKind::Int;
                a.int_value = *i;
            }
            Value::Bool(b) => {
                a.kind = ArgKind::Bool;
                a.int_value = *b as i64;
            }
            Value::None => {}
        }
        a
    }
}

/// Calls `myns::<spec.name>` through the dispatcher (autograd, device
/// dispatch and all), as Python's `torch.ops.myns.<name>` does.
pub fn dispatch(spec: &'static OpSpec, args: &[Value]) -> Result<Vec<Tensor>> {
    let handle = match spec.handle.get() {
        Some(h) => *h,
        None => {
            let h = crate::bridge::ffi::find_op(spec.name).map_err(|e| anyhow::anyhow!("{e}"))?;
            *spec.handle.get_or_init(|| h)
        }
    };
    let args: Vec<Arg> = args.iter().map(Value::to_arg).collect();
    let mut outs = [0usize; 8];
    let n = crate::bridge::ffi::call_op(handle, &args, &mut outs).map_err(|e| anyhow::anyhow!("{e}"))?;
    // SAFETY: each slot is a new `at::Tensor*` owned by us now.
    Ok(outs[..n].iter().map(|&p| unsafe { Tensor::from_ptr(p as *mut torch_sys::C_tensor) }).collect())
}

/// `dispatch` for ops with exactly one tensor result.
pub fn dispatch1(spec: &'static OpSpec, args: &[Value]) -> Result<Tensor> {
    let mut out = dispatch(spec, args)?;
    match (out.pop(), out.is_empty()) {
        (Some(t), true) => Ok(t),
        _ => bail!("myns::{}: expected one result", spec.name),
    }
}
