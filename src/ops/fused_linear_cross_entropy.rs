//! `fused_linear_cross_entropy(Tensor hidden, Tensor weight, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor`:
//! `cross_entropy(hidden @ weight.T, target)` in chunks of rows, so the
//! `[N, V]` logits never exist at once, forward or backward; gradient op
//! `fused_linear_cross_entropy_backward`. The products run on the GEMM
//! engine (CUDA) or aten (CPU); the softmax rows on cross_entropy's kernels.

use super::cross_entropy::{check_target, check_target_values, grad_rows_cpu, launch_rows, reduce_rows, row_scale, rows_cpu, Out, Reduction};
use crate::gemm::{self, Problem};
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::types::{DType, Device, Result};
use tch::{Kind, Tensor};

op! {
    /// `cross_entropy(hidden @ weight.T, target, ignore_index, reduction)`
    /// for `hidden` `[N, H]`, `weight` `[V, H]` (an LM head) and `[N]` int64
    /// `target`, computed over chunks of rows (about `N * H / V` at a time,
    /// so a chunk's logits are about the size of `hidden`): the full
    /// `[N, V]` logits never exist, in the forward or the backward, which
    /// recomputes each chunk's logits and produces the gradients of `hidden`
    /// and `weight` from them in the same pass. Logits are formed in the
    /// inputs' dtype (float32 accumulation) and the cross-entropy computed in
    /// float32, as in Liger-Kernel's fused op. Targets as in
    /// `cross_entropy` (outside `[0, V)`: `IndexError` on the CPU, NaN on
    /// CUDA). Under `torch.autocast` the product runs in the autocast dtype
    /// and the loss comes out in float32, as `F.cross_entropy(F.linear(hidden,
    /// weight), target)` does.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let h = Tensor::randn([6, 4], (Kind::Float, tch::Device::Cpu));
    /// let w = Tensor::randn([10, 4], (Kind::Float, tch::Device::Cpu));
    /// let t = Tensor::from_slice(&[1i64, 2, 3, -100, 9, 0]);
    /// let fused = myns::fused_linear_cross_entropy(&h, &w, &t, -100, "mean")?;
    /// let plain = myns::cross_entropy(&h.matmul(&w.tr()), &t, -100, "mean")?;
    /// assert!((fused.double_value(&[]) - plain.double_value(&[])).abs() < 1e-5);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn fused_linear_cross_entropy(hidden: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean") -> Tensor;
    args: Flce;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    autocast: linear_loss;
}

op! {
    /// Gradients `(grad_hidden, grad_weight)` of
    /// `fused_linear_cross_entropy`, chunk by chunk (the logits of one chunk
    /// at a time), given the gradient of its loss.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let h = Tensor::randn([6, 4], (Kind::Float, tch::Device::Cpu));
    /// let w = Tensor::randn([10, 4], (Kind::Float, tch::Device::Cpu));
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4, 9, 0]);
    /// let (gh, gw) = myns::fused_linear_cross_entropy_backward(&Tensor::from(1.0f32), &h, &w, &t, -100, "sum")?;
    /// assert_eq!((gh.size(), gw.size()), (vec![6, 4], vec![10, 4]));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn fused_linear_cross_entropy_backward(grad: Tensor, hidden: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean") -> (Tensor, Tensor);
    args: FlceBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[Flce::spec, FlceBackward::spec];

/// Rows per chunk: the power of two nearest above `n * h / v` (Liger's
/// rule: a chunk's logits about the size of `hidden`), at least 1.
pub(crate) fn chunk_rows(n: i64, h: i64, v: i64) -> i64 {
    let inc = (v + h - 1) / h.max(1);
    let c = (n + inc - 1) / inc.max(1);
    (c.max(1) as u64).next_power_of_two() as i64
}

fn check(hidden: &TensorArg, weight: &TensorArg, target: &TensorArg, reduction: &str) -> Result<(DType, Reduction)> {
    let dtype = hidden.dtype()?;
    hidden.expect_dim(2)?;
    weight.expect_dim(2)?;
    hidden.expect_same_dtype(weight)?;
    if let (Some(sh), Some(sw)) = (hidden.sizes(), weight.sizes()) {
        if sh[1] != sw[1] {
            return Err(weight.error(format_args!("has shape {sw:?}: its rows must have {} elements, as `hidden`'s ({sh:?})", sh[1])));
        }
    }
    check_target(target, hidden.sizes().map(|s| s[0]))?;
    Ok((dtype, Reduction::parse(hidden.op(), reduction)?))
}

fn meta(a: &Flce) -> Result<Tensor> {
    let (_, red) = check(&a.hidden, &a.weight, &a.target, a.reduction)?;
    let col = a.hidden.tensor().f_select(1, 0)?;
    Ok(match red {
        Reduction::None => col.f_contiguous()?.f_empty_like()?,
        _ => col.f_sum(None::<Kind>)?.f_empty_like()?,
    })
}

