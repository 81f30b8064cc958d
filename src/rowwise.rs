//! Shared plumbing for ops that work row by row over the last dimension of a
//! contiguous buffer (norms, softmax, SwiGLU, scaling): shape and argument
//! checks, the vector-or-scalar kernel choice and launch configuration.

use crate::cuda::{self, DTypeKernels, Kernel};
use crate::op::{Cuda, TensorArg};
use crate::types::{DType, Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

/// `<name>_vec_<dtype>` (16-byte packs) and `<name>_scalar_<dtype>` kernels.
pub struct RowKernels {
    pub vec: DTypeKernels,
    pub scalar: DTypeKernels,
}

impl RowKernels {
    pub fn pick(&self, dtype: DType, vec: bool) -> &Kernel {
        if vec { self.vec.get(dtype) } else { self.scalar.get(dtype) }
    }
}

/// `row_kernels!(kernels::SOFTMAX, "softmax")`.
macro_rules! row_kernels {
    ($module:path, $name:expr) => {
        $crate::rowwise::RowKernels {
            vec: $crate::cuda::DTypeKernels {
                f32: $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f32")),
                f64: $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f64")),
                f16: $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f16")),
                bf16: $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_bf16")),
            },
            scalar: $crate::cuda::DTypeKernels {
                f32: $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f32")),
                f64: $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f64")),
                f16: $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f16")),
                bf16: $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_bf16")),
            },
        }
    };
}

/// The builds of a forward row reduction (norms, softmax), see kernels/rows.cuh.
pub struct ReduceKernels {
    /// Up to four packs per thread in registers, longer rows re-read from cache.
    pub general: RowKernels,
    /// The row held in registers at one (`<name>_r1_*`) or two (`<name>_r2_*`)
    /// packs per thread, every load issued before the reduction.
    pub regs: [RowKernels; 2],
    /// Four packs per thread in at most 32 registers (`<name>_r4_*`), for rows
    /// the threads cover exactly, where the op has that build (rms_norm,
    /// layer_norm), with where it runs by dtype (see [`plan_reduce`]).
    pub regs4: Option<(RowKernels, FourPackRule)>,
    /// The two-pack register build beats the general one at any row count
    /// (see [`plan_reduce`]), not only in launches of one wave.
    pub regs_at_scale: bool,
}

impl ReduceKernels {
    /// The build a plan names: the register build of `regs` packs per thread
    /// (1, 2, or 4 where the op has it), or the general one for `None`.
    fn build(&self, regs: Option<i64>) -> Option<&RowKernels> {
        match regs {
            None => Some(&self.general),
            Some(c @ (1 | 2)) => Some(&self.regs[c as usize - 1]),
            Some(4) => self.regs4.as_ref().map(|(k, _)| k),
            Some(_) => None,
        }
    }
}

/// `reduce_kernels!(kernels::SOFTMAX, "softmax"[, regs_at_scale][, r4: |dtype| FourPack::Always])`:
/// `r4` for an op with the four-pack build, and where it runs.
macro_rules! reduce_kernels {
    ($module:path, $name:literal) => {
        $crate::rowwise::reduce_kernels!($module, $name, false)
    };
    ($module:path, $name:literal, r4: $where:expr) => {
        $crate::rowwise::reduce_kernels!(@build $module, $name, false, Some(($crate::rowwise::row_kernels!($module, concat!($name, "_r4")), $where)))
    };
    ($module:path, $name:literal, $regs_at_scale:expr) => {
        $crate::rowwise::reduce_kernels!(@build $module, $name, $regs_at_scale, None)
    };
    (@build $module:path, $name:literal, $regs_at_scale:expr, $regs4:expr) => {
        $crate::rowwise::ReduceKernels {
            general: $crate::rowwise::row_kernels!($module, $name),
            regs: [$crate::rowwise::row_kernels!($module, concat!($name, "_r1")), $crate::rowwise::row_kernels!($module, concat!($name, "_r2"))],
            regs4: $regs4,
            regs_at_scale: $regs_at_scale,
        }
    };
}

/// Where an op's four-pack build runs, by dtype.
pub type FourPackRule = fn(DType) -> FourPack;

/// Where an op's four-pack build runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourPack {
    /// Only when forced (`MYNS_ROW_KERNEL=r4`).
    Forced,
    /// Only where it puts every row in one wave (layer_norm on float16,
    /// whose four-pack build spills 32 bytes: beyond one wave the general
    /// build ran ahead).
    OneWave,
    /// On any rows it covers exactly (rms_norm; layer_norm on float32 and
    /// bfloat16).
    Always,
}

