// The GEMM kernels' parameter tables, defined once. build.rs `include!`s
// this file and writes from it `gemm_tiles.h` (X-macro lists that the .cu
// files instantiate their kernels from) and `gemm_kernels.rs` (the Rust
// handles of those kernels, by name); the planner in `src/gemm` sizes
// launches from the same constants. tests/matmul_emulation builds the header
// the same way (gen_tiles.rs).
//
// Only `const` data and plain string building here: the file must compile
// inside build.rs, where no crate module exists.

/// An mma.sync (kernels/matmul_tc.cu) or CUDA-core (kernels/matmul_simt.cu)
/// block tile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tile {
    /// The tile's name in kernel names and in `MYNS_MATMUL_KERNEL`.
    pub name: &'static str,
    pub bm: i64,
    pub bn: i64,
    pub bk: i64,
    /// Warps (tensor-core tiles) or threads (CUDA-core tiles) along M and N.
    pub wm: i64,
    pub wn: i64,
    /// Shared-memory stages (cp.async pipeline depth).
    pub stages: i64,
    /// Blocks of this tile one SM runs at once (its `__launch_bounds__` minimum).
    pub per_sm: i64,
    /// Relative throughput of one SM on this tile (big tiles reuse more);
    /// planning only.
    pub eff: f64,
}

impl Tile {
    /// Threads per block: warps x 32 for tensor-core tiles.
    pub const fn threads_tc(&self) -> u32 {
        (self.wm * self.wn * 32) as u32
    }
    /// Threads per block of a CUDA-core tile.
    pub const fn threads_simt(&self) -> u32 {
        (self.wm * self.wn) as u32
    }
}

#[allow(clippy::too_many_arguments)]
const fn tile(name: &'static str, bm: i64, bn: i64, bk: i64, wm: i64, wn: i64, stages: i64, per_sm: i64, eff: f64) -> Tile {
    Tile { name, bm, bn, bk, wm, wn, stages, per_sm, eff }
}

/// float16/bfloat16 on mma.sync m16n8k16 (kernels/matmul_tc.cu).
pub const TC_HALF: [Tile; 4] = [
    tile("256", 128, 256, 32, 2, 4, 3, 1, 1.0),
    tile("128", 128, 128, 32, 2, 2, 4, 2, 0.9),
    tile("64", 64, 64, 32, 2, 2, 4, 3, 0.55),
    tile("16", 16, 128, 64, 1, 4, 4, 2, 0.2),
];
/// float32 as TF32 on mma.sync m16n8k8 (kernels/matmul_tc.cu).
pub const TC_TF32: [Tile; 4] = [
    tile("256", 128, 256, 16, 2, 4, 3, 1, 1.0),
    tile("128", 128, 128, 16, 2, 2, 4, 2, 0.9),
    tile("64", 64, 64, 16, 2, 2, 4, 3, 0.55),
    tile("16", 16, 128, 32, 1, 4, 4, 2, 0.2),
];
/// float32 with TF32 off on compute capability 9.0: mma.sync m16n8k8 on the
/// FP64 tensor cores, operands converted exactly, sums in float64
/// (kernels/matmul_tc.cu, `X64`). Named apart from the CUDA-core tiles
/// (both serve float32 there). On the H100 128 x 128 tiles with k = 32 in 3
/// stages ran at 0.98 of cuBLAS's SGEMM from 2048^3 up, against 0.90-0.94
/// with k = 16 and 0.92-0.99 on 128 x 64 or 64 x 128 tiles
/// (bench/explore/f32-dmma/).
pub const TC_X64: [Tile; 1] = [tile("x128", 128, 128, 32, 2, 4, 3, 1, 1.0)];
/// float32 on the CUDA cores (kernels/matmul_simt.cu): `wm` x `wn` threads,
/// each owning an (bm / wm) x (bn / wn) block of c. The 256 x 128 tile (16
/// x 8 per thread, as cuBLAS's SGEMM) ran 5-8% faster than 128 x 128 on the
/// H100 (bench/explore/matmul-variants-h100-simt2.log). With the cp.async
/// pipeline, 3 stages of k = 16 beat 4 stages of k = 8 by 2-4% (half the
/// barriers; -simt4.log: 4096^3 0.82 of cuBLAS against 0.80) and 3 of k = 8
/// by 5%; on the 128 tile by 6-7%.
pub const SIMT: [Tile; 4] = [
    tile("256", 256, 128, 16, 16, 16, 3, 1, 1.0),
    tile("128", 128, 128, 16, 16, 16, 3, 1, 1.0),
    tile("64", 64, 64, 16, 8, 8, 3, 6, 0.5),
    tile("16", 16, 128, 32, 4, 32, 3, 3, 0.3),
];

