//! Merging parsed blocks, in file order, into the `Builder`: file line numbers,
//! the duplicate check across block boundaries, chunks of whole queries.

use super::parse::{reset_table, BlockError, Parsed};
use super::split::quote;
use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::{show, Error, Result};
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

/// A file read: the encoded rows and, for a run, its tags.
#[derive(Debug, Clone, PartialEq)]
pub struct TrecFile {
    pub encoded: Encoded,
    /// Tag (6th field) of the first run line; `None` for qrels or an empty run.
    pub tag: Option<String>,
    /// Tag of the last run line: what trec_eval prints as `runid`.
    pub last_tag: Option<String>,
}

pub(super) fn dup_error(
    file: &str,
    line: u64,
    query: &str,
    doc: &str,
    first: Option<u64>,
) -> Error {
    let msg = match first {
        Some(first) => format!(
            "query {query:?}: document {doc:?} is listed more than once (first on line {first})"
        ),
        None => format!(
            "query {query:?}: document {doc:?} is listed more than once \
             (line unknown: the query's lines are not consecutive)"
        ),
    };
    Error::Parse {
        file: file.to_string(),
        line,
        msg,
    }
}

/// Appends parsed blocks, in file order, to the [`Builder`]: turns block line
/// numbers into file line numbers and checks the documents of a query whose
/// lines cross a block boundary (each block checked its own).
pub(super) struct Merger<'f, 'c> {
    pub(super) file: &'f str,
    pub(super) b: Builder,
    /// Reading in chunks ([`for_each_run_chunk`](super::for_each_run_chunk));
    /// `None` reads the file whole.
    pub(super) chunks: Option<Chunker<'c>>,
    /// Lines in the blocks merged so far.
    lines: u64,
    pub(super) first_tag: Option<Vec<u8>>,
    pub(super) last_tag: Vec<u8>,
    /// The query of the last row: its id and bytes, the row its run of
    /// consecutive rows started at, and the line of each of those rows.
    open_q: Option<u32>,
    open_qid: Vec<u8>,
    open_start: usize,
    open_lines: Vec<u64>,
    /// Rows `open_start..open_start + indexed` of the open run, by document.
    open_seen: HashTable<u32>,
    indexed: usize,
    hasher: DefaultHashBuilder,
    /// The line of each row, for input that cannot be read again to find the
    /// lines of a duplicate (stdin, a pipe): `None` for a regular file.
    pub(super) row_lines: Option<RowLines>,
}

/// The line of each row, in 4 bytes a row: its line within its block, and
/// each block's first row and first line.
#[derive(Default)]
pub(super) struct RowLines {
    in_block: Vec<u32>,
    blocks: Vec<(usize, u64)>,
}

impl RowLines {
    fn line(&self, row: usize) -> u64 {
        let k = self.blocks.partition_point(|&(r, _)| r <= row);
        match (
            k.checked_sub(1).and_then(|k| self.blocks.get(k)),
            self.in_block.get(row),
        ) {
            (Some(&(_, base)), Some(&l)) => base + l as u64,
            _ => 0,
        }
    }
}

/// The state of a chunked read (see [`for_each_run_chunk`](super::for_each_run_chunk)).
pub(super) struct Chunker<'c> {
    /// The builder option of every chunk (a chunk is always a run).
    pub(super) round_f32: bool,
    pub(super) min_rows: usize,
    /// Every query whose lines have ended, with the line they started on.
    pub(super) done: hashbrown::HashMap<Vec<u8>, u64>,
    /// The line the open query's lines started on.
    pub(super) open_line: u64,
    pub(super) on_chunk: &'c mut (dyn FnMut(Encoded) -> Result<()> + Send),
}

impl<'f, 'c> Merger<'f, 'c> {
    pub(super) fn new(file: &'f str, kind: Kind, round_f32: bool) -> Self {
        Merger {
            file,
            b: new_builder(kind, round_f32),
            chunks: None,
            lines: 0,
            first_tag: None,
            last_tag: Vec::new(),
            open_q: None,
            open_qid: Vec::new(),
            open_start: 0,
            open_lines: Vec::new(),
            open_seen: HashTable::new(),
            indexed: 0,
            hasher: DefaultHashBuilder::default(),
            row_lines: None,
        }
    }

    /// Lines in the blocks merged so far.
    pub(super) fn lines(&self) -> u64 {
        self.lines
    }

    pub(super) fn merge(&mut self, p: &Parsed) -> Result<()> {
        if let Some(rl) = self.row_lines.as_mut() {
            rl.blocks.push((self.b.len(), self.lines));
            rl.in_block.extend_from_slice(&p.line_of);
        }
        let nseg = p.segs.len();
        for (k, &(qa, qb, r0)) in p.segs.iter().enumerate() {
            let r0 = r0 as usize;
            let r1 = p.segs.get(k + 1).map_or(p.values.len(), |s| s.2 as usize);
            let qid = &p.raw[qa..qb];
            let cont = match self.open_q {
                Some(q) if k == 0 && self.open_qid == qid => Some(q),
                _ => None,
            };
            let q = match cont {
                Some(q) => q,
                None => {
                    if self.chunks.is_some() {
                        self.next_query(qid, self.lines + p.line_of[r0] as u64)?;
                    }
                    let q = self.b.query(qid)?;
                    self.open_q = Some(q);
                    self.open_qid.clear();
                    self.open_qid.extend_from_slice(qid);
                    self.open_start = self.b.len();
                    self.open_lines.clear();
                    reset_table(&mut self.open_seen);
                    self.indexed = 0;
                    q
                }
            };
            let before = self.b.len();
            self.b
                .rows(q, &p.docs, &p.bounds[r0..=r1], &p.values[r0..r1])?;
            if cont.is_some() || k + 1 == nseg {
                let base = self.lines;
                self.open_lines
                    .extend(p.line_of[r0..r1].iter().map(|&l| base + l as u64));
            }
            if cont.is_some() {
                self.check_open(before)?;
            }
        }
        if let Some(((a, b), (c, d))) = p.tags {
            if self.first_tag.is_none() {
                self.first_tag = Some(p.raw[a..b].to_vec());
            }
            self.last_tag.clear();
            self.last_tag.extend_from_slice(&p.raw[c..d]);
        }
        if let Some((line, e)) = &p.err {
            let line = self.lines + line;
            return Err(match e {
                BlockError::Msg(msg) => Error::Parse {
                    file: self.file.to_string(),
                    line,
                    msg: msg.clone(),
                },
                BlockError::Dup { first, query, doc } => {
                    dup_error(self.file, line, query, doc, Some(self.lines + first))
                }
            });
        }
        self.lines += p.lines;
        Ok(())
    }

