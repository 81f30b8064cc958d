//! The C ABI declared in `include/myns.h` (read it for the conventions):
//! library and capability queries and a few tensor helpers. Each op's own C
//! function, `myns_<name>`, comes from its `op!` declaration (through the
//! plumbing in `op::cabi`), which also gives its line in the header;
//! `tests/c_abi_header.rs` checks the header against both.
//!
//! Every function catches panics (nothing unwinds into C), returns a status
//! code (one per error kind) and leaves its message in a thread-local for
//! `myns_last_error`.

#![allow(non_camel_case_types)]

pub use crate::op::cabi::{
    myns_tensor, myns_tensor_s, MYNS_ERROR, MYNS_ERROR_INDEX, MYNS_ERROR_INTERNAL, MYNS_ERROR_INVALID_ARGUMENT,
    MYNS_ERROR_NOT_IMPLEMENTED, MYNS_ERROR_OUT_OF_MEMORY, MYNS_ERROR_TYPE, MYNS_ERROR_VALUE, MYNS_OK,
};
use crate::op::cabi::{borrow, failed, guard, into_handle, invalid, out_slot};
use crate::types::{ErrorKind, ScalarType};
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::catch_unwind;
use std::sync::OnceLock;
use tch::{Device, Tensor};

/// Must match `MYNS_ABI_VERSION` in `include/myns.h`.
pub const MYNS_ABI_VERSION: c_int = 2;

fn nonnull<T>(p: *const T, func: &str, arg: &str) -> Result<*const T, crate::op::cabi::CError> {
    if p.is_null() {
        Err(invalid(func, format_args!("`{arg}` is NULL")))
    } else {
        Ok(p)
    }
}

// ---- library and capability queries ----------------------------------------

fn strings() -> &'static [[CString; 3]] {
    static S: OnceLock<Vec<[CString; 3]>> = OnceLock::new();
    S.get_or_init(|| {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        crate::ops::all().iter().map(|s| [c(s.name), c(s.schema()), c(s.doc())]).collect()
    })
}

/// The library version, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn myns_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// The torch the library was built against, behind a marker that the Python
/// package finds in the file's bytes before it loads the library: a library
/// built for another torch is then an ImportError naming both versions, not
/// an undefined symbol from the dynamic loader.
const TORCH_MARKER_PREFIX: &str = "myns-built-against-torch=";
#[used]
static TORCH_MARKER: &str = concat!("myns-built-against-torch=", env!("MYNS_TORCH_VERSION"), "\0");

/// The version of the torch the library was built against, e.g. "2.11.0+cu130".
#[no_mangle]
pub extern "C" fn myns_torch_version() -> *const c_char {
    TORCH_MARKER[TORCH_MARKER_PREFIX.len()..].as_ptr() as *const c_char
}

/// The library's ABI version ([`MYNS_ABI_VERSION`]).
#[no_mangle]
pub extern "C" fn myns_abi_version() -> c_int {
    MYNS_ABI_VERSION
}

/// Number of ops the library registers.
#[no_mangle]
pub extern "C" fn myns_op_count() -> usize {
    crate::ops::all().len()
}

/// Name of op `i` (without the `myns::` prefix), or NULL if out of range.
#[no_mangle]
pub extern "C" fn myns_op_name(i: usize) -> *const c_char {
    strings().get(i).map_or(std::ptr::null(), |s| s[0].as_ptr())
}

/// Schema of op `i`, or NULL if out of range.
#[no_mangle]
pub extern "C" fn myns_op_schema(i: usize) -> *const c_char {
    strings().get(i).map_or(std::ptr::null(), |s| s[1].as_ptr())
}

/// Documentation of op `i`, or NULL if out of range.
#[no_mangle]
pub extern "C" fn myns_op_doc(i: usize) -> *const c_char {
    strings().get(i).map_or(std::ptr::null(), |s| s[2].as_ptr())
}

/// Number of CUDA devices torch sees.
#[no_mangle]
pub extern "C" fn myns_cuda_device_count() -> c_int {
    catch_unwind(|| tch::Cuda::device_count() as c_int).unwrap_or(0)
}

