//! `fused_linear_cross_entropy(Tensor hidden, Tensor weight, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor`:
//! `cross_entropy(hidden @ weight.T, target)` in chunks of rows, so the
//! `[N, V]` logits never exist at once, forward or backward; gradient op
//! `fused_linear_cross_entropy_backward`. The products run on the GEMM
//! engine (CUDA) or aten (CPU); the softmax rows on cross_entropy's kernels.

use super::cross_entropy::{
    check_target, check_target_values, grad_rows_cpu, launch_rows, reduce_rows, reduce_rows_cuda, row_scale, row_scale_cuda, rows_cpu, Out,
    Reduction,
};
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
    train_with: fused_linear_cross_entropy_train;
    autocast: linear_loss;
}

op! {
    /// `fused_linear_cross_entropy` and, from the same chunked pass, the
    /// gradients of its loss for `hidden` and `weight` at a loss gradient of
    /// 1: what autograd runs while it records, so that backward only scales
    /// them (three products per chunk instead of four, as in Liger-Kernel).
    /// With reduction `"none"` they depend on each row's gradient, known only
    /// in backward: they come out empty (`[0, H]`) and backward recomputes.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let h = Tensor::randn([6, 4], (Kind::Float, tch::Device::Cpu));
    /// let w = Tensor::randn([10, 4], (Kind::Float, tch::Device::Cpu));
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4, 9, 0]);
    /// let (loss, gh, gw) = myns::fused_linear_cross_entropy_train(&h, &w, &t, -100, "sum")?;
    /// let (rh, rw) = myns::fused_linear_cross_entropy_backward(&Tensor::from(1.0f32), &h, &w, &t, -100, "sum")?;
    /// assert!(gh.allclose(&rh, 1e-5, 1e-6, false) && gw.allclose(&rw, 1e-5, 1e-6, false));
    /// assert_eq!(loss.size(), Vec::<i64>::new());
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn fused_linear_cross_entropy_train(hidden: Tensor, weight: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean") -> (Tensor, Tensor, Tensor);
    args: FlceTrain;
    cpu: train_cpu;
    cuda: train_cuda;
    meta: train_meta;
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

pub(crate) const OPS: Ops = &[Flce::spec, FlceTrain::spec, FlceBackward::spec];

/// Rows per chunk: the power of two nearest above `n * h / v` (Liger's
/// rule: a chunk's logits about the size of `hidden`), raised towards 1024
/// rows while a chunk's logits stay within 2^25 elements (64 MB in 16 bits):
/// the weight gradient sums one product per chunk whose K is the chunk's
/// rows, and at 512 (Llama's 8192 x 2048 x 32000) its epilogue, which reads
/// and writes the whole weight gradient, cost more than its arithmetic.
pub(crate) fn chunk_rows(n: i64, h: i64, v: i64) -> i64 {
    let inc = (v + h - 1) / h.max(1);
    let c = (n + inc - 1) / inc.max(1);
    let liger = (c.max(1) as u64).next_power_of_two() as i64;
    let mut wide = 1i64;
    while wide < 1024 && 2 * wide * v.max(1) <= 1 << 25 {
        wide *= 2;
    }
    liger.max(wide.min((n.max(1) as u64).next_power_of_two() as i64))
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

/// `(grad_hidden, grad_weight)`.
type Grads = (Tensor, Tensor);

/// The arguments every entry shares (the op, its training form and its
/// gradient op take the same inputs).
struct Inputs<'x, 'a> {
    hidden: &'x TensorArg<'a>,
    weight: &'x TensorArg<'a>,
    target: &'x TensorArg<'a>,
    ignore: i64,
    reduction: &'x str,
}

impl<'x, 'a> Inputs<'x, 'a> {
    fn check(&self) -> Result<(DType, Reduction)> {
        check(self.hidden, self.weight, self.target, self.reduction)
    }

    /// `[n, h]`, `[v, h]` and the chunk size.
    fn dims(&self) -> Result<(i64, i64, i64, i64)> {
        let (sh, sw) = (self.hidden.sizes_real()?, self.weight.sizes_real()?);
        let (n, h, v) = (sh[0], sh[1], sw[0]);
        if v == 0 && n > 0 {
            // F.cross_entropy has no answer for zero classes either.
            return Err(self.weight.error("has no rows: a cross-entropy over zero classes"));
        }
        Ok((n, h, v, chunk_rows(n, h, v)))
    }

    fn loss_meta(&self) -> Result<Tensor> {
        let (_, red) = self.check()?;
        let col = self.hidden.tensor().f_select(1, 0)?;
        Ok(match red {
            Reduction::None => col.f_contiguous()?.f_empty_like()?,
            _ => col.f_sum(None::<Kind>)?.f_empty_like()?,
        })
    }

    /// The training op's gradients when they cannot be formed (reduction
    /// "none"): `[0, H]`, on every key alike.
    fn no_grads(&self) -> Result<(Tensor, Tensor)> {
        Ok((self.hidden.tensor().f_narrow(0, 0, 0)?.f_empty_like()?, self.weight.tensor().f_narrow(0, 0, 0)?.f_empty_like()?))
    }

    /// The loss on the CPU (aten), chunk by chunk.
    fn loss_cpu(&self) -> Result<Tensor> {
        let (dtype, red) = self.check()?;
        let (n, _, v, chunk) = self.dims()?;
        check_target_values(self.target, v, self.ignore)?;
        let acc = dtype.acc().kind();
        let (hid, target) = (self.hidden.tensor(), self.target.tensor());
        let wt = self.weight.tensor().f_to_kind(acc)?.f_tr()?;
        let mut rows = Vec::new();
        for r0 in (0..n).step_by(chunk.max(1) as usize) {
            let c = chunk.min(n - r0);
            let logits = hid.f_narrow(0, r0, c)?.f_to_kind(acc)?.f_mm(&wt)?;
            rows.push(rows_cpu(&logits, &target.f_narrow(0, r0, c)?, self.ignore, acc)?);
        }
        let rows = if rows.is_empty() { Tensor::f_zeros([0], (acc, tch::Device::Cpu))? } else { Tensor::f_cat(&rows, 0)? };
        reduce_rows(&rows, &target, self.ignore, red, dtype)
    }

    /// The gradients for loss gradient `grad` on the CPU (aten), chunk by chunk.
    fn grads_cpu(&self, grad: &Tensor) -> Result<(Tensor, Tensor)> {
        let (dtype, red) = self.check()?;
        let (n, h, v, chunk) = self.dims()?;
        check_target_values(self.target, v, self.ignore)?;
        let acc = dtype.acc().kind();
        let (hid, target) = (self.hidden.tensor().f_to_kind(acc)?, self.target.tensor());
        let w = self.weight.tensor().f_to_kind(acc)?;
        let wt = w.f_tr()?;
        let scale = row_scale(grad, &target, self.ignore, red, n, acc)?;
        let gh = Tensor::f_empty([n, h], (acc, tch::Device::Cpu))?;
        let mut gw = Tensor::f_zeros([v, h], (acc, tch::Device::Cpu))?;
        for r0 in (0..n).step_by(chunk.max(1) as usize) {
            let c = chunk.min(n - r0);
            let hc = hid.f_narrow(0, r0, c)?;
            let d = grad_rows_cpu(&hc.f_mm(&wt)?, &target.f_narrow(0, r0, c)?, &scale.f_narrow(0, r0, c)?, self.ignore, acc)?;
            gh.f_narrow(0, r0, c)?.f_copy_(&d.f_mm(&w)?)?;
            let _ = gw.f_addmm_(&d.f_tr()?, &hc)?;
        }
        Ok((gh.f_to_kind(dtype.kind())?, gw.f_to_kind(dtype.kind())?))
    }

    /// The chunked pass on CUDA. Per chunk of rows: the logits (one
    /// product); their per-row losses when `loss`; with a gradient scale
    /// (per row, accumulation type), the logits' gradient in place and from
    /// it `grad_hidden` and `grad_weight` (two more products, the weight's
    /// summed over chunks by the GEMM epilogue). Returns the loss and the
    /// gradients asked for.
    fn pass_cuda(&self, loss: bool, scale: Option<(&Tensor, i64)>, cx: &Cuda) -> Result<(Option<Tensor>, Option<Grads>)> {
        let (dtype, red) = self.check()?;
        let (n, h, v, chunk) = self.dims()?;
        let device = Device::Cuda(cx.device);
        let (hid, w) = (self.hidden.tensor().f_contiguous()?, self.weight.tensor().f_contiguous()?);
        let target = self.target.tensor().f_contiguous()?;
        let rows = if loss { Some(op::empty(&[n], dtype.acc().scalar_type(), device)?) } else { None };
        let grads = match scale {
            Some(_) => Some((op::empty(&[n, h], dtype.scalar_type(), device)?, op::empty(&[v, h], dtype.scalar_type(), device)?)),
            None => None,
        };
        if n == 0 {
            if let Some((_, gw)) = &grads {
                let _ = gw.shallow_clone().f_zero_()?;
            }
        }
        let logits = op::empty(&[chunk.min(n).max(1), v], dtype.scalar_type(), device)?;
        let (ph, pw, pl, pt) = (hid.data_ptr() as usize, w.data_ptr() as usize, logits.data_ptr() as usize, target.data_ptr() as usize);
        let (es, acc_size) = (dtype.size(), dtype.acc().size());
        let tf32 = dtype == DType::F32 && op::allow_tf32()?;
        for r0 in (0..n).step_by(chunk.max(1) as usize) {
            let c = chunk.min(n - r0);
            let hc = ph + (r0 * h) as usize * es;
            let pt = pt + r0 as usize * 8;
            // logits = hidden[r0..] @ weight^T ([c, h] @ [h, v]).
            product(hc, [h, 1], pw, [1, h], pl, [c, h, v], dtype, cx)?;
            let loss_at = rows.as_ref().map_or(0, |rows| rows.data_ptr() as usize + r0 as usize * acc_size);
            let (Some((scale, scale_ld)), Some((gh, gw))) = (scale, &grads) else {
                if loss_at != 0 {
                    launch_rows(self.hidden, pl, v, pt, c, v, self.ignore, Out::Loss(loss_at), cx)?;
                }
                continue;
            };
            // The logits become their gradient, in place, the losses taken
            // on the way (one read of the chunk).
            let grad =
                Out::Grad { scale: scale.data_ptr() as usize + (r0 * scale_ld) as usize * acc_size, scale_ld, d: pl, d_ld: v, loss: loss_at };
            launch_rows(self.hidden, pl, v, pt, c, v, self.ignore, grad, cx)?;
            // grad_hidden[r0..] = d @ weight ([c, v] @ [v, h]).
            product(pl, [v, 1], pw, [h, 1], gh.data_ptr() as usize + (r0 * h) as usize * es, [c, v, h], dtype, cx)?;
            // grad_weight (+)= d^T @ hidden[r0..] ([v, c] @ [c, h]): the first
            // chunk writes it, the others add in the epilogue (no temporary).
            let p = Problem { a: pl, b: hc, out: gw.data_ptr() as usize, batch: 1, m: v, n: h, k: c, sa: [0, 1, v], sb: [0, h, 1] };
            if r0 == 0 {
                gemm::run_cuda(&p, dtype, tf32, cx.device, cx.stream)?;
            } else {
                gemm::run_cuda_accumulate(&p, dtype, tf32, cx.device, cx.stream)?;
            }
        }
        let loss = match rows {
            Some(rows) => Some(reduce_rows_cuda(&rows, &target, self.ignore, red, dtype, cx)?),
            None => None,
        };
        Ok((loss, grads))
    }
}

impl<'a> Flce<'a> {
    fn inputs(&self) -> Inputs<'_, 'a> {
        Inputs { hidden: &self.hidden, weight: &self.weight, target: &self.target, ignore: self.ignore_index, reduction: self.reduction }
    }
}

impl<'a> FlceTrain<'a> {
    fn inputs(&self) -> Inputs<'_, 'a> {
        Inputs { hidden: &self.hidden, weight: &self.weight, target: &self.target, ignore: self.ignore_index, reduction: self.reduction }
    }
}

impl<'a> FlceBackward<'a> {
    fn inputs(&self) -> Inputs<'_, 'a> {
        Inputs { hidden: &self.hidden, weight: &self.weight, target: &self.target, ignore: self.ignore_index, reduction: self.reduction }
    }
}

fn meta(a: &Flce) -> Result<Tensor> {
    a.inputs().loss_meta()
}

fn cpu(a: &Flce) -> Result<Tensor> {
    a.inputs().loss_cpu()
}

fn cuda(a: &Flce, cx: &Cuda) -> Result<Tensor> {
    let (loss, _) = a.inputs().pass_cuda(true, None, cx)?;
    loss.ok_or_else(|| a.hidden.error("no loss came out"))
}

/// `out = a @ b` on the GEMM engine: `a` `[m, k]` at `pa` with strides
/// `sa`, `b` `[k, n]` at `pb` with strides `sb`, `out` contiguous `[m, n]`.
#[allow(clippy::too_many_arguments)]
fn product(pa: usize, sa: [i64; 2], pb: usize, sb: [i64; 2], out: usize, [m, k, n]: [i64; 3], dtype: DType, cx: &Cuda) -> Result<()> {
    let p = Problem { a: pa, b: pb, out, batch: 1, m, n, k, sa: [0, sa[0], sa[1]], sb: [0, sb[0], sb[1]] };
    let tf32 = dtype == DType::F32 && op::allow_tf32()?;
    gemm::run_cuda(&p, dtype, tf32, cx.device, cx.stream)
}

fn train_meta(a: &FlceTrain) -> Result<(Tensor, Tensor, Tensor)> {
    let x = a.inputs();
    let loss = x.loss_meta()?;
    let (gh, gw) = match x.check()?.1 {
        Reduction::None => x.no_grads()?,
        _ => (op::empty_like(&a.hidden)?, op::empty_like(&a.weight)?),
    };
    Ok((loss, gh, gw))
}

fn train_cpu(a: &FlceTrain) -> Result<(Tensor, Tensor, Tensor)> {
    let x = a.inputs();
    let (dtype, red) = x.check()?;
    let loss = x.loss_cpu()?;
    let (gh, gw) = match red {
        Reduction::None => x.no_grads()?,
        _ => x.grads_cpu(&Tensor::f_ones([], (dtype.kind(), tch::Device::Cpu))?)?,
    };
    Ok((loss, gh, gw))
}

fn train_cuda(a: &FlceTrain, cx: &Cuda) -> Result<(Tensor, Tensor, Tensor)> {
    let x = a.inputs();
    let (dtype, red) = x.check()?;
    if red == Reduction::None {
        let (loss, _) = x.pass_cuda(true, None, cx)?;
        let (gh, gw) = x.no_grads()?;
        return Ok((loss.ok_or_else(|| a.hidden.error("no loss came out"))?, gh, gw));
    }
    let (scale, ld) = row_scale_cuda(None, &a.target.tensor().f_contiguous()?, a.ignore_index, red, a.hidden.sizes_real()?[0], dtype, cx)?;
    match x.pass_cuda(true, Some((&scale, ld)), cx)? {
        (Some(loss), Some((gh, gw))) => Ok((loss, gh, gw)),
        _ => Err(a.hidden.error("no loss or gradients came out")),
    }
}

fn backward(ctx: &Backward<Flce>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None, None]) };
    let a = &ctx.args;
    let (gh_needed, gw_needed) = (ctx.needs_grad(0), ctx.needs_grad(1));
    if !gh_needed && !gw_needed {
        return Ok(vec![None, None, None]);
    }
    // Recorded through fused_linear_cross_entropy_train: the gradients at a
    // loss gradient of 1 were formed in the forward pass; scale them (in
    // place when autograd frees them after this call).
    let red = Reduction::parse(a.hidden.op(), a.reduction)?;
    if red != Reduction::None {
        if let (Ok(gh1), Ok(gw1)) = (ctx.output(0), ctx.output(1)) {
            let scaled = |t: &Tensor, needed: bool| -> Result<Option<Tensor>> {
                if !needed {
                    return Ok(None);
                }
                Ok(Some(if ctx.releases_saved() { t.shallow_clone().f_mul_(&g)? } else { t.f_mul(&g)? }))
            };
            return Ok(vec![scaled(&gh1, gh_needed)?, scaled(&gw1, gw_needed)?, None]);
        }
    }
    let (gh, gw) = fused_linear_cross_entropy_backward(
        &g,
        &a.hidden.tensor(),
        &a.weight.tensor(),
        &a.target.tensor(),
        a.ignore_index,
        a.reduction,
    )?;
    Ok(vec![gh_needed.then_some(gh), gw_needed.then_some(gw), None])
}

fn check_backward(a: &FlceBackward) -> Result<(DType, Reduction)> {
    let r = a.inputs().check()?;
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
    check_backward(a)?;
    a.inputs().grads_cpu(&a.grad.tensor())
}

fn backward_cuda(a: &FlceBackward, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let (dtype, red) = check_backward(a)?;
    let x = a.inputs();
    let n = a.hidden.sizes_real()?[0];
    let (scale, ld) = row_scale_cuda(Some(&a.grad.tensor()), &a.target.tensor().f_contiguous()?, a.ignore_index, red, n, dtype, cx)?;
    match x.pass_cuda(false, Some((&scale, ld)), cx)? {
        (_, Some(grads)) => Ok(grads),
        _ => Err(a.hidden.error("no gradients came out")),
    }
}
