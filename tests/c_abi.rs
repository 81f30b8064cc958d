//! The C ABI from the outside, as a C program sees it: every test calls the
//! built `libmyns.so` through libloading, with bindings that bindgen generated
//! from `include/myns.h` (`tests/c_abi/bindings.rs`, kept current by
//! `tests/c_abi_header.rs`); loading fails if a declared function is not
//! exported. `c_program` compiles and runs `examples/c/matmul.c`.
//!
//! This test binary never links the myns crate: with it, the ops would be
//! registered twice in one process. tch is fine (it is only libtorch).
//!
//! Set `MYNS_LIB` to test another copy of the library. Without the source tree
//! (the GPU machine) the tests that need it are skipped.

use std::ffi::CStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

#[allow(non_camel_case_types, non_upper_case_globals, dead_code, clippy::all)]
mod bindings {
    include!("c_abi/bindings.rs");
}
use bindings::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const HEADER: &str = include_str!("../include/myns.h");

fn source_tree() -> Option<PathBuf> {
    let root = PathBuf::from(ROOT);
    if root.join("include/myns.h").exists() {
        Some(root)
    } else {
        eprintln!("skipped: no source tree at {ROOT}");
        None
    }
}

// ---- the library through the bindings ----------------------------------

fn lib_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MYNS_LIB") {
        return p.into();
    }
    // The test runs from <target>/<profile>/deps/, where `cargo test` builds
    // libmyns.so (`cargo build` copies it up to <profile>/, which may then be
    // older); the GPU bundle puts it next to bin/.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libmyns.so"), deps.join("../libmyns.so")]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libmyns.so not found near {} (set MYNS_LIB)", deps.display()))
}

fn lib() -> &'static MynsLib {
    static LIB: OnceLock<MynsLib> = OnceLock::new();
    LIB.get_or_init(|| {
        let path = lib_path();
        // Fails if any function declared in the header is not exported.
        unsafe { MynsLib::new(&path) }.unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
    })
}

fn cstr(p: *const std::os::raw::c_char) -> String {
    assert!(!p.is_null());
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn last_error() -> String {
    cstr(unsafe { lib().myns_last_error() })
}

/// Panics with the library's message unless `status` is MYNS_OK.
fn ok(status: i32) {
    assert_eq!(status, MYNS_OK as i32, "status {status}: {}", last_error());
}

/// An owned handle, freed on drop.
struct Handle(myns_tensor);

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { lib().myns_tensor_free(self.0) }
    }
}

fn from_f32(data: &[f32], sizes: &[i64]) -> Handle {
    let mut out = std::ptr::null_mut();
    let (d, s) = (data.as_ptr().cast(), sizes.as_ptr());
    ok(unsafe { lib().myns_tensor_from_data(d, s, sizes.len() as i64, MYNS_FLOAT32 as i32, &mut out) });
    Handle(out)
}

fn from_f64(data: &[f64], sizes: &[i64]) -> Handle {
    let mut out = std::ptr::null_mut();
    let (d, s) = (data.as_ptr().cast(), sizes.as_ptr());
    ok(unsafe { lib().myns_tensor_from_data(d, s, sizes.len() as i64, MYNS_FLOAT64 as i32, &mut out) });
    Handle(out)
}

fn sizes(t: &Handle) -> Vec<i64> {
    let mut ndim = -1;
    ok(unsafe { lib().myns_tensor_ndim(t.0, &mut ndim) });
    let mut s = vec![0i64; ndim as usize];
    ok(unsafe { lib().myns_tensor_sizes(t.0, s.as_mut_ptr(), ndim) });
    s
}

fn read<T: Default + Clone>(t: &Handle) -> Vec<T> {
    let n = sizes(t).iter().product::<i64>() as usize;
    let mut v = vec![T::default(); n];
    ok(unsafe { lib().myns_tensor_copy_to(t.0, v.as_mut_ptr().cast(), n * std::mem::size_of::<T>()) });
    v
}

fn dtype(t: &Handle) -> i32 {
    let mut d = -1;
    ok(unsafe { lib().myns_tensor_dtype(t.0, &mut d) });
    d
}

