//! `bmm(Tensor a, Tensor b) -> Tensor`: `[B, M, K] @ [B, K, N] -> [B, M, N]`,
//! on the GEMM engine with the batch as one more dimension of the grid.

use super::matmul::{check, cpu_product, cuda_product};
use crate::op::{op, Backward, Cuda};
use crate::ops::Ops;
use crate::types::Result;
use tch::Tensor;

op! {
    /// Batched matrix product: `a[i] @ b[i]` for a 3-D `[B, M, K]` tensor and
    /// a 3-D `[B, K, N]` tensor with the same dtype (float32, float64, float16
    /// or bfloat16) and device. Half types accumulate in float32; on CUDA,
    /// float32 uses TF32 tensor cores when
    /// `torch.backends.cuda.matmul.allow_tf32` is on. Inputs may be strided
    /// (e.g. transposed views). Returns a new contiguous `[B, M, N]` tensor.
    /// Differentiable; runs in the autocast dtype under `torch.autocast`.
    ///
    /// ```
    /// let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 1, 2]);
    /// let b = tch::Tensor::from_slice(&[1.0f32, 1.0, 2.0, 0.0]).view([2, 2, 1]);
    /// let c = myns::bmm(&a, &b)?;
    /// assert_eq!(c.size(), vec![2, 1, 1]);
    /// assert_eq!(Vec::<f32>::try_from(&c.view([-1]))?, vec![3.0, 6.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn bmm(a: Tensor, b: Tensor) -> Tensor;
    args: Bmm;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    autocast: lower_precision;
}

pub(crate) const OPS: Ops = &[Bmm::spec];

fn meta(a: &Bmm) -> Result<Tensor> {
    check(&a.a, &a.b, 3)?;
    // aten's meta bmm keeps symbolic sizes and returns a contiguous [B, M, N].
    Ok(a.a.tensor().f_bmm(&a.b.tensor())?)
}

fn cpu(a: &Bmm) -> Result<Tensor> {
    let dtype = check(&a.a, &a.b, 3)?;
    cpu_product(&a.a, &a.b, dtype)
}

fn cuda(a: &Bmm, cx: &Cuda) -> Result<Tensor> {
    let dtype = check(&a.a, &a.b, 3)?;
    cuda_product(&a.a, &a.b, dtype, cx)
}

fn backward(ctx: &Backward<Bmm>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (a, b) = (ctx.args.a.tensor(), ctx.args.b.tensor());
    // d(a @ b)/da = g @ b^T, d/db = a^T @ g, per batch: myns::bmm on
    // transposed views, so the backward stays a dispatcher op.
    let ga = if ctx.needs_grad(0) { Some(bmm(&g, &b.f_transpose(1, 2)?)?) } else { None };
    let gb = if ctx.needs_grad(1) { Some(bmm(&a.f_transpose(1, 2)?, &g)?) } else { None };
    Ok(vec![ga, gb])
}
