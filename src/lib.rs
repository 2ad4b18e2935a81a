//! ranklens: trec_eval-exact ranking metrics.
//!
//! `core` is plain Rust over slices, tested with `cargo test`.  `bindings`
//! (feature `python`, turned on by maturin) is the one module that talks to Python.

pub mod core;

#[cfg(feature = "python")]
mod bindings;