fn device(t: &Handle) -> (i32, i32) {
    let (mut ty, mut ix) = (-1, -2);
    ok(unsafe { lib().myns_tensor_device(t.0, &mut ty, &mut ix) });
    (ty, ix)
}

fn to_device(t: &Handle, ty: u32, index: i32) -> Handle {
    let mut out = std::ptr::null_mut();
    ok(unsafe { lib().myns_tensor_to_device(t.0, ty as i32, index, &mut out) });
    Handle(out)
}

fn matmul(a: &Handle, b: &Handle) -> Handle {
    let mut out = std::ptr::null_mut();
    ok(unsafe { lib().myns_matmul(a.0, b.0, &mut out) });
    Handle(out)
}

fn add(a: &Handle, b: &Handle) -> Handle {
    let mut out = std::ptr::null_mut();
    ok(unsafe { lib().myns_add(a.0, b.0, &mut out) });
    Handle(out)
}

/// Function names declared in the header.
fn declared() -> Vec<String> {
    let mut names = Vec::new();
    for piece in HEADER.split("myns_").skip(1) {
        let ident: String = piece.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let rest = piece[ident.len()..].trim_start();
        if rest.starts_with('(') && !names.contains(&format!("myns_{ident}")) {
            names.push(format!("myns_{ident}"));
        }
    }
    names
}

fn op_names() -> Vec<String> {
    let l = lib();
    (0..unsafe { l.myns_op_count() }).map(|i| cstr(unsafe { l.myns_op_name(i) })).collect()
}

#[test]
fn every_op_has_a_c_function() {
    let declared = declared();
    let so = unsafe { libloading::Library::new(lib_path()) }.unwrap();
    let mut missing = Vec::new();
    for op in op_names() {
        let f = format!("myns_{op}");
        let exported = unsafe { so.get::<unsafe extern "C" fn()>(f.as_bytes()) }.is_ok();
        match (declared.contains(&f), exported) {
            (true, true) => {}
            (false, true) => missing.push(format!("{f}: declare it in include/myns.h")),
            (true, false) => missing.push(format!("{f}: add a `c_op!` line in src/capi.rs")),
            (false, false) => {
                missing.push(format!("{f}: add a `c_op!` line in src/capi.rs and declare it in include/myns.h"))
            }
        }
    }
    assert!(missing.is_empty(), "ops without a C function:\n  {}", missing.join("\n  "));
    // And the header declares nothing the library lacks (loading checks it too).
    for f in &declared {
        assert!(unsafe { so.get::<unsafe extern "C" fn()>(f.as_bytes()) }.is_ok(), "{f} is not exported");
    }
}

#[test]
fn versions_and_capabilities() {
    let l = lib();
    unsafe {
        assert_eq!(cstr(l.myns_version()), env!("CARGO_PKG_VERSION"));
        assert_eq!(l.myns_abi_version(), MYNS_ABI_VERSION as i32);
        let torch = cstr(l.myns_torch_version());
        let numbers: Vec<&str> = torch.split(['.', '+']).take(3).collect();
        assert!(numbers.len() == 3 && numbers.iter().all(|n| n.parse::<u32>().is_ok()), "torch version {torch:?}");
        let n = l.myns_op_count();
        let names = op_names();
        assert!(names.contains(&"add".to_string()) && names.contains(&"matmul".to_string()), "{names:?}");
        assert_eq!(names.len(), n);
        for (i, name) in names.iter().enumerate() {
            let schema = cstr(l.myns_op_schema(i));
            assert!(schema.starts_with(&format!("{name}(")), "{schema}");
            assert!(!cstr(l.myns_op_doc(i)).is_empty());
        }
        assert!(l.myns_op_name(n).is_null() && l.myns_op_schema(n).is_null() && l.myns_op_doc(n).is_null());
        assert_eq!(l.myns_cuda_device_count() as i64, tch::Cuda::device_count());
    }
}

