//! A program using myns from another crate (see build.rs). Run by
//! `make test-rust` with LD_LIBRARY_PATH unset: it starts at all only if the
//! run path to libtorch works. It also checks that libtorch_cuda is loaded
//! (myns keeps it linked), without which torch would see no GPU, and runs on
//! CUDA when there is one.

use anyhow::{ensure, Result};
use tch::{Device, Kind, Tensor};

fn main() -> Result<()> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    ensure!(maps.contains("libtorch_cuda.so"), "libtorch_cuda.so is not loaded: torch would see no CUDA");

    let device = Device::cuda_if_available();
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).view([2, 2]).to_device(device);
    let b = Tensor::from_slice(&[5.0f32, 6.0, 7.0, 8.0]).view([2, 2]).to_device(device);
    let c = myns::add(&myns::matmul(&a, &b)?, &a)?;
    let got = Vec::<f32>::try_from(&c.to_device(Device::Cpu).view([-1]))?;
    ensure!(got == [20.0, 24.0, 46.0, 54.0], "unexpected result {got:?}");

    let x = Tensor::ones([3, 2], (Kind::Float, device)).set_requires_grad(true);
    myns::matmul(&x, &b)?.sum(Kind::Float).backward();
    ensure!(x.grad().size() == [3, 2], "no gradient");

    println!(
        "myns-downstream: ok on {device:?} ({} myns ops, {} CUDA devices)",
        myns::op_names().count(),
        tch::Cuda::device_count()
    );
    Ok(())
}
