//! `silu_and_mul(Tensor x) -> Tensor` (SwiGLU): `x = [a, b]` split in half on
//! the last dimension, returns `silu(a) * b`; its gradient is the op
//! `silu_and_mul_backward`.

use crate::cuda;
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{self, row_kernels, RowKernels};
use crate::types::{DType, Device, Result};
use tch::Tensor;

op! {
    /// SwiGLU activation: splits `x` in half on the last dimension into `a`
    /// and `b` and returns `silu(a) * b` (last dimension halved), computed in
    /// float32 for half types. Differentiable.
    ///
    /// ```
    /// use tch::Tensor;
    /// let x = Tensor::from_slice(&[0.0f32, 1.0, 5.0, 7.0]).view([1, 4]);
    /// let y = myns::silu_and_mul(&x)?; // [silu(0) * 5, silu(1) * 7]
    /// assert_eq!(y.size(), vec![1, 2]);
    /// assert!((y.double_value(&[0, 1]) - 7.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-5);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn silu_and_mul(x: Tensor) -> Tensor;
    args: SiluAndMul;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
}

op! {
    /// Gradient of `silu_and_mul(x)` with respect to `x`, given the gradient
    /// of its output.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 8], (Kind::Float, tch::Device::Cpu));
    /// let gx = myns::silu_and_mul_backward(&Tensor::ones([3, 4], (Kind::Float, tch::Device::Cpu)), &x)?;
    /// assert_eq!(gx.size(), vec![3, 8]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn silu_and_mul_backward(grad: Tensor, x: Tensor) -> Tensor;
    args: SiluAndMulBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

op! {
    /// `silu_and_mul_backward(grad, x)` written over `x` (which must not
    /// overlap `grad`); returns nothing. Autograd runs it when the saved `x`
    /// is its alone (nothing else refers to it and the graph is not
    /// retained), so that the gradient takes the input's memory rather than
    /// new memory of the same size, as Liger-Kernel's SwiGLU does.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 8], (Kind::Float, tch::Device::Cpu));
    /// let g = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
    /// let expected = myns::silu_and_mul_backward(&g, &x)?;
    /// let mut gx = x.copy();
    /// myns::silu_and_mul_backward_(&mut gx, &g)?;
    /// assert!(gx.allclose(&expected, 1e-6, 1e-6, false));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn silu_and_mul_backward_(x: MutTensor, grad: Tensor) -> ();
    args: SiluAndMulBackwardInplace;
    cpu: backward_cpu_inplace;
    cuda: backward_cuda_inplace;
    meta: backward_meta_inplace;
}

pub(crate) const OPS: Ops = &[SiluAndMul::spec, SiluAndMulBackward::spec, SiluAndMulBackwardInplace::spec];

static KERNELS: RowKernels = row_kernels!(crate::kernels::SILU_AND_MUL, "silu_and_mul");
static BACKWARD_KERNELS: RowKernels = row_kernels!(crate::kernels::SILU_AND_MUL, "silu_and_mul_backward");

/// Checks a gated input `[..., 2d]` (shared with `gelu_and_mul`).
pub(crate) fn check_gated(x: &TensorArg) -> Result<DType> {
    let dtype = x.dtype()?;
    if x.dim() == 0 {
        return Err(x.error("must have at least one dimension"));
    }
    if let Some(s) = x.sizes() {
        if s[s.len() - 1] % 2 != 0 {
            return Err(x.error(format_args!("must have an even last dimension, got shape {s:?}")));
        }
    }
    Ok(dtype)
}

/// Output of a gated op: `x` with its last dimension halved (for the Meta
/// kernel: keeps symbolic sizes).
pub(crate) fn halved(x: &TensorArg) -> Result<Tensor> {
    let t = x.tensor();
    let half = match x.sizes() {
        Some(s) => t.f_narrow(-1, 0, s[s.len() - 1] / 2)?,
        None => t.f_chunk(2, -1)?.swap_remove(0), // symbolic sizes: aten keeps them
    };
    Ok(half.f_contiguous()?.f_empty_like()?)
}

/// Checks a gated op's gradient `grad` against its input `x`.
pub(crate) fn check_gated_grad(g: &TensorArg, x: &TensorArg) -> Result<DType> {
    let dtype = check_gated(x)?;
    x.expect_same_dtype(g)?;
    if let (Some(sg), Some(sx)) = (g.sizes(), x.sizes()) {
        let mut expect = sx.to_vec();
        let last = expect.len() - 1;
        expect[last] /= 2;
        if sg != expect.as_slice() {
            return Err(g.error(format_args!("has shape {sg:?} but the op's output has shape {expect:?}")));
        }
    }
    Ok(dtype)
}

/// Checks a gated op's gradient `grad` to be written over its input `x`.
pub(crate) fn check_gated_grad_inplace(g: &TensorArg, x: &TensorArg) -> Result<DType> {
    let dtype = check_gated_grad(g, x)?;
    x.expect_writable(&[g])?;
    Ok(dtype)
}

/// A gated op's backward kernel writing the gradient over `x` (CUDA): each
/// thread reads a pair (a, b) before it writes the pair's gradient there.
pub(crate) fn launch_gated_backward_inplace(kernels: &RowKernels, g: &TensorArg, x: &TensorArg, extra: &[*mut std::ffi::c_void], cx: &Cuda) -> Result<()> {
    let (rows, h) = rowwise::rows_of(x)?;
    if rows == 0 || h == 0 {
        return Ok(());
    }
    let (cg, c) = (g.contiguous()?, x.contiguous()?);
    launch_gated(kernels, x, &[cg.ptr, c.ptr, c.ptr], extra, rows, h / 2, cx)?;
    c.write_back(x)
}

/// The gradient of a gated op for autograd: written over the saved input
/// when autograd owns it (`inplace`), else new.
pub(crate) fn gated_grad(owned: bool, x: &Tensor, inplace: impl FnOnce(&mut Tensor) -> Result<()>, new: impl FnOnce() -> Result<Tensor>) -> Result<Tensor> {
    if !owned {
        return new();
    }
    // A plain alias: the input's history stays off the gradient.
    let mut gx = x.f_detach()?;
    inplace(&mut gx)?;
    Ok(gx)
}

/// Runs a gated row kernel over rows of `d` output columns (`ptrs`: the
/// kernel's buffers, contiguous).
pub(crate) fn launch_gated(kernels: &RowKernels, x: &TensorArg, ptrs: &[usize], extra: &[*mut std::ffi::c_void], rows: i64, d: i64, cx: &Cuda) -> Result<()> {
    let dtype = x.dtype()?;
    let vec = rowwise::can_vectorize(dtype, d, ptrs);
    let f = kernels.pick(dtype, vec).function(cx.device)?;
    let units = if vec { d / rowwise::pack(dtype) } else { d };
    // 256 threads: x across a row's packs, y across rows when rows are short.
    let bx = ((units + 31) / 32 * 32).min(256);
    let by = 256 / bx;
    let grid_x = (units + bx - 1) / bx;
    let grid_y = ((rows + by - 1) / by).min(65_535);
    let ptrs: Vec<u64> = ptrs.iter().map(|&p| p as u64).collect();
    let mut params: Vec<*mut std::ffi::c_void> = ptrs.iter().map(cuda::arg).collect();
    params.push(cuda::arg(&rows));
    params.push(cuda::arg(&d));
    params.extend_from_slice(extra);
    cuda::launch(f, (grid_x as u32, grid_y as u32, 1), (bx as u32, by as u32, 1), 0, cx.stream, &mut params)
}

fn meta(a: &SiluAndMul) -> Result<Tensor> {
    check_gated(&a.x)?;
    halved(&a.x)
}

fn cpu(a: &SiluAndMul) -> Result<Tensor> {
    let dtype = check_gated(&a.x)?;
    let x = a.x.tensor().f_to_kind(dtype.acc().kind())?;
    let ab = x.f_chunk(2, -1)?;
    Ok(ab[0].f_silu()?.f_mul(&ab[1])?.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn cuda(a: &SiluAndMul, cx: &Cuda) -> Result<Tensor> {
    let dtype = check_gated(&a.x)?;
    let mut sizes = a.x.sizes_real()?.to_vec();
    let (rows, h) = rowwise::rows_of(&a.x)?;
    let d = h / 2;
    if let Some(last) = sizes.last_mut() {
        *last = d;
    }
    let out = op::empty(&sizes, dtype.scalar_type(), Device::Cuda(cx.device))?;
    if rows == 0 || d == 0 {
        return Ok(out);
    }
    let c = a.x.contiguous()?;
    launch_gated(&KERNELS, &a.x, &[c.ptr, out.data_ptr() as usize], &[], rows, d, cx)?;
    Ok(out)
}

fn backward(ctx: &Backward<SiluAndMul>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    let x = ctx.args.x.tensor();
    let gx = gated_grad(ctx.owns_input(0), &x, |gx| silu_and_mul_backward_(gx, &g), || silu_and_mul_backward(&g, &x))?;
    Ok(vec![Some(gx)])
}

fn backward_meta(a: &SiluAndMulBackward) -> Result<Tensor> {
    check_gated_grad(&a.grad, &a.x)?;
    op::empty_like(&a.x)
}

/// With s = sigmoid(a): d/da = g b s (1 + a (1 - s)), d/db = g a s.
fn backward_cpu(a: &SiluAndMulBackward) -> Result<Tensor> {
    let dtype = check_gated_grad(&a.grad, &a.x)?;
    let acc = dtype.acc().kind();
    let (x, g) = (a.x.tensor().f_to_kind(acc)?, a.grad.tensor().f_to_kind(acc)?);
    let ab = x.f_chunk(2, -1)?;
    let s = ab[0].f_sigmoid()?;
    let one_minus = s.f_neg()?.f_add_scalar(1.0)?;
    let ga = g.f_mul(&ab[1])?.f_mul(&s)?.f_mul(&ab[0].f_mul(&one_minus)?.f_add_scalar(1.0)?)?;
    let gb = g.f_mul(&ab[0])?.f_mul(&s)?;
    Ok(Tensor::f_cat(&[ga, gb], -1)?.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn backward_cuda(a: &SiluAndMulBackward, cx: &Cuda) -> Result<Tensor> {
    let dtype = check_gated_grad(&a.grad, &a.x)?;
    let gx = op::empty(a.x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (rows, h) = rowwise::rows_of(&a.x)?;
    let d = h / 2;
    if rows == 0 || d == 0 {
        return Ok(gx);
    }
    let (cg, c) = (a.grad.contiguous()?, a.x.contiguous()?);
    launch_gated(&BACKWARD_KERNELS, &a.x, &[cg.ptr, c.ptr, gx.data_ptr() as usize], &[], rows, d, cx)?;
    Ok(gx)
}

fn backward_meta_inplace(a: &SiluAndMulBackwardInplace) -> Result<()> {
    check_gated_grad_inplace(&a.grad, &a.x)?;
    Ok(())
}

fn backward_cpu_inplace(a: &SiluAndMulBackwardInplace) -> Result<()> {
    check_gated_grad_inplace(&a.grad, &a.x)?;
    let gx = silu_and_mul_backward(&a.grad.tensor(), &a.x.tensor())?;
    a.x.tensor().f_copy_(&gx)?;
    Ok(())
}

fn backward_cuda_inplace(a: &SiluAndMulBackwardInplace, cx: &Cuda) -> Result<()> {
    check_gated_grad_inplace(&a.grad, &a.x)?;
    launch_gated_backward_inplace(&BACKWARD_KERNELS, &a.grad, &a.x, &[], cx)
}
