//! The Rust API on CPU (and CUDA when present; required under
//! MYNS_REQUIRE_CUDA=1): every element against a float64 reference within
//! its bound (tests/common/bounds.rs), autograd through the dispatcher, and
//! errors that name op and argument.

use anyhow::Result;
use tch::{Device, Kind, Tensor};

#[path = "common/bounds.rs"]
mod bounds;

const KINDS: [Kind; 4] = [Kind::Float, Kind::Double, Kind::Half, Kind::BFloat16];

fn devices(test: &str) -> Vec<Device> {
    let mut d = vec![Device::Cpu];
    d.extend(bounds::cuda_or_skip(test));
    d
}

fn f64_of(t: &Tensor) -> Tensor {
    t.to_kind(Kind::Double)
}

#[test]
fn add_matches_tch() -> Result<()> {
    tch::manual_seed(0);
    for device in devices("add_matches_tch") {
        for kind in KINDS {
            for shape in [vec![], vec![0], vec![1], vec![7], vec![3, 5, 2]] {
                let a = Tensor::randn(shape.as_slice(), (kind, device));
                let b = Tensor::randn(shape.as_slice(), (kind, device));
                let out = myns::add(&a, &b)?;
                assert_eq!(out.size(), a.size());
                assert_eq!(out.kind(), kind);
                let reference = f64_of(&a) + f64_of(&b);
                bounds::assert_within(&out, &reference, &bounds::add(kind, &reference), &format!("add {kind:?} {shape:?} {device:?}"));
            }
            // Non-contiguous input.
            let a = Tensor::randn([4, 6], (kind, device)).tr();
            let b = Tensor::randn([6, 4], (kind, device));
            let reference = f64_of(&a) + f64_of(&b);
            bounds::assert_within(&myns::add(&a, &b)?, &reference, &bounds::add(kind, &reference), "add, transposed");
        }
    }
    Ok(())
}

#[test]
fn matmul_matches_tch() -> Result<()> {
    tch::manual_seed(1);
    for device in devices("matmul_matches_tch") {
        for kind in KINDS {
            for (m, k, n) in [(0, 3, 2), (2, 0, 3), (1, 1, 1), (5, 7, 3), (33, 17, 65), (64, 300, 48)] {
                let a = Tensor::randn([m, k], (kind, device));
                let b = Tensor::randn([k, n], (kind, device));
                let out = myns::matmul(&a, &b)?;
                assert_eq!(out.size(), vec![m, n]);
                let reference = f64_of(&a).mm(&f64_of(&b));
                let what = format!("matmul {kind:?} {m}x{k}x{n} {device:?}");
                bounds::assert_within(&out, &reference, &bounds::matmul(&a, &b, &reference), &what);
            }
            // Transposed views, no copy needed.
            let a = Tensor::randn([9, 4], (kind, device)).tr();
            let b = Tensor::randn([5, 9], (kind, device)).tr();
            let reference = f64_of(&a).mm(&f64_of(&b));
            bounds::assert_within(&myns::matmul(&a, &b)?, &reference, &bounds::matmul(&a, &b, &reference), "matmul, transposed");
        }
    }
    Ok(())
}

/// The float32 check must reject a product that silently used TF32 (operands
/// rounded to 10 mantissa bits) while passing myns's own.
#[test]
fn float32_matmul_check_rejects_tf32() -> Result<()> {
    tch::manual_seed(2);
    for device in devices("float32_matmul_check_rejects_tf32") {
        for (m, k, n) in [(33, 17, 65), (64, 300, 48), (5, 7, 3)] {
            let a = Tensor::randn([m, k], (Kind::Float, device));
            let b = Tensor::randn([k, n], (Kind::Float, device));
            let reference = f64_of(&a).mm(&f64_of(&b));
            let bound = bounds::matmul(&a, &b, &reference);
            let tf32 = f64_of(&bounds::to_tf32(&a)).mm(&f64_of(&bounds::to_tf32(&b))).to_kind(Kind::Float);
            assert!(!bounds::within(&tf32, &reference, &bound), "a TF32 product passed the float32 bound ({m}x{k}x{n})");
            bounds::assert_within(&myns::matmul(&a, &b)?, &reference, &bound, "myns::matmul float32");
        }
    }
    Ok(())
}

