//! The skinny kernel (kernels/gemm_skinny.cu, compute capability 9.0 and
//! newer): float16/bfloat16/float32 products with at most 16 rows, the weights
//! streamed once with many 16-byte loads in flight; K split across the
//! blocks of a thread-block cluster, reduced through distributed shared
//! memory in the same launch. Its streaming build (`tma`) takes the
//! weights and x through TMA instead, up to 64 rows on mma consumers
//! (16-bit types; float32 as TF32 where TF32 is allowed).

use super::pack::{self, Operand};
use super::plan::{cdiv, operand_layout, Layout, SkinnyPlan};
use super::sm90::{tensor_map, tma_readable};
use super::tiles::{skinny_tma_smem, SKINNY_NW, SKINNY_TMA_CW, SKINNY_TMA_MT, SKINNY_TMA_STAGES, SKINNY_WARPS};
use super::{GemmParams, SKINNY_KERNELS, SKINNY_TMA_KERNELS};
use crate::cuda;
use crate::types::{DType, Error, Result};
use cudarc::driver::sys;

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

/// Runs `q` (at most 16 rows; 64 on the streaming build) on the skinny
/// kernel: a = x, b = the weights, read in place whatever their row
/// alignment (element loads when rows are not 16-byte aligned); x is copied to aligned K-major rows first if it
/// is not already (it is small). With `tma` (its plan), weights whose rows
/// and start are 16-byte aligned go through the streaming build (the others
/// through `plan`, which has none past 16 rows). `tf32`: float32 in the
/// streaming build multiplies on the tensor cores in TF32 (the register
/// build stays exact). Returns `false` (nothing queued) when b has no unit
/// stride, or when neither build can run it.
pub(crate) fn launch(q: &GemmParams, dtype: DType, tf32: bool, plan: Option<SkinnyPlan>, tma: Option<SkinnyPlan>, device: usize, stream: usize) -> Result<bool> {
    let elem = dtype.size() as i64;
    let w_layout = operand_layout(q.b as usize, q.batch, q.n, q.k, q.sbb, q.sbn, q.sbk, elem);
    let (w_k, vec, sw) = match w_layout {
        Layout::KMajor => (true, true, q.sbn),
        Layout::KUnaligned => (true, false, q.sbn),
        Layout::MnMajor => (false, true, q.sbk),
        Layout::MnUnaligned => (false, false, q.sbk),
        Layout::Strided => return Ok(false),
    };
    // Operands TMA cannot read (broadcast ones, stride 0, among them) take
    // the register build; so do sizes past the streamed build's 32-bit
    // coordinates and indices (k, n, batch, a block's stages over its
    // batches).
    let (w_len, w_rows) = if w_k { (q.k, q.n) } else { (q.n, q.k) };
    let ring = (cdiv(q.k, 128 / elem) + 1).saturating_mul(cdiv(q.batch, 65_535));
    let fits_i32 = [q.k + 64, q.n + 64, q.batch, ring].iter().all(|&v| v <= i32::MAX as i64);
    let tma = tma.filter(|_| vec && fits_i32 && tma_readable(sw, w_len, q.sbb, w_rows * sw, q.batch, elem));
    if plan.is_none() && tma.is_none() {
        return Ok(false);
    }
    let x = Operand { ptr: q.a, batch: q.batch, rows: q.m, k: q.k, sb: q.sab, sr: q.sam, sk: q.sak };
    let x_layout = operand_layout(q.a as usize, q.batch, q.m, q.k, q.sab, q.sam, q.sak, elem);
    let (x, _staged) = if x_layout == Layout::KMajor {
        (x, None)
    } else {
        let (x, buf) = pack::stage(&x, x_layout, dtype, true, device, stream)?;
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
        k_chunk: 0, // the chosen build's
        beta: q.beta,
    };
    // x too (a staged copy always is).
    if let Some(tp) = tma.filter(|_| tma_readable(p.sxm, p.k, p.sxb, p.m * p.sxm, p.batch, elem)) {
        launch_tma(&SkinnyParams { k_chunk: tp.k_chunk, ..p }, dtype, tf32, w_k, tp, device, stream)?;
        return Ok(true);
    }
    let Some(plan) = plan else {
        return Ok(false); // past 16 rows: the tile kernels
    };
    let kernel = &SKINNY_KERNELS[dtype_index(dtype)][!w_k as usize][!vec as usize][(plan.mt - 1).clamp(0, 1) as usize];
    let smem = super::plan::skinny_smem(plan.mt);
    let f = kernel.function_smem(device, smem)?;
    let grid = (cdiv(q.n, SKINNY_NW) as u32, plan.ranks as u32, q.batch.clamp(1, 65_535) as u32);
    let block = (SKINNY_WARPS as u32 * 32, 1, 1);
    let p = SkinnyParams { k_chunk: plan.k_chunk, ..p };
    let mut params = [cuda::arg(&p)];
    let opts = cuda::LaunchOpts { cluster: (1, plan.ranks as u32, 1), after_previous: false };
    cuda::launch_with(f, grid, block, smem, stream, opts, &mut params)?;
    Ok(true)
}

