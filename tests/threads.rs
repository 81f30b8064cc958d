//! Many Rust threads calling every op at once (CUDA too when present;
//! required under MYNS_REQUIRE_CUDA=1): right answers (each element within
//! its bound of a float64 reference, tests/common/bounds.rs), no deadlock,
//! no crash; first use races on module loading.

use anyhow::Result;
use std::sync::{Arc, Barrier};
use tch::{Device, Kind, Tensor};

#[path = "common/bounds.rs"]
mod bounds;

fn exercise(device: Device) -> Result<()> {
    let opts = (Kind::Float, device);
    let f32_ = Kind::Float;
    let a = Tensor::randn([17, 33], opts);
    let b = Tensor::randn([33, 9], opts);
    let w = Tensor::randn([33], opts);
    let (ad, bd, wd) = (a.to_kind(Kind::Double), b.to_kind(Kind::Double), w.to_kind(Kind::Double));
    let mm = ad.mm(&bd);
    bounds::assert_within(&myns::matmul(&a, &b)?, &mm, &bounds::matmul(&a, &b, &mm), "matmul");
    let sum = &ad + &ad;
    bounds::assert_within(&myns::add(&a, &a)?, &sum, &bounds::add(f32_, &sum), "add");
    let sm = ad.softmax(-1, Kind::Double);
    bounds::assert_within(&myns::softmax(&a, -1)?, &sm, &bounds::softmax(&a, &sm), "softmax");
    let sc = &ad * 3.0;
    bounds::assert_within(&myns::scale(&a, 3.0)?, &sc, &bounds::add(f32_, &sc), "scale");
    let rms = &ad * (ad.square().mean_dim(-1, true, Kind::Double) + 1e-6).rsqrt() * &wd;
    bounds::assert_within(&myns::rms_norm(&a, &w, 1e-6)?, &rms, &bounds::rms_norm(f32_, 33, &rms), "rms_norm");
    let x = Tensor::randn([5, 8], opts);
    let xd = x.to_kind(Kind::Double);
    let silu = xd.narrow(1, 0, 4).silu() * xd.narrow(1, 4, 4);
    bounds::assert_within(&myns::silu_and_mul(&x)?, &silu, &bounds::silu_and_mul(f32_, &x.narrow(1, 0, 4), &silu), "silu_and_mul");
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
    if let Some(device) = bounds::cuda_or_skip("threads_on_cuda") {
        run_threads(device);
    }
}
