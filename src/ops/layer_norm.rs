//! `layer_norm(Tensor x, Tensor? weight, Tensor? bias, float eps) -> Tensor`
//! over the last dimension, and its gradient op `layer_norm_backward`.

use crate::cuda::{self, DTypeKernels};
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{self, reduce_kernels, FourPack, ReduceKernels, RowLaunch};
use crate::types::{DType, Device, Result};
use tch::{Kind, Tensor};

op! {
    /// Layer normalisation over the last dimension: `(x - mean) /
    /// sqrt(var + eps) * weight + bias` (biased variance), `weight` and
    /// `bias` optional, each `[x.shape[-1]]`; accumulated in float32
    /// (float64 for float64 inputs), as `torch.nn.functional.layer_norm`.
    /// Differentiable in `x`, `weight` and `bias`; runs in float32 under
    /// CUDA autocast, as `layer_norm` does.
    ///
    /// ```
    /// use tch::Tensor;
    /// let x = Tensor::from_slice(&[1.0f32, 3.0]).view([1, 2]);
    /// let y = myns::layer_norm(&x, None, None, 0.0)?; // mean 2, var 1
    /// assert_eq!(Vec::<f32>::try_from(&y.view([-1]))?, vec![-1.0, 1.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn layer_norm(x: Tensor, weight: OptTensor, bias: OptTensor, eps: float) -> Tensor;
    args: LayerNorm;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    autocast: fp32_on_cuda;
}

op! {
    /// Gradients `(grad_x, grad_weight, grad_bias)` of `layer_norm(x, weight,
    /// bias, eps)` given the gradient of its output (`grad_weight` and
    /// `grad_bias` as if they were ones and zeros when not given).
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
    /// let (gx, gw, gb) = myns::layer_norm_backward(&x.ones_like(), &x, None, 1e-5)?;
    /// assert_eq!((gx.size(), gw.size(), gb.size()), (vec![3, 4], vec![4], vec![4]));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn layer_norm_backward(grad: Tensor, x: Tensor, weight: OptTensor, eps: float) -> (Tensor, Tensor, Tensor);
    args: LayerNormBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[LayerNorm::spec, LayerNormBackward::spec];

// The four-pack build holds float32 rows in 32 registers without spilling
// and beat the general build at every row count measured (H100, 512 x 8192
// to 4096 x 4096: 1.03-1.15x). bfloat16's general build takes 80
// registers, so its four-pack build (8 bytes spilled) wins at any row
// count: on the H100 1024 x 8192 16.3 -> 14.6 us, rows of 16384 1.30-1.36x,
// 8192 x 8192 and rows of 12288 level; on the H200 every bfloat16 shape measured 1.06-1.23x
// (2048 to 16384 rows of 5120 to 12288: bench/explore/rowwise-gaps/
// layer-norm-builds-h200.txt). float16's general build (64 registers) ran
// ahead beyond one wave (H100 2048 x 8192 26.4 against 28.7 us; H200 8192
// x 8192 71.1 against 80.5). float64's spills more and was not measured:
// it keeps the general build unless forced.
static KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::LAYER_NORM, "layer_norm", r4: |dtype| match dtype {
    DType::F32 | DType::BF16 => FourPack::Always,
    DType::F64 => FourPack::Forced,
    _ => FourPack::OneWave,
});
static BACKWARD_KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::LAYER_NORM, "layer_norm_backward");
static COLUMN_SUM: DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::LAYER_NORM, "layer_norm_column_sum");

/// Checks `x` (>= 1-D), an optional per-feature `[x.shape[-1]]` parameter
/// and `eps` (finite, >= 0).
fn check(x: &TensorArg, params: &[Option<&TensorArg>], eps: f64) -> Result<(DType, f64)> {
    let dtype = x.dtype()?;
    if x.dim() == 0 {
        return Err(x.error("must have at least one dimension"));
    }
    for p in params.iter().flatten() {
        x.expect_same_dtype(p)?;
        p.expect_dim(1)?;
        if let (Some(sx), Some(sp)) = (x.sizes(), p.sizes()) {
            let h = sx[sx.len() - 1];
            if sp[0] != h {
                return Err(p.error(format_args!("has {} elements but the last dimension of `{}` has size {h}", sp[0], x.name())));
            }
        }
    }
    Ok((dtype, rowwise::check_float(x, "eps", eps, 0.0)?))
}

