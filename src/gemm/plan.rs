//! Planning: which kernel, tile, split count and staging copies run a
//! product. Pure functions of the shape, layout, device figures and the
//! `MYNS_MATMUL_KERNEL` override, tested below; the launch code in
//! `mod.rs`, `sm90.rs` and `skinny.rs` only carries plans out.

use super::tiles::{
    Tile, WgTile, SKINNY_CLUSTERS, SKINNY_MAX_M, skinny_tma_built, SKINNY_NW, SKINNY_TMA_MAX_M, SKINNY_TMA_MT, SKINNY_TMA_STAGES, SKINNY_WARPS, WG, WGH, WGH_ALL, WGH_BM, WGK, WGP, WGQ, WGW, WGX, WG_ALL, WG_BM, WG_BK_BYTES,
};

/// Ceiling division of non-negative numbers.
pub(crate) fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// What `MYNS_MATMUL_KERNEL` asks for (testing and tuning).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Force {
    /// The automatic choice, with or without the Hopper kernels (wgmma and
    /// the skinny kernel).
    Auto { hopper: bool },
    Generic,
    /// A named kernel or tile, optionally with a split count (`64/3`,
    /// `wg128/2`, `skinny/4`: for the skinny kernel, blocks per cluster).
    Tile(String, Option<i64>),
}

/// Parses an override value (`None`: unset).
pub(crate) fn parse_force(v: Option<&str>) -> Force {
    match v.map(str::trim) {
        None | Some("" | "auto" | "auto+wg") => Force::Auto { hopper: true },
        Some("nowg") => Force::Auto { hopper: false },
        Some("generic") => Force::Generic,
        Some(s) => {
            let (name, splits) = match s.split_once('/') {
                Some((n, k)) => (n, k.trim().parse().ok()),
                None => (s, None),
            };
            Force::Tile(name.trim().to_string(), splits)
        }
    }
}

/// An override value without its `+acc` suffix, and whether it had one
/// (`wg128/2+acc`: run `wg128/2`, then add the product once more through
/// the accumulate path; testing only).
pub(crate) fn split_acc(v: Option<&str>) -> (Option<&str>, bool) {
    match v.map(str::trim) {
        Some(s) => match s.strip_suffix("+acc") {
            Some(rest) => (Some(rest), true),
            None => (Some(s), false),
        },
        None => (None, false),
    }
}

/// How a fast kernel can read one operand with `rows` rows (m for a, n for
/// b), reduction length `k`, element strides `sr`/`sk`/`sbatch`, first
/// element at byte address `ptr`, `elem` bytes per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// K-contiguous, rows (and batches, and the start) 16-byte aligned.
    KMajor,
    /// Rows-contiguous (M or N), k-lines 16-byte aligned.
    MnMajor,
    /// K-contiguous but misaligned: a same-orientation padded copy fixes it.
    KUnaligned,
    /// Rows-contiguous but misaligned: likewise.
    MnUnaligned,
    /// Neither dimension has unit stride: a gathering copy to K-major.
    Strided,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn operand_layout(ptr: usize, batch: i64, rows: i64, k: i64, sbatch: i64, sr: i64, sk: i64, elem: i64) -> Layout {
    let vec = 16 / elem;
    let aligned = |stride: i64, len: i64| len <= 1 || stride % vec == 0;
    let base_ok = ptr.is_multiple_of(16) && aligned(sbatch, batch);
    if sk == 1 || k == 1 {
        if base_ok && aligned(sr, rows) {
            Layout::KMajor
        } else {
            Layout::KUnaligned
        }
    } else if sr == 1 || rows == 1 {
        if base_ok && aligned(sk, k) {
            Layout::MnMajor
        } else {
            Layout::MnUnaligned
        }
    } else {
        Layout::Strided
    }
}

/// `(splits, k_chunk)` cutting `k` into at most `splits` ranges that are
/// multiples of `bk`.
pub(crate) fn split_k(k: i64, splits: i64, bk: i64) -> (i64, i64) {
    let splits = splits.clamp(1, k.max(1));
    let chunk = (cdiv(cdiv(k, splits), bk) * bk).max(bk);
    (cdiv(k, chunk).max(1), chunk)
}

/// Split count that brings `blocks` up to about `target`, keeping at least
/// `min_k` of K per split.
pub(crate) fn auto_splits(blocks: i64, target: i64, k: i64, min_k: i64) -> i64 {
    if blocks >= target {
        return 1;
    }
    cdiv(target, blocks.max(1)).min((k / min_k).max(1)).min(32)
}

pub(crate) fn tiles_of(t: &Tile, m: i64, n: i64, batch: i64) -> i64 {
    cdiv(m, t.bm) * cdiv(n, t.bn) * batch
}

/// Index into `tiles` of the tile with the shortest modelled time for an
/// `m x n` output (ignoring the 16-row tile), and its split count.
pub(crate) fn choose_tile(tiles: &[Tile], m: i64, n: i64, k: i64, batch: i64, sms: i64) -> (usize, i64) {
    let mut best = (0, f64::INFINITY);
    for (i, t) in tiles.iter().enumerate().filter(|(_, t)| t.bm > 16) {
        let count = tiles_of(t, m, n, batch);
        let waves = cdiv(count, sms * t.per_sm) as f64;
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

/// The automatic mma.sync / CUDA-core tile (index into `tiles`, whose last
/// entry is the 16-row tile) and split count.
pub(crate) fn small_kernel_choice(tiles: &[Tile], m: i64, n: i64, k: i64, batch: i64, sms: i64, simt: bool) -> (usize, i64) {
    let last = tiles.len() - 1;
    if m <= 16 {
        // At least 512 of K per split: M = 1, K = N = 4096 float32 ran at
        // 0.45 of cuBLAS in 16 splits, 0.74 in 8 (H100, run 1).
        let count = tiles_of(&tiles[last], m, n, batch);
        return (last, auto_splits(count, 2 * sms * tiles[last].per_sm, k, 512));
    }
    if simt {
        // The widest tile that (nearly) fills the SMs; else 64 x 64 tiles split over
        // K towards three blocks per SM (a CUDA-core tile has little reuse to
        // lose, and small problems otherwise leave most SMs idle: on the
        // H100, M = 128, K = N = 4096 ran at 0.21 of cuBLAS on the 128 tile,
        // 0.54 on 64 x 64 in 2 splits, 0.66 in 4).
        if let Some(i) = tiles[..last].iter().position(|t| t.bm >= 128 && 10 * tiles_of(t, m, n, batch) >= 9 * sms) {
            return (i, 1);
        }
        // Else the 128 x 128 tile split over K to about one wave (one block
        // per SM, at least 64 of K per split), where at most half the SMs
        // would have a tile and the tiles waste little of their rows and
        // columns: on the H100 (bench/explore/matmul-variants-h100-simtsplit.log)
        // 1.1-1.2x the 64 x 64 tiles' splits at M = 128 and 256 against
        // 4096 x 4096, 512^3, 1024^3, 256 x 1024 x 1024 and 512 x 4096 x 512;
        // at M = 64 (half of each tile empty) the 64 x 64 tiles stay ahead.
        if let Some(i) = tiles.iter().position(|t| t.name == "128") {
            let t = &tiles[i];
            let count = tiles_of(t, m, n, batch);
            let padded = cdiv(m, t.bm) * t.bm * cdiv(n, t.bn) * t.bn;
            let splits = (sms / count.max(1)).min(k / 64).min(8);
            if splits >= 2 && 4 * padded <= 5 * m * n {
                return (i, splits);
            }
        }
        let small = tiles.iter().position(|t| t.name == "64").unwrap_or(0);
        let count = tiles_of(&tiles[small], m, n, batch);
        return (small, auto_splits(count, 3 * sms, k, 64));
    }
    choose_tile(tiles, m, n, k, batch, sms)
}

/// Whether float32 (TF32 off) takes the FP64 tensor cores' tile `t`, and in
/// how many K ranges: the split count with the shortest modelled time, where
/// the tiles' useful work is at least 0.6 of that time; else None (the
/// CUDA-core tiles). One block per SM (238 registers x 256 threads), so a
/// launch takes waves x (K range + 96) x 0.0844 µs, and a split adds about
/// 3 µs and its float32 partials' traffic. On the H100 this model is within
/// 7% of every timing in `bench/explore/matmul-variants-h100-x64split.log`
/// (M = 128 x 4096 x 4096: 0.94 of cuBLAS in 4 ranges against 0.84 on the
/// CUDA cores; 1024^3 1.01 in 2 against 0.93; M = 64, where half of each
/// tile is empty, and 512^3 stay on the CUDA cores). Split, each range's
/// float64 sum is rounded to float32 before the ranges are added, so only
/// unsplit products are correctly rounded.
pub(crate) fn x64_splits(t: &Tile, m: i64, n: i64, k: i64, batch: i64, sms: i64) -> Option<i64> {
    const US_PER_K: f64 = 0.0844; // a wave of 128 x 128 tiles, per 1 of K
    const FILL_K: f64 = 96.0; // the pipeline's fill and the epilogue, in K
    const SPLIT_US: f64 = 3.0; // the reduction's launch and tail
    const BYTES_PER_US: f64 = 3.0e6;
    let tiles = tiles_of(t, m, n, batch);
    let time = |s: i64| {
        let (s, chunk) = split_k(k, s, t.bk);
        let waves = cdiv(tiles * s, sms) as f64;
        let partials = if s > 1 { SPLIT_US + (2 * s * m * n * batch * 4) as f64 / BYTES_PER_US } else { 0.0 };
        (s, waves * (chunk as f64 + FILL_K) * US_PER_K + partials)
    };
    // More ranges only where they are 2% faster.
    let (splits, best) = (2..=8).map(time).fold(time(1), |b, c| if c.1 < 0.98 * b.1 { c } else { b });
    let useful = (m * n * batch) as f64 * k as f64 / (sms * t.bm * t.bn) as f64 * US_PER_K;
    (useful >= 0.6 * best).then_some(splits)
}

/// The forced mma.sync / CUDA-core tile `name`, if this table has it.
pub(crate) fn forced_tile(tiles: &[Tile], name: &str, splits: Option<i64>) -> Option<(usize, i64)> {
    tiles.iter().position(|t| t.name == name).map(|i| (i, splits.unwrap_or(1)))
}

/// A Hopper kernel plan: the tile, split count, whether A goes through
/// registers (TF32 with an M-contiguous A), and blocks per cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WgPlan {
    pub tile: WgTile,
    pub splits: i64,
    pub a_reg: bool,
    /// 1, or 2: pairs of blocks computing tiles one above the other, each
    /// loading half of their shared B tile for both (TMA multicast); or,
    /// with `share_a`, side by side, sharing A's tile that way.
    pub cluster: i64,
    /// Pairs (`cluster` 2) side by side sharing A, not stacked sharing B.
    pub share_a: bool,
    /// The `splits` K ranges of a tile are the blocks of one cluster (2 or
    /// 4; cooperative tiles up to 192 wide, and the 64-row ones), which sum
    /// them through distributed shared memory instead of global memory.
    pub k_cluster: bool,
}

/// Most blocks per cluster for `m` rows on tile `t`: pairs wherever there
/// are two rows of tiles. (A K-major B tile splits into halves of its rows;
/// an N-major one into its 64-column boxes, taken in turn, so that on the
/// 64-wide tile rank 0 loads the whole box for both.)
pub(crate) fn wg_cluster(t: &WgTile, m: i64) -> i64 {
    if cdiv(m, t.bm) >= 2 {
        2
    } else {
        1
    }
}

/// Likewise for pairs side by side sharing A (`WgPlan::share_a`): pairs
/// wherever there are two columns of tiles.
fn wg_cluster_cols(t: &WgTile, n: i64) -> i64 {
    if cdiv(n, t.bn) >= 2 {
        2
    } else {
        1
    }
}

/// The automatic blocks per cluster: pairs on the 256-wide tile when the
/// tiles fill the SMs (half of them, for a K-major B) and K is longer than
/// 512. On the H100 (bench/explore/matmul_variants.py --only cluster,
/// planner3) pairs ran up to 10% faster with a K-major B (4096 x 4096 x
/// 4088, whose B rows are not 128-byte aligned: 1.2x; 128 tiles of 4096 x
/// 4096 x 1024: 1.07x), about as fast with an N-major B, and slower on 128
/// tiles with it (2048^3: 4%), on short K (32 x 512^3: 7%) and on 128-wide
/// tiles of products up to 1024^3. On the 192-wide tile (--only wide192)
/// pairs ran faster on up to two waves of tiles (3000 x 1000 x 2000: 1.04x
/// with an N-major B, 1.22x with a K-major one) and with misaligned B rows
/// (4096 x 4096 x 4088: 1.35x), and 5-10% slower on many waves (LM heads);
/// on the H200 single blocks ran 4-8% faster on two to four rows of those
/// tiles (256 and 512 rows against nn.Linear weights of 3072 x 9216 to
/// 8192 x 10240, bench/explore/cliff-hunt/, `variants-b-h200-33c8af1.md`),
/// so pairs take five rows or more there. Over an even number of rows only:
/// at 384 rows (three) against 4096 x 28672 and 8192 x 28672 weights the
/// pairs ran at 0.67-0.77 of cuBLAS (H200, bench/explore/mid-waves/,
/// `auto-*-h200-0e6cd15.md`).
fn wg_cluster_auto(t: &WgTile, m: i64, n: i64, k: i64, batch: i64, sms: i64, ops: Operands) -> i64 {
    let tiles = wg_tiles(m, n, batch, t);
    // (Over an odd number of rows of tiles a pair's second tile past the
    // last row computes zeros: three rows in pairs are four.)
    let even = cdiv(m, t.bm) % 2 == 0;
    let pairs = even && match t.bn {
        256 => tiles > sms || (ops.b_k && 2 * tiles > sms),
        192 => cdiv(m, t.bm) > 4 && (ops.misaligned || tiles <= 2 * sms),
        _ => false,
    };
    if pairs && k > 512 {
        wg_cluster(t, m)
    } else {
        1
    }
}

/// What the planner needs to know of the operands besides the shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Operands {
    /// B is read K-major (else N-major).
    pub b_k: bool,
    /// An operand read MN-major has k-lines that are not 128-byte aligned
    /// (see `wg_cost`).
    pub misaligned: bool,
    /// A's lines (rows K-major, k-lines M-major) are not 128-byte aligned
    /// (see `with_shared_a`).
    pub a_off: bool,
    /// A's, B's lines (rows K-major, k-lines MN-major) are not 32-byte
    /// aligned: every other line of a TMA box then starts mid-sector (see
    /// `with_shared_b`).
    pub a_off32: bool,
    pub b_off32: bool,
}

/// Elements of K per Hopper k-tile.
pub(crate) fn wg_bk(elem: i64) -> i64 {
    WG_BK_BYTES / elem
}

/// The Hopper tile named `wg256`, `wgp128`, `wgh64`, `wgh144`, ...; `wg` / `wgp` /
/// `wgh` alone: `auto` if it is of that kind, else the kind's widest.
fn wg_named(name: &str, auto: WgTile) -> Option<WgTile> {
    let (list, width) = if let Some(w) = name.strip_prefix("wgp") {
        (&WGP[..], w)
    } else if let Some(w) = name.strip_prefix("wgh") {
        (&WGH_ALL[..], w)
    } else {
        (&WG_ALL[..], name.strip_prefix("wg")?)
    };
    if width.is_empty() {
        return Some(if list[0].kind() == auto.kind() { auto } else { list[0] });
    }
    let bn: i64 = width.parse().ok()?;
    list.iter().copied().find(|t| t.bn == bn)
}

/// Tile count of the product on tile `t`.
fn wg_tiles(m: i64, n: i64, batch: i64, t: &WgTile) -> i64 {
    cdiv(m, t.bm) * cdiv(n, t.bn) * batch
}

/// Relative efficiencies of the 64-row tiles (`wg_cost`), which the
/// planner takes only where the 128-row ones leave SMs idle (`wg_auto`):
/// they order the --only half sweep's choices between 64-row tiles and
/// split K right.
const WGH128_EFF: f64 = 0.5;
/// The 128 x 320 tile (16-bit, one product, unsplit) against the 256-wide
/// one: 8192^3 ran at 0.96 of its speed (H200, bench/explore/wide320/).
/// Where the model then takes it over two waves or more (a fuller last
/// wave), it ran 6-17% faster than the plan before on the H200, both B
/// layouts (`model-*-h200-21f722f.md`: 1024 x 8192 x 10240 0.85 -> 0.97-0.99
/// of cuBLAS, 2048 x 5120 x 5120 0.79-0.84 -> 0.94-0.97, 2560 x 4096 x
/// 4096 0.84 -> 0.95, 896 x 4096 x 11008 0.85 -> 0.95), and level on the
/// rest (768 x 4096 x 6144, 1536 x 4096 x 3072, 2304 x 4096 x 2048).
const WGX_EFF: f64 = 0.95;
const WGH64_EFF: f64 = 0.35;

