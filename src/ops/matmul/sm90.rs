//! The Hopper path for float16/bfloat16 and float32 as TF32: wgmma + TMA
//! (kernels/matmul_sm90a.cu, built for sm_90a alone and loaded only on
//! compute capability 9.0).
//!
//! Takes a K-contiguous `a` and a K- or (16-bit types) N-contiguous `b`
//! whose rows (and batches) are 16-byte aligned and do not overlap; for TF32,
//! operands that are not K-contiguous are copied first (wgmma reads TF32 only
//! K-major). The tensor maps the TMA copies read are encoded here for every
//! call (a host-side function, no device work).

use super::{auto_splits, cdiv, reduce_splits, set_splits, Force, GemmParams};
use crate::cuda::{self, DeviceInfo, Kernel};
use crate::kernels;
use crate::registry::{DType, TensorArg};
use anyhow::{anyhow, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use tch::Tensor;

const BM: i64 = 128;
const BN: i64 = 256;
/// A k-tile is 128 bytes of K (one 128-byte swizzle atom).
const BK_BYTES: i64 = 128;
const STAGES: i64 = 4;
const THREADS: u32 = 384;
/// kernels/matmul_sm90a.cu `SMEM`: the stages, alignment slack, the barriers.
const WG_SMEM: u32 = (STAGES * (BM + BN) * BK_BYTES + 1024 + 2 * STAGES * 8) as u32;

static WG_F16: [Kernel; 2] =
    [Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_f16_k"), Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_f16_n")];
static WG_BF16: [Kernel; 2] =
    [Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_bf16_k"), Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_bf16_n")];
static WG_TF32: Kernel = Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_tf32_k");

/// Elements of K per k-tile.
fn bk(dtype: DType) -> i64 {
    BK_BYTES / dtype.size() as i64
}

/// Whether the device and the strides suit the kernel (compute capability
/// 9.0 exactly: the module is sm_90a code) and its TMA copies.
fn eligible(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, info: &DeviceInfo) -> bool {
    let align = 16 / dtype.size() as i64; // elements per 16 bytes
    let rows_ok = |ld: i64, len: i64| ld > 0 && ld % align == 0 && ld >= len;
    let batch_ok = |s: i64, span: i64| q.batch == 1 || (s > 0 && s % align == 0 && s >= span);
    let small = |x: i64| x < i32::MAX as i64 - BN;
    let b_ok = if b_k {
        q.sbk == 1 && rows_ok(q.sbn, q.k) && batch_ok(q.sbb, q.n * q.sbn)
    } else {
        q.sbn == 1 && rows_ok(q.sbk, q.n) && batch_ok(q.sbb, q.k * q.sbk)
    };
    info.cc == (9, 0)
        && (b_k || dtype != DType::F32)
        && WG_SMEM as i32 <= info.max_smem
        && a_k
        && q.sak == 1
        && rows_ok(q.sam, q.k)
        && batch_ok(q.sab, q.m * q.sam)
        && b_ok
        && q.scn == 1
        && small(q.m)
        && small(q.n)
        && small(q.k)
        && q.batch <= i32::MAX as i64
}

/// The split-K count to run the problem with on the wgmma kernel, or `None`
/// for the other kernels: when forced (`wg`, `wg/<splits>`) and possible, or
/// in the automatic choice (when it may use this kernel) for problems with
/// more than 64 rows and tiles for at least half the SMs, or at least 2^30
/// multiply-adds. The latter split K when the tiles alone would leave over
/// half the SMs idle, keeping at least 1024 of K per split (shorter splits measured slower
/// on the H100: 1024^3 bf16 ran at 106 TFLOP/s unsplit, 82 in 4 splits).
pub(super) fn plan(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, force: &Force, info: &DeviceInfo) -> Option<i64> {
    if !eligible(q, dtype, a_k, b_k, info) {
        return None;
    }
    let sms = info.sms as i64;
    match force {
        Force::Tile(name, splits) if name == "wg" => Some(splits.unwrap_or(1)),
        Force::Auto { wgmma: true } => {
            let tiles = cdiv(q.m, BM) * cdiv(q.n, BN) * q.batch;
            let big = q.m.saturating_mul(q.n).saturating_mul(q.k).saturating_mul(q.batch) >= 1 << 30;
            if q.m <= 64 || q.k < bk(dtype) || (2 * tiles < sms && !big) {
                return None;
            }
            Some(if 2 * tiles >= sms { 1 } else { auto_splits(tiles, sms, q.k, 1024) })
        }
        _ => None,
    }
}

/// Whether an operand `[batch, rows, k]` at `ptr` with strides (batch, row,
/// k) is K-contiguous with 16-byte aligned rows, as TF32 TMA loads need.
fn is_k_major(ptr: u64, [batch, rows, k]: [i64; 3], [sb, sr, sk]: [i64; 3]) -> bool {
    let aligned = |s: i64| s % 4 == 0;
    ptr.is_multiple_of(16) && sk == 1 && sr >= k && aligned(sr) && (batch == 1 || (aligned(sb) && sb >= rows * sr))
}

