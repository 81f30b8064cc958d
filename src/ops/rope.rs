//! `rope(Tensor q, Tensor k, Tensor cos, Tensor sin) -> (Tensor, Tensor)`:
//! rotary position embedding in HuggingFace's convention.

use crate::cuda::{self, Kernel};
use crate::op::{op, Backward, Cuda, TensorArg};
use crate::ops::Ops;
use crate::types::{DType, Result};
use tch::Tensor;

op! {
    /// Rotary position embedding as transformers' `apply_rotary_pos_emb(q,
    /// k, cos, sin)` (`rotate_half` convention): `q * cos + rotate_half(q) *
    /// sin` and the same for `k`, with `q` `[B, Hq, S, D]`, `k` `[B, Hk, S,
    /// D]` (any strides, e.g. HF's transposed views; each output keeps its
    /// input's layout) and `cos`, `sin` `[B, S, D]` (or `[1, S, D]`,
    /// broadcast over the batch), all of one dtype, computed in float32 for
    /// half types. Differentiable in all four.
    ///
    /// ```
    /// use tch::{Kind, Tensor};
    /// let q = Tensor::from_slice(&[1.0f32, 2.0]).view([1, 1, 1, 2]);
    /// let (cos, sin) = (Tensor::zeros([1, 1, 2], (Kind::Float, tch::Device::Cpu)), Tensor::ones([1, 1, 2], (Kind::Float, tch::Device::Cpu)));
    /// let (rq, _) = myns::rope(&q, &q, &cos, &sin)?; // rotate_half: [-2, 1]
    /// assert_eq!(Vec::<f32>::try_from(&rq.view([-1]))?, vec![-2.0, 1.0]);
    /// # Ok::<(), anyhow::Error>(())
    /// ```
    fn rope(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> (Tensor, Tensor);
    args: Rope;
    cpu: cpu;
    cuda: cuda;
    meta: meta;
    backward: backward;
    // q and k only for the gradients of cos and sin (a model's are constants).
    backward_reads: [cos, sin, q if cos | sin, k if cos | sin];
}

pub(crate) const OPS: Ops = &[Rope::spec];

static KERNELS: crate::cuda::DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::ROPE, "rope_vec");
static SCALAR_KERNELS: crate::cuda::DTypeKernels = crate::cuda::dtype_kernels!(crate::kernels::ROPE, "rope_scalar");

fn check(a: &Rope) -> Result<DType> {
    let dtype = a.q.dtype()?;
    for t in [&a.k, &a.cos, &a.sin] {
        a.q.expect_same_dtype(t)?;
    }
    a.q.expect_dim(4)?;
    a.k.expect_dim(4)?;
    a.cos.expect_dim(3)?;
    a.sin.expect_dim(3)?;
    a.cos.expect_same_shape(&a.sin)?;
    if let (Some(q), Some(k), Some(c)) = (a.q.sizes(), a.k.sizes(), a.cos.sizes()) {
        let bad = |t: &TensorArg, what: String| Err(t.error(what));
        if q[3] % 2 != 0 {
            return bad(&a.q, format!("must have an even last dimension (the rotated pairs), got shape {q:?}"));
        }
        if k[0] != q[0] || k[2] != q[2] || k[3] != q[3] {
            return bad(&a.k, format!("has shape {k:?}; it must be [B, Hk, S, D] with B, S, D as `q`'s {q:?}"));
        }
        if (c[0] != q[0] && c[0] != 1) || c[1] != q[2] || c[2] != q[3] {
            return bad(&a.cos, format!("has shape {c:?}; it must be [B or 1, S, D] for `q` of shape {q:?}"));
        }
    }
    Ok(dtype)
}

fn meta(a: &Rope) -> Result<(Tensor, Tensor)> {
    check(a)?;
    Ok((a.q.tensor().f_empty_like()?, a.k.tensor().f_empty_like()?))
}

/// `rotate_half(x) = cat(-x2, x1)` on the last dimension.
fn rotate_half(x: &Tensor) -> Result<Tensor> {
    let h = x.f_chunk(2, -1)?;
    Ok(Tensor::f_cat(&[h[1].f_neg()?, h[0].shallow_clone()], -1)?)
}

