//! The GEMM engine behind `matmul`, `bmm` (and any op that multiplies
//! matrices on CUDA): a batched, strided product described by [`Problem`],
//! run by [`run_cuda`] on one of this project's kernels:
//! - float16/bfloat16: tensor cores: the mma.sync kernels (kernels/matmul_tc.cu),
//!   or on compute capability 9.0 the wgmma + TMA kernel
//!   (kernels/matmul_sm90a.cu, built for sm_90a only) for large problems;
//! - float32: TF32 tensor cores when the caller says TF32 is allowed (the
//!   Hopper kernel, rounding the operands to TF32 first: see
//!   `sm90::try_tf32`; else mma.sync m16n8k8), else a register-blocked
//!   CUDA-core kernel (kernels/matmul_simt.cu);
//! - float64, and operands that are neither K- nor MN-contiguous with
//!   16-byte-aligned rows: the generic strided kernel (kernels/matmul.cu).
//!
//! Tiles are chosen by shape; problems with too few tiles to fill the GPU
//! split K across blocks (float32 partials, then a reduction kernel), and
//! skinny ones (M <= 16, or N <= 16 by computing the transposed product) use a
//! 16-row tile. `MYNS_MATMUL_KERNEL` (read once; `myns.set_override` in
//! tests) forces a choice for testing and tuning: `generic`, a tile name
//! (`256`, `128`, `64`, `16`; for the Hopper kernel `wg` with its automatic
//! width, `wg256`, `wg128`, `wg64`; its TF32 register-A form `wgr`, `wgr256`,
//! ...), optionally with a split count (`64/4`, `wg128/2`), `auto+wg` (the
//! automatic choice including the Hopper kernel, as it does by default: see
//! `WGMMA_BY_DEFAULT`) or `nowg` (without it).
//!
//! Depends on the launch layer (`cuda`) and the shared types only; errors
//! carry no op name (the calling op adds it).

use crate::cuda::{self, Kernel};
use crate::kernels;
use crate::overrides::{self, Knob};
use crate::types::{DType, Error, Result};
use tch::Tensor;

mod sm90;

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
    /// The split-K partials are stored `[N][M]` (nonzero; the register-A Hopper kernel).
    ws_nm: i64,
}

