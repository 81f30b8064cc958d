//! `fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps) -> ()`:
//! `residual += x; x = rms_norm(residual) * weight`, in place, in one pass
//! (vLLM's fused op). Not differentiable (an in-place inference op; its
//! functional form is `add_rms_norm`).

use super::rms_norm::{check_norm, rms_norm_aten};
use crate::cuda;
use crate::op::{op, Cuda};
use crate::ops::Ops;
use crate::rowwise::{self, reduce_kernels, ReduceKernels, RowLaunch};
use crate::types::{DType, Result};

op! {
    /// In place, in one pass: `residual += x`, then `x = rms_norm(residual,
    /// weight, eps)`. `x` and `residual` have the same shape, dtype and
    /// device and must not overlap each other, themselves or `weight`;
    /// `weight` is `[x.shape[-1]]`. Returns nothing.
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
    fn fused_add_rms_norm(x: MutTensor, residual: MutTensor, weight: Tensor, eps: float) -> ();
    args: FusedAddRmsNorm;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
}

pub(crate) const OPS: Ops = &[FusedAddRmsNorm::spec];

static KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::RMS_NORM, "fused_add_rms_norm", true);

fn check(a: &FusedAddRmsNorm) -> Result<(DType, f64)> {
    let r = check_norm(&a.x, &a.weight, a.eps)?;
    a.x.expect_same_dtype(&a.residual)?;
    a.x.expect_same_shape(&a.residual)?;
    a.x.expect_writable(&[&a.residual, &a.weight])?;
    a.residual.expect_writable(&[&a.x, &a.weight])?;
    Ok(r)
}

fn meta(a: &FusedAddRmsNorm) -> Result<()> {
    check(a)?;
    Ok(())
}

fn cpu(a: &FusedAddRmsNorm) -> Result<()> {
    let (dtype, eps) = check(a)?;
    let (mut x, mut r) = (a.x.tensor(), a.residual.tensor());
    let _ = r.f_add_(&x)?;
    let y = rms_norm_aten(&r, &a.weight.tensor(), eps, dtype.acc().kind())?;
    x.f_copy_(&y)?;
    Ok(())
}

fn cuda(a: &FusedAddRmsNorm, cx: &Cuda) -> Result<()> {
    let (_, eps) = check(a)?;
    let (rows, h) = rowwise::rows_of(&a.x)?;
    if rows == 0 {
        return Ok(());
    }
    // Strided x or residual: work on contiguous copies, then copy back.
    let (cx_, cr, cw) = (a.x.contiguous()?, a.residual.contiguous()?, a.weight.contiguous()?);
    let launch = RowLaunch::reduce(&KERNELS, &a.x, &[cx_.ptr, cr.ptr, cw.ptr], rows, h)?;
    let (px, pr, pw) = (cx_.ptr as u64, cr.ptr as u64, cw.ptr as u64);
    let mut params = [cuda::arg(&px), cuda::arg(&pr), cuda::arg(&pw), cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps)];
    launch.launch(cx, &mut params)?;
    cx_.write_back(&a.x)?;
    cr.write_back(&a.residual)?;
    Ok(())
}