/// A contiguous (so K-major) copy of an operand, made by PyTorch on the
/// current stream.
fn k_major_copy(ptr: u64, shape: [i64; 3], strides: [i64; 3], like: &TensorArg) -> Result<Tensor> {
    // SAFETY: a view of the live operand's memory with its own shape and
    // strides, dropped before this call returns.
    let view = unsafe { Tensor::f_from_blob(ptr as *const u8, &shape, &strides, tch::Kind::Float, like.tch_device()?)? };
    Ok(view.f_contiguous()?)
}

/// TF32 on the Hopper kernel, only when forced (`wg`): its tensor cores read
/// float32 from shared memory and truncate it to TF32, where cuBLAS and the
/// mma.sync kernels round; on the H100 that biased products by about 9e-4
/// relative to cuBLAS (4096^3: 0.76 of its speed against 0.28 for mma.sync),
/// so the automatic choice keeps mma.sync until the kernel rounds its inputs.
/// wgmma reads TF32 operands K-major only, so `a` or `b` is copied to K-major
/// first where it is not (when the other operand has at least 1024 rows: with
/// M = 128 the copy of b took longer than the whole product). Returns whether
/// it ran.
pub(super) fn try_tf32(q: &GemmParams, force: &Force, info: &DeviceInfo, device: usize, stream: usize, like: &TensorArg) -> Result<bool> {
    if !matches!(force, Force::Tile(name, _) if name == "wg") {
        return Ok(false);
    }
    let a_shape = [q.batch, q.m, q.k];
    let b_shape = [q.batch, q.n, q.k];
    let copy_a = !is_k_major(q.a, a_shape, [q.sab, q.sam, q.sak]);
    let copy_b = !is_k_major(q.b, b_shape, [q.sbb, q.sbn, q.sbk]);
    let mut p = *q;
    if copy_a {
        (p.sab, p.sam, p.sak) = (q.m * q.k, q.k, 1);
    }
    if copy_b {
        (p.sbb, p.sbn, p.sbk) = (q.n * q.k, q.k, 1);
    }
    // Copies have rows of K elements: 16-byte aligned only when K is a multiple of 4.
    if (copy_a || copy_b) && q.k % 4 != 0 || copy_a && q.n < 1024 || copy_b && q.m < 1024 {
        return Ok(false);
    }
    let Some(splits) = plan(&p, DType::F32, true, true, force, info) else { return Ok(false) };
    let a = if copy_a { Some(k_major_copy(q.a, a_shape, [q.sab, q.sam, q.sak], like)?) } else { None };
    let b = if copy_b { Some(k_major_copy(q.b, b_shape, [q.sbb, q.sbn, q.sbk], like)?) } else { None };
    if let Some(a) = &a {
        p.a = a.data_ptr() as u64;
    }
    if let Some(b) = &b {
        p.b = b.data_ptr() as u64;
    }
    // The copies are freed after the launch: the caching allocator reuses
    // their memory only for work queued after this kernel on the stream.
    launch(&p, DType::F32, splits, device, stream, true, like)?;
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
    .map_err(|e| anyhow!("encoding a TMA tensor map failed: {e} (dims {dims:?}, strides {strides:?})"))?;
    Ok(map)
}

pub(super) fn launch(q: &GemmParams, dtype: DType, splits: i64, device: usize, stream: usize, b_k: bool, like: &TensorArg) -> Result<()> {
    let mut q = *q;
    let _ws = set_splits(&mut q, splits, bk(dtype), like)?;
    let q = &q;
    let (m, n, k, batch) = (q.m as u64, q.n as u64, q.k as u64, q.batch as u64);
    let (es, bk) = (dtype.size() as u64, bk(dtype) as u32);
    // Batch strides in bytes; with one batch any multiple of 16 will do.
    let bstride = |s: i64, span: u64| if batch == 1 { (span * es).div_ceil(16).max(1) * 16 } else { s as u64 * es };
    let tm_a = tensor_map(dtype, q.a, [k, m, batch], [q.sam as u64 * es, bstride(q.sab, m * q.sam as u64)], [bk, BM as u32, 1])?;
    let tm_b = if b_k {
        tensor_map(dtype, q.b, [k, n, batch], [q.sbn as u64 * es, bstride(q.sbb, n * q.sbn as u64)], [bk, BN as u32, 1])?
    } else {
        // 64 N-elements (128 bytes) per box row: 16-bit types only.
        tensor_map(dtype, q.b, [n, k, batch], [q.sbk as u64 * es, bstride(q.sbb, k * q.sbk as u64)], [64, bk, 1])?
    };
    let f = match dtype {
        DType::BF16 => &WG_BF16[!b_k as usize],
        DType::F16 => &WG_F16[!b_k as usize],
        DType::F32 if b_k => &WG_TF32,
        _ => anyhow::bail!("the Hopper kernel has no {dtype:?} variant with this layout"),
    }
    .function_smem(device, WG_SMEM)?;
    // Persistent blocks, one per SM (the shared memory allows no more).
    let items = cdiv(q.m, BM) * cdiv(q.n, BN) * q.batch * q.splits;
    let grid = items.min(cuda::device_info(device)?.sms as i64).max(1) as u32;
    let mut params = [cuda::arg(&tm_a), cuda::arg(&tm_b), cuda::arg(q)];
    cuda::launch(f, (grid, 1, 1), (THREADS, 1, 1), WG_SMEM, stream, &mut params)?;
    reduce_splits(q, dtype, device, stream)
}