/// Sets a kernel-choice override for the whole process, as the environment
/// variable `name` (`MYNS_MATMUL_KERNEL`, `MYNS_ROW_KERNEL`,
/// `MYNS_MATMUL_TMA_STORE`: `overrides::Knob`) would at
/// start-up; a NULL or empty `value`, or `"auto"`, restores the automatic
/// choice. For testing and tuning.
///
/// # Safety
/// `name` is a NUL-terminated string; `value` is NULL or one.
#[no_mangle]
pub unsafe extern "C" fn myns_set_override(name: *const c_char, value: *const c_char) -> c_int {
    const F: &str = "myns_set_override";
    guard(F, || {
        let name = std::ffi::CStr::from_ptr(nonnull(name, F, "name")?).to_string_lossy();
        let knob = crate::overrides::Knob::from_var(&name).ok_or_else(|| {
            let known: Vec<&str> = crate::overrides::Knob::ALL.iter().map(|k| k.var()).collect();
            invalid(F, format_args!("unknown override `{name}` (known: {})", known.join(", ")))
        })?;
        let value = if value.is_null() { None } else { Some(std::ffi::CStr::from_ptr(value).to_string_lossy()) };
        crate::overrides::check(knob, value.as_deref()).map_err(|e| invalid(F, e))?;
        crate::overrides::set(knob, value.as_deref());
        Ok(())
    })
}

/// Message of the last failed call on this thread ("" if none).
#[no_mangle]
pub extern "C" fn myns_last_error() -> *const c_char {
    crate::op::cabi::last_error()
}

// ---- tensors --------------------------------------------------------------

fn kind_from_code(code: i32) -> Option<tch::Kind> {
    i8::try_from(code).ok().and_then(ScalarType::from_raw).map(ScalarType::kind)
}

/// A new contiguous CPU tensor holding a copy of `data`.
///
/// # Safety
/// `data` holds the tensor's elements, `sizes` holds `ndim` values, `out` is
/// valid for writes (see `include/myns.h`).
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_from_data(
    data: *const c_void,
    sizes: *const i64,
    ndim: i64,
    dtype: i32,
    out: *mut myns_tensor,
) -> c_int {
    const F: &str = "myns_tensor_from_data";
    guard(F, || {
        let out = out_slot(out, F, "out")?;
        let kind = kind_from_code(dtype).ok_or_else(|| invalid(F, format_args!("unknown dtype code {dtype}")))?;
        if !(0..=64).contains(&ndim) {
            return Err(invalid(F, format_args!("ndim must be in 0..=64, got {ndim}")));
        }
        let sizes: &[i64] =
            if ndim == 0 { &[] } else { std::slice::from_raw_parts(nonnull(sizes, F, "sizes")?, ndim as usize) };
        if let Some(s) = sizes.iter().find(|&&s| s < 0) {
            return Err(invalid(F, format_args!("negative size {s} in {sizes:?}")));
        }
        let numel = sizes.iter().try_fold(1usize, |n, &s| n.checked_mul(s as usize));
        let nbytes = numel
            .and_then(|n| n.checked_mul(kind.elt_size_in_bytes()))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| invalid(F, format_args!("sizes {sizes:?} are too large")))?;
        let t = Tensor::f_empty(sizes, (kind, Device::Cpu))?;
        if nbytes > 0 {
            let src = nonnull(data, F, "data")? as *const u8;
            std::ptr::copy_nonoverlapping(src, t.data_ptr() as *mut u8, nbytes);
        }
        *out = into_handle(t);
        Ok(())
    })
}

/// A new handle to `t` on another device.
///
/// # Safety
/// `t` is a valid handle and `out` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_to_device(
    t: myns_tensor,
    device_type: i32,
    device_index: i32,
    out: *mut myns_tensor,
) -> c_int {
    const F: &str = "myns_tensor_to_device";
    guard(F, || {
        let out = out_slot(out, F, "out")?;
        let t = borrow(t, F, "t")?;
        let device = match (device_type, device_index) {
            (0, _) => Device::Cpu,
            (1, i) if i < 0 => Device::Cuda(0),
            (1, i) => Device::Cuda(i as usize),
            _ => return Err(invalid(F, format_args!("unknown device type {device_type}"))),
        };
        if let Device::Cuda(i) = device {
            let n = tch::Cuda::device_count();
            if i as i64 >= n {
                return Err(failed(ErrorKind::Runtime, F, format_args!("no CUDA device {i} (torch sees {n})")));
            }
        }
        *out = into_handle(t.f_to_device(device)?);
        Ok(())
    })
}