pub(crate) use {reduce_kernels, row_kernels};

/// Elements per 16-byte pack.
pub fn pack(dtype: DType) -> i64 {
    16 / dtype.size() as i64
}

/// Whether the 16-byte pack kernels apply: every buffer aligned and each row a
/// whole number of packs.
pub fn can_vectorize(dtype: DType, row_len: i64, ptrs: &[usize]) -> bool {
    row_len % pack(dtype) == 0 && ptrs.iter().all(|p| p % 16 == 0)
}

use crate::kernel_params::{ROW_MAX_THREADS as MAX_THREADS, ROW_REGS_MAX_THREADS as REGS_MAX_THREADS};

/// Which threads of a row kernel (kernels/rows.cuh) take which row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// A block per row, or a warp per row with several rows per block.
    BlockOrWarp,
    /// A block per row: the kernel keeps per-block state (at most this many blocks).
    Block { max_blocks: i64 },
}

/// Which build of a forward row reduction runs, and its block shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    /// Packs per thread for the register-resident builds (1, 2 or 4); `None`: the general one.
    pub regs: Option<i64>,
    /// Threads per row.
    pub bx: i64,
    /// Rows per block (more than one only with a warp per row).
    pub by: i64,
}

/// `t` threads rounded up to whole warps, between one warp and `max`.
pub(crate) fn whole_warps(t: i64, max: i64) -> i64 {
    ((t + 31) / 32 * 32).clamp(32, max)
}

/// Threads per row of a register-resident build at `c` packs per thread.
fn regs_threads(units: i64, c: i64) -> i64 {
    whole_warps((units + c - 1) / c, REGS_MAX_THREADS)
}

/// Whether whole warps of `c` packs per thread cover rows of `units` packs
/// exactly (the four-pack build runs only so: it has no bounds checks).
fn covers_exactly(units: i64, c: i64) -> bool {
    units > 0 && units % (32 * c) == 0 && units <= c * REGS_MAX_THREADS
}

/// The general build's shape: about four packs per thread, or one per thread
/// when rows are too few to fill the GPU (at most one per SM), capped at 512
/// threads. Rows that need only one warp (at most 128 packs, or 32 when rows
/// are that few) take a warp each, 8 rows per block (an SM holds at most 32
/// blocks, so one-warp blocks would leave half its threads idle).
fn general_shape(units: i64, rows: i64, sms: i64, layout: Rows) -> (i64, i64) {
    let bx = if rows <= sms { whole_warps(units, MAX_THREADS) } else { whole_warps((units + 3) / 4, MAX_THREADS) };
    let by = if layout == Rows::BlockOrWarp && bx == 32 { 8 } else { 1 };
    (bx, by)
}

