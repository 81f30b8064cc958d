//! Staging copies (kernels/gemm_pack.cu) of operands the fast kernels
//! cannot read in place: misaligned rows (any row stride, start or batch
//! stride that is not a whole number of 16 bytes: TMA and 16-byte loads need
//! it) get a padded copy in their own orientation, operands with no unit
//! stride a K-major one, as do the Hopper TF32 kernels' operands that are
//! not K-contiguous. One memory-bound pass each, far cheaper than the
//! product for any shape that is not itself memory-bound, so no shape
//! leaves the tensor cores.

use super::plan::{cdiv, Layout};
use crate::cuda::{self, Kernel};
use crate::kernels;
use crate::types::{DType, Error, Result};
use tch::Tensor;

/// One operand of a product: `batch` matrices of `rows` x `k`, element
/// (z, r, c) at `ptr` + (z * sb + r * sr + c * sk) elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operand {
    pub ptr: u64,
    pub batch: i64,
    pub rows: i64,
    pub k: i64,
    pub sb: i64,
    pub sr: i64,
    pub sk: i64,
}

/// Mirrors `PackParams` in kernels/gemm_pack.cu.
#[repr(C)]
struct PackParams {
    src: u64,
    dst: u64,
    batch: i64,
    rows: i64,
    cols: i64,
    sb: i64,
    sr: i64,
    sc: i64,
    ld: i64,
}

struct PackKernels {
    rows: Kernel,
    gather: Kernel,
}

macro_rules! pack_kernels {
    ($dt:literal) => {
        PackKernels {
            rows: Kernel::new(&kernels::GEMM_PACK, concat!("gemm_pack_rows_", $dt)),
            gather: Kernel::new(&kernels::GEMM_PACK, concat!("gemm_pack_gather_", $dt)),
        }
    };
}

static PACK_F32: PackKernels = pack_kernels!("f32");
static PACK_F16: PackKernels = pack_kernels!("f16");
static PACK_BF16: PackKernels = pack_kernels!("bf16");

fn kernels_for(dtype: DType) -> Result<&'static PackKernels> {
    match dtype {
        DType::F32 => Ok(&PACK_F32),
        DType::F16 => Ok(&PACK_F16),
        DType::BF16 => Ok(&PACK_BF16),
        DType::F64 => Err(Error::runtime("no staging copy for float64 (the generic kernel reads any strides)")),
    }
}

/// What a copy of `op` (in layout `layout`) looks like: its orientation
/// (true: K-major) and leading dimension. Misaligned operands keep their
/// orientation; operands with no unit stride, and every `kmajor` request,
/// become K-major. Rows of 1024 bytes or more are padded to a whole number
/// of 128 bytes (TMA reads a row that starts off a 128-byte boundary in
/// more L2 requests; at most 11% more memory), shorter ones to 16.
pub(crate) fn staged_shape(op: &Operand, layout: Layout, elem: i64, kmajor: bool) -> (bool, i64) {
    let k_major = kmajor || !matches!(layout, Layout::MnMajor | Layout::MnUnaligned);
    let len = if k_major { op.k.max(1) } else { op.rows.max(1) };
    let unit = if len * elem >= 1024 { 128 / elem } else { 16 / elem };
    (k_major, cdiv(len, unit) * unit)
}

