//! Building the encoded form of a run or of qrels from (query, doc, value) rows.
//!
//! Layout (the same for both sides, and what Python holds as numpy arrays):
//! `queries` is a vocabulary sorted by bytes; rows of query `i` are
//! `offsets[i]..offsets[i + 1]` of `doc_ids` / `values`; `doc_ids[r]` indexes
//! `docs`, an arena holding each row's document id string, in input order (in
//! row order for scattered input: see `arena`).  A run's rows are kept in
//! ranking order (score descending, then document id descending by bytes:
//! trec_eval's order), so scoring never sorts; qrels rows keep their input
//! order.
//!
//! `extra` is one `u32` per row or empty: for a run, each row's position in the
//! input (file or dict order) of its query, which `ties="input"` needs; for
//! grouped qrels, each row's group index within its query (RAG ground truth:
//! a group is one unit of needed information, see [`crate::core::eval`]).
//!
//! The rooms:
//! * `builder`: [`Builder`] collects rows in any order, with their checks
//!   (finite values, one kind of row) and normalisation (`-0.0`, f32 rounding);
//! * `finish`: [`Builder::finish`] groups the rows by query, finds
//!   duplicates and ranks each query;
//! * `rank`: one query's run rows put in trec order;
//! * `arena`: appending to the document id arena, and rewriting it in row
//!   order for scattered input;
//! * `pages`: advice to the kernel on the fresh buffers (huge pages, faulting
//!   them in ahead of the rows).
//!
//! Documents only ever meet within a query, so nothing needs a global id: ties
//! compare the bytes of the tied rows, duplicates are found per query by hash
//! then bytes, and [`crate::core::eval`] joins a query's run rows to its
//! judgments through a small per-query hash table ([`crate::core::join`]).
//!
//! `finish` holds no more than the final arrays at any time (the arena with its
//! `i64` offsets, and per row `doc_ids` (4 bytes), `values` (8) and `extra`
//! (4)), plus per-query bookkeeping:
//!
//! * values are grouped by query with one block copy, made before `doc_ids`
//!   and `extra` exist, and not at all when the input is already grouped in
//!   query byte order; every later move is within a query, through a small
//!   per-query scratch buffer.  No `(row, position)` vector: `doc_ids` is
//!   filled per query from the blocks, and `extra` (input position) is
//!   computed from a row's block after ranking;
//! * ranking checks each query first: rows already ranked are left alone;
//!   rows ranked by score with ties in another order (common: BM25 ties) only
//!   have their runs of equal scores sorted by document id; else a full sort;
//! * the per-query duplicate check (hash every document, sort the hashes) is
//!   skipped where the caller has checked each block itself
//!   ([`Builder::assume_unique_within_blocks`], the TREC reader): only queries
//!   whose rows came in several blocks are checked.  A duplicate found here is
//!   the listing that repeats an earlier one first in input order.
//!
//! Rejected alternatives:
//! * a deduplicated document vocabulary (a global id per document): interning
//!   costs two cache misses a row (hash table, then the string to compare), more
//!   than the parse itself, and the global join against the qrels costs as much
//!   again at every evaluation;
//! * sorting per evaluation: a run is usually scored against several metric
//!   sets or qrels, and the sort is the costliest per-row step, so it is done
//!   once here;
//! * permuting the values in place (cycle following, one bit a row, no second
//!   array): a cache miss per row when queries are out of byte order, while the
//!   block copy made before the other arrays exist has the same peak;
//! * a `(row, position)` vector and a full sort of every query with a tie: more
//!   memory at the peak and more time than the per-query checks above.

mod arena;
mod builder;
mod finish;
mod pages;
mod rank;
#[cfg(test)]
mod tests;

pub use builder::Builder;
pub use pages::prefault;

use crate::core::vocab::OwnedVocab;

/// Which side the rows describe: decides the row order and the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Values are scores; rows kept in trec_eval ranking order.
    Run,
    /// Values are relevance labels; rows kept in doc id order.
    Qrels,
}

/// The encoded side, owned (moved into numpy without copying by the bindings).
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    pub queries: OwnedVocab,
    pub docs: OwnedVocab,
    pub offsets: Vec<i64>,
    pub doc_ids: Vec<u32>,
    pub values: Vec<f64>,
    pub extra: Vec<u32>,
}

/// No queries and no rows: the same as an empty `Builder`'s `finish`.
impl Default for Encoded {
    fn default() -> Self {
        Encoded {
            queries: OwnedVocab::default(),
            docs: OwnedVocab::default(),
            offsets: vec![0],
            doc_ids: Vec::new(),
            values: Vec::new(),
            extra: Vec::new(),
        }
    }
}

/// Rows [`Builder::finish`] takes on the calling thread, in order, without the
/// pool: the pool's hand-over would cost more than their work (a qrels or run
/// of a few queries, built for one call).
pub const SERIAL_ROWS: usize = 4096;
