// Prints kernels' gemm_tiles.h from src/gemm/tiles.rs, as build.rs writes it
// (the emulation compiles the kernels without cargo).
#![allow(dead_code)]
include!("../../src/gemm/tiles.rs");
fn main() {
    print!("{}", header());
}