/// A Hopper (wgmma + TMA, kernels/matmul_sm90a.cu) block tile: `bm` rows
/// (128, or 64 on ping-pong tiles) by `bn`; one producer warpgroup and two
/// consumer warpgroups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WgTile {
    pub bm: i64,
    pub bn: i64,
    pub stages: i64,
    /// Ping-pong: each consumer warpgroup computes whole `bm` x `bn` tiles,
    /// the two taking turns at the tensor cores so that one's epilogue
    /// overlaps the other's main loop; otherwise (cooperative) both share
    /// every tile, 64 rows each.
    pub pingpong: bool,
    /// Cooperative 16-bit kernels: output columns staged in shared memory
    /// at once, per consumer (64 rows), where the output's rows suit TMA
    /// stores, and where the warps copy them out (see `out_bytes`).
    pub tma_cols: i64,
    pub bulk_cols: i64,
}

/// Rows of a Hopper block tile (but for the 64-row `WGH` tiles).
pub const WG_BM: i64 = 128;
/// Bytes of K per k-tile (one 128-byte swizzle atom).
pub const WG_BK_BYTES: i64 = 128;
pub const WG_THREADS: u32 = 384;

/// Cooperative tiles, widest first (their names: `wg256`, `wg192`, `wg128`,
/// `wg64`). (Their output tile takes shared memory too: see `smem`.) The
/// 192-wide tile is for wave quantization: 3000 x 2000 outputs make 264 of
/// its tiles, two full waves on 132 SMs, where 256-wide ones make 1.45.
/// The 256-wide tile stages its output in two rounds of 128 columns, which
/// leaves room for a fourth stage (exactly: 227 KB in all).
pub const WG: [WgTile; 4] = [
    wg(256, 4, false, 128, 128),
    wg(192, 4, false, 192, 192),
    wg(128, 5, false, 128, 128),
    wg(64, 8, false, 64, 64),
];
/// The cooperative 128 x 320 tile (`wg320`, 16-bit only): each consumer's
/// 64 x 320 is two wgmmas a k-step (192 and 128 wide: wgmma stops at 256),
/// 160 accumulators a thread; three stages of 56 KB, the output staged in
/// rounds of 64 columns. For products whose 256-wide tiles come a little
/// over a whole wave: 512 x 9216 makes 116 of these tiles, one wave on 132
/// SMs, where 128 x 192 ones make 192, 1.45 waves (cuBLAS runs
/// `nvjet_sm90_tst_320x128_64x3` there).
pub const WGX: [WgTile; 1] = [wg(320, 3, false, 64, 64)];
/// Cooperative tiles whose widths fill one or two waves of tiles where the
/// `WG` widths come a little over or well under whole waves (`wg96` to
/// `wg176`, 16-bit, B K-major only: an N-major B tile is loaded in
/// 64-column boxes; `plan::wg_waves`). With 2 or 4 rows of tiles, 128 of
/// them on 132 SMs: 256 x 6144 and 512 x 3072 on
/// 96-wide tiles, 512 x 3584 on 112, 256 x 9216 and 512 x 4608 on 144, 256
/// x 10240 on 160, 256 x 11008 on 176 (126), where cuBLAS runs 96- to
/// 168-wide tiles (`nvjet_sm90_tst_144x128_64x6`, H200). All but the
/// 96-wide one stage their output and store it in TMA boxes 16 columns wide
/// (see `c_box`): 112 whole (one round), 144, 160 and 176 in rounds of 48,
/// 32 and 16 columns, so that they keep as many stages as stored from
/// registers (`tma_cols` 0, the 96-wide tile: staged, it would lose one).
/// Measured on the H200: staged whole, the 112- and 144-wide tiles ran
/// 1-12% faster than from registers (K = 3072 to 4608 most; on one wave of
/// 128- to 320-wide tiles registers cost 3-11%), while the 96-wide one lost
/// 9% at K = 8192 (7 stages against 8) and the 160- and 176-wide ones 2-3%
/// (bench/explore/mid-waves/, `widths-*`, `epi-*`); in rounds, 144 with six
/// stages instead of five, 160 and 176 staged with the stages they had, they
/// ran 2-10% faster again, 2-9% on the products the planner gives them
/// (bench/explore/stage-rounds/). Not so the `WG` tiles: in rounds of 64
/// columns with a stage more, 128 and 192 ran 2-7% slower on several waves
/// of tiles (each round waits for the last one's copy to read the buffer,
/// holding back the next tile), though faster on one.
pub const WGQ: [WgTile; 5] = [wg(96, 8, false, 0, 0), wg(112, 6, false, 112, 112), wg(144, 6, false, 48, 48), wg(160, 6, false, 32, 32), wg(176, 5, false, 16, 16)];
/// Every cooperative tile of the `wg` kernels: `WG`, `WGX`, then `WGQ`.
pub const WG_ALL: [WgTile; 10] = [WG[0], WG[1], WG[2], WG[3], WGX[0], WGQ[0], WGQ[1], WGQ[2], WGQ[3], WGQ[4]];
/// Ping-pong tiles (`wgp128`, `wgp64`).
pub const WGP: [WgTile; 2] = [wg(128, 6, true, 128, 128), wg(64, 8, true, 64, 64)];
/// Ping-pong tiles of 64 rows (`wgh128`, `wgh64`: 64 x 128, 64 x 64), for
/// products whose 128-row tiles would leave SMs idle (cuBLAS runs M = 128,
/// K = N = 4096 on 64 x 64 tiles). Their stages are small, so there are
/// more of them: more bytes in flight for these memory-bound products.
pub const WGH: [WgTile; 2] = [WgTile { bm: WGH_BM, ..wg(128, 9, true, 128, 128) }, WgTile { bm: WGH_BM, ..wg(64, 14, true, 64, 64) }];
/// Rows of the `WGH` tiles.
pub const WGH_BM: i64 = 64;
/// The 64-row tile 144 wide (`wgh144`), for the columns of one wave where
/// 128-wide tiles make a few more than there are SMs (18944 / 132 rounded
/// up to 16: Qwen2-7B's 18944, as cuBLAS's 144-wide tiles run it). 16-bit
/// with a K-major B only: an N-major B tile is loaded in 64-column boxes.
pub const WGW: [WgTile; 1] = [WgTile { bm: WGH_BM, ..wg(144, 8, true, 144, 144) }];
/// Every 64-row tile (`wgh<BN>`): `WGH`, then `WGW`.
pub const WGH_ALL: [WgTile; 3] = [WGH[0], WGH[1], WGW[0]];
/// The cooperative tiles whose kernels also sum a tile's K ranges across
/// the blocks of a cluster (`mm_wgk*`, `mm_wgrk*`; plan.rs `WgPlan::
/// k_cluster`): up to 192 wide (the 256-wide tile has no registers to spare
/// for the sum). The `WGH` tiles' own kernels do so too.
pub const WGK: [WgTile; 3] = [WG[1], WG[2], WG[3]];

