//! The Hopper path for float16/bfloat16 and float32 as TF32: wgmma + TMA
//! (kernels/matmul_sm90a.cu, built for sm_90a alone and loaded only on
//! compute capability 9.0).
//!
//! Takes a K-contiguous `a` and a K- or (16-bit types) N-contiguous `b`
//! whose rows (and batches) are 16-byte aligned and do not overlap; for TF32,
//! an N-contiguous b goes through registers (c^T = b^T a^T) and a is copied
//! K-major and rounded, or both operands are copied (see `try_tf32`). The
//! tensor maps the TMA copies read are encoded here for every call (a
//! host-side function, no device work).

use super::{cdiv, reduce_splits, set_splits, Force, GemmParams};
use crate::cuda::{self, DeviceInfo, Kernel};
use crate::kernels;
use crate::types::{DType, Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use tch::Tensor;

const BM: i64 = 128;
/// Block tile widths (N), widest first; kernels/matmul_sm90a.cu `Tile<BN>`.
const BNS: [i64; 3] = [256, 128, 64];
/// A k-tile is 128 bytes of K (one 128-byte swizzle atom).
const BK_BYTES: i64 = 128;
const THREADS: u32 = 384;

/// kernels/matmul_sm90a.cu `Tile<BN>::SMEM`: the stages (more for narrower
/// tiles), alignment slack, the barriers.
const fn wg_smem(bn: i64) -> u32 {
    let stages = match bn {
        256 => 4,
        128 => 6,
        _ => 8,
    };
    (stages * (BM + bn) * BK_BYTES + 1024 + 2 * stages * 8) as u32
}

/// The kernels of one tile width: bf16 and f16 with K- and N-contiguous b,
/// and tf32 (K-contiguous b only).
struct WgKernels {
    bf16: [Kernel; 2],
    f16: [Kernel; 2],
    tf32: Kernel,
}

macro_rules! wg_kernels {
    ($bn:literal) => {
        WgKernels {
            bf16: [
                Kernel::new(&kernels::MATMUL_SM90A, concat!("mm_wg", $bn, "_bf16_k")),
                Kernel::new(&kernels::MATMUL_SM90A, concat!("mm_wg", $bn, "_bf16_n")),
            ],
            f16: [
                Kernel::new(&kernels::MATMUL_SM90A, concat!("mm_wg", $bn, "_f16_k")),
                Kernel::new(&kernels::MATMUL_SM90A, concat!("mm_wg", $bn, "_f16_n")),
            ],
            tf32: Kernel::new(&kernels::MATMUL_SM90A, concat!("mm_wg", $bn, "_tf32_k")),
        }
    };
}

/// Indexed like `BNS`.
static WG: [WgKernels; 3] = [wg_kernels!(256), wg_kernels!(128), wg_kernels!(64)];
/// TF32 with an M-contiguous A read through registers, indexed like `BNS`.
static WGR_TF32: [Kernel; 3] = [
    Kernel::new(&kernels::MATMUL_SM90A, "mm_wgr256_tf32"),
    Kernel::new(&kernels::MATMUL_SM90A, "mm_wgr128_tf32"),
    Kernel::new(&kernels::MATMUL_SM90A, "mm_wgr64_tf32"),
];
static TF32_ROUND_COPY: Kernel = Kernel::new(&kernels::MATMUL_SM90A, "mm_tf32_round_copy");
static TF32_ROUND_FLAT: Kernel = Kernel::new(&kernels::MATMUL_SM90A, "mm_tf32_round_flat");

/// How to run a problem on the Hopper kernel: the tile width, split count,
/// and whether A goes through registers (TF32 with an M-contiguous A).
#[derive(Clone, Copy)]
pub(super) struct Plan {
    bn: i64,
    splits: i64,
    a_reg: bool,
}

/// Elements of K per k-tile.
fn bk(dtype: DType) -> i64 {
    BK_BYTES / dtype.size() as i64
}

/// Whether the device and the strides suit the kernel (compute capability
/// 9.0 exactly: the module is sm_90a code) and its TMA copies. A is
/// K-contiguous, or M-contiguous for TF32 (through registers, B K-contiguous);
/// B is K-contiguous, or N-contiguous for 16-bit types.
fn eligible(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, info: &DeviceInfo) -> bool {
    let align = 16 / dtype.size() as i64; // elements per 16 bytes
    let rows_ok = |ld: i64, len: i64| ld > 0 && ld % align == 0 && ld >= len;
    let batch_ok = |s: i64, span: i64| q.batch == 1 || (s > 0 && s % align == 0 && s >= span);
    let small = |x: i64| x < i32::MAX as i64 - BNS[0];
    let a_ok = if a_k {
        q.sak == 1 && rows_ok(q.sam, q.k) && batch_ok(q.sab, q.m * q.sam)
    } else {
        dtype == DType::F32 && b_k && q.sam == 1 && rows_ok(q.sak, q.m) && batch_ok(q.sab, q.k * q.sak)
    };
    let b_ok = if b_k {
        q.sbk == 1 && rows_ok(q.sbn, q.k) && batch_ok(q.sbb, q.n * q.sbn)
    } else {
        q.sbn == 1 && rows_ok(q.sbk, q.n) && batch_ok(q.sbb, q.k * q.sbk)
    };
    info.cc == (9, 0)
        && (b_k || dtype != DType::F32)
        && BNS.iter().all(|&bn| wg_smem(bn) as i32 <= info.max_smem)
        && a_ok
        && b_ok
        && (q.scn == 1 || !a_k) // the register-A epilogue takes any output strides
        && small(q.m)
        && small(q.n)
        && small(q.k)
        && q.batch <= i32::MAX as i64
}

/// How to run the problem on the wgmma kernel, or `None` for the other
/// kernels: when forced (`wg` with the automatic tile width, `wg256`,
/// `wg128`, `wg64`, each optionally `/<splits>`) and possible, or in the
/// automatic choice (when it may use this kernel).
///
/// The tile width is the widest that still makes blocks for about 3/4 of the
/// SMs (narrower tiles move more bytes per multiply-add, so they pay only when
/// SMs would otherwise idle: on the H100, 1024^3 bf16 ran at 0.49 of cuBLAS
/// on 256-wide tiles and 0.83 on 64-wide ones, 4096^3 at 0.85 and 0.49). The
/// automatic choice takes problems with more than 64 rows and tiles for at
/// least half the SMs, or at least 2^26 multiply-adds (512^3 bf16: 0.91 of
/// cuBLAS here, 0.56 on mma.sync). Those with fewer tiles split K into as
/// many ranges as fit in one wave of blocks, each at least 4096 long (M = 128,
/// K = 14336, N = 4096: 0.99 in 2 splits, 0.88 in 3, whose 192 blocks take
/// two waves; K = 4096: 0.82 unsplit, 0.78 in 2).
pub(super) fn plan(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, force: &Force, info: &DeviceInfo) -> Option<Plan> {
    if !eligible(q, dtype, a_k, b_k, info) {
        return None;
    }
    let sms = info.sms as i64;
    let tiles = |bn: i64| cdiv(q.m, BM) * cdiv(q.n, bn) * q.batch;
    let auto_bn = BNS.into_iter().find(|&bn| 4 * tiles(bn) >= 3 * sms).unwrap_or(BNS[BNS.len() - 1]);
    match force {
        Force::Tile(name, splits) => {
            let bn = match name.strip_prefix("wg")? {
                "" => auto_bn,
                width => width.parse().ok().filter(|bn| BNS.contains(bn))?,
            };
            Some(Plan { bn, splits: splits.unwrap_or(1), a_reg: false })
        }
        Force::Auto { wgmma: true } => {
            let count = tiles(auto_bn);
            let big = q.m.saturating_mul(q.n).saturating_mul(q.k).saturating_mul(q.batch) >= 1 << 26;
            if q.m <= 64 || q.k < bk(dtype) || (2 * count < sms && !big) {
                return None;
            }
            let splits = if 2 * count >= sms { 1 } else { (sms / count).min(q.k / 4096).max(1) };
            Some(Plan { bn: auto_bn, splits, a_reg: false })
        }
        _ => None,
    }
}

/// kernels/matmul_sm90a.cu `Tf32Copy`.
#[repr(C)]
struct Tf32Copy {
    src: u64,
    dst: u64,
    batch: i64,
    rows: i64,
    k: i64,
    sb: i64,
    sr: i64,
    sk: i64,
    ld: i64,
}

/// A K-major copy `[batch, rows, ld]` (`ld`: K rounded up to 4, so rows are
/// 16-byte aligned) of the float32 operand at `ptr` with strides (batch, row,
/// k), each element rounded to TF32 (to nearest), queued on `stream`.
fn tf32_copy(ptr: u64, [batch, rows, k]: [i64; 3], [sb, sr, sk]: [i64; 3], device: usize, stream: usize) -> Result<Tensor> {
    let ld = cdiv(k, 4) * 4;
    let out = Tensor::f_empty([batch, rows, ld], (tch::Kind::Float, tch::Device::Cuda(device)))
        .map_err(|e| Error::from(e).context("TF32 operand copy allocation failed"))?;
    let dst = out.data_ptr() as u64;
    if sk == 1 && k == ld && sr == ld && (batch == 1 || sb == rows * ld) && ptr.is_multiple_of(16) {
        // Already the destination's layout: a flat pass over 16-byte packs.
        let n4 = batch * rows * ld / 4;
        let f = TF32_ROUND_FLAT.function(device)?;
        let grid = cdiv(n4, 256).clamp(1, 16 * cuda::device_info(device)?.sms as i64) as u32;
        let mut params = [cuda::arg(&ptr), cuda::arg(&dst), cuda::arg(&n4)];
        cuda::launch(f, (grid, 1, 1), (256, 1, 1), 0, stream, &mut params)?;
        return Ok(out);
    }
    let p = Tf32Copy { src: ptr, dst, batch, rows, k, sb, sr, sk, ld };
    let f = TF32_ROUND_COPY.function(device)?;
    let grid = (cdiv(rows, 32) as u32, cdiv(k, 32).min(65_535) as u32, batch.min(65_535) as u32);
    let mut params = [cuda::arg(&p)];
    cuda::launch(f, grid, (32, 8, 1), 0, stream, &mut params)?;
    Ok(out)
}

/// How to run `p` (c^T = b^T a^T: A M-contiguous, B the K-major copy of a)
/// on the register-A TF32 kernel, or `None`: when forced (`wgr`, `wgr256`,
/// `wgr128`, `wgr64`, each optionally `/<splits>`) or in the automatic choice.
///
/// Here b is the large operand when M is small (prefill, M = 128): a tile
/// as wide as all of M reads it once, and K is split (at least 1024 per
/// range) until the blocks fill the SMs (on the H100, M = 128, K = N = 4096:
/// 0.86 to 0.89 of cuBLAS on 128-wide tiles in 4 splits, 0.65 unsplit, 0.46
/// on 256-wide ones). Problems that would then still leave most SMs idle,
/// and wider ones, take `plan`'s widths (256^3: 0.35 on one 256-wide tile,
/// 0.57 on 64-wide ones).
fn plan_reg(p: &GemmParams, force: &Force, info: &DeviceInfo) -> Option<Plan> {
    if !eligible(p, DType::F32, false, true, info) {
        return None;
    }
    let sms = info.sms as i64;
    let tiles = |bn: i64| cdiv(p.m, BM) * cdiv(p.n, bn) * p.batch;
    let splits_for = |count: i64| if 2 * count >= sms { 1 } else { (sms / count).min(p.k / 1024).max(1) };
    let auto_bn = match BNS.iter().rev().find(|&&bn| bn >= p.n) {
        Some(&bn) if 2 * tiles(bn) * splits_for(tiles(bn)) >= sms => bn,
        _ => BNS.into_iter().find(|&bn| 4 * tiles(bn) >= 3 * sms).unwrap_or(BNS[BNS.len() - 1]),
    };
    let plan = |bn: i64, splits: Option<i64>| Some(Plan { bn, splits: splits.unwrap_or(splits_for(tiles(bn))), a_reg: true });
    match force {
        Force::Tile(name, splits) => match name.strip_prefix("wgr")? {
            "" => plan(auto_bn, *splits),
            width => plan(width.parse().ok().filter(|bn| BNS.contains(bn))?, splits.or(Some(1))),
        },
        Force::Auto { wgmma: true } if p.m >= 256 && p.n > 16 && p.k >= bk(DType::F32) => plan(auto_bn, None),
        _ => None,
    }
}

/// float32 as TF32 on the Hopper kernels, whose tensor cores read float32
/// from shared memory and truncate it to TF32 (on the H100 that biased
/// products by about 9e-4 relative to cuBLAS, which rounds), and read TF32
/// operands in shared memory K-major only. Two ways round that:
/// - b N-contiguous (row-major): the register-A kernel computes c^T =
///   b^T a^T, loading b^T into registers and rounding it there; only a is
///   copied (K-major, rounded), which is small when M is (M = 128, K = N =
///   4096: the dual-copy path below ran at 0.28 of cuBLAS there, mma.sync
///   at 0.45).
/// - otherwise both operands are first copied K-major and rounded to
///   nearest, in one pass each; the automatic choice takes that only when M
///   and N are both at least 512.
///
/// Returns whether it ran.
pub(super) fn try_tf32(q: &GemmParams, force: &Force, info: &DeviceInfo, device: usize, stream: usize) -> Result<bool> {
    let ld = cdiv(q.k, 4) * 4;
    // c^T = b^T a^T: A' = b^T (M-contiguous), B' = the K-major copy of a.
    let mut t = q.transposed();
    (t.sbn, t.sbk, t.sbb) = (ld, 1, q.m * ld);
    if let Some(plan) = plan_reg(&t, force, info) {
        let a = tf32_copy(q.a, [q.batch, q.m, q.k], [q.sab, q.sam, q.sak], device, stream)?;
        t.b = a.data_ptr() as u64;
        launch(&t, DType::F32, plan, device, stream, true)?;
        return Ok(true);
    }
    if matches!(force, Force::Auto { .. }) && (q.m < 512 || q.n < 512) {
        return Ok(false);
    }
    let mut p = *q;
    (p.sab, p.sam, p.sak) = (q.m * ld, ld, 1);
    (p.sbb, p.sbn, p.sbk) = (q.n * ld, ld, 1);
    let Some(plan) = plan(&p, DType::F32, true, true, force, info) else { return Ok(false) };
    let a = tf32_copy(q.a, [q.batch, q.m, q.k], [q.sab, q.sam, q.sak], device, stream)?;
    let b = tf32_copy(q.b, [q.batch, q.n, q.k], [q.sbb, q.sbn, q.sbk], device, stream)?;
    (p.a, p.b) = (a.data_ptr() as u64, b.data_ptr() as u64);
    // The copies are freed after the launch: the caching allocator reuses
    // their memory only for work queued after this kernel on the stream.
    launch(&p, DType::F32, plan, device, stream, true)?;
    Ok(true)
}

/// A rank-3 tensor map (innermost dimension first) with 128-byte swizzle.
fn tensor_map(dtype: DType, ptr: u64, dims: [u64; 3], strides: [u64; 2], boxes: [u32; 3]) -> Result<sys::CUtensorMap> {
    let dt = match dtype {
        DType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        _ => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    };
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    let elem_strides = [1u32; 3];
    // SAFETY: plain host-side encoding into `map`; every array has rank (3)
    // or rank - 1 (strides) entries.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            dt,
            3,
            ptr as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(|e| Error::runtime(format!("encoding a TMA tensor map failed: {e} (dims {dims:?}, strides {strides:?})")))?;
    Ok(map)
}

pub(super) fn launch(q: &GemmParams, dtype: DType, plan: Plan, device: usize, stream: usize, b_k: bool) -> Result<()> {
    let mut q = *q;
    let _ws = set_splits(&mut q, plan.splits, bk(dtype), device)?;
    q.ws_nm = plan.a_reg as i64;
    let q = &q;
    let (m, n, k, batch) = (q.m as u64, q.n as u64, q.k as u64, q.batch as u64);
    let (es, bk, bn) = (dtype.size() as u64, bk(dtype) as u32, plan.bn);
    // Batch strides in bytes; with one batch any multiple of 16 will do.
    let bstride = |s: i64, span: u64| if batch == 1 { (span * es).div_ceil(16).max(1) * 16 } else { s as u64 * es };
    let tm_a = if plan.a_reg {
        // 32 M-elements (128 bytes) per box row, BK k-lines.
        tensor_map(dtype, q.a, [m, k, batch], [q.sak as u64 * es, bstride(q.sab, k * q.sak as u64)], [32, bk, 1])?
    } else {
        tensor_map(dtype, q.a, [k, m, batch], [q.sam as u64 * es, bstride(q.sab, m * q.sam as u64)], [bk, BM as u32, 1])?
    };
    let tm_b = if b_k {
        tensor_map(dtype, q.b, [k, n, batch], [q.sbn as u64 * es, bstride(q.sbb, n * q.sbn as u64)], [bk, bn as u32, 1])?
    } else {
        // 64 N-elements (128 bytes) per box row: 16-bit types only.
        tensor_map(dtype, q.b, [n, k, batch], [q.sbk as u64 * es, bstride(q.sbb, k * q.sbk as u64)], [64, bk, 1])?
    };
    let Some(width) = BNS.iter().position(|&x| x == bn) else { return Err(Error::runtime(format!("no Hopper kernel with tile width {bn}"))) };
    let kernels = &WG[width];
    let f = match dtype {
        DType::F32 if plan.a_reg && b_k => &WGR_TF32[width],
        DType::BF16 => &kernels.bf16[!b_k as usize],
        DType::F16 => &kernels.f16[!b_k as usize],
        DType::F32 if b_k => &kernels.tf32,
        _ => return Err(Error::runtime(format!("the Hopper kernel has no {dtype:?} variant with this layout"))),
    };
    let smem = wg_smem(bn);
    let f = f.function_smem(device, smem)?;
    // Persistent blocks, one per SM (the shared memory allows no more).
    let items = cdiv(q.m, BM) * cdiv(q.n, bn) * q.batch * q.splits;
    let grid = items.min(cuda::device_info(device)?.sms as i64).max(1) as u32;
    let mut params = [cuda::arg(&tm_a), cuda::arg(&tm_b), cuda::arg(q)];
    cuda::launch(f, (grid, 1, 1), (THREADS, 1, 1), smem, stream, &mut params)?;
    reduce_splits(q, dtype, device, stream)
}