/// `[n, h]`, `[v, h]` and the chunk size.
fn dims(hidden: &TensorArg, weight: &TensorArg) -> Result<(i64, i64, i64, i64)> {
    let (sh, sw) = (hidden.sizes_real()?, weight.sizes_real()?);
    let (n, h, v) = (sh[0], sh[1], sw[0]);
    if v == 0 && n > 0 {
        // F.cross_entropy has no answer for zero classes either.
        return Err(weight.error("has no rows: a cross-entropy over zero classes"));
    }
    Ok((n, h, v, chunk_rows(n, h, v)))
}

fn cpu(a: &Flce) -> Result<Tensor> {
    let (dtype, red) = check(&a.hidden, &a.weight, &a.target, a.reduction)?;
    let (n, _, v, chunk) = dims(&a.hidden, &a.weight)?;
    check_target_values(&a.target, v, a.ignore_index)?;
    let acc = dtype.acc().kind();
    let (hid, target) = (a.hidden.tensor(), a.target.tensor());
    let wt = a.weight.tensor().f_to_kind(acc)?.f_tr()?;
    let mut rows = Vec::new();
    for r0 in (0..n).step_by(chunk.max(1) as usize) {
        let c = chunk.min(n - r0);
        let logits = hid.f_narrow(0, r0, c)?.f_to_kind(acc)?.f_mm(&wt)?;
        rows.push(rows_cpu(&logits, &target.f_narrow(0, r0, c)?, a.ignore_index, acc)?);
    }
    let rows = if rows.is_empty() { Tensor::f_zeros([0], (acc, tch::Device::Cpu))? } else { Tensor::f_cat(&rows, 0)? };
    reduce_rows(&rows, &target, a.ignore_index, red, dtype)
}

/// `out = a @ b` on the GEMM engine: `a` `[m, k]` at `pa` with strides
/// `sa`, `b` `[k, n]` at `pb` with strides `sb`, `out` contiguous `[m, n]`.
#[allow(clippy::too_many_arguments)]
fn product(pa: usize, sa: [i64; 2], pb: usize, sb: [i64; 2], out: usize, [m, k, n]: [i64; 3], dtype: DType, cx: &Cuda) -> Result<()> {
    let p = Problem { a: pa, b: pb, out, batch: 1, m, n, k, sa: [0, sa[0], sa[1]], sb: [0, sb[0], sb[1]] };
    let tf32 = dtype == DType::F32 && op::allow_tf32()?;
    gemm::run_cuda(&p, dtype, tf32, cx.device, cx.stream)
}

fn cuda(a: &Flce, cx: &Cuda) -> Result<Tensor> {
    let (dtype, red) = check(&a.hidden, &a.weight, &a.target, a.reduction)?;
    let (n, h, v, chunk) = dims(&a.hidden, &a.weight)?;
    let device = Device::Cuda(cx.device);
    let (hid, w) = (a.hidden.tensor().f_contiguous()?, a.weight.tensor().f_contiguous()?);
    let target = a.target.tensor().f_contiguous()?;
    let rows = op::empty(&[n], dtype.acc().scalar_type(), device)?;
    let logits = op::empty(&[chunk.min(n).max(1), v], dtype.scalar_type(), device)?;
    let (ph, pw, pl, pt, pr) =
        (hid.data_ptr() as usize, w.data_ptr() as usize, logits.data_ptr() as usize, target.data_ptr() as usize, rows.data_ptr() as usize);
    let (es, acc_size) = (dtype.size(), dtype.acc().size());
    for r0 in (0..n).step_by(chunk.max(1) as usize) {
        let c = chunk.min(n - r0);
        // logits = hidden[r0..] @ weight^T ([c, h] @ [h, v]).
        product(ph + (r0 * h) as usize * es, [h, 1], pw, [1, h], pl, [c, h, v], dtype, cx)?;
        let out = Out::Loss(pr + r0 as usize * acc_size);
        launch_rows(&a.hidden, pl, v, pt + r0 as usize * 8, c, v, a.ignore_index, out, cx)?;
    }
    reduce_rows(&rows, &target, a.ignore_index, red, dtype)
}

fn backward(ctx: &Backward<Flce>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None, None]) };
    let a = &ctx.args;
    if !ctx.needs_grad(0) && !ctx.needs_grad(1) {
        return Ok(vec![None, None, None]);
    }
    let (gh, gw) = fused_linear_cross_entropy_backward(
        &g,
        &a.hidden.tensor(),
        &a.weight.tensor(),
        &a.target.tensor(),
        a.ignore_index,
        a.reduction,
    )?;
    Ok(vec![ctx.needs_grad(0).then_some(gh), ctx.needs_grad(1).then_some(gw), None])
}