/// The row ops from Rust: each element within its bound.
#[test]
fn row_ops_match_reference() -> Result<()> {
    tch::manual_seed(3);
    for device in devices("row_ops_match_reference") {
        for kind in KINDS {
            let x = Tensor::randn([7, 130], (kind, device));
            let w = Tensor::randn([130], (kind, device));
            let xd = f64_of(&x);
            let rms = &xd * (xd.square().mean_dim(-1, true, Kind::Double) + 1e-6).rsqrt() * f64_of(&w);
            bounds::assert_within(&myns::rms_norm(&x, &w, 1e-6)?, &rms, &bounds::rms_norm(kind, 130, &rms), &format!("rms_norm {kind:?}"));
            let sm = xd.softmax(-1, Kind::Double);
            bounds::assert_within(&myns::softmax(&x, -1)?, &sm, &bounds::softmax(&x, &sm), &format!("softmax {kind:?}"));
            let (a, b) = (xd.narrow(1, 0, 65), xd.narrow(1, 65, 65));
            let silu = a.silu() * &b;
            let bound = bounds::silu_and_mul(kind, &x.narrow(1, 0, 65), &silu);
            bounds::assert_within(&myns::silu_and_mul(&x)?, &silu, &bound, &format!("silu_and_mul {kind:?}"));
            let scaled = &xd * -1.75;
            bounds::assert_within(&myns::scale(&x, -1.75)?, &scaled, &bounds::add(kind, &scaled), &format!("scale {kind:?}"));
        }
    }
    Ok(())
}

#[test]
fn autograd_through_the_dispatcher() -> Result<()> {
    let a = Tensor::randn([3, 4], (Kind::Double, Device::Cpu)).set_requires_grad(true);
    let b = Tensor::randn([4, 2], (Kind::Double, Device::Cpu)).set_requires_grad(true);
    let c = Tensor::randn([3, 2], (Kind::Double, Device::Cpu)).set_requires_grad(true);
    let loss = myns::add(&myns::matmul(&a, &b)?, &c)?.sum(Kind::Double);
    loss.backward();
    let ones = Tensor::ones([3, 2], (Kind::Double, Device::Cpu));
    let ga = ones.mm(&b.detach().tr());
    let gb = a.detach().tr().mm(&ones);
    bounds::assert_within(&a.grad(), &ga, &bounds::matmul(&ones, &b.detach().tr(), &ga), "grad a");
    bounds::assert_within(&b.grad(), &gb, &bounds::matmul(&a.detach().tr(), &ones, &gb), "grad b");
    bounds::assert_within(&c.grad(), &ones, &bounds::add(Kind::Double, &ones), "grad c");
    Ok(())
}

/// A gated op's gradient is written over its saved input when autograd
/// holds that input alone (here: a Rust program drops its handle) and not
/// while the program still holds it; the gradients agree either way.
#[test]
fn gated_gradient_over_an_input_autograd_holds_alone() -> Result<()> {
    for device in devices("gated_gradient_over_an_input_autograd_holds_alone") {
        tch::manual_seed(0);
        let opts = (Kind::Double, device);
        let x = Tensor::randn([6, 5], opts).set_requires_grad(true);
        let w = Tensor::randn([5, 16], opts).set_requires_grad(true);
        let g = Tensor::randn([6, 8], opts);
        let grads = |loss: Tensor| Tensor::run_backward(&[loss], &[&x, &w], false, false);
        // The gradients, and whether the input the program kept (if any) is unchanged.
        let step = |keep: bool| -> Result<(Vec<Tensor>, bool)> {
            let h = x.matmul(&w);
            let kept = keep.then(|| (h.shallow_clone(), h.detach().copy()));
            let y = myns::silu_and_mul(&h)?;
            drop(h);
            let grads = grads((y * &g).sum(Kind::Double));
            Ok((grads, kept.is_none_or(|(h, before)| h.equal(&before))))
        };
        let (owned, _) = step(false)?;
        let (held, unchanged) = step(true)?;
        assert!(unchanged, "{device:?}: the input the program holds was written over");
        // Reference: silu(a) * b in float64 through tch's autograd.
        let ab = x.matmul(&w).chunk(2, -1);
        let want = grads((ab[0].silu() * &ab[1] * &g).sum(Kind::Double));
        for (got, what) in [(&owned, "dropped"), (&held, "held")] {
            for (a, b) in got.iter().zip(&want) {
                assert!(a.allclose(b, 1e-12, 1e-12, false), "{device:?}: gradients with the input {what}");
            }
        }
    }
    Ok(())
}

