//! `gelu_and_mul(Tensor x, str approximate="none") -> Tensor` (GeGLU): `x =
//! [a, b]` split in half on the last dimension, returns `gelu(a) * b`; its
//! gradient is the op `gelu_and_mul_backward`.

use super::silu_and_mul::{check_gated, check_gated_grad, check_gated_grad_inplace, gated_grad, halved, launch_gated, launch_gated_backward_inplace};
use crate::cuda;
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::rowwise::{self, row_kernels, RowKernels};
use crate::types::{DType, Device, Error, Result};
use tch::Tensor;

op! {
    /// GeGLU activation: splits `x` in half on the last dimension into `a`
    /// and `b` and returns `gelu(a) * b` (last dimension halved), with `gelu`
    /// exact (`approximate="none"`, through erf) or tanh-approximated
    /// (`"tanh"`), as `torch.nn.functional.gelu`; computed in float32 for half
    /// types. Differentiable.
    ///
    /// ```
    /// use tch::Tensor;
    /// let x = Tensor::from_slice(&[1.0f32, 2.0]).view([1, 2]);
    /// let y = myns::gelu_and_mul(&x, "none")?; // gelu(1) * 2
    /// assert!((y.double_value(&[0, 0]) - 2.0 * 0.8413447460685429).abs() < 1e-5);
    /// let t = myns::gelu_and_mul(&x, "tanh")?;
    /// assert!((t.double_value(&[0, 0]) - 2.0 * 0.8411919906082768).abs() < 1e-5);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn gelu_and_mul(x: Tensor, approximate: str = "none") -> Tensor;
    args: GeluAndMul;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
}

op! {
    /// Gradient of `gelu_and_mul(x, approximate)` with respect to `x`, given
    /// the gradient of its output.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 8], (Kind::Float, tch::Device::Cpu));
    /// let g = Tensor::ones([3, 4], (Kind::Float, tch::Device::Cpu));
    /// assert_eq!(myns::gelu_and_mul_backward(&g, &x, "tanh")?.size(), vec![3, 8]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn gelu_and_mul_backward(grad: Tensor, x: Tensor, approximate: str = "none") -> Tensor;
    args: GeluAndMulBackward;
    cpu: backward_cpu;
    cuda: backward_cuda;
    meta: backward_meta;
}

op! {
    /// `gelu_and_mul_backward(grad, x, approximate)` written over `x` (which
    /// must not overlap `grad`); returns nothing. Autograd runs it when the
    /// saved `x` is its alone (nothing else refers to it and the graph is not
    /// retained), so that the gradient takes the input's memory rather than
    /// new memory of the same size.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let x = Tensor::randn([3, 8], (Kind::Float, tch::Device::Cpu));
    /// let g = Tensor::randn([3, 4], (Kind::Float, tch::Device::Cpu));
    /// let expected = myns::gelu_and_mul_backward(&g, &x, "tanh")?;
    /// let mut gx = x.copy();
    /// myns::gelu_and_mul_backward_(&mut gx, &g, "tanh")?;
    /// assert!(gx.allclose(&expected, 1e-6, 1e-6, false));
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn gelu_and_mul_backward_(x: MutTensor, grad: Tensor, approximate: str = "none") -> ();
    args: GeluAndMulBackwardInplace;
    cpu: backward_cpu_inplace;
    cuda: backward_cuda_inplace;
    meta: backward_meta_inplace;
}

pub(crate) const OPS: Ops = &[GeluAndMul::spec, GeluAndMulBackward::spec, GeluAndMulBackwardInplace::spec];

static KERNELS: RowKernels = row_kernels!(crate::kernels::GELU_AND_MUL, "gelu_and_mul");
static BACKWARD_KERNELS: RowKernels = row_kernels!(crate::kernels::GELU_AND_MUL, "gelu_and_mul_backward");

/// `approximate`: `"none"` or `"tanh"` (a `ValueError` otherwise); whether tanh.
fn tanh_form(x: &TensorArg, approximate: &str) -> Result<bool> {
    match approximate {
        "none" => Ok(false),
        "tanh" => Ok(true),
        other => Err(Error::value(format!(
            "myns::{}: argument `approximate` must be \"none\" or \"tanh\", got {other:?}",
            x.op()
        ))),
    }
}

fn meta(a: &GeluAndMul) -> Result<Tensor> {
    check_gated(&a.x)?;
    tanh_form(&a.x, a.approximate)?;
    halved(&a.x)
}

