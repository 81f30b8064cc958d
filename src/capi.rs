//! The C ABI declared in `include/myns.h` (the single source of truth; read it
//! for the conventions): library and capability queries, a few tensor helpers,
//! and one function per op, `myns_<name>`, which calls the op through the
//! PyTorch dispatcher like Python's `torch.ops.myns.<name>`.
//!
//! Every function catches panics (nothing unwinds into C), returns a status
//! code and leaves its message in a thread-local for `myns_last_error`.
//!
//! Adding an op's C function is one `c_op!` line at the end of this file
//! plus its declaration in `include/myns.h`; `tests/c_abi.rs` fails until
//! every op has both and they agree.

#![allow(non_camel_case_types)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use tch::{Device, Kind, Tensor};

/// The opaque type behind [`myns_tensor`] (really an `at::Tensor`).
#[repr(C)]
pub struct myns_tensor_s {
    _private: [u8; 0],
}

/// A tensor handle: an `at::Tensor*`, as tch's `C_tensor` and PyTorch's
/// `AtenTensorHandle`.
pub type myns_tensor = *mut myns_tensor_s;

/// Success.
pub const MYNS_OK: c_int = 0;
/// The op or torch rejected the call.
pub const MYNS_ERROR: c_int = 1;
/// A NULL pointer or invalid value where the ABI needs a valid one.
pub const MYNS_ERROR_INVALID_ARGUMENT: c_int = 2;
/// A caught panic (a bug in myns).
pub const MYNS_ERROR_INTERNAL: c_int = 3;
/// Must match `MYNS_ABI_VERSION` in `include/myns.h`.
pub const MYNS_ABI_VERSION: c_int = 1;

// ---- errors and the panic boundary ----------------------------------------

/// A failed C call: status code and message.
struct CError {
    code: c_int,
    msg: String,
}

impl From<anyhow::Error> for CError {
    fn from(e: anyhow::Error) -> Self {
        CError { code: MYNS_ERROR, msg: format!("{e:#}") }
    }
}

impl From<tch::TchError> for CError {
    fn from(e: tch::TchError) -> Self {
        CError { code: MYNS_ERROR, msg: e.to_string() }
    }
}

fn invalid(func: &str, msg: impl std::fmt::Display) -> CError {
    CError { code: MYNS_ERROR_INVALID_ARGUMENT, msg: format!("{func}: {msg}") }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: String) {
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// Runs the body of C function `func`: panics and errors become a status
/// code plus the thread's last error.
fn guard(func: &str, f: impl FnOnce() -> Result<(), CError>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => MYNS_OK,
        Ok(Err(e)) => {
            set_last_error(e.msg);
            e.code
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(format!("{func}: internal error (panic): {what}"));
            MYNS_ERROR_INTERNAL
        }
    }
}

/// Borrows a handle as a tch tensor for the call (never freed here).
///
/// # Safety
/// `h` is NULL or a valid `at::Tensor*` that outlives the borrow.
unsafe fn borrow(h: myns_tensor, func: &str, arg: &str) -> Result<ManuallyDrop<Tensor>, CError> {
    if h.is_null() {
        return Err(invalid(func, format_args!("argument `{arg}` is NULL")));
    }
    let t = crate::registry::borrow_tensor(h as usize);
    if !t.defined() {
        return Err(invalid(func, format_args!("argument `{arg}` is an undefined tensor")));
    }
    Ok(t)
}

/// An output slot, set to NULL until the call succeeds.
///
/// # Safety
/// `out` is NULL or valid for writes.
unsafe fn out_slot<'a>(out: *mut myns_tensor, func: &str, arg: &str) -> Result<&'a mut myns_tensor, CError> {
    match out.as_mut() {
        Some(slot) => {
            *slot = std::ptr::null_mut();
            Ok(slot)
        }
        None => Err(invalid(func, format_args!("output `{arg}` is NULL"))),
    }
}

/// Gives up ownership of a tensor as a new handle.
fn into_handle(t: Tensor) -> myns_tensor {
    let mut t = ManuallyDrop::new(t);
    t.as_mut_ptr() as myns_tensor
}

fn nonnull<T>(p: *const T, func: &str, arg: &str) -> Result<*const T, CError> {
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
        crate::ops::ALL.iter().map(|s| [c(s.name), c(s.schema), c(s.doc)]).collect()
    })
}