fn err_text<T: std::fmt::Debug>(r: myns::Result<T>) -> String {
    r.expect_err("expected an error").to_string()
}

fn err_kind<T: std::fmt::Debug>(r: myns::Result<T>) -> myns::ErrorKind {
    r.expect_err("expected an error").kind()
}

#[test]
fn errors_name_op_and_argument() {
    let cpu = |s: &[i64], k: Kind| Tensor::ones(s, (k, Device::Cpu));
    let e = err_text(myns::matmul(&cpu(&[2, 3], Kind::Float), &cpu(&[2, 3], Kind::Float)));
    assert!(e.contains("myns::matmul") && e.contains("`b`"), "{e}");
    let e = err_text(myns::matmul(&cpu(&[2, 3, 1], Kind::Float), &cpu(&[3, 2], Kind::Float)));
    assert!(e.contains("myns::matmul") && e.contains("`a`") && e.contains("2-D"), "{e}");
    let e = err_text(myns::matmul(&cpu(&[2, 2], Kind::Float), &cpu(&[2, 2], Kind::Double)));
    assert!(e.contains("`b`") && e.contains("torch.float64"), "{e}");
    let e = err_text(myns::add(&cpu(&[2], Kind::Int8), &cpu(&[2], Kind::Int8)));
    assert!(e.contains("myns::add") && e.contains("unsupported dtype torch.int8"), "{e}");
    let e = err_text(myns::add(&cpu(&[2], Kind::Bool), &cpu(&[2], Kind::Bool)));
    assert!(e.contains("torch.bool"), "{e}");
    let e = err_text(myns::add(&cpu(&[2, 3], Kind::Float), &cpu(&[3, 2], Kind::Float)));
    assert!(e.contains("myns::add") && e.contains("`b`") && e.contains("shape"), "{e}");
    // No C++ backtrace leaks into the message.
    assert!(!e.contains("Exception raised from"), "{e}");
    // The process carries on.
    assert!(myns::add(&cpu(&[2], Kind::Float), &cpu(&[2], Kind::Float)).is_ok());
}

/// Each kind of error is what PyTorch raises for the same situation.
#[test]
fn errors_keep_their_kind() -> Result<()> {
    use myns::ErrorKind;
    let cpu = |s: &[i64], k: Kind| Tensor::ones(s, (k, Device::Cpu));
    let x = cpu(&[2, 3], Kind::Float);
    assert_eq!(err_kind(myns::softmax(&x, 5)), ErrorKind::Index);
    assert_eq!(err_kind(myns::add(&cpu(&[2], Kind::Bool), &cpu(&[2], Kind::Bool))), ErrorKind::NotImplemented);
    assert_eq!(err_kind(myns::rms_norm(&x, &cpu(&[3], Kind::Float), -1.0)), ErrorKind::Value);
    assert_eq!(err_kind(myns::matmul(&x, &x)), ErrorKind::Runtime);
    let mut i = cpu(&[2], Kind::Int);
    assert_eq!(err_kind(myns::scale_(&mut i, 2.5)), ErrorKind::Runtime);
    myns::scale_(&mut i, 2)?;
    assert_eq!(Vec::<i32>::try_from(&i)?, vec![2, 2]);
    Ok(())
}

#[test]
fn every_op_is_registered() {
    let names: Vec<_> = myns::op_names().collect();
    assert!(names.contains(&"add") && names.contains(&"matmul"));
}
