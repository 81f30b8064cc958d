//! The modules of src/ form layers: each may use only the ones below it,
//! so there is no import cycle, and op modules never see the cxx types.
//! Read from the sources (`crate::<module>` and `super::` paths).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Each top-level module and the modules it may use (the layers, bottom up).
const ALLOWED: &[(&str, &[&str])] = &[
    ("types", &[]),
    ("kernel_params", &[]),
    ("overrides", &[]),
    ("ffi", &[]),
    ("cuda", &["types"]),
    ("kernels", &["cuda"]),
    ("op", &["types", "ffi", "cuda"]),
    ("gemm", &["types", "cuda", "kernels", "overrides", "kernel_params"]),
    ("rowwise", &["types", "cuda", "op", "overrides", "kernel_params"]),
    ("ops", &["types", "cuda", "kernels", "kernel_params", "op", "gemm", "rowwise"]),
    ("bridge", &["types", "ffi", "op", "ops"]),
    ("capi", &["types", "op", "ops", "overrides"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a source file belongs to (None for lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_string();
    (first != "lib").then_some(first)
}

/// Top-level modules a file's text refers to with `crate::<m>`.
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // `$crate::` in macros and `crate::` in comments count too: stricter.
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

#[test]
fn modules_form_layers_without_cycles() {
    let src = PathBuf::from(ROOT).join("src");
    if !src.exists() {
        eprintln!("skipped: no source tree at {ROOT}");
        return;
    }
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let top: BTreeSet<&str> = allowed.keys().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let Some(m) = module_of(&src, f) else { continue };
        let Some(ok) = allowed.get(m.as_str()) else {
            bad.push(format!("{}: module `{m}` is not in the layer table of tests/layers.rs", f.display()));
            continue;
        };
        for u in uses(&std::fs::read_to_string(f).unwrap()) {
            if u != m && top.contains(u.as_str()) && !ok.contains(&u.as_str()) {
                bad.push(format!("{}: `{m}` uses `crate::{u}`", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

/// The table itself is a DAG: every module uses only modules listed before it.
#[test]
fn layer_table_is_ordered() {
    for (i, (m, deps)) in ALLOWED.iter().enumerate() {
        for d in *deps {
            let j = ALLOWED.iter().position(|(n, _)| n == d).unwrap_or_else(|| panic!("{m}: unknown `{d}`"));
            assert!(j < i, "{m} uses {d}, listed after it");
        }
    }
}

/// Op modules (src/ops/) never name the cxx types (src/ffi.rs).
#[test]
fn ops_never_touch_cxx_types() {
    let dir = PathBuf::from(ROOT).join("src/ops");
    if !dir.exists() {
        return;
    }
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for word in ["crate::ffi", "RawArg", "cxx"] {
            assert!(!text.contains(word), "{} mentions the cxx bridge (`{word}`)", f.display());
        }
    }
}
