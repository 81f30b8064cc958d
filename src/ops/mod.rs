//! Every op of the library, one module each (`src/ops/<name>.rs`), declared
//! with `op!` and listing its ops in `OPS`. build.rs finds the modules:
//! adding an op touches no list.

include!(concat!(env!("OUT_DIR"), "/ops.rs"));

/// The ops a module declares (`pub(crate) const OPS: Ops = &[Name::spec, ...]`).
pub(crate) type Ops = &'static [fn() -> &'static crate::op::OpSpec];

#[cfg(test)]
mod tests {
    use super::all;

    /// Every op has user documentation and a Rust example (run as a doc test).
    #[test]
    fn every_op_is_documented_with_an_example() {
        for spec in all() {
            assert!(!spec.doc().is_empty(), "{}: no documentation", spec.name);
            assert!(spec.rust_doc.contains("```"), "{}: no example in its documentation", spec.name);
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = all().iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
    }

    /// The schema and C declaration come from one declaration.
    #[test]
    fn schemas_and_c_declarations() {
        let find = |n: &str| all().iter().find(|s| s.name == n).unwrap();
        assert_eq!(find("rms_norm").schema(), "rms_norm(Tensor x, Tensor weight, float eps) -> Tensor");
        assert_eq!(find("rms_norm").c_decl(), "int myns_rms_norm(const myns_tensor x, const myns_tensor weight, double eps, myns_tensor* out);");
        assert_eq!(
            find("fused_add_rms_norm").schema(),
            "fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps) -> ()"
        );
        assert_eq!(find("rms_norm_backward").c_decl().matches("myns_tensor* out").count(), 2);
        assert_eq!(find("scale_").c_decl(), "int myns_scale_(myns_tensor x, double alpha);");
    }
}
