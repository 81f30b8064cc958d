//! `cross_entropy(Tensor logits, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor`
//! for `[N, V]` logits, and its gradient op `cross_entropy_backward`. The
//! row kernels are shared with `fused_linear_cross_entropy`.

use crate::cuda::{self, DTypeKernels};
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{self, row_kernels, RowKernels, RowLaunch, Rows};
use crate::types::{DType, Device, Error, Result, ScalarType};
use tch::{Kind, Tensor};

op! {
    /// Cross-entropy of `[N, V]` logits against `[N]` int64 class indices,
    /// as `torch.nn.functional.cross_entropy(logits, target, ignore_index=,
    /// reduction=)`: `logsumexp(logits[i]) - logits[i, target[i]]` per row,
    /// rows whose target is `ignore_index` count 0 and are left out of the
    /// mean; `reduction` is `"mean"`, `"sum"` or `"none"`. Computed in
    /// float32 (float64 for float64 logits), returned in the logits' dtype.
    /// A target outside `[0, V)` is an `IndexError` on the CPU; on CUDA it
    /// gives NaN in that row's loss (and so in a mean or sum) and gradient,
    /// never a device-side assert. Differentiable in `logits`; float32 under
    /// `torch.autocast`, as `cross_entropy`.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let logits = Tensor::zeros([2, 4], (Kind::Float, tch::Device::Cpu));
    /// let target = Tensor::from_slice(&[1i64, -100]);
    /// let loss = myns::cross_entropy(&logits, &target, -100, "mean")?; // ln 4, one row counted
    /// assert!((loss.double_value(&[]) - 4f64.ln()).abs() < 1e-6);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean") -> Tensor;
    args: CrossEntropy;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    autocast: fp32;
}

op! {
    /// Gradient of `cross_entropy` with respect to the logits:
    /// `(softmax(logits) - onehot(target)) * grad` per row (`grad` divided by
    /// the number of rows counted for `"mean"`; per row for `"none"`), 0 in
    /// ignored rows.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let logits = Tensor::zeros([1, 2], (Kind::Float, tch::Device::Cpu));
    /// let g = myns::cross_entropy_backward(&Tensor::from(1.0f32), &logits, &Tensor::from_slice(&[0i64]), -100, "sum")?;
    /// assert_eq!(Vec::<f32>::try_from(&g.view([-1]))?, vec![-0.5, 0.5]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn cross_entropy_backward(grad: Tensor, logits: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean") -> Tensor;
    args: CrossEntropyBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[CrossEntropy::spec, CrossEntropyBackward::spec];

static KERNELS: RowKernels = row_kernels!(crate::kernels::CROSS_ENTROPY, "cross_entropy");
static BACKWARD_KERNELS: RowKernels = row_kernels!(crate::kernels::CROSS_ENTROPY, "cross_entropy_backward");
static REDUCE: DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::CROSS_ENTROPY, "cross_entropy_reduce");
static SCALE: DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::CROSS_ENTROPY, "cross_entropy_scale");

/// Rows up to which one block finishes a "mean" or "sum" (the loss, the
/// gradient scale): two launches per call instead of aten's five or six
/// (the call's host time at 16 x 1000 was 2.8x aten's, now 0.8x on the
/// H100). The block reads 12 bytes a row, 0.8 MB at this limit; beyond it,
/// aten's reductions, which spread over the GPU.
const FINISH_MAX_ROWS: i64 = 1 << 16;

/// `reduction` of the cross-entropy ops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reduction {
    Mean,
    Sum,
    None,
}

impl Reduction {
    pub(crate) fn parse(op: &str, s: &str) -> Result<Reduction> {
        match s {
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            "none" => Ok(Reduction::None),
            other => Err(Error::value(format!(
                "myns::{op}: argument `reduction` must be \"mean\", \"sum\" or \"none\", got {other:?}"
            ))),
        }
    }
}

