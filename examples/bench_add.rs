//! Per-call cost from Rust (no Python): `myns::add` (through the PyTorch
//! dispatcher, autograd kernel included) against tch's own `Tensor::f_add`
//! and `&a + &b` on 1024-element float32 tensors, on CUDA when present.
//!
//! Each variant runs `calls` back-to-back calls with one synchronize at the
//! end (host time per call); variants are interleaved over `rounds` rounds,
//! order rotated each round, and the ratio is the median of per-round
//! ratios. Prints a table, then the JSON (or writes it to the path given).
//!
//! Run: `cargo run --release --example bench_add [-- [--quick] [--cpu] [out.json]]`

use anyhow::Result;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

type Variant<'a> = (&'static str, Box<dyn Fn() -> Result<Tensor> + 'a>);

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let device = if args.iter().any(|a| a == "--cpu") { Device::Cpu } else { Device::cuda_if_available() };
    let out_path = args.iter().find(|a| !a.starts_with("--")).cloned();
    let (rounds, calls) = if quick { (3usize, 300usize) } else { (11, 10_000) };
    let n = 1024i64;

    let a = Tensor::randn([n], (Kind::Float, device));
    let b = Tensor::randn([n], (Kind::Float, device));
    let sync = || {
        if let Device::Cuda(i) = device {
            tch::Cuda::synchronize(i as i64);
        }
    };
    let check = myns::add(&a, &b)?;
    let diff = (&check - a.f_add(&b)?).abs().max().double_value(&[]);
    anyhow::ensure!(diff == 0.0, "myns::add differs from tch's add by {diff}");

    let variants: Vec<Variant> = vec![
        ("myns::add", Box::new(|| Ok(myns::add(&a, &b)?))),
        ("tch Tensor::f_add", Box::new(|| Ok(a.f_add(&b)?))),
        ("tch &a + &b", Box::new(|| Ok(&a + &b))),
    ];
    let time = |f: &dyn Fn() -> Result<Tensor>, calls: usize| -> Result<f64> {
        sync();
        let t = Instant::now();
        for _ in 0..calls {
            let _ = f()?; // dropped at once, as in a loop that overwrites its output
        }
        sync();
        Ok(t.elapsed().as_secs_f64() * 1e6 / calls as f64)
    };
    for (_, f) in &variants {
        time(f.as_ref(), (calls / 10).max(50))?; // warm-up
    }
    let mut us: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for r in 0..rounds {
        for k in 0..variants.len() {
            let i = (k + r) % variants.len();
            us[i].push(time(variants[i].1.as_ref(), calls)?);
        }
    }
    let ratio = |i: usize, j: usize| median(&us[i].iter().zip(&us[j]).map(|(x, y)| x / y).collect::<Vec<_>>());
    let r_fadd = ratio(0, 1);
    let r_op = ratio(0, 2);

    println!("myns {} per-call host time from Rust, {n} float32 on {device:?}, {rounds} rounds x {calls} calls", env!("CARGO_PKG_VERSION"));
    println!();
    println!("| variant | median µs per call | min | max |");
    println!("| --- | --- | --- | --- |");
    for (i, (name, _)) in variants.iter().enumerate() {
        let (lo, hi) = us[i].iter().fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        println!("| {name} | {:.3} | {lo:.3} | {hi:.3} |", median(&us[i]));
    }
    println!();
    println!("myns::add / Tensor::f_add: {r_fadd:.3} (median of per-round ratios); myns::add / (&a + &b): {r_op:.3}");

    let list = |v: &[f64]| v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(", ");
    let body = variants
        .iter()
        .enumerate()
        .map(|(i, (name, _))| format!("{{\"variant\": \"{name}\", \"median_us\": {:.4}, \"rounds_us\": [{}]}}", median(&us[i]), list(&us[i])))
        .collect::<Vec<_>>()
        .join(",\n  ");
    let json = format!(
        "{{\"bench\": \"rust_add\", \"device\": \"{device:?}\", \"numel\": {n}, \"dtype\": \"float32\", \"rounds\": {rounds}, \
         \"calls\": {calls}, \"myns_over_f_add\": {r_fadd:.4}, \"myns_over_add_operator\": {r_op:.4},\n \"variants\": [\n  {body}\n ]}}"
    );
    match out_path {
        Some(p) => std::fs::write(&p, json + "\n")?,
        None => println!("{json}"),
    }
    Ok(())
}
