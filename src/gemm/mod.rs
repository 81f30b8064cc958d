//! The GEMM engine behind `matmul`, `bmm` (and any op that multiplies
//! matrices on CUDA): a batched, strided product described by [`Problem`],
//! run by [`run_cuda`] on one of this project's kernels:
//! - float16/bfloat16/float32 with at most 16 rows (or columns, computed as
//!   c^T = b^T a^T), compute capability 9.0 and newer: the skinny kernel
//!   (kernels/gemm_skinny.cu: the weights streamed once, K split across a
//!   thread-block cluster, or, from 16 column strips on, streamed through
//!   TMA into a ring of shared-memory stages, which also takes 17 to 64
//!   rows on mma consumers: 16-bit types to 32 rows, and to 64 on more
//!   strips than SMs; TF32 to 64);
//! - float16/bfloat16 on compute capability 9.0: the wgmma + TMA kernels
//!   (kernels/matmul_sm90a.cu, built for sm_90a only), cooperative or
//!   ping-pong; elsewhere, and for few rows, the mma.sync kernels
//!   (kernels/matmul_tc.cu);
//! - float32: TF32 tensor cores when the caller says TF32 is allowed (the
//!   Hopper kernel, whose TMA loads round the operands to TF32: see
//!   `sm90::try_tf32`; else mma.sync m16n8k8), else, on compute capability
//!   9.x where its model says it pays (`plan::x64_splits`), mma.sync
//!   m16n8k8 on the FP64 tensor cores (exact products, float64 sums; split
//!   over K where its tiles would leave SMs idle), else a register-blocked
//!   CUDA-core kernel (kernels/matmul_simt.cu);
//! - float64, K = 0, and products too small for any set-up to pay
//!   (`plan::tiny`): the generic strided kernel (kernels/matmul.cu).
//!
//! Operands whose rows are not 16-byte aligned, or that have no unit stride,
//! are first staged through aligned copies (`pack`), so every shape and
//! stride stays on tensor cores. Tiles, splits and kernels are chosen by
//! pure functions of the shape (`plan`); the kernels' parameter tables live
//! once in `tiles`. `MYNS_MATMUL_KERNEL` (read once; `myns.set_override` in
//! tests) forces a choice for testing and tuning: `generic`, a tile name
//! (`256`, `128`, `64`, `16`; float32 on the FP64 tensor cores: `x128`), a Hopper tile (`wg` with its automatic width,
//! `wg256`, `wg192`, `wg128`, `wg64`, `wg320`; for one wave, 16-bit with B
//! K-major, `wg96`, `wg112`, `wg144`, `wg160`, `wg176`; ping-pong `wgp`, `wgp128`, `wgp64`, on
//! 64-row tiles `wgh128`, `wgh64`, `wgh144` (16-bit, B K-major); TF32's
//! register-A form `wgr`, `wgr256`, ...; a Hopper tile ending in `c2` or
//! `c1` runs in pairs of blocks sharing B or alone: `wg256c2`; in `n2`, in
//! pairs side by side sharing A: `wg64n2`), optionally with a
//! split count (`64/4`, `wg128/2`), `skinny` (optionally `/<blocks per cluster>`;
//! `skinny_tma`: its streaming build, for weights TMA can read; `skinny_tma16`,
//! `skinny_tma8`, `skinny_tma4`: on that ring),
//! `auto`, or `nowg` (the automatic choice without the Hopper kernels).
//!
//! Depends on the launch layer (`cuda`) and the shared types only; errors
//! carry no op name (the calling op adds it).

use crate::cuda::{self, Kernel};
use crate::kernels;
use crate::overrides::{self, Knob};
use crate::types::{DType, Error, Result};
use tch::Tensor;

mod pack;
mod plan;
mod skinny;
mod sm90;
/// The GEMM kernels' parameter tables, defined once: build.rs writes the
/// kernels' header (`gemm_tiles.h`) and their Rust handles from them (its
/// generators are used there and in tests only).
#[allow(dead_code)]
pub(crate) mod tiles;

use pack::Operand;
use plan::{cdiv, operand_layout, Force, Layout};
use tiles::Tile;

/// `out[b] = a[b] @ b[b]` for `b` in `0..batch`: `a[b]` is `[m, k]`, `b[b]` is
/// `[k, n]`, with element strides `sa = [batch, m, k]`, `sb = [batch, k, n]`;
/// `out` is a fresh contiguous `[batch, m, n]`. Addresses of the first elements.
pub(crate) struct Problem {
    pub a: usize,
    pub b: usize,
    pub out: usize,
    pub batch: i64,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub sa: [i64; 3],
    pub sb: [i64; 3],
}

