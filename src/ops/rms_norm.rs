//! `rms_norm(Tensor x, Tensor weight, float eps) -> Tensor` over the last
//! dimension, and its gradient as its own op, `rms_norm_backward`.

use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::cuda::{self, DTypeKernels};
use crate::rowwise::{self, reduce_kernels, ReduceKernels, RowLaunch};
use crate::types::{DType, Device, Result};
use tch::{Kind, Tensor};

op! {
    /// RMS normalisation over the last dimension: `x / sqrt(mean(x**2, -1) +
    /// eps) * weight`, with `weight` of shape `[x.shape[-1]]`, accumulated in
    /// float32 (float64 for float64 inputs) like
    /// `torch.nn.functional.rms_norm`. Differentiable in `x` and `weight`;
    /// under autocast it runs in its inputs' dtype, as `F.rms_norm` does.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::from_slice(&[3.0f32, 4.0]).view([1, 2]);
    /// let w = Tensor::ones([2], (Kind::Float, tch::Device::Cpu));
    /// let y = myns::rms_norm(&x, &w, 0.0)?;
    /// // rms = sqrt((9 + 16) / 2)
    /// let rms = (12.5f64).sqrt();
    /// assert!((y.double_value(&[0, 0]) - 3.0 / rms).abs() < 1e-6);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor;
    args: RmsNorm;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
}

op! {
    /// Gradients `(grad_x, grad_weight)` of `rms_norm(x, weight, eps)` given
    /// the gradient of its output.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
    /// let w = Tensor::ones([4], (Kind::Float, tch::Device::Cpu));
    /// let (gx, gw) = myns::rms_norm_backward(&x.ones_like(), &x, &w, 1e-6)?;
    /// assert_eq!((gx.size(), gw.size()), (vec![3, 4], vec![4]));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn rms_norm_backward(grad: Tensor, x: Tensor, weight: Tensor, eps: float) -> (Tensor, Tensor);
    args: RmsNormBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[RmsNorm::spec, RmsNormBackward::spec];

static KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::RMS_NORM, "rms_norm", r4: |_| crate::rowwise::FourPack::Always);
static BACKWARD_KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::RMS_NORM, "rms_norm_backward");
static COLUMN_SUM: DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::RMS_NORM, "rms_norm_column_sum");

/// Checks `x` (>= 1-D), `weight` (`[x.shape[-1]]`) and `eps` (finite, >= 0).
pub(crate) fn check_norm(x: &TensorArg, w: &TensorArg, eps: f64) -> Result<(DType, f64)> {
    let dtype = x.dtype()?;
    x.expect_same_dtype(w)?;
    if x.dim() == 0 {
        return Err(x.error("must have at least one dimension"));
    }
    w.expect_dim(1)?;
    if let (Some(sx), Some(sw)) = (x.sizes(), w.sizes()) {
        let h = sx[sx.len() - 1];
        if sw[0] != h {
            return Err(w.error(format_args!("has {} elements but the last dimension of `{}` has size {h}", sw[0], x.name())));
        }
    }
    Ok((dtype, rowwise::check_float(x, "eps", eps, 0.0)?))
}

/// `x * rsqrt(mean(x^2) + eps) * w` with aten, in the accumulation type
/// (not rounded back).
pub(crate) fn rms_norm_aten(x: &Tensor, w: &Tensor, eps: f64, acc: Kind) -> Result<Tensor> {
    let x = x.f_to_kind(acc)?;
    let r = x.f_square()?.f_mean_dim(&[-1i64][..], true, acc)?.f_add_scalar(eps)?.f_rsqrt()?;
    Ok(x.f_mul(&r)?.f_mul(&w.f_to_kind(acc)?)?)
}

fn meta(a: &RmsNorm) -> Result<Tensor> {
    check_norm(&a.x, &a.weight, a.eps)?;
    op::empty_like(&a.x)
}

