//! Builds the three non-Rust parts of myns:
//! 1. every `kernels/*.cu` into a fatbin (SASS for sm_80 and sm_90, PTX as a
//!    fallback; or one architecture alone for files marked
//!    `// myns-arch: sm_90a`) embedded in the library, plus a generated
//!    module table;
//! 2. the C++ registration layer in `csrc/` (cxx bridge), linked whole so its
//!    `TORCH_LIBRARY` static initialisers are never dropped;
//! 3. link arguments so Rust tests, examples and binaries find libtorch (with
//!    CUDA) at run time without `LD_LIBRARY_PATH`.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The GEMM kernels' parameter tables (also compiled into the crate as
/// `gemm::tiles`): build_kernels writes the header and Rust handles from them.
#[allow(dead_code)]
mod gemm_tiles {
    include!("src/gemm/tiles.rs");
}

/// GPU code shipped in every fatbin: SASS for the architectures we target and
/// PTX for compute_90 so newer GPUs can JIT. PTX ISA from nvcc 13.0 is 9.0,
/// which the CUDA 13.0 (580) driver accepts.
const GENCODE: &[&str] = &[
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
];

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    build_kernels(&root, &out);
    build_cpp(&root);
}

fn nvcc_path(root: &Path) -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    if let Ok(p) = env::var("NVCC") {
        return Ok(PathBuf::from(p));
    }
    if let Ok(home) = env::var("CUDA_HOME") {
        let p = Path::new(&home).join("bin/nvcc");
        if p.exists() {
            return Ok(p);
        }
    }
    // The pinned PyPI nvcc that `make setup` installs into the repo's .venv.
    let venv = env::var("VIRTUAL_ENV").map(PathBuf::from).unwrap_or_else(|_| root.join(".venv"));
    if let Ok(entries) = std::fs::read_dir(venv.join("lib")) {
        for e in entries.flatten() {
            let p = e.path().join("site-packages/nvidia/cu13/bin/nvcc");
            if p.exists() {
                return Ok(p);
            }
        }
    }
    Err("myns build: nvcc not found. Run `make setup` (installs nvidia-cuda-nvcc==13.0.88, \
         nvidia-nvvm==13.0.88 and nvidia-cuda-crt==13.0.88 into .venv), or set NVCC=/path/to/nvcc \
         or CUDA_HOME to a CUDA 13.0 toolkit."
        .into())
}

/// Per-file target: a `.cu` whose first line is `// myns-arch: sm_90a` (any
/// `sm_XY[a]`) is built for that architecture alone, into its own fatbin; the
/// generated table records the arch so the library loads it only on a device
/// of that compute capability (src/cuda.rs `Module::supports`).
fn file_arch(src: &Path) -> Option<String> {
    let text = std::fs::read_to_string(src).ok()?;
    let first = text.lines().next()?.trim();
    let arch = first.strip_prefix("//")?.trim().strip_prefix("myns-arch:")?.trim();
    let ok = arch.starts_with("sm_") && arch.len() > 3 && arch[3..].trim_end_matches('a').chars().all(|c| c.is_ascii_digit());
    assert!(ok, "myns build: {}: bad `myns-arch:` marker `{arch}` (want e.g. sm_90a)", src.display());
    Some(arch.to_string())
}

fn build_kernels(root: &Path, out: &Path) {
    let dir = root.join("kernels");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("kernels/ directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    sources.sort();
    let nvcc = nvcc_path(root).unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rerun-if-changed=src/gemm/tiles.rs");
    std::fs::write(out.join("gemm_tiles.h"), gemm_tiles::header()).unwrap();
    std::fs::write(out.join("gemm_kernels.rs"), gemm_tiles::rust_kernels()).unwrap();

    // Compile the files in parallel (nvcc is single-threaded per target).
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
    let archs: Vec<Option<String>> = sources.iter().map(|s| file_arch(s)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(sources.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(src) = sources.get(i) else { break };
                let stem = src.file_stem().unwrap().to_str().unwrap();
                let fatbin = out.join(format!("{stem}.fatbin"));
                let gencode: Vec<String> = match &archs[i] {
                    Some(arch) => {
                        let num = &arch[3..];
                        vec![format!("-gencode=arch=compute_{num},code={arch}")]
                    }
                    None => GENCODE.iter().map(|s| s.to_string()).collect(),
                };
                let output = Command::new(&nvcc)
                    .args(["--fatbin", "-O3", "-std=c++17", "--expt-relaxed-constexpr"])
                    .args(&gencode)
                    .arg("-I")
                    .arg(&dir)
                    .arg("-I")
                    .arg(out)
                    .arg("-o")
                    .arg(&fatbin)
                    .arg(src)
                    .output()
                    .unwrap_or_else(|e| panic!("myns build: could not run {}: {e}", nvcc.display()));
                if !output.status.success() {
                    panic!(
                        "myns build: nvcc failed on {}:\n{}{}",
                        src.display(),
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            });
        }
    });

    let mut table = String::from(
        "// @generated by build.rs: one entry per kernels/*.cu, each an embedded fatbin.\n",
    );
    for (src, arch) in sources.iter().zip(&archs) {
        let stem = src.file_stem().unwrap().to_str().unwrap().to_string();
        let fatbin = out.join(format!("{stem}.fatbin"));
        let ctor = match arch {
            Some(arch) => format!("with_arch({stem:?}, include_bytes!({:?}), {arch:?})", fatbin.display()),
            None => format!("new({stem:?}, include_bytes!({:?}))", fatbin.display()),
        };
        writeln!(table, "pub static {}: crate::cuda::Module = crate::cuda::Module::{ctor};", stem.to_uppercase()).unwrap();
    }
    std::fs::write(out.join("kernels.rs"), table).unwrap();
}