impl GemmParams {
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

/// A block tile of the fast kernels; the numbers must match the kernel
/// instantiations (they size the dynamic shared memory).
#[derive(Clone, Copy, Debug)]
struct Tile {
    name: &'static str,
    bm: i64,
    bn: i64,
    bk: i64,
    stages: i64,
    threads: u32,
    /// Blocks of this tile one SM runs at once (its __launch_bounds__ minimum).
    per_sm: i64,
    /// Relative throughput of one SM on this tile (big tiles reuse more).
    eff: f64,
}

#[allow(clippy::too_many_arguments)]
const fn tile(name: &'static str, bm: i64, bn: i64, bk: i64, stages: i64, threads: u32, per_sm: i64, eff: f64) -> Tile {
    Tile { name, bm, bn, bk, stages, threads, per_sm, eff }
}

/// kernels/matmul_tc.cu `MYNS_TC_HALF`.
const HALF_TILES: [Tile; 4] = [
    tile("256", 128, 256, 32, 3, 256, 1, 1.0),
    tile("128", 128, 128, 32, 4, 128, 2, 0.9),
    tile("64", 64, 64, 32, 4, 128, 3, 0.55),
    tile("16", 16, 128, 64, 4, 128, 2, 0.2),
];
/// kernels/matmul_tc.cu `MYNS_TC(tf32, ...)`.
const TF32_TILES: [Tile; 4] = [
    tile("256", 128, 256, 16, 3, 256, 1, 1.0),
    tile("128", 128, 128, 16, 4, 128, 2, 0.9),
    tile("64", 64, 64, 16, 4, 128, 3, 0.55),
    tile("16", 16, 128, 32, 4, 128, 2, 0.2),
];
/// kernels/matmul_simt.cu `MYNS_SIMT` (stages: the double buffer). The 128
/// tile at two blocks per SM (a 128-register cap) ran no faster on the H100
/// (4096^3: 0.71 of cuBLAS either way).
const SIMT_TILES: [Tile; 3] = [
    tile("128", 128, 128, 8, 2, 256, 1, 1.0),
    tile("64", 64, 64, 16, 2, 64, 6, 0.5),
    tile("16", 16, 128, 32, 2, 128, 3, 0.3),
];

/// Dynamic shared memory of a tensor-core tile (matmul_tc.cu `TcTile`).
fn tc_smem(t: &Tile, elem: i64, a_k: bool, b_k: bool) -> u32 {
    let vec = 16 / elem;
    let a = if a_k { t.bm * (t.bk + vec) } else { t.bk * (t.bm + 8) };
    let b = if b_k { t.bn * (t.bk + vec) } else { t.bk * (t.bn + 8) };
    (t.stages * (a + b) * elem) as u32
}

/// Dynamic shared memory of a CUDA-core tile (matmul_simt.cu `simt_gemm`).
fn simt_smem(t: &Tile) -> u32 {
    (2 * t.bk * ((t.bm + 4) + (t.bn + 4)) * 4) as u32
}

/// Four kernels of one tile, by layout: `kk`, `kn`, `mk`, `mn` (see matmul_tc.cu).
type Layouts = [Kernel; 4];

macro_rules! layouts {
    ($module:path, $prefix:literal) => {
        [
            Kernel::new(&$module, concat!($prefix, "_kk")),
            Kernel::new(&$module, concat!($prefix, "_kn")),
            Kernel::new(&$module, concat!($prefix, "_mk")),
            Kernel::new(&$module, concat!($prefix, "_mn")),
        ]
    };
}

static TC_F16: [Layouts; 4] = [
    layouts!(kernels::MATMUL_TC, "mm_tc_f16_256"),
    layouts!(kernels::MATMUL_TC, "mm_tc_f16_128"),
    layouts!(kernels::MATMUL_TC, "mm_tc_f16_64"),
    layouts!(kernels::MATMUL_TC, "mm_tc_f16_16"),
];
static TC_BF16: [Layouts; 4] = [
    layouts!(kernels::MATMUL_TC, "mm_tc_bf16_256"),
    layouts!(kernels::MATMUL_TC, "mm_tc_bf16_128"),
    layouts!(kernels::MATMUL_TC, "mm_tc_bf16_64"),
    layouts!(kernels::MATMUL_TC, "mm_tc_bf16_16"),
];
static TC_TF32: [Layouts; 4] = [
    layouts!(kernels::MATMUL_TC, "mm_tc_tf32_256"),
    layouts!(kernels::MATMUL_TC, "mm_tc_tf32_128"),
    layouts!(kernels::MATMUL_TC, "mm_tc_tf32_64"),
    layouts!(kernels::MATMUL_TC, "mm_tc_tf32_16"),
];
static SIMT_F32: [Layouts; 3] = [
    layouts!(kernels::MATMUL_SIMT, "mm_simt_f32_128"),
    layouts!(kernels::MATMUL_SIMT, "mm_simt_f32_64"),
    layouts!(kernels::MATMUL_SIMT, "mm_simt_f32_16"),
];
static GENERIC: cuda::DTypeKernels = crate::cuda::dtype_kernels!(kernels::MATMUL, "matmul");
static REDUCE: cuda::DTypeKernels = crate::cuda::dtype_kernels!(kernels::MATMUL_TC, "mm_splitk_reduce");

/// How the fast kernels can read one operand with `rows` rows (m for a, n
/// for b) and reduction length `k`, strides `sr`/`sk`/`sbatch` (elements):
/// `Some(true)` K-contiguous, `Some(false)` rows-contiguous, both with
/// 16-byte-aligned rows (and batches); `None`: only the generic kernel can.
#[allow(clippy::too_many_arguments)]
fn operand_layout(ptr: usize, batch: i64, rows: i64, k: i64, sbatch: i64, sr: i64, sk: i64, elem: i64) -> Option<bool> {
    let vec = 16 / elem;
    let aligned = |stride: i64, len: i64| len <= 1 || stride % vec == 0;
    if !ptr.is_multiple_of(16) || !aligned(sbatch, batch) {
        return None;
    }
    if (sk == 1 || k == 1) && aligned(sr, rows) {
        Some(true)
    } else if (sr == 1 || rows == 1) && aligned(sk, k) {
        Some(false)
    } else {
        None
    }
}

/// Whether the automatic choice may use the Hopper (wgmma) kernel (it passed
/// tests/python/test_matmul_kernels.py on an H100, and runs 2.4x the
/// mma.sync kernels at 4096 cubed). `MYNS_MATMUL_KERNEL=nowg` leaves it out.
const WGMMA_BY_DEFAULT: bool = true;

/// What `MYNS_MATMUL_KERNEL` asks for (testing and tuning).
#[derive(Clone, Debug, PartialEq)]
enum Force {
    /// The automatic choice, with or without the Hopper kernel.
    Auto { wgmma: bool },
    Generic,
    Tile(String, Option<i64>),
}

fn forced() -> Force {
    let Some(v) = overrides::get(Knob::MatmulKernel) else { return Force::Auto { wgmma: WGMMA_BY_DEFAULT } };
    match v.trim() {
        "" | "auto" => Force::Auto { wgmma: WGMMA_BY_DEFAULT },
        "auto+wg" => Force::Auto { wgmma: true },
        "nowg" => Force::Auto { wgmma: false },
        "generic" => Force::Generic,
        s => {
            let (name, splits) = match s.split_once('/') {
                Some((n, k)) => (n, k.parse().ok()),
                None => (s, None),
            };
            Force::Tile(name.to_string(), splits)
        }
    }
}

/// Ceiling division of non-negative numbers.
pub(crate) fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// `(splits, k_chunk)` cutting `k` into at most `splits` ranges that are
/// multiples of `bk`.
fn split_k(k: i64, splits: i64, bk: i64) -> (i64, i64) {
    let splits = splits.clamp(1, k.max(1));
    let chunk = cdiv(cdiv(k, splits), bk) * bk;
    let chunk = chunk.max(bk);
    (cdiv(k, chunk).max(1), chunk)
}

/// Split count that brings `blocks` up to about `target`, keeping at least
/// `min_k` of K per split.
fn auto_splits(blocks: i64, target: i64, k: i64, min_k: i64) -> i64 {
    if blocks >= target {
        return 1;
    }
    cdiv(target, blocks.max(1)).min((k / min_k).max(1)).min(32)
}

fn tiles_of(t: &Tile, m: i64, n: i64, batch: i64) -> i64 {
    cdiv(m, t.bm) * cdiv(n, t.bn) * batch
}

/// Index into `tiles` of the tile with the shortest modelled time for an
/// `m x n` output (ignoring the 16-row tile), and its split count.
fn choose_tile(tiles: &[Tile], m: i64, n: i64, k: i64, batch: i64, sms: i64) -> (usize, i64) {
    let mut best = (0, f64::INFINITY);
    for (i, t) in tiles.iter().enumerate().filter(|(_, t)| t.bm > 16) {
        let count = tiles_of(t, m, n, batch);
        let slots = sms * t.per_sm;
        let waves = cdiv(count, slots) as f64;
        let time = waves * (t.bm * t.bn * t.per_sm) as f64 / t.eff;
        if time < best.1 * 0.999 {
            best = (i, time);
        }
    }
    let t = &tiles[best.0];
    let count = tiles_of(t, m, n, batch);
    let splits = if count < sms { auto_splits(count, sms * t.per_sm, k, 4 * t.bk.max(64)) } else { 1 };
    (best.0, splits)
}

/// Runs `p` on CUDA device `device`, queued on `stream` (PyTorch's current
/// stream there); `tf32`: float32 may use TF32 tensor cores (PyTorch's
/// `torch.backends.cuda.matmul.allow_tf32`). Workspaces come from PyTorch's
/// caching allocator, so the launch can be captured in a CUDA graph.
pub(crate) fn run_cuda(p: &Problem, dtype: DType, tf32: bool, device: usize, stream: usize) -> Result<()> {
    if p.m == 0 || p.n == 0 || p.batch == 0 {
        return Ok(());
    }
    let elem = dtype.size() as i64;
    let mut q = GemmParams {
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
        ws_nm: 0,
    };
    let force = forced();
    let a_layout = operand_layout(p.a, p.batch, p.m, p.k, p.sa[0], p.sa[1], p.sa[2], elem);
    let b_layout = operand_layout(p.b, p.batch, p.n, p.k, p.sb[0], p.sb[2], p.sb[1], elem);
    let fast = dtype != DType::F64 && p.k > 0 && force != Force::Generic;
    let (Some(mut a_k), Some(mut b_k), true) = (a_layout, b_layout, fast) else {
        return launch_generic(&q, dtype, device, stream);
    };
    let info = cuda::device_info(device)?;
    let sms = info.sms as i64;

    // Skinny in N: compute c^T = b^T @ a^T, whose M is small, writing c
    // through transposed strides.
    let skinny = |m: i64| m <= 16;
    if !skinny(p.m) && skinny(p.n) && !matches!(&force, Force::Tile(..)) {
        q = q.transposed();
        (a_k, b_k) = (b_k, a_k);
    }

    if matches!(dtype, DType::F16 | DType::BF16) {
        if let Some(plan) = sm90::plan(&q, dtype, a_k, b_k, &force, &info) {
            return sm90::launch(&q, dtype, plan, device, stream, b_k);
        }
    }
    let use_tf32 = dtype == DType::F32 && tf32;
    if use_tf32 && sm90::try_tf32(&q, &force, &info, device, stream)? {
        return Ok(());
    }
    let (tiles, table): (&[Tile], &[Layouts]) = match dtype {
        DType::F16 => (&HALF_TILES, &TC_F16),
        DType::BF16 => (&HALF_TILES, &TC_BF16),
        DType::F32 if use_tf32 => (&TF32_TILES, &TC_TF32),
        _ => (&SIMT_TILES, &SIMT_F32),
    };
    let simt = dtype == DType::F32 && !use_tf32;
    let last = tiles.len() - 1; // the 16-row tile
    let (idx, splits) = match &force {
        Force::Tile(name, splits) => {
            let Some(i) = tiles.iter().position(|t| t.name == name) else {
                // `wg*` on a problem or device the Hopper kernel cannot take, or
                // a name this dtype has no tile for: the automatic choice.
                let choice = auto_choice(tiles, &q, sms, simt);
                return launch_tiles(&mut q, tiles, table, choice, elem, simt, dtype, a_k, b_k, device, stream);
            };
            (i, splits.unwrap_or(1))
        }
        _ => {
            if skinny(q.m) {
                let count = tiles_of(&tiles[last], q.m, q.n, q.batch);
                (last, auto_splits(count, 2 * sms * tiles[last].per_sm, q.k, 256))
            } else {
                auto_choice(tiles, &q, sms, simt)
            }
        }
    };
    launch_tiles(&mut q, tiles, table, (idx, splits), elem, simt, dtype, a_k, b_k, device, stream)
}

fn auto_choice(tiles: &[Tile], q: &GemmParams, sms: i64, simt: bool) -> (usize, i64) {
    let last = tiles.len() - 1;
    if q.m <= 16 {
        let count = tiles_of(&tiles[last], q.m, q.n, q.batch);
        return (last, auto_splits(count, 2 * sms * tiles[last].per_sm, q.k, 256));
    }
    if simt {
        // The 128 tile where it fills the SMs; else 64 x 64 tiles split over
        // K towards three blocks per SM (a CUDA-core tile has little reuse to
        // lose, and small problems otherwise leave most SMs idle: on the
        // H100, M = 128, K = N = 4096 ran at 0.21 of cuBLAS on the 128 tile,
        // 0.54 on 64 x 64 in 2 splits, 0.66 in 4).
        if tiles_of(&tiles[0], q.m, q.n, q.batch) >= sms {
            return (0, 1);
        }
        let small = tiles.iter().position(|t| t.name == "64").unwrap_or(0);
        let count = tiles_of(&tiles[small], q.m, q.n, q.batch);
        return (small, auto_splits(count, 3 * sms, q.k, 64));
    }
    choose_tile(tiles, q.m, q.n, q.k, q.batch, sms)
}

#[allow(clippy::too_many_arguments)]
fn launch_tiles(
    q: &mut GemmParams,
    tiles: &[Tile],
    table: &[Layouts],
    (idx, splits): (usize, i64),
    elem: i64,
    simt: bool,
    dtype: DType,
    a_k: bool,
    b_k: bool,
    device: usize,
    stream: usize,
) -> Result<()> {
    let t = &tiles[idx];
    let _ws = set_splits(q, splits, t.bk, device)?;
    let kernel = &table[idx][(!a_k as usize) * 2 + !b_k as usize];
    let smem = if simt { simt_smem(t) } else { tc_smem(t, elem, a_k, b_k) };
    let f = kernel.function_smem(device, smem)?;
    let grid_x = tiles_of(t, q.m, q.n, 1);
    if grid_x > i32::MAX as i64 {
        return Err(Error::runtime(format!("the product is too large for one launch ({} x {})", q.m, q.n)));
    }
    let grid_z = (q.batch * q.splits).min(65_535);
    let mut params = [cuda::arg(q)];
    cuda::launch(f, (grid_x as u32, 1, grid_z as u32), (t.threads, 1, 1), smem, stream, &mut params)?;
    reduce_splits(q, dtype, device, stream)
}

/// Sets `q`'s split-K fields for about `splits` ranges of K (whole k-tiles
/// of `bk`), and for more than one allocates the float32 partials through
/// PyTorch; the caller keeps the workspace alive until the launches are queued.
fn set_splits(q: &mut GemmParams, splits: i64, bk: i64, device: usize) -> Result<Option<Tensor>> {
    let (splits, chunk) = split_k(q.k, splits, bk);
    q.splits = splits;
    q.k_chunk = chunk;
    if splits == 1 {
        return Ok(None);
    }
    let ws = Tensor::f_empty([q.batch * splits * q.m * q.n], (tch::Kind::Float, tch::Device::Cuda(device)))
        .map_err(|e| Error::from(e).context("split-K workspace allocation failed"))?;
    q.ws = ws.data_ptr() as u64;
    Ok(Some(ws))
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

