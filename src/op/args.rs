//! Typed views of a boxed call's arguments. Every error names the op and
//! the argument (`myns::matmul: argument `b` ...`) with no schema parsing:
//! the view carries both names.

use super::{borrow_tensor, OpSpec};
use crate::ffi::{Arg, ArgKind, DeviceKind, Key};
use crate::types::{dtype_name, DType, Device, Error, ErrorKind, Result, Scalar, ScalarType};
use std::mem::ManuallyDrop;
use tch::Tensor;

/// A tensor argument borrowed from the dispatcher's stack, with its metadata.
#[derive(Clone, Copy)]
pub struct TensorArg<'a> {
    op: &'static str,
    name: &'static str,
    arg: &'a Arg,
}

impl std::fmt::Debug for TensorArg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "myns::{} argument `{}`", self.op, self.name)
    }
}

impl<'a> TensorArg<'a> {
    /// The tensor itself, borrowed without touching its refcount.
    pub fn tensor(&self) -> ManuallyDrop<Tensor> {
        // SAFETY: `arg.tensor` is an `at::Tensor*` on the dispatcher's stack
        // (or the caller's) that outlives this call.
        unsafe { borrow_tensor(self.arg.tensor) }
    }
    pub fn name(&self) -> &'static str {
        self.name
    }
    pub fn op(&self) -> &'static str {
        self.op
    }
    /// An error of `kind` naming the op and this argument.
    pub fn error_of(&self, kind: ErrorKind, msg: impl std::fmt::Display) -> Error {
        Error::new(kind, format!("myns::{}: argument `{}` {msg}", self.op, self.name))
    }
    /// A `RuntimeError` naming the op and this argument.
    pub fn error(&self, msg: impl std::fmt::Display) -> Error {
        self.error_of(ErrorKind::Runtime, msg)
    }
    /// The float dtype, or a `NotImplementedError` naming it.
    pub fn dtype(&self) -> Result<DType> {
        Ok(self.elem_among(&[])?.float().unwrap_or(DType::F32))
    }
    /// The element type if it is a float type or one of `ints`, else a
    /// `NotImplementedError` listing what is supported.
    pub fn elem_among(&self, ints: &[ScalarType]) -> Result<ScalarType> {
        match ScalarType::from_raw(self.arg.dtype) {
            Some(s) if s.float().is_some() || ints.contains(&s) => Ok(s),
            _ => {
                let mut names: Vec<&str> = [DType::F32, DType::F64, DType::F16, DType::BF16].iter().map(|d| d.scalar_type().name()).collect();
                names.extend(ints.iter().map(|s| s.name()));
                Err(self.error_of(
                    ErrorKind::NotImplemented,
                    format_args!("has unsupported dtype {} (supported: {})", dtype_name(self.arg.dtype), names.join(", ")),
                ))
            }
        }
    }
    pub fn device(&self) -> Device {
        device_of(self.arg)
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
    /// A contiguous version: the tensor itself when it already is, else a
    /// copy made by PyTorch (on the current stream for CUDA).
    pub fn contiguous(&self) -> Result<Contiguous> {
        if self.is_contiguous() {
            return Ok(Contiguous { keep: None, ptr: self.data_ptr() });
        }
        let c = self.tensor().f_contiguous().map_err(|e| Error::from(e).context(format_args!("myns::{}: argument `{}` could not be made contiguous", self.op, self.name)))?;
        Ok(Contiguous::owned(c))
    }

    /// Checks the rank.
    pub fn expect_dim(&self, dim: usize) -> Result<()> {
        if self.dim() != dim {
            return Err(self.error(format_args!("must be {dim}-D, got a {}-D tensor", self.dim())));
        }
        Ok(())
    }
    /// Checks that `other` has the same shape as `self` (where both are concrete).
    pub fn expect_same_shape(&self, other: &TensorArg) -> Result<()> {
        if let (Some(a), Some(b)) = (self.sizes(), other.sizes()) {
            if a != b {
                return Err(other.error(format_args!("has shape {b:?} but `{}` has shape {a:?}", self.name)));
            }
        }
        Ok(())
    }
    /// Checks that `other` has the same dtype as `self` (devices are checked
    /// for every op before its kernel runs).
    pub fn expect_same_dtype(&self, other: &TensorArg) -> Result<()> {
        if other.arg.dtype != self.arg.dtype {
            return Err(other.error(format_args!(
                "has dtype {} but `{}` has dtype {}",
                dtype_name(other.arg.dtype),
                self.name,
                dtype_name(self.arg.dtype)
            )));
        }
        Ok(())
    }

    /// Byte range `[lo, hi)` this view's elements occupy (None without data).
    fn byte_range(&self) -> Option<(usize, usize)> {
        let (sizes, strides) = (self.sizes()?, self.strides()?);
        if self.data_ptr() == 0 || self.numel() == 0 {
            return None;
        }
        let elem = ScalarType::from_raw(self.arg.dtype).map_or(1, |s| s.kind().elt_size_in_bytes()) as i128;
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&n, &s) in sizes.iter().zip(strides) {
            let span = (n as i128 - 1) * s as i128;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        let base = self.data_ptr() as i128;
        Some(((base + lo * elem) as usize, (base + (hi + 1) * elem) as usize))
    }

    /// Whether two of its elements share memory (an `expand()`ed view, or
    /// strides that interleave). Exact for dense layouts; a strided layout
    /// whose dimensions, sorted by stride, do not each step past all smaller
    /// ones counts as overlapping.
    pub fn self_overlaps(&self) -> bool {
        let (Some(sizes), Some(strides)) = (self.sizes(), self.strides()) else { return false };
        let mut dims: Vec<(i64, i64)> =
            sizes.iter().zip(strides).filter(|(&n, _)| n > 1).map(|(&n, &s)| (s.abs(), n)).collect();
        dims.sort_unstable();
        let mut reach = 0i128; // largest offset reachable with the smaller strides
        for (s, n) in dims {
            if (s as i128) <= reach {
                return true;
            }
            reach += (n as i128 - 1) * s as i128;
        }
        false
    }

    /// Checks an argument written in place: its elements must not overlap
    /// each other, nor any of `others` (in-place arguments and inputs read
    /// while it is written); nothing has been written when this fails.
    pub fn expect_writable(&self, others: &[&TensorArg]) -> Result<()> {
        if self.self_overlaps() {
            return Err(self.error(
                "has overlapping memory (e.g. an expand()ed view) and cannot be written in place; pass .clone() of it",
            ));
        }
        if let Some((lo, hi)) = self.byte_range() {
            for o in others {
                if let Some((olo, ohi)) = o.byte_range() {
                    if lo < ohi && olo < hi {
                        return Err(self.error(format_args!(
                            "overlaps the memory of `{}` and cannot be written in place; pass .clone() of one of them",
                            o.name
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A contiguous buffer of a tensor argument (the argument itself, or a copy
/// this holds alive).
pub struct Contiguous {
    keep: Option<Tensor>,
    pub ptr: usize,
}

impl Contiguous {
    /// Holds a contiguous tensor made by the caller.
    pub fn owned(t: Tensor) -> Contiguous {
        let ptr = t.data_ptr() as usize;
        Contiguous { keep: Some(t), ptr }
    }
    /// For in-place ops: if a copy was made, copies the result back into `t`.
    pub fn write_back(&self, t: &TensorArg) -> Result<()> {
        if let Some(c) = &self.keep {
            let mut dst = t.tensor();
            dst.f_copy_(c).map_err(|e| Error::from(e).context(format_args!("myns::{}: argument `{}` could not be written in place", t.op, t.name)))?;
        }
        Ok(())
    }
}

fn device_of(a: &Arg) -> Device {
    match a.device {
        DeviceKind::Cpu => Device::Cpu,
        DeviceKind::Cuda => Device::Cuda(a.device_index.max(0) as usize),
        DeviceKind::Meta => Device::Meta,
        _ => Device::Other,
    }
}

/// The device every defined tensor argument is on (`None`: no tensors),
/// checked against the dispatch key: a tensor elsewhere is an error naming it.
pub(crate) fn common_device(spec: &OpSpec, raw: &[Arg], key: Key) -> Result<Option<Device>> {
    let mut first: Option<(Device, &str)> = None;
    for (a, decl) in raw.iter().zip(spec.args) {
        if a.kind != ArgKind::Tensor {
            continue;
        }
        let d = device_of(a);
        match first {
            None => first = Some((d, decl.name)),
            Some((f, fname)) if f != d => {
                return Err(Error::runtime(format!(
                    "myns::{}: argument `{}` is on {d} but `{fname}` is on {f}",
                    spec.name, decl.name
                )))
            }
            _ => {}
        }
    }
    let want_ok = |d: Device| match key {
        Key::Cpu => d == Device::Cpu,
        Key::Cuda => matches!(d, Device::Cuda(_)),
        _ => d == Device::Meta,
    };
    if let Some((d, name)) = first {
        if !want_ok(d) {
            return Err(Error::not_implemented(format!("myns::{}: argument `{name}` is on {d}, which myns does not support", spec.name)));
        }
    }
    Ok(first.map(|f| f.0))
}

/// Decoders for each declared argument type, called by the code `op!`
/// generates (named like the types in its declarations).
#[allow(non_snake_case)]
pub(crate) mod decode {
    use super::*;

    fn arg<'a>(spec: &OpSpec, raw: &'a [Arg], i: usize) -> Result<&'a Arg> {
        raw.get(i).ok_or_else(|| spec.error(format_args!("missing argument `{}`", spec.args[i].name)))
    }

    fn wrong(spec: &OpSpec, i: usize, what: &str) -> Error {
        Error::new(ErrorKind::Type, format!("myns::{}: argument `{}` must be {what}", spec.name, spec.args[i].name))
    }

    pub fn Tensor<'a>(spec: &'static OpSpec, raw: &'a [Arg], i: usize) -> Result<TensorArg<'a>> {
        let a = arg(spec, raw, i)?;
        if a.kind != ArgKind::Tensor {
            return Err(wrong(spec, i, "a tensor"));
        }
        Ok(TensorArg { op: spec.name, name: spec.args[i].name, arg: a })
    }

    pub fn MutTensor<'a>(spec: &'static OpSpec, raw: &'a [Arg], i: usize) -> Result<TensorArg<'a>> {
        Tensor(spec, raw, i)
    }

    pub fn OptTensor<'a>(spec: &'static OpSpec, raw: &'a [Arg], i: usize) -> Result<Option<TensorArg<'a>>> {
        let a = arg(spec, raw, i)?;
        match a.kind {
            ArgKind::None => Ok(None),
            _ => Tensor(spec, raw, i).map(Some),
        }
    }

    pub fn float(spec: &'static OpSpec, raw: &[Arg], i: usize) -> Result<f64> {
        let a = arg(spec, raw, i)?;
        match a.kind {
            ArgKind::Float => Ok(a.float_value),
            ArgKind::Int => Ok(a.int_value as f64),
            _ => Err(wrong(spec, i, "a float")),
        }
    }

    pub fn int(spec: &'static OpSpec, raw: &[Arg], i: usize) -> Result<i64> {
        let a = arg(spec, raw, i)?;
        match a.kind {
            ArgKind::Int => Ok(a.int_value),
            _ => Err(wrong(spec, i, "an int")),
        }
    }

    pub fn str<'a>(spec: &'static OpSpec, raw: &'a [Arg], i: usize) -> Result<&'a str> {
        let a = arg(spec, raw, i)?;
        if a.kind != ArgKind::Str {
            return Err(wrong(spec, i, "a string"));
        }
        // SAFETY: C++ points `str_ptr` at `str_len` bytes that live for the call.
        let bytes = unsafe { std::slice::from_raw_parts(a.str_ptr as *const u8, a.str_len) };
        std::str::from_utf8(bytes).map_err(|_| wrong(spec, i, "a UTF-8 string"))
    }

    pub fn Scalar(spec: &'static OpSpec, raw: &[Arg], i: usize) -> Result<super::Scalar> {
        let a = arg(spec, raw, i)?;
        match a.kind {
            ArgKind::Float => Ok(super::Scalar::Float(a.float_value)),
            ArgKind::Int | ArgKind::Bool => Ok(super::Scalar::Int(a.int_value)),
            _ => Err(wrong(spec, i, "a number")),
        }
    }
}
