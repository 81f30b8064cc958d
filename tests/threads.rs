//! Many Rust threads calling every op at once (CUDA too when present): right
//! answers, no deadlock, no crash; first use races on module loading.

use anyhow::Result;
use std::sync::{Arc, Barrier};
use tch::{Device, Kind, Tensor};

fn rel(out: &Tensor, reference: &Tensor) -> f64 {
    let r = reference.to_kind(Kind::Double);
    (out.to_kind(Kind::Double) - &r).abs().max().double_value(&[]) / r.abs().max().double_value(&[]).max(1.0)
}

fn exercise(device: Device) -> Result<()> {
    let opts = (Kind::Float, device);
    let a = Tensor::randn([17, 33], opts);
    let b = Tensor::randn([33, 9], opts);
    let w = Tensor::randn([33], opts);
    assert!(rel(&myns::matmul(&a, &b)?, &a.mm(&b)) < 1e-5);
    assert!(rel(&myns::add(&a, &a)?, &(&a + &a)) < 1e-6);
    assert!(rel(&myns::softmax(&a, -1)?, &a.softmax(-1, Kind::Float)) < 1e-5);
    assert!(rel(&myns::scale(&a, 3.0)?, &(&a * 3.0)) < 1e-6);
    let rms = &a * (a.square().mean_dim(-1, true, Kind::Float) + 1e-6).rsqrt() * &w;
    assert!(rel(&myns::rms_norm(&a, &w, 1e-6)?, &rms) < 1e-5);
    let x = Tensor::randn([5, 8], opts);
    let (xa, xb) = (x.narrow(1, 0, 4), x.narrow(1, 4, 4));
    assert!(rel(&myns::silu_and_mul(&x)?, &(xa.silu() * xb)) < 1e-5);
    Ok(())
}

fn run_threads(device: Device) {
    let n = 8;
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || -> Result<()> {
                barrier.wait();
                for _ in 0..20 {
                    exercise(device)?;
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a thread panicked").expect("an op failed");
    }
}

#[test]
fn threads_on_cpu() {
    run_threads(Device::Cpu);
}

#[test]
fn threads_on_cuda() {
    if tch::Cuda::is_available() {
        run_threads(Device::Cuda(0));
    }
}
