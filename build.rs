//! With the `python` feature, PyO3's interpreter cfgs (`Py_LIMITED_API`, `Py_3_10`,
//! ...) for the bindings: the stable-ABI build (`abi3-py39`) declares the one
//! call it needs beyond 3.9's limited API itself (see `bindings::utf8_raw`).
//!
//! `ranklens_avx512`: the compiler has the AVX-512 intrinsics (Rust 1.89), so
//! the dense path's AVX-512 row is built (`core::dense::sparse::avx512`); an
//! older compiler (the crate's `rust-version` is older) builds without it.

use std::process::Command;

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
    println!("cargo::rustc-check-cfg=cfg(ranklens_avx512)");
    if rustc_minor().is_some_and(|m| m >= 89) {
        println!("cargo::rustc-cfg=ranklens_avx512");
    }
}

/// The minor version of the compiler cargo builds with (`rustc 1.95.0 ...`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    version.split('.').nth(1)?.parse().ok()
}
