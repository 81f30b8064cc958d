//! `myns::silu_and_mul(Tensor x) -> Tensor` (SwiGLU): `x = [a, b]` split in
//! half on the last dimension, returns `silu(a) * b`; its gradient is the op
//! `myns::silu_and_mul_backward(Tensor grad, Tensor x) -> Tensor`.

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem, Real};
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::rowwise::{self, RowKernels};
use crate::cuda;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "silu_and_mul",
    schema: "silu_and_mul(Tensor x) -> Tensor",
    doc: "SwiGLU activation: splits `x` in half on the last dimension into `a` and `b` and returns \
          `silu(a) * b` (last dimension halved), computed in float32 for half types. Differentiable.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: false,
    handle: OnceLock::new(),
};

pub static BACKWARD_SPEC: OpSpec = OpSpec {
    name: "silu_and_mul_backward",
    schema: "silu_and_mul_backward(Tensor grad, Tensor x) -> Tensor",
    doc: "Gradient of `silu_and_mul(x)` with respect to `x`, given the gradient of its output.",
    forward: backward_forward,
    meta: backward_meta,
    backward: None,
    save_outputs: false,
    handle: OnceLock::new(),
};

/// `silu(a) * b` where `[a, b] = x` split on the last dimension.
///
/// ```
/// use tch::Tensor;
/// let x = Tensor::from_slice(&[0.0f32, 1.0, 5.0, 7.0]).view([1, 4]);
/// let y = myns::silu_and_mul(&x)?; // [silu(0) * 5, silu(1) * 7]
/// assert_eq!(y.size(), vec![1, 2]);
/// assert!((y.double_value(&[0, 1]) - 7.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-5);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn silu_and_mul(x: &Tensor) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(x)])
}

/// Gradient of [`silu_and_mul`] with respect to `x`.
///
/// ```
/// use tch::{Kind, Tensor};
/// let x = Tensor::randn([3, 8], (Kind::Float, tch::Device::Cpu));
/// let gx = myns::silu_and_mul_backward(&Tensor::ones([3, 4], (Kind::Float, tch::Device::Cpu)), &x)?;
/// assert_eq!(gx.size(), vec![3, 8]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn silu_and_mul_backward(grad: &Tensor, x: &Tensor) -> Result<Tensor> {
    dispatch1(&BACKWARD_SPEC, &[Value::Tensor(grad), Value::Tensor(x)])
}

static KERNELS: RowKernels = crate::row_kernels!(crate::kernels::SILU_AND_MUL, "silu_and_mul");
static BACKWARD_KERNELS: RowKernels = crate::row_kernels!(crate::kernels::SILU_AND_MUL, "silu_and_mul_backward");

fn check_x<'a>(call: &Call<'a>, i: usize) -> Result<TensorArg<'a>> {
    let x = call.tensor(i)?;
    x.dtype()?;
    if x.dim() == 0 {
        return Err(x.error("must have at least one dimension"));
    }
    if let Some(s) = x.sizes() {
        if s[s.len() - 1] % 2 != 0 {
            return Err(x.error(format_args!("must have an even last dimension, got shape {s:?}")));
        }
    }
    Ok(x)
}

/// Output of the forward: `x` with its last dimension halved (for the Meta
/// kernel: keeps symbolic sizes).
fn halved(x: &TensorArg) -> Result<Tensor> {
    let t = x.tensor();
    let half = match x.sizes() {
        Some(s) => t.f_narrow(-1, 0, s[s.len() - 1] / 2)?,
        None => t.f_chunk(2, -1)?.swap_remove(0), // symbolic sizes: aten keeps them
    };
    Ok(half.f_contiguous()?.f_empty_like()?)
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let x = check_x(call, 0)?;
    Ok(vec![halved(&x)?])
}

/// Runs `kernels` over rows of `d` output columns.
#[allow(clippy::too_many_arguments)]
fn launch_rows(kernels: &RowKernels, call: &Call, x: &TensorArg, ptrs: &[usize], rows: i64, d: i64, stream: usize) -> Result<()> {
    let dtype = x.dtype()?;
    let vec = rowwise::can_vectorize(dtype, d, ptrs);
    let f = kernels.pick(dtype, vec).function(x.device_index() as usize)?;
    let units = if vec { d / rowwise::pack(dtype) } else { d };
    // 256 threads: x across a row's packs, y across rows when rows are short.
    let bx = ((units + 31) / 32 * 32).min(256);
    let by = 256 / bx;
    let grid_x = (units + bx - 1) / bx;
    let grid_y = ((rows + by - 1) / by).min(65_535);
    let ptrs: Vec<u64> = ptrs.iter().map(|&p| p as u64).collect();
    let mut params: Vec<*mut std::ffi::c_void> = ptrs.iter().map(cuda::arg).collect();
    params.push(cuda::arg(&rows));
    params.push(cuda::arg(&d));
    cuda::launch(f, (grid_x as u32, grid_y as u32, 1), (bx as u32, by as u32, 1), 0, stream, &mut params).map_err(|e| call.error(e))
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let x = check_x(call, 0)?;
    let dtype = x.dtype()?;
    let mut sizes = x.sizes_real()?.to_vec();
    let (rows, h) = rowwise::rows_of(&x)?;
    let d = h / 2;
    if let Some(last) = sizes.last_mut() {
        *last = d;
    }
    let out = cpu::empty(&sizes, dtype, &x)?;
    if rows == 0 || d == 0 {
        return Ok(vec![out]);
    }
    let cx = cpu::contiguous(&x)?;
    let po = out.data_ptr() as usize;
    match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => silu_cpu::<T>(cx.ptr, po, rows as usize, d as usize))
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => launch_rows(&KERNELS, call, &x, &[cx.ptr, po], rows, d, stream)?,
        _ => return Err(x.unsupported_device()),
    }
    Ok(vec![out])
}