/// The build and shape for `rows` rows of `units` packs on a GPU of `sms`
/// SMs holding `threads_per_sm` threads each (measured on the H100,
/// bench/results/rowwise-h100-regs-explore.json):
/// - rows of at most 512 packs: two packs per thread in registers (one when a
///   warp covers the row), a warp per row up to 64 packs, at any row count
///   (a block per warp while rows are few, so they spread over the SMs);
/// - longer rows, when all of them are resident at once at one pack per
///   thread (or else two): that build, one wave in which each thread waits on
///   memory once;
/// - `regs_at_scale` (softmax, the residual-add norms): rows of up to 2048
///   packs at two packs per thread at any row count; on the H100 that build
///   ran 1-7% ahead of the general one from 1024 x 8192 to 16384 x 8192
///   bf16, where for rms_norm it fell 3-18% behind
///   (bench/explore/rowwise-gaps/README.md);
/// - `r4` (an op with the four-pack build, `FourPack::Always`, or
///   `FourPack::OneWave` where that puts every row in one wave): rows of a
///   whole number of
///   128-pack steps, up to 4096 packs, at four packs per thread (32 registers,
///   so 2048 threads per SM): 1024 rows of 8192 bfloat16 in one wave, where
///   the general build (63 registers) takes two;
/// - else the general build.
///
/// `force`: `MYNS_ROW_KERNEL` (see `forced_plan`).
pub fn plan_reduce(units: i64, rows: i64, sms: i64, threads_per_sm: i64, regs_at_scale: bool, r4: Option<FourPack>, force: Option<&str>) -> Result<ReducePlan> {
    if let Some(f) = force {
        return forced_plan(f, units, rows, sms, r4.is_some());
    }
    let resident = sms * threads_per_sm;
    // A warp per row: 8 rows per block, or one when rows are few enough to
    // spread over the SMs (at most 4 one-warp blocks each).
    let warp_rows = if rows <= 4 * sms { 1 } else { 8 };
    let regs = |c: i64| {
        let bx = regs_threads(units, c);
        ReducePlan { regs: Some(c), bx, by: if bx == 32 { warp_rows } else { 1 } }
    };
    let one_wave = |c: i64| {
        let p = regs(c);
        p.bx * c >= units && rows * p.bx <= resident
    };
    Ok(if units <= 32 {
        regs(1)
    } else if units <= 512 {
        regs(2)
    } else if one_wave(1) {
        regs(1)
    } else if one_wave(2) {
        regs(2)
    } else if covers_exactly(units, 4)
        && match r4 {
            Some(FourPack::Always) => true,
            Some(FourPack::OneWave) => one_wave(4),
            Some(FourPack::Forced) | None => false,
        }
    {
        regs(4)
    } else if regs_at_scale && units <= 2 * REGS_MAX_THREADS {
        regs(2)
    } else {
        let (bx, by) = general_shape(units, rows, sms, Rows::BlockOrWarp);
        ReducePlan { regs: None, bx, by }
    })
}

/// A grid-strided backward row kernel that keeps per-block partial sums
/// (`Rows::Block`): packs per thread in registers (1 or 2; `None`: the
/// general build), threads per row, blocks. Rows of up to 1024 packs (8192
/// bfloat16) are held in registers by at most 512 threads (the partials take
/// registers too), in about one wave of 1024 threads per SM: many rows in
/// flight, partials written once per block. Longer rows take the general
/// build; `smem_blocks`: how many of its blocks an SM holds with their sums
/// in shared memory (kernels/rows.cuh `ColumnSums`), `None` where they do
/// not fit (then at most 256 blocks, adding into global memory).
pub fn plan_block_regs(units: i64, rows: i64, sms: i64, smem_blocks: Option<i64>) -> (Option<i64>, i64, i64) {
    let c = if units <= MAX_THREADS { 1 } else { 2 };
    if units > 2 * MAX_THREADS {
        let (bx, _) = general_shape(units, rows, sms, Rows::Block { max_blocks: 256 });
        return (None, bx, rows.clamp(1, smem_blocks.map_or(256, |b| sms * b)));
    }
    let bx = whole_warps((units + c - 1) / c, MAX_THREADS);
    (Some(c), bx, rows.clamp(1, sms * (1024 / bx).max(1)))
}