fn cpu(a: &RmsNorm) -> Result<Tensor> {
    let (dtype, eps) = check_norm(&a.x, &a.weight, a.eps)?;
    let y = rms_norm_aten(&a.x.tensor(), &a.weight.tensor(), eps, dtype.acc().kind())?;
    Ok(y.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn cuda(a: &RmsNorm, cx: &Cuda) -> Result<Tensor> {
    let (dtype, eps) = check_norm(&a.x, &a.weight, a.eps)?;
    let out = op::empty(a.x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (rows, h) = rowwise::rows_of(&a.x)?;
    if rows == 0 {
        return Ok(out);
    }
    let (cx_, cw) = (a.x.contiguous()?, a.weight.contiguous()?);
    let po = out.data_ptr() as usize;
    let launch = RowLaunch::reduce(&KERNELS, &a.x, &[cx_.ptr, cw.ptr, po], rows, h)?;
    let (px, pw, po) = (cx_.ptr as u64, cw.ptr as u64, po as u64);
    let mut params = [cuda::arg(&px), cuda::arg(&pw), cuda::arg(&po), cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps)];
    launch.launch(cx, &mut params)?;
    Ok(out)
}

fn backward(ctx: &Backward<RmsNorm>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let a = &ctx.args;
    let (gx, gw) = rms_norm_backward(&g, &a.x.tensor(), &a.weight.tensor(), a.eps)?;
    Ok(vec![ctx.needs_grad(0).then_some(gx), ctx.needs_grad(1).then_some(gw)])
}

fn check_backward(a: &RmsNormBackward) -> Result<(DType, f64)> {
    let r = check_norm(&a.x, &a.weight, a.eps)?;
    a.x.expect_same_dtype(&a.grad)?;
    a.x.expect_same_shape(&a.grad)?;
    Ok(r)
}

fn backward_meta(a: &RmsNormBackward) -> Result<(Tensor, Tensor)> {
    check_backward(a)?;
    Ok((op::empty_like(&a.x)?, op::empty_like(&a.weight)?))
}

/// With xhat = x r, r = rsqrt(mean(x^2) + eps):
/// grad_x = r (g w - xhat mean(g w xhat)), grad_w = sum over rows of g xhat.
fn backward_cpu(a: &RmsNormBackward) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    backward_aten(&a.grad.tensor(), None, &a.x.tensor(), &a.weight.tensor(), dtype, eps)
}

/// The gradients through aten, in the accumulation type, rounded once;
/// `extra` is added to grad_x before the rounding (see `backward_launch`).
pub(crate) fn backward_aten(g: &Tensor, extra: Option<&Tensor>, x: &Tensor, w: &Tensor, dtype: DType, eps: f64) -> Result<(Tensor, Tensor)> {
    let acc = dtype.acc().kind();
    let h = x.size().last().copied().unwrap_or(1);
    let (x, g, w) = (x.f_to_kind(acc)?, g.f_to_kind(acc)?, w.f_to_kind(acc)?);
    let r = x.f_square()?.f_mean_dim(&[-1i64][..], true, acc)?.f_add_scalar(eps)?.f_rsqrt()?;
    let xhat = x.f_mul(&r)?;
    let gw_ = g.f_mul(&w)?;
    let dot = gw_.f_mul(&xhat)?.f_mean_dim(&[-1i64][..], true, acc)?;
    let mut gx = r.f_mul(&gw_.f_sub(&xhat.f_mul(&dot)?)?)?;
    if let Some(e) = extra {
        gx = gx.f_add(&e.f_to_kind(acc)?)?;
    }
    let gw = g.f_mul(&xhat)?.f_reshape([-1, h])?.f_sum_dim_intlist(&[0i64][..], false, acc)?;
    Ok((gx.f_to_kind(dtype.kind())?.f_contiguous()?, gw.f_to_kind(dtype.kind())?))
}

fn backward_cuda(a: &RmsNormBackward, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    backward_launch(&a.grad, None, &a.x, &a.weight, dtype, eps, cx)
}

/// The rms_norm backward kernel: `(grad_x [+ extra], grad_weight)` for the
/// output gradient `g` of `rms_norm(x, w, eps)`; `extra` (add_rms_norm's
/// sum gradient, same shape as `x`) is added to grad_x in the same pass.
pub(crate) fn backward_launch(
    g: &TensorArg,
    extra: Option<&TensorArg>,
    x: &TensorArg,
    w: &TensorArg,
    dtype: DType,
    eps: f64,
    cx: &Cuda,
) -> Result<(Tensor, Tensor)> {
    let gx = op::empty(x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (rows, h) = rowwise::rows_of(x)?;
    let (cg, cx_, cw) = (g.contiguous()?, x.contiguous()?, w.contiguous()?);
    let ce = extra.map(TensorArg::contiguous).transpose()?;
    let pe = ce.as_ref().map_or(0, |c| c.ptr);
    let pgx = gx.data_ptr() as usize;
    // Per-block partial sums of grad_weight, then summed over the blocks.
    let launch = RowLaunch::block_regs(&BACKWARD_KERNELS, x, &[cg.ptr, cx_.ptr, cw.ptr, pe, pgx], rows, h, 1)?;
    let partial = launch.partials((dtype.acc().kind(), tch::Device::Cuda(cx.device)))?;
    if rows > 0 {
        let (pg, px, pw, pe, po, pp) =
            (cg.ptr as u64, cx_.ptr as u64, cw.ptr as u64, pe as u64, pgx as u64, partial.data_ptr() as u64);
        let mut params = [
            cuda::arg(&pg), cuda::arg(&px), cuda::arg(&pw), cuda::arg(&pe), cuda::arg(&po), cuda::arg(&pp),
            cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps),
        ];
        launch.launch(cx, &mut params)?;
    }
    let gw = rowwise::sum_partials(&COLUMN_SUM, dtype, &partial, cx)?.remove(0);
    Ok((gx, gw))
}
