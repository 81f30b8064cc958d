//! Launch parameters the CUDA kernels are compiled for and the Rust launch
//! code launches with: defined once, here. build.rs `include!`s this file
//! and writes each constant as a `#define MYNS_<NAME>` into the generated
//! `kernel_params.cuh` that the kernels include.

/// Most threads per block of the general row kernels (kernels/rows.cuh
/// `__launch_bounds__`), which leaves each thread up to 128 registers.
pub const ROW_MAX_THREADS: i64 = 512;
/// Most threads per block of the register-resident row builds.
pub const ROW_REGS_MAX_THREADS: i64 = 1024;
/// 16-byte packs each thread of a general row kernel keeps in registers
/// (longer rows are re-read from cache).
pub const ROW_CACHED_PACKS: i64 = 4;
/// Threads y of the column-sum kernel over a backward's per-block partials
/// (kernels/rows.cuh `column_sum_impl`; 32 threads x take 32 columns).
pub const COLUMN_SUM_THREADS_Y: i64 = 32;
/// Threads per block of the streaming elementwise kernels (add, scale).
pub const EW_THREADS: i64 = 256;
/// 16-byte loads each elementwise thread issues before it computes.
pub const EW_UNROLL: i64 = 4;

/// Every constant, for build.rs.
#[allow(dead_code)]
pub const ALL: &[(&str, i64)] = &[
    ("ROW_MAX_THREADS", ROW_MAX_THREADS),
    ("ROW_REGS_MAX_THREADS", ROW_REGS_MAX_THREADS),
    ("ROW_CACHED_PACKS", ROW_CACHED_PACKS),
    ("COLUMN_SUM_THREADS_Y", COLUMN_SUM_THREADS_Y),
    ("EW_THREADS", EW_THREADS),
    ("EW_UNROLL", EW_UNROLL),
];
