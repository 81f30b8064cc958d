//! `scale(Tensor x, Scalar alpha) -> Tensor` (differentiable) and the
//! in-place `scale_(Tensor(a!) x, Scalar alpha) -> ()`, as PyTorch's
//! `x * alpha` and `x *= alpha`.

use super::add::{grid_elementwise, INTS};
use crate::cuda::{self, elem_kernels, ElemKernels};
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::types::{Device, Error, Result, Scalar, ScalarType};
use tch::Tensor;

op! {
    /// Returns `x * alpha` as a new contiguous tensor, as PyTorch computes
    /// it: float types in float32 for half types; an integer tensor (int32,
    /// int64) times an integer stays integer (wrapping), times a float gives
    /// float32. Differentiable.
    ///
    /// ```
    /// let y = myns::scale(&tch::Tensor::from_slice(&[1.0f32, -2.0]), 3.0)?;
    /// assert_eq!(Vec::<f32>::try_from(&y)?, vec![3.0, -6.0]);
    /// let z = myns::scale(&tch::Tensor::from_slice(&[1i32, -2]), 3)?;
    /// assert_eq!(Vec::<i32>::try_from(&z)?, vec![3, -6]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn scale(x: Tensor, alpha: Scalar) -> Tensor;
    args: Scale;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
}

op! {
    /// Multiplies `x` by `alpha` in place, as `x *= alpha`: an integer tensor
    /// takes only an integer `alpha`. `x` must not overlap itself (an
    /// `expand()`ed view). Returns nothing.
    ///
    /// ```
    /// let mut x = tch::Tensor::from_slice(&[1.0f32, -2.0]);
    /// myns::scale_(&mut x, 0.5)?;
    /// assert_eq!(Vec::<f32>::try_from(&x)?, vec![0.5, -1.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn scale_(x: MutTensor, alpha: Scalar) -> ();
    args: ScaleInplace;
    cpu: cpu_inplace;
    cuda: cuda_inplace;
    meta: meta_inplace;
}

pub(crate) const OPS: Ops = &[Scale::spec, ScaleInplace::spec];

static KERNELS: ElemKernels = elem_kernels!(crate::kernels::SCALE, "scale", "");
/// Integer input, float32 output (an integer tensor times a float).
static TO_F32: [cuda::Kernel; 2] =
    [cuda::Kernel::new(&crate::kernels::SCALE, "scale_i32_f32"), cuda::Kernel::new(&crate::kernels::SCALE, "scale_i64_f32")];

/// The element type of `x * alpha` (PyTorch's promotion for a tensor and a
/// scalar) given `x`'s.
fn result_type(t: ScalarType, alpha: Scalar) -> ScalarType {
    if t.is_int() && !alpha.is_int() { ScalarType::Float } else { t }
}

fn meta(a: &Scale) -> Result<Tensor> {
    let t = a.x.elem_among(&INTS)?;
    let out = op::empty_like(&a.x)?;
    Ok(if result_type(t, a.alpha) != t { out.f_to_kind(ScalarType::Float.kind())? } else { out })
}

/// `x * alpha` through aten: float types in their accumulation type (aten
/// would round alpha to a half type first), integers as aten does.
fn aten_product(x: &TensorArg, t: ScalarType, alpha: Scalar) -> Result<Tensor> {
    Ok(match t.float() {
        Some(d) => x.tensor().f_to_kind(d.acc().kind())?.f_mul_scalar(alpha.tch())?.f_to_kind(t.kind())?,
        None => x.tensor().f_mul_scalar(alpha.tch())?,
    })
}

fn cpu(a: &Scale) -> Result<Tensor> {
    let t = a.x.elem_among(&INTS)?;
    Ok(aten_product(&a.x, t, a.alpha)?.f_contiguous()?)
}

/// `out = src * alpha` over `n` contiguous elements on CUDA (`out` may be `src`).
fn launch(x: &TensorArg, t: ScalarType, src: usize, dst: usize, alpha: Scalar, cx: &Cuda) -> Result<()> {
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    let (ps, po) = (src as u64, dst as u64);
    let vec = (ps % 16 == 0 && po % 16 == 0) as i32;
    let units = if vec != 0 { n / (16 / t.kind().elt_size_in_bytes() as i64) } else { n };
    let grid = (grid_elementwise(units), 1, 1);
    let (fa, ia) = (alpha.to_f64(), alpha.to_i64().unwrap_or(0));
    let int_alpha = t.is_int() && alpha.is_int();
    let f = if t.is_int() && !int_alpha {
        &TO_F32[(t == ScalarType::Long) as usize]
    } else {
        KERNELS.get(t).ok_or_else(|| x.error("has no CUDA kernel"))?
    };
    let f = f.function(cx.device)?;
    let mut params = [cuda::arg(&ps), cuda::arg(&po), cuda::arg(&n), if int_alpha { cuda::arg(&ia) } else { cuda::arg(&fa) }, cuda::arg(&vec)];
    cuda::launch(f, grid, (crate::kernel_params::EW_THREADS as u32, 1, 1), 0, cx.stream, &mut params)
}

fn cuda(a: &Scale, cx: &Cuda) -> Result<Tensor> {
    let t = a.x.elem_among(&INTS)?;
    let out = op::empty(a.x.sizes_real()?, result_type(t, a.alpha), Device::Cuda(cx.device))?;
    let c = a.x.contiguous()?;
    launch(&a.x, t, c.ptr, out.data_ptr() as usize, a.alpha, cx)?;
    Ok(out)
}

fn backward(ctx: &Backward<Scale>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    Ok(vec![Some(scale(&g, ctx.args.alpha)?)])
}

fn check_inplace(a: &ScaleInplace) -> Result<ScalarType> {
    let t = a.x.elem_among(&INTS)?;
    if result_type(t, a.alpha) != t {
        return Err(Error::runtime(format!(
            "myns::scale_: argument `alpha` is {} but `x` has dtype {}: the product is not an integer and cannot be written into `x` (as for `x *= {}`)",
            a.alpha,
            t.name(),
            a.alpha
        )));
    }
    a.x.expect_writable(&[])?;
    Ok(t)
}

fn meta_inplace(a: &ScaleInplace) -> Result<()> {
    check_inplace(a)?;
    Ok(())
}

fn cpu_inplace(a: &ScaleInplace) -> Result<()> {
    let t = check_inplace(a)?;
    a.x.tensor().f_copy_(&aten_product(&a.x, t, a.alpha)?)?;
    Ok(())
}

fn cuda_inplace(a: &ScaleInplace, cx: &Cuda) -> Result<()> {
    let t = check_inplace(a)?;
    let c = a.x.contiguous()?;
    // In place: the kernel reads and writes each element once.
    launch(&a.x, t, c.ptr, c.ptr, a.alpha, cx)?;
    c.write_back(&a.x)
}
