//! The pure Rust core: no Python types here (see `src/lib.rs` for the bindings).
//!
//! * `vocab`   — string ids to integers in byte order, and merging two vocabularies;
//! * `trec`    — TREC run and qrels files read (in parallel) and written;
//! * `encode`  — rows to the encoded layout (offsets + flat arrays), sorted once
//!   (`encode/`: the builder, `finish`, ranking, the id arena, page advice);
//! * `columns` — the same from column chunks in Arrow layouts (data frames, Arrow);
//! * `dense`   — score matrices, ranked id lists and ANN neighbours read in
//!   place (no ids), through the same kernels;
//! * `eval`    — aligning qrels and run, the per-query relevance vector, the
//!   parallel loop over queries (`eval/`: sides, options, checks, one query's
//!   scoring, threads);
//! * `join`    — looking a ranked document up among its query's judged ones;
//! * `metrics` — one file per metric family, plain functions over one query;
//! * `rows`    — one ranked list against its own ground truth (the per-sample
//!   `Scorer`), without encoding a whole side;
//! * `pool`    — the thread pool of the parallel steps, made again after a `fork`;
//! * `cancel`  — a flag the caller sets to stop a long call (Ctrl-C);
//! * `stats`   — significance tests over paired per-query differences;
//! * `stream`  — scoring a run file chunk by chunk, in bounded memory;
//! * `autorag` — AutoRAG's row-by-row retrieval metrics (not trec_eval's), and
//!   token overlap between passages (`autorag/tokens.rs`).

pub mod autorag;
pub mod cancel;
pub mod columns;
pub mod dense;
pub mod encode;
pub mod error;
pub mod eval;
pub mod join;
pub mod metrics;
pub mod pool;
pub mod rows;
pub mod stats;
pub mod stream;
pub mod trec;
pub mod vocab;

/// Ask for the cache line of `p`: a hint, never a read; any address is fine
/// (no fault, whatever it points to).  Elsewhere than x86-64, nothing.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address; SSE is in
    // every x86-64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