/// Launch parameters; mirrors `myns::GemmParams` in kernels/matmul_common.cuh
/// field for field (all 8 bytes wide).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GemmParams {
    a: u64,
    b: u64,
    c: u64,
    ws: u64,
    m: i64,
    n: i64,
    k: i64,
    sam: i64,
    sak: i64,
    sbk: i64,
    sbn: i64,
    scm: i64,
    scn: i64,
    sab: i64,
    sbb: i64,
    scb: i64,
    batch: i64,
    splits: i64,
    k_chunk: i64,
    /// Split K summed in the kernel: the arrival counters (`SplitSum::InPlace`).
    flags: u64,
    /// 1: `c += a @ b` (every kernel's epilogue, or the split-K reduction,
    /// reads the old element and adds it before the one rounding); 0: `c = a @ b`.
    beta: i64,
    /// Nonzero: the Hopper cooperative 16-bit kernels stage the output in
    /// shared memory, then store it with TMA (1) or copy it out with the
    /// warps, each row shifted to its global alignment (2: rows TMA cannot
    /// address); `sm90::launch` decides.
    tma_store: i64,
    /// 1, or the blocks of a cluster that each compute one of a tile's K
    /// ranges, summed through distributed shared memory (`sm90::launch`).
    kcl: i64,
    /// 1: clusters of two blocks compute tiles side by side, sharing A's
    /// tile (else one above the other, sharing B's; `sm90::launch`).
    share_a: i64,
}

impl GemmParams {
    fn of(p: &Problem) -> GemmParams {
        GemmParams {
            a: p.a as u64,
            b: p.b as u64,
            c: p.out as u64,
            ws: 0,
            m: p.m,
            n: p.n,
            k: p.k,
            sam: p.sa[1],
            sak: p.sa[2],
            sbk: p.sb[1],
            sbn: p.sb[2],
            scm: p.n,
            scn: 1,
            sab: p.sa[0],
            sbb: p.sb[0],
            scb: p.m * p.n,
            batch: p.batch,
            splits: 1,
            k_chunk: p.k.max(1),
            flags: 0,
            beta: 0,
            tma_store: 0,
            kcl: 1,
            share_a: 0,
        }
    }

    /// The same product as c^T = b^T a^T: b^T is the new A, a^T the new B,
    /// and c is written through transposed strides.
    fn transposed(&self) -> GemmParams {
        GemmParams {
            a: self.b,
            b: self.a,
            m: self.n,
            n: self.m,
            sam: self.sbn,
            sak: self.sbk,
            sbk: self.sak,
            sbn: self.sam,
            scm: self.scn,
            scn: self.scm,
            sab: self.sbb,
            sbb: self.sab,
            ..*self
        }
    }
}

/// Four kernels of one tile, by layout: `kk`, `kn`, `mk`, `mn` (a K- or
/// M-contiguous, b K- or N-contiguous).
type Layouts = [Kernel; 4];

/// The Hopper kernels of one tile: bf16 and f16 in the four layouts; TF32
/// with K-major operands (cooperative tiles) and in the register-A form
/// (cooperative and 64-row tiles).
struct WgKernels {
    bf16: Layouts,
    f16: Layouts,
    tf32_kk: Option<Kernel>,
    tf32_reg: Option<Kernel>,
}

// TC_F16, TC_BF16, TC_TF32, TC_X64, SIMT_F32, WG_KERNELS, WGX_KERNELS, WGQ_KERNELS, WGP_KERNELS, WGH_KERNELS, WGW_KERNELS, WGK_KERNELS, SKINNY_KERNELS, SKINNY_TMA_KERNELS,
// in the order of the tables in `tiles`.
include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs"));

static GENERIC: cuda::DTypeKernels = crate::cuda::dtype_kernels!(kernels::MATMUL, "matmul");
static REDUCE: cuda::DTypeKernels = crate::cuda::dtype_kernels!(kernels::MATMUL_TC, "mm_splitk_reduce");

/// The forced choice, and whether the value ends in `+acc`: for testing the
/// accumulate epilogues through matmul/bmm, the product is then added once
/// more through [`run_cuda_accumulate`]'s path (out = 2 a @ b).
fn forced() -> (Force, bool) {
    let v = overrides::get(Knob::MatmulKernel);
    let (v, again) = plan::split_acc(v.as_deref());
    (plan::parse_force(v), again)
}