const fn wg(bn: i64, stages: i64, pingpong: bool, tma_cols: i64, bulk_cols: i64) -> WgTile {
    WgTile { bm: WG_BM, bn, stages, pingpong, tma_cols, bulk_cols }
}

impl WgTile {
    /// The tile's schedule in kernel names and `MYNS_MATMUL_KERNEL` (`wg`,
    /// `wgp`, `wgh`), its width following.
    pub const fn kind(&self) -> &'static str {
        match (self.pingpong, self.bm) {
            (false, _) => "wg",
            (true, WG_BM) => "wgp",
            (true, _) => "wgh",
        }
    }
    /// The shared memory a cooperative 16-bit kernel stages its output in:
    /// per consumer, 64 rows of `tma_cols` columns for TMA stores, or of
    /// `bulk_cols` columns and 16 bytes more (a row whose global start is off
    /// a 16-byte boundary is shifted by that offset) for the warps' copies;
    /// none where `tma_cols` is 0 (stored from registers: `WGQ`'s 96).
    pub const fn out_region(&self) -> i64 {
        if self.tma_cols == 0 {
            return 0;
        }
        let tma = self.tma_cols * 2;
        let bulk = self.bulk_cols * 2 + 16;
        WG_BM * if tma > bulk { tma } else { bulk }
    }
    /// Whether the tile's kernels read B K-major only: an N-major B tile is
    /// loaded in boxes of 64 columns (`WGQ`, `WGW`).
    pub const fn b_k_only(&self) -> bool {
        self.bn % 64 != 0
    }
    /// Whether the tile has TF32 kernels: widths of 64 to 256 in steps of 64
    /// (not `WGX`, `WGQ`, `WGW`).
    pub const fn has_tf32(&self) -> bool {
        self.bn % 64 == 0 && self.bn <= 256
    }
    /// Output columns per TMA store box (kernels/matmul_sm90a.cu `Tile::
    /// C_BOX`, through `MYNS_WG_C_BOX`): 64 (128 bytes, 128-byte swizzle)
    /// where the staged rounds are multiples of 64 columns, else 16 (32
    /// bytes, no swizzle: `WGQ`).
    pub const fn c_box(&self) -> i64 {
        if self.tma_cols % 64 == 0 {
            64
        } else {
            16
        }
    }
    /// That region for `elem`-byte inputs: 0 for ping-pong and TF32 kernels,
    /// which store from registers.
    pub const fn out_bytes(&self, elem: i64) -> i64 {
        if self.pingpong || elem != 2 {
            0
        } else {
            self.out_region()
        }
    }
    /// Stages of the kernel for `elem`-byte inputs: cooperative TF32 kernels
    /// (no output region) spend its shared memory on more.
    pub const fn stages_for(&self, elem: i64) -> i64 {
        if self.pingpong || elem == 2 {
            self.stages
        } else {
            self.stages + self.out_region() / ((WG_BM + self.bn) * WG_BK_BYTES)
        }
    }
    /// Dynamic shared memory for `elem`-byte inputs (as `Tile` in
    /// kernels/matmul_sm90a.cu): the stages, the output region, 1024 bytes
    /// to align them (128-byte swizzle), where the barriers also go.
    pub const fn smem(&self, elem: i64) -> u32 {
        let stages = self.stages_for(elem);
        (stages * (self.bm + self.bn) * WG_BK_BYTES + self.out_bytes(elem) + 1024) as u32
    }
}

