//! `myns::softmax(Tensor x, int dim) -> Tensor`, numerically safe (max
//! subtracted, -inf entries allowed); gradient op
//! `myns::softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor`.

use crate::bridge::DeviceKind;
use crate::cpu::{self, Elem, Real};
use crate::registry::{dispatch1, BackwardCtx, Backend, Call, OpSpec, TensorArg, Value};
use crate::rowwise::{ReduceKernels, RowKernels, RowLaunch, Rows};
use crate::cuda;
use anyhow::Result;
use std::sync::OnceLock;
use tch::Tensor;

pub static SPEC: OpSpec = OpSpec {
    name: "softmax",
    schema: "softmax(Tensor x, int dim) -> Tensor",
    doc: "Softmax of `x` along `dim` (negative counts from the end), computed in float32 for half types \
          with the maximum subtracted, so large magnitudes and -inf entries are safe (an all -inf slice \
          gives NaN, as in torch.softmax). Differentiable.",
    forward,
    meta,
    backward: Some(backward),
    save_outputs: true,
    handle: OnceLock::new(),
};

pub static BACKWARD_SPEC: OpSpec = OpSpec {
    name: "softmax_backward",
    schema: "softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor",
    doc: "Gradient of `softmax(x, dim)` with respect to `x`, from the gradient and the softmax output.",
    forward: backward_forward,
    meta: backward_meta,
    backward: None,
    save_outputs: false,
    handle: OnceLock::new(),
};

/// Softmax of `x` along `dim`.
///
/// ```
/// use tch::Tensor;
/// let x = Tensor::from_slice(&[0.0f32, 0.0, f32::NEG_INFINITY]);
/// let y = myns::softmax(&x, -1)?;
/// assert_eq!(Vec::<f32>::try_from(&y)?, vec![0.5, 0.5, 0.0]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn softmax(x: &Tensor, dim: i64) -> Result<Tensor> {
    dispatch1(&SPEC, &[Value::Tensor(x), Value::Int(dim)])
}

/// Gradient of [`softmax`] given its output.
///
/// ```
/// use tch::{Kind, Tensor};
/// let y = myns::softmax(&Tensor::randn([2, 5], (Kind::Float, tch::Device::Cpu)), 1)?;
/// let gx = myns::softmax_backward(&y.ones_like(), &y, 1)?;
/// assert!(gx.abs().max().double_value(&[]) < 1e-6); // d(sum softmax)/dx = 0
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn softmax_backward(grad: &Tensor, output: &Tensor, dim: i64) -> Result<Tensor> {
    dispatch1(&BACKWARD_SPEC, &[Value::Tensor(grad), Value::Tensor(output), Value::Int(dim)])
}

static KERNELS: ReduceKernels = crate::reduce_kernels!(crate::kernels::SOFTMAX, "softmax");
static BACKWARD_KERNELS: RowKernels = crate::row_kernels!(crate::kernels::SOFTMAX, "softmax_backward");

/// `dim` wrapped into `[0, ndim)` (a 0-d tensor counts as 1-d).
fn wrap_dim(call: &Call, x: &TensorArg, i: usize) -> Result<i64> {
    let dim = call.int(i)?;
    let n = x.dim().max(1) as i64;
    if dim < -n || dim >= n {
        return Err(call.error(format_args!(
            "argument `dim` is {dim}, out of range for a {}-D tensor (expected -{n} <= dim < {n})",
            x.dim()
        )));
    }
    Ok(if dim < 0 { dim + n } else { dim })
}

fn meta(call: &Call) -> Result<Vec<Tensor>> {
    let x = call.tensor(0)?;
    x.dtype()?;
    wrap_dim(call, &x, 1)?;
    Ok(vec![cpu::empty_like(&x)?])
}