    /// Chunked read: the lines of query `qid` start on `line`.  The open query
    /// has ended: a query seen before is an error; the chunk is handed out if
    /// it is full.
    #[cold]
    fn next_query(&mut self, qid: &[u8], line: u64) -> Result<()> {
        let Some(c) = self.chunks.as_mut() else {
            return Ok(());
        };
        if let Some(&first) = c.done.get(qid) {
            return Err(Error::Parse {
                file: self.file.to_string(),
                line,
                msg: format!(
                    "query {} appears again after other queries (its lines started on line \
                     {first}): the run file is not grouped by query, so it cannot be scored \
                     chunk by chunk; use evaluate(Run.from_trec(...)), which reads it whole",
                    quote(qid)
                ),
            });
        }
        if self.open_q.is_some() {
            c.done.insert(self.open_qid.clone(), c.open_line);
        }
        c.open_line = line;
        if self.b.len() >= c.min_rows {
            self.cut()?;
        }
        Ok(())
    }

    /// Chunked read: encode the rows merged so far and hand them out.
    pub(super) fn cut(&mut self) -> Result<()> {
        let Some(c) = self.chunks.as_mut() else {
            return Ok(());
        };
        let full = std::mem::replace(&mut self.b, new_builder(Kind::Run, c.round_f32));
        let file = self.file;
        let encoded = full.finish().map_err(|e| match e {
            // Not expected: every query of a chunk was checked as it was merged.
            Error::DuplicateDocument { query, doc } => dup_error(file, 0, &query, &doc, None),
            e => e,
        })?;
        self.open_q = None;
        (c.on_chunk)(encoded)
    }

    /// The open query's rows `new..` continue it from an earlier block: check
    /// them against its earlier rows (those are indexed now, lazily: only a
    /// query that crosses a block boundary pays for it).
    fn check_open(&mut self, new: usize) -> Result<()> {
        let (b, hasher, seen) = (&self.b, &self.hasher, &mut self.open_seen);
        let rehash = |&r: &u32| hasher.hash_one(b.doc(r as usize));
        for r in self.open_start + self.indexed..new {
            seen.insert_unique(hasher.hash_one(b.doc(r)), r as u32, rehash);
        }
        for r in new..b.len() {
            let doc = b.doc(r);
            let h = hasher.hash_one(doc);
            if let Some(&first) = seen.find(h, |&e| b.doc(e as usize) == doc) {
                let line_of = |row: usize| {
                    self.open_lines
                        .get(row - self.open_start)
                        .copied()
                        .unwrap_or(0)
                };
                return Err(dup_error(
                    self.file,
                    line_of(r),
                    &show(&self.open_qid),
                    &show(doc),
                    Some(line_of(first as usize)),
                ));
            }
            seen.insert_unique(h, r as u32, rehash);
        }
        self.indexed = b.len() - self.open_start;
        Ok(())
    }

    /// A document listed twice for a query, among the rows merged so far,
    /// whose lines are not consecutive (so not found while merging): the
    /// error for the listing that repeats an earlier one first in the file,
    /// as [`DuplicateDocument`](Error::DuplicateDocument) when the lines are
    /// not known (to be found by reading the file again).  Takes the rows.
    pub(super) fn split_duplicate(&mut self) -> Option<Error> {
        let b = std::mem::replace(&mut self.b, Builder::new(Kind::Run, false));
        match b.finish_locating() {
            (Err(e @ Error::DuplicateDocument { .. }), rows) => Some(self.locate(e, rows)),
            _ => None,
        }
    }

    /// A duplicate's lines, where the rows' lines are known.
    fn locate(&self, e: Error, rows: Option<(usize, usize)>) -> Error {
        match (e, rows, &self.row_lines) {
            (Error::DuplicateDocument { query, doc }, Some((a, b)), Some(rl)) => {
                dup_error(self.file, rl.line(b), &query, &doc, Some(rl.line(a)))
            }
            (e, _, _) => e,
        }
    }

    pub(super) fn finish(mut self) -> Result<TrecFile> {
        let b = std::mem::replace(&mut self.b, Builder::new(Kind::Run, false));
        let (encoded, rows) = b.finish_locating();
        let encoded = encoded.map_err(|e| self.locate(e, rows))?;
        Ok(TrecFile {
            encoded,
            last_tag: self.first_tag.as_ref().map(|_| show(&self.last_tag)),
            tag: self.first_tag.map(|t| show(&t)),
        })
    }
}

/// A builder for TREC input: each block of consecutive lines of one query is
/// checked for duplicates while reading.
pub(super) fn new_builder(kind: Kind, round_f32: bool) -> Builder {
    let mut b = Builder::new(kind, round_f32);
    b.assume_unique_within_blocks();
    b
}