/// The skinny kernel (kernels/gemm_skinny.cu): warps per block and output
/// columns (n) per block.
pub const SKINNY_WARPS: i64 = 8;
pub const SKINNY_NW: i64 = 64;
/// Most rows (m) the skinny kernel takes: 8 per mma column block, 1 or 2 blocks.
pub const SKINNY_MAX_M: i64 = 16;
/// Most rows its streaming build takes, on mma consumers (16-bit types and
/// TF32): 8 blocks of 8 (batched decode, where the tile kernels stream the
/// weights slowly).
pub const SKINNY_TMA_MAX_M: i64 = 64;
/// The streaming build's m blocks (8 rows each), by kernel.
pub const SKINNY_TMA_MT: [i64; 4] = [1, 2, 4, 8];
/// Blocks of one output strip that split K among themselves (a thread block
/// cluster reducing through distributed shared memory).
pub const SKINNY_CLUSTERS: [i64; 4] = [1, 2, 4, 8];
/// The skinny kernel's streaming build (`skinny_tma`): consumer warps (plus
/// one producer warp) and the stage counts it is built with, multiples of
/// the warps. On the H100 4 warps on 16 stages streamed fastest among 2 to 8
/// warps on 8 to 16 stages at 64 strips (bench/explore/skinny/README.md, run
/// 5); on the H200 shallower rings, more blocks per SM, stream faster where
/// the strips fill more than half the SMs (runs 9-12: `plan::skinny_tma_plan`).
pub const SKINNY_TMA_CW: i64 = 4;
pub const SKINNY_TMA_STAGES: [i64; 3] = [16, 8, 4];
/// The streaming build's element types, in its kernel table's order (tf32:
/// float32 on the tensor cores).
pub const SKINNY_TMA_DTYPES: [&str; 4] = ["f16", "bf16", "f32", "tf32"];