fn build_cpp(root: &Path) {
    // torch-sys publishes the libtorch it built against (links = "tch").
    let torch_lib = PathBuf::from(
        env::var("DEP_TCH_LIBTORCH_LIB").expect("torch-sys did not report DEP_TCH_LIBTORCH_LIB"),
    );
    let torch_root = torch_lib.parent().unwrap().to_path_buf();
    let cuda_include = torch_root.join("../nvidia/cu13/include");

    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-changed=src/bridge.rs");
    cxx_build::bridge("src/bridge.rs")
        .file("csrc/registration.cc")
        .include(root)
        .include(torch_root.join("include"))
        .include(torch_root.join("include/torch/csrc/api/include"))
        .include(&cuda_include)
        .std("c++17")
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-deprecated-declarations")
        .link_lib_modifier("+whole-archive")
        .compile("myns_csrc");

    println!("cargo:rustc-link-search=native={}", torch_lib.display());
    // c10_cuda: the shim asks for PyTorch's current stream; torch-sys does not link it.
    println!("cargo:rustc-link-lib=dylib=c10_cuda");
    println!("cargo:rustc-link-lib=dylib=c10");
    // Programs (not the Python-loaded cdylib) need an rpath to libtorch and must
    // keep libtorch_cuda, which --as-needed would drop, or they see no CUDA.
    // (Emitted for tests and examples: cargo rejects them for target kinds a
    // package does not have, and this one has both.)
    for kind in ["tests", "examples"] {
        println!("cargo:rustc-link-arg-{kind}=-Wl,-rpath,{}", torch_lib.display());
        println!("cargo:rustc-link-arg-{kind}=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg-{kind}=-ltorch_cuda");
        println!("cargo:rustc-link-arg-{kind}=-Wl,--as-needed");
    }
    // libmyns.so itself (for C programs): a run path to this libtorch, and to
    // `../torch/lib` next to it for a pip-installed package. (Inside Python
    // libtorch is already loaded and the run path is never consulted.)
    println!("cargo:rustc-link-arg-cdylib=-Wl,-rpath,$ORIGIN/../torch/lib:{}", torch_lib.display());
    println!("cargo:libtorch_lib={}", torch_lib.display());
    println!("cargo:rustc-env=MYNS_TORCH_VERSION={}", torch_version(&torch_root));
}

/// The version of the torch we build against: the Python package's full
/// version (e.g. "2.11.0+cu130") when there is one, else libtorch's header.
fn torch_version(torch_root: &Path) -> String {
    let quoted = |line: &str| line.split(['"', '\'']).nth(1).map(str::to_string);
    let py = torch_root.join("version.py");
    let header = torch_root.join("include/torch/headeronly/version.h");
    let legacy = torch_root.join("include/torch/csrc/api/include/torch/version.h");
    if let Ok(text) = std::fs::read_to_string(&py) {
        if let Some(v) = text.lines().find(|l| l.starts_with("__version__")).and_then(quoted) {
            return v;
        }
    }
    for h in [header, legacy] {
        if let Ok(text) = std::fs::read_to_string(&h) {
            // `#define TORCH_VERSION "2.11.0"`, possibly across a line continuation.
            if let Some(rest) = text.split("#define TORCH_VERSION ").nth(1) {
                if let Some(v) = quoted(rest) {
                    return v;
                }
            }
        }
    }
    "unknown".into()
}
