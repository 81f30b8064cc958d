//! Multiplies matrices with myns from Rust (no Python): on CUDA when a GPU is
//! present, else on the CPU; checks the result against tch's own matmul and
//! takes a gradient through the dispatcher.
//!
//! Run: `cargo run --release --example matmul`

use anyhow::Result;
use tch::{Device, Kind, Tensor};

fn main() -> Result<()> {
    let device = Device::cuda_if_available();
    println!("myns {} on {device:?}, ops: {:?}", env!("CARGO_PKG_VERSION"), myns::op_names().collect::<Vec<_>>());
    for kind in [Kind::Float, Kind::Double, Kind::Half, Kind::BFloat16] {
        let a = Tensor::randn([129, 257], (kind, device));
        let b = Tensor::randn([257, 65], (kind, device));
        let out = myns::matmul(&a, &b)?;
        let reference = a.to_kind(Kind::Double).mm(&b.to_kind(Kind::Double));
        let err = (out.to_kind(Kind::Double) - &reference).norm().double_value(&[]) / reference.norm().double_value(&[]);
        println!("matmul {kind:?}: shape {:?}, relative error {err:.2e}", out.size());
    }
    let a = Tensor::randn([4, 3], (Kind::Float, device)).set_requires_grad(true);
    let b = Tensor::randn([3, 2], (Kind::Float, device));
    myns::add(&myns::matmul(&a, &b)?, &myns::matmul(&a, &b)?)?.sum(Kind::Float).backward();
    println!("grad of sum(a@b + a@b) wrt a: {:?}", a.grad().size());
    Ok(())
}