/// Copies `op` (layout `layout`, as `plan::operand_layout` says) into a new
/// buffer the fast kernels can read, queued on `stream`; `kmajor`: always
/// K-major. Returns the copy as an operand and the buffer, which the caller
/// keeps alive until the launches that read it are queued (the caching
/// allocator reuses its memory only for work queued later on the stream).
pub(crate) fn stage(op: &Operand, layout: Layout, dtype: DType, kmajor: bool, device: usize, stream: usize) -> Result<(Operand, Tensor)> {
    let elem = dtype.size() as i64;
    let (k_major, ld) = staged_shape(op, layout, elem, kmajor);
    let (outer, inner) = if k_major { (op.rows, op.k) } else { (op.k, op.rows) };
    let buf = Tensor::f_empty([op.batch, outer, ld], (dtype.kind(), tch::Device::Cuda(device)))
        .map_err(|e| Error::from(e).context("staging copy allocation failed"))?;
    let dst = buf.data_ptr() as u64;
    let staged = if k_major {
        Operand { ptr: dst, sb: op.rows * ld, sr: ld, sk: 1, ..*op }
    } else {
        Operand { ptr: dst, sb: op.k * ld, sr: 1, sk: ld, ..*op }
    };
    // Source strides in the copy's orientation: (batch, outer, inner).
    let (s_outer, s_inner) = if k_major { (op.sr, op.sk) } else { (op.sk, op.sr) };
    let unit_inner = s_inner == 1 || inner == 1;
    let p = PackParams {
        src: op.ptr,
        dst,
        batch: op.batch,
        rows: outer,
        cols: inner,
        sb: op.sb,
        sr: s_outer,
        sc: if unit_inner { 1 } else { s_inner },
        ld,
    };
    let ks = kernels_for(dtype)?;
    let mut params = [cuda::arg(&p)];
    if unit_inner {
        let vec = 16 / elem;
        let grid = (cdiv(ld / vec, 256) as u32, (op.batch * outer).clamp(1, 65_535) as u32, 1);
        cuda::launch(ks.rows.function(device)?, grid, (256, 1, 1), 0, stream, &mut params)?;
    } else {
        let grid = (cdiv(outer, 32) as u32, cdiv(ld, 32).min(65_535) as u32, op.batch.clamp(1, 65_535) as u32);
        cuda::launch(ks.gather.function(device)?, grid, (32, 8, 1), 0, stream, &mut params)?;
    }
    Ok((staged, buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_shapes() {
        let op = Operand { ptr: 256, batch: 1, rows: 4096, k: 4095, sb: 0, sr: 4095, sk: 1 };
        assert_eq!(staged_shape(&op, Layout::KUnaligned, 2, false), (true, 4096));
        // A row-major b with 4095 columns: n-contiguous rows padded to 4096.
        let op = Operand { ptr: 256, batch: 1, rows: 4095, k: 4096, sb: 0, sr: 1, sk: 4095 };
        assert_eq!(staged_shape(&op, Layout::MnUnaligned, 2, false), (false, 4096));
        assert_eq!(staged_shape(&op, Layout::MnUnaligned, 4, true), (true, 4096));
        // TF32's register-A kernel reads such a b N-contiguous (sm90.rs `try_tf32`).
        assert_eq!(staged_shape(&op, Layout::MnUnaligned, 4, false), (false, 4096));
        let op = Operand { ptr: 256, batch: 2, rows: 5, k: 3, sb: 100, sr: 20, sk: 2 };
        assert_eq!(staged_shape(&op, Layout::Strided, 2, false), (true, 8));
        assert_eq!(staged_shape(&op, Layout::Strided, 4, false), (true, 4));
        // Rows of 1024 bytes and more: whole 128 bytes (a vocabulary of
        // 32001 as K, bf16: 32064, not 32008).
        let op = Operand { ptr: 256, batch: 1, rows: 2048, k: 32001, sb: 0, sr: 32001, sk: 1 };
        assert_eq!(staged_shape(&op, Layout::KUnaligned, 2, false), (true, 32064));
        assert_eq!(staged_shape(&op, Layout::KUnaligned, 4, true), (true, 32032));
        let op = Operand { ptr: 256, batch: 1, rows: 100, k: 70, sb: 0, sr: 1, sk: 101 };
        assert_eq!(staged_shape(&op, Layout::MnUnaligned, 2, false), (false, 104));
        let op = Operand { rows: 600, sk: 601, ..op };
        assert_eq!(staged_shape(&op, Layout::MnUnaligned, 2, false), (false, 640));
    }
}
