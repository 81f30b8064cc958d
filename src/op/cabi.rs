//! The plumbing of the C ABI (`include/myns.h`): status codes, the
//! thread's last error, the panic boundary and handle conversions. Used by
//! the op functions `op!` generates and by the C ABI module (`capi`).

use crate::types::{Error, ErrorKind, Scalar};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tch::Tensor;

/// The opaque type behind [`myns_tensor`] (really an `at::Tensor`).
#[repr(C)]
pub struct myns_tensor_s {
    _private: [u8; 0],
}

/// A tensor handle: an `at::Tensor*`, as tch's `C_tensor` and PyTorch's
/// `AtenTensorHandle`.
#[allow(non_camel_case_types)]
pub type myns_tensor = *mut myns_tensor_s;

/// Success.
pub const MYNS_OK: c_int = 0;
/// The op or torch rejected the call (`RuntimeError` in Python).
pub const MYNS_ERROR: c_int = 1;
/// A NULL pointer or invalid value where the ABI needs a valid one.
pub const MYNS_ERROR_INVALID_ARGUMENT: c_int = 2;
/// A caught panic (a bug in myns).
pub const MYNS_ERROR_INTERNAL: c_int = 3;
/// Out of device (or host) memory (`torch.OutOfMemoryError`).
pub const MYNS_ERROR_OUT_OF_MEMORY: c_int = 4;
/// A dimension or index out of range (`IndexError`).
pub const MYNS_ERROR_INDEX: c_int = 5;
/// A device or dtype without a kernel (`NotImplementedError`).
pub const MYNS_ERROR_NOT_IMPLEMENTED: c_int = 6;
/// A bad value (`ValueError`).
pub const MYNS_ERROR_VALUE: c_int = 7;
/// An argument of the wrong type (`TypeError`).
pub const MYNS_ERROR_TYPE: c_int = 8;

/// The status code of an error kind.
pub fn status(kind: ErrorKind) -> c_int {
    match kind {
        ErrorKind::OutOfMemory => MYNS_ERROR_OUT_OF_MEMORY,
        ErrorKind::Index => MYNS_ERROR_INDEX,
        ErrorKind::NotImplemented => MYNS_ERROR_NOT_IMPLEMENTED,
        ErrorKind::Value => MYNS_ERROR_VALUE,
        ErrorKind::Type => MYNS_ERROR_TYPE,
        ErrorKind::Internal => MYNS_ERROR_INTERNAL,
        _ => MYNS_ERROR,
    }
}

/// A failed C call: status code and message.
pub struct CError {
    code: c_int,
    msg: String,
}

impl From<Error> for CError {
    fn from(e: Error) -> Self {
        CError { code: status(e.kind()), msg: e.message().to_string() }
    }
}

impl From<tch::TchError> for CError {
    fn from(e: tch::TchError) -> Self {
        Error::from(e).into()
    }
}

/// An ABI misuse (NULL where a value is needed, an unknown code).
pub fn invalid(func: &str, msg: impl std::fmt::Display) -> CError {
    CError { code: MYNS_ERROR_INVALID_ARGUMENT, msg: format!("{func}: {msg}") }
}

/// Another failure of a C helper, as an error of `kind`.
pub fn failed(kind: ErrorKind, func: &str, msg: impl std::fmt::Display) -> CError {
    CError { code: status(kind), msg: format!("{func}: {msg}") }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: String) {
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// The thread's last error message.
pub fn last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs the body of C function `func`: panics and errors become a status
/// code plus the thread's last error.
pub fn guard(func: &str, f: impl FnOnce() -> Result<(), CError>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => MYNS_OK,
        Ok(Err(e)) => {
            set_last_error(e.msg);
            e.code
        }
        Err(p) => {
            set_last_error(format!("{func}: internal error (panic): {}", panic_message(&*p)));
            MYNS_ERROR_INTERNAL
        }
    }
}

/// The text of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Borrows a handle as a tch tensor for the call (never freed here).
///
/// # Safety
/// `h` is NULL or a valid `at::Tensor*` that outlives the borrow.
pub unsafe fn borrow(h: myns_tensor, func: &str, arg: &str) -> Result<ManuallyDrop<Tensor>, CError> {
    if h.is_null() {
        return Err(invalid(func, format_args!("argument `{arg}` is NULL")));
    }
    let t = super::borrow_tensor(h as usize);
    if !t.defined() {
        return Err(invalid(func, format_args!("argument `{arg}` is an undefined tensor")));
    }
    Ok(t)
}

/// Borrows an optional tensor: NULL is `None`.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn borrow_opt(h: myns_tensor, func: &str, arg: &str) -> Result<Option<ManuallyDrop<Tensor>>, CError> {
    if h.is_null() {
        Ok(None)
    } else {
        borrow(h, func, arg).map(Some)
    }
}

/// A C string argument.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that outlives the borrow.
pub unsafe fn c_str<'a>(s: *const c_char, func: &str, arg: &str) -> Result<&'a str, CError> {
    if s.is_null() {
        return Err(invalid(func, format_args!("argument `{arg}` is NULL")));
    }
    CStr::from_ptr(s).to_str().map_err(|_| invalid(func, format_args!("argument `{arg}` is not UTF-8")))
}

/// A C `double` passed for a `Scalar` argument: integral values that fit an
/// int64 are integers (so an integer tensor stays one), others floats.
pub fn c_scalar(x: f64) -> Scalar {
    match Scalar::Float(x).to_i64() {
        Some(i) => Scalar::Int(i),
        None => Scalar::Float(x),
    }
}

/// An output slot, set to NULL until the call succeeds.
///
/// # Safety
/// `out` is NULL or valid for writes.
pub unsafe fn out_slot<'a>(out: *mut myns_tensor, func: &str, arg: &str) -> Result<&'a mut myns_tensor, CError> {
    match out.as_mut() {
        Some(slot) => {
            *slot = std::ptr::null_mut();
            Ok(slot)
        }
        None => Err(invalid(func, format_args!("output `{arg}` is NULL"))),
    }
}

/// Gives up ownership of a tensor as a new handle.
pub fn into_handle(t: Tensor) -> myns_tensor {
    super::into_raw(t) as myns_tensor
}
