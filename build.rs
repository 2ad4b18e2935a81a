//! With the `python` feature, PyO3's interpreter cfgs (`Py_LIMITED_API`, `Py_3_10`,
//! ...) for the bindings: the stable-ABI wheel (`abi3-py39`) cannot borrow a
//! `str`'s UTF-8 bytes, which the limited API allows only from 3.10.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