/// Shared memory of a streaming skinny launch (kernels/gemm_skinny.cu
/// `skinny_tma`): the consumer warps' partial sums, 1024 bytes to align the
/// stages (weights and x), the stages' two barriers each.
pub fn skinny_tma_smem(mt: i64, stages: i64) -> u32 {
    let stage = 128 * SKINNY_NW + mt * 8 * 128; // 128 bytes of k: by the strip's 64 n (weights), by 8 mt rows (x)
    (SKINNY_TMA_CW * mt * 8 * SKINNY_NW * 4 + 1024 + stages * (stage + 16)) as u32
}

/// Whether the streaming build has a kernel for `mt` m blocks on a ring of
/// `stages`: those whose shared memory fits an SM (8 m blocks: 8 or 4
/// stages), and with FFMA consumers (`ffma`: `f32`, float32 with TF32 off)
/// at most 2 m blocks (16 rows; more would be 32 FFMAs a weight).
pub fn skinny_tma_built(ffma: bool, mt: i64, stages: i64) -> bool {
    skinny_tma_smem(mt, stages) <= 227 * 1024 && (!ffma || mt <= 2)
}

/// `X(dt, mt, stages)` for every streaming kernel built (both weight layouts each).
fn skinny_tma_builds() -> String {
    let mut xs = Vec::new();
    for dt in SKINNY_TMA_DTYPES {
        for mt in SKINNY_TMA_MT {
            for s in SKINNY_TMA_STAGES {
                if skinny_tma_built(dt == "f32", mt, s) {
                    xs.push(format!("X({dt}, {mt}, {s})"));
                }
            }
        }
    }
    format!("#define MYNS_SKINNY_TMA_BUILDS(X) {}\n", xs.join(" "))
}

fn tc_list(macro_name: &str, tiles: &[Tile]) -> String {
    let rows: Vec<String> = tiles
        .iter()
        .map(|t| format!("X({}, {}, {}, {}, {}, {}, {}, {})", t.name, t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, t.per_sm))
        .collect();
    format!("#define {macro_name}(X) {}\n", rows.join(" "))
}

