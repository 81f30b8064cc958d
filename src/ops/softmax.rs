//! `softmax(Tensor x, int dim) -> Tensor`, numerically safe (max subtracted,
//! -inf entries allowed); gradient op `softmax_backward`.

use crate::cuda;
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{reduce_kernels, row_kernels, ReduceKernels, RowKernels, RowLaunch, Rows};
use crate::types::{DType, Device, Error, Result};
use tch::Tensor;

op! {
    /// Softmax of `x` along `dim` (negative counts from the end), computed in
    /// float32 for half types with the maximum subtracted, so large
    /// magnitudes and -inf entries are safe (an all -inf slice gives NaN, as
    /// in torch.softmax). Differentiable; runs in float32 under
    /// CUDA autocast, as `torch.softmax` does.
    ///
    /// ```
    /// use tch::Tensor;
    /// let x = Tensor::from_slice(&[0.0f32, 0.0, f32::NEG_INFINITY]);
    /// let y = myns::softmax(&x, -1)?;
    /// assert_eq!(Vec::<f32>::try_from(&y)?, vec![0.5, 0.5, 0.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn softmax(x: Tensor, dim: int) -> Tensor;
    args: Softmax;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    saves_outputs: true;
    autocast: fp32_on_cuda;
}

op! {
    /// Gradient of `softmax(x, dim)` with respect to `x`, from the gradient
    /// and the softmax output.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let y = myns::softmax(&Tensor::randn([2, 5], (Kind::Float, tch::Device::Cpu)), 1)?;
    /// let gx = myns::softmax_backward(&y.ones_like(), &y, 1)?;
    /// assert!(gx.abs().max().double_value(&[]) < 1e-6); // d(sum softmax)/dx = 0
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn softmax_backward(grad: Tensor, output: Tensor, dim: int) -> Tensor;
    args: SoftmaxBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

pub(crate) const OPS: Ops = &[Softmax::spec, SoftmaxBackward::spec];

static KERNELS: ReduceKernels = reduce_kernels!(crate::kernels::SOFTMAX, "softmax", true);
static BACKWARD_KERNELS: RowKernels = row_kernels!(crate::kernels::SOFTMAX, "softmax_backward");

/// `dim` wrapped into `[0, ndim)` (a 0-d tensor counts as 1-d); an
/// `IndexError` when out of range, as aten's.
pub(crate) fn wrap_dim(x: &TensorArg, dim: i64) -> Result<i64> {
    let n = x.dim().max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::index(format!(
            "myns::{}: argument `dim` is {dim}, out of range for a {}-D tensor (expected -{n} <= dim < {n})",
            x.op(),
            x.dim()
        )));
    }
    Ok(if dim < 0 { dim + n } else { dim })
}

fn meta(a: &Softmax) -> Result<Tensor> {
    a.x.dtype()?;
    wrap_dim(&a.x, a.dim)?;
    op::empty_like(&a.x)
}

fn cpu(a: &Softmax) -> Result<Tensor> {
    let dtype = a.x.dtype()?;
    let dim = wrap_dim(&a.x, a.dim)?;
    let y = a.x.tensor().f_softmax(if a.x.dim() == 0 { 0 } else { dim }, dtype.acc().kind())?;
    Ok(y.f_to_kind(dtype.kind())?.f_contiguous()?)
}

/// Runs a row kernel over `dim` of `inputs`. When `dim` is last (the usual
/// case) the buffers are used in place; otherwise `dim` is moved last (with
/// a copy) and the result moved back into a contiguous tensor.
fn run_rows(inputs: &[&TensorArg], dim: i64, dtype: DType, cx: &Cuda, plan: impl Fn(&[usize], i64, i64) -> Result<RowLaunch>) -> Result<Tensor> {
    let x = inputs[0];
    let last = (x.dim() as i64).max(1) - 1;
    let moved = dim != last;
    let bufs: Vec<op::Contiguous> = inputs
        .iter()
        .map(|t| if moved { Ok(op::Contiguous::owned(t.tensor().f_movedim(&[dim][..], &[last][..])?.f_contiguous()?)) } else { t.contiguous() })
        .collect::<Result<_>>()?;
    let mut sizes = x.sizes_real()?.to_vec();
    if moved {
        let s = sizes.remove(dim as usize);
        sizes.push(s);
    }
    let out = op::empty(&sizes, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let h = sizes.last().copied().unwrap_or(1);
    let rows = if h == 0 { 0 } else { x.numel() / h };
    if rows > 0 {
        let mut ptrs: Vec<usize> = bufs.iter().map(|b| b.ptr).collect();
        ptrs.push(out.data_ptr() as usize);
        let launch = plan(&ptrs, rows, h)?;
        let ptrs: Vec<u64> = ptrs.iter().map(|&p| p as u64).collect();
        let mut params: Vec<*mut std::ffi::c_void> = ptrs.iter().map(cuda::arg).collect();
        params.push(cuda::arg(&rows));
        params.push(cuda::arg(&h));
        launch.launch(cx, &mut params)?;
    }
    if moved { Ok(out.f_movedim(&[last][..], &[dim][..])?.f_contiguous()?) } else { Ok(out) }
}

fn cuda(a: &Softmax, cx: &Cuda) -> Result<Tensor> {
    let dtype = a.x.dtype()?;
    let dim = wrap_dim(&a.x, a.dim)?;
    run_rows(&[&a.x], dim, dtype, cx, |p, rows, h| RowLaunch::reduce(&KERNELS, &a.x, p, rows, h))
}

fn backward(ctx: &Backward<Softmax>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    let y = ctx.output(0)?;
    Ok(vec![Some(softmax_backward(&g, &y, ctx.args.dim)?)])
}

fn check_backward(a: &SoftmaxBackward) -> Result<(DType, i64)> {
    let dtype = a.grad.dtype()?;
    a.grad.expect_same_dtype(&a.output)?;
    a.grad.expect_same_shape(&a.output)?;
    Ok((dtype, wrap_dim(&a.output, a.dim)?))
}

fn backward_meta(a: &SoftmaxBackward) -> Result<Tensor> {
    check_backward(a)?;
    op::empty_like(&a.output)
}

/// `y (g - sum(g y, dim))`.
fn backward_cpu(a: &SoftmaxBackward) -> Result<Tensor> {
    let (dtype, dim) = check_backward(a)?;
    let acc = dtype.acc().kind();
    let (g, y) = (a.grad.tensor().f_to_kind(acc)?, a.output.tensor().f_to_kind(acc)?);
    let dim = if a.output.dim() == 0 { None } else { Some(dim) };
    let dot = match dim {
        Some(d) => g.f_mul(&y)?.f_sum_dim_intlist(&[d][..], true, acc)?,
        None => g.f_mul(&y)?,
    };
    Ok(y.f_mul(&g.f_sub(&dot)?)?.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn backward_cuda(a: &SoftmaxBackward, cx: &Cuda) -> Result<Tensor> {
    let (dtype, dim) = check_backward(a)?;
    run_rows(&[&a.grad, &a.output], dim, dtype, cx, |p, rows, h| {
        RowLaunch::new(&BACKWARD_KERNELS, &a.grad, p, rows, h, Rows::BlockOrWarp)
    })
}
