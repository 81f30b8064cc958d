//! `myns::rms_norm(Tensor x, Tensor weight, float eps) -> Tensor` over the
//! last dimension, and its gradient as its own op,
//! `myns::rms_norm_backward(Tensor grad, Tensor x, Tensor weight, float eps) -> (Tensor, Tensor)`.

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem, Real};
use crate::registry::{dispatch, dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::rowwise::{self, ReduceKernels, RowKernels, RowLaunch, Rows};
use crate::cuda;
use anyhow::{bail, Result};
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "rms_norm",
    schema: "rms_norm(Tensor x, Tensor weight, float eps) -> Tensor",
    doc: "RMS normalisation over the last dimension: `x / sqrt(mean(x**2, -1) + eps) * weight`, with \
          `weight` of shape `[x.shape[-1]]`, accumulated in float32 (float64 for float64 inputs) like \
          `torch.nn.functional.rms_norm`. Differentiable in `x` and `weight`.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

pub static BACKWARD_SPEC: OpSpec = OpSpec {
    name: "rms_norm_backward",
    schema: "rms_norm_backward(Tensor grad, Tensor x, Tensor weight, float eps) -> (Tensor, Tensor)",
    doc: "Gradients `(grad_x, grad_weight)` of `rms_norm(x, weight, eps)` given the gradient of its output.",
    forward: backward_forward,
    meta: backward_meta,
    backward: None,
    save_outputs: false,
    handle: OnceLock::new(),
};

/// RMS norm of `x` over its last dimension, times `weight`.
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
pub fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(x), Value::Tensor(weight), Value::Float(eps)])
}

/// `(grad_x, grad_weight)` of [`rms_norm`].
///
/// ```
/// use tch::{Kind, Tensor};
/// let x = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
/// let w = Tensor::ones([4], (Kind::Float, tch::Device::Cpu));
/// let (gx, gw) = myns::rms_norm_backward(&x.ones_like(), &x, &w, 1e-6)?;
/// assert_eq!((gx.size(), gw.size()), (vec![3, 4], vec![4]));
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn rms_norm_backward(grad: &Tensor, x: &Tensor, weight: &Tensor, eps: f64) -> Result<(Tensor, Tensor)> {
    let mut out = dispatch(&BACKWARD_SPEC, &[Value::Tensor(grad), Value::Tensor(x), Value::Tensor(weight), Value::Float(eps)])?;
    match (out.pop(), out.pop()) {
        (Some(gw), Some(gx)) => Ok((gx, gw)),
        _ => bail!("myns::rms_norm_backward: expected two results"),
    }
}

static KERNELS: ReduceKernels = crate::reduce_kernels!(crate::kernels::RMS_NORM, "rms_norm");
static BACKWARD_KERNELS: RowKernels = crate::row_kernels!(crate::kernels::RMS_NORM, "rms_norm_backward");

/// Checks `x` (>= 1-D), `weight` (`[x.shape[-1]]`) and `eps` (finite, >= 0)
/// at argument positions `xi`, `wi` and `ei`.
pub(crate) fn check_norm_args<'a>(call: &Call<'a>, xi: usize, wi: usize, ei: usize) -> Result<(TensorArg<'a>, TensorArg<'a>, f64)> {
    let (x, w) = (call.tensor(xi)?, call.tensor(wi)?);
    x.dtype()?;
    x.expect_same_dtype_device(&w)?;
    if x.dim() == 0 {
        return Err(x.error("must have at least one dimension"));
    }
    w.expect_dim(1)?;
    if let (Some(sx), Some(sw)) = (x.sizes(), w.sizes()) {
        let h = sx[sx.len() - 1];
        if sw[0] != h {
            return Err(w.error(format_args!(
                "has {} elements but the last dimension of `{}` has size {h}",
                sw[0],
                x.name()
            )));
        }
    }
    let eps = rowwise::check_scalar(call, ei, 0.0)?;
    Ok((x, w, eps))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let (x, _, _) = check_norm_args(call, 0, 1, 2)?;
    Ok(vec![cpu::empty_like(&x)?])
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (x, w, eps) = check_norm_args(call, 0, 1, 2)?;
    let dtype = x.dtype()?;
    let out = cpu::empty(x.sizes_real()?, dtype, &x)?;
    let (rows, h) = rowwise::rows_of(&x)?;
    if rows == 0 {
        return Ok(vec![out]);
    }
    let (cx, cw) = (cpu::contiguous(&x)?, cpu::contiguous(&w)?);
    let po = out.data_ptr() as usize;
    match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => rms_norm_cpu::<T>(cx.ptr, cw.ptr, po, rows as usize, h as usize, eps))
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
            let launch = RowLaunch::reduce(&KERNELS, call, &x, &[cx.ptr, cw.ptr, po], rows, h)?;
            let (px, pw, po) = (cx.ptr as u64, cw.ptr as u64, po as u64);
            let mut params = [cuda::arg(&px), cuda::arg(&pw), cuda::arg(&po), cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps)];
            launch.launch(call, stream, &mut params)?;
        }
        _ => return Err(x.unsupported_device()),
    }
    Ok(vec![out])
}