/// `gemm_tiles.h`: `X(name, BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS)` lists,
/// `X(BN, STAGES)` lists of the Hopper tiles, the skinny kernel's shape.
pub fn header() -> String {
    let mut h = String::from("// @generated by build.rs from src/gemm/tiles.rs: do not edit.\n#pragma once\n");
    h += &tc_list("MYNS_TC_HALF_TILES", &TC_HALF);
    h += &tc_list("MYNS_TC_TF32_TILES", &TC_TF32);
    h += &tc_list("MYNS_TC_X64_TILES", &TC_X64);
    h += &tc_list("MYNS_SIMT_TILES", &SIMT);
    for (name, list) in [("MYNS_WG_TILES", &WG[..]), ("MYNS_WGX_TILES", &WGX[..]), ("MYNS_WGQ_TILES", &WGQ[..]), ("MYNS_WGP_TILES", &WGP[..]), ("MYNS_WGH_TILES", &WGH[..]), ("MYNS_WGW_TILES", &WGW[..]), ("MYNS_WGK_TILES", &WGK[..])] {
        let rows: Vec<String> = list.iter().map(|t| format!("X({}, {})", t.bn, t.stages)).collect();
        h += &format!("#define {name}(X) {}\n", rows.join(" "));
    }
    // A conditional expression of BN giving `f` of the tile of that width.
    fn by_width(list: &[WgTile], f: fn(&WgTile) -> i64) -> String {
        list.iter().fold(String::from("-1"), |acc, t| format!("BN == {} ? {} : ({acc})", t.bn, f(t)))
    }
    h += &format!(
        "#define MYNS_WG_BM {WG_BM}\n#define MYNS_WGH_BM {WGH_BM}\n#define MYNS_WG_BK_BYTES {WG_BK_BYTES}\n#define MYNS_WG_THREADS {WG_THREADS}\n\
         #define MYNS_WG_STAGES(BN) ({})\n#define MYNS_WGP_STAGES(BN) ({})\n#define MYNS_WGH_STAGES(BN) ({})\n\
         #define MYNS_WG_TMA_COLS(BN) ({})\n#define MYNS_WG_BULK_COLS(BN) ({})\n#define MYNS_WG_C_BOX(BN) ({})\n\
         #define MYNS_SKINNY_WARPS {SKINNY_WARPS}\n#define MYNS_SKINNY_NW {SKINNY_NW}\n\
         #define MYNS_SKINNY_TMA_CW {SKINNY_TMA_CW}\n#define MYNS_SKINNY_TMA_STAGES(X) {}\n",
        by_width(&WG_ALL, |t| t.stages),
        by_width(&WGP, |t| t.stages),
        by_width(&WGH_ALL, |t| t.stages),
        by_width(&WG_ALL, |t| t.tma_cols),
        by_width(&WG_ALL, |t| t.bulk_cols),
        by_width(&WG_ALL, |t| t.c_box()),
        SKINNY_TMA_STAGES.iter().map(|s| format!("X({s})")).collect::<Vec<_>>().join(" ")
    );
    h += &skinny_tma_builds();
    h
}

