//! `myns::bmm(Tensor a, Tensor b) -> Tensor`: `[B, M, K] @ [B, K, N] -> [B, M, N]`.
//! Inputs may have any strides (transposed views need no copy); the CUDA path
//! runs the matmul kernels with the batch on the grid's z dimension.

use crate::gemm::Problem;
use crate::ops::matmul::gemm;
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::cpu;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "bmm",
    schema: "bmm(Tensor a, Tensor b) -> Tensor",
    doc: "Batched matrix product: `a[i] @ b[i]` for a 3-D `[B, M, K]` tensor and a 3-D `[B, K, N]` \
          tensor with the same dtype (float32, float64, float16 or bfloat16) and device. Half types \
          accumulate in float32; on CUDA, float32 uses TF32 tensor cores when \
          `torch.backends.cuda.matmul.allow_tf32` is on. Inputs may be strided (e.g. transposed \
          views). Returns a new contiguous `[B, M, N]` tensor.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

/// `a[i] @ b[i]` for every batch index `i`, through the dispatcher (autograd included).
///
/// ```
/// let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 1, 2]);
/// let b = tch::Tensor::from_slice(&[1.0f32, 1.0, 2.0, 0.0]).view([2, 2, 1]);
/// let c = myns::bmm(&a, &b)?;
/// assert_eq!(c.size(), vec![2, 1, 1]);
/// assert_eq!(Vec::<f32>::try_from(&c.view([-1]))?, vec![3.0, 6.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(a), Value::Tensor(b)])
}

fn check<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>)> {
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    a.expect_dim(3)?;
    b.expect_dim(3)?;
    a.dtype()?;
    a.expect_same_dtype_device(&b)?;
    if let (Some(sa), Some(sb)) = (a.sizes(), b.sizes()) {
        if sa[0] != sb[0] {
            return Err(b.error(format_args!(
                "has batch size {} but `a` has batch size {} (shapes {sa:?} @ {sb:?})",
                sb[0], sa[0]
            )));
        }
        if sa[2] != sb[1] {
            return Err(b.error(format_args!(
                "has {} rows but `a` has {} columns (shapes {sa:?} @ {sb:?})",
                sb[1], sa[2]
            )));
        }
    }
    Ok((a, b))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let (a, b) = check(call)?;
    // aten's meta bmm keeps symbolic sizes and returns a contiguous [B, M, N].
    Ok(vec![a.tensor().f_bmm(&b.tensor())?])
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (a, b) = check(call)?;
    let dtype = a.dtype()?;
    let (sa, sb) = (a.sizes_real()?, b.sizes_real()?);
    let (batch, m, k, n) = (sa[0], sa[1], sa[2], sb[2]);
    let out = cpu::empty(&[batch, m, n], dtype, &a)?;
    let (ta, tb) = (a.strides().unwrap_or(&[0, 0, 0]), b.strides().unwrap_or(&[0, 0, 0]));
    let p = Problem {
        a: a.data_ptr(),
        b: b.data_ptr(),
        out: out.data_ptr() as usize,
        batch,
        m,
        n,
        k,
        sa: [ta[0], ta[1], ta[2]],
        sb: [tb[0], tb[1], tb[2]],
    };
    gemm(call, &a, &b, &out, dtype, backend, &p)?;
    Ok(vec![out])
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    // d(a @ b)/da = g @ b^T, d/db = a^T @ g, per batch: myns::bmm on
    // transposed views, so the backward stays a dispatcher op.
    let ga = if ctx.needs_grad(0) { Some(bmm(&g, &b.f_transpose(1, 2)?)?) } else { None };
    let gb = if ctx.needs_grad(1) { Some(bmm(&a.f_transpose(1, 2)?, &g)?) } else { None };
    Ok(vec![ga, gb])
}