fn cpu(a: &Rope) -> Result<(Tensor, Tensor)> {
    let dtype = check(a)?;
    let acc = dtype.acc().kind();
    let (c, s) = (a.cos.tensor().f_to_kind(acc)?.f_unsqueeze(1)?, a.sin.tensor().f_to_kind(acc)?.f_unsqueeze(1)?);
    let one = |x: &TensorArg| -> Result<Tensor> {
        let t = x.tensor();
        let xf = t.f_to_kind(acc)?;
        let y = xf.f_mul(&c)?.f_add(&rotate_half(&xf)?.f_mul(&s)?)?;
        // The input's layout, as the Meta kernel says.
        let mut out = t.f_empty_like()?;
        out.f_copy_(&y)?;
        Ok(out)
    };
    Ok((one(&a.q)?, one(&a.k)?))
}

/// kernels/rope.cu `RopeParams`, field for field.
#[repr(C)]
struct RopeParams {
    x: [u64; 2],
    out: [u64; 2],
    cos: u64,
    sin: u64,
    heads: [i64; 2],
    batch: i64,
    seq: i64,
    dim: i64,
    xs: [[i64; 4]; 2],
    os: [[i64; 4]; 2],
    cs: [i64; 3],
    groups: i64,
}

fn strides4(t: &Tensor) -> [i64; 4] {
    let s = t.stride();
    [s[0], s[1], s[2], s[3]]
}

fn cuda(a: &Rope, cx: &Cuda) -> Result<(Tensor, Tensor)> {
    let dtype = check(a)?;
    let (q, k) = (a.q.tensor(), a.k.tensor());
    let (oq, ok) = (q.f_empty_like()?, k.f_empty_like()?);
    let (sq, sk, sc) = (a.q.sizes_real()?, a.k.sizes_real()?, a.cos.sizes_real()?);
    let (batch, seq, dim) = (sq[0], sq[2], sq[3]);
    let rows = batch * (sq[1] + sk[1]) * seq;
    if rows == 0 || dim == 0 {
        return Ok((oq, ok));
    }
    // cos and sin with the same strides (one set of offsets for both).
    let (cos, sin) = (a.cos.tensor().f_contiguous()?, a.sin.tensor().f_contiguous()?);
    let cb = if sc[0] == 1 { 0 } else { seq * dim };
    let mut p = RopeParams {
        x: [a.q.data_ptr() as u64, a.k.data_ptr() as u64],
        out: [oq.data_ptr() as u64, ok.data_ptr() as u64],
        cos: cos.data_ptr() as u64,
        sin: sin.data_ptr() as u64,
        heads: [sq[1], sk[1]],
        batch,
        seq,
        dim,
        xs: [strides4(&q), strides4(&k)],
        os: [strides4(&oq), strides4(&ok)],
        cs: [cb, dim, 1],
        groups: 0, // set with the launch shape below
    };
    // 16-byte packs when every row starts 16-byte aligned, the last strides
    // are 1 and each half-row is whole packs.
    let n = 16 / dtype.size() as i64;
    let bytes = |v: i64| (v * dtype.size() as i64) % 16 == 0;
    let aligned = |ptr: u64, st: &[i64]| ptr.is_multiple_of(16) && st[..st.len() - 1].iter().all(|&s| bytes(s)) && st[st.len() - 1] == 1;
    let vec = (dim / 2) % n == 0
        && (0..2).all(|t| aligned(p.x[t], &p.xs[t]) && aligned(p.out[t], &p.os[t]))
        && aligned(p.cos, &p.cs)
        && aligned(p.sin, &p.cs);
    let (kernels, n): (&crate::cuda::DTypeKernels, i64) = if vec { (&KERNELS, n) } else { (&SCALAR_KERNELS, 1) };
    let f: &Kernel = kernels.get(dtype);
    // One thread per (token, head, pack of the first half): threads x over
    // a row's packs, y over a group of heads, z over tokens; blocks count
    // (token group, head group), the head group fastest (kernels/rope.cu).
    // Heads split evenly into groups of at most 256 / x threads (40 heads as
    // two of 20, not 32 and 8); few heads take several tokens a block.
    let pairs = dim / 2 / n;
    let bx = pairs.min(256);
    let most = (256 / bx).max(1);
    let heads = sq[1] + sk[1];
    let groups = (heads + most - 1) / most;
    let by = (heads + groups - 1) / groups;
    let bz = (most / by).clamp(1, 64);
    let tokens = batch * seq;
    p.groups = groups;
    let blocks = (tokens + bz - 1) / bz * groups;
    let packs = (pairs + bx - 1) / bx;
    // The kernel's index arithmetic is 32-bit.
    let limit = i32::MAX as i64;
    if packs > 65_535 || tokens > limit || heads > limit || blocks > limit {
        return Err(a.q.error(format!("is too large for the CUDA kernel's 32-bit indexing: {tokens} tokens x {heads} heads of width {dim}")));
    }
    let mut params = [cuda::arg(&p)];
    cuda::launch(f.function(cx.device)?, (blocks as u32, packs as u32, 1), (bx as u32, by as u32, bz as u32), 0, cx.stream, &mut params)?;
    Ok((oq, ok))
}

