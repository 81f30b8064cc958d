//! `myns::matmul(Tensor a, Tensor b) -> Tensor`: `[M, K] @ [K, N] -> [M, N]`.
//! Inputs may have any strides (transposed views need no copy). The CUDA
//! path is the GEMM engine in `crate::gemm`; the CPU path is aten's.

use crate::bridge::DeviceKind;
use crate::gemm::{self, Problem};
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::types::DType;
use crate::cpu;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "matmul",
    schema: "matmul(Tensor a, Tensor b) -> Tensor",
    doc: "Matrix product `a @ b` of a 2-D `[M, K]` tensor and a 2-D `[K, N]` tensor with the same \
          dtype (float32, float64, float16 or bfloat16) and device. Half types accumulate in float32; \
          on CUDA, float32 uses TF32 tensor cores when `torch.backends.cuda.matmul.allow_tf32` is on. \
          Inputs may be strided (e.g. transposed views). Returns a new contiguous `[M, N]` tensor.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

/// `a @ b` through the dispatcher (autograd included).
///
/// ```
/// let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 2]);
/// let b = tch::Tensor::eye(2, (tch::Kind::Float, tch::Device::Cpu));
/// let c = myns::matmul(&a, &b)?;
/// assert_eq!(Vec::<f32>::try_from(&c.view([-1]))?, vec![1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(a), Value::Tensor(b)])
}

fn check<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>)> {
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    a.expect_dim(2)?;
    b.expect_dim(2)?;
    a.dtype()?;
    a.expect_same_dtype_device(&b)?;
    if let (Some(sa), Some(sb)) = (a.sizes(), b.sizes()) {
        if sa[1] != sb[0] {
            return Err(b.error(format_args!(
                "has {} rows but `a` has {} columns (shapes {sa:?} @ {sb:?})",
                sb[0], sa[1]
            )));
        }
    }
    Ok((a, b))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let (a, b) = check(call)?;
    // aten's meta mm keeps symbolic sizes and returns a contiguous [M, N].
    Ok(vec![a.tensor().f_mm(&b.tensor())?])
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (a, b) = check(call)?;
    let dtype = a.dtype()?;
    let (sa, sb) = (a.sizes_real()?, b.sizes_real()?);
    let (m, k, n) = (sa[0], sa[1], sb[1]);
    let out = cpu::empty(&[m, n], dtype, &a)?;
    let (ta, tb) = (a.strides().unwrap_or(&[0, 0]), b.strides().unwrap_or(&[0, 0]));
    let p = Problem {
        a: a.data_ptr(),
        b: b.data_ptr(),
        out: out.data_ptr() as usize,
        batch: 1,
        m,
        n,
        k,
        sa: [0, ta[0], ta[1]],
        sb: [0, tb[0], tb[1]],
    };
    gemm(call, &a, &b, &out, dtype, backend, &p)?;
    Ok(vec![out])
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    // d(a @ b)/da = g @ b^T, d/db = a^T @ g: myns::matmul again, so the
    // backward stays a dispatcher op (and is itself differentiable). The
    // transposes are views; the kernels read them in place.
    let ga = if ctx.needs_grad(0) { Some(matmul(&g, &b.f_tr()?)?) } else { None };
    let gb = if ctx.needs_grad(1) { Some(matmul(&a.f_tr()?, &g)?) } else { None };
    Ok(vec![ga, gb])
}


/// Runs `p` (whose operands are the tensors `a` and `b`) on `backend`:
/// aten on the CPU (in the accumulation type, rounded once), the GEMM engine
/// on CUDA. Shared with `bmm`.
pub(crate) fn gemm(call: &Call, a: &TensorArg, b: &TensorArg, out: &Tensor, dtype: DType, backend: Backend, p: &Problem) -> Result<()> {
    if p.m == 0 || p.n == 0 || p.batch == 0 {
        return Ok(());
    }
    match backend {
        Backend::Cpu if a.device() == DeviceKind::Cpu => {
            let acc = dtype.acc().kind();
            let (ta, tb) = (a.tensor().f_to_kind(acc)?, b.tensor().f_to_kind(acc)?);
            let prod = if a.dim() == 2 { ta.f_mm(&tb)? } else { ta.f_bmm(&tb)? };
            let mut out = out.shallow_clone();
            out.f_copy_(&prod)?;
            Ok(())
        }
        Backend::Cuda { stream } if a.device() == DeviceKind::Cuda => {
            let tf32 = dtype == DType::F32 && crate::bridge::ffi::allow_tf32_matmul().map_err(|e| anyhow::anyhow!("{e}"))?;
            gemm::run_cuda(p, dtype, tf32, a.device_index().max(0) as usize, stream).map_err(|e| call.error(e))
        }
        _ => Err(a.unsupported_device()),
    }
}