/// The library version, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn myns_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// The version of the torch the library was built against, e.g. "2.11.0+cu130".
#[no_mangle]
pub extern "C" fn myns_torch_version() -> *const c_char {
    concat!(env!("MYNS_TORCH_VERSION"), "\0").as_ptr() as *const c_char
}

/// The library's ABI version ([`MYNS_ABI_VERSION`]).
#[no_mangle]
pub extern "C" fn myns_abi_version() -> c_int {
    MYNS_ABI_VERSION
}

/// Number of ops the library registers.
#[no_mangle]
pub extern "C" fn myns_op_count() -> usize {
    crate::ops::ALL.len()
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
/// variable `name` (`MYNS_MATMUL_KERNEL` or `MYNS_ROW_KERNEL`) would at
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
        let knob = crate::overrides::Knob::from_var(&name)
            .ok_or_else(|| invalid(F, format_args!("unknown override `{name}` (known: MYNS_MATMUL_KERNEL, MYNS_ROW_KERNEL)")))?;
        let value = if value.is_null() { None } else { Some(std::ffi::CStr::from_ptr(value).to_string_lossy()) };
        crate::overrides::set(knob, value.as_deref());
        Ok(())
    })
}

/// Message of the last failed call on this thread ("" if none).
#[no_mangle]
pub extern "C" fn myns_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

// ---- tensors --------------------------------------------------------------

fn kind_from_code(code: i32) -> Option<Kind> {
    Some(match code {
        0 => Kind::Uint8,
        1 => Kind::Int8,
        2 => Kind::Int16,
        3 => Kind::Int,
        4 => Kind::Int64,
        5 => Kind::Half,
        6 => Kind::Float,
        7 => Kind::Double,
        8 => Kind::ComplexHalf,
        9 => Kind::ComplexFloat,
        10 => Kind::ComplexDouble,
        11 => Kind::Bool,
        15 => Kind::BFloat16,
        _ => return None,
    })
}