/// `MYNS_ROW_KERNEL=<build>[:<threads per row>[:<rows per block>]]` with
/// build `r1`, `r2`, `r4` (where the op has it) or `general` (testing and
/// tuning): forces the forward row reductions' build and shape.
fn forced_plan(spec: &str, units: i64, rows: i64, sms: i64, has_r4: bool) -> Result<ReducePlan> {
    let mut parts = spec.trim().split(':');
    let build = parts.next().unwrap_or("");
    let num = |p: Option<&str>| -> Result<Option<i64>> {
        p.map(|v| v.parse::<i64>().map_err(|_| Error::value(format!("MYNS_ROW_KERNEL=`{spec}`: `{v}` is not a number")))).transpose()
    };
    let (bx, by) = (num(parts.next())?, num(parts.next())?);
    let regs = match build {
        "r1" => Some(1),
        "r2" => Some(2),
        "r4" if has_r4 => Some(4),
        "general" => None,
        _ => return Err(Error::value(format!("MYNS_ROW_KERNEL=`{spec}`: the build must be r1, r2{} or general", if has_r4 { ", r4" } else { "" }))),
    };
    let bx = bx.unwrap_or_else(|| match regs {
        Some(c) => regs_threads(units, c),
        None => general_shape(units, rows, sms, Rows::BlockOrWarp).0,
    });
    let plan = ReducePlan { regs, bx, by: by.unwrap_or(if bx == 32 { 8 } else { 1 }) };
    let max = if regs.is_some() { REGS_MAX_THREADS } else { MAX_THREADS };
    if plan.bx < 32 || plan.bx % 32 != 0 || plan.by < 1 || plan.bx.checked_mul(plan.by).is_none_or(|t| t > max) || (plan.by > 1 && plan.bx != 32) {
        return Err(Error::value(format!("MYNS_ROW_KERNEL=`{spec}`: threads per row must be whole warps, rows per block more than one only with one warp per row, at most {max} threads")));
    }
    if let Some(c) = regs {
        if plan.bx * c < units || (c == 4 && plan.bx * c != units) {
            return Err(Error::value(format!("MYNS_ROW_KERNEL=`{spec}`: {} threads x {c} packs do not cover a row of {units} packs{}", plan.bx, if c == 4 { " exactly" } else { "" })));
        }
    }
    Ok(plan)
}

/// `x`'s dtype and device, whether the 16-byte pack kernels apply to rows of
/// `h` elements in `ptrs`, and the row length in the kernel's units (packs or
/// elements).
fn row_units(x: &TensorArg, ptrs: &[usize], h: i64) -> Result<(DType, usize, bool, i64)> {
    let dtype = x.dtype()?;
    let vec = can_vectorize(dtype, h, ptrs);
    let device = match x.device() {
        crate::types::Device::Cuda(i) => i,
        _ => 0,
    };
    Ok((dtype, device, vec, if vec { h / pack(dtype) } else { h }))
}

/// A row kernel's variant and launch shape.
pub struct RowLaunch {
    f: sys::CUfunction,
    grid: u32,
    block: (u32, u32),
    /// Dynamic shared memory, bytes.
    smem: u32,
    /// Every block writes its whole row of per-block partial sums (the
    /// register-resident backward builds, and the general one with its sums
    /// in shared memory), so they need no zero fill.
    writes_partials: bool,
    /// Planes and length of a block's partial sums (`block_regs`).
    partials: (i64, i64),
}

impl RowLaunch {
    /// The general build of `kernels` for `rows` rows of `h` elements in the
    /// buffers `ptrs` (on `x`'s device): the 16-byte pack variant when the
    /// buffers allow it, shaped by `general_shape`.
    pub fn new(kernels: &RowKernels, x: &TensorArg, ptrs: &[usize], rows: i64, h: i64, layout: Rows) -> Result<RowLaunch> {
        let (dtype, device, vec, units) = row_units(x, ptrs, h)?;
        let f = kernels.pick(dtype, vec).function(device)?;
        let (bx, by) = general_shape(units, rows, cuda::device_info(device)?.sms as i64, layout);
        let max_blocks = match layout {
            Rows::BlockOrWarp => 1 << 20,
            Rows::Block { max_blocks } => max_blocks,
        };
        let grid = ((rows + by - 1) / by).clamp(1, max_blocks) as u32;
        Ok(RowLaunch { f, grid, block: (bx as u32, by as u32), smem: 0, writes_partials: false, partials: (0, 0) })
    }

