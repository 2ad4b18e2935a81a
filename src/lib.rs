//! ranklens: trec_eval-exact ranking metrics.
//!
//! `core` is plain Rust over slices, tested with `cargo test`.  `bindings`
//! (feature `python`, turned on by maturin) is the one module that talks to Python.

pub mod core;
mod memory;

/// Large blocks mapped 2 MiB-aligned, a bounded amount of them kept for
/// reuse once freed (Linux): see [`memory`].
#[global_allocator]
static GLOBAL: memory::Allocator = memory::Allocator;

#[cfg(feature = "python")]
mod bindings;
