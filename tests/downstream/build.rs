//! All a crate that depends on myns needs for its programs to find libtorch at
//! run time without LD_LIBRARY_PATH: myns (`links = "myns"`) tells the build
//! scripts of the crates depending on it where libtorch is, and this turns
//! that into a run path. (Cargo passes link arguments of a dependency's build
//! script only to that dependency's own targets, so myns cannot do it for you.)
fn main() {
    let lib = std::env::var("DEP_MYNS_LIBTORCH_LIB").expect("myns reports DEP_MYNS_LIBTORCH_LIB");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
}
