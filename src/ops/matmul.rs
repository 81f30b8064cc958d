//! `myns::matmul(Tensor a, Tensor b) -> Tensor`: `[M, K] @ [K, N] -> [M, N]`.
//! Inputs may have any strides (transposed views need no copy).

use crate::bridge::DeviceKind;
use crate::cpu::Elem;
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::{cpu, cuda};
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "matmul",
    schema: "matmul(Tensor a, Tensor b) -> Tensor",
    doc: "Matrix product `a @ b` of a 2-D `[M, K]` tensor and a 2-D `[K, N]` tensor with the same \
          dtype (float32, float64, float16 or bfloat16) and device. Half types accumulate in float32. \
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

static KERNELS: cuda::DTypeKernels = crate::dtype_kernels!(crate::kernels::MATMUL, "matmul");
const TILE: i64 = 16;

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
    if m == 0 || n == 0 {
        return Ok(vec![out]);
    }
    let (ta, tb) = (a.strides().unwrap_or(&[0, 0]), b.strides().unwrap_or(&[0, 0]));
    let p = Problem { a: a.data_ptr(), b: b.data_ptr(), out: out.data_ptr() as usize, m, n, k, sa: [ta[0], ta[1]], sb: [tb[0], tb[1]] };
    match backend {
        Backend::Cpu if a.device() == DeviceKind::Cpu => crate::with_elem!(dtype, T => matmul_cpu::<T>(&p)),
        Backend::Cuda { stream } if a.device() == DeviceKind::Cuda => {
            let f = KERNELS.get(dtype).function(a.device_index() as usize)?;
            let (pa, pb, po) = (p.a as u64, p.b as u64, p.out as u64);
            let mut params = [
                cuda::arg(&pa), cuda::arg(&pb), cuda::arg(&po),
                cuda::arg(&p.m), cuda::arg(&p.n), cuda::arg(&p.k),
                cuda::arg(&p.sa[0]), cuda::arg(&p.sa[1]), cuda::arg(&p.sb[0]), cuda::arg(&p.sb[1]),
            ];
            let grid_x = (n + TILE - 1) / TILE;
            if grid_x > i32::MAX as i64 {
                return Err(b.error(format_args!("has too many columns ({n}) for one launch")));
            }
            let grid_y = ((m + TILE - 1) / TILE).min(65_535);
            cuda::launch(f, (grid_x as u32, grid_y as u32, 1), (TILE as u32, TILE as u32, 1), 0, stream, &mut params)
                .map_err(|e| call.error(e))?;
        }
        _ => return Err(a.error(format_args!("is on {}, which myns does not support", a.device_string()))),
    }
    Ok(vec![out])
}

/// A matmul with element strides for a and b; out is contiguous.
struct Problem {
    a: usize,
    b: usize,
    out: usize,
    m: i64,
    n: i64,
    k: i64,
    sa: [i64; 2],
    sb: [i64; 2],
}

fn matmul_cpu<T: Elem>(p: &Problem) {
    let (m, n, k) = (p.m as usize, p.n as usize, p.k as usize);
    let (a, b) = (p.a as *const T, p.b as *const T);
    // SAFETY: out is a fresh contiguous [m, n] tensor.
    let out = unsafe { std::slice::from_raw_parts_mut(p.out as *mut T, m * n) };
    let mut acc = vec![T::Acc::default(); n];
    for i in 0..m as isize {
        acc.iter_mut().for_each(|x| *x = T::Acc::default());
        for kk in 0..k as isize {
            // SAFETY: every index below is within the strided views the
            // dispatcher handed us ([m, k] for a, [k, n] for b).
            let aik = unsafe { *a.offset(i * p.sa[0] as isize + kk * p.sa[1] as isize) }.to_acc();
            let brow = unsafe { b.offset(kk * p.sb[0] as isize) };
            for (j, x) in acc.iter_mut().enumerate() {
                let bkj = unsafe { *brow.offset(j as isize * p.sb[1] as isize) }.to_acc();
                *x = *x + aik * bkj;
            }
        }
        for (o, &x) in out[i as usize * n..(i as usize + 1) * n].iter_mut().zip(&acc) {
            *o = T::from_acc(x);
        }
    }
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    // d(a @ b)/da = g @ b^T, d/db = a^T @ g: myns::matmul again, so the
    // backward stays a dispatcher op (and is itself differentiable).
    let ga = if ctx.needs_grad(0) { Some(matmul(&g, &b.f_tr()?)?) } else { None };
    let gb = if ctx.needs_grad(1) { Some(matmul(&a.f_tr()?, &g)?) } else { None };
    Ok(vec![ga, gb])
}
