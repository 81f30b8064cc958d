//! Shared plumbing for ops that work row by row over the last dimension of a
//! contiguous buffer (norms, softmax, SwiGLU, scaling): shape and argument
//! checks, the vector-or-scalar kernel choice and launch configuration.

use crate::cuda::{self, DTypeKernels, Kernel};
use crate::registry::{Call, DType, TensorArg};
use anyhow::Result;
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
#[macro_export]
macro_rules! row_kernels {
    ($module:path, $name:literal) => {
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

/// Elements per 16-byte pack.
pub fn pack(dtype: DType) -> i64 {
    16 / dtype.size() as i64
}

/// Whether the 16-byte pack kernels apply: every buffer aligned and each row a
/// whole number of packs.
pub fn can_vectorize(dtype: DType, row_len: i64, ptrs: &[usize]) -> bool {
    row_len % pack(dtype) == 0 && ptrs.iter().all(|p| p % 16 == 0)
}

/// kernels/rows.cuh `MYNS_ROW_MAX_THREADS`: the kernels' launch bound.
const MAX_THREADS: i64 = 512;

/// Which threads of a row kernel (kernels/rows.cuh) take which row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// A block per row, or a warp per row with several rows per block.
    BlockOrWarp,
    /// A block per row: the kernel keeps per-block state (at most this many blocks).
    Block { max_blocks: i64 },
}

/// A row kernel's variant and launch shape.
pub struct RowLaunch {
    f: sys::CUfunction,
    grid: u32,
    block: (u32, u32),
}

impl RowLaunch {
    /// For `rows` rows of `h` elements in the buffers `ptrs` (on `x`'s device):
    /// the 16-byte pack variant when the buffers allow it, and about four
    /// packs per thread. Rows too few to fill the GPU (at most one per SM) get
    /// a pack per thread (less work in sequence per thread). Rows that need
    /// only one warp (at most 128 packs, or 32 when rows are that few) take a
    /// warp each, 8 rows per block (an SM holds at most 32 blocks, so one-warp
    /// blocks would leave half its threads idle).
    pub fn new(kernels: &RowKernels, x: &TensorArg, ptrs: &[usize], rows: i64, h: i64, layout: Rows) -> Result<RowLaunch> {
        let dtype = x.dtype()?;
        let device = x.device_index().max(0) as usize;
        let vec = can_vectorize(dtype, h, ptrs);
        let f = kernels.pick(dtype, vec).function(device)?;
        let units = if vec { h / pack(dtype) } else { h };
        let sms = cuda::device_info(device)?.sms as i64;
        let whole_warps = |t: i64| ((t + 31) / 32 * 32).clamp(32, MAX_THREADS);
        let bx = if rows <= sms { whole_warps(units) } else { whole_warps((units + 3) / 4) };
        let (by, max_blocks) = match layout {
            Rows::BlockOrWarp if bx == 32 => (8, 1 << 20),
            Rows::BlockOrWarp => (1, 1 << 20),
            Rows::Block { max_blocks } => (1, max_blocks),
        };
        let grid = ((rows + by - 1) / by).clamp(1, max_blocks) as u32;
        Ok(RowLaunch { f, grid, block: (bx as u32, by as u32) })
    }

    pub fn blocks(&self) -> u32 {
        self.grid
    }

    /// Launches on `stream` with `params` (pointers to each kernel argument).
    pub fn launch(&self, call: &Call, stream: usize, params: &mut [*mut c_void]) -> Result<()> {
        cuda::launch(self.f, (self.grid, 1, 1), (self.block.0, self.block.1, 1), 0, stream, params).map_err(|e| call.error(e))
    }
}

/// Rows and row length of `x` over its last dimension (0-d counts as one row of one).
pub fn rows_of(x: &TensorArg) -> Result<(i64, i64)> {
    let sizes = x.sizes_real()?;
    let h = sizes.last().copied().unwrap_or(1);
    let rows = if h == 0 { 0 } else { x.numel() / h };
    Ok((rows, h))
}

/// Checks a float scalar argument is finite and at least `min`.
pub fn check_scalar(call: &Call, i: usize, min: f64) -> Result<f64> {
    let v = call.float(i)?;
    if !v.is_finite() || v < min {
        return Err(call.error(format_args!(
            "argument `{}` must be a finite number >= {min}, got {v}",
            crate::registry::arg_name(call.spec, i)
        )));
    }
    Ok(v)
}
