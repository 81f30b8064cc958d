//! `myns::fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps) -> ()`:
//! `residual += x; x = rms_norm(residual) * weight`, in place, in one pass
//! (vLLM's fused op). Not differentiable (in-place inference op).

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem};
use crate::ops::rms_norm::{check_norm_args, inv_rms};
use crate::registry::{dispatch, Backend, Call, OpSpec, TensorArg, Value};
use crate::rowwise::{self, ReduceKernels, RowLaunch};
use crate::cuda;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "fused_add_rms_norm",
    schema: "fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps) -> ()",
    doc: "In place, in one pass: `residual += x`, then `x = rms_norm(residual, weight, eps)`. `x` and \
          `residual` have the same shape, dtype and device; `weight` is `[x.shape[-1]]`. Returns nothing.",
    forward,
    meta,
    backward: None,
    save_outputs: false,
    handle: OnceLock::new(),
};

/// In place: `residual += x; x = rms_norm(residual, weight, eps)`.
///
/// ```
/// use tch::{Kind, Tensor};
/// let mut x = Tensor::from_slice(&[1.0f32, 2.0]).view([1, 2]);
/// let mut residual = Tensor::from_slice(&[2.0f32, 2.0]).view([1, 2]);
/// let w = Tensor::ones([2], (Kind::Float, tch::Device::Cpu));
/// myns::fused_add_rms_norm(&mut x, &mut residual, &w, 0.0)?;
/// assert_eq!(Vec::<f32>::try_from(&residual.view([-1]))?, vec![3.0, 4.0]);
/// let rms = (12.5f64).sqrt();
/// assert!((x.double_value(&[0, 1]) - 4.0 / rms).abs() < 1e-6);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn fused_add_rms_norm(x: &mut Tensor, residual: &mut Tensor, weight: &Tensor, eps: f64) -> Result<()> {
    dispatch(&SPEC, &[Value::Tensor(x), Value::Tensor(residual), Value::Tensor(weight), Value::Float(eps)])?;
    Ok(())
}

static KERNELS: ReduceKernels = crate::reduce_kernels!(crate::kernels::RMS_NORM, "fused_add_rms_norm");

fn check<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>, TensorArg<'a>, f64)> {
    let (x, w, eps) = check_norm_args(call, 0, 2, 3)?;
    let r = call.tensor(1)?;
    x.expect_same_dtype_device(&r)?;
    x.expect_same_shape(&r)?;
    x.expect_writable()?;
    r.expect_writable()?;
    if x.data_ptr() != 0 && x.data_ptr() == r.data_ptr() && x.numel() > 0 {
        return Err(r.error("must not be the same memory as `x`"));
    }
    Ok((x, r, w, eps))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    check(call)?;
    Ok(vec![])
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (x, r, w, eps) = check(call)?;
    let dtype = x.dtype()?;
    let (rows, h) = rowwise::rows_of(&x)?;
    if rows == 0 {
        return Ok(vec![]);
    }
    // Strided x or residual: work on contiguous copies, then copy back.
    let (cx, cr, cw) = (cpu::contiguous(&x)?, cpu::contiguous(&r)?, cpu::contiguous(&w)?);
    match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => fused_cpu::<T>(cx.ptr, cr.ptr, cw.ptr, rows as usize, h as usize, eps))
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
            let launch = RowLaunch::reduce(&KERNELS, call, &x, &[cx.ptr, cr.ptr, cw.ptr], rows, h)?;
            let (px, pr, pw) = (cx.ptr as u64, cr.ptr as u64, cw.ptr as u64);
            let mut params = [cuda::arg(&px), cuda::arg(&pr), cuda::arg(&pw), cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps)];
            launch.launch(call, stream, &mut params)?;
        }
        _ => return Err(x.unsupported_device()),
    }
    cx.write_back(&x)?;
    cr.write_back(&r)?;
    Ok(vec![])
}

fn fused_cpu<T: Elem>(x: usize, r: usize, w: usize, rows: usize, h: usize, eps: f64) {
    // SAFETY: distinct contiguous [rows, h] x and residual, [h] weight.
    let (x, r, w) = unsafe { (cpu::slice_mut::<T>(x, rows * h), cpu::slice_mut::<T>(r, rows * h), cpu::slice::<T>(w, h)) };
    for (xr, rr) in x.chunks_exact_mut(h).zip(r.chunks_exact_mut(h)) {
        for (rv, &xv) in rr.iter_mut().zip(xr.iter()) {
            *rv = T::from_acc(rv.to_acc() + xv.to_acc());
        }
        let inv = inv_rms(rr, eps);
        for ((xv, &rv), &wv) in xr.iter_mut().zip(rr.iter()).zip(w) {
            *xv = T::from_acc(rv.to_acc() * inv * wv.to_acc());
        }
    }
}
