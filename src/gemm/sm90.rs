//! The Hopper path for float16/bfloat16 and float32 as TF32: wgmma + TMA
//! (kernels/matmul_sm90a.cu, built for sm_90a alone and loaded only on
//! compute capability 9.0).
//!
//! Takes K- or MN-contiguous 16-bit operands whose rows (and batches) are
//! 16-byte aligned and do not overlap (`mod.rs` stages the others through
//! aligned copies first); for TF32, an N-contiguous b goes through registers
//! (c^T = b^T a^T), and operands that are not K-contiguous are copied
//! K-major (see `try_tf32`). The tensor maps the TMA copies read are encoded
//! here for every call (a host-side function, no device work).

use super::pack::{self, Operand};
use super::plan::{self, cdiv, operand_layout, Force, Layout, WgPlan};
use super::tiles::{WG, WGH, WGK, WGP, WGQ, WGW, WGX, WG_THREADS};
use super::{set_splits, GemmParams, SplitSum, WGH_KERNELS, WGK_KERNELS, WGP_KERNELS, WGQ_KERNELS, WGW_KERNELS, WGX_KERNELS, WG_KERNELS};
use crate::cuda::{self, DeviceInfo};
use crate::overrides::{self, Knob};
use crate::types::{DType, Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Mutex;

/// Whether TMA can read an operand of `batch` batches whose rows (`len`
/// elements along its unit-stride dimension) are `ld` elements apart and
/// whose batches are `sb` apart, spanning `span`: positive strides of whole
/// 16 bytes, rows and batches that do not overlap.
pub(super) fn tma_readable(ld: i64, len: i64, sb: i64, span: i64, batch: i64, elem: i64) -> bool {
    let align = 16 / elem; // elements per 16 bytes
    ld > 0 && ld % align == 0 && ld >= len && (batch == 1 || (sb > 0 && sb % align == 0 && sb >= span))
}

/// Whether the device and the strides suit the kernel (compute capability
/// 9.0 exactly: the module is sm_90a code) and its TMA copies. A is
/// K-contiguous, MN-contiguous for 16-bit types, or M-contiguous for TF32
/// through registers (B K-contiguous); B is K-contiguous, or N-contiguous
/// for 16-bit types.
fn eligible(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, a_reg: bool, info: &DeviceInfo) -> bool {
    let es = dtype.size() as i64;
    let small = |x: i64| x < i32::MAX as i64 - 256;
    let half = dtype != DType::F32;
    let a_ok = if a_k {
        !a_reg && q.sak == 1 && tma_readable(q.sam, q.k, q.sab, q.m * q.sam, q.batch, es)
    } else {
        (half || (a_reg && b_k)) && q.sam == 1 && tma_readable(q.sak, q.m, q.sab, q.k * q.sak, q.batch, es)
    };
    let b_ok = if b_k {
        q.sbk == 1 && tma_readable(q.sbn, q.k, q.sbb, q.n * q.sbn, q.batch, es)
    } else {
        half && q.sbn == 1 && tma_readable(q.sbk, q.n, q.sbb, q.k * q.sbk, q.batch, es)
    };
    // TMA wants 16-byte aligned starts as well as strides.
    info.cc == (9, 0)
        && q.a.is_multiple_of(16)
        && q.b.is_multiple_of(16)
        && WG.iter().chain(WGP.iter()).chain(WGH.iter()).all(|t| t.smem(dtype.size() as i64) as i32 <= info.max_smem)
        && a_ok
        && b_ok
        && (q.scn == 1 || a_reg) // the register-A epilogue takes any output strides
        && small(q.m)
        && small(q.n)
        && small(q.k)
        && q.batch <= i32::MAX as i64
        // The kernel counts work items in 32 bits: room for 16 splits of the smallest tile.
        && cdiv(q.m, 64) * cdiv(q.n, 64) * q.batch <= i32::MAX as i64 / 16
}

/// How to run a 16-bit problem (a_k / b_k: the operands' orientation) on
/// the Hopper kernels, or `None` for the others: when forced (`wg`, `wg256`,
/// `wgp128`, ..., each optionally `/<splits>`) and possible, or in the
/// automatic choice (`plan::wg_auto`).
pub(super) fn plan(q: &GemmParams, dtype: DType, a_k: bool, b_k: bool, force: &Force, info: &DeviceInfo) -> Option<WgPlan> {
    if !eligible(q, dtype, a_k, b_k, false, info) {
        return None;
    }
    let (sms, elem) = (info.sms as i64, dtype.size() as i64);
    let off = |pitch: i64, bytes: i64| q.k > 1 && (pitch * elem) % bytes != 0;
    let (a_line, b_line) = (if a_k { q.sam } else { q.sak }, if b_k { q.sbn } else { q.sbk });
    let ops = plan::Operands {
        b_k,
        misaligned: (!a_k && off(q.sak, 128)) || (!b_k && off(q.sbk, 128)),
        a_off: off(a_line, 128),
        a_off32: off(a_line, 32),
        b_off32: off(b_line, 32),
    };
    match force {
        Force::Tile(name, splits) => plan::wg_forced(name, *splits, q.m, q.n, q.k, q.batch, elem, sms, ops),
        Force::Auto { hopper: true } => plan::wg_auto(q.m, q.n, q.k, q.batch, elem, sms, ops),
        _ => None,
    }
}

/// float32 as TF32 on the Hopper kernels. Their TMA loads round each
/// element to TF32 (to nearest, ties to even: the tensor maps read float32
/// as TFLOAT32, as cuBLAS's TF32 kernels' do), where the tensor cores alone
/// would drop the low 13 mantissa bits. wgmma reads TF32 operands in shared
/// memory K-major only, so:
/// - b N-contiguous (row-major): the register-A kernel computes c^T =
///   b^T a^T, loading b^T into registers; a is read in place where TMA can
///   read it K-major, else first copied K-major.
/// - otherwise both operands K-major: each read in place where TMA can, else
///   first copied K-major; the automatic choice takes a copy only when M and
///   N are both at least 512.
///
/// Returns whether it ran.
pub(super) fn try_tf32(q: &GemmParams, force: &Force, info: &DeviceInfo, device: usize, stream: usize) -> Result<bool> {
    let sms = info.sms as i64;
    let a_op = Operand { ptr: q.a, batch: q.batch, rows: q.m, k: q.k, sb: q.sab, sr: q.sam, sk: q.sak };
    let b_op = Operand { ptr: q.b, batch: q.batch, rows: q.n, k: q.k, sb: q.sbb, sr: q.sbn, sk: q.sbk };
    let a_layout = operand_layout(q.a as usize, q.batch, q.m, q.k, q.sab, q.sam, q.sak, 4);
    let b_layout = operand_layout(q.b as usize, q.batch, q.n, q.k, q.sbb, q.sbn, q.sbk, 4);
    // The K-major copies' leading dimension (both operands: the same K).
    let (_, ld) = pack::staged_shape(&a_op, a_layout, 4, true);
    // K-contiguous operands TMA can read as they are need no copy.
    let in_place = |op: &Operand| op.sk == 1 && op.ptr.is_multiple_of(16) && tma_readable(op.sr, op.k, op.sb, op.rows * op.sr, op.batch, 4);
    let (a_direct, b_direct) = (in_place(&a_op), in_place(&b_op));
    let stage = |op: &Operand, layout: Layout| pack::stage(op, layout, DType::F32, true, device, stream);
    // c^T = b^T a^T: A' = b^T (M-contiguous) in place or, its rows off 16
    // bytes, in a padded copy of the same orientation; B' = a in place or
    // its K-major copy. (A gathering K-major copy of such a b ran at half
    // the rows copy's rate: 4096 x 4096 x 4095 took 466 us against the
    // aligned product's 350 on the H200, bench/explore/refresh/.)
    let mut t = q.transposed();
    if !a_direct {
        (t.b, t.sbn, t.sbk, t.sbb) = (0, ld, 1, q.m * ld); // the copy's (16-byte aligned) address comes below
    }
    let b_rows = b_layout == Layout::MnUnaligned;
    if b_rows {
        let (_, ld_b) = pack::staged_shape(&b_op, b_layout, 4, false);
        (t.a, t.sam, t.sak, t.sab) = (0, 1, ld_b, q.k * ld_b);
    }
    if eligible(&t, DType::F32, false, true, true, info) {
        let reg = match force {
            Force::Tile(name, splits) => plan::wg_reg_forced(name, *splits, t.m, t.n, t.k, t.batch, sms),
            Force::Auto { hopper: true } if t.m >= 256 && t.n > 16 && t.k >= 32 => Some(plan::wg_reg(t.m, t.n, t.k, t.batch, sms)),
            _ => None,
        };
        if let Some(reg) = reg {
            let _a_copy = if a_direct {
                None
            } else {
                let (a, buf) = stage(&a_op, a_layout)?;
                t.b = a.ptr;
                Some(buf)
            };
            let _b_copy = if b_rows {
                let (b, buf) = pack::stage(&b_op, b_layout, DType::F32, false, device, stream)?;
                t.a = b.ptr;
                Some(buf)
            } else {
                None
            };
            launch(&t, DType::F32, reg, false, true, !a_direct || b_rows, device, stream)?;
            return Ok(true);
        }
    }
    if matches!(force, Force::Auto { .. }) && (q.m < 512 || q.n < 512) && !(a_direct && b_direct) {
        return Ok(false);
    }
    let mut p = *q;
    if !a_direct {
        (p.a, p.sab, p.sam, p.sak) = (0, q.m * ld, ld, 1);
    }
    if !b_direct {
        (p.b, p.sbb, p.sbn, p.sbk) = (0, q.n * ld, ld, 1);
    }
    let Some(plan) = plan(&p, DType::F32, true, true, force, info) else { return Ok(false) };
    let a_copy = if a_direct { None } else { Some(stage(&a_op, a_layout)?) };
    let b_copy = if b_direct { None } else { Some(stage(&b_op, b_layout)?) };
    if let Some((a, _)) = &a_copy {
        p.a = a.ptr;
    }
    if let Some((b, _)) = &b_copy {
        p.b = b.ptr;
    }
    launch(&p, DType::F32, plan, true, true, b_copy.is_some() || a_copy.is_some(), device, stream)?;
    Ok(true)
}

/// L2 promotion of the product kernels' tensor maps. On the H100 with 256
/// bytes, 3000 x 1000 x 2000 bf16 (rows of 2000 and 4000 bytes, 16- but not
/// 128-byte aligned) took 28.8 us of kernel time, with 128 25.9, 64 or none 26.1;
/// the other shapes of bench/explore/matmul_kernel_times.py's `start` set
/// ran the same under all four (bench/explore/l2-traffic/).
const GEMM_L2_PROMOTION: sys::CUtensorMapL2promotion = sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B;

/// A rank-3 tensor map (innermost dimension first, byte strides) with
/// 128-byte swizzle (`swizzle`, else none) and L2 promotion `promotion`; zeros fill boxes past the
/// edges. `tf32`: float32 read as TF32, each element rounded to nearest
/// (ties to even) by the copy (bench/explore/tf32-tma/).
#[allow(clippy::too_many_arguments)]
pub(super) fn tensor_map(
    dtype: DType,
    tf32: bool,
    ptr: u64,
    dims: [u64; 3],
    strides: [u64; 2],
    boxes: [u32; 3],
    swizzle: bool,
    promotion: sys::CUtensorMapL2promotion,
) -> Result<sys::CUtensorMap> {
    let dt = match dtype {
        DType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        _ if tf32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
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
            if swizzle { sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B } else { sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE },
            promotion,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(|e| Error::runtime(format!("encoding a TMA tensor map failed: {e} (dims {dims:?}, strides {strides:?})")))?;
    Ok(map)
}

/// Clusters of `cl` Hopper blocks the device runs at once (asked once per
/// device, shared-memory size and cluster size; every Hopper kernel has the
/// same block size and one block per SM): at least one.
fn max_clusters(f: sys::CUfunction, device: usize, smem: u32, cl: u32) -> Result<u32> {
    /// ((device, shared memory, cluster size), clusters).
    type Known = Vec<((usize, u32, u32), u32)>;
    static KNOWN: Mutex<Known> = Mutex::new(Vec::new());
    let key = (device, smem, cl);
    if let Some(&(_, n)) = KNOWN.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == key) {
        return Ok(n);
    }
    let n = cuda::max_active_clusters(f, (WG_THREADS, 1, 1), smem, (cl, 1, 1))?.max(1);
    KNOWN.lock().unwrap_or_else(|e| e.into_inner()).push((key, n));
    Ok(n)
}

/// Queues the product; `after_copy`: the stream's last kernel is one of
/// `pack`'s staging copies, which start their dependents early.
#[allow(clippy::too_many_arguments)]
pub(super) fn launch(q: &GemmParams, dtype: DType, plan: WgPlan, a_k: bool, b_k: bool, after_copy: bool, device: usize, stream: usize) -> Result<()> {
    let mut q = *q;
    let bk = plan::wg_bk(dtype.size() as i64);
    let sum = if plan.k_cluster {
        if !plan::k_cluster_able(&plan.tile) || !matches!(plan.splits, 2 | 4) || plan.cluster > 1 {
            return Err(Error::runtime(format!("no Hopper kernel sums {} K ranges of tile {:?} in a cluster", plan.splits, plan.tile)));
        }
        SplitSum::Cluster
    } else {
        SplitSum::InPlace { bm: plan.tile.bm, bn: plan.tile.bn }
    };
    let _ws = set_splits(&mut q, plan.splits, bk, sum, device)?;
    // (Split K queues a fill of its counters after the copy.)
    let after_copy = after_copy && q.splits == 1;
    // Cooperative 16-bit tiles stage a plain unit-stride output in shared
    // memory, then store it with TMA (1) where its rows are 16-byte aligned,
    // else (2) each row shifted to its global alignment, copied out by the
    // warps in 16-byte vectors. (N = 4095 against its aligned neighbour on
    // the H100: 0.72 stored from registers two bytes at a time, 0.80 with
    // the warps copying two bytes at a time, 0.85 with a bulk copy per row;
    // on the H200 the vectors cut the kernel's extra time from 17.0 to 13.3
    // us, fewer instructions to about 9: bench/explore/unaligned-out/,
    // tma-rows/.)
    let out_ok = |s: i64| (s * dtype.size() as i64) % 16 == 0;
    let tma_ok = out_ok(q.scm) && (q.batch == 1 || out_ok(q.scb)) && q.c.is_multiple_of(16);
    // Accumulating, staged only where TMA stores the whole tile (1), with its
    // reduce-add: in (2) the threads store each row's unaligned ends, which
    // would need loading first.
    // (`out_bytes` 0: ping-pong and TF32 tiles, and `WGQ`'s
    // 96-wide one, store from registers.)
    let staged = plan.tile.out_bytes(dtype.size() as i64) > 0
        && !plan.a_reg
        && (q.beta == 0 || tma_ok)
        && q.scn == 1
        && q.scm >= q.n
        && overrides::get(Knob::MatmulTmaStore).as_deref() != Some("off");
    q.tma_store = match (staged, tma_ok) {
        (false, _) => 0,
        (true, true) => 1,
        (true, false) => 2,
    };
    if plan.share_a && (plan.a_reg || plan.cluster != 2) {
        return Err(Error::runtime(format!("no Hopper kernel shares A in clusters of {} (register A: {})", plan.cluster, plan.a_reg)));
    }
    q.share_a = plan.share_a as i64;
    let share_a = plan.share_a;
    let q = &q;
    let (m, n, k, batch) = (q.m as u64, q.n as u64, q.k as u64, q.batch as u64);
    let (es, bk, bn) = (dtype.size() as u64, bk as u32, plan.tile.bn);
    // Batch strides in bytes; with one batch any multiple of 16 will do.
    let bstride = |s: i64, span: u64| if batch == 1 { (span * es).div_ceil(16).max(1) * 16 } else { s as u64 * es };
    // float32 operands are TF32's, rounded by the loads (`tf32` matters for float32 alone; its output has no map).
    let map = |ptr: u64, dims: [u64; 3], strides: [u64; 2], boxes: [u32; 3]| tensor_map(dtype, true, ptr, dims, strides, boxes, true, GEMM_L2_PROMOTION);
    let tm_a = if plan.a_reg {
        // 32 M-elements (128 bytes) per box row, BK k-lines.
        map(q.a, [m, k, batch], [q.sak as u64 * es, bstride(q.sab, k * q.sak as u64)], [32, bk, 1])?
    } else if a_k {
        map(q.a, [k, m, batch], [q.sam as u64 * es, bstride(q.sab, m * q.sam as u64)], [bk, if share_a { plan.tile.bm / 2 } else { plan.tile.bm } as u32, 1])?
    } else {
        // 64 M-elements (128 bytes) per box row: 16-bit types only.
        map(q.a, [m, k, batch], [q.sak as u64 * es, bstride(q.sab, k * q.sak as u64)], [64, bk, 1])?
    };
    // In pairs each block loads half of the shared tile: of a K-major A's
    // rows (above) or B's; a B tile over 256 wide (a TMA box's most) is
    // loaded in two halves anyway.
    let b_rows = if (plan.cluster > 1 && !share_a) || bn > 256 { bn / 2 } else { bn } as u32;
    let tm_b = if b_k {
        map(q.b, [k, n, batch], [q.sbn as u64 * es, bstride(q.sbb, n * q.sbn as u64)], [bk, b_rows, 1])?
    } else {
        // 64 N-elements (128 bytes) per box row: 16-bit types only.
        map(q.b, [n, k, batch], [q.sbk as u64 * es, bstride(q.sbb, k * q.sbk as u64)], [64, bk, 1])?
    };
    let tm_c = if q.tma_store == 1 {
        // One consumer's 64-row half in boxes of `c_box` columns (16: 32-byte rows, unswizzled).
        let c_box = plan.tile.c_box();
        let (dims, strides) = ([n, m, batch], [q.scm as u64 * es, bstride(q.scb, m * q.scm as u64)]);
        tensor_map(dtype, true, q.c, dims, strides, [c_box as u32, 64, 1], c_box == 64, GEMM_L2_PROMOTION)?
    } else {
        sys::CUtensorMap { opaque: tm_a.opaque } // not read
    };
    if plan.tile.b_k_only() && !b_k {
        return Err(Error::runtime(format!("no Hopper kernel of tile {:?} reads an N-major B", plan.tile)));
    }
    let (list, table) = match plan.tile.kind() {
        "wgh" if WGW.contains(&plan.tile) => (&WGW[..], &WGW_KERNELS[..]),
        "wgh" => (&WGH[..], &WGH_KERNELS[..]),
        _ if plan.k_cluster => (&WGK[..], &WGK_KERNELS[..]),
        "wgp" => (&WGP[..], &WGP_KERNELS[..]),
        "wg" if WGX.contains(&plan.tile) => (&WGX[..], &WGX_KERNELS[..]),
        "wg" if WGQ.contains(&plan.tile) => (&WGQ[..], &WGQ_KERNELS[..]),
        _ => (&WG[..], &WG_KERNELS[..]),
    };
    let Some(width) = list.iter().position(|t| *t == plan.tile) else {
        return Err(Error::runtime(format!("no Hopper kernel with tile {:?}", plan.tile)));
    };
    let kernels = &table[width];
    let layout = (!a_k as usize) * 2 + !b_k as usize;
    let f = match (dtype, &kernels.tf32_kk, &kernels.tf32_reg) {
        (DType::F32, _, Some(reg)) if plan.a_reg && b_k => reg,
        (DType::F32, Some(kk), _) if !plan.a_reg && a_k && b_k => kk,
        (DType::BF16, ..) => &kernels.bf16[layout],
        (DType::F16, ..) => &kernels.f16[layout],
        _ => return Err(Error::runtime(format!("the Hopper kernel has no {dtype:?} variant with this layout"))),
    };
    let smem = plan.tile.smem(dtype.size() as i64);
    let f = f.function_smem(device, smem)?;
    // Persistent blocks (clusters), one per SM (the shared memory allows no
    // more); an item is a column of `cluster` tiles (a row, sharing A), or one tile whose K
    // ranges are the cluster's `kcl` blocks.
    let (per_m, per_n) = if share_a { (1, plan.cluster) } else { (plan.cluster.max(1), 1) };
    let items = cdiv(cdiv(q.m, plan.tile.bm), per_m) * cdiv(cdiv(q.n, bn), per_n) * q.batch * q.splits;
    let cl = plan.cluster.max(q.kcl).max(1);
    if items > i32::MAX as i64 {
        return Err(Error::value(format!("matmul: {items} work items are more than the Hopper kernel counts (split K less)")));
    }
    let block = (WG_THREADS, 1, 1);
    let mut params = [cuda::arg(&tm_a), cuda::arg(&tm_b), cuda::arg(&tm_c), cuda::arg(q)];
    let grid = if cl > 1 {
        items.min(max_clusters(f, device, smem, cl as u32)? as i64).max(1) * cl
    } else {
        items.min(cuda::device_info(device)?.sms as i64).max(1)
    };
    let grid = (grid as u32, 1, 1);
    // After a staging copy, a programmatic dependent of it: the blocks set
    // up their barriers while it drains, then wait for it
    // (kernels/matmul_sm90a.cu).
    let opts = cuda::LaunchOpts { cluster: (cl as u32, 1, 1), after_previous: after_copy };
    cuda::launch_with(f, grid, block, smem, stream, opts, &mut params)
}