#[test]
fn ops_on_cpu() {
    let a = from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = from_f32(&[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], &[3, 2]);
    assert_eq!((sizes(&a), dtype(&a), device(&a)), (vec![2, 3], MYNS_FLOAT32 as i32, (MYNS_CPU as i32, -1)));
    let c = matmul(&a, &b);
    assert_eq!(sizes(&c), [2, 2]);
    assert_eq!(read::<f32>(&c), [58.0, 64.0, 139.0, 154.0]);
    let d = add(&c, &c);
    assert_eq!(read::<f32>(&d), [116.0, 128.0, 278.0, 308.0]);

    let x = from_f64(&[0.5, -1.5], &[1, 2]);
    let y = from_f64(&[2.0, 4.0], &[2, 1]);
    let z = matmul(&x, &y);
    assert_eq!((sizes(&z), dtype(&z)), (vec![1, 1], MYNS_FLOAT64 as i32));
    assert_eq!(read::<f64>(&z), [-5.0]);

    // 0-d and empty tensors.
    let s = from_f32(&[3.0], &[]);
    assert_eq!((sizes(&s), read::<f32>(&add(&s, &s))), (vec![], vec![6.0]));
    let e = from_f32(&[], &[0, 3]);
    assert_eq!(sizes(&matmul(&e, &b)), [0, 2]);
}

/// The other argument and result kinds: scalars, two outputs, in place.
#[test]
fn scalar_multi_output_and_in_place_ops() {
    let l = lib();
    let x = from_f32(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let mut out = std::ptr::null_mut();
    unsafe {
        // float and int arguments
        ok(l.myns_scale(x.0, 0.5, &mut out));
        assert_eq!(read::<f32>(&Handle(out)), [0.5, 1.0, 1.5, 2.0]);
        ok(l.myns_softmax(x.0, 1, &mut out));
        let p = read::<f32>(&Handle(out));
        let e = (-1.0f32).exp();
        assert!((p[0] - e / (1.0 + e)).abs() < 1e-6 && (p[2] + p[3] - 1.0).abs() < 1e-6, "{p:?}");
        // Each kind of error has its own status: a dimension out of range
        // (IndexError in Python), a bad value (ValueError).
        assert_eq!(l.myns_softmax(x.0, 5, &mut out), MYNS_ERROR_INDEX as i32);
        assert!(last_error().contains("myns::softmax"), "{}", last_error());
        let w2 = from_f32(&[1.0, 1.0], &[2]);
        assert_eq!(l.myns_rms_norm(x.0, w2.0, -1.0, &mut out), MYNS_ERROR_VALUE as i32);
        assert!(last_error().contains("`eps`"), "{}", last_error());

        // two outputs
        let w = from_f32(&[1.0, 1.0], &[2]);
        let (mut g0, mut g1) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(l.myns_rms_norm_backward(x.0, x.0, w.0, 1e-6, &mut g0, &mut g1));
        let (g0, g1) = (Handle(g0), Handle(g1));
        assert_eq!((sizes(&g0), sizes(&g1)), (vec![2, 2], vec![2]));

        // in place: the caller's tensors change
        let y = from_f32(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        ok(l.myns_scale_(y.0, 3.0));
        assert_eq!(read::<f32>(&y), [3.0, 6.0, 9.0, 12.0]);
        let (h, r) = (from_f32(&[1.0, 2.0], &[1, 2]), from_f32(&[2.0, 2.0], &[1, 2]));
        ok(l.myns_fused_add_rms_norm(h.0, r.0, w.0, 0.0));
        assert_eq!(read::<f32>(&r), [3.0, 4.0]);
        let rms = 12.5f32.sqrt();
        let hv = read::<f32>(&h);
        assert!((hv[0] - 3.0 / rms).abs() < 1e-6 && (hv[1] - 4.0 / rms).abs() < 1e-6, "{hv:?}");
        assert_eq!(l.myns_scale_(std::ptr::null_mut(), 1.0), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("myns_scale_: argument `x` is NULL"), "{}", last_error());
    }
}

#[test]
fn ops_on_cuda_when_present() {
    if unsafe { lib().myns_cuda_device_count() } == 0 {
        eprintln!("skipped: no CUDA device");
        return;
    }
    let a = to_device(&from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]), MYNS_CUDA, 0);
    let b = to_device(&from_f32(&[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], &[3, 2]), MYNS_CUDA, -1);
    assert_eq!(device(&a), (MYNS_CUDA as i32, 0));
    let c = matmul(&a, &b);
    assert_eq!(device(&c), (MYNS_CUDA as i32, 0));
    assert_eq!(read::<f32>(&c), [58.0, 64.0, 139.0, 154.0]);
    assert_eq!(read::<f32>(&add(&c, &c)), [116.0, 128.0, 278.0, 308.0]);
    let back = to_device(&c, MYNS_CPU, 0);
    assert_eq!(device(&back), (MYNS_CPU as i32, -1));
    // Mixed devices: the op says which argument is where.
    let cpu_b = from_f32(&[0.0; 6], &[3, 2]);
    let mut out = std::ptr::null_mut();
    let status = unsafe { lib().myns_matmul(a.0, cpu_b.0, &mut out) };
    let msg = last_error();
    assert!(status == MYNS_ERROR as i32 && msg.contains("`b`") && msg.contains("cpu"), "{status}: {msg}");
}

