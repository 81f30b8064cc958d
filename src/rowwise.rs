//! Shared plumbing for ops that work row by row over the last dimension of a
//! contiguous buffer (norms, softmax, SwiGLU, scaling): shape and argument
//! checks, the vector-or-scalar kernel choice and launch configuration.

use crate::cuda::Kernel;
use crate::registry::{DType, TensorArg};
use anyhow::Result;

/// `<name>_vec_<dtype>` (16-byte packs) and `<name>_scalar_<dtype>` kernels.
pub struct RowKernels {
    pub vec: [Kernel; 4],
    pub scalar: [Kernel; 4],
}

impl RowKernels {
    pub fn pick(&self, dtype: DType, vec: bool) -> &Kernel {
        let i = match dtype {
            DType::F32 => 0,
            DType::F64 => 1,
            DType::F16 => 2,
            DType::BF16 => 3,
        };
        if vec { &self.vec[i] } else { &self.scalar[i] }
    }
}

/// `row_kernels!(kernels::SOFTMAX, "softmax")`.
#[macro_export]
macro_rules! row_kernels {
    ($module:path, $name:literal) => {
        $crate::rowwise::RowKernels {
            vec: [
                $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f32")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f64")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_f16")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_vec_bf16")),
            ],
            scalar: [
                $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f32")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f64")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_f16")),
                $crate::cuda::Kernel::new(&$module, concat!($name, "_scalar_bf16")),
            ],
        }
    };
}

pub fn elem_size(dtype: DType) -> usize {
    match dtype {
        DType::F16 | DType::BF16 => 2,
        DType::F32 => 4,
        DType::F64 => 8,
    }
}

/// Elements per 16-byte pack.
pub fn pack(dtype: DType) -> i64 {
    16 / elem_size(dtype) as i64
}

/// Whether the 16-byte pack kernels apply: every buffer aligned and each row a
/// whole number of packs.
pub fn can_vectorize(dtype: DType, row_len: i64, ptrs: &[usize]) -> bool {
    row_len % pack(dtype) == 0 && ptrs.iter().all(|p| p % 16 == 0)
}

/// Threads per block for one row of `units` packs: about four packs per
/// thread, a multiple of 32, at most 1024.
pub fn threads_for(units: i64) -> u32 {
    let t = (units + 3) / 4;
    (((t + 31) / 32) * 32).clamp(32, 1024) as u32
}

/// Blocks for a grid-strided loop over `rows` (one block per row).
pub fn blocks_for(rows: i64) -> u32 {
    rows.clamp(1, 1 << 20) as u32
}

/// Rows and row length of `x` over its last dimension (0-d counts as one row of one).
pub fn rows_of(x: &TensorArg) -> Result<(i64, i64)> {
    let sizes = x.sizes_real()?;
    let h = sizes.last().copied().unwrap_or(1);
    let rows = if h == 0 { 0 } else { x.numel() / h };
    Ok((rows, h))
}

/// Checks a float scalar argument is finite and at least `min`.
pub fn check_scalar(call: &crate::registry::Call, i: usize, min: f64) -> Result<f64> {
    let v = call.float(i)?;
    if !v.is_finite() || v < min {
        return Err(call.error(format_args!(
            "argument `{}` must be a finite number >= {min}, got {v}",
            crate::registry::arg_name(call.spec, i)
        )));
    }
    Ok(v)
}