    /// A backward row kernel with per-block partial sums (`planes` rows of
    /// `h` per block), its build and grid chosen by [`plan_block_regs`]
    /// (`kernels.regs`: `<name>_r1_*`, `<name>_r2_*`); the general build
    /// gets shared memory for its sums where they fit.
    pub fn block_regs(kernels: &ReduceKernels, x: &TensorArg, ptrs: &[usize], rows: i64, h: i64, planes: i64) -> Result<RowLaunch> {
        let (dtype, device, vec, units) = row_units(x, ptrs, h)?;
        let info = cuda::device_info(device)?;
        // The kernels' static shared memory (their reductions', about 1 KB)
        // counts against the same per-block limit; the driver reserves 1 KB
        // a block; at most two blocks of the general build's (up to 512)
        // threads an SM.
        let smem = planes * h * dtype.acc().size() as i64;
        let smem_blocks = (smem + 2048 <= info.max_smem as i64)
            .then(|| (info.smem_per_sm as i64 / (smem + 1024)).min(info.threads_per_sm as i64 / MAX_THREADS).clamp(1, 2));
        let (c, bx, blocks) = plan_block_regs(units, rows, info.sms as i64, smem_blocks);
        let kernels = kernels.build(c).ok_or_else(|| Error::runtime(format!("myns::{}: no {c:?}-pack backward build", x.op())))?;
        let kernel = kernels.pick(dtype, vec);
        let smem = if c.is_none() && smem_blocks.is_some() { smem as u32 } else { 0 };
        let f = if smem > 0 { kernel.function_smem(device, smem)? } else { kernel.function(device)? };
        // The register builds and the shared sums write every block's partials whole.
        let writes_partials = (c.is_some() || smem > 0) && rows > 0;
        Ok(RowLaunch { f, grid: blocks as u32, block: (bx as u32, 1), smem, writes_partials, partials: (planes, h) })
    }

    /// The per-block partial sums buffer of a [`RowLaunch::block_regs`]
    /// launch, `[planes, blocks, h]` in `opts`' kind on its device: left
    /// unwritten where the kernel writes it whole, zeroed where it adds into
    /// it (the general build in global memory, or no launch at all).
    pub fn partials(&self, opts: (tch::Kind, tch::Device)) -> Result<tch::Tensor> {
        let shape = [self.partials.0, self.grid as i64, self.partials.1];
        Ok(if self.writes_partials { tch::Tensor::f_empty(shape, opts)? } else { tch::Tensor::f_zeros(shape, opts)? })
    }

    /// A forward row reduction (one block or warp per row), its build chosen
    /// by [`plan_reduce`].
    pub fn reduce(kernels: &ReduceKernels, x: &TensorArg, ptrs: &[usize], rows: i64, h: i64) -> Result<RowLaunch> {
        let (dtype, device, vec, units) = row_units(x, ptrs, h)?;
        let info = cuda::device_info(device)?;
        let force = crate::overrides::get(crate::overrides::Knob::RowKernel);
        let plan = plan_reduce(units, rows, info.sms as i64, info.threads_per_sm as i64, kernels.regs_at_scale, kernels.regs4.as_ref().map(|(_, runs)| runs(dtype)), force.as_deref())
            .map_err(|e| e.context(format_args!("myns::{}", x.op())))?;
        // The register builds take one row per block or warp, with no loop.
        let grid = (rows + plan.by - 1) / plan.by;
        let grid = match plan.regs {
            Some(_) if grid > i32::MAX as i64 => return Err(x.error(format_args!("has {rows} rows, more than one launch takes"))),
            Some(_) => grid,
            None => grid.clamp(1, 1 << 20),
        };
        // plan_reduce names only builds the op has.
        let kernels = kernels.build(plan.regs).ok_or_else(|| Error::runtime(format!("myns::{}: no build for {plan:?}", x.op())))?;
        let f = kernels.pick(dtype, vec).function(device)?;
        Ok(RowLaunch { f, grid: grid as u32, block: (plan.bx as u32, plan.by as u32), smem: 0, writes_partials: false, partials: (0, 0) })
    }

