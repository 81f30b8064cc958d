//! The skinny kernel (kernels/gemm_skinny.cu, compute capability 9.0 and
//! newer): float16/bfloat16/float32 products with at most 16 rows, the weights
//! streamed once with many 16-byte loads in flight; K split across the
//! blocks of a thread-block cluster, reduced through distributed shared
//! memory in the same launch.

use super::pack::{self, Operand};
use super::plan::{cdiv, operand_layout, Layout, SkinnyPlan};
use super::tiles::{SKINNY_NW, SKINNY_WARPS};
use super::{GemmParams, SKINNY_KERNELS};
use crate::cuda;
use crate::types::{DType, Result};

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
    let by_dtype = match dtype {
        DType::F16 => &SKINNY_KERNELS[0],
        DType::BF16 => &SKINNY_KERNELS[1],
        _ => &SKINNY_KERNELS[2],
    };
    let kernel = &by_dtype[!w_k as usize][!vec as usize][(plan.mt - 1).clamp(0, 1) as usize];
    let smem = super::plan::skinny_smem(plan.mt);
    let f = kernel.function_smem(device, smem)?;
    let grid = (cdiv(q.n, SKINNY_NW) as u32, plan.ranks as u32, q.batch.clamp(1, 65_535) as u32);
    let block = (SKINNY_WARPS as u32 * 32, 1, 1);
    let mut params = [cuda::arg(&p)];
    let opts = cuda::LaunchOpts { cluster: (1, plan.ranks as u32, 1), after_previous: false };
    cuda::launch_with(f, grid, block, smem, stream, opts, &mut params)?;
    Ok(true)
}