/// Runs `p` on CUDA device `device`, queued on `stream` (PyTorch's current
/// stream there); `tf32`: float32 may use TF32 tensor cores (PyTorch's
/// `torch.backends.cuda.matmul.allow_tf32`). Workspaces and staging copies
/// come from PyTorch's caching allocator, so the launch can be captured in
/// a CUDA graph.
pub(crate) fn run_cuda(p: &Problem, dtype: DType, tf32: bool, device: usize, stream: usize) -> Result<()> {
    let (force, again) = forced();
    run(p, dtype, tf32, false, &force, device, stream)?;
    if again {
        run(p, dtype, tf32, true, &force, device, stream)?;
    }
    Ok(())
}

/// As [`run_cuda`], but adds the product into `p.out` (`out[b] += a[b] @
/// b[b]`, beta = 1) instead of overwriting it: `out` must hold the values to
/// add to (contiguous `[batch, m, n]`, not overlapping `a` or `b`): e.g. a
/// weight gradient summed over chunks with no temporary of its size. Most
/// kernels round each element once, after the old value is added to the
/// float32 (or float64) sum; the cooperative Hopper kernels with 16-byte
/// aligned output rows round the sum to the output type and add it with
/// TMA's reduce-add store, which rounds once more (on the H100 the register
/// epilogue cost about 4 us per 128 x 192 tile). K = 0 leaves `out` as it is.
pub(crate) fn run_cuda_accumulate(p: &Problem, dtype: DType, tf32: bool, device: usize, stream: usize) -> Result<()> {
    run(p, dtype, tf32, true, &forced().0, device, stream)
}

fn run(p: &Problem, dtype: DType, tf32: bool, accumulate: bool, force: &Force, device: usize, stream: usize) -> Result<()> {
    if p.m == 0 || p.n == 0 || p.batch == 0 || (accumulate && p.k == 0) {
        return Ok(());
    }
    let mut q = GemmParams::of(p);
    q.beta = accumulate as i64;
    let force = force.clone();
    let tiny = matches!(force, Force::Auto { .. }) && plan::tiny(p.m, p.n, p.k, p.batch, dtype.size() as i64);
    if dtype == DType::F64 || p.k == 0 || force == Force::Generic || tiny {
        return launch_generic(&q, dtype, device, stream);
    }
    let info = cuda::device_info(device)?;
    let sms = info.sms as i64;
    let forced_tma = match &force {
        Force::Tile(name, _) => plan::forced_skinny_tma(name),
        _ => None,
    };
    let forced_skinny = forced_tma.is_some() || matches!(&force, Force::Tile(name, _) if name == "skinny");
    let hopper = matches!(force, Force::Auto { hopper: true }) || matches!(&force, Force::Tile(..));

    // Skinny in N: compute c^T = b^T @ a^T, whose M is small, writing c
    // through transposed strides (not when a tile is forced, except the
    // skinny kernel).
    let skinny = |m: i64| m <= tiles::SKINNY_MAX_M;
    if !skinny(q.m) && skinny(q.n) && (!matches!(force, Force::Tile(..)) || forced_skinny) {
        q = q.transposed();
    }
    let half = matches!(dtype, DType::F16 | DType::BF16);
    // float32 too: exactly (FFMA) at the weights' streaming rate where TF32
    // is off, and in the register build; with TF32 allowed the streaming
    // build multiplies on the tensor cores, as 16-bit types do.
    let ffma = dtype == DType::F32 && !tf32;
    if (half || dtype == DType::F32) && info.cc.0 >= 9 && (forced_skinny || matches!(force, Force::Auto { hopper: true })) {
        let ranks = match &force {
            Force::Tile(_, r) => *r,
            _ => None,
        };
        // The streaming build where it streams faster, or where forced.
        let tma = match &force {
            Force::Tile(..) => forced_tma.is_some(),
            _ => plan::skinny_tma(q.m, q.n, q.k, q.batch, dtype.size() as i64, ffma, sms, q.sbk == 1),
        };
        let tma_plan = if tma {
            plan::skinny_tma_plan(q.m, q.n, q.k, q.batch, dtype.size() as i64, ffma, sms, ranks, forced_tma.flatten())
        } else {
            None
        };
        // (The register build takes at most 16 rows; the streaming one 64.)
        let plan = plan::skinny_plan(q.m, q.n, q.k, q.batch, sms, ranks);
        if (plan.is_some() || tma_plan.is_some()) && skinny::launch(&q, dtype, tf32, plan, tma_plan, device, stream)? {
            return Ok(());
        }
    }
    let use_tf32 = dtype == DType::F32 && tf32;
    if use_tf32 && hopper && sm90::try_tf32(&q, &force, &info, device, stream)? {
        return Ok(());
    }

    // Operands the tiled kernels cannot read in place go through aligned copies.
    let (a_k, a_buf) = readable(&mut q, true, dtype, device, stream)?;
    let (b_k, b_buf) = readable(&mut q, false, dtype, device, stream)?;

    if half && hopper {
        if let Some(plan) = sm90::plan(&q, dtype, a_k, b_k, &force, &info) {
            return sm90::launch(&q, dtype, plan, a_k, b_k, a_buf.is_some() || b_buf.is_some(), device, stream);
        }
    }
    // float32 with TF32 off on compute capability 9.x: the FP64 tensor cores
    // (as exact as the CUDA cores, and faster on the H100) where their model
    // says they pay, split over K as it says; forced by their own names (`x128`).
    let x64_able = dtype == DType::F32 && !use_tf32 && info.cc.0 == 9;
    let x64_auto = match &force {
        Force::Auto { .. } if x64_able => plan::x64_splits(&tiles::TC_X64[0], q.m, q.n, q.k, q.batch, sms),
        _ => None,
    };
    let x64 = x64_auto.is_some()
        || (x64_able && matches!(&force, Force::Tile(name, _) if plan::forced_tile(&tiles::TC_X64, name, None).is_some()));
    let (tiles, table): (&[Tile], &[Layouts]) = match dtype {
        DType::F16 => (&tiles::TC_HALF, &TC_F16),
        DType::BF16 => (&tiles::TC_HALF, &TC_BF16),
        DType::F32 if use_tf32 => (&tiles::TC_TF32, &TC_TF32),
        DType::F32 if x64 => (&tiles::TC_X64, &TC_X64),
        _ => (&tiles::SIMT, &SIMT_F32),
    };
    let simt = dtype == DType::F32 && !use_tf32 && !x64;
    let forced_choice = match &force {
        Force::Tile(name, splits) => plan::forced_tile(tiles, name, *splits),
        _ => None,
    };
    // `wg*` on a problem or device the Hopper kernel cannot take, or a name
    // this dtype has no tile for: the automatic choice.
    let auto = || match x64_auto {
        Some(splits) => (0, splits),
        None => plan::small_kernel_choice(tiles, q.m, q.n, q.k, q.batch, sms, simt),
    };
    let choice = forced_choice.unwrap_or_else(auto);
    launch_tiles(&mut q, tiles, table, choice, simt, dtype, a_k, b_k, device, stream)
}

