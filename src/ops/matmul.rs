//! `matmul(Tensor a, Tensor b) -> Tensor`: `[M, K] @ [K, N] -> [M, N]`, and
//! what `bmm` shares with it. Inputs may have any strides (transposed views
//! need no copy). On CUDA the GEMM engine (`crate::gemm`) runs it; on the
//! CPU, aten.

use crate::gemm::{self, Problem};
use crate::op::{self, op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::types::{DType, Device, Result};
use tch::Tensor;

op! {
    /// Matrix product `a @ b` of a 2-D `[M, K]` tensor and a 2-D `[K, N]`
    /// tensor with the same dtype (float32, float64, float16 or bfloat16) and
    /// device. Half types accumulate in float32; on CUDA, float32 uses TF32
    /// tensor cores when `torch.backends.cuda.matmul.allow_tf32` is on. Inputs
    /// may be strided (e.g. transposed views). Returns a new contiguous
    /// `[M, N]` tensor. Differentiable; under `torch.autocast` it runs in the
    /// autocast dtype, as `torch.matmul` does.
    ///
    /// ```
    /// let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 2]);
    /// let b = tch::Tensor::eye(2, (tch::Kind::Float, tch::Device::Cpu));
    /// let c = myns::matmul(&a, &b)?;
    /// assert_eq!(Vec::<f32>::try_from(&c.view([-1]))?, vec![1.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn matmul(a: Tensor, b: Tensor) -> Tensor;
    args: Matmul;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    autocast: lower_precision;
}

pub(crate) const OPS: Ops = &[Matmul::spec];

/// Checks `a @ b` of `rank`-D operands (2: matrices, 3: batches of them).
pub(super) fn check(a: &TensorArg, b: &TensorArg, rank: usize) -> Result<DType> {
    a.expect_dim(rank)?;
    b.expect_dim(rank)?;
    let dtype = a.dtype()?;
    a.expect_same_dtype(b)?;
    if let (Some(sa), Some(sb)) = (a.sizes(), b.sizes()) {
        if rank == 3 && sa[0] != sb[0] {
            return Err(b.error(format_args!(
                "has batch size {} but `a` has batch size {} (shapes {sa:?} @ {sb:?})",
                sb[0], sa[0]
            )));
        }
        if sa[rank - 1] != sb[rank - 2] {
            return Err(b.error(format_args!(
                "has {} rows but `a` has {} columns (shapes {sa:?} @ {sb:?})",
                sb[rank - 2],
                sa[rank - 1]
            )));
        }
    }
    Ok(dtype)
}

/// `a @ b` on the CPU through aten, in the accumulation type (float32 for
/// half types) and rounded once, contiguous.
pub(super) fn cpu_product(a: &TensorArg, b: &TensorArg, dtype: DType) -> Result<Tensor> {
    let acc = dtype.acc().kind();
    let (ta, tb) = (a.tensor().f_to_kind(acc)?, b.tensor().f_to_kind(acc)?);
    let prod = if a.dim() == 2 { ta.f_mm(&tb)? } else { ta.f_bmm(&tb)? };
    Ok(prod.f_to_kind(dtype.kind())?.f_contiguous()?)
}

/// `a @ b` on CUDA through the GEMM engine into a new contiguous
/// `[batch.., M, N]`; `[batch, M, K]` strides (batch stride 0 for matrices).
pub(super) fn cuda_product(a: &TensorArg, b: &TensorArg, dtype: DType, cx: &Cuda) -> Result<Tensor> {
    let (sa, sb) = (a.sizes_real()?, b.sizes_real()?);
    let (ta, tb) = (a.strides().unwrap_or(&[]), b.strides().unwrap_or(&[]));
    let batched = a.dim() == 3;
    let at = |s: &[i64], i: usize| if batched { s[i] } else if i == 0 { 0 } else { s[i - 1] };
    let (batch, m, k, n) = (if batched { sa[0] } else { 1 }, at(sa, 1), at(sa, 2), at(sb, 2));
    let shape: Vec<i64> = if batched { vec![batch, m, n] } else { vec![m, n] };
    let out = op::empty(&shape, dtype.scalar_type(), Device::Cuda(cx.device))?;
    let p = Problem {
        a: a.data_ptr(),
        b: b.data_ptr(),
        out: out.data_ptr() as usize,
        batch,
        m,
        n,
        k,
        sa: [at(ta, 0), at(ta, 1), at(ta, 2)],
        sb: [at(tb, 0), at(tb, 1), at(tb, 2)],
    };
    let tf32 = dtype == DType::F32 && op::allow_tf32()?;
    gemm::run_cuda(&p, dtype, tf32, cx.device, cx.stream).map_err(|e| e.context(format_args!("myns::{}", a.op())))?;
    Ok(out)
}

fn meta(a: &Matmul) -> Result<Tensor> {
    check(&a.a, &a.b, 2)?;
    // aten's meta mm keeps symbolic sizes and returns a contiguous [M, N].
    Ok(a.a.tensor().f_mm(&a.b.tensor())?)
}

fn cpu(a: &Matmul) -> Result<Tensor> {
    let dtype = check(&a.a, &a.b, 2)?;
    cpu_product(&a.a, &a.b, dtype)
}

fn cuda(a: &Matmul, cx: &Cuda) -> Result<Tensor> {
    let dtype = check(&a.a, &a.b, 2)?;
    cuda_product(&a.a, &a.b, dtype, cx)
}

fn backward(ctx: &Backward<Matmul>) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (a, b) = (ctx.args.a.tensor(), ctx.args.b.tensor());
    // d(a @ b)/da = g @ b^T, d/db = a^T @ g: myns::matmul again, so the
    // backward stays a dispatcher op (and is itself differentiable). The
    // transposes are views; the kernels read them in place.
    let ga = if ctx.needs_grad(0) { Some(matmul(&g, &b.f_tr()?)?) } else { None };
    let gb = if ctx.needs_grad(1) { Some(matmul(&a.f_tr()?, &g)?) } else { None };
    Ok(vec![ga, gb])
}
