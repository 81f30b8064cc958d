//! The skinny kernel (kernels/gemm_skinny.cu, compute capability 9.0 and
//! newer): float16/bfloat16 products with at most 16 rows, the weights
//! streamed once with many 16-byte loads in flight; K split across the
//! blocks of a thread-block cluster, reduced through distributed shared
//! memory in the same launch.

use super::pack::{self, Operand};
use super::plan::{cdiv, operand_layout, Layout, SkinnyPlan};
use super::tiles::{SKINNY_NW, SKINNY_WARPS};
use super::{GemmParams, SKINNY_KERNELS};
use crate::cuda::{self, driver_error};
use crate::types::{DType, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

/// Mirrors `SkinnyParams` in kernels/gemm_skinny.cu.
#[repr(C)]
struct SkinnyParams {
    x: u64,
    w: u64,
    c: u64,
    m: i64,
    n: i64,
    k: i64,
    sxm: i64,
    sxb: i64,
    sw: i64,
    swb: i64,
    scm: i64,
    scn: i64,
    scb: i64,
    batch: i64,
    k_chunk: i64,
    beta: i64,
}

/// Runs `q` (at most 16 rows) on the skinny kernel: a = x, b = the weights,
/// read in place whatever their row alignment (element loads when rows are
/// not 16-byte aligned); x is copied to aligned K-major rows first if it
/// is not already (it is small). Returns `false` (nothing queued) when b
/// has no unit stride.
pub(crate) fn launch(q: &GemmParams, dtype: DType, plan: SkinnyPlan, device: usize, stream: usize) -> Result<bool> {
    let elem = dtype.size() as i64;
    let w_layout = operand_layout(q.b as usize, q.batch, q.n, q.k, q.sbb, q.sbn, q.sbk, elem);
    let (w_k, vec, sw) = match w_layout {
        Layout::KMajor => (true, true, q.sbn),
        Layout::KUnaligned => (true, false, q.sbn),
        Layout::MnMajor => (false, true, q.sbk),
        Layout::MnUnaligned => (false, false, q.sbk),
        Layout::Strided => return Ok(false),
    };
    let x = Operand { ptr: q.a, batch: q.batch, rows: q.m, k: q.k, sb: q.sab, sr: q.sam, sk: q.sak };
    let x_layout = operand_layout(q.a as usize, q.batch, q.m, q.k, q.sab, q.sam, q.sak, elem);
    let (x, _staged) = if x_layout == Layout::KMajor {
        (x, None)
    } else {
        let (x, buf) = pack::stage(&x, x_layout, dtype, true, false, device, stream)?;
        (x, Some(buf))
    };
    let p = SkinnyParams {
        x: x.ptr,
        w: q.b,
        c: q.c,
        m: q.m,
        n: q.n,
        k: q.k,
        sxm: x.sr,
        sxb: x.sb,
        sw,
        swb: q.sbb,
        scm: q.scm,
        scn: q.scn,
        scb: q.scb,
        batch: q.batch,
        k_chunk: plan.k_chunk,
        beta: q.beta,
    };
    let by_dtype = if dtype == DType::F16 { &SKINNY_KERNELS[0] } else { &SKINNY_KERNELS[1] };
    let kernel = &by_dtype[!w_k as usize][!vec as usize][(plan.mt - 1).clamp(0, 1) as usize];
    let smem = super::plan::skinny_smem(plan.mt);
    let f = kernel.function_smem(device, smem)?;
    let grid = (cdiv(q.n, SKINNY_NW) as u32, plan.ranks as u32, q.batch.clamp(1, 65_535) as u32);
    let block = (SKINNY_WARPS as u32 * 32, 1, 1);
    let mut params = [cuda::arg(&p)];
    if plan.ranks == 1 {
        cuda::launch(f, grid, block, smem, stream, &mut params)?;
    } else {
        launch_cluster(f, grid, block, smem, stream, plan.ranks as u32, &mut params)?;
    }
    Ok(true)
}

/// `cuda::launch` with thread-block clusters of `cluster_y` blocks along y.
fn launch_cluster(f: sys::CUfunction, grid: (u32, u32, u32), block: (u32, u32, u32), smem: u32, stream: usize, cluster_y: u32, params: &mut [*mut c_void]) -> Result<()> {
    let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
    value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: 1, y: cluster_y, z: 1 };
    let mut attr = sys::CUlaunchAttribute { id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, pad: [0; 4], value };
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: block.2,
        sharedMemBytes: smem,
        hStream: stream as sys::CUstream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    // SAFETY: `f` is a loaded function of the current (primary) context,
    // `stream` a stream of that context, `params` match the kernel's
    // parameters, and `config` points at one live attribute.
    unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(|e| driver_error("CUDA launch (cluster) failed", e))
}