fn rms_norm_cpu<T: Elem>(x: usize, w: usize, out: usize, rows: usize, h: usize, eps: f64) {
    // SAFETY: contiguous [rows, h] input and output, [h] weight.
    let (x, w, out) = unsafe { (cpu::slice::<T>(x, rows * h), cpu::slice::<T>(w, h), cpu::slice_mut::<T>(out, rows * h)) };
    for (xr, or) in x.chunks_exact(h).zip(out.chunks_exact_mut(h)) {
        let inv = inv_rms(xr, eps);
        for ((o, &v), &wv) in or.iter_mut().zip(xr).zip(w) {
            *o = T::from_acc(v.to_acc() * inv * wv.to_acc());
        }
    }
}

/// 1 / sqrt(mean(x^2) + eps), accumulated in T's accumulation type.
pub(crate) fn inv_rms<T: Elem>(row: &[T], eps: f64) -> T::Acc {
    let ss = cpu::sum(row, |&v| v.to_acc() * v.to_acc());
    let one = T::Acc::from_f64(1.0);
    one / (ss / T::Acc::from_f64(row.len() as f64) + T::Acc::from_f64(eps)).sqrt()
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (x, w) = (ctx.input(0)?, ctx.input(1)?);
    let eps = ctx.inputs.float(2)?;
    let (gx, gw) = rms_norm_backward(&g, &x, &w, eps)?;
    Ok(vec![ctx.needs_grad(0).then_some(gx), ctx.needs_grad(1).then_some(gw)])
}

fn check_backward<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>, TensorArg<'a>, f64)> {
    let g = call.tensor(0)?;
    let (x, w, eps) = check_norm_args(call, 1, 2, 3)?;
    x.expect_same_dtype_device(&g)?;
    x.expect_same_shape(&g)?;
    Ok((g, x, w, eps))
}

fn backward_meta(call: &Call) -> Result<Vec<Tensor>> {
    let (_, x, w, _) = check_backward(call)?;
    Ok(vec![cpu::empty_like(&x)?, cpu::empty_like(&w)?])
}

fn backward_forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (g, x, w, eps) = check_backward(call)?;
    let dtype = x.dtype()?;
    let gx = cpu::empty(x.sizes_real()?, dtype, &x)?;
    let (rows, h) = rowwise::rows_of(&x)?;
    let (cg, cx, cw) = (cpu::contiguous(&g)?, cpu::contiguous(&x)?, cpu::contiguous(&w)?);
    let pgx = gx.data_ptr() as usize;
    let gw = match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            let gw = cpu::empty(&[h], dtype, &w)?;
            let pgw = gw.data_ptr() as usize;
            crate::with_elem!(dtype, T => rms_norm_backward_cpu::<T>(cg.ptr, cx.ptr, cw.ptr, pgx, pgw, rows as usize, h as usize, eps));
            gw
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
            // Per-block partial sums of grad_weight, reduced by aten afterwards.
            let acc_kind = if dtype == crate::registry::DType::F64 { tch::Kind::Double } else { tch::Kind::Float };
            let launch =
                RowLaunch::new(&BACKWARD_KERNELS, &x, &[cg.ptr, cx.ptr, cw.ptr, pgx], rows, h, Rows::Block { max_blocks: 256 })?;
            let partial = Tensor::f_zeros([launch.blocks() as i64, h], (acc_kind, x.tch_device()?))?;
            if rows > 0 {
                let (pg, px, pw, po, pp) = (cg.ptr as u64, cx.ptr as u64, cw.ptr as u64, pgx as u64, partial.data_ptr() as u64);
                let mut params = [
                    cuda::arg(&pg), cuda::arg(&px), cuda::arg(&pw), cuda::arg(&po), cuda::arg(&pp),
                    cuda::arg(&rows), cuda::arg(&h), cuda::arg(&eps),
                ];
                launch.launch(call, stream, &mut params)?;
            }
            partial.f_sum_dim_intlist(&[0i64][..], false, dtype.kind())?
        }
        _ => return Err(x.unsupported_device()),
    };
    Ok(vec![gx, gw])
}

#[allow(clippy::too_many_arguments)]
fn rms_norm_backward_cpu<T: Elem>(g: usize, x: usize, w: usize, gx: usize, gw: usize, rows: usize, h: usize, eps: f64) {
    // SAFETY: contiguous [rows, h] g, x and gx; [h] w and gw.
    let (g, x, w, gx, gw) = unsafe {
        (
            cpu::slice::<T>(g, rows * h),
            cpu::slice::<T>(x, rows * h),
            cpu::slice::<T>(w, h),
            cpu::slice_mut::<T>(gx, rows * h),
            cpu::slice_mut::<T>(gw, h),
        )
    };
    let mut acc_w = vec![0f64; h]; // summed over rows: f64, as in cpu::sum
    let hn = T::Acc::from_f64(h as f64);
    for ((xr, gr), or) in x.chunks_exact(h.max(1)).zip(g.chunks_exact(h.max(1))).zip(gx.chunks_exact_mut(h.max(1))) {
        let r = inv_rms(xr, eps);
        let dot = cpu::sum(xr.iter().zip(gr).zip(w), |((&xv, &gv), &wv)| gv.to_acc() * wv.to_acc() * xv.to_acc() * r);
        let mean_dot = dot / hn;
        for (j, o) in or.iter_mut().enumerate() {
            let xhat = xr[j].to_acc() * r;
            let gv = gr[j].to_acc();
            *o = T::from_acc(r * (gv * w[j].to_acc() - xhat * mean_dot));
            acc_w[j] += (gv * xhat).to_f64();
        }
    }
    for (o, a) in gw.iter_mut().zip(acc_w) {
        *o = T::from_acc(T::Acc::from_f64(a));
    }
}