/// Modelled time of a persistent Hopper launch on `t` with `splits` K
/// ranges, in multiply-adds of one SM at the tensor cores' peak: whole waves
/// of tiles over the SMs, each tile's time its multiply-adds over the tile's
/// relative efficiency plus a fixed per-tile cost (pipeline fill and the
/// epilogue); against the time to read the operands from memory once (small
/// M is memory-bound: the larger of the two, plus a quarter of the smaller,
/// as they overlap imperfectly); plus, for split K, the float32 partials
/// written and read back through L2 and the reduction's round trips. One
/// byte of memory traffic costs about 1.2 such units on the H100 (3.7e12
/// multiply-adds per SM per second against 3 TB/s). Efficiencies and costs
/// fitted to the H100 sweep in bench/explore (run 1: bf16, 23 shapes; the
/// choice is within 8% of the best variant there except M = 32): 128 x 256
/// 1.0, 128 x 192 1.0 (it had 1.03 with a K-major B, from
/// bench/explore/matmul_wide_pick.py while the 256-wide tile had 3 stages to
/// its 4; since that fourth stage the two run about level,
/// bench/explore/matmul-variants-h100-stages4.log. On the H200, in
/// interleaved kernel times (bench/explore/tf32-llm/), the 1.03 put 4096 x
/// 4096 x 14336 (M x K x N, W^T) on 192-wide tiles, 3% slower in bfloat16
/// and 4% in TF32; 0.98, the fit per multiply-add there, would move 8192 x
/// 4096 x 14336 to 256-wide ones, 2-3% slower in bfloat16), 128 x 128 0.80,
/// 128 x 64 0.55, ping-pong a little below cooperative (the turn-taking costs
/// more than the hidden epilogue saves at these sizes).
///
/// `ops.misaligned`: an operand read MN-major has k-lines that are not 128-byte
/// aligned. Its TMA boxes then read 35% slower (bench/explore/
/// matmul_pitch.py), and narrow tiles, which read more of it per
/// multiply-add, lose most: on the H100 after the TMA-store epilogue
/// (--only planner3), 1000^3 ran 1.15x faster on 128-wide tiles than on
/// 64-wide ones and 3000 x 1000 x 2000 1.19x faster on 256-wide ones than
/// on 128-wide ones, where the aligned model chose the narrower; factors
/// 0.7 (128) and 0.49 (64) order every shape of that sweep right; 0.8 for
/// 192 (--only wide192: 1000^3 ran 1.11x faster on 128-wide tiles). Since
/// the leaner main loop (c33f1e7) the 64-wide tile loses less: on the H200
/// (bench/explore/pair64-misaligned/, kernel times) 1024 x 1024 x 1000 ran
/// in 8.0 us on 64-wide tiles against 9.3 on 128-wide ones, 1000^3 10.4
/// against 10.6; 0.55 takes them there.
///
/// `k_cluster`: the `splits` K ranges are a cluster's blocks, summed in
/// distributed shared memory (`WgPlan::k_cluster`): no partials through L2,
/// but a fixed cost per tile (`KC_FIXED`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn wg_cost(t: &WgTile, m: i64, n: i64, k: i64, batch: i64, splits: i64, sms: i64, elem: i64, ops: Operands, k_cluster: bool) -> f64 {
    const UNITS_PER_BYTE: f64 = 1.2;
    // Split K: the float32 partials go through L2 (a quarter of a DRAM
    // byte's cost), and the in-kernel reduction's round trips (write, fence,
    // count, read) cost about 2.5 us per range. On the H100
    // (bench/explore/matmul_kernel_times.py --set m128, 128 x 64 tiles):
    // M = 128, K = N = 4096 25.3 us unsplit, 22.4 in two ranges, 26.0 in
    // four; K = 14336 73.6, 55.2, 59.9; 1024^3 7.9, 14.6, 21.3.
    const L2_UNITS_PER_BYTE: f64 = 0.3;
    // A 64-row tile's range costs half that, fitted to the H200 (bench/
    // explore/decode-split/, set `tiles64`): at 2.5 us the model kept M = 48
    // to 64 against a 4096 x 4096 weight on unsplit 64 x 64 tiles (21.9 us)
    // where two ranges ran in 17.9, and M = 96 against 14336 x 4096 (K x N)
    // on 128 x 64 tiles in two ranges (49.6 us) where 64 x 128 ones ran in
    // 41.7.
    let fixup_per_range = 3.7e6 * 2.5 * if t.bm == WGH_BM { 0.5 } else { 1.0 };
    let tiles = wg_tiles(m, n, batch, t) * splits;
    let eff = match (t.bm, t.bn, t.pingpong) {
        (WGH_BM, 128, _) => WGH128_EFF,
        (WGH_BM, _, _) => WGH64_EFF,
        (_, 320, _) => WGX_EFF,
        (_, 256, _) => 1.0,
        (_, 192, _) => 1.0,
        (_, 128, false) => 0.80,
        (_, 128, true) => 0.78,
        (_, _, false) => 0.55,
        (_, _, true) => 0.52,
    } * match (ops.misaligned, t.bn) {
        (false, _) | (true, 256) => 1.0,
        (true, 192) => 0.8,
        (true, 128) => 0.7,
        (true, _) => 0.55,
    };
    let k_per = cdiv(k, splits) as f64;
    // The 64-row tiles' fixed cost is fitted to their one short-K loss
    // (--only half and the A/B after it: 512^3 at 0.90 of cuBLAS on 64 x 64
    // tiles, 0.94 on 128 x 64).
    let fixed = match (t.pingpong, t.bm) {
        (true, WGH_BM) => 512.0,
        (true, _) => 96.0,
        _ => 160.0,
    } + if k_cluster { KC_FIXED } else { 0.0 };
    let per_tile = (t.bm * t.bn) as f64 * (k_per + fixed) / eff;
    let compute = cdiv(tiles, sms) as f64 * per_tile;
    let memory = ((m * k + k * n) * elem + m * n * elem) as f64 * batch as f64 * UNITS_PER_BYTE;
    let mut time = compute.max(memory) + 0.25 * compute.min(memory);
    if splits > 1 && !k_cluster {
        time += (m * n * batch * splits * 8) as f64 * L2_UNITS_PER_BYTE + fixup_per_range * splits as f64;
    }
    time
}

/// The fixed cost of K ranges summed in a cluster, in elements of K per
/// range (as `wg_cost`'s `fixed`): the cluster barriers and the owner's
/// reads of its peers' partials. Fitted to the H200 sweeps in
/// bench/explore/k-cluster/ (bf16, two ranges against the best other
/// plan: 512^3, 1000^3 and 1024^3 ran slower; M = 128 against 4096 x 4096
/// 0.83-0.86 -> 0.95-0.96 of cuBLAS, against 14336 x 4096 (K x N) 0.94 ->
/// 1.00-1.02, 1024 x 4096 x 1024 0.72-0.75 -> 0.82-0.84, 1024 x 8192 x
/// 1024 0.79 -> 0.89 faster); values from about 360 to 600 order those right.
const KC_FIXED: f64 = 520.0;

