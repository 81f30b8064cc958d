//! The Rust API on CPU (and CUDA when present): results against tch's own ops,
//! autograd through the dispatcher, and errors that name op and argument.

use anyhow::Result;
use tch::{Device, Kind, Tensor};

const KINDS: [Kind; 4] = [Kind::Float, Kind::Double, Kind::Half, Kind::BFloat16];

fn devices() -> Vec<Device> {
    let mut d = vec![Device::Cpu];
    if tch::Cuda::is_available() {
        d.push(Device::Cuda(0));
    }
    d
}

fn tol(kind: Kind) -> f64 {
    match kind {
        Kind::Double => 1e-10,
        Kind::Float => 1e-4,
        Kind::Half => 1e-2,
        _ => 5e-2,
    }
}

/// Max relative error of `out` against a float64 reference.
fn rel_err(out: &Tensor, reference: &Tensor) -> f64 {
    let diff = (out.to_kind(Kind::Double) - reference).abs().max().double_value(&[]);
    let scale = reference.abs().max().double_value(&[]).max(1.0);
    diff / scale
}

#[test]
fn add_matches_tch() -> Result<()> {
    tch::manual_seed(0);
    for device in devices() {
        for kind in KINDS {
            for shape in [vec![], vec![0], vec![1], vec![7], vec![3, 5, 2]] {
                let a = Tensor::randn(shape.as_slice(), (kind, device));
                let b = Tensor::randn(shape.as_slice(), (kind, device));
                let out = myns::add(&a, &b)?;
                assert_eq!(out.size(), a.size());
                assert_eq!(out.kind(), kind);
                let reference = a.to_kind(Kind::Double) + b.to_kind(Kind::Double);
                if out.numel() > 0 {
                    assert!(rel_err(&out, &reference) <= tol(kind), "{kind:?} {shape:?} {device:?}");
                }
            }
            // Non-contiguous input.
            let a = Tensor::randn([4, 6], (kind, device)).tr();
            let b = Tensor::randn([6, 4], (kind, device));
            let reference = a.to_kind(Kind::Double) + b.to_kind(Kind::Double);
            assert!(rel_err(&myns::add(&a, &b)?, &reference) <= tol(kind));
        }
    }
    Ok(())
}

#[test]
fn matmul_matches_tch() -> Result<()> {
    tch::manual_seed(1);
    for device in devices() {
        for kind in KINDS {
            for (m, k, n) in [(0, 3, 2), (2, 0, 3), (1, 1, 1), (5, 7, 3), (33, 17, 65)] {
                let a = Tensor::randn([m, k], (kind, device));
                let b = Tensor::randn([k, n], (kind, device));
                let out = myns::matmul(&a, &b)?;
                assert_eq!(out.size(), vec![m, n]);
                let reference = a.to_kind(Kind::Double).mm(&b.to_kind(Kind::Double));
                if out.numel() > 0 {
                    assert!(rel_err(&out, &reference) <= tol(kind) * (k as f64).sqrt().max(1.0));
                }
            }
            // Transposed views, no copy needed.
            let a = Tensor::randn([9, 4], (kind, device)).tr();
            let b = Tensor::randn([5, 9], (kind, device)).tr();
            let reference = a.to_kind(Kind::Double).mm(&b.to_kind(Kind::Double));
            assert!(rel_err(&myns::matmul(&a, &b)?, &reference) <= tol(kind) * 3.0);
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
    assert!(rel_err(&a.grad(), &ga) < 1e-12);
    assert!(rel_err(&b.grad(), &gb) < 1e-12);
    assert!(rel_err(&c.grad(), &ones) < 1e-12);
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