/// Runs a row kernel over `dim` of the given tensors. When `dim` is last
/// (the usual case) the buffers are used in place, as the other row ops do;
/// otherwise `dim` is moved last (with a copy) and the result moved back
/// into a contiguous tensor.
fn run_rows(
    call: &Call,
    backend: Backend,
    inputs: &[&TensorArg],
    dim: i64,
    // The launch for (buffer pointers, rows, row length).
    plan: impl Fn(&[usize], i64, i64) -> Result<RowLaunch>,
    cpu_fn: fn(crate::registry::DType, &[usize], usize, usize),
) -> Result<Tensor> {
    let x = inputs[0];
    let dtype = x.dtype()?;
    let last = (x.dim() as i64).max(1) - 1;
    let (bufs, sizes) = if dim == last {
        let bufs: Vec<cpu::Contiguous> = inputs.iter().map(|t| cpu::contiguous(t)).collect::<Result<_>>()?;
        (bufs, x.sizes_real()?.to_vec())
    } else {
        let moved = |t: &&TensorArg| Ok(cpu::Contiguous::owned(t.tensor().f_movedim(&[dim][..], &[last][..])?.f_contiguous()?));
        let bufs: Vec<cpu::Contiguous> = inputs.iter().map(moved).collect::<Result<_>>()?;
        let mut sizes = x.sizes_real()?.to_vec();
        let moved_size = sizes.remove(dim as usize);
        sizes.push(moved_size);
        (bufs, sizes)
    };
    let mut ptrs: Vec<usize> = bufs.iter().map(|b| b.ptr).collect();
    let out = cpu::empty(&sizes, dtype, x)?;
    let h = sizes.last().copied().unwrap_or(1);
    let rows = if h == 0 { 0 } else { x.numel() / h };
    if rows > 0 {
        ptrs.push(out.data_ptr() as usize);
        match backend {
            Backend::Cpu if x.device() == DeviceKind::Cpu => cpu_fn(dtype, &ptrs, rows as usize, h as usize),
            Backend::Cuda { stream } if x.device() == DeviceKind::Cuda => {
                let launch = plan(&ptrs, rows, h)?;
                let ptrs: Vec<u64> = ptrs.iter().map(|&p| p as u64).collect();
                let mut params: Vec<*mut std::ffi::c_void> = ptrs.iter().map(cuda::arg).collect();
                params.push(cuda::arg(&rows));
                params.push(cuda::arg(&h));
                launch.launch(call, stream, &mut params)?;
            }
            _ => return Err(x.unsupported_device()),
        }
    }
    if dim == last { Ok(out) } else { Ok(out.f_movedim(&[last][..], &[dim][..])?.f_contiguous()?) }
}

fn forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let x = call.tensor(0)?;
    x.dtype()?;
    let dim = wrap_dim(call, &x, 1)?;
    let plan = |p: &[usize], rows, h| RowLaunch::reduce(&KERNELS, call, &x, p, rows, h);
    let out = run_rows(call, backend, &[&x], dim, plan, |dtype, p, rows, h| {
        crate::with_elem!(dtype, T => softmax_cpu::<T>(p[0], p[1], rows, h))
    })?;
    Ok(vec![out])
}

fn softmax_cpu<T: Elem>(x: usize, out: usize, rows: usize, h: usize) {
    // SAFETY: contiguous [rows, h] input and output.
    let (x, out) = unsafe { (cpu::slice::<T>(x, rows * h), cpu::slice_mut::<T>(out, rows * h)) };
    for (xr, or) in x.chunks_exact(h).zip(out.chunks_exact_mut(h)) {
        let m = xr.iter().fold(<T::Acc as Real>::NEG_INF, |m, &v| if v.to_acc() > m { v.to_acc() } else { m });
        let s = cpu::sum(xr, |&v| (v.to_acc() - m).exp());
        for (o, &v) in or.iter_mut().zip(xr) {
            *o = T::from_acc((v.to_acc() - m).exp() / s);
        }
    }
}

fn backward(ctx: &BackwardCtx) -> Result<Vec<Option<Tensor>>> {
    let Some(g) = ctx.grad(0) else { return Ok(vec![None]) };
    let y = ctx.output(0)?;
    Ok(vec![Some(softmax_backward(&g, &y, ctx.inputs.int(1)?)?)])
}

fn check_backward<'a>(call: &Call<'a>) -> Result<(TensorArg<'a>, TensorArg<'a>, i64)> {
    let (g, y) = (call.tensor(0)?, call.tensor(1)?);
    g.dtype()?;
    g.expect_same_dtype_device(&y)?;
    g.expect_same_shape(&y)?;
    let dim = wrap_dim(call, &y, 2)?;
    Ok((g, y, dim))
}

fn backward_meta(call: &Call) -> Result<Vec<Tensor>> {
    let (_, y, _) = check_backward(call)?;
    Ok(vec![cpu::empty_like(&y)?])
}

fn backward_forward(call: &Call, backend: Backend) -> Result<Vec<Tensor>> {
    let (g, y, dim) = check_backward(call)?;
    let plan = |p: &[usize], rows, h| RowLaunch::new(&BACKWARD_KERNELS, &g, p, rows, h, Rows::BlockOrWarp);
    let out = run_rows(call, backend, &[&g, &y], dim, plan, |dtype, p, rows, h| {
        crate::with_elem!(dtype, T => softmax_backward_cpu::<T>(p[0], p[1], p[2], rows, h))
    })?;
    Ok(vec![out])
}

fn softmax_backward_cpu<T: Elem>(g: usize, y: usize, out: usize, rows: usize, h: usize) {
    // SAFETY: contiguous [rows, h] buffers.
    let (g, y, out) = unsafe { (cpu::slice::<T>(g, rows * h), cpu::slice::<T>(y, rows * h), cpu::slice_mut::<T>(out, rows * h)) };
    for ((gr, yr), or) in g.chunks_exact(h).zip(y.chunks_exact(h)).zip(out.chunks_exact_mut(h)) {
        let dot = cpu::sum(gr.iter().zip(yr), |(&a, &b)| a.to_acc() * b.to_acc());
        for ((o, &a), &b) in or.iter_mut().zip(gr).zip(yr) {
            *o = T::from_acc(b.to_acc() * (a.to_acc() - dot));
        }
    }
}