/// Makes operand a (`is_a`) or b of `q` readable by the tiled kernels,
/// staging it through an aligned copy when needed (`pack`); returns whether
/// it is K-contiguous, and the copy's buffer to keep alive until the
/// launches are queued.
fn readable(q: &mut GemmParams, is_a: bool, dtype: DType, device: usize, stream: usize) -> Result<(bool, Option<Tensor>)> {
    let elem = dtype.size() as i64;
    let op = if is_a {
        Operand { ptr: q.a, batch: q.batch, rows: q.m, k: q.k, sb: q.sab, sr: q.sam, sk: q.sak }
    } else {
        Operand { ptr: q.b, batch: q.batch, rows: q.n, k: q.k, sb: q.sbb, sr: q.sbn, sk: q.sbk }
    };
    let layout = operand_layout(op.ptr as usize, op.batch, op.rows, op.k, op.sb, op.sr, op.sk, elem);
    match layout {
        Layout::KMajor => return Ok((true, None)),
        Layout::MnMajor => return Ok((false, None)),
        _ => {}
    }
    let (s, buf) = pack::stage(&op, layout, dtype, false, device, stream)?;
    if is_a {
        (q.a, q.sab, q.sam, q.sak) = (s.ptr, s.sb, s.sr, s.sk);
    } else {
        (q.b, q.sbb, q.sbn, q.sbk) = (s.ptr, s.sb, s.sr, s.sk);
    }
    Ok((s.sk == 1, Some(buf)))
}

