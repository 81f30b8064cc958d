//! Trains a small two-layer network with myns ops, autograd and tch's Adam:
//! the forward pass is `myns::matmul`, `myns::add` and `myns::silu_and_mul`
//! (a gated activation), all through the PyTorch dispatcher, so their
//! gradients come from myns's backward formulas; the parameters live in a
//! `tch::nn::VarStore`. Runs on CUDA when present, else
//! on the CPU; exits non-zero unless the loss falls.
//!
//! Run: `cargo run --release --example train`

use anyhow::{ensure, Result};
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};

/// `silu_and_mul(x @ w1 + b1) @ w2 + b2`, every step a myns op.
fn forward(x: &Tensor, p: &[Tensor; 4]) -> Result<Tensor> {
    let [w1, b1, w2, b2] = p;
    let n = x.size()[0];
    // [n, 2 * hidden] -> silu(first half) * second half: [n, hidden]
    let h = myns::silu_and_mul(&myns::add(&myns::matmul(x, w1)?, &b1.expand([n, w1.size()[1]], false))?)?;
    Ok(myns::add(&myns::matmul(&h, w2)?, &b2.expand([n, w2.size()[1]], false))?)
}

fn main() -> Result<()> {
    tch::manual_seed(0);
    let device = Device::cuda_if_available();
    let (inputs, hidden, outputs, batch) = (8, 32, 4, 256);

    // A fixed random "teacher" function to learn: y = sin(x @ t) .
    let teacher = Tensor::randn([inputs, outputs], (Kind::Float, device));
    let x = Tensor::randn([batch, inputs], (Kind::Float, device));
    let y = x.mm(&teacher).sin();

    let vs = nn::VarStore::new(device);
    let root = vs.root();
    let params = [
        root.randn("w1", &[inputs, 2 * hidden], 0.0, (1.0 / inputs as f64).sqrt()),
        root.zeros("b1", &[2 * hidden]),
        root.randn("w2", &[hidden, outputs], 0.0, (1.0 / hidden as f64).sqrt()),
        root.zeros("b2", &[outputs]),
    ];
    let mut opt = nn::Adam::default().build(&vs, 3e-2)?;

    println!("training on {device:?} with myns::matmul, myns::add and myns::silu_and_mul");
    let mut losses = Vec::new();
    for step in 0..=300 {
        let loss = (forward(&x, &params)? - &y).square().mean(Kind::Float);
        opt.backward_step(&loss);
        let value = loss.double_value(&[]);
        if step % 30 == 0 {
            println!("step {step:3}  loss {value:.5}");
        }
        losses.push(value);
    }
    let (first, last) = (losses[0], *losses.last().unwrap());
    ensure!(last.is_finite() && last < 0.5 * first, "loss did not fall: {first:.5} -> {last:.5}");
    println!("loss fell from {first:.5} to {last:.5}");
    Ok(())
}