fn check_backward(a: &FlceBackward) -> Result<(DType, Reduction)> {
    let r = check(&a.hidden, &a.weight, &a.target, a.reduction)?;
    a.hidden.expect_same_dtype(&a.grad)?;
    let want = if r.1 == Reduction::None { 1 } else { 0 };
    if a.grad.dim() != want {
        return Err(a.grad.error(format_args!("must be {want}-D for reduction {:?}, got a {}-D tensor", a.reduction, a.grad.dim())));
    }
    Ok(r)
}

fn backward_meta(a: &FlceBackward) -> Result<(Tensor, Tensor)> {
    check_backward(a)?;
    Ok((op::empty_like(&a.hidden)?, op::empty_like(&a.weight)?))
}

fn backward_cpu(a: &FlceBackward) -> Result<(Tensor, Tensor)> {
    let (dtype, red) = check_backward(a)?;
    let (n, h, v, chunk) = dims(&a.hidden, &a.weight)?;
    check_target_values(&a.target, v, a.ignore_index)?;
    let acc = dtype.acc().kind();
    let (hid, target) = (a.hidden.tensor().f_to_kind(acc)?, a.target.tensor());
    let w = a.weight.tensor().f_to_kind(acc)?;
    let wt = w.f_tr()?;
    let scale = row_scale(&a.grad.tensor(), &target, a.ignore_index, red, n, acc)?;
    let gh = Tensor::f_empty([n, h], (acc, tch::Device::Cpu))?;
    let mut gw = Tensor::f_zeros([v, h], (acc, tch::Device::Cpu))?;
    for r0 in (0..n).step_by(chunk.max(1) as usize) {
        let c = chunk.min(n - r0);
        let hc = hid.f_narrow(0, r0, c)?;
        let d = grad_rows_cpu(&hc.f_mm(&wt)?, &target.f_narrow(0, r0, c)?, &scale.f_narrow(0, r0, c)?, a.ignore_index, acc)?;
        gh.f_narrow(0, r0, c)?.f_copy_(&d.f_mm(&w)?)?;
        let _ = gw.f_addmm_(&d.f_tr()?, &hc)?;
    }
    Ok((gh.f_to_kind(dtype.kind())?, gw.f_to_kind(dtype.kind())?))
}

fn backward_cuda(a: &FlceBackward, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let (dtype, red) = check_backward(a)?;
    let (n, h, v, chunk) = dims(&a.hidden, &a.weight)?;
    let device = Device::Cuda(cx.device);
    let (hid, w) = (a.hidden.tensor().f_contiguous()?, a.weight.tensor().f_contiguous()?);
    let target = a.target.tensor().f_contiguous()?;
    let scale = row_scale(&a.grad.tensor(), &target, a.ignore_index, red, n, dtype.acc().kind())?;
    let gh = op::empty(&[n, h], dtype.scalar_type(), device)?;
    let gw = Tensor::f_zeros([v, h], (dtype.kind(), tch::Device::Cuda(cx.device)))?;
    let cmax = chunk.min(n).max(1);
    let logits = op::empty(&[cmax, v], dtype.scalar_type(), device)?;
    let (ph, pw, pl, pt, pgw) =
        (hid.data_ptr() as usize, w.data_ptr() as usize, logits.data_ptr() as usize, target.data_ptr() as usize, gw.data_ptr() as usize);
    let (pgh, ps) = (gh.data_ptr() as usize, scale.data_ptr() as usize);
    let (es, acc_size) = (dtype.size(), dtype.acc().size());
    for r0 in (0..n).step_by(chunk.max(1) as usize) {
        let c = chunk.min(n - r0);
        let hc = ph + (r0 * h) as usize * es;
        product(hc, [h, 1], pw, [1, h], pl, [c, h, v], dtype, cx)?;
        // The logits become their gradient, in place.
        let grad = Out::Grad { scale: ps + r0 as usize * acc_size, scale_ld: 1, d: pl, d_ld: v };
        launch_rows(&a.hidden, pl, v, pt + r0 as usize * 8, c, v, a.ignore_index, grad, cx)?;
        // grad_hidden[r0..] = d @ weight ([c, v] @ [v, h]).
        product(pl, [v, 1], pw, [h, 1], pgh + (r0 * h) as usize * es, [c, v, h], dtype, cx)?;
        // grad_weight += d^T @ hidden[r0..] ([v, c] @ [c, h]), added by the
        // engine's epilogue: no temporary.
        let p = Problem { a: pl, b: hc, out: pgw, batch: 1, m: v, n: h, k: c, sa: [0, 1, v], sb: [0, h, 1] };
        gemm::run_cuda_accumulate(&p, dtype, dtype == DType::F32 && op::allow_tf32()?, cx.device, cx.stream)?;
    }
    Ok((gh, gw))
}
