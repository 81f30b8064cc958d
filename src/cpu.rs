//! CPU building blocks shared by ops: element types with their accumulation
//! type (half types accumulate in f32, as PyTorch does), and raw buffer access.

use crate::registry::{DType, TensorArg};
use anyhow::Result;
use half::{bf16, f16};
use std::ops::{Add, Div, Mul, Sub};
use tch::Tensor;

/// Arithmetic of an accumulation type (f32 or f64).
pub trait Real:
    Copy + Default + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn exp(self) -> Self;
    fn sqrt(self) -> Self;
    const NEG_INF: Self;
}
impl Real for f32 {
    fn from_f64(x: f64) -> Self { x as f32 }
    fn to_f64(self) -> f64 { self as f64 }
    fn exp(self) -> Self { f32::exp(self) }
    fn sqrt(self) -> Self { f32::sqrt(self) }
    const NEG_INF: Self = f32::NEG_INFINITY;
}
impl Real for f64 {
    fn from_f64(x: f64) -> Self { x }
    fn to_f64(self) -> f64 { self }
    fn exp(self) -> Self { f64::exp(self) }
    fn sqrt(self) -> Self { f64::sqrt(self) }
    const NEG_INF: Self = f64::NEG_INFINITY;
}

pub trait Elem: Copy + Send + Sync + 'static {
    type Acc: Real;
    fn to_acc(self) -> Self::Acc;
    fn from_acc(x: Self::Acc) -> Self;
}

impl Elem for f32 {
    type Acc = f32;
    fn to_acc(self) -> f32 { self }
    fn from_acc(x: f32) -> Self { x }
}
impl Elem for f64 {
    type Acc = f64;
    fn to_acc(self) -> f64 { self }
    fn from_acc(x: f64) -> Self { x }
}
impl Elem for f16 {
    type Acc = f32;
    fn to_acc(self) -> f32 { self.to_f32() }
    fn from_acc(x: f32) -> Self { f16::from_f32(x) }
}
impl Elem for bf16 {
    type Acc = f32;
    fn to_acc(self) -> f32 { self.to_f32() }
    fn from_acc(x: f32) -> Self { bf16::from_f32(x) }
}

/// Sum of `f` over `items`, accumulated in f64: a row's sequential sum in
/// float32 would lose accuracy with its length (the GPU kernels sum in a tree).
pub fn sum<I, A: Real>(items: I, f: impl Fn(I::Item) -> A) -> A
where
    I: IntoIterator,
{
    A::from_f64(items.into_iter().fold(0.0, |s, x| s + f(x).to_f64()))
}

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`.
#[macro_export]
macro_rules! with_elem {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::registry::DType::F32 => { type $T = f32; $body }
            $crate::registry::DType::F64 => { type $T = f64; $body }
            $crate::registry::DType::F16 => { type $T = half::f16; $body }
            $crate::registry::DType::BF16 => { type $T = half::bf16; $body }
        }
    };
}

/// A contiguous version of a tensor argument: the input itself when it already
/// is, else a copy made by PyTorch (on the current stream for CUDA).
pub struct Contiguous {
    _keep: Option<Tensor>,
    pub ptr: usize,
}

pub fn contiguous(t: &TensorArg) -> Result<Contiguous> {
    if t.is_contiguous() {
        return Ok(Contiguous { _keep: None, ptr: t.data_ptr() });
    }
    let c = t.tensor().f_contiguous().map_err(|e| t.error(format_args!("could not be made contiguous: {e}")))?;
    Ok(Contiguous::owned(c))
}

impl Contiguous {
    /// Holds a contiguous tensor made by the caller.
    pub fn owned(t: Tensor) -> Contiguous {
        let ptr = t.data_ptr() as usize;
        Contiguous { _keep: Some(t), ptr }
    }

    /// For in-place ops: if a copy was made, copies the result back into `t`.
    pub fn write_back(&self, t: &TensorArg) -> Result<()> {
        if let Some(c) = &self._keep {
            let mut dst = t.tensor();
            dst.f_copy_(c).map_err(|e| t.error(format_args!("could not be written in place: {e}")))?;
        }
        Ok(())
    }
}

/// A new contiguous tensor of `sizes`, dtype and device as `like`, allocated
/// by PyTorch (the caching allocator on CUDA, so CUDA graphs can capture it)
/// the way aten's own kernels allocate outputs, with no dispatcher call.
pub fn empty(sizes: &[i64], dtype: DType, like: &TensorArg) -> Result<Tensor> {
    let cuda_device = match like.tch_device()? {
        tch::Device::Cuda(i) => i as i16,
        _ => -1,
    };
    let p = crate::bridge::ffi::new_empty(sizes, dtype.raw(), cuda_device)
        .map_err(|e| like.error(format_args!("output allocation failed: {e}")))?;
    // SAFETY: a new `at::Tensor*` that we own from here on.
    Ok(unsafe { Tensor::from_ptr(p as *mut torch_sys::C_tensor) })
}

/// A new contiguous tensor with `t`'s sizes (symbolic ones too), dtype and
/// device: the Meta kernels' output. Contiguous first, as `empty_like` keeps
/// a transposed input's strides while the real kernels return contiguous.
pub fn empty_like(t: &TensorArg) -> Result<Tensor> {
    Ok(t.tensor().f_contiguous()?.f_empty_like()?)
}

/// Borrows `n` elements of T at `ptr` (a contiguous buffer of a live tensor).
///
/// # Safety
/// `ptr` must point at `n` initialised elements of T that outlive the slice.
pub unsafe fn slice<'a, T>(ptr: usize, n: usize) -> &'a [T] {
    if n == 0 { &[] } else { std::slice::from_raw_parts(ptr as *const T, n) }
}

/// Mutable version of [`slice()`].
///
/// # Safety
/// As for [`slice()`], and nothing else may access the buffer meanwhile.
pub unsafe fn slice_mut<'a, T>(ptr: usize, n: usize) -> &'a mut [T] {
    if n == 0 { &mut [] } else { std::slice::from_raw_parts_mut(ptr as *mut T, n) }
}