fn kind_code(kind: Kind) -> i32 {
    match kind {
        Kind::Uint8 => 0,
        Kind::Int8 => 1,
        Kind::Int16 => 2,
        Kind::Int => 3,
        Kind::Int64 => 4,
        Kind::Half => 5,
        Kind::Float => 6,
        Kind::Double => 7,
        Kind::ComplexHalf => 8,
        Kind::ComplexFloat => 9,
        Kind::ComplexDouble => 10,
        Kind::Bool => 11,
        Kind::QInt8 => 12,
        Kind::QUInt8 => 13,
        Kind::QInt32 => 14,
        Kind::BFloat16 => 15,
        Kind::Float8e5m2 => 23,
        Kind::Float8e4m3fn => 24,
        Kind::Float8e5m2fnuz => 25,
        Kind::Float8e4m3fnuz => 26,
    }
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
                return Err(CError {
                    code: MYNS_ERROR,
                    msg: format!("{F}: no CUDA device {i} (torch sees {n})"),
                });
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
        *dst = kind_code(t.f_kind()?);
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
            d => return Err(CError { code: MYNS_ERROR, msg: format!("{F}: {d:?} tensors are not supported") }),
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

// ---- ops ------------------------------------------------------------------

/// C type of one op argument kind.
macro_rules! c_ty {
    (tensor) => { self::myns_tensor };
    (tensor_mut) => { self::myns_tensor };
    (f64) => { f64 };
    (i64) => { i64 };
    (bool) => { bool };
}

/// Turns a C argument into what the Rust function borrows (`$c`: the C
/// function's name, for messages).
macro_rules! c_hold {
    (tensor, $c:expr, $a:ident) => { self::borrow($a, $c, stringify!($a))? };
    (tensor_mut, $c:expr, $a:ident) => { self::borrow($a, $c, stringify!($a))? };
    ($k:ident, $c:expr, $a:ident) => { $a };
}

/// How the Rust function receives a held argument.
macro_rules! c_pass {
    (tensor, $a:ident) => { &*$a };
    (tensor_mut, $a:ident) => { &mut *$a };
    ($k:ident, $a:ident) => { $a };
}

/// Defines the C function of one op, calling its public Rust function:
///
/// `c_op!(myns_<name>(arg: kind, ...) -> ret = path::to::rust_fn);`
///
/// Argument kinds: `tensor` (`&Tensor`), `tensor_mut` (`&mut Tensor`, for
/// `Tensor(a!)`), `f64` (`float`), `i64` (`int`), `bool`. Returns: `tensor`
/// (one output handle `out`), `(tensor, tensor)` (`out0`, `out1`) or `()`
/// (in-place ops: nothing). The C declaration in `include/myns.h` lists the
/// arguments in the same order, `myns_tensor` for tensors, `double`,
/// `int64_t`, `bool` for the rest, then `myns_tensor*` per output.
macro_rules! c_op {
    ($c:ident($($a:ident: $k:ident),* $(,)?) -> tensor = $f:path) => {
        #[doc = concat!("C ABI of [`", stringify!($f), "`] (see `include/myns.h`).")]
        ///
        /// # Safety
        /// Tensor arguments are valid handles; `out` is valid for writes.
        #[no_mangle]
        pub unsafe extern "C" fn $c($($a: c_ty!($k),)* out: *mut self::myns_tensor) -> ::std::ffi::c_int {
            self::guard(stringify!($c), || {
                let out = self::out_slot(out, stringify!($c), "out")?;
                $( #[allow(unused_mut)] let mut $a = c_hold!($k, stringify!($c), $a); )*
                *out = self::into_handle($f($(c_pass!($k, $a)),*)?);
                Ok(())
            })
        }
    };
    ($c:ident($($a:ident: $k:ident),* $(,)?) -> (tensor, tensor) = $f:path) => {
        #[doc = concat!("C ABI of [`", stringify!($f), "`] (see `include/myns.h`).")]
        ///
        /// # Safety
        /// Tensor arguments are valid handles; `out0` and `out1` are valid for writes.
        #[no_mangle]
        pub unsafe extern "C" fn $c(
            $($a: c_ty!($k),)*
            out0: *mut self::myns_tensor,
            out1: *mut self::myns_tensor,
        ) -> ::std::ffi::c_int {
            self::guard(stringify!($c), || {
                let out0 = self::out_slot(out0, stringify!($c), "out0")?;
                let out1 = self::out_slot(out1, stringify!($c), "out1")?;
                $( #[allow(unused_mut)] let mut $a = c_hold!($k, stringify!($c), $a); )*
                let (r0, r1) = $f($(c_pass!($k, $a)),*)?;
                (*out0, *out1) = (self::into_handle(r0), self::into_handle(r1));
                Ok(())
            })
        }
    };
    ($c:ident($($a:ident: $k:ident),* $(,)?) -> () = $f:path) => {
        #[doc = concat!("C ABI of [`", stringify!($f), "`] (see `include/myns.h`).")]
        ///
        /// # Safety
        /// Tensor arguments are valid handles.
        #[no_mangle]
        pub unsafe extern "C" fn $c($($a: c_ty!($k)),*) -> ::std::ffi::c_int {
            self::guard(stringify!($c), || {
                $( #[allow(unused_mut)] let mut $a = c_hold!($k, stringify!($c), $a); )*
                let _ = $f($(c_pass!($k, $a)),*)?;
                Ok(())
            })
        }
    };
}

// One line per op (and one declaration in include/myns.h).
c_op!(myns_add(a: tensor, b: tensor) -> tensor = crate::add);
c_op!(myns_matmul(a: tensor, b: tensor) -> tensor = crate::matmul);
c_op!(myns_rms_norm(x: tensor, weight: tensor, eps: f64) -> tensor = crate::rms_norm);
c_op!(myns_rms_norm_backward(grad: tensor, x: tensor, weight: tensor, eps: f64) -> (tensor, tensor) = crate::rms_norm_backward);
c_op!(myns_fused_add_rms_norm(x: tensor_mut, residual: tensor_mut, weight: tensor, eps: f64) -> () = crate::fused_add_rms_norm);
c_op!(myns_silu_and_mul(x: tensor) -> tensor = crate::silu_and_mul);
c_op!(myns_silu_and_mul_backward(grad: tensor, x: tensor) -> tensor = crate::silu_and_mul_backward);
c_op!(myns_softmax(x: tensor, dim: i64) -> tensor = crate::softmax);
c_op!(myns_softmax_backward(grad: tensor, output: tensor, dim: i64) -> tensor = crate::softmax_backward);
c_op!(myns_scale(x: tensor, alpha: f64) -> tensor = crate::scale);
c_op!(myns_scale_(x: tensor_mut, alpha: f64) -> () = crate::scale_);
c_op!(myns_bmm(a: tensor, b: tensor) -> tensor = crate::bmm);

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