#[allow(clippy::too_many_arguments)]
fn launch_tiles(
    q: &mut GemmParams,
    tiles: &[Tile],
    table: &[Layouts],
    (idx, splits): (usize, i64),
    simt: bool,
    dtype: DType,
    a_k: bool,
    b_k: bool,
    device: usize,
    stream: usize,
) -> Result<()> {
    let t = &tiles[idx];
    let _ws = set_splits(q, splits, t.bk, SplitSum::Kernel, device)?;
    let kernel = &table[idx][(!a_k as usize) * 2 + !b_k as usize];
    let elem = dtype.size() as i64;
    let smem = if simt { plan::simt_smem(t) } else { plan::tc_smem(t, elem, a_k, b_k) };
    let f = kernel.function_smem(device, smem)?;
    let threads = if simt { t.threads_simt() } else { t.threads_tc() };
    let grid_x = plan::tiles_of(t, q.m, q.n, 1);
    if grid_x > i32::MAX as i64 {
        return Err(Error::runtime(format!("the product is too large for one launch ({} x {})", q.m, q.n)));
    }
    let grid_z = (q.batch * q.splits).min(65_535);
    let mut params = [cuda::arg(q)];
    cuda::launch(f, (grid_x as u32, 1, grid_z as u32), (threads, 1, 1), smem, stream, &mut params)?;
    reduce_splits(q, dtype, device, stream)
}

/// Where a split launch's K ranges are summed.
#[derive(Clone, Copy)]
enum SplitSum {
    /// By `mm_splitk_reduce` after the launch (`reduce_splits`): float32
    /// partials `[batch][splits][M][N]`.
    Kernel,
    /// In the kernel (the Hopper kernels: the last block of a tile adds the
    /// ranges): a `bm` x `bn` float32 partial per tile and range, and one
    /// arrival counter per (tile, consumer), zeroed by a fill queued on the
    /// current stream.
    InPlace { bm: i64, bn: i64 },
    /// By the blocks of a cluster (the Hopper `mm_wgk*` and `mm_wgh*` kernels), one per
    /// range, through distributed shared memory: no workspace, and one work
    /// item per tile. The cluster has as many blocks as ranges were asked
    /// for; those past K's last range add zeros.
    Cluster,
}

/// Sets `q`'s split-K fields for about `splits` ranges of K (whole k-tiles
/// of `bk`), and for more than one allocates through PyTorch what `sum`
/// needs; the caller keeps the returned tensors alive until the launches
/// are queued.
fn set_splits(q: &mut GemmParams, splits: i64, bk: i64, sum: SplitSum, device: usize) -> Result<Vec<Tensor>> {
    let (count, chunk) = plan::split_k(q.k, splits, bk);
    q.k_chunk = chunk;
    // Float32 partials, and arrival counters (two per tile).
    let (floats, counters) = match sum {
        SplitSum::Cluster => {
            q.kcl = splits;
            return Ok(Vec::new());
        }
        SplitSum::Kernel => (q.batch * count * q.m * q.n, 0),
        SplitSum::InPlace { bm, bn } => {
            let tiles = q.batch * cdiv(q.m, bm) * cdiv(q.n, bn);
            (tiles * count * bm * bn, 2 * tiles)
        }
    };
    q.splits = count;
    if count == 1 {
        return Ok(Vec::new());
    }
    let cuda = tch::Device::Cuda(device);
    let failed = |e: tch::TchError| Error::from(e).context("split-K workspace allocation failed");
    let ws = Tensor::f_empty([floats], (tch::Kind::Float, cuda)).map_err(failed)?;
    q.ws = ws.data_ptr() as u64;
    if counters == 0 {
        return Ok(vec![ws]);
    }
    let flags = Tensor::f_zeros([counters], (tch::Kind::Int, cuda)).map_err(failed)?;
    q.flags = flags.data_ptr() as u64;
    Ok(vec![ws, flags])
}

/// Sums split-K partials into the output (nothing to do for one split).
fn reduce_splits(q: &GemmParams, dtype: DType, device: usize, stream: usize) -> Result<()> {
    if q.splits == 1 {
        return Ok(());
    }
    let f = REDUCE.get(dtype).function(device)?;
    let total = q.batch * q.m * q.n;
    let mut params = [cuda::arg(q)];
    cuda::launch(f, (cuda::grid_1d(total, 256), 1, 1), (256, 1, 1), 0, stream, &mut params)
}

fn launch_generic(q: &GemmParams, dtype: DType, device: usize, stream: usize) -> Result<()> {
    const TILE: i64 = 16;
    let f = GENERIC.get(dtype).function(device)?;
    let grid_x = cdiv(q.n, TILE);
    if grid_x > i32::MAX as i64 {
        return Err(Error::runtime(format!("the product has too many columns ({}) for one launch", q.n)));
    }
    let grid_y = cdiv(q.m, TILE).min(65_535);
    let grid_z = q.batch.min(65_535);
    let mut params = [cuda::arg(q)];
    cuda::launch(f, (grid_x as u32, grid_y as u32, grid_z as u32), (TILE as u32, TILE as u32, 1), 0, stream, &mut params)
}