    pub fn blocks(&self) -> u32 {
        self.grid
    }

    /// Launches on `cx`'s stream with `params` (pointers to each kernel argument).
    pub fn launch(&self, cx: &Cuda, params: &mut [*mut c_void]) -> Result<()> {
        cuda::launch(self.f, (self.grid, 1, 1), (self.block.0, self.block.1, 1), self.smem, cx.stream, params)
    }
}

/// The sums over the parts of a backward kernel's per-block partials, by
/// `kernels` (`<op>_column_sum_<dtype>`, kernels/rows.cuh `MYNS_COLUMN_SUM`):
/// `partial` is `[planes, parts, h]` or `[parts, h]`, contiguous, in
/// `dtype`'s accumulation type. Returns one new `[h]` tensor of `dtype` per
/// plane (one or two), each summed in the accumulation type, rounded once.
pub fn sum_partials(kernels: &DTypeKernels, dtype: DType, partial: &tch::Tensor, cx: &Cuda) -> Result<Vec<tch::Tensor>> {
    let size = partial.size();
    let (planes, parts, h) = match size[..] {
        [parts, h] => (1, parts, h),
        [planes @ (1 | 2), parts, h] => (planes, parts, h),
        _ => return Err(Error::runtime(format!("myns: per-block partials of shape {size:?}"))),
    };
    let outs = (0..planes)
        .map(|_| crate::op::empty(&[h], dtype.scalar_type(), crate::types::Device::Cuda(cx.device)))
        .collect::<Result<Vec<_>>>()?;
    if h == 0 {
        return Ok(outs);
    }
    let (pp, o0) = (partial.data_ptr() as u64, outs[0].data_ptr() as u64);
    let o1 = outs.get(1).map_or(0, |t| t.data_ptr() as u64);
    let mut params = [cuda::arg(&pp), cuda::arg(&o0), cuda::arg(&o1), cuda::arg(&parts), cuda::arg(&h)];
    let grid = (((h + 31) / 32) as u32, planes as u32, 1);
    cuda::launch(kernels.get(dtype).function(cx.device)?, grid, (32, crate::kernel_params::COLUMN_SUM_THREADS_Y as u32, 1), 0, cx.stream, &mut params)?;
    Ok(outs)
}

/// Rows and row length of `x` over its last dimension (0-d counts as one row of one).
pub fn rows_of(x: &TensorArg) -> Result<(i64, i64)> {
    let sizes = x.sizes_real()?;
    let h = sizes.last().copied().unwrap_or(1);
    let rows = if h == 0 { 0 } else { x.numel() / h };
    Ok((rows, h))
}