/// `gemm_kernels.rs`: the kernel handles, in the tables' order.
pub fn rust_kernels() -> String {
    let mut r = String::from("// @generated by build.rs from src/gemm/tiles.rs: do not edit.\n");
    let layouts = |prefix: &str| {
        let names: Vec<String> = ["kk", "kn", "mk", "mn"]
            .iter()
            .map(|l| format!("crate::cuda::Kernel::new(&crate::kernels::{{M}}, \"{prefix}_{l}\")"))
            .collect();
        format!("[{}]", names.join(", "))
    };
    let table = |name: &str, module: &str, prefix: &str, tiles: &[Tile]| {
        let rows: Vec<String> = tiles.iter().map(|t| layouts(&format!("{prefix}_{}", t.name)).replace("{M}", module)).collect();
        format!("static {name}: [Layouts; {}] = [{}];\n", tiles.len(), rows.join(", "))
    };
    r += &table("TC_F16", "MATMUL_TC", "mm_tc_f16", &TC_HALF);
    r += &table("TC_BF16", "MATMUL_TC", "mm_tc_bf16", &TC_HALF);
    r += &table("TC_TF32", "MATMUL_TC", "mm_tc_tf32", &TC_TF32);
    r += &table("TC_X64", "MATMUL_TC", "mm_tc_f32x", &TC_X64);
    r += &table("SIMT_F32", "MATMUL_SIMT", "mm_simt_f32", &SIMT);
    // Hopper: per tile, bf16 and f16 in the four layouts, then tf32 K-major
    // (cooperative tiles) and the register-A tf32 kernel (cooperative and
    // 64-row tiles: `mm_wgr<BN>_tf32`, `mm_wgrh<BN>_tf32`).
    // WGK: the cooperative tiles' kernels that sum K ranges in a cluster
    // (`mm_wgk<BN>_*`, `mm_wgrk<BN>_tf32`).
    let wg = |t: &WgTile, kc: bool| {
        let kind = if kc { "wgk" } else { t.kind() };
        let half = |dt: &str| layouts(&format!("mm_{kind}{}_{dt}", t.bn)).replace("{M}", "MATMUL_SM90A");
        let kernel = |name: String| format!("Some(crate::cuda::Kernel::new(&crate::kernels::MATMUL_SM90A, \"{name}\"))");
        let (kk, reg) = match kind {
            "wg" | "wgh" if !t.has_tf32() => ("None".to_string(), "None".to_string()),
            "wg" => (kernel(format!("mm_wg{}_tf32_kk", t.bn)), kernel(format!("mm_wgr{}_tf32", t.bn))),
            "wgk" => (kernel(format!("mm_wgk{}_tf32_kk", t.bn)), kernel(format!("mm_wgrk{}_tf32", t.bn))),
            "wgh" => ("None".to_string(), kernel(format!("mm_wgrh{}_tf32", t.bn))),
            _ => ("None".to_string(), "None".to_string()),
        };
        format!("WgKernels {{ bf16: {}, f16: {}, tf32_kk: {kk}, tf32_reg: {reg} }}", half("bf16"), half("f16"))
    };
    // WGW: bf16 and f16 with B K-major only (`kk`, `mk`; the `kn`, `mn`
    // names are not built, and sm90::launch refuses them), no TF32; WGQ
    // likewise. WGX: bf16 and f16, no TF32.
    for (name, list, kc) in [("WG_KERNELS", &WG[..], false), ("WGX_KERNELS", &WGX[..], false), ("WGQ_KERNELS", &WGQ[..], false), ("WGP_KERNELS", &WGP[..], false), ("WGH_KERNELS", &WGH[..], false), ("WGW_KERNELS", &WGW[..], false), ("WGK_KERNELS", &WGK[..], true)] {
        let rows: Vec<String> = list.iter().map(|t| wg(t, kc)).collect();
        r += &format!("static {name}: [WgKernels; {}] = [{}];\n", list.len(), rows.join(", "));
    }
    // Skinny: [dtype f16, bf16, f32][weights K-major, N-major][vectorised, element loads][m blocks 1, 2].
    let mut sk = Vec::new();
    for dt in ["f16", "bf16", "f32"] {
        let mut per_dt = Vec::new();
        for w in ["k", "n"] {
            let mut per_w = Vec::new();
            for v in ["v", "e"] {
                let ks: Vec<String> = [1, 2]
                    .iter()
                    .map(|mt| format!("crate::cuda::Kernel::new(&crate::kernels::GEMM_SKINNY, \"mm_skinny_{dt}_{w}{v}_m{mt}\")"))
                    .collect();
                per_w.push(format!("[{}]", ks.join(", ")));
            }
            per_dt.push(format!("[{}]", per_w.join(", ")));
        }
        sk.push(format!("[{}]", per_dt.join(", ")));
    }
    r += &format!("static SKINNY_KERNELS: [[[[crate::cuda::Kernel; 2]; 2]; 2]; 3] = [{}];\n", sk.join(", "));
    // The streaming build: [SKINNY_TMA_DTYPES][weights K-major,
    // N-major][SKINNY_TMA_MT][SKINNY_TMA_STAGES], None where not built.
    let tma: Vec<String> = SKINNY_TMA_DTYPES
        .iter()
        .map(|dt| {
            let per_w: Vec<String> = ["k", "n"]
                .iter()
                .map(|w| {
                    let per_mt: Vec<String> = SKINNY_TMA_MT
                        .iter()
                        .map(|&mt| {
                            let per_s: Vec<String> = SKINNY_TMA_STAGES
                                .iter()
                                .map(|&s| match skinny_tma_built(*dt == "f32", mt, s) {
                                    true => format!("Some(crate::cuda::Kernel::new(&crate::kernels::GEMM_SKINNY, \"mm_skinny_tma_{dt}_{w}_m{mt}_s{s}\"))"),
                                    false => "None".to_string(),
                                })
                                .collect();
                            format!("[{}]", per_s.join(", "))
                        })
                        .collect();
                    format!("[{}]", per_mt.join(", "))
                })
                .collect();
            format!("[{}]", per_w.join(", "))
        })
        .collect();
    r += &format!(
        "static SKINNY_TMA_KERNELS: [[[[Option<crate::cuda::Kernel>; {}]; {}]; 2]; {}] = [{}];\n",
        SKINNY_TMA_STAGES.len(),
        SKINNY_TMA_MT.len(),
        SKINNY_TMA_DTYPES.len(),
        tma.join(", ")
    );
    r
}
