//! `myns::scale(Tensor x, float alpha) -> Tensor` (differentiable) and the
//! in-place `myns::scale_(Tensor(a!) x, float alpha) -> ()`.

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem, Real};
use crate::registry::{dispatch, dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::rowwise::{self, RowKernels};
use crate::cuda;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "scale",
    schema: "scale(Tensor x, float alpha) -> Tensor",
    doc: "Returns `x * alpha` (computed in float32 for half types) as a new contiguous tensor. Differentiable.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

pub static INPLACE_SPEC: OpSpec = OpSpec {
    name: "scale_",
    schema: "scale_(Tensor(a!) x, float alpha) -> ()",
    doc: "Multiplies `x` by `alpha` in place. Returns nothing.",
    forward: forward_inplace,
    meta: meta_inplace,
    backward: None,
    save_outputs: false,
    handle: OnceLock::new(),
};

/// `x * alpha`.
///
/// ```
/// let y = myns::scale(&tch::Tensor::from_slice(&[1.0f32, -2.0]), 3.0)?;
/// assert_eq!(Vec::<f32>::try_from(&y)?, vec![3.0, -6.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn scale(x: &Tensor, alpha: f64) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(x), Value::Float(alpha)])
}

/// `x *= alpha`, in place.
///
/// ```
/// let mut x = tch::Tensor::from_slice(&[1.0f32, -2.0]);
/// myns::scale_(&mut x, 0.5)?;
/// assert_eq!(Vec::<f32>::try_from(&x)?, vec![0.5, -1.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn scale_(x: &mut Tensor, alpha: f64) -> Result<()> {
    dispatch(&INPLACE_SPEC, &[Value::Tensor(x), Value::Float(alpha)])?;
    Ok(())
}

static KERNELS: RowKernels = crate::row_kernels!(crate::kernels::SCALE, "scale");

fn check<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, f64)> {
    let x = call.tensor(0)?;
    x.dtype()?;
    Ok((x, call.float(1)?))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let (x, _) = check(call)?;
    Ok(vec![cpu::empty_like(&x)?])
}

fn meta_inplace(call: &Call) -> Result<Vec<Tensor>> {
    check(call)?.0.expect_writable()?;
    Ok(vec![])
}

/// out = x * alpha over `n` contiguous elements (`out` may be `x`).
fn run(call: &Call, backend: Backend, x: &TensorArg, src: usize, dst: usize, alpha: f64) -> Result<()> {
    let dtype = x.dtype()?;
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => scale_cpu::<T>(src, dst, n as usize, alpha))
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
            let vec = [src, dst].iter().all(|p| p % 16 == 0);
            let f = KERNELS.pick(dtype, vec).function(x.device_index() as usize)?;
            let units = if vec { n / rowwise::pack(dtype) } else { n };
            let (ps, pd) = (src as u64, dst as u64);
            let mut params = [cuda::arg(&ps), cuda::arg(&pd), cuda::arg(&n), cuda::arg(&alpha)];
            cuda::launch(f, (cuda::grid_1d(units.max(1), 256), 1, 1), (256, 1, 1), 0, stream, &mut params)
                .map_err(|e| call.error(e))?;
        }
        _ => return Err(x.unsupported_device()),
    }
    Ok(())
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (x, alpha) = check(call)?;
    let out = cpu::empty(x.sizes_real()?, x.dtype()?, &x)?;
    let cx = cpu::contiguous(&x)?;
    run(call, backend, &x, cx.ptr, out.data_ptr() as usize, alpha)?;
    Ok(vec![out])
}

fn forward_inplace(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (x, alpha) = check(call)?;
    x.expect_writable()?;
    let cx = cpu::contiguous(&x)?;
    run(call, backend, &x, cx.ptr, cx.ptr, alpha)?;
    cx.write_back(&x)?;
    Ok(vec![])
}

fn scale_cpu<T: Elem>(src: usize, dst: usize, n: usize, alpha: f64) {
    let a = <T::Acc as Real>::from_f64(alpha);
    // Element by element through raw pointers: src and dst may be the same buffer.
    let (src, dst) = (src as *const T, dst as *mut T);
    for i in 0..n {
        // SAFETY: both point at n contiguous elements of T.
        unsafe { *dst.add(i) = T::from_acc((*src.add(i)).to_acc() * a) };
    }
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    Ok(vec![Some(scale(&g, ctx.inputs.float(1)?)?)])
}
