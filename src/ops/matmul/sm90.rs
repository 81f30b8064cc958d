//! The Hopper path for float16/bfloat16: wgmma + TMA (kernels/matmul_sm90a.cu,
//! built for sm_90a alone and loaded only on compute capability 9.0).
//!
//! Takes a K-contiguous `a` and a K- or N-contiguous `b` whose rows (and
//! batches) are 16-byte aligned and do not overlap; the tensor maps the TMA
//! copies read are encoded here for every call (a host-side function, no
//! device work).

use super::{cdiv, Force, GemmParams};
use crate::cuda::{self, DeviceInfo, Kernel};
use crate::kernels;
use crate::registry::{DType, TensorArg};
use anyhow::{anyhow, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

const BM: i64 = 128;
const BN: i64 = 256;
const BK: i64 = 64;
const STAGES: i64 = 4;
const THREADS: u32 = 384;
/// kernels/matmul_sm90a.cu `SMEM`: the stages, alignment slack, the barriers.
const WG_SMEM: u32 = (STAGES * (BM + BN) * BK * 2 + 1024 + 2 * STAGES * 8) as u32;

static WG_F16: [Kernel; 2] =
    [Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_f16_k"), Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_f16_n")];
static WG_BF16: [Kernel; 2] =
    [Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_bf16_k"), Kernel::new(&kernels::MATMUL_SM90A, "mm_wg_bf16_n")];

/// Whether the device and the strides suit the kernel (compute capability
/// 9.0 exactly: the module is sm_90a code) and its TMA copies.
fn eligible(q: &GemmParams, a_k: bool, b_k: bool, info: &DeviceInfo) -> bool {
    let rows_ok = |ld: i64, len: i64| ld > 0 && ld % 8 == 0 && ld >= len;
    let batch_ok = |s: i64, span: i64| q.batch == 1 || (s > 0 && s % 8 == 0 && s >= span);
    let small = |x: i64| x < i32::MAX as i64 - BN;
    let b_ok = if b_k {
        q.sbk == 1 && rows_ok(q.sbn, q.k) && batch_ok(q.sbb, q.n * q.sbn)
    } else {
        q.sbn == 1 && rows_ok(q.sbk, q.n) && batch_ok(q.sbb, q.k * q.sbk)
    };
    info.cc == (9, 0)
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

/// Whether the problem should run on the wgmma kernel: when forced (`wg`) and
/// possible, or in the automatic choice (when it may use this kernel) for
/// problems big enough to fill the GPU with 128 x 256 tiles.
pub(super) fn wanted(q: &GemmParams, a_k: bool, b_k: bool, force: &Force, info: &DeviceInfo) -> bool {
    match force {
        Force::Tile(name, _) if name == "wg" => eligible(q, a_k, b_k, info),
        Force::Auto { wgmma: true } => {
            let tiles = cdiv(q.m, BM) * cdiv(q.n, BN) * q.batch;
            q.m > 64 && q.k >= BK && 2 * tiles >= info.sms as i64 && eligible(q, a_k, b_k, info)
        }
        _ => false,
    }
}

/// A rank-3 tensor map (innermost dimension first) with 128-byte swizzle.
fn tensor_map(dtype: DType, ptr: u64, dims: [u64; 3], strides: [u64; 2], boxes: [u32; 3]) -> Result<sys::CUtensorMap> {
    let dt = match dtype {
        DType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        _ => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
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

pub(super) fn launch(q: &GemmParams, dtype: DType, device: usize, stream: usize, b_k: bool, _like: &TensorArg) -> Result<()> {
    let (m, n, k, batch) = (q.m as u64, q.n as u64, q.k as u64, q.batch as u64);
    // Batch strides in bytes; with one batch any multiple of 16 will do.
    let bstride = |s: i64, span: u64| if batch == 1 { (span * 2).div_ceil(16).max(1) * 16 } else { s as u64 * 2 };
    let tm_a = tensor_map(
        dtype,
        q.a,
        [k, m, batch],
        [q.sam as u64 * 2, bstride(q.sab, m * q.sam as u64)],
        [BK as u32, BM as u32, 1],
    )?;
    let tm_b = if b_k {
        tensor_map(dtype, q.b, [k, n, batch], [q.sbn as u64 * 2, bstride(q.sbb, n * q.sbn as u64)], [BK as u32, BN as u32, 1])?
    } else {
        tensor_map(dtype, q.b, [n, k, batch], [q.sbk as u64 * 2, bstride(q.sbb, k * q.sbk as u64)], [64, BK as u32, 1])?
    };
    let table = if dtype == DType::BF16 { &WG_BF16 } else { &WG_F16 };
    let f = table[!b_k as usize].function_smem(device, WG_SMEM)?;
    let grid_x = cdiv(q.m, BM) * cdiv(q.n, BN);
    if grid_x > i32::MAX as i64 {
        anyhow::bail!("the product is too large for one launch ({} x {})", q.m, q.n);
    }
    let grid_z = q.batch.min(65_535) as u32;
    let mut params = [cuda::arg(&tm_a), cuda::arg(&tm_b), cuda::arg(q)];
    cuda::launch(f, (grid_x as u32, 1, grid_z), (THREADS, 1, 1), WG_SMEM, stream, &mut params)
}