fn sigmoid<A: Real>(v: A) -> A {
    let one = A::from_f64(1.0);
    one / (one + (A::default() - v).exp())
}

fn silu_cpu<T: Elem>(x: usize, out: usize, rows: usize, d: usize) {
    // SAFETY: contiguous [rows, 2d] input and [rows, d] output.
    let (x, out) = unsafe { (cpu::slice::<T>(x, rows * 2 * d), cpu::slice_mut::<T>(out, rows * d)) };
    for (xr, or) in x.chunks_exact(2 * d).zip(out.chunks_exact_mut(d)) {
        let (a, b) = xr.split_at(d);
        for ((o, &av), &bv) in or.iter_mut().zip(a).zip(b) {
            let av = av.to_acc();
            *o = T::from_acc(av * sigmoid(av) * bv.to_acc());
        }
    }
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    let x = ctx.input(0)?;
    Ok(vec![Some(silu_and_mul_backward(&g, &x)?)])
}

fn check_backward<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>)> {
    let g = call.tensor(0)?;
    let x = check_x(call, 1)?;
    x.expect_same_dtype_device(&g)?;
    if let (Some(sg), Some(sx)) = (g.sizes(), x.sizes()) {
        let mut expect = sx.to_vec();
        let last = expect.len() - 1;
        expect[last] /= 2;
        if sg != expect.as_slice() {
            return Err(g.error(format_args!("has shape {sg:?} but the output of silu_and_mul has shape {expect:?}")));
        }
    }
    Ok((g, x))
}

fn backward_meta(call: &Call) -> Result<Vec<Tensor>> {
    let (_, x) = check_backward(call)?;
    Ok(vec![cpu::empty_like(&x)?])
}

fn backward_forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (g, x) = check_backward(call)?;
    let dtype = x.dtype()?;
    let gx = cpu::empty(x.sizes_real()?, dtype, &x)?;
    let (rows, h) = rowwise::rows_of(&x)?;
    let d = h / 2;
    if rows == 0 || d == 0 {
        return Ok(vec![gx]);
    }
    let (cg, cx) = (cpu::contiguous(&g)?, cpu::contiguous(&x)?);
    let po = gx.data_ptr() as usize;
    match backend {
        Backend::Cpu if x.device() == DeviceKind::Cpu => {
            crate::with_elem!(dtype, T => silu_backward_cpu::<T>(cg.ptr, cx.ptr, po, rows as usize, d as usize))
        }
        Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
            launch_rows(&BACKWARD_KERNELS, call, &x, &[cg.ptr, cx.ptr, po], rows, d, stream)?
        }
        _ => return Err(x.unsupported_device()),
    }
    Ok(vec![gx])
}

fn silu_backward_cpu<T: Elem>(g: usize, x: usize, gx: usize, rows: usize, d: usize) {
    // SAFETY: contiguous [rows, d] g, [rows, 2d] x and gx.
    let (g, x, gx) = unsafe { (cpu::slice::<T>(g, rows * d), cpu::slice::<T>(x, rows * 2 * d), cpu::slice_mut::<T>(gx, rows * 2 * d)) };
    let one = <T::Acc as Real>::from_f64(1.0);
    for ((gr, xr), or) in g.chunks_exact(d).zip(x.chunks_exact(2 * d)).zip(gx.chunks_exact_mut(2 * d)) {
        let (a, b) = xr.split_at(d);
        let (oa, ob) = or.split_at_mut(d);
        for j in 0..d {
            let (av, bv, gv) = (a[j].to_acc(), b[j].to_acc(), gr[j].to_acc());
            let s = sigmoid(av);
            oa[j] = T::from_acc(gv * bv * s * (one + av * (one - s)));
            ob[j] = T::from_acc(gv * av * s);
        }
    }
}
