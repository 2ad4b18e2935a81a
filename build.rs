//! With the `python` feature, PyO3's interpreter cfgs (`Py_LIMITED_API`, `Py_3_10`,
//! ...) for the bindings: the stable-ABI build (`abi3-py39`) declares the one
//! call it needs beyond 3.9's limited API itself (see `bindings::utf8_raw`).

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