/// The 64-row ping-pong tile a 16-bit product of 17 to 256 rows (one
/// product, not a batch, K of 2048 or more) runs on over all of K, unsplit,
/// where its tiles come in whole waves; `None` elsewhere. In order:
/// 1. 64 x 144 (`WGW`, B K-major) where its tiles make one wave (90% full
///    or more but at 33 to 64 rows) and 64 x 128 ones more than a wave (at
///    18944 columns 132
///    tiles against 148; cuBLAS runs 144-wide tiles there,
///    `nvjet_sm90_tst_144x64`). H200, bench/explore/decode-split/ (set
///    `wide`) and bench/explore/cliff-hunt/ (`variants-*-h200-33c8af1.md`),
///    ratio to cuBLAS after do_bench's flush: 33 to 64 rows against 17000
///    to 18944 columns 0.72-0.81 -> 0.96-1.03; 32 x 3584 x 18944 0.76 ->
///    1.00 (the streaming build before); 96 and 128 x 3072 x 9216 (128
///    tiles) 0.72 / 0.68 -> 0.99 / 0.95; 256 x 3584 x 4608 0.73 -> 0.87.
/// 2. 33 to 64 rows: 64 x 64 where one row of those fills more than half
///    the SMs and at most all of them (N = 4225 to 8448; fewer take
///    `wgh_k_cluster`'s K ranges): 48 and 64 x 4096 x 6144 0.63 / 0.70 ->
///    0.98 (128 x 64 tiles before, half of each empty), x 3584 x 4608 0.62
///    / 0.64 -> 0.86 / 0.85, 64 x 4096 x 8192 0.95 -> 1.00.
/// 3. 33 to 128 rows where a row of 64 x 128 tiles fills 48% of the SMs or
///    more: 64 x 128, over one wave at most from 65 rows (at
///    96 and 128 x 3072 x 9216 with a row-major weight their 144 tiles ran
///    at 0.81 / 0.76 of cuBLAS, the model's 72 tiles of 128 x 128 at 1.02 /
///    0.94: cliff-hunt, `variants-kn-h200-44cb36c.md`), any number at 33 to
///    64. cuBLAS runs one wave of 128-column tiles there
///    too (`nvjet_sm90_tst_128x48_64x9_4x1`, 112 blocks at 48 x 4096 x
///    14336). H200 (bench/explore/decode-split/, sets `n14336` and `wave1`,
///    L2 clean, nn.Linear's weights, K = 4096): 0.91-1.03 of cuBLAS where
///    the plan had run at 0.60-0.75 (40 to 64 rows against N = 8192 to
///    16384), 0.89 and 0.93 where it had 0.75 and 0.90 (96 and 128 rows
///    against 8192); 48 and 64 rows against 28672 columns (224 tiles) 0.80
///    -> 1.00-1.02 (cliff-hunt; the streaming build before).
///
/// At 17 to 32 rows but for (1) the streaming build ran as fast or faster
/// after do_bench's flush and keeps them; on fewer tiles the split 64-row
/// tiles of `wg_auto`'s model do better (4096 columns, set `tiles64`).
pub(crate) fn wgh_wave(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> Option<WgTile> {
    if elem != 2 || batch != 1 || k < 2048 || !(17..=4 * WGH_BM).contains(&m) {
        return None;
    }
    let count = |t: &WgTile| wg_tiles(m, n, batch, t);
    let one_wave = |t: &WgTile| count(t) <= sms;
    let one_row = (33..=WGH_BM).contains(&m);
    if ops.b_k && one_wave(&WGW[0]) && (one_row || 10 * count(&WGW[0]) >= 9 * sms) && !one_wave(&WGH[0]) {
        return Some(WGW[0]);
    }
    if m <= 32 || m > 2 * WGH_BM {
        return None;
    }
    if m <= WGH_BM && 2 * count(&WGH[1]) > sms && one_wave(&WGH[1]) {
        return Some(WGH[1]);
    }
    let cols = cdiv(n, WGH[0].bn);
    (25 * cols >= 12 * sms && (m <= WGH_BM || one_wave(&WGH[0]))).then_some(WGH[0])
}

/// Whether a 16-bit product of two rows of 128-row tiles, the second at
/// least 60% full (205 to 256 rows; one product, K of 2048 to 4096, B
/// K-major: nn.Linear's weights, where it was measured), runs unsplit on
/// 128 x 64 tiles: where those make one wave 80% full or more (N = 3329 to
/// 4224). The model's choice there, 128 x 128 tiles in two K
/// ranges of a cluster (half as many tiles), ran slower on the H200
/// (bench/explore/cliff-hunt/, `variants-256-h200-44cb36c.md`, ratio to
/// cuBLAS): 256 x 4096 x 4096 0.95 -> 1.02, 256 x 3584 x 3584 0.83 -> 0.92.
pub(crate) fn wg64_wave(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> bool {
    let count = wg_tiles(m, n, batch, &WG[3]);
    ops.b_k && elem == 2 && batch == 1 && (2048..=4096).contains(&k) && cdiv(m, WG_BM) == 2 && 5 * m >= 8 * WG_BM && 5 * count >= 4 * sms && count <= sms
}

/// Whether a 16-bit product of two rows of 128-row tiles or more (one
/// product, K of 2048 or more) runs on one wave of 128 x 320 tiles (`WGX`),
/// unsplit: where those make a wave at most and 256-wide ones more than a
/// wave (192-wide ones then more still). The model's choice there, two
/// waves of 192- or 128-wide tiles, the second partly empty, ran 4-16%
/// slower on the H200, both B layouts (bench/explore/wide320/, ratio to
/// cuBLAS, N-major B / K-major B): 512 x 3072 x 9216 (116 tiles) 0.86 /
/// 0.77 -> 0.91 / 0.82, 512 x 8192 x 10240 0.85 / 0.85 -> 0.97 / 0.96, 384
/// x 4096 x 12288 0.83 / 0.73 -> 0.92 / 0.81, 512 x 14336 x 9216 0.84 /
/// 0.82 -> 0.96 / 0.95, 448 x 3584 x 9000 0.70 / 0.75 -> 0.82 / 0.81; level
/// at 512 x 2048 x 10240 (0.92 / 0.90). cuBLAS runs such products on 320 x
/// 128 tiles (`nvjet_sm90_tst_320x128_64x3`). Pairs ran 2-3% slower.
/// On 128-byte aligned rows the cost model (`WGX_EFF`) takes the same tile
/// wherever this does (checked over 129 to 2048 rows, 1024 to 40000
/// columns, K of 2048 to 8192, both B layouts); the rule keeps it for
/// misaligned rows, which the model leaves out of its 320-wide candidates.
pub(crate) fn wg320_wave(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64) -> bool {
    elem == 2 && batch == 1 && k >= 2048 && cdiv(m, WG_BM) >= 2 && wg_tiles(m, n, batch, &WGX[0]) <= sms && wg_tiles(m, n, batch, &WG[0]) > sms
}

/// Speed per output column of one block on a cooperative tile of width
/// `bn`, relative to the 96-wide one, as `wg_waves` weighs them: fitted to
/// the H200's kernel times of every width forced on 17 products of 256 to
/// 512 rows (bench/explore/mid-waves/, `widths-*` and `waves-*`: wider
/// tiles reuse each A tile over more columns, up to 192); 144, 160 and 176
/// then scaled by their speed-ups from staging the output in rounds (the
/// medians of bench/explore/stage-rounds/, `ab*`: 1.03, 1.06, 1.04; 144 a
/// little under, 1.21: at 512 x 11008 x 4096 (M x K x N) its 116 tiles ran
/// 4% slower than 128 of 128 x 128, `ties-*`). So 160 in two waves takes
/// four rows against 10240 columns from 320 in one: 0.97 -> 1.00 of cuBLAS
/// at 512 x 8192 x 10240, 0.92 -> 0.98 at 512 x 4096 x 10240 (`n10240-*`).
fn wave_eff(bn: i64) -> f64 {
    match bn {
        96 => 1.0,
        112 => 1.04,
        128 => 1.08,
        144 => 1.21,
        160 => 1.33,
        176 => 1.33,
        192 => 1.32,
        256 => 1.30,
        _ => 1.25,
    }
}

/// The cooperative tile and K ranges for a 16-bit product of two to four
/// rows of 128-row tiles, at least 80% full (one product, K of 2048 or
/// more, B K-major: nn.Linear's weights, where it was measured; no
/// misaligned operand), where one of the widths from 96 up (`WGQ`'s
/// included) makes its tiles in at most two waves: the one with the least
/// waves x width / `wave_eff` (ties: the wider), where its tiles fill 70%
/// of those waves' blocks or more; unsplit, single blocks. Else two K
/// ranges where K is long (below). `None` elsewhere (the model's split K
/// and K clusters).
///
/// Such products make one or two waves of tiles, and the model's choice
/// there (fewer widths, split K, pairs over an odd row count) left whole or
/// half waves of SMs idle; cuBLAS runs them on tiles 96 to 168 wide
/// (`nvjet_sm90_tst_144x128_64x6`, grid 128). H200,
/// bench/explore/mid-waves/, ratio to cuBLAS, plan before -> after (the
/// final kernels, `widths-final-nk-h200-92e907f.md`): 256 x 3072 x 9216 (M
/// x K x N) 0.76 -> 0.89 (144 wide), 512 x 3584 x 4608 0.80 -> 0.94 (144),
/// 256 x 4096 x 6144 0.83 -> 0.95 (96), 512 x 8192 x 3072 0.84 -> 0.93 (96),
/// 512 x 18944 x 3584 0.80 -> 0.89 (112), 512 x 3584 x 3584 0.82-0.86 ->
/// 0.92 (112), 256 x 8192 x 10240 0.86 -> 0.97 (160), 256 x 4096 x 11008
/// 0.83 -> 0.88 (176), 512 x 3072 x 9216 0.81 -> 0.94 (144 in two waves,
/// where 320-wide tiles made 88% of one), 384 x 8192 x 3072 0.80 -> 0.88
/// (96, 73% of a wave), 384 x 3072 x 9216 0.51 -> 0.93 and 384 x 4096 x
/// 11008 0.55 -> 0.98 (256, single blocks: three rows of tiles in pairs are
/// four). Pairs of the `WGQ` widths ran 1-5% slower than single
/// blocks; so did the model's pairs of 256-wide tiles at 256 x 3584 x 14336
/// and 512 x 4096 x 14336 (3-4%). Its misses: 192-wide tiles ran 1-3%
/// faster than its 176-wide ones at 512 x 4096 x 11008 and 384 x 3584 x
/// 14336 (`three-nk-h200-947ef8c.md`). Not over four rows: at
/// eight, 1024 x 32000 x 2048, one wave of 128 x 128 tiles had run 19%
/// slower on the H100 than the model's 256-wide tiles in two K ranges.
///
/// Where no width's tiles fill 70% of their waves (half a wave or less: 256
/// rows against 3072 to 4096 columns) and K is 8192 or more, two K ranges:
/// the width whose blocks, twice the tiles, fill one wave best by the same
/// measure, where they fill 70% of it; a K cluster on the `WGK` widths
/// (`wg_auto`). cuBLAS splits 256 x 18944 x 3584 (M x K x N) in two on
/// 112-wide tiles. H200 (bench/explore/stage-rounds/, `halfwave-*`, ratio
/// to cuBLAS): 256 x 18944 x 3584 0.83 -> 0.91 (192-wide tiles in three
/// ranges before), 256 x 8192 x 3072 0.81 -> 0.93 (128-wide in a K
/// cluster before); 256 x 14336 x 4096 stays on 128-wide tiles in a K
/// cluster (0.90; 144-wide in two ranges 0.91). Not where a width fills
/// its waves unsplit: 384 x 18944 x 3584 stays on 96-wide tiles (0.89;
/// 192-wide in two ranges 0.91), 256 x 28672 x 8192 on 128-wide ones
/// (0.97; 192-wide in three ranges 1.01): the model above would take
/// wider tiles in two ranges there, unmeasured.
///
/// Five to sixteen rows (K of 2048 to 8191, A's rows 128-byte aligned,
/// more than a wave of 128 x 64 tiles): the same choice over one wave, of
/// the widths under 192 only. There the model's 128 x 192 tiles in K
/// ranges of a cluster, or 128 x 128 or 128 x 192 tiles in part of a wave,
/// ran slower: H200 (bench/explore/ragged/, do_bench ratios to cuBLAS,
/// nn.Linear's weight, plan before -> after) 768 x 2048 x 2048 0.72 -> 0.88
/// (96 wide), 1280 x 2048 x 1024 0.71 -> 0.86 (96), 1024 x 4096 x 1536
/// 0.83 -> 0.89 (96), 1280 x 2048 x 1280 0.93 -> 0.94 (112), 768 x 2048 x
/// 3000 0.77 -> 0.90 (144), 1536 x 3072 x 1536 0.80 -> 0.98 (144), 1280 x
/// 4096 x 2048 0.84 -> 0.96 (160), 896 x 2048 x 3000 0.89 -> 0.90 (176).
pub(crate) fn wg_waves(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> Option<(WgTile, i64)> {
    let rows = cdiv(m, WG_BM);
    // (Five to sixteen rows: see above.)
    let more_rows = (5..=16).contains(&rows) && k < 8192 && !ops.a_off && wg_tiles(m, n, batch, &WG[3]) > sms;
    if elem != 2 || batch != 1 || k < 2048 || !ops.b_k || ops.misaligned || !((2..=4).contains(&rows) || more_rows) || 4 * rows * WG_BM > 5 * m {
        return None;
    }
    // Blocks of `t` over `splits` K ranges, their waves, and their modelled time.
    let blocks = |t: &WgTile, splits: i64| wg_tiles(m, n, batch, t) * splits;
    let waves = |t: &WgTile, splits: i64| cdiv(blocks(t, splits), sms);
    let cost = |t: &WgTile, splits: i64| waves(t, splits) as f64 * t.bn as f64 / wave_eff(t.bn) / splits as f64;
    let pick = |splits: i64, max_waves: i64| {
        let widths = WG[..3].iter().chain(WGX.iter().filter(|_| splits == 1)).chain(WGQ.iter());
        let best = widths.filter(|t| waves(t, splits) <= max_waves).min_by(|a, b| cost(a, splits).total_cmp(&cost(b, splits)).then(b.bn.cmp(&a.bn)))?;
        (10 * blocks(best, splits) >= 7 * waves(best, splits) * sms).then_some((*best, splits))
    };
    if rows > 4 {
        return pick(1, 1).filter(|(t, _)| t.bn < 192);
    }
    pick(1, 2).or_else(|| if k >= 8192 { pick(2, 1) } else { None })
}

/// The automatic Hopper plan for 16-bit types (and TF32's K-major copies:
/// `elem` 4): the cooperative tile and split count with the least modelled
/// time, or `None` where the mma.sync kernels are expected to do better
/// (few rows); 64-row tiles in whole waves where `wgh_wave` says so, one
/// wave of 128 x 64 tiles where `wg64_wave` does, the tile `wg_waves` names,
/// one wave of 128 x 320 ones where
/// `wg320_wave` does (the model takes them too, one product, unsplit:
/// `WGX_EFF`), and
/// 64-row tiles' K ranges in a cluster where `wgh_k_cluster` does; then
/// 128 x 64 tiles in pairs sharing A where `with_shared_a` says so, and 128
/// x 128 tiles in pairs sharing B where `with_shared_b` does.
/// Ping-pong tiles of 128 rows only when forced: since the cooperative
/// kernels store their output with TMA, overlapped with the next tile, they
/// ran faster than ping-pong ones of the same width on every shape measured
/// on the H100 (bench/explore/matmul_variants.py --only planner3: 3000 x
/// 1000 x 2000 1.22x, 256 x 128 x 64 x 128 1.5x, 4096^3 1.21x).
#[allow(clippy::too_many_arguments)]
pub(crate) fn wg_auto(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> Option<WgPlan> {
    wg_auto_tile(m, n, k, batch, elem, sms, ops).map(|p| with_shared_b(with_shared_a(p, m, n, k, batch, elem, sms, ops), m, n, k, batch, elem, sms, ops))
}

/// Pairs one above the other sharing B (`WgPlan::cluster` 2) on one wave
/// of 128 x 128 tiles, 16-bit types, where B's lines are off 32 bytes (its
/// boxes' every other line starting mid-sector), K is 2000 or more or A's
/// lines are off 32 bytes too, over six rows of tiles or more (an even
/// count) filling 90% of the SMs or more, or 60% where K is 2000 or more
/// and A's lines are off 32 bytes too. Such lines take 3.3 times the L2
/// requests of aligned ones (ncu, 2000 x 4096 x 1000 against 2000 x 4096 x
/// 1024, b row-major; lines off 128 bytes but 32-byte aligned cost no time),
/// and the pairs cut them by 42%. H200 (bench/explore/ragged/),
/// kernel times, us, unpaired -> pairs (cuBLAS), b row-major: 2000 x 1000
/// x 1000 (M x K x N) 13.5 -> 11.9 (10.3), 2000 x 4096 x 1000 34.5 -> 29.6
/// (24.5), 2000 x 4000 x 1000 33.6 -> 29.4 (24.2); nn.Linear's weight,
/// K = 1000: 2000 x 1000 x 1000 13.5 -> 11.8 (10.5), 2000 x 1000 x 1024
/// 13.4 -> 11.5 (10.3); do_bench ratios to cuBLAS, 2000 x 3000 x 1000 0.75
/// -> 0.95, 3000 x 2000 x 600 0.83 -> 0.92. Slower on lines off 64 or 128
/// bytes but 32-byte aligned (K = 4000 with nn.Linear's weight: 27.3 ->
/// 28.9), where only A's lines are off (2000 x 1000 x 1024, b row-major:
/// 10.0 -> 11.2), at K = 1024 with A aligned (2048 x 1024 x 1000: 11.2 ->
/// 11.6), on 80 tiles (2000 x 1000 x 600: 0.87 -> 0.81) and on aligned
/// lines (2048 x 1024 x 1024: 9.7 -> 10.9).
///
/// Below sixteen rows (bench/explore/ragged/, runs 9 and 10, do_bench
/// ratios to cuBLAS, unpaired -> pairs): nn.Linear's weight, both
/// operands' lines off 16 bytes, 1280 x 3000 x 1536 0.67 -> 0.81 (120
/// tiles), 1024 x 3000 x 2048 0.78 -> 0.92, 1024 x 1000 x 2048 0.85 ->
/// 0.95 (8 rows); from 60% of a wave at K of 2000 or more: 768 x 3000 x
/// 2048 0.84 -> 0.94 (96 tiles), 1280 x 3000 x 1024 0.76 -> 0.82 (80),
/// 1280 x 2200 x 1280 0.65 -> 0.75 (100), 1536 x 5000 x 1280 0.59 -> 0.76;
/// b row-major, 1280 x 3000 x 1000 0.72 -> 0.82 (80). Not under 90% with
/// A's lines 32-byte aligned (b row-major, 1024 x 2000 x 1400: 0.82 ->
/// 0.78, 88 tiles; 1536 x 4096 x 1000 level), nor at K = 1000 (1280 x
/// 1000 x 1024, 80 tiles: 0.95 -> 0.91).
#[allow(clippy::too_many_arguments)]
fn with_shared_b(p: WgPlan, m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> WgPlan {
    let (rows, tiles) = (cdiv(m, WG_BM), wg_tiles(m, n, batch, &WG[2]));
    let fits = p.tile == WG[2] && p.splits == 1 && !p.k_cluster && !p.a_reg && p.cluster == 1;
    let lines = ops.b_off32 && (k >= 2000 || ops.a_off32);
    let fill = 10 * tiles >= 9 * sms || (k >= 2000 && ops.a_off32 && 5 * tiles >= 3 * sms);
    if elem == 2 && batch == 1 && fits && lines && rows >= 6 && rows % 2 == 0 && fill && tiles <= sms {
        WgPlan { cluster: 2, ..p }
    } else {
        p
    }
}

/// Pairs side by side sharing A (`WgPlan::share_a`) on 128 x 64 tiles,
/// 16-bit types, where A's lines are off 128 bytes: such an A's TMA boxes
/// take 3.4 times the L2 requests of aligned ones (ncu at 1000^3 against
/// 1024^3), and a pair's blocks each load half of it for both (23% fewer
/// requests). Where the plan is those tiles unsplit (two columns of them or
/// more), and where it is 128 x 128 tiles in two K ranges of a cluster, K
/// up to 4096, and 128 x 64 tiles make 3/4 of a wave to one (since the
/// model takes K ranges there only from K = 4096, that is K = 4096: below
/// it such products are planned on 128 x 64 tiles unsplit). On the H200
/// (bench/explore/pair-n/, kernel times) 1000^3 ran in 8.9 us against
/// 10.2-10.7 unpaired (bf16 and f16, a K- or M-major, b either way;
/// cuBLAS 7.8-7.9) and 9.8-9.9 in pairs sharing B; 1000 x 3000 x 1000 (M x
/// K x N) in 18.1 against 20.6-20.7 in K ranges, 1000 x 3000 x 800 16.3
/// against 19.0, level at K = 4000, slower at K = 6000 (29.1 against
/// 27.1); on aligned rows pairs either way ran slower (1024^3: 7.0
/// unpaired, 7.8 sharing A).
#[allow(clippy::too_many_arguments)]
fn with_shared_a(p: WgPlan, m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> WgPlan {
    if elem != 2 || !ops.a_off || p.a_reg || p.cluster != 1 {
        return p;
    }
    let unsplit = p.tile == WG[3] && p.splits == 1 && !p.k_cluster && wg_cluster_cols(&WG[3], n) == 2;
    let tiles = wg_tiles(m, n, batch, &WG[3]);
    let k_ranges = p.tile == WG[2] && p.k_cluster && p.splits == 2 && k <= 4096 && 4 * tiles >= 3 * sms && tiles <= sms;
    if unsplit || k_ranges {
        WgPlan { tile: WG[3], splits: 1, k_cluster: false, cluster: 2, share_a: true, ..p }
    } else {
        p
    }
}

#[allow(clippy::too_many_arguments)]
fn wg_auto_tile(m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> Option<WgPlan> {
    if m <= 16 || k < wg_bk(elem) {
        return None;
    }
    if let Some(tile) = wgh_wave(m, n, k, batch, elem, sms, ops) {
        return Some(WgPlan { tile, splits: 1, a_reg: false, cluster: 1, share_a: false, k_cluster: false });
    }
    if wg64_wave(m, n, k, batch, elem, sms, ops) {
        return Some(WgPlan { tile: WG[3], splits: 1, a_reg: false, cluster: 1, share_a: false, k_cluster: false });
    }
    if let Some((tile, splits)) = wg_waves(m, n, k, batch, elem, sms, ops) {
        // (Two K ranges of a `WGK` width: a cluster's blocks, no partials through L2.)
        let k_cluster = splits > 1 && k_cluster_able(&tile);
        return Some(WgPlan { tile, splits, a_reg: false, cluster: 1, share_a: false, k_cluster });
    }
    if wg320_wave(m, n, k, batch, elem, sms) {
        return Some(WgPlan { tile: WGX[0], splits: 1, a_reg: false, cluster: 1, share_a: false, k_cluster: false });
    }
    let mut best: Option<(f64, WgPlan)> = None;
    // Split K only where even the narrowest tiles leave half the SMs idle:
    // elsewhere the model above misjudges the reduction (M = 256, K = N =
    // 4096: 128 x 128 tiles in two ranges ran at 0.86 of cuBLAS, unsplit 128
    // x 64 tiles at 0.97; bench/explore/matmul_variants.py --only gaps5).
    let few = 2 * wg_tiles(m, n, batch, &WG[WG.len() - 1]) <= sms;
    // Long K on less than a wave of tiles splits too (16-bit types, K of
    // 8192 and more): there the model's choice ran as fast as the unsplit
    // narrow tile or faster on every shape measured on the H100
    // (bench/explore/step-profile/longk-variants-h100-757ea21.log, kernel
    // times): 1024 x 32000 x 2048 (M x K x N, FLCE's grad_hidden) 203.8 ->
    // 171.7 us on 128 x 256 tiles in two ranges (cuBLAS 181.8), 768 x 16384
    // x 1024 77.5 -> 52.4 in five, 512 x 14336 x 4096 96.7 -> 87.3; at most
    // 1% slower where it changed little (1024 x 8192 x 2048 53.6 -> 54.1).
    let long_k = elem == 2 && k >= 8192;
    // The 64-row tiles likewise (16-bit types: they have no TF32 kernels):
    // on more tiles their single m64 wgmma stream per SM loses to the
    // cooperative tiles (H100, bench/explore/matmul_variants.py --only half:
    // 2048^3 on 64 x 128 tiles 0.55 of cuBLAS, 128 x 256 0.99; M = 256, K = N
    // = 4096 0.93 against 0.97 on 128 x 64), while where the 128-row tiles
    // leave half the SMs idle they beat splitting K up to K = 4096 (M = 128,
    // K = N = 4096: 0.95 against 0.82; M = 64: 0.90 against 0.76), not
    // beyond (M = 128, K = 14336: 0.95 against 1.01 on 128 x 64 in two
    // ranges).
    // And not where M fills the 128-row tiles' rows (the K cluster's
    // condition below) at K under 8192: there the model rates two ranges of
    // 64-row tiles about level with a K cluster of 128-row ones, which ran
    // 9-14% faster (H200, bf16, set `wghfix`: M = 112, 128 and 256 against a
    // 4096 x 1024 weight), while at longer K the 64-row tiles won (M = 128,
    // K x N = 8192 x 2048: 0.89 of cuBLAS against 0.77).
    let fills = |bm: i64| 4 * cdiv(m, bm) * bm <= 5 * m;
    let half = WGH.iter().filter(|_| few && elem == 2 && (long_k || !fills(WG_BM)));
    // (The 320-wide tile over several waves was measured with 128-byte
    // aligned rows only; `wg320_wave` takes it on misaligned ones too.)
    let wide = WGX.iter().filter(|_| elem == 2 && batch == 1 && !ops.misaligned);
    for t in WG.iter().chain(wide).chain(half) {
        let count = wg_tiles(m, n, batch, t);
        let max_splits = if count >= sms || !(few || long_k) || WGX.contains(t) { 1 } else { (sms / count).clamp(1, 16).min((k / 2048).max(1)) };
        for splits in 1..=max_splits {
            let c = wg_cost(t, m, n, k, batch, splits, sms, elem, ops, false);
            if best.as_ref().is_none_or(|(b, _)| c < *b * 0.999) {
                best = Some((c, WgPlan { tile: *t, splits, a_reg: false, cluster: wg_cluster_auto(t, m, n, k, batch, sms, ops), share_a: false, k_cluster: false }));
            }
        }
        // Or two K ranges as a cluster's blocks, where the tiles fill at
        // most half the SMs and M fills their rows (H200, bench/explore/
        // k-cluster/: M = 64 on 128 x 64 tiles in two ranges ran at 0.69 of
        // cuBLAS, 0.80 on the 64-row tiles); and where even 128 x 64 tiles
        // would leave half the SMs idle, or K is 4096 or more: with K
        // under 4096 and 128 x 64 tiles to fill more than half the SMs,
        // unsplit tiles ran faster (H200, bench/explore/ragged/, do_bench
        // ratios to cuBLAS: 768 x 2048 x 2048 (M x K x N) on 128 x 128
        // tiles 0.83 / 0.79 against 0.75 / 0.74 on 128 x 192 in two ranges,
        // b row-major / nn.Linear's weight; 2000 x 2000 x 600 0.86 against
        // 0.75; 1280 x 2048 x 1024 0.75 / 0.76 against 0.72 / 0.70; 640 x
        // 3000 x 2000 0.90 / 0.86 against 0.85 / 0.81; 1024 x 3072 x 1024 on
        // 128 x 64 0.87 / 0.87 against 0.82 / 0.85 on 128 x 128 in two
        // ranges), while at K = 4096 the ranges won (1024 x 4096 x 1536
        // 0.89 against 0.80 unsplit, b row-major) and with fewer tiles
        // (1024 x 2000 x 512: 0.81 / 0.84 against 0.73 / 0.80). From K =
        // 3000 to 4095 the two come out about level (unsplit 0.93 to 1.06
        // of the ranges' speed; 896 x 3000 x 1280 the lowest).
        // (The 64-row tiles' K clusters: `wgh_k_cluster` below.)
        if k_cluster_able(t) && !t.pingpong && 2 * count <= sms && fills(t.bm) && (few || k >= 4096) {
            let c = wg_cost(t, m, n, k, batch, 2, sms, elem, ops, true);
            if best.as_ref().is_none_or(|(b, _)| c < *b * 0.999) {
                best = Some((c, WgPlan { tile: *t, splits: 2, a_reg: false, cluster: 1, share_a: false, k_cluster: true }));
            }
        }
    }
    best.map(|(_, p)| match wgh_k_cluster(&p, m, n, k, batch, sms) {
        Some(ranges) => WgPlan { splits: ranges, k_cluster: true, cluster: 1, share_a: false, ..p },
        None => p,
    })
}

/// K ranges (2 or 4) as a cluster's blocks, summed in distributed shared
/// memory, for a plan of 64-row tiles on one row of them (33 to 64 rows, where
/// it was measured; one product, K of 2048 or more): two ranges where the plan
/// has one or two and a tile per cluster fills at most half the SMs; four where
/// the tiles are an eighth of the SMs or fewer and the plan has at most four.
/// The split's round trips through L2 (write, fence, count, read) held those
/// products back, and unsplit (the model splits from K = 4096) they filled half
/// the SMs or less. H200, bf16 (bench/explore/decode-split/, sets `redux`,
/// `pair`, `pair2` and `shortk`), ratio to cuBLAS, clean L2 / after do_bench's
/// flush: 33-64 rows against 4096 x 4096 0.80-0.90 -> 0.88-1.04 / 0.90-1.03
/// (row-major weights 0.51-0.82 -> 0.89-1.09), 48-64 x 8192 and 14336 x 4096 (M
/// x K x N) 0.93-0.95 -> 0.99-1.06, 64 x 4096 x 2048 0.73 / 0.79 -> 0.84-1.01 /
/// 0.91-0.93; 4 to 16 tiles of 64 x 64 (N = 256 to 1024) at K = 4096 in four
/// 1.4-1.5x faster than the plan's two through L2 (64 x 4096 x 1024 0.61 / 0.67
/// -> 0.91-0.93 / 0.98-0.99); unsplit before (set `shortk`), K = 2048 and 3072
/// against 2048 to 4096 columns 0.66-0.81 / 0.78-1.16 -> 0.79-1.08 / 0.86-1.44,
/// 64 x 2048 x 1024 in four 0.78 / 0.67 -> 1.08 / 0.92. Not four where the plan
/// has five or six (K = 14336 and 16384: 4-7% slower), nor on 32 tiles
/// (0.58-0.80 where two ran 0.68-1.01: clusters of four blocks of this shared
/// memory do not all fit at once); not two where the plan has three or more (64
/// x 8192 x 2048 0.68 against 0.73, 64 x 32000 x 2048 0.55 against 0.90), nor
/// at 96 rows (two rows of tiles: 0.87 -> 0.74; ncu: the same DRAM bytes, read
/// at 53% of the peak rate against 64%).
fn wgh_k_cluster(p: &WgPlan, m: i64, n: i64, k: i64, batch: i64, sms: i64) -> Option<i64> {
    if p.tile.bm != WGH_BM || !(33..=WGH_BM).contains(&m) || batch != 1 || k < 2048 {
        return None;
    }
    let count = wg_tiles(m, n, batch, &p.tile);
    if 8 * count <= sms && p.splits <= 4 {
        Some(4)
    } else if p.splits <= 2 && 2 * count <= sms {
        Some(2)
    } else {
        None
    }
}

/// A forced name's `k2` / `k4` ending (K in 2 or 4 ranges, the blocks of
/// one cluster): the name without it, and the plan with it applied (`None`
/// for a 128-row ping-pong or 256-wide tile, whose kernels have no such form).
fn k_cluster_suffix(name: &str) -> (&str, Option<i64>) {
    match (name.strip_suffix("k2"), name.strip_suffix("k4")) {
        (Some(n), _) => (n, Some(2)),
        (_, Some(n)) => (n, Some(4)),
        _ => (name, None),
    }
}
/// Whether tile `t` has kernels that sum K ranges in a cluster.
pub(crate) fn k_cluster_able(t: &WgTile) -> bool {
    WGK.contains(t) || WGH.contains(t) || WGW.contains(t)
}
fn with_k_cluster(plan: WgPlan, ranges: Option<i64>) -> Option<WgPlan> {
    match ranges {
        None => Some(plan),
        Some(_) if !k_cluster_able(&plan.tile) => None,
        Some(r) => Some(WgPlan { splits: r, cluster: 1, share_a: false, k_cluster: true, ..plan }),
    }
}

/// The Hopper plan for a forced name (`wg`, `wg256`, `wgp128`, ...,
/// optionally ending in `c1` or `c2`: blocks per cluster, reduced to 1
/// where the product has a single row of tiles; `n2`: pairs side by side
/// sharing A, reduced to 1 on a single column; or in `k2` or `k4`: K in
/// that many ranges, a cluster's blocks), or `None` when the name is not a
/// Hopper tile.
#[allow(clippy::too_many_arguments)]
pub(crate) fn wg_forced(name: &str, splits: Option<i64>, m: i64, n: i64, k: i64, batch: i64, elem: i64, sms: i64, ops: Operands) -> Option<WgPlan> {
    let (name, ranges) = k_cluster_suffix(name);
    let (name, cluster, share_a) = match (name.strip_suffix("c2"), name.strip_suffix("c1"), name.strip_suffix("n2")) {
        (Some(n), ..) => (n, Some(2), false),
        (_, Some(n), _) => (n, Some(1), false),
        (.., Some(n)) => (n, Some(2), true),
        _ => (name, None, false),
    };
    let auto = wg_auto(m, n, k, batch, elem, sms, ops).map(|p| p.tile).unwrap_or(WG[WG.len() - 1]);
    let tile = wg_named(name, auto)?;
    if (tile.pingpong || !tile.has_tf32()) && elem == 4 {
        return None; // no ping-pong TF32 kernels here, nor any of `wg320`, `wg96` to `wg176`
    }
    if tile.b_k_only() && !ops.b_k {
        return None; // `wgh144`, `wg96` to `wg176`: B K-major only
    }
    let cluster = match share_a {
        true => wg_cluster_cols(&tile, n),
        false => cluster.unwrap_or_else(|| wg_cluster_auto(&tile, m, n, k, batch, sms, ops)).min(wg_cluster(&tile, m)),
    };
    let share_a = share_a && cluster == 2;
    with_k_cluster(WgPlan { tile, splits: splits.unwrap_or(1), a_reg: false, cluster, share_a, k_cluster: false }, ranges)
}

/// The TF32 register-A plan (c^T = b^T a^T, A = b^T M-contiguous): here b
/// is the large operand when M is small (prefill, M = 128): a tile as wide
/// as all of M reads it once, and K is split (at least 1024 per range)
/// until the blocks fill the SMs (on the H100, M = 128, K = N = 4096: 0.86
/// to 0.89 of cuBLAS on 128-wide tiles in 4 splits, 0.65 unsplit, 0.46 on
/// 256-wide ones). Problems that would then still leave most SMs idle, and
/// wider ones, take of the widths that make blocks for 3/4 of the SMs the
/// one with the least modelled time (`wg_cost`: whole waves; on the H100,
/// 3000 x 1000 x 2000 ran 1.2x faster on 192-wide tiles, two full waves,
/// than on 256-wide ones). `m`, `n` are those of the transposed problem.
///
/// But where the 64-row tiles give each block one tile (split as above)
/// and at most 4096 of K, those run: one m64 wgmma chain per block, ping-
/// pong, beat two shorter cooperative ones on such short blocks (H200,
/// bench/explore/tf32-half/: 512^3 0.83 -> 0.93 of cuBLAS on `wgrh64`,
/// 1024^3 0.87 -> 0.90 and 1000^3 0.90 -> 0.96 on `wgrh128`, M = 128 and
/// 256 against 4096 x 4096 0.99 -> 1.05 and 0.95 -> 1.02), and lose on
/// longer ones (M = 128, K = 14336: 1.04 -> 0.98 in two splits of 7168;
/// 2048^3, four tiles a block: 0.98 -> 0.58).
///
/// And before either, for K from 4096 to 8192: two K ranges as a
/// cluster's blocks (summed in distributed shared memory) on the
/// cooperative tile that then fills the most SMs, where that is at least
/// half of them (H200, bench/explore/k-cluster/: M = 128 against 4096 x
/// 4096 1.04-1.06 -> 1.13-1.18 of cuBLAS on 128 x 64 tiles, M = 256 1.02 ->
/// 1.16-1.19 on 128 x 128; no faster at K = 512 to 1024, and at K = 14336
/// 0.88 against 1.05 in four global splits of 128 x 128 tiles).
pub(crate) fn wg_reg(m: i64, n: i64, k: i64, batch: i64, sms: i64) -> WgPlan {
    let tiles = |bn: i64| cdiv(m, WG_BM) * cdiv(n, bn) * batch;
    if (4096..=8192).contains(&k) {
        let fits = |t: &&WgTile| k_cluster_able(t) && 2 * tiles(t.bn) <= sms && 4 * tiles(t.bn) >= sms;
        if let Some(t) = WG.iter().filter(fits).max_by_key(|t| (tiles(t.bn), -cdiv(n, t.bn) * t.bn, t.bn)) {
            return WgPlan { tile: *t, splits: 2, a_reg: true, cluster: 1, share_a: false, k_cluster: true };
        }
    }
    let splits_for = |count: i64| if 2 * count >= sms { 1 } else { (sms / count).min(k / 1024).max(1) };
    // Of those, the one with the most blocks, then the fewest columns past
    // n, then the widest (M = 64: 64 x 64 tiles in two splits ran at 0.99
    // of cuBLAS, 64 x 128 ones at 0.80; M = 128: 64 x 128 in two splits
    // 1.05, 64 x 64 unsplit 0.91).
    let half_tiles = |t: &WgTile| cdiv(m, WGH_BM) * cdiv(n, t.bn) * batch;
    let key = |t: &&WgTile| (half_tiles(t) * splits_for(half_tiles(t)), -cdiv(n, t.bn) * t.bn, t.bn);
    if let Some(t) = WGH.iter().filter(|t| half_tiles(t) <= sms).max_by_key(key) {
        let splits = splits_for(half_tiles(t));
        if cdiv(k, splits) <= 4096 {
            return WgPlan { tile: *t, splits, a_reg: true, cluster: 1, share_a: false, k_cluster: false };
        }
    }
    let bn = match WG.iter().rev().find(|t| t.bn >= n) {
        Some(t) if 2 * tiles(t.bn) * splits_for(tiles(t.bn)) >= sms => t.bn,
        _ => {
            // On the register-A kernels the 192-wide tile is slower per
            // multiply-add than the 256-wide one (H100, 8192^3: 274 against
            // 308 TFLOP/s, 21 waves against 16): a 10% handicap.
            let handicap = |t: &WgTile| if t.bn == 192 { 1.1 } else { 1.0 };
            let cost = |t: &WgTile| wg_cost(t, m, n, k, batch, 1, sms, 4, Operands::default(), false) * handicap(t);
            let full = WG.iter().filter(|t| 4 * tiles(t.bn) >= 3 * sms);
            full.min_by(|x, y| cost(x).total_cmp(&cost(y))).unwrap_or(&WG[WG.len() - 1]).bn
        }
    };
    let tile = *WG.iter().find(|t| t.bn == bn).unwrap_or(&WG[0]);
    WgPlan { tile, splits: splits_for(tiles(bn)), a_reg: true, cluster: 1, share_a: false, k_cluster: false }
}

/// The forced register-A plan (`wgr`, `wgr256`, ...; `wgrh128`, `wgrh64`:
/// ping-pong on 64-row tiles; `c2` at the end: in pairs sharing B, where
/// there are two rows of tiles; `k2`, `k4`: as in `wg_forced`).
pub(crate) fn wg_reg_forced(name: &str, splits: Option<i64>, m: i64, n: i64, k: i64, batch: i64, sms: i64) -> Option<WgPlan> {
    let (name, ranges) = k_cluster_suffix(name);
    let (name, cluster) = match name.strip_suffix("c2") {
        Some(name) => (name, 2),
        None => (name, 1),
    };
    let auto = wg_reg(m, n, k, batch, sms);
    let plan = match name.strip_prefix("wgr")? {
        // (A split count asks for the global split, not the cluster's.)
        "" => WgPlan { splits: splits.unwrap_or(auto.splits), k_cluster: auto.k_cluster && splits.is_none(), ..auto },
        width => {
            let (list, width) = match width.strip_prefix('h') {
                Some(width) => (&WGH[..], width),
                None => (&WG[..], width),
            };
            let bn: i64 = width.parse().ok()?;
            let tile = *list.iter().find(|t| t.bn == bn)?;
            WgPlan { tile, splits: splits.unwrap_or(1), a_reg: true, cluster: 1, share_a: false, k_cluster: false }
        }
    };
    // (Pairs and a cluster's K ranges exclude each other: pairs split K
    // globally.)
    let cluster = cluster.min(wg_cluster(&plan.tile, m));
    with_k_cluster(WgPlan { cluster, k_cluster: plan.k_cluster && cluster == 1, ..plan }, ranges)
}

/// A skinny-kernel plan: blocks per cluster (each a K range), K per block,
/// and 8-row blocks of m (1 or 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SkinnyPlan {
    pub ranks: i64,
    pub k_chunk: i64,
    pub mt: i64,
    /// The streaming build's ring, one of `SKINNY_TMA_STAGES` (0: the
    /// register build, which has none).
    pub stages: i64,
}

/// Whether a product is small enough for the generic kernel
/// (kernels/matmul.cu: a thread per output, 16 of K per step, no set-up) to
/// finish first. On the H100, in graphs of 100 calls
/// (bench/explore/tiny-matmul-h100.txt), it takes 1.7 µs plus 0.36 per 16
/// of K at up to 65536 outputs, where every other kernel takes 2.8 µs
/// (16-bit) or 4.5 µs (float32) at least: 16 x 16 x 16 float32 ran in 1.7
/// µs against 4.6 (skinny) and cuBLAS's 2.1. The limits are the measured
/// wins: K up to 128 in float32, 64 in 16-bit types up to 16384 outputs
/// (128 x 64 x 128 bfloat16: 2.85 against 2.92), 16 up to 65536.
pub(crate) fn tiny(m: i64, n: i64, k: i64, batch: i64, elem: i64) -> bool {
    let outputs = m.saturating_mul(n).saturating_mul(batch);
    let max_k = match (elem, outputs) {
        (4, _) => 128,
        (_, 0..=16_384) => 64,
        _ => 16,
    };
    outputs <= 65_536 && k <= max_k
}

/// The skinny kernel's blocks per K range: a 64-column strip of n per
/// batch (the grid's z covers at most 65535 batches; blocks loop over more).
fn skinny_strips(n: i64, batch: i64) -> i64 {
    cdiv(n, SKINNY_NW) * batch.min(65_535)
}

/// The smallest cluster size the skinny kernels take that is at least `r`
/// (the largest for more): a forced `skinny/<r>` or `skinny_tma/<r>`.
fn cluster_at_least(r: i64) -> i64 {
    *SKINNY_CLUSTERS.iter().find(|&&c| c >= r).unwrap_or(&SKINNY_CLUSTERS[SKINNY_CLUSTERS.len() - 1])
}

/// The skinny kernel for `m <= 16` rows: the smallest cluster size that
/// brings the blocks (64-column strips, per batch, times the cluster) to
/// 0.9 per SM, keeping at least 64 of K per warp (512 per block); else the
/// largest such. On the H100 (run 1), M = 1 against 4096 x 4096 weights ran
/// at 1.63 TB/s on 2 blocks per cluster (128 blocks), 1.30 on 4 and 1.20 on
/// 8; against 4096 x 14336 at 2.39 on 1 (224 blocks), 2.18 on 2.
/// `forced_ranks` overrides (rounded up to a size the kernel takes).
pub(crate) fn skinny_plan(m: i64, n: i64, k: i64, batch: i64, sms: i64, forced_ranks: Option<i64>) -> Option<SkinnyPlan> {
    if !(1..=SKINNY_MAX_M).contains(&m) || k < 1 {
        return None;
    }
    let strips = skinny_strips(n, batch);
    let target = cdiv(9 * sms, 10);
    let ranks = match forced_ranks {
        Some(r) => cluster_at_least(r),
        None => SKINNY_CLUSTERS
            .iter()
            .copied()
            .take_while(|&c| c == 1 || k / c >= SKINNY_WARPS * 64)
            .find(|&c| strips * c >= target)
            .unwrap_or_else(|| SKINNY_CLUSTERS.iter().copied().take_while(|&c| c == 1 || k / c >= SKINNY_WARPS * 64).last().unwrap_or(1)),
    };
    let k_chunk = cdiv(cdiv(k, ranks), 32) * 32;
    Some(SkinnyPlan { ranks, k_chunk, mt: cdiv(m, 8), stages: 0 })
}

/// Shared memory of a skinny launch: the warps' partial sums.
pub(crate) fn skinny_smem(mt: i64) -> u32 {
    (SKINNY_WARPS * mt * 8 * SKINNY_NW * 4) as u32
}

/// Whether a skinny product streams through the TMA build (blocks per
/// 64-column strip and batch, and per K range: `skinny_tma_plan`). 16-bit
/// weights: from 16 strips (N = 1024) on, where `skinny_tma_plan` splits K
/// over clusters so that at least 0.4 blocks per SM stream. On the H200
/// (bench/explore/decode-split/, `results/few-*`; L2 clean / after
/// do_bench's flush) the register build, whose cluster split ran there
/// before, streamed at 0.49-0.79 / 0.59-0.93 of cuBLAS from 16 to 56 strips
/// and the streaming build split so at 0.86-1.07 / 1.02-1.18 (M = 1 and 16
/// against 8192 x 2048, 16384 x 2048, 3584 x 3584, 8192 x 3584, 4096 x
/// 1024, 14336 x 1024, 18944 x 3584). Below 16 strips the register build
/// stays. From 64 strips (bench/explore/skinny/README.md, run 8, H100): the
/// streaming build ran 1.03 to 1.14 times as fast as the register build
/// with the L2 clean and 0.99 to 1.05 times after the flush, up to LM heads.
/// float32's FFMA consumers do M multiply-adds per weight, so with fewer
/// strips than SMs it streams at M = 1 (from 16 strips: 8192 x 2048 at 1.00
/// / 1.07 of cuBLAS split in two, the register build 0.65 / 0.70), and from
/// 64 strips at M = 9 to 16 where `skinny_tma_plan` splits K over two
/// blocks per strip (`bench/explore/matmul-variants-h100-f32decode-da38d07.log`,
/// unsplit: against 4096 x 4096, M = 1 1.04-1.09x the register build, M = 8
/// 0.47x, M = 16 0.84x; M = 16 against 4096 x 14336, 224 strips, 1.27x. On
/// the H200, split: M = 16 1.31x, M = 8 0.74x). `ffma`: float32 on those
/// consumers (TF32 off); TF32's consumers are mma, as 16-bit types' are.
/// 17 to 32 rows (4 blocks of 8) stream too, on mma consumers only: there
/// the tile kernels streamed the weights at 0.41-0.84 of cuBLAS with the L2
/// clean, this build at 0.67-1.05 (H200, bench/explore/decode-split/, set
/// `midm`, against 4096 x 4096, 4096 x 14336 and 14336 x 4096). 33 to 64
/// rows (8 blocks of 8; set `rows64`, 40, 48 and 64 rows, L2 clean / after
/// do_bench's flush): TF32 streamed at 0.77-0.95 / 0.87-0.99 of cuBLAS
/// where the tile kernels ran at 0.44-0.69 / 0.54-0.77; 16-bit weights
/// gained only on more strips than SMs (4096 x 14336, 224 strips: 1.00-1.09x
/// the tile kernels) and lost up to 10% on 64 strips, which keep the tile
/// kernels; since then 64 x 128 tiles beat both (`wgh_wave`), so one
/// 16-bit product of 33 to 64 rows streams only on few strips at long K
/// (`few_strips_long_k`), and none streams where `wgh_wave` has a tile.
/// `elem`: bytes per element; `b_k`: B is read K-major.
#[allow(clippy::too_many_arguments)]
pub(crate) fn skinny_tma(m: i64, n: i64, k: i64, batch: i64, elem: i64, ffma: bool, sms: i64, b_k: bool) -> bool {
    let strips = skinny_strips(n, batch);
    if m > SKINNY_MAX_M {
        // Past 16 rows: mma consumers only (FFMA would do m per weight).
        let tiles = wgh_wave(m, n, k, batch, elem, sms, Operands { b_k, ..Operands::default() }).is_some();
        let streams = !tiles && (m <= 32 || elem == 4 || strips > sms);
        (!ffma && m <= SKINNY_TMA_MAX_M && strips >= 16 && streams) || few_strips_long_k(m, strips, k, ffma)
    } else if ffma {
        (m == 1 && strips >= 16) || (strips >= 64 && (strips >= sms || (m > 8 && 2 * strips <= sms)))
    } else {
        strips >= 16
    }
}

/// 17 to 64 rows against few strips and long K, on mma consumers: the
/// streaming build in clusters of 8, where the tile kernels leave most SMs
/// idle or split K through L2. 17 to 32 rows: 4 to 15 strips (N = 193 to
/// 960), K >= 2048; 33 to 64 rows: 4 to 14 strips, K >= 6144. On the H200
/// (bench/explore/decode-split/, sets `longk`, `longk2`, `rows32s`; ratio
/// to cuBLAS, L2 clean / after do_bench's flush): 17 to 32 rows ran at
/// 0.87-1.03 / 0.87-1.02 where the plan's tiles ran at 0.55-0.65 /
/// 0.59-0.72 (K = 2048 to 14336: 24 x 4096 x 512 0.95 / 1.02 against 0.58
/// / 0.61); 33 to 64 rows at 0.64-0.87 / 0.70-0.95 against 0.53-0.73 /
/// 0.58-0.85 (K = 6144 to 32768, 16-bit and TF32: TF32 64 x 14336 x 512
/// 0.86 / 0.95 against 0.59 / 0.68). Not at 33 to 64 rows and K = 4096
/// (64 x 4096 x 512 0.84 / 0.87 against 0.91 / 0.91, 48 x 4096 x 256
/// level), nor there on 16 strips (16 clusters of 8 do not all fit at
/// once: 0.53-0.55 against 0.74-0.83); clusters of 2 and 4 were slower
/// than 8 everywhere. A range may then be as short as 4 stages (K = 2048).
fn few_strips_long_k(m: i64, strips: i64, k: i64, ffma: bool) -> bool {
    let (max_strips, min_k) = if m <= 32 { (15, 2048) } else { (14, 6144) };
    !ffma && (SKINNY_MAX_M + 1..=SKINNY_TMA_MAX_M).contains(&m) && (4..=max_strips).contains(&strips) && k >= min_k
}

/// The streaming build's plan. Blocks per strip (a cluster splitting K):
/// the fewest of 1, 2 and 4 that give 0.4 blocks per SM (53 on 132 SMs),
/// then 2 instead of 1 where two blocks per strip still fit the SMs at once
/// and K is long (16-bit: 4096 per block; float32, whose FFMA consumers
/// limit it: 8 stages per block). Every range keeps 8 stages at least. One
/// SM streams about 50 GB/s here, so few blocks cannot reach the DRAM's
/// rate; but a split costs a cluster reduction and ring fills, which long K
/// repays. On the H200 (bench/explore/decode-split/, L2 clean / after
/// do_bench's flush; 16-bit, ratios to one block per strip): 11008 to 14336
/// x 4096 (64 strips) in two 1.02-1.09 / 0.99-1.02, 18944 x 3584 (56)
/// 1.26-1.44 / 1.21-1.36 (against the register build), 8192 x 4096
/// 1.00-1.04 / 0.98-0.99, 4096 x 4096 0.94-0.95 / 0.91-0.98; 4 ways lost
/// 7-30% on 32 to 64 strips, where 2 do, and won only at 16 (4096 x 1024
/// and 14336 x 1024: 1.16 and 1.52 against 2 ways). A range is a whole
/// number of stages (128 bytes of K): TMA fills only K's end with zeros, so
/// no block's boxes may reach into the next block's range. `forced_ranks`
/// overrides (rounded up to a size the kernel takes).
///
/// The ring (shallower rings let more blocks share an SM): 16 stages (147
/// KB, one block per SM) where the blocks fill at most half the SMs, or for
/// float32 at 9 to 16 rows split in two; 4 (47-58 KB, three or four blocks
/// per SM) from one and a half strips per SM (float32: two) to three; else
/// 8 (two blocks per SM). On the H200 (bench/explore/skinny/README.md, runs
/// 9-12, 16-bit, L2 clean / after do_bench's flush), against 16 stages: 8
/// streamed 1-11% faster from 96 strips (N = 6144) to LM heads and 5-13%
/// slower at 64 (N = 4096: 64 blocks need the deeper ring); against 8, 4
/// streamed 1-6% faster at 224 strips (N = 14336), within 3% either way at
/// 192 and 256, 3-19% faster from 272 to 384 (where two blocks per SM leave
/// a second, short wave), 18-21% slower from 416 on and 2-25% slower up to
/// 172. Split in two (decode-split/, L2 clean): 64 or 56 strips (112-128
/// blocks) within 1% to 10% faster on 8 than on 16 (16-bit, and float32 at
/// M = 1), 32 strips (64 blocks) 4-9% slower. float32 (FFMA consumers;
/// `results/ring-h200-*.txt`, the library): 8 against 16 at 224 strips
/// 1.02-1.20x, and 4 against 8 0.98x (M = 1) and 0.81x (M = 16) there, but
/// 1.10x and 1.26x at 296 strips; at 64 strips, split in two, M = 16 ran
/// 3-4% slower on 8 than on 16. `forced_stages` (one of
/// `SKINNY_TMA_STAGES`) overrides. `ffma`: float32 on FFMA consumers (the
/// float32 rules above); TF32 (mma consumers) follows the 16-bit ones, its
/// long K the same bytes (2048 elements).
#[allow(clippy::too_many_arguments)]
pub(crate) fn skinny_tma_plan(
    m: i64,
    n: i64,
    k: i64,
    batch: i64,
    elem: i64,
    ffma: bool,
    sms: i64,
    forced_ranks: Option<i64>,
    forced_stages: Option<i64>,
) -> Option<SkinnyPlan> {
    let max_m = if ffma { SKINNY_MAX_M } else { SKINNY_TMA_MAX_M };
    if !(1..=max_m).contains(&m) || k < 1 {
        return None;
    }
    // The kernel's m blocks: the fewest of SKINNY_TMA_MT that hold m.
    let mt = *SKINNY_TMA_MT.iter().find(|&&b| 8 * b >= m)?;
    let bk = 128 / elem;
    let strips = skinny_strips(n, batch);
    let ranks = match forced_ranks {
        Some(r) => cluster_at_least(r),
        None if few_strips_long_k(m, strips, k, ffma) => 8,
        None => {
            let few = SKINNY_CLUSTERS.into_iter().filter(|&c| c <= 4 && (c == 1 || k / c >= 8 * bk));
            let r = few.clone().find(|&c| 5 * strips * c >= 2 * sms).or_else(|| few.clone().next_back()).unwrap_or(1);
            let long_k = if ffma { 8 * bk } else { 8192 / elem };
            if r == 1 && 2 * strips <= sms && k / 2 >= long_k {
                2
            } else {
                r
            }
        }
    };
    let k_chunk = cdiv(cdiv(k, ranks), bk) * bk;
    let [deep, mid, shallow] = SKINNY_TMA_STAGES;
    // Where the 4-stage ring starts, in half strips: past 1.5 strips per SM (float32: 2).
    let shallow_from = if ffma { 4 * sms } else { 3 * sms };
    let stages = forced_stages.unwrap_or(if mt > 4 {
        // 8 m blocks: 8 stages (193 KB); 4 (129 KB) would not fit a second
        // block on the SM either.
        mid
    } else if mt > 2 {
        // 4 m blocks: 16 stages (225 KB) or 8 (129 KB) leave room for one
        // block per SM, 4 (81 KB) for two.
        if strips * ranks <= sms {
            deep
        } else {
            shallow
        }
    } else if 2 * strips * ranks <= sms || (ffma && m > 8 && ranks > 1) {
        deep
    } else if 2 * strips > shallow_from && strips <= 3 * sms {
        shallow
    } else {
        mid
    });
    // A forced ring the kernel is not built with (16 stages of 8 m blocks).
    skinny_tma_built(ffma, mt, stages).then_some(SkinnyPlan { ranks, k_chunk, mt, stages })
}

/// A forced streaming build: `skinny_tma` (its planned ring), or
/// `skinny_tma<stages>` for one of `SKINNY_TMA_STAGES`; `Some(None)`,
/// `Some(Some(stages))`, or `None` for any other name.
pub(crate) fn forced_skinny_tma(name: &str) -> Option<Option<i64>> {
    match name.strip_prefix("skinny_tma")? {
        "" => Some(None),
        s => s.parse().ok().filter(|s| SKINNY_TMA_STAGES.contains(s)).map(Some),
    }
}

/// Dynamic shared memory of a tensor-core tile (matmul_tc.cu `TcTile`).
pub(crate) fn tc_smem(t: &Tile, elem: i64, a_k: bool, b_k: bool) -> u32 {
    let vec = 16 / elem;
    let a = if a_k { t.bm * (t.bk + vec) } else { t.bk * (t.bm + 8) };
    let b = if b_k { t.bn * (t.bk + vec) } else { t.bk * (t.bn + 8) };
    (t.stages * (a + b) * elem) as u32
}

/// Dynamic shared memory of a CUDA-core tile (matmul_simt.cu `simt_gemm`).
pub(crate) fn simt_smem(t: &Tile) -> u32 {
    (t.stages * t.bk * ((t.bm + 4) + (t.bn + 4)) * 4) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::tiles::{self, skinny_tma_smem, SIMT, SKINNY_TMA_DTYPES, TC_HALF, TC_X64};

    #[test]
    fn float32_takes_the_fp64_tensor_cores_where_the_model_says_they_pay() {
        let t = &TC_X64[0];
        let x = |m, k, n, batch| x64_splits(t, m, n, k, batch, 132);
        // Tiles that fill the SMs: unsplit (correctly rounded).
        assert_eq!(x(2048, 2048, 2048, 1), Some(1));
        assert_eq!(x(1000, 4095, 2048, 1), Some(1)); // 8 x 16 = 128 tiles
        assert_eq!(x(4100, 1000, 4000, 1), Some(1));
        assert_eq!(x(512, 512, 512, 8), Some(1)); // batches count
        assert_eq!(x(128, 4096, 14336, 1), Some(1)); // 112 tiles: more ranges would add waves
        // Fewer tiles: split to about one wave (bench/explore/matmul-variants-h100-x64split.log).
        assert_eq!(x(128, 4096, 4096, 1), Some(4));
        assert_eq!(x(128, 14336, 4096, 1), Some(4));
        assert_eq!(x(256, 4096, 4096, 1), Some(2));
        assert_eq!(x(1024, 1024, 1024, 1), Some(2));
        assert_eq!(x(1000, 1000, 1000, 1), Some(2));
        // Half-empty tiles, or too little K per range: the CUDA cores.
        assert_eq!(x(64, 4096, 4096, 1), None);
        assert_eq!(x(512, 512, 512, 1), None);
        assert_eq!(x(16, 4096, 1 << 20, 1), None); // decode rows
    }

    #[test]
    fn generated_tables_name_every_tile() {
        let h = tiles::header();
        for t in TC_HALF.iter().chain(SIMT.iter()) {
            assert!(h.contains(&format!("X({}, {}, {}, {}", t.name, t.bm, t.bn, t.bk)));
        }
        for t in WG.iter().chain(WGP.iter()).chain(WGH.iter()) {
            assert!(h.contains(&format!("X({}, {})", t.bn, t.stages)));
        }
        let r = tiles::rust_kernels();
        for name in ["mm_tc_f16_256_kk", "mm_simt_f32_16_mn", "mm_wg256_bf16_mn", "mm_wgp128_f16_mk", "mm_wgr64_tf32", "mm_wgh64_bf16_kn", "mm_skinny_bf16_ne_m2"] {
            assert!(r.contains(&format!("\"{name}\"")), "{name}");
        }
    }

    const SMS: i64 = 132;
    /// B N-major with 128-byte aligned rows, or not; B K-major.
    const KN: Operands = Operands { b_k: false, misaligned: false, a_off: false, a_off32: false, b_off32: false };
    const KN_OFF: Operands = Operands { misaligned: true, ..KN };
    const NK: Operands = Operands { b_k: true, ..KN };

    #[test]
    fn force_parsing() {
        assert_eq!(parse_force(None), Force::Auto { hopper: true });
        assert_eq!(parse_force(Some(" auto ")), Force::Auto { hopper: true });
        assert_eq!(parse_force(Some("nowg")), Force::Auto { hopper: false });
        assert_eq!(parse_force(Some("generic")), Force::Generic);
        assert_eq!(parse_force(Some("wg128/3")), Force::Tile("wg128".into(), Some(3)));
        assert_eq!(parse_force(Some("skinny")), Force::Tile("skinny".into(), None));
        assert_eq!(parse_force(Some("64/x")), Force::Tile("64".into(), None));
        // `+acc`: the variant, then the accumulate path; `auto+wg` is not it.
        assert_eq!(split_acc(Some("wg128/2+acc")), (Some("wg128/2"), true));
        assert_eq!(split_acc(Some("auto+wg")), (Some("auto+wg"), false));
        assert_eq!(split_acc(None), (None, false));
        assert_eq!(parse_force(split_acc(Some("+acc")).0), Force::Auto { hopper: true });
        assert_eq!(parse_force(split_acc(Some("skinny/4+acc")).0), Force::Tile("skinny".into(), Some(4)));
    }

    #[test]
    fn layouts() {
        // bf16 [4096, 4096] row-major: K-major; a transposed view: MN-major.
        assert_eq!(operand_layout(256, 1, 4096, 4096, 0, 4096, 1, 2), Layout::KMajor);
        assert_eq!(operand_layout(256, 1, 4096, 4096, 0, 1, 4096, 2), Layout::MnMajor);
        // Row stride 4095: misaligned; an odd start likewise.
        assert_eq!(operand_layout(256, 1, 4096, 4095, 0, 4095, 1, 2), Layout::KUnaligned);
        assert_eq!(operand_layout(258, 1, 4096, 4096, 0, 4096, 1, 2), Layout::KUnaligned);
        assert_eq!(operand_layout(256, 1, 4095, 4096, 0, 1, 4095, 2), Layout::MnUnaligned);
        // Batch stride misaligned only matters with more than one batch.
        assert_eq!(operand_layout(256, 2, 3, 8, 25, 8, 1, 2), Layout::KUnaligned);
        assert_eq!(operand_layout(256, 1, 3, 8, 25, 8, 1, 2), Layout::KMajor);
        // Neither stride 1.
        assert_eq!(operand_layout(256, 1, 8, 8, 0, 16, 2, 2), Layout::Strided);
        // One row or one k: the other stride is free.
        assert_eq!(operand_layout(256, 1, 1, 64, 0, 7, 1, 2), Layout::KMajor);
        // float32: 4 per 16 bytes.
        assert_eq!(operand_layout(256, 1, 10, 12, 0, 12, 1, 4), Layout::KMajor);
        assert_eq!(operand_layout(256, 1, 10, 10, 0, 10, 1, 4), Layout::KUnaligned);
    }

    #[test]
    fn split_k_ranges_cover_k() {
        for k in [1, 31, 32, 33, 1000, 4096, 14336] {
            for s in [1, 2, 3, 7, 64] {
                for bk in [16, 32, 64] {
                    let (splits, chunk) = split_k(k, s, bk);
                    assert!(splits >= 1 && splits <= s.max(1));
                    assert_eq!(chunk % bk, 0);
                    assert!(splits * chunk >= k && (splits - 1) * chunk < k, "k {k} s {s} bk {bk}");
                }
            }
        }
    }

    #[test]
    fn mma_tiles() {
        // Big problems take the 256 tile unsplit; small ones a narrower tile, split.
        assert_eq!(choose_tile(&TC_HALF, 4096, 4096, 4096, 1, SMS), (0, 1));
        let (i, s) = choose_tile(&TC_HALF, 256, 256, 4096, 1, SMS);
        assert!(TC_HALF[i].bm <= 128 && s > 1);
        // At most 16 rows: the 16-row tile, split to fill the GPU.
        let (i, s) = small_kernel_choice(&TC_HALF, 16, 4096, 4096, 1, SMS, false);
        assert_eq!(TC_HALF[i].bm, 16);
        assert!(s > 1);
        assert_eq!(small_kernel_choice(&SIMT, 4096, 4096, 4096, 1, SMS, true), (0, 1));
        assert_eq!(SIMT[small_kernel_choice(&SIMT, 2048, 2048, 2048, 1, SMS, true).0].name, "256");
        assert_eq!(SIMT[small_kernel_choice(&SIMT, 1024, 2048, 2048, 1, SMS, true).0].name, "128");
        let (i, s) = small_kernel_choice(&SIMT, 128, 4096, 4096, 1, SMS, true);
        assert_eq!((SIMT[i].name, s), ("128", 4));
        let (i, s) = small_kernel_choice(&SIMT, 512, 512, 512, 1, SMS, true);
        assert_eq!((SIMT[i].name, s), ("128", 8));
        let (i, s) = small_kernel_choice(&SIMT, 1024, 1024, 1024, 1, SMS, true);
        assert_eq!((SIMT[i].name, s), ("128", 2));
        // Half-empty 128 x 128 tiles (M or N of 64): 64 x 64 tiles.
        assert_eq!(SIMT[small_kernel_choice(&SIMT, 64, 4096, 4096, 1, SMS, true).0].name, "64");
        assert_eq!(SIMT[small_kernel_choice(&SIMT, 512, 64, 512, 1, SMS, true).0].name, "64");
        assert_eq!(forced_tile(&TC_HALF, "64", Some(3)), Some((2, 3)));
        assert_eq!(forced_tile(&TC_HALF, "wg", None), None);
    }

    #[test]
    fn hopper_tiles() {
        // Large squares: a 192- or 256-wide cooperative tile (the fewer
        // whole waves), no split.
        let p = wg_auto(8192, 8192, 8192, 1, 2, SMS, KN).unwrap();
        assert_eq!((p.tile.bn, p.splits), (192, 1));
        let p = wg_auto(4096, 4096, 4096, 1, 2, SMS, KN).unwrap();
        assert_eq!((p.tile.bn, p.splits), (256, 1));
        // Few rows: the mma.sync kernels (or the skinny one) instead.
        assert_eq!(wg_auto(16, 4096, 4096, 1, 2, SMS, KN), None);
        // M = 128 against a 4096 x 4096 or 14336 x 4096 weight: 64 tiles of
        // 128 x 64 fill half the SMs, in two K ranges as a cluster's blocks
        // all of them. M = 32 to 64: 64 x 64 tiles in two K ranges; 80 and
        // 96: 64 x 128 ones, also against 14336 x 4096 (set `tiles64`). From
        // 33 to 64 rows (one row of tiles) the two ranges are a cluster's
        // blocks (`wgh_k_cluster`, sets `redux`, `pair`, `pair2`, `shortk`),
        // not at 80 and more; on 16 tiles or fewer, four ranges, unless the
        // plan has more than four.
        let kc = |p: WgPlan| (p.tile, p.splits, p.k_cluster, p.cluster);
        assert_eq!(wg_auto(128, 4096, 4096, 1, 2, SMS, KN).map(kc), Some((WG[3], 2, true, 1)));
        assert_eq!(wg_auto(128, 4096, 14336, 1, 2, SMS, KN).map(kc), Some((WG[3], 2, true, 1)));
        for m in [33, 48, 64] {
            for (n, k) in [(4096, 4096), (2048, 4096), (4096, 14336)] {
                assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((WGH[1], 2, true, 1)), "{m} {n} {k}");
            }
            assert!(!wg_auto(m, 4096, 4096, 2, 2, SMS, NK).unwrap().k_cluster, "{m}: a batch of two");
            assert_eq!(wg_auto(m, 2048, 8192, 1, 2, SMS, NK).map(kc), Some((WGH[1], 3, false, 1)), "{m}: three ranges");
            for n in [256, 1024] {
                assert_eq!(wg_auto(m, n, 4096, 1, 2, SMS, NK).map(kc), Some((WGH[1], 4, true, 1)), "{m} x 4096 x {n}");
            }
            assert_eq!(wg_auto(m, 1024, 16384, 1, 2, SMS, NK).map(kc), Some((WGH[1], 5, false, 1)), "{m}: five ranges");
            // Where the model leaves them unsplit (K = 2048 and 3072, set `shortk`): likewise; not below K = 2048.
            for (n, k) in [(4096, 2048), (2048, 2048), (3072, 3072)] {
                assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((WGH[1], 2, true, 1)), "{m} {n} {k}");
            }
            assert_eq!(wg_auto(m, 1024, 2048, 1, 2, SMS, NK).map(kc), Some((WGH[1], 4, true, 1)), "{m} x 2048 x 1024");
            assert!(wg_auto(m, 4096, 1024, 1, 2, SMS, NK).is_none_or(|p| !p.k_cluster), "{m} x 1024 x 4096");
        }
        // Not below 33 rows (not measured there).
        for (n, k) in [(4096, 4096), (512, 4096), (512, 2048)] {
            assert!(!wg_auto(32, n, k, 1, 2, SMS, NK).unwrap().k_cluster, "32 {n} {k}");
        }
        for (m, k) in [(80, 4096), (96, 4096), (96, 14336)] {
            assert_eq!(wg_auto(m, 4096, k, 1, 2, SMS, NK).map(kc), Some((WGH[0], 2, false, 1)));
        }
        // 64-row tiles over all of K in whole waves (`wgh_wave`). 64 x 128: 33 to 128 rows, a row of 64 such tiles or more (one wave at most from 65 rows).
        let one = |m, n, k| wg_auto(m, n, k, 1, 2, SMS, NK).map(|p| (p.tile, p.splits, p.cluster));
        for (m, n) in [(33, 8576), (48, 14336), (64, 16384), (96, 8192), (128, 8192), (48, 20352), (64, 28672), (64, 128256)] {
            assert_eq!(one(m, n, 4096), Some((WGH[0], 1, 1)), "{m} x {n}");
        }
        let wave = |m, n, ops| wgh_wave(m, n, 4096, 1, 2, SMS, ops);
        assert!(wave(96, 11008, NK).is_none() && wave(128, 4096, NK).is_none() && wave(129, 8192, NK).is_none());
        assert!(wave(96, 9216, KN).is_none() && wave(128, 9000, KN).is_none(), "144 tiles of 128 on two rows");
        assert_eq!(wg_auto(96, 9216, 3072, 1, 2, SMS, KN).map(|p| (p.tile, p.splits)), Some((WG[2], 1)));
        assert!(wave(32, 14336, NK).is_none() && wave(32, 28672, NK).is_none() && wave(16, 18944, NK).is_none());
        assert!(wgh_wave(48, 14336, 4096, 1, 4, SMS, NK).is_none() && wgh_wave(48, 14336, 4096, 2, 2, SMS, NK).is_none() && wgh_wave(48, 14336, 1024, 1, 2, SMS, NK).is_none());
        // 64 x 64 on one row of 67 to 132 such tiles (33 to 64 rows); fewer take K ranges in a cluster.
        for (m, n) in [(33, 8192), (48, 7936), (64, 6144), (48, 4608), (64, 4288)] {
            assert_eq!(one(m, n, 4096), Some((WGH[1], 1, 1)), "{m} x {n}");
        }
        assert_eq!(wave(64, 4224, NK), None);
        // 64 x 144 (B K-major) where its tiles make one wave 90% full or more and 64 x 128 ones more than a wave: 17 to 256 rows.
        for (m, n) in [(32, 18944), (17, 17000), (64, 18944), (48, 17000), (96, 9216), (128, 9000), (256, 4608), (192, 6144)] {
            assert_eq!(one(m, n, 3584), Some((WGW[0], 1, 1)), "{m} x {n}");
        }
        assert_eq!(wave(64, 18944, KN), Some(WGH[0]));
        assert_eq!(wave(32, 18944, KN), None);
        assert_eq!(wave(64, 16384, NK), Some(WGH[0]), "128 tiles of 128: one wave");
        assert_eq!(wave(96, 8192, NK), Some(WGH[0]), "114 tiles of 144: under 90% of a wave");
        assert_eq!(wave(256, 9216, NK), None, "256 tiles of 144");
        // (33 to 64 rows at 16897 to 16992 columns: 133 tiles of 128, 118 of 144, under 90% of a wave but one.)
        assert_eq!(wave(64, 16950, NK), Some(WGW[0]));
        // Where M fills the 128-row tiles, those in a K cluster, but for long K (set `wghfix`).
        for m in [112, 128, 256] {
            assert_eq!(wg_auto(m, 1024, 4096, 1, 2, SMS, NK).map(kc), Some((WG[3], 2, true, 1)), "{m}");
        }
        assert_eq!(wg_auto(128, 2048, 8192, 1, 2, SMS, NK).map(|p| (p.tile, p.splits)), Some((WGH[0], 4)));
        // Two filled rows of 128-row tiles on one wave of 128 x 64 tiles, 80% full or more (`wg64_wave`).
        for (m, n, k) in [(256, 4096, 4096), (256, 3584, 3584), (205, 4224, 2048), (256, 3329, 4096)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((WG[3], 1, false, 1)), "{m} x {n} x {k}");
        }
        assert!(wg64_wave(256, 4096, 4096, 1, 2, SMS, NK) && !wg64_wave(204, 4096, 4096, 1, 2, SMS, NK) && !wg64_wave(257, 4096, 4096, 1, 2, SMS, NK));
        assert!(!wg64_wave(256, 3328, 4096, 1, 2, SMS, NK) && !wg64_wave(256, 4225, 4096, 1, 2, SMS, NK) && !wg64_wave(256, 4096, 8192, 1, 2, SMS, NK));
        assert!(!wg64_wave(256, 4096, 4096, 1, 2, SMS, KN) && !wg64_wave(256, 4096, 4096, 2, 2, SMS, NK) && !wg64_wave(256, 4096, 4096, 1, 4, SMS, NK) && !wg64_wave(256, 4096, 1024, 1, 2, SMS, NK));
        // One wave of 128 x 320 tiles where 256-wide ones need more (`wg320_wave`), both B layouts.
        // (`wg_waves` takes the same tiles where it takes the product, on
        // aligned rows: 512 x 9216 x 3072 with B K-major it takes 144-wide ones.)
        for (m, n, k) in [(512, 9216, 3072), (512, 10240, 8192), (384, 12288, 4096), (448, 9000, 3584), (256, 20480, 4096), (512, 10240, 2048)] {
            for ops in [KN, KN_OFF, Operands { b_k: true, ..KN_OFF }] {
                assert_eq!(wg_auto(m, n, k, 1, 2, SMS, ops).map(kc), Some((WGX[0], 1, false, 1)), "{m} x {n} x {k}");
            }
        }
        // Not where 256-wide tiles make a wave (2048^3: 128), nor 320-wide
        // ones more (1024 x 9216: 232), nor on one row of tiles, short K,
        // batches, TF32.
        for (m, n, k, batch, elem) in [(2048, 2048, 2048, 1, 2), (1024, 9216, 3072, 1, 2), (128, 40000, 4096, 1, 2), (512, 9216, 1024, 1, 2), (512, 9216, 3072, 2, 2), (512, 9216, 3072, 1, 4)] {
            assert!(!wg320_wave(m, n, k, batch, elem, SMS), "{m} x {n} x {k} x {batch} x {elem}");
        }
        // Two waves and more of 128 x 320 tiles where the model finds their
        // last wave fuller (`WGX_EFF`); not on the report's large products.
        for (m, n, k) in [(1024, 10240, 8192), (2048, 5120, 5120), (2560, 4096, 4096), (896, 11008, 4096)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(|p| (p.tile, p.splits)), Some((WGX[0], 1)), "{m} x {n} x {k}");
        }
        for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (4096, 14336, 4096), (8192, 4096, 14336), (2048, 32000, 4096)] {
            assert_ne!(wg_auto(m, n, k, 1, 2, SMS, NK).map(|p| p.tile), Some(WGX[0]), "{m} x {n} x {k}");
        }
        assert_ne!(wg_auto(1024, 10240, 8192, 2, 2, SMS, NK).map(|p| p.tile), Some(WGX[0])); // batches: not measured
        // Short K stays unsplit (512^3, 1024^3: the cluster's fixed cost).
        for k in [512, 1024] {
            assert!(!wg_auto(k, k, k, 1, 2, SMS, KN).unwrap().k_cluster, "{k}");
        }
        // Twice the rows: 128 x 128 in two K ranges; TF32 (its K-major copies) never on 64-row tiles.
        assert_eq!(wg_auto(256, 4096, 4096, 1, 2, SMS, KN).map(kc), Some((WG[2], 2, true, 1)));
        assert!(wg_auto(128, 4096, 4096, 1, 4, SMS, NK).is_some_and(|p| p.tile.bm == 128));
        // Small squares: narrow tiles, so that more SMs work (128 rows: K is short).
        let p = wg_auto(512, 512, 512, 1, 2, SMS, KN).unwrap();
        assert!(p.tile.bn <= 128 && p.tile.bm == 128, "{p:?}");
        // Every plan's tiles exist in the tables.
        for (m, n, k) in [(128, 4096, 4096), (128, 14336, 4096), (2048, 2048, 2048), (3000, 2000, 1000), (4096, 4088, 4096)] {
            let p = wg_auto(m, n, k, 1, 2, SMS, KN).unwrap();
            assert!(WG.contains(&p.tile) || WGH.contains(&p.tile));
            assert!(p.splits >= 1 && p.splits <= 16);
        }
        assert_eq!(wg_forced("wgp128", Some(2), 512, 512, 512, 1, 2, SMS, KN).map(|p| (p.tile, p.splits)), Some((WGP[0], 2)));
        // An MN-major operand whose k-lines are not 128-byte aligned favours wide
        // tiles (H100, bench/explore --only planner3): 1000^3 on the 128-wide
        // tile (aligned, 1024^3 takes 64). 3000 x 2000 outputs: 192-wide tiles,
        // two full waves.
        assert_eq!(wg_auto(3000, 2000, 1000, 1, 2, SMS, KN_OFF).unwrap().tile.bn, 192);
        assert_eq!(wg_auto(3000, 2000, 1000, 1, 2, SMS, KN).unwrap().tile.bn, 192);
        assert_eq!(wg_auto(3000, 2000, 1000, 1, 2, SMS, NK).map(|p| (p.tile.bn, p.cluster)), Some((192, 2)));
        assert_eq!(wg_forced("wg192c1", None, 3000, 2000, 1000, 1, 2, SMS, KN).map(|p| (p.tile.bn, p.cluster)), Some((192, 1)));
        for (m, n, k) in [(4096, 4096, 4096), (2048, 2048, 2048), (4096, 4096, 14336), (8192, 4096, 14336)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, KN).unwrap().tile.bn, 256, "{m} {n} {k}");
        }
        // Whole waves: 4096 x 4096 x 14336 (W^T) on 256-wide tiles in pairs
        // (fourteen waves against nineteen), LM heads and the widest MLP
        // projection on 192-wide tiles, alone.
        assert_eq!(wg_auto(4096, 14336, 4096, 1, 2, SMS, NK).map(|p| (p.tile.bn, p.cluster)), Some((256, 2)));
        assert_eq!(wg_auto(4096, 14336, 4096, 1, 4, SMS, NK).map(|p| p.tile.bn), Some(256));
        for (m, n, k) in [(2048, 32000, 4096), (2048, 128256, 4096), (8192, 14336, 4096)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(|p| (p.tile.bn, p.cluster)), Some((192, 1)), "{m} {n} {k}");
        }
        // Long K on less than a wave: wide tiles in K ranges (FLCE's
        // grad_hidden, 1024 x 32000 x 2048), alone; 128-wide ones in two
        // ranges as a cluster's blocks (1024 x 4096 x 1024, 1024 x 8192 x
        // 1024); TF32 unsplit.
        let p = wg_auto(1024, 2048, 32000, 1, 2, SMS, KN).unwrap();
        assert_eq!((p.tile.bn, p.splits, p.cluster), (256, 2, 1));
        assert_eq!(wg_auto(768, 1024, 16384, 1, 2, SMS, KN).map(|p| (p.tile.bn, p.splits)), Some((256, 5)));
        assert_eq!(wg_auto(1024, 1024, 8192, 1, 2, SMS, KN).map(|p| (p.tile.bn, p.splits, p.k_cluster)), Some((128, 2, true)));
        assert_eq!(wg_auto(1024, 2048, 32000, 1, 4, SMS, KN).unwrap().splits, 1);
        assert_eq!(wg_auto(1024, 1024, 4096, 1, 2, SMS, KN).map(|p| (p.tile.bn, p.splits, p.k_cluster)), Some((128, 2, true)));
        // Misaligned B rows, one wave of 64-wide tiles: 1000^3, 1024 x 1024 x 1000 (N).
        assert_eq!(wg_auto(1000, 1000, 1000, 1, 2, SMS, KN_OFF).unwrap().tile.bn, 64);
        assert_eq!(wg_auto(1024, 1000, 1024, 1, 2, SMS, KN_OFF).unwrap().tile.bn, 64);
        assert_eq!(wg_auto(1024, 1024, 1024, 1, 2, SMS, KN).unwrap().tile.bn, 64);
        // ... and A's rows off 128 bytes too: pairs side by side sharing A,
        // 16-bit types, two columns of tiles or more.
        let pair = |p: WgPlan| (p.tile.bn, p.splits, p.cluster, p.share_a);
        let a_off = |ops: Operands| Operands { a_off: true, ..ops };
        assert_eq!(wg_auto(1000, 1000, 1000, 1, 2, SMS, a_off(KN_OFF)).map(pair), Some((64, 1, 2, true)));
        assert_eq!(wg_auto(1000, 1000, 1000, 1, 2, SMS, a_off(NK)).map(pair), Some((64, 1, 2, true)));
        assert_eq!(wg_auto(1000, 1000, 1000, 1, 2, SMS, KN_OFF).map(pair), Some((64, 1, 1, false)));
        assert_eq!(wg_auto(1000, 1000, 1000, 1, 4, SMS, a_off(NK)).map(|p| p.share_a), Some(false));
        assert_eq!(wg_auto(4096, 4096, 4096, 1, 2, SMS, a_off(KN)).map(|p| p.share_a), Some(false));
        // ... instead of 128 x 128 tiles in K ranges of a cluster, K up to 4096.
        assert_eq!(wg_auto(1000, 1000, 4096, 1, 2, SMS, NK).map(|p| (p.tile.bn, p.splits, p.k_cluster)), Some((128, 2, true)));
        assert_eq!(wg_auto(1000, 1000, 4096, 1, 2, SMS, a_off(NK)).map(pair), Some((64, 1, 2, true)));
        assert_eq!(wg_auto(1000, 1000, 3000, 1, 2, SMS, a_off(NK)).map(pair), Some((64, 1, 2, true)));
        assert_eq!(wg_auto(1000, 800, 3000, 1, 2, SMS, a_off(KN)).map(pair), Some((64, 1, 2, true)));
        assert_eq!(wg_auto(1000, 1000, 6000, 1, 2, SMS, a_off(NK)).map(|p| (p.tile.bn, p.share_a)), Some((128, false)));
        assert_eq!(wg_auto(900, 1100, 3000, 1, 2, SMS, a_off(NK)).map(|p| p.share_a), Some(false));
        assert_eq!(wg_forced("wg64n2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(pair), Some((64, 1, 2, true)));
        // One wave of 128 x 128 tiles over 6 rows or more (even), 90% full
        // (60% at K of 2000 or more), B's lines off 32 bytes, K of 2000 or
        // more or A's lines off too: pairs sharing B.
        let b32 = |ops: Operands| Operands { b_off32: true, ..ops };
        let both32 = |ops: Operands| Operands { a_off: true, a_off32: true, b_off32: true, ..ops };
        let a32 = |ops: Operands| Operands { a_off: true, a_off32: true, ..ops };
        for ops in [both32(KN_OFF), both32(NK)] {
            assert_eq!(wg_auto(2000, 1000, 1000, 1, 2, SMS, ops).map(pair), Some((128, 1, 2, false)), "{ops:?}");
        }
        assert_eq!(wg_auto(2048, 1000, 4096, 1, 2, SMS, b32(KN_OFF)).map(pair), Some((128, 1, 2, false)));
        assert_eq!(wg_auto(2048, 1000, 1024, 1, 2, SMS, b32(KN_OFF)).map(pair), Some((128, 1, 1, false)), "K = 1024, A aligned");
        assert_eq!(wg_auto(2000, 1024, 1000, 1, 2, SMS, a32(KN)).map(pair), Some((128, 1, 1, false)), "only A's lines off");
        assert_eq!(wg_auto(2000, 1000, 4000, 1, 2, SMS, a_off(NK)).map(pair), Some((128, 1, 1, false)), "lines off 128 bytes, not 32");
        assert_eq!(wg_auto(2048, 1024, 1024, 1, 2, SMS, KN).map(pair), Some((128, 1, 1, false)), "aligned");
        assert_eq!(wg_auto(1024, 2048, 1000, 1, 2, SMS, both32(NK)).map(pair), Some((128, 1, 2, false)), "8 rows");
        assert_eq!(wg_auto(640, 2048, 3000, 1, 2, SMS, both32(NK)).map(pair), Some((128, 1, 1, false)), "5 rows");
        assert_eq!(wg_auto(2000, 600, 1000, 1, 2, SMS, both32(KN_OFF)).map(pair), Some((128, 1, 1, false)), "80 tiles, K = 1000");
        for ops in [both32(NK), both32(KN_OFF)] {
            assert_eq!(wg_auto(1280, 1024, 3000, 1, 2, SMS, ops).map(pair), Some((128, 1, 2, false)), "80 tiles, K = 3000: {ops:?}");
            assert_eq!(wg_auto(1024, 1024, 3000, 1, 2, SMS, ops).map(|p| p.cluster == 2 && !p.share_a), Some(false), "64 tiles: {ops:?}");
        }
        assert_eq!(wg_auto(1024, 1400, 2000, 1, 2, SMS, b32(KN_OFF)).map(pair), Some((128, 1, 1, false)), "88 tiles, only B's lines off");
        assert_eq!(wg_auto(2000, 1000, 1000, 1, 4, SMS, both32(KN_OFF)).map(|p| p.cluster), Some(1), "TF32");
        // K ranges in a cluster where 128 x 64 tiles leave half the SMs
        // idle, or K is 4096 or more; else unsplit tiles.
        let ranges = |p: WgPlan| (p.tile.bn, p.splits, p.k_cluster);
        assert_eq!(wg_auto(768, 2048, 2048, 1, 2, SMS, KN).map(ranges), Some((128, 1, false)));
        assert_eq!(wg_auto(2000, 600, 2000, 1, 2, SMS, KN_OFF).map(ranges), Some((128, 1, false)));
        assert_eq!(wg_auto(1024, 1024, 3072, 1, 2, SMS, KN).map(ranges), Some((64, 1, false)));
        assert_eq!(wg_auto(1024, 512, 2000, 1, 2, SMS, KN_OFF).map(ranges), Some((64, 2, true)));
        assert_eq!(wg_auto(1024, 1536, 4096, 1, 2, SMS, KN).map(ranges), Some((192, 2, true)));
        assert_eq!(wg_forced("wg128n2", Some(3), 4096, 4096, 4096, 1, 2, SMS, KN).map(pair), Some((128, 3, 2, true)));
        assert_eq!(wg_forced("wg64n2", None, 4096, 64, 4096, 1, 2, SMS, KN).map(pair), Some((64, 1, 1, false)));
        assert_eq!(wg_forced("wg64n2k2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.cluster, p.share_a, p.k_cluster)), Some((1, false, true)));
        // Clusters: pairs of blocks on tiles of 128 columns and more, with two rows of tiles.
        assert_eq!(wg_auto(4096, 4096, 4096, 1, 2, SMS, KN).unwrap().cluster, 2);
        assert_eq!(wg_auto(4096, 1024, 4096, 1, 2, SMS, NK).unwrap().cluster, 2);
        assert_eq!(wg_auto(2048, 2048, 2048, 1, 2, SMS, KN).unwrap().cluster, 1);
        assert_eq!(wg_forced("wg256", None, 512, 512, 512, 32, 2, SMS, KN).unwrap().cluster, 1);
        assert_eq!(wg_forced("wg256c1", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.tile.bn, p.cluster)), Some((256, 1)));
        assert_eq!(wg_forced("wgp128c2", Some(3), 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.tile, p.splits, p.cluster)), Some((WGP[0], 3, 2)));
        assert_eq!(wg_forced("wgc2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| p.cluster), Some(2));
        assert_eq!(wg_forced("wgp128", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| p.cluster), Some(1));
        assert_eq!(wg_forced("wg64c2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| p.cluster), Some(2));
        assert_eq!(wg_forced("wg256c2", None, 128, 4096, 4096, 1, 2, SMS, KN).map(|p| p.cluster), Some(1));
        assert_eq!(wg_forced("wg256c3", None, 4096, 4096, 4096, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("wg64", None, 512, 512, 512, 1, 2, SMS, KN).map(|p| p.tile.bn), Some(64));
        assert_eq!(wg_forced("wg96", None, 512, 512, 512, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("128", None, 512, 512, 512, 1, 2, SMS, KN), None);
        // The tiles fit the H100's shared memory and the 64-wide MN-major boxes.
        assert!(WG.iter().chain(WGP.iter()).chain(WGH.iter()).all(|t| t.smem(2).max(t.smem(4)) <= 227 * 1024 && t.bn % 64 == 0));
        // 64-row tiles: named `wgh`, ping-pong, in pairs only when forced, no TF32 kernels.
        assert_eq!(wg_forced("wgh64", Some(2), 128, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.tile, p.splits, p.cluster)), Some((WGH[1], 2, 1)));
        assert_eq!(wg_forced("wgh128c2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.tile, p.cluster)), Some((WGH[0], 2)));
        // Two to four rows of tiles in at most two waves of the width with
        // the least waves x width / `wave_eff` (`wg_waves`), `WGQ`'s
        // included; B K-major; unsplit, single blocks.
        let width = |bn: i64| *WG_ALL.iter().find(|t| t.bn == bn).unwrap();
        for (m, n, k, bn) in [(256, 9216, 3072, 144), (512, 4608, 3584, 144), (500, 4600, 3584, 144), (256, 6144, 4096, 96), (512, 3072, 8192, 96), (512, 3584, 18944, 112), (384, 3072, 8192, 96), (256, 10240, 8192, 160), (256, 11008, 4096, 176), (512, 4096, 11008, 128), (512, 9216, 3072, 144), (512, 11008, 4096, 176), (384, 14336, 4096, 176), (512, 10240, 8192, 160), (256, 8192, 8192, 128)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((width(bn), 1, false, 1)), "{m} x {n} x {k}");
        }
        assert_eq!(wg_auto(384, 11008, 4096, 1, 2, SMS, NK).map(kc), Some((WG[0], 1, false, 1)), "129 tiles of 256, three rows: single blocks");
        assert_eq!(wg_auto(384, 9216, 3072, 1, 2, SMS, NK).map(kc), Some((WG[0], 1, false, 1)), "108 tiles of 256, three rows: single blocks");
        assert_eq!(wg_auto(256, 14336, 3584, 1, 2, SMS, NK).map(kc), Some((WG[0], 1, false, 1)), "112 tiles of 256");
        assert_eq!(wg_auto(512, 14336, 4096, 1, 2, SMS, NK).map(kc), Some((WG[0], 1, false, 1)), "224 tiles of 256");
        // Where no width fills 70% of its waves, two K ranges (K of 8192 or
        // more) on the width whose blocks fill one wave best; a K cluster
        // on the `WGK` widths.
        for (m, n, k, bn, kcl) in [(256, 3584, 18944, 112, false), (224, 3072, 8192, 96, false), (384, 2048, 8192, 96, false), (512, 2048, 8192, 128, true), (256, 4096, 14336, 128, true)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((width(bn), 2, kcl, 1)), "{m} x {n} x {k}");
        }
        assert_eq!(wg_waves(256, 3072, 4096, 1, 2, SMS, NK), None, "short K: not split");
        assert_eq!(wg_waves(512, 4096, 11008, 1, 2, SMS, KN), None, "B N-major");
        assert_eq!(wg_waves(256, 9216, 3072, 1, 2, SMS, Operands { b_k: true, ..KN_OFF }), None);
        // Not on one row of tiles nor over four, rows under 80% full, short
        // K, batches, TF32, over two waves of every width (512 x 28672), nor
        // on fewer tiles (256 x 1024: 22 of 96).
        for (m, n, k, batch, elem) in [(256, 1024, 4096, 1, 2), (128, 18944, 4096, 1, 2), (1024, 2048, 32000, 1, 2), (200, 9216, 3072, 1, 2), (256, 9216, 1024, 1, 2), (256, 9216, 3072, 2, 2), (256, 9216, 3072, 1, 4), (512, 28672, 4096, 1, 2)] {
            assert_eq!(wg_waves(m, n, k, batch, elem, SMS, NK), None, "{m} x {n} x {k} x {batch} x {elem}");
        }
        // Five to sixteen rows: one wave of a width under 192, K from 2048
        // to 8191, A's rows 128-byte aligned, where 128 x 64 tiles make more
        // than a wave.
        for (m, n, k, bn) in [(768, 2048, 2048, 96), (1024, 1536, 4096, 96), (1280, 1024, 2048, 96), (2048, 768, 4096, 96), (1280, 1280, 2048, 112), (2048, 1024, 2048, 128)] {
            assert_eq!(wg_auto(m, n, k, 1, 2, SMS, NK).map(kc), Some((width(bn), 1, false, 1)), "{m} x {n} x {k}");
        }
        for (m, n, k, ops) in [(768, 2048, 8192, NK), (768, 2048, 2048, KN), (768, 2048, 3000, Operands { a_off: true, ..NK }), (2048, 512, 2048, NK), (2048, 2048, 2048, NK), (1024, 3000, 2048, NK)] {
            assert_eq!(wg_waves(m, n, k, 1, 2, SMS, ops), None, "{m} x {n} x {k}, {ops:?}");
        }
        // The `WGQ` widths: 16-bit, B K-major only; pairs and split K too.
        assert_eq!(wg_forced("wg144c2", Some(3), 512, 4608, 3584, 1, 2, SMS, NK).map(|p| (p.tile, p.cluster, p.splits)), Some((width(144), 2, 3)));
        assert_eq!(wg_forced("wg96", None, 256, 6144, 4096, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("wg96", None, 256, 6144, 4096, 1, 4, SMS, NK), None);
        assert!(WGQ.iter().all(|t| t.smem(2) <= 227 * 1024 && !t.pingpong && (t.tma_cols == 0 || (t.bn % t.tma_cols == 0 && t.c_box() == 16)) && t.bn % 16 == 0 && t.bn % 64 != 0));
        assert!(WG.iter().chain(WGX.iter()).all(|t| t.c_box() == 64));
        // Pairs over an even number of rows of tiles only (`wg_cluster_auto`).
        for ops in [NK, KN] {
            assert_eq!(wg_auto(384, 28672, 4096, 1, 2, SMS, ops).map(|p| (p.tile.bn, p.cluster)), Some((256, 1)));
            assert_eq!(wg_cluster_auto(&WG[0], 512, 28672, 4096, 1, SMS, ops), 2);
            assert_eq!((wg_cluster_auto(&WG[1], 640, 4096, 4096, 1, SMS, ops), wg_cluster_auto(&WG[1], 768, 4096, 4096, 1, SMS, ops)), (1, 2));
        }
        // Pairs need two rows of tiles: M = 128 has two of 64 rows, one of 128.
        assert_eq!(wg_forced("wgh64c2", None, 128, 4096, 4096, 1, 2, SMS, NK).map(|p| (p.tile, p.cluster)), Some((WGH[1], 2)));
        assert_eq!(wg_forced("wgh64c2", None, 64, 4096, 4096, 1, 2, SMS, NK).map(|p| p.cluster), Some(1));
        assert_eq!(wg_forced("wgh", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| p.tile), Some(WGH[0]));
        // 144 wide: K-major B only; in a cluster's K ranges too; no TF32.
        assert_eq!(wg_forced("wgh144", None, 64, 18944, 3584, 1, 2, SMS, NK).map(|p| p.tile), Some(WGW[0]));
        assert_eq!(wg_forced("wgh144", None, 64, 18944, 3584, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("wgh144k2", None, 64, 4096, 4096, 1, 2, SMS, NK).map(|p| (p.tile, p.splits, p.k_cluster)), Some((WGW[0], 2, true)));
        assert_eq!(wg_reg_forced("wgrh144", None, 64, 4096, 4096, 1, SMS), None);
        assert!(WGW.iter().all(|t| t.smem(2) <= 227 * 1024 && t.bn % 16 == 0 && t.pingpong && t.bm == WGH_BM));
        // The 320-wide tile: 16-bit only, three stages and its output rounds in an SM.
        assert_eq!(wg_forced("wg320", None, 512, 9216, 3072, 1, 2, SMS, KN).map(|p| p.tile), Some(WGX[0]));
        assert_eq!(wg_forced("wg320", None, 512, 9216, 3072, 1, 4, SMS, NK), None);
        assert!(WGX.iter().all(|t| t.smem(2) <= 227 * 1024 && !t.pingpong && t.bn > 256 && t.bn % 64 == 0));
        assert_eq!(wg_forced("wgh64", None, 4096, 4096, 4096, 1, 4, SMS, NK), None);
        assert_eq!((WGH[0].kind(), WGP[0].kind(), WG[0].kind()), ("wgh", "wgp", "wg"));
        // TF32 tiles keep the stages the 16-bit ones give up for the output tile.
        assert_eq!((WG[0].stages_for(2), WG[0].stages_for(4), WG[2].stages_for(4), WGP[0].stages_for(4)), (4, 4, 6, 6));
        assert_eq!((WG[1].bn, WG[1].stages_for(2), WG[1].stages_for(4)), (192, 4, 5));
    }

    #[test]
    fn tf32_register_a() {
        // M = 128 prefill as c^T: m' = N = 4096, n' = 128: 128 x 64 tiles
        // in two K ranges as a cluster's blocks (M = 256: 128 x 128); with K
        // = 14336, 128 x 128 tiles in four global splits.
        let p = wg_reg(4096, 128, 4096, 1, SMS);
        assert_eq!((p.tile, p.splits, p.a_reg, p.k_cluster), (WG[3], 2, true, true));
        let p = wg_reg(4096, 256, 8192, 1, SMS);
        assert_eq!((p.tile, p.splits, p.a_reg, p.k_cluster), (WG[2], 2, true, true));
        let p = wg_reg(4096, 128, 14336, 1, SMS);
        assert_eq!((p.tile, p.splits, p.a_reg, p.k_cluster), (WG[2], 4, true, false));
        // One 64-row tile a block, unsplit: 1024^3, 1000^3 (64 x 128), 512^3
        // (64 x 64: 64 blocks, not 32).
        for (m, n, k) in [(1024, 1024, 1024), (1000, 1000, 1000)] {
            assert_eq!(wg_reg(m, n, k, 1, SMS).tile, WGH[0], "{m} {n} {k}");
        }
        assert_eq!(wg_reg(512, 512, 512, 1, SMS).tile, WGH[1]);
        // M = 64 and 32: 64 x 64 tiles in two splits.
        for n in [64, 32] {
            let p = wg_reg(4096, n, 4096, 1, SMS);
            assert_eq!((p.tile, p.splits), (WGH[1], 2), "{n}");
        }
        // More 64-row tiles than SMs: the cooperative tiles.
        assert_eq!(wg_reg(2048, 2048, 2048, 1, SMS).tile.bm, WG_BM);
        let p = wg_reg_forced("wgr64", None, 4096, 128, 4096, 1, SMS).unwrap();
        assert_eq!((p.tile.bn, p.splits), (64, 1));
        assert_eq!(wg_reg_forced("wg64", None, 4096, 128, 4096, 1, SMS), None);
        // 64-row ping-pong tiles.
        let p = wg_reg_forced("wgrh128", Some(2), 1024, 1024, 1024, 1, SMS).unwrap();
        assert_eq!((p.tile, p.splits, p.a_reg), (WGH[0], 2, true));
        assert_eq!(wg_reg_forced("wgrh64c2", None, 1024, 1024, 1024, 1, SMS).map(|p| (p.tile, p.cluster)), Some((WGH[1], 2)));
        assert_eq!(wg_reg_forced("wgrh192", None, 1024, 1024, 1024, 1, SMS), None);
        // Pairs when forced, where there are two rows of tiles.
        assert_eq!(wg_reg_forced("wgr256c2", None, 4096, 4096, 4096, 1, SMS).unwrap().cluster, 2);
        assert_eq!(wg_reg_forced("wgrc2", None, 60, 4096, 4096, 1, SMS).unwrap().cluster, 1);
        // K ranges as a cluster's blocks (`k2`, `k4`): cooperative tiles up to 192 wide and the 64-row ones, never in pairs.
        let kc = |p: WgPlan| (p.tile.bn, p.splits, p.k_cluster, p.cluster);
        assert_eq!(wg_forced("wg64k4", Some(3), 512, 512, 512, 1, 2, SMS, KN).map(kc), Some((64, 4, true, 1)));
        assert_eq!(wg_forced("wg128c2k2", None, 4096, 4096, 4096, 1, 2, SMS, KN).map(|p| (p.splits, p.k_cluster, p.cluster)), Some((2, true, 1)));
        assert_eq!(wg_forced("wgh64k2", None, 128, 4096, 4096, 1, 2, SMS, KN).map(kc), Some((64, 2, true, 1)));
        assert_eq!(wg_forced("wgp128k2", None, 512, 512, 512, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("wg64k3", None, 512, 512, 512, 1, 2, SMS, KN), None);
        assert_eq!(wg_forced("wg256k2", None, 512, 512, 512, 1, 2, SMS, KN), None);
        assert_eq!(wg_reg_forced("wgr128k2", None, 1024, 1024, 1024, 1, SMS).map(kc), Some((128, 2, true, 1)));
        assert_eq!(wg_reg_forced("wgrh128k2", None, 1024, 1024, 1024, 1, SMS).map(kc), Some((128, 2, true, 1)));
        assert!(!wg_forced("wg64", Some(2), 512, 512, 512, 1, 2, SMS, KN).unwrap().k_cluster);
        // `wgr/3` where the automatic plan is two ranges in a cluster: three global splits.
        assert_eq!(wg_reg_forced("wgr", Some(3), 4096, 128, 4096, 1, SMS).map(kc), Some((64, 3, false, 1)));
        assert_eq!(wg_reg_forced("wgr", None, 4096, 128, 4096, 1, SMS).map(kc), Some((64, 2, true, 1)));
        assert_eq!(wg_reg_forced("wgrc2", None, 4096, 256, 4096, 1, SMS).map(kc), Some((128, 2, false, 2)));
        assert_eq!(wg_reg(4096, 4096, 4096, 1, SMS).cluster, 1);
        // Large problems: the width with the fewest whole waves of work.
        assert_eq!(wg_reg(2000, 3000, 1000, 1, SMS).tile.bn, 192);
        assert_eq!(wg_reg(2048, 2048, 2048, 1, SMS).tile.bn, 256);
        assert_eq!(wg_reg(4096, 4096, 4096, 1, SMS).tile.bn, 256);
        assert_eq!(wg_reg(8192, 8192, 8192, 1, SMS).tile.bn, 256);
    }

    #[test]
    fn tiny_products_take_the_generic_kernel() {
        assert!(tiny(16, 16, 16, 1, 4) && tiny(128, 128, 128, 4, 4) && tiny(1, 64, 64, 1, 4));
        assert!(!tiny(16, 16, 256, 1, 4) && !tiny(512, 256, 16, 1, 4));
        assert!(tiny(16, 16, 16, 1, 2) && tiny(128, 128, 64, 1, 2) && tiny(128, 128, 16, 4, 2));
        assert!(!tiny(128, 128, 64, 4, 2) && !tiny(64, 64, 128, 1, 2) && !tiny(1, 4096, 4096, 1, 2));
        assert!(!tiny(i64::MAX, 2, 1, 1, 2));
    }

    #[test]
    fn streaming_skinny_plans_split_k_into_whole_stages() {
        // float32 on 64 strips: two K ranges (128 blocks, on 8 stages); 224
        // strips, or 16-bit weights with K = 4096: one.
        assert_eq!(skinny_tma_plan(1, 4096, 4096, 1, 4, true, SMS, None, None).unwrap(), SkinnyPlan { ranks: 2, k_chunk: 2048, mt: 1, stages: 8 });
        assert_eq!(skinny_tma_plan(16, 14336, 4096, 1, 4, true, SMS, None, None).unwrap().ranks, 1);
        assert_eq!(skinny_tma_plan(1, 4096, 4096, 1, 2, false, SMS, None, None).unwrap(), SkinnyPlan { ranks: 1, k_chunk: 4096, mt: 1, stages: 16 });
        // 16-bit: two ranges where K is long (4096 per block) and 2 blocks per
        // strip fit the SMs; enough blocks for 0.4 per SM on few strips.
        let plan = |m, n, k| {
            let p = skinny_tma_plan(m, n, k, 1, 2, false, SMS, None, None).unwrap();
            (p.ranks, p.k_chunk, p.stages)
        };
        assert_eq!(plan(1, 4096, 14336), (2, 7168, 8));
        assert_eq!(plan(16, 4096, 8192), (2, 4096, 8));
        assert_eq!(plan(1, 4096, 8128), (1, 8128, 16));
        assert_eq!(plan(1, 3584, 18944), (2, 9472, 8)); // 56 strips
        assert_eq!(plan(1, 3584, 3584), (1, 3584, 16));
        assert_eq!(plan(1, 2048, 8192), (2, 4096, 16)); // 32 strips: 64 blocks
        assert_eq!(plan(16, 1024, 14336), (4, 3584, 16)); // 16 strips: 64 blocks
        assert_eq!(plan(1, 1024, 2048), (4, 512, 16));
        assert_eq!(plan(1, 1024, 1024), (2, 512, 16)); // 8 stages per block at least
        assert_eq!(plan(1, 8448, 14336).0, 1); // 132 strips
        // float32 at 9-16 rows split in two keeps the deep ring.
        assert_eq!(skinny_tma_plan(16, 4096, 14336, 1, 4, true, SMS, None, None).unwrap().stages, 16);
        // TF32 (mma consumers) as 16-bit types, long K counted in bytes (2048 k).
        let tf32 = |m, n, k| {
            let p = skinny_tma_plan(m, n, k, 1, 4, false, SMS, None, None).unwrap();
            (p.ranks, p.k_chunk, p.stages)
        };
        assert_eq!(tf32(16, 4096, 4096), (2, 2048, 8));
        assert_eq!(tf32(16, 4096, 14336), (2, 7168, 8));
        assert_eq!(tf32(16, 4096, 4064), (1, 4064, 16));
        assert_eq!(tf32(9, 14336, 4096), (1, 4096, 4));
        assert_eq!(tf32(1, 1024, 4096), (4, 1024, 16));
        // 17 to 32 rows: 4 m blocks (16-bit types and TF32), 16 stages while
        // the blocks fit one per SM, else 4 (two per SM).
        let rows = |m, n, k, elem| {
            let p = skinny_tma_plan(m, n, k, 1, elem, false, SMS, None, None).unwrap();
            (p.ranks, p.k_chunk, p.mt, p.stages)
        };
        assert_eq!(rows(32, 4096, 4096, 2), (1, 4096, 4, 16));
        assert_eq!(rows(17, 14336, 4096, 2), (1, 4096, 4, 4));
        assert_eq!(rows(24, 4096, 14336, 2), (2, 7168, 4, 16));
        assert_eq!(rows(32, 4096, 4096, 4), (2, 2048, 4, 16));
        assert_eq!(skinny_tma_plan(9, 4096, 4096, 1, 2, false, SMS, None, None).unwrap().mt, 2);
        assert!(skinny_tma_plan(24, 4096, 4096, 1, 4, true, SMS, None, None).is_none());
        // 33 to 64 rows: 8 m blocks on 8 stages (16 are not built: their
        // shared memory would pass an SM's).
        assert_eq!(rows(33, 4096, 4096, 2), (1, 4096, 8, 8));
        assert_eq!(rows(64, 4096, 14336, 4), (2, 7168, 8, 8));
        assert_eq!(skinny_tma_plan(64, 4096, 4096, 1, 2, false, SMS, None, Some(4)).unwrap().stages, 4);
        assert!(skinny_tma_plan(40, 4096, 4096, 1, 2, false, SMS, None, Some(16)).is_none());
        assert!(skinny_tma_plan(65, 4096, 4096, 1, 2, false, SMS, None, None).is_none());
        // Ranges of whole stages: 32 k for float32, 64 for 16-bit (forced).
        assert_eq!(skinny_tma_plan(9, 4096, 4100, 1, 4, true, SMS, None, None).unwrap(), SkinnyPlan { ranks: 2, k_chunk: 2080, mt: 2, stages: 16 });
        assert_eq!(skinny_tma_plan(1, 4096, 4100, 1, 2, false, SMS, Some(2), None).unwrap().k_chunk, 2112);
        // Each range keeps 8 stages.
        assert_eq!(skinny_tma_plan(1, 4096, 500, 1, 4, true, SMS, None, None).unwrap().ranks, 1);
        // Forced sizes round up to a cluster the kernel takes.
        assert_eq!(skinny_tma_plan(1, 14336, 4096, 1, 2, false, SMS, Some(3), None).unwrap().ranks, 4);
        assert!(skinny_tma_plan(17, 4096, 4096, 1, 4, true, SMS, None, None).is_none()); // FFMA: at most 16 rows
        // The ring: 16 stages while the strips fill at most half the SMs; 4
        // from one and a half strips per SM (float32: two) to three; else 8.
        let stages = |n, elem, forced| skinny_tma_plan(1, n, 4096, 1, elem, elem == 4, SMS, None, forced).unwrap().stages;
        let auto: Vec<i64> = [4096, 4224, 4288, 12672, 12736, 14336, 18944, 25344, 25408, 28672, 128256].iter().map(|&n| stages(n, 2, None)).collect();
        assert_eq!(auto, [16, 16, 8, 8, 4, 4, 4, 4, 8, 8, 8]);
        assert_eq!((stages(4096, 4, None), stages(14336, 4, None), stages(16896, 4, None), stages(16960, 4, None)), (8, 8, 8, 4));
        assert_eq!((stages(4096, 2, Some(8)), stages(14336, 2, Some(16)), stages(14336, 2, Some(4))), (8, 16, 4));
        assert_eq!(forced_skinny_tma("skinny_tma"), Some(None));
        assert_eq!((forced_skinny_tma("skinny_tma8"), forced_skinny_tma("skinny_tma4")), (Some(Some(8)), Some(Some(4))));
        assert_eq!((forced_skinny_tma("skinny_tma5"), forced_skinny_tma("skinny"), forced_skinny_tma("wg128")), (None, None, None));
    }

    #[test]
    fn skinny_plans() {
        // Decode against 4096 x 4096: 64 strips, 2 blocks per cluster -> 128 blocks.
        let p = skinny_plan(1, 4096, 4096, 1, SMS, None).unwrap();
        assert_eq!((p.ranks, p.k_chunk, p.mt), (2, 2048, 1));
        // Wide N needs no cluster.
        assert_eq!(skinny_plan(16, 14336, 4096, 1, SMS, None).unwrap().ranks, 1);
        assert_eq!(skinny_plan(16, 4096, 14336, 1, SMS, None).unwrap().ranks, 2);
        assert_eq!(skinny_plan(16, 128256, 4096, 1, SMS, None).unwrap(), SkinnyPlan { ranks: 1, k_chunk: 4096, mt: 2, stages: 0 });
        // Short K keeps at least 512 per block.
        assert_eq!(skinny_plan(1, 64, 1000, 1, SMS, None).unwrap().ranks, 1);
        assert_eq!(skinny_plan(1, 64, 600, 1, SMS, Some(3)).unwrap().ranks, 4);
        assert_eq!(skinny_plan(17, 64, 600, 1, SMS, None), None);
        // 16-bit: the streaming build from 16 strips (N = 1024, or batches of strips).
        assert!(skinny_tma(16, 4096, 4096, 1, 2, false, SMS, true) && skinny_tma(1, 128256, 4096, 1, 2, false, SMS, true) && skinny_tma(1, 256, 4096, 4, 2, false, SMS, true));
        assert!(skinny_tma(16, 1024, 4096, 1, 2, false, SMS, true) && skinny_tma(1, 64, 4096, 16, 2, false, SMS, true));
        assert!(!skinny_tma(1, 960, 4096, 1, 2, false, SMS, true) && !skinny_tma(1, 64, 4096, 15, 2, false, SMS, true));
        // float32: M = 1 from 16 strips, or strips enough for every SM.
        assert!(skinny_tma(1, 4096, 4096, 1, 4, true, SMS, true) && skinny_tma(16, 14336, 4096, 1, 4, true, SMS, true) && skinny_tma(1, 2048, 4096, 1, 4, true, SMS, true));
        assert!(!skinny_tma(1, 960, 4096, 1, 4, true, SMS, true) && !skinny_tma(16, 2048, 4096, 1, 4, true, SMS, true));
        assert!(!skinny_tma(2, 4096, 4096, 1, 4, true, SMS, true) && !skinny_tma(8, 4096, 4096, 1, 4, true, SMS, true) && skinny_tma(16, 4096, 4096, 1, 4, true, SMS, true));
        assert!(!skinny_tma(16, 6400, 4096, 1, 4, true, SMS, true)); // 100 strips: no room to split, FFMA-bound at 16 rows
        // TF32 (mma consumers): as 16-bit types.
        assert!(skinny_tma(8, 4096, 4096, 1, 4, false, SMS, true) && skinny_tma(16, 6400, 4096, 1, 4, false, SMS, true) && skinny_tma(2, 1024, 4096, 1, 4, false, SMS, true));
        // 17 to 32 rows: the streaming build on mma consumers, from 16 strips (below, only at long K).
        assert!(skinny_tma(24, 4096, 4096, 1, 2, false, SMS, true) && skinny_tma(32, 1024, 4096, 1, 2, false, SMS, true));
        assert!(!skinny_tma(24, 4096, 4096, 1, 4, true, SMS, true) && !skinny_tma(65, 14336, 4096, 1, 2, false, SMS, true) && !skinny_tma(32, 960, 1024, 1, 2, false, SMS, true));
        // 33 to 64 rows: TF32 from 16 strips; 16-bit types not where `wgh_wave` has a tile (from 67 strips of 64 on), a batch from more strips than SMs.
        assert!(skinny_tma(33, 1024, 4096, 1, 4, false, SMS, true) && skinny_tma(64, 4096, 4096, 1, 4, false, SMS, true) && !skinny_tma(64, 4096, 4096, 1, 4, true, SMS, true));
        assert!(!skinny_tma(64, 32000, 4096, 1, 2, false, SMS, true) && !skinny_tma(33, 4096, 4096, 1, 2, false, SMS, true) && !skinny_tma(40, 8448, 4096, 1, 2, false, SMS, true));
        assert!(skinny_tma(48, 14336, 4096, 2, 2, false, SMS, true) && !skinny_tma(48, 2048, 4096, 2, 2, false, SMS, true));
        assert!(!skinny_tma(64, 14336, 4096, 1, 2, false, SMS, true) && !skinny_tma(48, 18944, 4096, 1, 2, false, SMS, true) && !skinny_tma(48, 20480, 4096, 1, 2, false, SMS, true));
        // 17 to 32 rows: one wave of 64 x 144 tiles where B is K-major, else streamed.
        assert!(!skinny_tma(32, 18944, 3584, 1, 2, false, SMS, true) && skinny_tma(32, 18944, 3584, 1, 2, false, SMS, false) && skinny_tma(32, 28672, 4096, 1, 2, false, SMS, true));
        // Few strips at long K (`few_strips_long_k`), in clusters of 8: 17-32 rows on 4-15 strips
        // from K = 2048, 33-64 rows on 4-14 from K = 6144; not on 3 strips, nor on FFMA consumers.
        assert!(skinny_tma(24, 512, 2048, 1, 2, false, SMS, true) && skinny_tma(17, 960, 4096, 1, 2, false, SMS, true) && !skinny_tma(24, 512, 1024, 1, 2, false, SMS, true));
        assert!(skinny_tma(64, 256, 14336, 1, 4, false, SMS, true) && skinny_tma(64, 896, 6144, 1, 2, false, SMS, true) && !skinny_tma(64, 960, 8192, 1, 2, false, SMS, true));
        assert!(skinny_tma(32, 128, 8192, 3, 2, false, SMS, true) && !skinny_tma(64, 192, 8192, 1, 2, false, SMS, true) && !skinny_tma(24, 192, 8192, 1, 2, false, SMS, true));
        assert!(!skinny_tma(64, 512, 4096, 1, 2, false, SMS, true) && !skinny_tma(40, 512, 8192, 1, 4, true, SMS, true) && !skinny_tma(16, 512, 4096, 1, 2, false, SMS, true));
        assert_eq!(skinny_tma_plan(64, 512, 14336, 1, 2, false, SMS, None, None).unwrap(), SkinnyPlan { ranks: 8, k_chunk: 1792, mt: 8, stages: 8 });
        assert_eq!(skinny_tma_plan(24, 300, 16384, 1, 4, false, SMS, None, None).unwrap(), SkinnyPlan { ranks: 8, k_chunk: 2048, mt: 4, stages: 16 });
        // The builds: every ring fits one block on an SM except 16 stages of
        // 8 m blocks; FFMA (float32) at most 2 m blocks.
        for dt in SKINNY_TMA_DTYPES {
            for mt in SKINNY_TMA_MT {
                for s in SKINNY_TMA_STAGES {
                    let fits = !(mt == 8 && s == 16) && (dt != "f32" || mt <= 2);
                    assert_eq!(skinny_tma_built(dt == "f32", mt, s), fits, "{dt} m{mt} s{s}");
                }
            }
        }
        // 4 m blocks: 16 stages fit one block on an SM, 4 stages two.
        assert!(skinny_tma_smem(4, SKINNY_TMA_STAGES[0]) <= 227 * 1024);
        assert!(2 * (skinny_tma_smem(4, SKINNY_TMA_STAGES[2]) + 1024) <= 228 * 1024);
        for mt in [1, 2] {
            assert!(skinny_tma_smem(mt, SKINNY_TMA_STAGES[0]) <= 227 * 1024);
            // Two blocks of 8 stages fit on an SM, and three of 4.
            assert!(2 * (skinny_tma_smem(mt, SKINNY_TMA_STAGES[1]) + 1024) <= 228 * 1024);
            assert!(3 * (skinny_tma_smem(mt, SKINNY_TMA_STAGES[2]) + 1024) <= 228 * 1024);
        }
        for (m, n, k) in [(1, 1, 1), (9, 3000, 70), (16, 64, 100_000)] {
            let p = skinny_plan(m, n, k, 1, SMS, None).unwrap();
            assert!(p.k_chunk % 32 == 0 && p.k_chunk * p.ranks >= k && SKINNY_CLUSTERS.contains(&p.ranks));
            assert!(skinny_smem(p.mt) <= 48 * 1024);
        }
    }
}