fn cpu(a: &GeluAndMul) -> Result<Tensor> {
    let dtype = check_gated(&a.x)?;
    tanh_form(&a.x, a.approximate)?;
    let ab = a.x.tensor().f_to_kind(dtype.acc().kind())?.f_chunk(2, -1)?;
    Ok(ab[0].f_gelu(a.approximate)?.f_mul(&ab[1])?.f_to_kind(dtype.kind())?.f_contiguous()?)
}

/// Output shape: `x`'s with the last dimension halved; rows and `d`.
fn out_shape(x: &TensorArg) -> Result<(Vec<i64>, i64, i64)> {
    let mut sizes = x.sizes_real()?.to_vec();
    let (rows, h) = rowwise::rows_of(x)?;
    if let Some(last) = sizes.last_mut() {
        *last = h / 2;
    }
    Ok((sizes, rows, h / 2))
}

fn cuda(a: &GeluAndMul, cx: &Cuda) -> Result<Tensor> {
    let dtype = check_gated(&a.x)?;
    let tanh = tanh_form(&a.x, a.approximate)? as i32;
    let (sizes, rows, d) = out_shape(&a.x)?;
    let out = op::empty(&sizes, dtype.scalar_type(), Device::Cuda(cx.device))?;
    if rows == 0 || d == 0 {
        return Ok(out);
    }
    let c = a.x.contiguous()?;
    launch_gated(&KERNELS, &a.x, &[c.ptr, out.data_ptr() as usize], &[cuda::arg(&tanh)], rows, d, cx)?;
    Ok(out)
}

fn backward(ctx: &Backward<GeluAndMul>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    let (x, approximate) = (ctx.args.x.tensor(), ctx.args.approximate);
    let gx = gated_grad(
        ctx.owns_input(0),
        &x,
        |gx| gelu_and_mul_backward_(gx, &g, approximate),
        || gelu_and_mul_backward(&g, &x, approximate),
    )?;
    Ok(vec![Some(gx)])
}

fn check_backward(a: &GeluAndMulBackward) -> Result<(DType, bool)> {
    let dtype = check_gated_grad(&a.grad, &a.x)?;
    Ok((dtype, tanh_form(&a.x, a.approximate)?))
}

fn backward_meta(a: &GeluAndMulBackward) -> Result<Tensor> {
    check_backward(a)?;
    op::empty_like(&a.x)
}

/// d/da = g b gelu'(a) (aten's gelu_backward), d/db = g gelu(a).
fn backward_cpu(a: &GeluAndMulBackward) -> Result<Tensor> {
    let (dtype, _) = check_backward(a)?;
    let acc = dtype.acc().kind();
    let ab = a.x.tensor().f_to_kind(acc)?.f_chunk(2, -1)?;
    let g = a.grad.tensor().f_to_kind(acc)?;
    let ga = ab[0].f_gelu_backward(&g.f_mul(&ab[1])?, a.approximate)?;
    let gb = g.f_mul(&ab[0].f_gelu(a.approximate)?)?;
    Ok(Tensor::f_cat(&[ga, gb], -1)?.f_to_kind(dtype.kind())?.f_contiguous()?)
}

fn backward_cuda(a: &GeluAndMulBackward, cx: &Cuda) -> Result<Tensor> {
    let (dtype, tanh) = check_backward(a)?;
    let tanh = tanh as i32;
    let gx = op::empty(a.x.sizes_real()?, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let (_, rows, d) = out_shape(&a.x)?;
    if rows == 0 || d == 0 {
        return Ok(gx);
    }
    let (cg, c) = (a.grad.contiguous()?, a.x.contiguous()?);
    launch_gated(&BACKWARD_KERNELS, &a.x, &[cg.ptr, c.ptr, gx.data_ptr() as usize], &[cuda::arg(&tanh)], rows, d, cx)?;
    Ok(gx)
}

fn check_backward_inplace(a: &GeluAndMulBackwardInplace) -> Result<bool> {
    check_gated_grad_inplace(&a.grad, &a.x)?;
    tanh_form(&a.x, a.approximate)
}

fn backward_meta_inplace(a: &GeluAndMulBackwardInplace) -> Result<()> {
    check_backward_inplace(a)?;
    Ok(())
}

fn backward_cpu_inplace(a: &GeluAndMulBackwardInplace) -> Result<()> {
    check_backward_inplace(a)?;
    let gx = gelu_and_mul_backward(&a.grad.tensor(), &a.x.tensor(), a.approximate)?;
    a.x.tensor().f_copy_(&gx)?;
    Ok(())
}

fn backward_cuda_inplace(a: &GeluAndMulBackwardInplace, cx: &Cuda) -> Result<()> {
    let tanh = check_backward_inplace(a)? as i32;
    launch_gated_backward_inplace(&BACKWARD_KERNELS, &a.grad, &a.x, &[cuda::arg(&tanh)], cx)
}
