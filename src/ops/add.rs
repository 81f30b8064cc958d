//! `add(Tensor a, Tensor b) -> Tensor`: elementwise sum.

use crate::cuda::{self, elem_kernels, ElemKernels};
use crate::op::{self, op, Backward, Cuda};
use crate::ops::Ops;
use crate::types::{Device, Result, ScalarType};
use tch::Tensor;

op! {
    /// Elementwise sum `a + b` of two tensors with the same shape, dtype and
    /// device (float32, float64, float16, bfloat16, int32 or int64; half types
    /// add in float32, integers wrap as in `torch.add`). Returns a new
    /// contiguous tensor. Differentiable.
    ///
    /// ```
    /// let a = tch::Tensor::from_slice(&[1.0f32, 2.0]);
    /// let b = tch::Tensor::from_slice(&[10.0f32, 20.0]);
    /// let c = myns::add(&a, &b)?;
    /// assert_eq!(Vec::<f32>::try_from(&c)?, vec![11.0, 22.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn add(a: Tensor, b: Tensor) -> Tensor;
    args: Add;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
}

pub(crate) const OPS: Ops = &[Add::spec];

/// Integer types `add` (and `scale`) take besides the float types.
pub(crate) const INTS: [ScalarType; 2] = [ScalarType::Int, ScalarType::Long];

/// Grid of the streaming elementwise kernels (kernels/elementwise.cuh:
/// `EW_THREADS` threads, `EW_UNROLL` packs each) for `units` packs or
/// elements; capped, as their loop strides over the rest.
pub(crate) fn grid_elementwise(units: i64) -> u32 {
    use crate::kernel_params::{EW_THREADS, EW_UNROLL};
    (units.max(1) as u64).div_ceil((EW_THREADS * EW_UNROLL) as u64).min(1 << 20) as u32
}

static KERNELS: ElemKernels = elem_kernels!(crate::kernels::ADD, "add", "");

fn check(a: &Add) -> Result<ScalarType> {
    let t = a.a.elem_among(&INTS)?;
    a.a.expect_same_dtype(&a.b)?;
    if a.a.dim() != a.b.dim() {
        return Err(a.b.error(format_args!("has {} dimensions but `a` has {}", a.b.dim(), a.a.dim())));
    }
    a.a.expect_same_shape(&a.b)?;
    Ok(t)
}

fn meta(a: &Add) -> Result<Tensor> {
    check(a)?;
    op::empty_like(&a.a)
}

fn cpu(a: &Add) -> Result<Tensor> {
    check(a)?;
    Ok(a.a.tensor().f_add(&a.b.tensor())?.f_contiguous()?)
}

fn cuda(a: &Add, cx: &Cuda) -> Result<Tensor> {
    let t = check(a)?;
    let out = op::empty(a.a.sizes_real()?, t, Device::Cuda(cx.device))?;
    let n = a.a.numel();
    if n == 0 {
        return Ok(out);
    }
    let (ca, cb) = (a.a.contiguous()?, a.b.contiguous()?);
    let (pa, pb, po) = (ca.ptr as u64, cb.ptr as u64, out.data_ptr() as u64);
    let vec = [pa, pb, po].iter().all(|p| p % 16 == 0) as i32;
    let units = if vec != 0 { n / (16 / t.kind().elt_size_in_bytes() as i64) } else { n };
    let f = KERNELS.get(t).ok_or_else(|| a.a.error("has no CUDA kernel"))?.function(cx.device)?;
    let mut params = [cuda::arg(&pa), cuda::arg(&pb), cuda::arg(&po), cuda::arg(&n), cuda::arg(&vec)];
    cuda::launch(f, (grid_elementwise(units), 1, 1), (crate::kernel_params::EW_THREADS as u32, 1, 1), 0, cx.stream, &mut params)?;
    Ok(out)
}

fn backward(ctx: &Backward<Add>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    Ok(vec![ctx.needs_grad(0).then(|| g.shallow_clone()), ctx.needs_grad(1).then(|| g.shallow_clone())])
}
