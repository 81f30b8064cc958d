//! `add_rms_norm(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)`:
//! the functional, differentiable form of `fused_add_rms_norm`, one pass
//! forward and one backward (`add_rms_norm_backward`).

use super::rms_norm::{backward_aten, backward_launch, check_norm, rms_norm_aten};
use crate::cuda;
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{self, reduce_kernels, ReduceKernels, RowLaunch};
use crate::types::{DType, Device, Result};
use tch::Tensor;

op! {
    /// `(rms_norm(x + residual, weight, eps), x + residual)` in one pass: the
    /// sum is rounded to the inputs' dtype and normalised as stored, as the
    /// unfused sequence (and `fused_add_rms_norm`, its in-place form) does.
    /// `x` and `residual` have the same shape, dtype and device; `weight` is
    /// `[x.shape[-1]]`. Differentiable in all three (one backward pass);
    /// under autocast it runs in its inputs' dtype, as `rms_norm`.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::from_slice(&[1.0f32, 2.0]).view([1, 2]);
    /// let r = Tensor::from_slice(&[2.0f32, 2.0]).view([1, 2]);
    /// let w = Tensor::ones([2], (Kind::Float, tch::Device::Cpu));
    /// let (y, s) = myns::add_rms_norm(&x, &r, &w, 0.0)?;
    /// assert_eq!(Vec::<f32>::try_from(&s.view([-1]))?, vec![3.0, 4.0]);
    /// assert!((y.double_value(&[0, 1]) - 4.0 / 12.5f64.sqrt()).abs() < 1e-6);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn add_rms_norm(x: Tensor, residual: Tensor, weight: Tensor, eps: float) -> (Tensor, Tensor);
    args: AddRmsNorm;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    saves_outputs: true;
    backward_reads: [weight];
}

op! {
    /// Gradients `(grad_sum, grad_weight)` of `add_rms_norm` from the
    /// gradients of its two outputs and the saved sum `x + residual`
    /// (`grad_sum` is the gradient of both `x` and `residual`); `grad_summed`
    /// may be None (the sum output unused).
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let s = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
    /// let w = Tensor::ones([4], (Kind::Float, tch::Device::Cpu));
    /// let (gs, gw) = myns::add_rms_norm_backward(&s.ones_like(), Some(&s.ones_like()), &s, &w, 1e-6)?;
    /// assert_eq!((gs.size(), gw.size()), (vec![3, 4], vec![4]));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn add_rms_norm_backward(grad: Tensor, grad_summed: OptTensor, summed: Tensor, weight: Tensor, eps: float) -> (Tensor, Tensor);
    args: AddRmsNormBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[AddRmsNorm::spec, AddRmsNormBackward::spec];

static KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::RMS_NORM, "add_rms_norm", true);

fn check(a: &AddRmsNorm) -> Result<(DType, f64)> {
    let r = check_norm(&a.x, &a.weight, a.eps)?;
    a.x.expect_same_dtype(&a.residual)?;
    a.x.expect_same_shape(&a.residual)?;
    Ok(r)
}

fn meta(a: &AddRmsNorm) -> Result<(Tensor, Tensor)> {
    check(a)?;
    Ok((op::empty_like(&a.x)?, op::empty_like(&a.x)?))
}

fn cpu(a: &AddRmsNorm) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check(a)?;
    let s = a.x.tensor().f_add(&a.residual.tensor())?.f_contiguous()?;
    let y = rms_norm_aten(&s, &a.weight.tensor(), eps, dtype.acc().kind())?;
    Ok((y.f_to_kind(dtype.kind())?.f_contiguous()?, s))
}

fn cuda(a: &AddRmsNorm, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check(a)?;
    let sizes = a.x.sizes_real()?;
    let device = Device::Cuda(cx.device);
    let (y, s) = (op::empty(sizes, dtype.scalar_type(), device)?, op::empty(sizes, dtype.scalar_type(), device)?);
    let (rows, h) = rowwise::rows_of(&a.x)?;
    if rows == 0 {
        return Ok((y, s));
    }
    let (c, cr, cw) = (a.x.contiguous()?, a.residual.contiguous()?, a.weight.contiguous()?);
    let (py, ps) = (y.data_ptr() as usize, s.data_ptr() as usize);
    let launch = RowLaunch::reduce(&KERNELS, &a.x, &[c.ptr, cr.ptr, cw.ptr, py, ps], rows, h)?;
    let (px, pr, pw, py, ps) = (c.ptr as u64, cr.ptr as u64, cw.ptr as u64, py as u64, ps as u64);
    let mut params = [
        cuda::arg(&px), cuda::arg(&pr), cuda::arg(&pw), cuda::arg(&py), cuda::arg(&ps),
        cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps),
    ];
    launch.launch(cx, &mut params)?;
    Ok((y, s))
}

fn backward(ctx: &Backward<AddRmsNorm>) -> Result<Vec<Option<Tensor>>> {
    let (gy, gs) = (ctx.grad(0), ctx.grad(1));
    let (gsum, gw) = match (&gy, &gs) {
        (None, None) => return Ok(vec![None, None, None]),
        (None, Some(gs)) => (gs.shallow_clone(), None),
        (Some(gy), gs) => {
            let s = ctx.output(1)?;
            let (gsum, gw) = add_rms_norm_backward(gy, gs.as_deref(), &s, &ctx.args.weight.tensor(), ctx.args.eps)?;
            (gsum, Some(gw))
        }
    };
    Ok(vec![
        ctx.needs_grad(0).then(|| gsum.shallow_clone()),
        ctx.needs_grad(1).then(|| gsum.shallow_clone()),
        if ctx.needs_grad(2) { gw } else { None },
    ])
}

fn check_backward(a: &AddRmsNormBackward) -> Result<(DType, f64)> {
    let r = check_norm(&a.summed, &a.weight, a.eps)?;
    for g in std::iter::once(&a.grad).chain(a.grad_summed.as_ref()) {
        a.summed.expect_same_dtype(g)?;
        a.summed.expect_same_shape(g)?;
    }
    Ok(r)
}

fn backward_meta(a: &AddRmsNormBackward) -> Result<(Tensor, Tensor)> {
    check_backward(a)?;
    Ok((op::empty_like(&a.summed)?, op::empty_like(&a.weight)?))
}

fn backward_cpu(a: &AddRmsNormBackward) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    let extra = a.grad_summed.as_ref().map(TensorArg::tensor);
    backward_aten(&a.grad.tensor(), extra.as_deref(), &a.summed.tensor(), &a.weight.tensor(), dtype, eps)
}

fn backward_cuda(a: &AddRmsNormBackward, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    backward_launch(&a.grad, a.grad_summed.as_ref(), &a.summed, &a.weight, dtype, eps, cx)
}
