//! Elementwise error bounds for the Rust tests (`#[path]`-included by
//! tests/rust_api.rs and tests/threads.rs): the same formulas as
//! tests/python/bounds.py, whose docstrings derive them. Each output element
//! must be within `bound` of a float64 reference; no normwise error, no
//! `max(|ref|, 1)` scale.
#![allow(dead_code)]

use tch::{Device, Kind, Tensor};

/// Multiplier of `sqrt(n) u` for an `n`-term sum (Higham & Mary's
/// probabilistic bound; tests/python/bounds.py explains the choice).
pub const LAMBDA: f64 = 4.0;
const U64: f64 = 1.0 / 9007199254740992.0; // 2^-53

/// Unit roundoff of `kind`.
pub fn unit(kind: Kind) -> f64 {
    match kind {
        Kind::Double => U64,
        Kind::Float => 2f64.powi(-24),
        Kind::Half => 2f64.powi(-11),
        Kind::BFloat16 => 2f64.powi(-8),
        k => panic!("no bound for {k:?}"),
    }
}

/// Output rounding plus the float64 reference's own.
pub fn u_out(kind: Kind) -> f64 {
    unit(kind) + U64
}

/// The accumulation type's roundoff (float64 for float64, else float32) plus the reference's.
pub fn u_acc(kind: Kind) -> f64 {
    if kind == Kind::Double { 2.0 * U64 } else { 2f64.powi(-24) + U64 }
}

/// Absolute term for underflow: float32's smallest normal (kernels may flush
/// subnormals), one float16 subnormal step.
pub fn floor(kind: Kind) -> f64 {
    match kind {
        Kind::Double => 2f64.powi(-1022),
        Kind::Half => 2f64.powi(-24),
        _ => 2f64.powi(-126),
    }
}

fn sum_term(n: i64) -> f64 {
    LAMBDA * (n.max(1) as f64).sqrt()
}

fn d(t: &Tensor) -> Tensor {
    t.to_kind(Kind::Double)
}

/// `a @ b`: `u_out |ref| + (LAMBDA sqrt(k) + 4) u_acc (|a| @ |b|) + k floor_acc + floor`.
/// A TF32 product of float32 operands (10 mantissa bits) is off by about
/// `2^-11 sqrt(k)`: far outside this bound.
pub fn matmul(a: &Tensor, b: &Tensor, reference: &Tensor) -> Tensor {
    let kind = a.kind();
    let k = *a.size().last().unwrap();
    let mag = d(a).abs().matmul(&d(b).abs());
    reference.abs() * u_out(kind) + mag * ((sum_term(k) + 4.0) * u_acc(kind)) + (k as f64 * floor(Kind::Float) + floor(kind))
}

/// `a + b`, `x * alpha`: one rounding in the accumulation type, one to the output.
pub fn add(kind: Kind, reference: &Tensor) -> Tensor {
    reference.abs() * (u_out(kind) + 2.0 * u_acc(kind)) + floor(kind)
}

/// rms_norm over rows of `n`: `(u_out + (LAMBDA sqrt(n) / 2 + 8) u_acc) |ref| + floor`.
pub fn rms_norm(kind: Kind, n: i64, reference: &Tensor) -> Tensor {
    reference.abs() * (u_out(kind) + (sum_term(n) / 2.0 + 8.0) * u_acc(kind)) + floor(kind)
}

/// silu(a) * b: `(u_out + (2.5 |a| + 12) u_acc) |ref| + floor` (exp's argument rounding).
pub fn silu_and_mul(kind: Kind, a: &Tensor, reference: &Tensor) -> Tensor {
    let rel = d(a).abs() * (2.5 * u_acc(kind)) + (u_out(kind) + 12.0 * u_acc(kind));
    reference.abs() * rel + floor(kind)
}

/// softmax over the last dimension, relative to each output: `u_out + (12 +
/// LAMBDA sqrt(n) + 4 log2 n + 4 |x_j - max| + 4 W) u_acc`, `W = sum_k y_k (max - x_k)`.
pub fn softmax(x: &Tensor, reference: &Tensor) -> Tensor {
    let kind = x.kind();
    let n = *x.size().last().unwrap();
    let xd = d(x);
    let dist = xd.amax(-1, true) - &xd;
    let w = (reference * &dist).sum_dim_intlist(-1, true, Kind::Double);
    let k = 12.0 + sum_term(n) + 4.0 * (n.max(2) as f64).log2();
    let rel = (dist + w) * (4.0 * u_acc(kind)) + (u_out(kind) + k * u_acc(kind));
    reference.abs() * rel + floor(kind)
}

/// Panics unless every element of `out` is within `bound` of `reference`
/// (NaN only where the reference is NaN); says where and by how much.
pub fn assert_within(out: &Tensor, reference: &Tensor, bound: &Tensor, what: &str) {
    assert_eq!(out.size(), reference.size(), "{what}: shape");
    let (o, r, b) = (d(out).to_device(Device::Cpu), d(reference).to_device(Device::Cpu), d(bound).to_device(Device::Cpu));
    let err = (&o - &r).abs();
    let bad = err.gt_tensor(&b).logical_or(&o.isnan().ne_tensor(&r.isnan()));
    let nbad = bad.sum(Kind::Int64).int64_value(&[]);
    if nbad > 0 {
        let i = bad.reshape([-1]).argmax(0, false).int64_value(&[]);
        let at = |t: &Tensor| t.reshape([-1]).double_value(&[i]);
        panic!(
            "{what}: {nbad} of {} elements outside the bound; flat index {i}: got {:.9e}, expected {:.9e}, |error| {:.3e} > bound {:.3e}",
            r.numel(),
            at(&o),
            at(&r),
            at(&err),
            at(&b)
        );
    }
}

/// Whether every element is within its bound (for tests that a wrong result is rejected).
pub fn within(out: &Tensor, reference: &Tensor, bound: &Tensor) -> bool {
    let err = (d(out) - d(reference)).abs();
    err.le_tensor(bound).all().int64_value(&[]) != 0
}

/// float32 rounded to TF32 (10 mantissa bits, to nearest even), as TF32
/// tensor cores would see it.
pub fn to_tf32(t: &Tensor) -> Tensor {
    let v = Vec::<f32>::try_from(&t.to_device(Device::Cpu).contiguous().reshape([-1])).unwrap();
    let r: Vec<f32> = v
        .iter()
        .map(|x| {
            let b = x.to_bits();
            f32::from_bits(b.wrapping_add(0xFFF + ((b >> 13) & 1)) & !0x1FFF)
        })
        .collect();
    Tensor::from_slice(&r).reshape(t.size().as_slice()).to_device(t.device())
}

/// CUDA device 0 if present; with `MYNS_REQUIRE_CUDA=1` (make test-gpu) its
/// absence is a failure, otherwise the caller skips and says so.
pub fn cuda_or_skip(test: &str) -> Option<Device> {
    if tch::Cuda::is_available() {
        return Some(Device::Cuda(0));
    }
    let required = std::env::var("MYNS_REQUIRE_CUDA").map(|v| !v.is_empty() && v != "0").unwrap_or(false);
    assert!(!required, "{test}: MYNS_REQUIRE_CUDA=1 but no CUDA device is visible");
    eprintln!("{test}: skipped on CUDA (no CUDA device)");
    None
}