/// Checks `target` (`[n]` int64 on `like`'s device) for `n` rows.
pub(crate) fn check_target(target: &TensorArg, rows: Option<i64>) -> Result<()> {
    let st = target.elem_among(&[ScalarType::Long])?;
    if st != ScalarType::Long {
        return Err(target.error_of(
            crate::types::ErrorKind::NotImplemented,
            format_args!("must hold int64 class indices, got dtype {}", st.name()),
        ));
    }
    target.expect_dim(1)?;
    if let (Some(n), Some(s)) = (rows, target.sizes()) {
        if s[0] != n {
            return Err(target.error(format_args!("has {} elements but there are {n} rows", s[0])));
        }
    }
    Ok(())
}

/// On the CPU: a target outside `[0, v)` other than `ignore` is an
/// `IndexError` naming it (as aten's).
pub(crate) fn check_target_values(target: &TensorArg, v: i64, ignore: i64) -> Result<()> {
    let t = target.tensor();
    let bad = t.f_ne(ignore)?.f_logical_and(&t.f_lt(0)?.f_logical_or(&t.f_ge(v)?)?)?;
    if bad.f_any()?.f_int64_value(&[])? != 0 {
        let first = t.f_masked_select(&bad)?.f_int64_value(&[0])?;
        return Err(Error::index(format!(
            "myns::{}: argument `{}` holds {first}, outside [0, {v}) and not ignore_index {ignore}",
            target.op(),
            target.name()
        )));
    }
    Ok(())
}

fn check(a: &CrossEntropy) -> Result<(DType, Reduction)> {
    let dtype = a.logits.dtype()?;
    a.logits.expect_dim(2)?;
    check_target(&a.target, a.logits.sizes().map(|s| s[0]))?;
    Ok((dtype, Reduction::parse(a.logits.op(), a.reduction)?))
}

/// The loss tensor: `[N]` per row, or a 0-d tensor, of `like`'s dtype and
/// device with symbolic sizes kept.
fn loss_like(logits: &TensorArg, red: Reduction) -> Result<Tensor> {
    let t = logits.tensor();
    let col = t.f_select(1, 0)?;
    Ok(match red {
        Reduction::None => col.f_contiguous()?.f_empty_like()?,
        _ => col.f_sum(None::<Kind>)?.f_empty_like()?,
    })
}

fn meta(a: &CrossEntropy) -> Result<Tensor> {
    let (_, red) = check(a)?;
    loss_like(&a.logits, red)
}

/// Per-row losses (`[N]`, accumulation type) reduced as asked, in `dtype`:
/// the mean divides by the number of rows whose target is not `ignore`
/// (0/0: NaN, as aten).
pub(crate) fn reduce_rows(rows: &Tensor, target: &Tensor, ignore: i64, red: Reduction, dtype: DType) -> Result<Tensor> {
    let out = match red {
        Reduction::None => rows.shallow_clone(),
        Reduction::Sum => rows.f_sum(None::<Kind>)?,
        Reduction::Mean => rows.f_sum(None::<Kind>)?.f_div(&target.f_ne(ignore)?.f_sum(rows.kind())?)?,
    };
    Ok(out.f_to_kind(dtype.kind())?)
}