/// Copies the elements of `t` to host memory, row major.
///
/// # Safety
/// `t` is a valid handle and `data` valid for `nbytes` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_copy_to(t: myns_tensor, data: *mut c_void, nbytes: usize) -> c_int {
    const F: &str = "myns_tensor_copy_to";
    guard(F, || {
        let t = borrow(t, F, "t")?;
        let kind = t.f_kind()?;
        let need = t.numel() * kind.elt_size_in_bytes();
        if nbytes != need {
            return Err(invalid(
                F,
                format_args!("the buffer has {nbytes} bytes but the tensor needs {need} ({} elements of {kind:?})", t.numel()),
            ));
        }
        if need > 0 {
            let dst = nonnull(data, F, "data")? as *mut u8;
            let host = t.f_to_device(Device::Cpu)?.f_contiguous()?;
            std::ptr::copy_nonoverlapping(host.data_ptr() as *const u8, dst, need);
        }
        Ok(())
    })
}

/// Number of dimensions of `t`.
///
/// # Safety
/// `t` is a valid handle and `ndim` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_ndim(t: myns_tensor, ndim: *mut i64) -> c_int {
    const F: &str = "myns_tensor_ndim";
    guard(F, || {
        let t = borrow(t, F, "t")?;
        *(nonnull(ndim, F, "ndim")? as *mut i64) = t.dim() as i64;
        Ok(())
    })
}

/// Sizes of `t`.
///
/// # Safety
/// `t` is a valid handle and `sizes` valid for `capacity` writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_sizes(t: myns_tensor, sizes: *mut i64, capacity: i64) -> c_int {
    const F: &str = "myns_tensor_sizes";
    guard(F, || {
        let t = borrow(t, F, "t")?;
        let s = t.size();
        if (capacity.max(0) as usize) < s.len() {
            return Err(invalid(F, format_args!("capacity {capacity} is less than the {} dimensions", s.len())));
        }
        if !s.is_empty() {
            let dst = nonnull(sizes, F, "sizes")? as *mut i64;
            std::ptr::copy_nonoverlapping(s.as_ptr(), dst, s.len());
        }
        Ok(())
    })
}

/// Element type of `t` (c10::ScalarType number).
///
/// # Safety
/// `t` is a valid handle and `dtype` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_dtype(t: myns_tensor, dtype: *mut i32) -> c_int {
    const F: &str = "myns_tensor_dtype";
    guard(F, || {
        let t = borrow(t, F, "t")?;
        let dst = nonnull(dtype, F, "dtype")? as *mut i32;
        *dst = ScalarType::from_kind(t.f_kind()?).raw() as i32;
        Ok(())
    })
}

/// Device type and index of `t`.
///
/// # Safety
/// `t` is a valid handle and the outputs valid for writes.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_device(t: myns_tensor, device_type: *mut i32, device_index: *mut i32) -> c_int {
    const F: &str = "myns_tensor_device";
    guard(F, || {
        let t = borrow(t, F, "t")?;
        let (ty, ix) = (nonnull(device_type, F, "device_type")? as *mut i32, nonnull(device_index, F, "device_index")? as *mut i32);
        let (a, b) = match t.device() {
            Device::Cpu => (0, -1),
            Device::Cuda(i) => (1, i as i32),
            d => return Err(failed(ErrorKind::NotImplemented, F, format_args!("{d:?} tensors are not supported"))),
        };
        (*ty, *ix) = (a, b);
        Ok(())
    })
}

/// Frees a handle (NULL is a no-op).
///
/// # Safety
/// `t` is NULL or a handle owned by the caller, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn myns_tensor_free(t: myns_tensor) {
    if !t.is_null() {
        // Dropping a tch tensor deletes the `at::Tensor` (never panics).
        drop(Tensor::from_ptr(t as *mut torch_sys::C_tensor));
    }
}

// ---- linking --------------------------------------------------------------

// Keeps libtorch_cuda a dependency of everything that links myns (libmyns.so
// for C programs, and any Rust program using the crate): rustc links with
// --as-needed, and nothing else references libtorch_cuda directly, so without
// this it would be dropped and torch would see no CUDA. Never called.
#[link(name = "torch_cuda")]
extern "C" {
    fn aoti_torch_get_current_cuda_stream(device_index: i32, ret_stream: *mut *mut c_void) -> i32;
}
#[used]
#[allow(dead_code)]
static KEEP_LIBTORCH_CUDA: unsafe extern "C" fn(i32, *mut *mut c_void) -> i32 = aoti_torch_get_current_cuda_stream;
