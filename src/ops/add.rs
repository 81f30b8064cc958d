//! `myns::add(Tensor a, Tensor b) -> Tensor`: elementwise sum of two tensors of
//! the same shape, dtype and device.

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem};
use crate::cuda;
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "add",
    schema: "add(Tensor a, Tensor b) -> Tensor",
    doc: "Elementwise sum `a + b` of two tensors with the same shape, dtype and device \
          (float32, float64, float16 or bfloat16; half types add in float32). \
          Returns a new contiguous tensor.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

/// `a + b` through the dispatcher (autograd included).
///
/// ```
/// let a = tch::Tensor::from_slice(&[1.0f32, 2.0]);
/// let b = tch::Tensor::from_slice(&[10.0f32, 20.0]);
/// let c = myns::add(&a, &b)?;
/// assert_eq!(Vec::<f32>::try_from(&c)?, vec![11.0, 22.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(a), Value::Tensor(b)])
}

static KERNELS: cuda::DTypeKernels = crate::dtype_kernels!(crate::kernels::ADD, "add");

/// Checks shared by every backend; returns the two inputs.
fn check<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>)> {
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    a.dtype()?;
    a.expect_same_dtype_device(&b)?;
    if a.dim() != b.dim() {
        return Err(b.error(format_args!("has {} dimensions but `a` has {}", b.dim(), a.dim())));
    }
    a.expect_same_shape(&b)?;
    Ok((a, b))
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let (a, _) = check(call)?;
    Ok(vec![cpu::empty_like(&a)?])
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (a, b) = check(call)?;
    let dtype = a.dtype()?;
    let out = cpu::empty(a.sizes_real()?, dtype, &a)?;
    let n = a.numel();
    if n == 0 {
        return Ok(vec![out]);
    }
    let (ca, cb) = (cpu::contiguous(&a)?, cpu::contiguous(&b)?);
    let po = out.data_ptr() as usize;
    match backend {
        Backend::Cpu if a.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => add_cpu::<T>(ca.ptr, cb.ptr, po, n as usize))
        }
        Backend::Cuda { stream } if a.device() == DeviceKind::Cuda => {
            let f = KERNELS.get(dtype).function(a.device_index() as usize)?;
            let (pa, pb) = (ca.ptr as u64, cb.ptr as u64);
            let po = po as u64;
            let mut params = [cuda::arg(&pa), cuda::arg(&pb), cuda::arg(&po), cuda::arg(&n)];
            cuda::launch(f, (cuda::grid_1d(n, 256), 1, 1), (256, 1, 1), 0, stream, &mut params)
                .map_err(|e| call.error(e))?;
        }
        _ => return Err(a.unsupported_device()),
    }
    Ok(vec![out])
}

fn add_cpu<T: Elem>(a: usize, b: usize, out: usize, n: usize) {
    // SAFETY: a and b are contiguous inputs of n elements of T; out is a fresh
    // contiguous output of n elements.
    let (a, b, out) = unsafe {
        (
            std::slice::from_raw_parts(a as *const T, n),
            std::slice::from_raw_parts(b as *const T, n),
            std::slice::from_raw_parts_mut(out as *mut T, n),
        )
    };
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = T::from_acc(x.to_acc() + y.to_acc());
    }
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None, None]) };
    let ga = ctx.needs_grad(0).then(|| g.shallow_clone());
    let gb = ctx.needs_grad(1).then(|| g.shallow_clone());
    Ok(vec![ga, gb])
}