#[test]
fn errors_name_op_and_argument() {
    let l = lib();
    let a = from_f32(&[1.0; 6], &[2, 3]);
    let b = from_f32(&[1.0; 6], &[2, 3]);
    let dangling = std::ptr::NonNull::<myns_tensor_s>::dangling().as_ptr();
    unsafe {
        // Bad shapes: refused by the op, through the dispatcher.
        let mut out = dangling;
        assert_eq!(l.myns_matmul(a.0, b.0, &mut out), MYNS_ERROR as i32);
        let msg = last_error();
        assert!(msg.contains("myns::matmul") && msg.contains("`b`") && msg.contains("rows"), "{msg}");
        assert!(!msg.contains("Exception raised from"), "C++ backtrace in {msg}");
        assert!(out.is_null(), "outputs are NULL after a failure");

        let c = from_f32(&[1.0; 6], &[3, 2]);
        assert_eq!(l.myns_add(a.0, c.0, &mut out), MYNS_ERROR as i32);
        let msg = last_error();
        assert!(msg.contains("myns::add") && msg.contains("`b`") && msg.contains("shape"), "{msg}");

        // Unsupported dtype.
        let i = [1i64, 2];
        let mut ints = std::ptr::null_mut();
        ok(l.myns_tensor_from_data(i.as_ptr().cast(), [2i64].as_ptr(), 1, MYNS_INT64 as i32, &mut ints));
        let ints = Handle(ints);
        assert_eq!(dtype(&ints), MYNS_INT64 as i32);
        assert_eq!(read::<i64>(&ints), [1, 2]);
        ok(l.myns_add(ints.0, ints.0, &mut out));
        assert_eq!(read::<i64>(&Handle(out)), [2, 4]);
        assert_eq!(l.myns_softmax(ints.0, 0, &mut out), MYNS_ERROR_NOT_IMPLEMENTED as i32);
        assert!(last_error().contains("unsupported dtype torch.int64"), "{}", last_error());

        // NULL handles and outputs: refused before the op runs.
        assert_eq!(l.myns_matmul(std::ptr::null_mut(), b.0, &mut out), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("myns_matmul") && last_error().contains("`a` is NULL"), "{}", last_error());
        assert_eq!(l.myns_matmul(a.0, b.0, std::ptr::null_mut()), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("myns_matmul") && last_error().contains("`out` is NULL"), "{}", last_error());

        // Tensor helpers check their arguments too.
        let mut t = dangling;
        assert_eq!(l.myns_tensor_from_data(i.as_ptr().cast(), [2i64].as_ptr(), 1, 99, &mut t), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("dtype code 99") && t.is_null(), "{}", last_error());
        assert_eq!(l.myns_tensor_from_data(std::ptr::null(), [2i64].as_ptr(), 1, 6, &mut t), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("`data` is NULL"), "{}", last_error());
        assert_eq!(l.myns_tensor_from_data(i.as_ptr().cast(), [-2i64].as_ptr(), 1, 6, &mut t), MYNS_ERROR_INVALID_ARGUMENT as i32);
        let mut buf = [0f32; 5];
        assert_eq!(l.myns_tensor_copy_to(a.0, buf.as_mut_ptr().cast(), 20), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert!(last_error().contains("20 bytes") && last_error().contains("24"), "{}", last_error());
        let mut s = [0i64; 1];
        assert_eq!(l.myns_tensor_sizes(a.0, s.as_mut_ptr(), 1), MYNS_ERROR_INVALID_ARGUMENT as i32);
        assert_eq!(l.myns_tensor_to_device(a.0, 7, 0, &mut t), MYNS_ERROR_INVALID_ARGUMENT as i32);
        if l.myns_cuda_device_count() == 0 {
            assert_eq!(l.myns_tensor_to_device(a.0, MYNS_CUDA as i32, 0, &mut t), MYNS_ERROR as i32);
            assert!(last_error().contains("no CUDA device"), "{}", last_error());
        }
        l.myns_tensor_free(std::ptr::null_mut());

        // Successful calls leave the message; it is per thread.
        let before = last_error();
        drop(matmul(&a, &from_f32(&[1.0; 6], &[3, 2])));
        assert_eq!(last_error(), before);
        assert_eq!(std::thread::spawn(last_error).join().unwrap(), "");
    }
}

#[test]
fn autograd_and_tch_handles() {
    use tch::{Device, Kind, Tensor};
    // tch tensors are `at::Tensor*` handles too: pass them straight in, and
    // take the result back as a tch tensor (which then owns and frees it).
    let a = Tensor::randn([3, 4], (Kind::Double, Device::Cpu)).set_requires_grad(true);
    let b = Tensor::randn([4, 2], (Kind::Double, Device::Cpu)).set_requires_grad(true);
    let mut out = std::ptr::null_mut();
    ok(unsafe { lib().myns_matmul(a.as_ptr() as myns_tensor, b.as_ptr() as myns_tensor, &mut out) });
    let c = unsafe { Tensor::from_ptr(out as *mut torch_sys::C_tensor) };
    assert!(c.requires_grad(), "the dispatcher recorded the op for autograd");
    let expected = a.detach().mm(&b.detach());
    assert!(c.allclose(&expected, 1e-12, 1e-12, false));
    c.sum(Kind::Double).backward();
    let ones = Tensor::ones([3, 2], (Kind::Double, Device::Cpu));
    assert!(a.grad().allclose(&ones.mm(&b.detach().tr()), 1e-12, 1e-12, false));
    assert!(b.grad().allclose(&a.detach().tr().mm(&ones), 1e-12, 1e-12, false));
}

// ---- the C program -------------------------------------------------------

#[test]
fn c_program() {
    let Some(root) = source_tree() else { return };
    let lib = lib_path().canonicalize().unwrap();
    let libdir = lib.parent().unwrap();
    let outdir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c_abi");
    std::fs::create_dir_all(&outdir).unwrap();
    let exe = outdir.join("matmul");

    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(&target)
        .host(&target)
        .opt_level(1)
        .debug(false)
        .try_get_compiler()
        .expect("a C compiler (cc)");
    let mut cmd = compiler.to_command();
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("examples/c/matmul.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", libdir.display()))
        .arg("-lmyns")
        .arg(format!("-Wl,-rpath,{}", libdir.display()));
    let built = cmd.output().expect("running the C compiler");
    assert!(built.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&built.stderr));

    // No LD_LIBRARY_PATH: libmyns.so finds libtorch through its own run path.
    let run = Command::new(&exe).env_remove("LD_LIBRARY_PATH").output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{} failed:\n{stdout}\n{stderr}", exe.display());
    assert!(stdout.contains("= [[58, 64], [139, 154]]"), "{stdout}");
    assert!(stdout.contains("status 1") && stdout.contains("myns::matmul: argument `b`"), "{stdout}");
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
    println!("{stdout}");
}

/// libmyns.so needs libtorch_cuda (or a C program would see no GPU) and
/// carries a run path to libtorch.
#[test]
fn library_links_libtorch_cuda_with_a_run_path() {
    let Ok(out) = Command::new("readelf").arg("-d").arg(lib_path()).output() else {
        eprintln!("skipped: no readelf");
        return;
    };
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(dynamic.contains("[libtorch_cuda.so]"), "{dynamic}");
    let runpath = dynamic.lines().find(|l| l.contains("RUNPATH") || l.contains("RPATH")).unwrap_or_default();
    assert!(runpath.contains("torch/lib"), "{dynamic}");
}