/// Checks that `v`, argument `name` of the op `x` belongs to, is finite and
/// at least `min` (a `ValueError` otherwise).
pub fn check_float(x: &TensorArg, name: &str, v: f64, min: f64) -> Result<f64> {
    if !v.is_finite() || v < min {
        return Err(Error::value(format!("myns::{}: argument `{name}` must be a finite number >= {min}, got {v}", x.op())));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    // An H100: 132 SMs of 2048 threads.
    fn plan(units: i64, rows: i64, force: Option<&str>) -> Result<ReducePlan> {
        plan_reduce(units, rows, 132, 2048, false, None, force)
    }

    fn p(regs: Option<i64>, bx: i64, by: i64) -> ReducePlan {
        ReducePlan { regs, bx, by }
    }

    #[test]
    fn short_rows_or_small_launches_hold_rows_in_registers() {
        assert_eq!(plan(16, 1000, None).unwrap(), p(Some(1), 32, 8)); // a warp covers a row
        assert_eq!(plan(64, 1, None).unwrap(), p(Some(2), 32, 1)); // 1 x 512 bf16: a warp per row
        assert_eq!(plan(64, 528, None).unwrap(), p(Some(2), 32, 1)); // spread over the SMs
        assert_eq!(plan(64, 529, None).unwrap(), p(Some(2), 32, 8));
        assert_eq!(plan(64, 32768, None).unwrap(), p(Some(2), 32, 8)); // at any row count
        assert_eq!(plan(256, 1024, None).unwrap(), p(Some(2), 128, 1));
        assert_eq!(plan(512, 100_000, None).unwrap(), p(Some(2), 256, 1));
        assert_eq!(plan(1000, 5, None).unwrap(), p(Some(1), 1024, 1)); // one wave; whole warps
        assert_eq!(plan(1024, 64, None).unwrap(), p(Some(1), 1024, 1));
        assert_eq!(plan(2048, 64, None).unwrap(), p(Some(2), 1024, 1)); // 64 x 16384 bf16
    }

    #[test]
    fn backward_rows_of_up_to_1024_packs_stay_in_registers() {
        assert_eq!(plan_block_regs(256, 8192, 132, None), (Some(1), 256, 528)); // 8192 x 2048 bf16
        assert_eq!(plan_block_regs(1, 3, 132, None), (Some(1), 32, 3));
        assert_eq!(plan_block_regs(0, 0, 132, None), (Some(1), 32, 1));
        assert_eq!(plan_block_regs(513, 100, 132, None), (Some(2), 288, 100));
        assert_eq!(plan_block_regs(1024, 1 << 20, 132, None), (Some(2), 512, 264));
        assert_eq!(plan_block_regs(1025, 1 << 20, 132, None), (None, 288, 256)); // the general shape
        assert_eq!(plan_block_regs(1025, 1 << 20, 132, Some(2)), (None, 288, 264)); // its sums in shared memory
    }

    #[test]
    fn large_launches_of_long_rows_take_the_general_build() {
        assert_eq!(plan(1024, 1024, None).unwrap(), p(None, 256, 1)); // more than one wave
        assert_eq!(plan(4096, 1, None).unwrap(), p(None, 512, 1)); // longer than 2 packs x 1024 threads
    }

    #[test]
    fn ops_whose_register_build_wins_at_scale_keep_it() {
        let at_scale = |units, rows| plan_reduce(units, rows, 132, 2048, true, None, None).unwrap();
        assert_eq!(at_scale(1024, 1024), p(Some(2), 512, 1)); // softmax 1024 x 8192 bf16
        assert_eq!(at_scale(1024, 16384), p(Some(2), 512, 1));
        assert_eq!(at_scale(2048, 1024), p(Some(2), 1024, 1)); // 1024 x 16384 bf16
        assert_eq!(at_scale(2049, 1024), p(None, 512, 1)); // beyond 2 packs x 1024 threads
        assert_eq!(at_scale(1000, 5), p(Some(1), 1024, 1)); // one wave: unchanged
        assert_eq!(at_scale(256, 1024), p(Some(2), 128, 1));
        assert_eq!(plan_reduce(1024, 1024, 132, 2048, true, None, Some("general")).unwrap(), p(None, 256, 1)); // forcing wins
    }

    #[test]
    fn ops_with_the_four_pack_build_take_it_for_long_rows_covered_exactly() {
        let r4 = |units, rows, force| plan_reduce(units, rows, 132, 2048, false, Some(FourPack::Always), force);
        assert_eq!(r4(1024, 1024, None).unwrap(), p(Some(4), 256, 1)); // rms_norm 1024 x 8192 bf16: one wave
        assert_eq!(r4(1024, 8192, None).unwrap(), p(Some(4), 256, 1)); // layer_norm 8192 x 8192 bf16: many waves
        assert_eq!(r4(640, 8192, None).unwrap(), p(Some(4), 160, 1)); // 8192 x 5120 bf16
        assert_eq!(r4(2048, 16384, None).unwrap(), p(Some(4), 512, 1));
        assert_eq!(r4(2048, 1, None).unwrap(), p(Some(2), 1024, 1)); // one wave at two packs
        assert_eq!(r4(4096, 1024, None).unwrap(), p(Some(4), 1024, 1));
        assert_eq!(r4(1000, 1024, None).unwrap(), p(None, 256, 1)); // not whole 128-pack steps
        assert_eq!(r4(8192, 1024, None).unwrap(), p(None, 512, 1)); // longer than 4 packs x 1024 threads
        assert_eq!(r4(1024, 64, None).unwrap(), p(Some(1), 1024, 1)); // one wave: unchanged
        assert_eq!(r4(1024, 1024, Some("r4")).unwrap(), p(Some(4), 256, 1));
        assert_eq!(r4(128, 100, Some("r4")).unwrap(), p(Some(4), 32, 8)); // a warp per row
        for bad in ["r4:128", "r4:512", "r4:1024:2"] {
            assert!(r4(1024, 1024, Some(bad)).is_err(), "{bad}");
        }
        assert!(r4(1000, 1024, Some("r4")).is_err()); // rounded up to 256 threads, not exact
        assert!(plan(1024, 1024, Some("r4")).is_err()); // an op without the build
    }

    #[test]
    fn a_one_wave_four_pack_build_runs_only_in_one_wave() {
        let r4 = |units, rows, force| plan_reduce(units, rows, 132, 2048, false, Some(FourPack::OneWave), force);
        assert_eq!(r4(1024, 1024, None).unwrap(), p(Some(4), 256, 1)); // layer_norm 1024 x 8192 bf16: 1024 x 256 threads fit
        assert_eq!(r4(2048, 512, None).unwrap(), p(Some(4), 512, 1)); // 512 x 8192 f32
        assert_eq!(r4(1024, 2048, None).unwrap(), p(None, 256, 1)); // 2048 rows: two waves either way
        assert_eq!(r4(2048, 1024, None).unwrap(), p(None, 512, 1)); // 1024 x 8192 f32
        assert_eq!(r4(1024, 2048, Some("r4")).unwrap(), p(Some(4), 256, 1)); // forcing still runs it
        let forced_only = |units, rows, force| plan_reduce(units, rows, 132, 2048, false, Some(FourPack::Forced), force);
        assert_eq!(forced_only(1024, 1024, None).unwrap(), p(None, 256, 1)); // layer_norm float64: the general build
        assert_eq!(forced_only(1024, 1024, Some("r4")).unwrap(), p(Some(4), 256, 1));
    }

    #[test]
    fn forced_builds() {
        assert_eq!(plan(64, 32768, Some("r1")).unwrap(), p(Some(1), 64, 1));
        assert_eq!(plan(64, 32768, Some("r2:32:8")).unwrap(), p(Some(2), 32, 8));
        assert_eq!(plan(64, 1, Some("general")).unwrap(), p(None, 64, 1));
        assert_eq!(plan(64, 1, Some("general:128")).unwrap(), p(None, 128, 1));
        assert_eq!(plan(1, 1000, Some("r1:1024")).unwrap(), p(Some(1), 1024, 1)); // rows per block follow the threads
        assert_eq!(plan(64, 1000, Some("general:512")).unwrap(), p(None, 512, 1));
        for bad in ["r3", "r1:48", "r1:64:2", "r1:32", "general:1024", "r2:x", "r1:32:33", "r1:32:0", "r1:", "r1:64:288230376151711744"] {
            assert!(plan(64, 4, Some(bad)).is_err(), "{bad}");
        }
        assert!(plan(2049, 1, Some("r2")).is_err()); // more than 2 x 1024 packs
    }
}
