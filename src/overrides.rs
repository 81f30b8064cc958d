//! Kernel-choice overrides for testing and tuning (`MYNS_MATMUL_KERNEL`,
//! `MYNS_ROW_KERNEL`): read from the environment once, at first use, and
//! changeable afterwards through `set` (the C ABI's `myns_set_override`,
//! Python's `myns.set_override`), so tests can switch kernels inside one
//! process without a getenv on every call.

use std::sync::{Arc, OnceLock, RwLock};

/// One override.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// The matmul/bmm kernel (see `gemm`).
    MatmulKernel,
    /// The forward row reductions' build (see `rowwise`).
    RowKernel,
    /// `off`: the Hopper matmul kernels store their output from registers
    /// instead of staging it in shared memory for TMA (or for the warps,
    /// where TMA cannot address its rows); compute-sanitizer's initcheck
    /// does not see TMA stores, and calls their output uninitialized.
    MatmulTmaStore,
}

impl Knob {
    pub const ALL: [Knob; 3] = [Knob::MatmulKernel, Knob::RowKernel, Knob::MatmulTmaStore];

    /// The environment variable that sets it.
    pub fn var(self) -> &'static str {
        match self {
            Knob::MatmulKernel => "MYNS_MATMUL_KERNEL",
            Knob::RowKernel => "MYNS_ROW_KERNEL",
            Knob::MatmulTmaStore => "MYNS_MATMUL_TMA_STORE",
        }
    }

    pub fn from_var(name: &str) -> Option<Knob> {
        Knob::ALL.into_iter().find(|k| k.var() == name)
    }

    fn slot(self) -> &'static RwLock<Option<Arc<str>>> {
        static SLOTS: [OnceLock<RwLock<Option<Arc<str>>>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        SLOTS[self as usize].get_or_init(|| RwLock::new(normalise(std::env::var(self.var()).ok().as_deref())))
    }
}

/// `None`, empty and `auto` all mean the automatic choice.
fn normalise(v: Option<&str>) -> Option<Arc<str>> {
    v.map(str::trim).filter(|v| !v.is_empty() && *v != "auto").map(Arc::from)
}

/// Whether `value` is one `knob` takes, checked where a caller sets it
/// (`MYNS_MATMUL_TMA_STORE` takes only `off`); the kernel names of the others
/// are checked where they are used.
pub fn check(knob: Knob, value: Option<&str>) -> std::result::Result<(), String> {
    match (knob, normalise(value).as_deref()) {
        (Knob::MatmulTmaStore, Some(v)) if v != "off" => Err(format!("{} takes `off` or `auto`, not `{v}`", knob.var())),
        _ => Ok(()),
    }
}

/// The override in force, `None` for the automatic choice.
pub fn get(knob: Knob) -> Option<Arc<str>> {
    knob.slot().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Sets (or with `None`, `""` or `"auto"` clears) an override for the whole
/// process; the environment is not consulted again.
pub fn set(knob: Knob, value: Option<&str>) {
    *knob.slot().write().unwrap_or_else(|e| e.into_inner()) = normalise(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_and_empty_clear() {
        set(Knob::RowKernel, Some(" r1:64 "));
        assert_eq!(get(Knob::RowKernel).as_deref(), Some("r1:64"));
        for clear in [None, Some(""), Some("auto")] {
            set(Knob::RowKernel, Some("general"));
            set(Knob::RowKernel, clear);
            assert_eq!(get(Knob::RowKernel), None);
        }
        assert_eq!(Knob::from_var("MYNS_MATMUL_KERNEL"), Some(Knob::MatmulKernel));
        assert_eq!(Knob::from_var("PATH"), None);
        assert!(check(Knob::MatmulTmaStore, Some("off")).is_ok() && check(Knob::MatmulTmaStore, None).is_ok());
        assert!(check(Knob::MatmulTmaStore, Some("0")).unwrap_err().contains("MYNS_MATMUL_TMA_STORE takes `off`"));
        assert!(check(Knob::MatmulKernel, Some("wg256c2")).is_ok());
    }
}