/// `reduce_rows` on CUDA for `target` contiguous: "mean" and "sum" of up
/// to `FINISH_MAX_ROWS` rows in one kernel.
pub(crate) fn reduce_rows_cuda(rows: &Tensor, target: &Tensor, ignore: i64, red: Reduction, dtype: DType, cx: &Cuda) -> Result<Tensor> {
    let n = rows.size()[0];
    if red == Reduction::None || n > FINISH_MAX_ROWS {
        return reduce_rows(rows, target, ignore, red, dtype);
    }
    let out = op::empty(&[], dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (pr, pt, po, mean) = (rows.data_ptr() as u64, target.data_ptr() as u64, out.data_ptr() as u64, (red == Reduction::Mean) as i32);
    let mut params = [cuda::arg(&pr), cuda::arg(&pt), cuda::arg(&n), cuda::arg(&ignore), cuda::arg(&mean), cuda::arg(&po)];
    cuda::launch(REDUCE.get(dtype).function(cx.device)?, (1, 1, 1), (finish_threads(n), 1, 1), 0, cx.stream, &mut params)?;
    Ok(out)
}

/// `row_scale` on CUDA for `target` contiguous and `grad` (0-D for "mean"
/// and "sum"; `None`: a loss gradient of 1) in `dtype`, with its stride:
/// for "mean" and "sum" of up to `FINISH_MAX_ROWS` rows one value (stride
/// 0) from one kernel.
pub(crate) fn row_scale_cuda(grad: Option<&Tensor>, target: &Tensor, ignore: i64, red: Reduction, n: i64, dtype: DType, cx: &Cuda) -> Result<(Tensor, i64)> {
    let acc = dtype.acc();
    if red == Reduction::None || n > FINISH_MAX_ROWS {
        let one;
        let g = match grad {
            Some(g) => g,
            None => {
                one = Tensor::f_ones([], (acc.kind(), tch::Device::Cuda(cx.device)))?;
                &one
            }
        };
        return Ok((row_scale(g, target, ignore, red, n, acc.kind())?, 1));
    }
    let scale = op::empty(&[1], acc.scalar_type(), Device::Cuda(cx.device))?;
    let (pg, pt, ps, mean) = (grad.map_or(0, |g| g.data_ptr() as u64), target.data_ptr() as u64, scale.data_ptr() as u64, (red == Reduction::Mean) as i32);
    let mut params = [cuda::arg(&pg), cuda::arg(&pt), cuda::arg(&n), cuda::arg(&ignore), cuda::arg(&mean), cuda::arg(&ps)];
    cuda::launch(SCALE.get(dtype).function(cx.device)?, (1, 1, 1), (finish_threads(n), 1, 1), 0, cx.stream, &mut params)?;
    Ok((scale, 0))
}

/// Threads of the one-block finish: a thread a row, in whole warps, at most 1024.
fn finish_threads(n: i64) -> u32 {
    rowwise::whole_warps(n, 1024) as u32
}

/// Per-row losses of `logits` `[n, V]` (any strides) on the CPU, in the
/// accumulation type: `logsumexp - logits[target]`, 0 for ignored rows.
pub(crate) fn rows_cpu(logits: &Tensor, target: &Tensor, ignore: i64, acc: Kind) -> Result<Tensor> {
    let x = logits.f_to_kind(acc)?;
    let lse = x.f_logsumexp(&[1i64][..], false)?;
    let keep = target.f_ne(ignore)?;
    let t = target.f_where_scalarother(&keep, 0)?;
    let picked = x.f_gather(1, &t.f_unsqueeze(1)?, false)?.f_squeeze_dim(1)?;
    Ok(lse.f_sub(&picked)?.f_where_scalarother(&keep, 0.0)?)
}

fn cpu(a: &CrossEntropy) -> Result<Tensor> {
    let (dtype, red) = check(a)?;
    let v = a.logits.sizes_real()?[1];
    check_target_values(&a.target, v, a.ignore_index)?;
    let rows = rows_cpu(&a.logits.tensor(), &a.target.tensor(), a.ignore_index, dtype.acc().kind())?;
    reduce_rows(&rows, &a.target.tensor(), a.ignore_index, red, dtype)
}

/// Launches the per-row kernel (`grad`: the gradient kernel, writing `d`
/// scaled by `scale[r * scale_ld]`; else the loss kernel writing `loss`) on
/// `rows` rows of `v` logits `ld` apart.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_rows(
    x: &TensorArg,
    logits: usize,
    ld: i64,
    target: usize,
    rows: i64,
    v: i64,
    ignore: i64,
    out: Out,
    cx: &Cuda,
) -> Result<()> {
    if rows == 0 {
        return Ok(());
    }
    let dtype = x.dtype()?;
    let elem = dtype.size() as i64;
    // Row starts 16-byte aligned (pointer and stride): the pack kernels.
    let mut ptrs = vec![logits, if (ld * elem) % 16 == 0 { 0 } else { 8 }];
    if let Out::Grad { d, d_ld, .. } = out {
        ptrs.extend([d, if (d_ld * elem) % 16 == 0 { 0 } else { 8 }]);
    }
    let kernels = if matches!(out, Out::Loss(_)) { &KERNELS } else { &BACKWARD_KERNELS };
    let launch = RowLaunch::new(kernels, x, &ptrs, rows, v, Rows::BlockOrWarp)?;
    let (px, pt) = (logits as u64, target as u64);
    match out {
        Out::Loss(loss) => {
            let pl = loss as u64;
            let mut params =
                [cuda::arg(&px), cuda::arg(&ld), cuda::arg(&pt), cuda::arg(&pl), cuda::arg(&rows), cuda::arg(&v), cuda::arg(&ignore)];
            launch.launch(cx, &mut params)
        }
        Out::Grad { scale, scale_ld, d, d_ld, loss } => {
            let (ps, pd, pl) = (scale as u64, d as u64, loss as u64);
            let mut params = [
                cuda::arg(&px), cuda::arg(&ld), cuda::arg(&pt), cuda::arg(&ps), cuda::arg(&scale_ld), cuda::arg(&pd),
                cuda::arg(&d_ld), cuda::arg(&pl), cuda::arg(&rows), cuda::arg(&v), cuda::arg(&ignore),
            ];
            launch.launch(cx, &mut params)
        }
    }
}