/// The gradient of `x c + rotate_half(x) s` with respect to x is
/// `g c + rotate_half^T(g s)`, which is rope itself with `sin` replaced by
/// `-roll(sin, D/2)`; with respect to cos it is `g x`, to sin `g
/// rotate_half(x)`, each summed over the heads (and the batch where cos was
/// broadcast).
fn backward(ctx: &Backward<Rope>) -> Result<Vec<Option<Tensor>>> {
    let a = &ctx.args;
    let (gq, gk) = (ctx.grad(0), ctx.grad(1));
    if gq.is_none() && gk.is_none() {
        return Ok(vec![None, None, None, None]);
    }
    let (q, k, cos, sin) = (a.q.tensor(), a.k.tensor(), a.cos.tensor(), a.sin.tensor());
    // q and k may be meta tensors here (not kept): a missing gradient is
    // zeros broadcast from cos (same dtype and device) to their size.
    let zeros = |t: &Tensor| cos.f_zeros_like()?.f_unsqueeze(1)?.f_expand_as(t);
    let gq = match gq {
        Some(g) => g.shallow_clone(),
        None => zeros(&q)?,
    };
    let gk = match gk {
        Some(g) => g.shallow_clone(),
        None => zeros(&k)?,
    };
    let mut grads = vec![None, None, None, None];
    if ctx.needs_grad(0) || ctx.needs_grad(1) {
        let half = sin.size()[2] / 2;
        let sin_t = sin.f_roll(&[half][..], &[-1i64][..])?.f_neg()?;
        let (dq, dk) = rope(&gq, &gk, &cos, &sin_t)?;
        grads[0] = ctx.needs_grad(0).then_some(dq);
        grads[1] = ctx.needs_grad(1).then_some(dk);
    }
    if ctx.needs_grad(2) || ctx.needs_grad(3) {
        let batch_broadcast = cos.size()[0] == 1 && q.size()[0] != 1;
        let reduce = |t: Tensor| -> Result<Tensor> {
            let t = t.f_sum_dim_intlist(&[1i64][..], false, None::<tch::Kind>)?;
            Ok(if batch_broadcast { t.f_sum_dim_intlist(&[0i64][..], true, None::<tch::Kind>)? } else { t })
        };
        if ctx.needs_grad(2) {
            grads[2] = Some(reduce(gq.f_mul(&q)?)?.f_add(&reduce(gk.f_mul(&k)?)?)?);
        }
        if ctx.needs_grad(3) {
            grads[3] = Some(reduce(gq.f_mul(&rotate_half(&q)?)?)?.f_add(&reduce(gk.f_mul(&rotate_half(&k)?)?)?)?);
        }
    }
    Ok(grads)
}

#[cfg(test)]
mod tests {
    #[test]
    fn backward_keeps_q_and_k_only_for_the_gradients_of_cos_and_sin() {
        let spec = super::Rope::spec(); // q, k, cos, sin: arguments 0..4
        for arg in [2, 3] {
            assert!(spec.backward_keeps(arg, 0b0011));
        }
        for arg in [0, 1] {
            assert!(!spec.backward_keeps(arg, 0b0011));
            assert!(spec.backward_keeps(arg, 0b0100) && spec.backward_keeps(arg, 0b1000));
        }
    }
}
