//! C ABI queries about the library itself (used by the Python package for
//! docstrings, and by any C program).

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

fn strings() -> &'static [(CString, CString)] {
    static S: OnceLock<Vec<(CString, CString)>> = OnceLock::new();
    S.get_or_init(|| {
        crate::ops::ALL
            .iter()
            .map(|s| (CString::new(s.name).unwrap_or_default(), CString::new(s.doc).unwrap_or_default()))
            .collect()
    })
}

/// The library version, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn myns_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Number of ops the library registers.
#[no_mangle]
pub extern "C" fn myns_op_count() -> usize {
    crate::ops::ALL.len()
}

/// Name of op `i` (without the `myns::` prefix), or NULL if out of range.
#[no_mangle]
pub extern "C" fn myns_op_name(i: usize) -> *const c_char {
    strings().get(i).map_or(std::ptr::null(), |s| s.0.as_ptr())
}

/// Documentation of op `i`, or NULL if out of range.
#[no_mangle]
pub extern "C" fn myns_op_doc(i: usize) -> *const c_char {
    strings().get(i).map_or(std::ptr::null(), |s| s.1.as_ptr())
}