/// What the row kernel writes.
#[derive(Clone, Copy)]
pub(crate) enum Out {
    /// Per-row losses (accumulation type) at this address.
    Loss(usize),
    /// The gradient, `d_ld` apart (may be the logits themselves), scaled by
    /// `scale[r * scale_ld]` (accumulation type); also the per-row losses at
    /// `loss` unless it is 0 (one read of the logits for both).
    Grad { scale: usize, scale_ld: i64, d: usize, d_ld: i64, loss: usize },
}

/// The logits with a unit last stride (a copy otherwise), and their row stride.
pub(crate) fn rows_view(logits: &TensorArg) -> Result<(Tensor, i64)> {
    let t = logits.tensor();
    let t = if t.stride()[1] == 1 || logits.sizes_real()?[1] <= 1 { t.shallow_clone() } else { t.f_contiguous()? };
    let ld = t.stride()[0];
    Ok((t, ld))
}

fn cuda(a: &CrossEntropy, cx: &Cuda) -> Result<Tensor> {
    let (dtype, red) = check(a)?;
    let s = a.logits.sizes_real()?;
    let (n, v) = (s[0], s[1]);
    let (x, ld) = rows_view(&a.logits)?;
    let target = a.target.tensor().f_contiguous()?;
    let rows = op::empty(&[n], dtype.acc().scalar_type(), Device::Cuda(cx.device))?;
    launch_rows(&a.logits, x.data_ptr() as usize, ld, target.data_ptr() as usize, n, v, a.ignore_index, Out::Loss(rows.data_ptr() as usize), cx)?;
    reduce_rows_cuda(&rows, &target, a.ignore_index, red, dtype, cx)
}

fn backward(ctx: &Backward<CrossEntropy>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let a = &ctx.args;
    let gx = cross_entropy_backward(&g, &a.logits.tensor(), &a.target.tensor(), a.ignore_index, a.reduction)?;
    Ok(vec![ctx.needs_grad(0).then_some(gx), None])
}