fn meta(a: &LayerNorm) -> Result<Tensor> {
    check(&a.x, &[a.weight.as_ref(), a.bias.as_ref()], a.eps)?;
    op::empty_like(&a.x)
}

/// Mean and 1 / sqrt(var + eps) over the last dimension, in `acc`.
fn stats(x: &Tensor, eps: f64, acc: Kind) -> Result<(Tensor, Tensor)> {
    let x = x.f_to_kind(acc)?;
    let mean = x.f_mean_dim(&[-1i64][..], true, acc)?;
    let var = x.f_sub(&mean)?.f_square()?.f_mean_dim(&[-1i64][..], true, acc)?;
    Ok((mean, var.f_add_scalar(eps)?.f_rsqrt()?))
}

fn cpu(a: &LayerNorm) -> Result<Tensor> {
    let (dtype, eps) = check(&a.x, &[a.weight.as_ref(), a.bias.as_ref()], a.eps)?;
    let acc = dtype.acc().kind();
    let x = a.x.tensor();
    let (mean, rstd) = stats(&x, eps, acc)?;
    let mut y = x.f_to_kind(acc)?.f_sub(&mean)?.f_mul(&rstd)?;
    if let Some(w) = &a.weight {
        y = y.f_mul(&w.tensor().f_to_kind(acc)?)?;
    }
    if let Some(b) = &a.bias {
        y = y.f_add(&b.tensor().f_to_kind(acc)?)?;
    }
    Ok(y.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn cuda(a: &LayerNorm, cx: &Cuda) -> Result<Tensor> {
    let (dtype, eps) = check(&a.x, &[a.weight.as_ref(), a.bias.as_ref()], a.eps)?;
    let out = op::empty(a.x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (rows, h) = rowwise::rows_of(&a.x)?;
    if rows == 0 {
        return Ok(out);
    }
    let c = a.x.contiguous()?;
    let cw = a.weight.as_ref().map(TensorArg::contiguous).transpose()?;
    let cb = a.bias.as_ref().map(TensorArg::contiguous).transpose()?;
    let (pw, pb) = (cw.as_ref().map_or(0, |c| c.ptr), cb.as_ref().map_or(0, |c| c.ptr));
    let po = out.data_ptr() as usize;
    let launch = RowLaunch::reduce(&KERNELS, &a.x, &[c.ptr, pw, pb, po], rows, h)?;
    let (px, pw, pb, po) = (c.ptr as u64, pw as u64, pb as u64, po as u64);
    let mut params =
        [cuda::arg(&px), cuda::arg(&pw), cuda::arg(&pb), cuda::arg(&po), cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps)];
    launch.launch(cx, &mut params)?;
    Ok(out)
}

fn backward(ctx: &Backward<LayerNorm>) -> Result<Vec<Option<Tensor>>> {
    let a = &ctx.args;
    // One gradient per tensor argument given (weight and bias may be None).
    let present = 1 + a.weight.is_some() as usize + a.bias.is_some() as usize;
    let Some(g) = ctx.grad(0) else { return Ok((0..present).map(|_| None).collect()) };
    let w = a.weight.as_ref().map(|w| w.tensor());
    let (gx, gw, gb) = layer_norm_backward(&g, &a.x.tensor(), w.as_deref(), a.eps)?;
    let mut grads = vec![ctx.needs_grad(0).then_some(gx)];
    if a.weight.is_some() {
        grads.push(ctx.needs_grad(grads.len()).then_some(gw));
    }
    if a.bias.is_some() {
        grads.push(ctx.needs_grad(grads.len()).then_some(gb));
    }
    Ok(grads)
}

fn check_backward(a: &LayerNormBackward) -> Result<(DType, f64)> {
    let r = check(&a.x, &[a.weight.as_ref()], a.eps)?;
    a.x.expect_same_dtype(&a.grad)?;
    a.x.expect_same_shape(&a.grad)?;
    Ok(r)
}

/// A new `[x.shape[-1]]` tensor of `x`'s dtype and device, symbolic sizes
/// kept (a sum over the leading dimensions, free on meta tensors).
fn per_feature(x: &TensorArg) -> Result<Tensor> {
    let t = x.tensor();
    let lead: Vec<i64> = (0..x.dim() as i64 - 1).collect();
    let f = if lead.is_empty() { t.shallow_clone() } else { t.f_sum_dim_intlist(&lead[..], false, None::<Kind>)? };
    Ok(f.f_contiguous()?.f_empty_like()?)
}

fn backward_meta(a: &LayerNormBackward) -> Result<(Tensor, Tensor, Tensor)> {
    check_backward(a)?;
    let f = per_feature(&a.x)?;
    Ok((op::empty_like(&a.x)?, f.f_empty_like()?, f))
}

/// With xhat = (x - mean) rstd: grad_x = rstd (g w - mean(g w) - xhat
/// mean(g w xhat)), grad_w = sum over rows of g xhat, grad_b = sum of g.
fn backward_cpu(a: &LayerNormBackward) -> Result<(Tensor, Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    let acc = dtype.acc().kind();
    let h = a.x.sizes_real()?.last().copied().unwrap_or(1);
    let (x, g) = (a.x.tensor(), a.grad.tensor().f_to_kind(acc)?);
    let (mean, rstd) = stats(&x, eps, acc)?;
    let xhat = x.f_to_kind(acc)?.f_sub(&mean)?.f_mul(&rstd)?;
    let gw_ = match &a.weight {
        Some(w) => g.f_mul(&w.tensor().f_to_kind(acc)?)?,
        None => g.shallow_clone(),
    };
    let m1 = gw_.f_mean_dim(&[-1i64][..], true, acc)?;
    let m2 = gw_.f_mul(&xhat)?.f_mean_dim(&[-1i64][..], true, acc)?;
    let gx = rstd.f_mul(&gw_.f_sub(&m1)?.f_sub(&xhat.f_mul(&m2)?)?)?;
    let rows = |t: Tensor| -> Result<Tensor> { Ok(t.f_reshape([-1, h])?.f_sum_dim_intlist(&[0i64][..], false, acc)?.f_to_kind(dtype.kind())?) };
    Ok((gx.f_to_kind(dtype.kind())?.f_contiguous()?, rows(g.f_mul(&xhat)?)?, rows(g)?))
}

fn backward_cuda(a: &LayerNormBackward, cx: &Cuda) -> Result<(Tensor, Tensor, Tensor)> {
    let (dtype, eps) = check_backward(a)?;
    let gx = op::empty(a.x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (rows, h) = rowwise::rows_of(&a.x)?;
    let (cg, c) = (a.grad.contiguous()?, a.x.contiguous()?);
    let cw = a.weight.as_ref().map(TensorArg::contiguous).transpose()?;
    let pw = cw.as_ref().map_or(0, |c| c.ptr);
    let pgx = gx.data_ptr() as usize;
    // Per-block partial sums of grad_weight and grad_bias (planes 0 and 1 of
    // one buffer), then summed over the blocks.
    let launch = RowLaunch::block_regs(&BACKWARD_KERNELS, &a.x, &[cg.ptr, c.ptr, pw, pgx], rows, h, 2)?;
    let blocks = launch.blocks() as i64;
    let partial = launch.partials((dtype.acc().kind(), tch::Device::Cuda(cx.device)))?;
    if rows > 0 {
        let (pg, px, pw, po) = (cg.ptr as u64, c.ptr as u64, pw as u64, pgx as u64);
        let ppw = partial.data_ptr() as u64;
        let ppb = ppw + (blocks * h) as u64 * dtype.acc().size() as u64;
        let mut params = [
            cuda::arg(&pg), cuda::arg(&px), cuda::arg(&pw), cuda::arg(&po), cuda::arg(&ppw), cuda::arg(&ppb),
            cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps),
        ];
        launch.launch(cx, &mut params)?;
    }
    let mut sums = rowwise::sum_partials(&COLUMN_SUM, dtype, &partial, cx)?;
    let gb = sums.pop().expect("two planes");
    Ok((gx, sums.pop().expect("two planes"), gb))
}