/// Index of `dtype` in the kernel tables (`tiles::rust_kernels`: f16, bf16, f32).
fn dtype_index(dtype: DType) -> usize {
    match dtype {
        DType::F16 => 0,
        DType::BF16 => 1,
        _ => 2,
    }
}

/// The streaming build: tensor maps of the weights and of x in boxes one
/// 128-byte swizzle atom wide (64 k of 16-bit types, 32 of float32): the
/// weights by the strip's 64 n (K-major) or 64 k by 64 n (N-major, 16-bit)
/// or 32 k by 32 n (N-major float32, two boxes per stage); x by the m
/// blocks' rows. One block per 64-column strip, batch and K range (a
/// cluster of `plan.ranks` along y, `p.k_chunk` each), on a ring of
/// `plan.stages`. `tf32` (float32): maps of element type TFLOAT32, which
/// round both operands to nearest, ties to even, as cuBLAS does, for the
/// build that multiplies them on the tensor cores.
fn launch_tma(p: &SkinnyParams, dtype: DType, tf32: bool, w_k: bool, plan: SkinnyPlan, device: usize, stream: usize) -> Result<()> {
    let mt = plan.mt;
    let es = dtype.size() as u64;
    let (m, n, k, batch) = (p.m as u64, p.n as u64, p.k as u64, p.batch as u64);
    // Byte stride of a dimension: TMA wants multiples of 16, and a
    // dimension of one element (or one batch) may carry any stride, so
    // those get one that spans the data before it.
    let stride = |s: i64, len: u64, span: u64| if len <= 1 { (span * es).div_ceil(16).max(1) * 16 } else { s as u64 * es };
    let atom = (128 / es) as u32;
    let (w_dims, w_box) = if w_k { ([k, n, batch], [atom, SKINNY_NW as u32, 1]) } else { ([n, k, batch], [atom, atom, 1]) };
    let w_pitch = stride(p.sw, w_dims[1], w_dims[0]);
    // 128-byte L2 promotion, as the product kernels (GEMM_L2_PROMOTION). On
    // the H200 against 256 (bench/explore/decode-split/, prom.sh, 5 rounds;
    // L2 clean / after do_bench's flush): 14336 x 4096 at M = 1 1.07 /
    // 1.01, LM heads 1.03-1.04 / 1.00, float32 4096 x 4096 1.02 / 1.03, the
    // other decode shapes within 1.7% either way.
    let promotion = sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    let tf32 = tf32 && dtype == DType::F32;
    let tm_w = tensor_map(dtype, tf32, p.w, w_dims, [w_pitch, stride(p.swb, batch, w_dims[1] * w_pitch / es)], w_box, true, promotion)?;
    let x_pitch = stride(p.sxm, m, k);
    let tm_x = tensor_map(dtype, tf32, p.x, [k, m, batch], [x_pitch, stride(p.sxb, batch, m * x_pitch / es)], [atom, 8 * mt as u32, 1], true, promotion)?;
    let ring = SKINNY_TMA_STAGES.iter().position(|&s| s == plan.stages).ok_or_else(|| Error::runtime(format!("no streaming skinny build with {} stages", plan.stages)))?;
    let blocks = SKINNY_TMA_MT.iter().position(|&b| b == mt).ok_or_else(|| Error::runtime(format!("no streaming skinny build for {mt} blocks of 8 rows")))?;
    let kernel = SKINNY_TMA_KERNELS[if tf32 { 3 } else { dtype_index(dtype) }][!w_k as usize][blocks][ring]
        .as_ref()
        .ok_or_else(|| Error::runtime(format!("no streaming skinny build for {mt} blocks of 8 rows on {} stages", plan.stages)))?;
    let smem = skinny_tma_smem(mt, plan.stages);
    let f = kernel.function_smem(device, smem)?;
    let grid = (cdiv(p.n, SKINNY_NW) as u32, plan.ranks as u32, p.batch.clamp(1, 65_535) as u32);
    let block = ((SKINNY_TMA_CW as u32 + 1) * 32, 1, 1);
    let mut params = [cuda::arg(&tm_w), cuda::arg(&tm_x), cuda::arg(p)];
    let opts = cuda::LaunchOpts { cluster: (1, plan.ranks as u32, 1), after_previous: false };
    cuda::launch_with(f, grid, block, smem, stream, opts, &mut params)
}