fn check_backward(a: &CrossEntropyBackward) -> Result<(DType, Reduction)> {
    let dtype = a.logits.dtype()?;
    a.logits.expect_dim(2)?;
    check_target(&a.target, a.logits.sizes().map(|s| s[0]))?;
    let red = Reduction::parse(a.logits.op(), a.reduction)?;
    a.logits.expect_same_dtype(&a.grad)?;
    let want = if red == Reduction::None { 1 } else { 0 };
    if a.grad.dim() != want {
        return Err(a.grad.error(format_args!("must be {want}-D for reduction {:?}, got a {}-D tensor", a.reduction, a.grad.dim())));
    }
    Ok((dtype, red))
}

fn backward_meta(a: &CrossEntropyBackward) -> Result<Tensor> {
    check_backward(a)?;
    op::empty_like(&a.logits)
}

/// The per-row gradient scale (in `acc`): `grad` (one per
/// row for "none"), divided by the number of counted rows for "mean".
pub(crate) fn row_scale(grad: &Tensor, target: &Tensor, ignore: i64, red: Reduction, n: i64, acc: Kind) -> Result<Tensor> {
    let g = grad.f_to_kind(acc)?;
    let g = match red {
        Reduction::Mean => g.f_div(&target.f_ne(ignore)?.f_sum(acc)?)?,
        _ => g,
    };
    Ok(g.f_expand([n], false)?.f_contiguous()?)
}

/// `(softmax(x) - onehot(t)) * scale` per row on the CPU, in `acc`; 0 in
/// ignored rows. The softmax as `exp(x - logsumexp(x))`, as the CUDA kernel
/// forms it (an infinite logit then gives NaN where it is, 0 elsewhere).
pub(crate) fn grad_rows_cpu(logits: &Tensor, target: &Tensor, scale: &Tensor, ignore: i64, acc: Kind) -> Result<Tensor> {
    let x = logits.f_to_kind(acc)?;
    let p = x.f_sub(&x.f_logsumexp(&[1i64][..], true)?)?.f_exp()?;
    let keep = target.f_ne(ignore)?;
    let t = target.f_where_scalarother(&keep, 0)?;
    let minus = Tensor::f_ones([t.size()[0], 1], (acc, p.device()))?.f_neg()?;
    let d = p.f_scatter_add(1, &t.f_unsqueeze(1)?, &minus)?;
    let s = scale.f_where_scalarother(&keep, 0.0)?.f_unsqueeze(1)?;
    Ok(d.f_mul(&s)?)
}

fn backward_cpu(a: &CrossEntropyBackward) -> Result<Tensor> {
    let (dtype, red) = check_backward(a)?;
    let s = a.logits.sizes_real()?;
    check_target_values(&a.target, s[1], a.ignore_index)?;
    let acc = dtype.acc().kind();
    let scale = row_scale(&a.grad.tensor(), &a.target.tensor(), a.ignore_index, red, s[0], acc)?;
    let d = grad_rows_cpu(&a.logits.tensor(), &a.target.tensor(), &scale, a.ignore_index, acc)?;
    Ok(d.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn backward_cuda(a: &CrossEntropyBackward, cx: &Cuda) -> Result<Tensor> {
    let (dtype, red) = check_backward(a)?;
    let s = a.logits.sizes_real()?;
    let (n, v) = (s[0], s[1]);
    let out = op::empty(&[n, v], dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (x, ld) = rows_view(&a.logits)?;
    let target = a.target.tensor().f_contiguous()?;
    let (scale, scale_ld) = row_scale_cuda(Some(&a.grad.tensor()), &target, a.ignore_index, red, n, dtype, cx)?;
    let grad = Out::Grad { scale: scale.data_ptr() as usize, scale_ld, d: out.data_ptr() as usize, d_ld: v, loss: 0 };
    launch_rows(&a.logits, x.data_ptr() as usize, ld, target.data_ptr() as usize, n, v, a.ignore_index, grad, cx)?;
    Ok(out)
}
