//! TREC run and qrels files: streaming readers (plain, gzip, stdin) and writers.
//!
//! Formats (trec_eval 10.0, `get_trec_results.c` / `get_qrels.c`):
//!
//! * run:   `qid iter docno rank score tag [ignored...]`, at least 6 fields;
//! * qrels: `qid iter docno label`, exactly 4 fields.
//!
//! Fields are separated by runs of C `isspace` bytes (space, `\t`, `\n`, `\v`,
//! `\f`, `\r`, so `\r\n` line ends need no special case).  Blank lines and lines
//! whose first non-blank byte is `#` are skipped; a `#` anywhere else is an
//! ordinary byte (doc ids such as `msmarco_doc_50_22#13_30` exist).
//!
//! Where this reader is stricter or more lenient than trec_eval, on purpose:
//!
//! * `iter` and `rank` are ignored without being parsed, as in trec_eval (a
//!   non-numeric rank is fine): the ranking comes from the scores only.
//! * Scores and labels must parse completely as finite `f64` (Rust's float
//!   syntax: `2.1`, `-1e-3`, `+.5`, ...).  trec_eval uses `atof`/`atol`, which
//!   turn garbage into 0 and accept a numeric prefix (`1.5abc`); we reject those
//!   and NaN / infinity / overflow with a [`Error::Parse`] naming file and line.
//! * Labels are kept as `f64` (trec_eval truncates them with `atol`; the caller
//!   applies that in its compatibility mode).
//! * Blank lines in qrels are skipped (trec_eval calls them malformed).
//! * The run's tag: trec_eval prints the tag of the *last* line as `runid`;
//!   [`TrecFile`] exposes both the first tag (`tag`) and the last (`last_tag`).
//! * A document listed twice for one query is an error in both kinds, as in
//!   trec_eval, reported with the line of the second listing.  The check is
//!   online for a query's consecutive lines (a small hash set per run of
//!   lines); a duplicate split across non-consecutive blocks of one query is
//!   caught by [`Builder::finish`] (the listing that repeats an earlier one
//!   first in the file is named, whatever the hashes), and its line is then
//!   found by reading a regular file a second time; any other input (stdin, a
//!   FIFO, a generic reader) is never read again: the line of each row is kept
//!   while reading it (4 bytes a row).
//! * Line numbers are physical (1-based, counting comments and blank lines).
//! * A line is at most [`MAX_LINE`] bytes (1 MiB; [`ReadOptions::max_line`]):
//!   a longer one is an [`Error::Parse`] naming it, found without holding more
//!   than about the limit and one block (a gzip bomb without a newline stops
//!   there, as does a file in another format).
//! * A UTF-8 byte order mark at the start of the file is dropped.  A carriage
//!   return before a line's last field is an error: a file whose lines end in
//!   `\r` alone would otherwise be one long line with its extra fields ignored.
//! * Query and document ids must be valid UTF-8 (they are `str` in Python, and
//!   decoding them with replacement characters would merge distinct ids).
//! * With several errors, the first in file order is reported: a read that
//!   stops at a bad line first checks the rows before it for a duplicate of
//!   non-consecutive lines.
//!
//! ## Reading in parallel
//!
//! [`read_trec`] and [`parse_trec`] parse blocks of whole lines in parallel:
//!
//! 1. a reading thread reads ~512 KiB blocks (gzip decompressed there), each cut
//!    after its last newline (the rest starts the next block; a block grows to
//!    hold a longer line), and hands them over through a bounded channel;
//! 2. the blocks of one step (2 per thread) are parsed in parallel: fields,
//!    values, the duplicate check of each run of consecutive lines of one
//!    query (segment), the first error and its line within the block;
//! 3. at the same time (`rayon::join`) the previous step's blocks are appended,
//!    in file order, to the [`Builder`] (a `memcpy` per segment): block line
//!    numbers become file line numbers, and a query whose lines cross a block
//!    boundary is checked against its rows from the earlier blocks.
//!
//! So memory beyond the rows themselves is a few blocks per thread, never the
//! file; the reported error is the first in file order (a block stops at its
//! first error; the rows before it are merged, and checked across the block
//! boundary, before it is reported; an I/O error comes after the lines read
//! before it); and the result does not depend on the number of threads.  Used
//! from inside a rayon pool, the parsing runs on that pool (the reading thread
//! is a plain thread, so a one-thread pool cannot deadlock).
//!
//! [`for_each_run_chunk`] reads a run grouped by query in chunks of whole
//! queries instead (scoring a run larger than memory: `stream.rs`), with the
//! same blocks parsed in parallel: the merging step cuts a chunk once it holds
//! enough rows and a new query starts, and hands it to the caller (who scores
//! it, on the pool, while the next blocks are parsed).  Chunks default to
//! 100k rows (`evaluate_files`): a chunk's arrays stay below glibc's largest
//! `mmap` threshold, so the heap reuses their memory instead of mapping,
//! faulting in and unmapping each chunk.
//!
//! Why not (the choices of one stage are in its own file: `split.rs`,
//! `parse.rs`, `read.rs`; figures in `docs/design/performance.md`):
//!
//! * a single reading and parsing thread: the parse is CPU-bound, and the
//!   merge into the [`Builder`] overlaps the next step's parse;
//! * transparent huge pages for the reader's row arrays: the first touch can
//!   stall on direct compaction for longer than the page faults it saves;
//! * more memory in flight (larger blocks, more per thread): no faster, and
//!   glibc keeps most of it after the load; smaller blocks: more per-block
//!   overhead and no less memory;
//! * 1M-row stream chunks: above glibc's `mmap` threshold (see above);
//!   smaller ones than the default cost more in per-chunk work than they save.
//!
//! [`Builder`]: crate::core::encode::Builder
//! [`Builder::finish`]: crate::core::encode::Builder::finish

mod merge;
mod parse;
mod read;
mod split;
#[cfg(test)]
mod tests;
mod write;

use crate::core::cancel::Cancel;
use crate::core::encode::{Encoded, Kind};
use crate::core::error::{show, Error, Result};
use merge::{dup_error, Chunker, Merger};
use parse::Parsed;
use rayon::prelude::*;
use read::{find_duplicate, maybe_gunzip, open, read_blocks, Stop};
use std::io::{self, Read};
use std::sync::mpsc;

pub use merge::TrecFile;
pub use write::{
    write_qrels, write_qrels_rows, write_run, write_run_rows, write_subtopic_qrels_rows, TrecRows,
};

/// Block size of the parallel reader: a block is cut at its last newline (it
/// grows for a longer line) and parsed by one task.
const PAR_BLOCK: usize = 512 << 10;

/// The name used in messages for standard input.
const STDIN_NAME: &str = "<stdin>";

/// How a file is read: the options of [`read_trec_with`] and
/// [`for_each_run_chunk_with`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReadOptions {
    /// Store scores rounded to 32-bit floats (see
    /// [`Builder::new`](crate::core::encode::Builder::new)).
    pub round_f32: bool,
    /// The longest line accepted, in bytes (without its newline): a longer
    /// one is an [`Error::Parse`] naming it, and is not read further, so that
    /// memory stays bounded whatever the input.  [`MAX_LINE`] by default.
    pub max_line: usize,
    /// Checked between steps of a few blocks: set, the read stops with
    /// [`Error::Interrupted`].
    pub cancel: Cancel,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            round_f32: false,
            max_line: MAX_LINE,
            cancel: Cancel::default(),
        }
    }
}

impl ReadOptions {
    pub fn new(round_f32: bool) -> Self {
        ReadOptions {
            round_f32,
            ..ReadOptions::default()
        }
    }
}

/// The default longest line, 1 MiB: a TREC line is a few dozen bytes; a
/// longer one is a file in another format (or a hostile one).
pub const MAX_LINE: usize = 1 << 20;

/// Read a run or qrels file (`"-"` = stdin); gzip detected by magic bytes.
pub fn read_trec(path: &str, kind: Kind, round_f32: bool) -> Result<Encoded> {
    read_trec_file(path, kind, round_f32).map(|t| t.encoded)
}

/// [`read_trec`], also returning the run's tags.
pub fn read_trec_file(path: &str, kind: Kind, round_f32: bool) -> Result<TrecFile> {
    read_trec_with(path, kind, &ReadOptions::new(round_f32))
}

/// [`read_trec_file`] with all the options.
pub fn read_trec_with(path: &str, kind: Kind, opts: &ReadOptions) -> Result<TrecFile> {
    if path == "-" {
        return parse_trec_with(io::stdin(), STDIN_NAME, kind, opts);
    }
    let file = open(path)?;
    // Only a regular file can be read again (a FIFO would block for ever, or
    // give other lines): the lines of any other input are kept while reading.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return parse_trec_with(file, path, kind, opts);
    }
    match parse_any(file, path, kind, opts, PAR_BLOCK, false) {
        Err(Error::DuplicateDocument { query, doc }) => {
            // Split blocks of one query hid the duplicate from the online check:
            // find its line by reading the file again (rare; cost irrelevant).
            Err(match find_duplicate(path, &query, &doc) {
                Ok(Some((first, line))) => dup_error(path, line, &query, &doc, Some(first)),
                _ => dup_error(path, 0, &query, &doc, None),
            })
        }
        other => other,
    }
}

/// Parse from any reader (plain or gzip, detected by magic bytes); `file` names
/// the source in error messages.
pub fn parse_trec(
    reader: impl Read + Send,
    file: &str,
    kind: Kind,
    round_f32: bool,
) -> Result<Encoded> {
    parse_trec_file(reader, file, kind, round_f32).map(|t| t.encoded)
}

/// [`parse_trec`], also returning the run's tags.
pub fn parse_trec_file(
    reader: impl Read + Send,
    file: &str,
    kind: Kind,
    round_f32: bool,
) -> Result<TrecFile> {
    parse_trec_with(reader, file, kind, &ReadOptions::new(round_f32))
}

/// [`parse_trec_file`] with all the options.
pub fn parse_trec_with(
    reader: impl Read + Send,
    file: &str,
    kind: Kind,
    opts: &ReadOptions,
) -> Result<TrecFile> {
    parse_any(reader, file, kind, opts, PAR_BLOCK, true).map_err(|e| match e {
        Error::DuplicateDocument { query, doc } => dup_error(file, 0, &query, &doc, None),
        e => e,
    })
}

/// Read a run file (`"-"` = stdin; gzip detected by magic bytes) in chunks of
/// whole queries, for scoring a run larger than memory (`stream.rs`).
///
/// Rows are collected until at least `chunk_rows` are held *and* a new query
/// starts; that chunk is encoded (an [`Encoded`] of its queries only) and
/// handed to `on_chunk`, which owns it, and the next chunk starts empty.  So a
/// chunk holds `chunk_rows` rows plus the rest of one query at most.  Each
/// query's lines must be consecutive: a query that appears again after another
/// one is an [`Error::Parse`] naming it and the line (reading it whole, with
/// [`read_trec`], has no such restriction).  Returns the first and last tags.
pub fn for_each_run_chunk(
    path: &str,
    round_f32: bool,
    chunk_rows: usize,
    on_chunk: impl FnMut(Encoded) -> Result<()> + Send,
) -> Result<(Option<String>, Option<String>)> {
    for_each_run_chunk_with(path, &ReadOptions::new(round_f32), chunk_rows, on_chunk)
}

/// [`for_each_run_chunk`] with all the options.
pub fn for_each_run_chunk_with(
    path: &str,
    opts: &ReadOptions,
    chunk_rows: usize,
    mut on_chunk: impl FnMut(Encoded) -> Result<()> + Send,
) -> Result<(Option<String>, Option<String>)> {
    if path == "-" {
        run_chunks(
            io::stdin(),
            STDIN_NAME,
            opts,
            chunk_rows,
            PAR_BLOCK,
            &mut on_chunk,
        )
    } else {
        run_chunks(
            open(path)?,
            path,
            opts,
            chunk_rows,
            PAR_BLOCK,
            &mut on_chunk,
        )
    }
}

/// [`for_each_run_chunk`] from a reader, with blocks of `block` bytes: the
/// parallel reader of [`parse_any`], whose merging cuts the rows into chunks.
fn run_chunks(
    r: impl Read + Send,
    file: &str,
    opts: &ReadOptions,
    chunk_rows: usize,
    block: usize,
    on_chunk: &mut (dyn FnMut(Encoded) -> Result<()> + Send),
) -> Result<(Option<String>, Option<String>)> {
    let chunker = Chunker {
        round_f32: opts.round_f32,
        min_rows: chunk_rows.max(1),
        done: hashbrown::HashMap::new(),
        open_line: 0,
        on_chunk,
    };
    let mut m = Merger::new(file, Kind::Run, opts.round_f32);
    m.chunks = Some(chunker);
    let mut m = parse_blocks(r, m, Kind::Run, opts, block)?;
    if !m.b.is_empty() {
        m.cut()?;
    }
    Ok((
        m.first_tag.as_ref().map(|t| show(t)),
        m.first_tag.as_ref().map(|_| show(&m.last_tag)),
    ))
}

/// Parse, leaving a duplicate split across blocks as `DuplicateDocument`:
/// the parallel reader, with blocks of `block` bytes.
/// `row_lines`: keep each row's line, to name the lines of a duplicate split
/// across blocks without reading the input again (4 bytes a row).
fn parse_any(
    r: impl Read + Send,
    file: &str,
    kind: Kind,
    opts: &ReadOptions,
    block: usize,
    row_lines: bool,
) -> Result<TrecFile> {
    let mut merger = Merger::new(file, kind, opts.round_f32);
    if row_lines {
        merger.row_lines = Some(Default::default());
    }
    parse_blocks(r, merger, kind, opts, block)?.finish()
}

/// [`parse_any`] up to the builder's `finish`, into `merger`; with its
/// `chunks`, the rows are handed out in chunks of whole queries as they are
/// merged.  An error is the first in file order: one found while reading
/// comes after any duplicate split across blocks in the lines before it.
fn parse_blocks<'f, 'c>(
    r: impl Read + Send,
    mut merger: Merger<'f, 'c>,
    kind: Kind,
    opts: &ReadOptions,
    block: usize,
) -> Result<Merger<'f, 'c>> {
    match read_into(r, &mut merger, kind, opts, block) {
        Ok(()) => Ok(merger),
        Err(Error::Interrupted) => Err(Error::Interrupted),
        // A chunked read checks every query as it ends.
        Err(e) if merger.chunks.is_some() => Err(e),
        Err(e) => Err(merger.split_duplicate().unwrap_or(e)),
    }
}

/// The reading and parsing of [`parse_blocks`].
fn read_into(
    r: impl Read + Send,
    merger: &mut Merger<'_, '_>,
    kind: Kind,
    opts: &ReadOptions,
    block: usize,
) -> Result<()> {
    let file = merger.file;
    let r = maybe_gunzip(r, file)?;
    // Blocks parsed per step: two per thread, so that the step's last block
    // leaves little idle time, and memory in flight stays small (see the
    // module doc: the allocator keeps it after the load).
    let batch = 2 * rayon::current_num_threads().max(1);
    let max_line = opts.max_line;
    std::thread::scope(|s| -> Result<()> {
        let (tx, rx) = mpsc::sync_channel::<std::result::Result<Vec<u8>, Stop>>(batch);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        s.spawn(move || read_blocks(r, file, block, max_line, &tx, &free_rx));
        let mut spare: Vec<Parsed> = Vec::new();
        let mut pending: Vec<Parsed> = Vec::new();
        let mut end = false;
        loop {
            // A step is a few blocks per thread: Ctrl-C is seen within one.
            opts.cancel.check()?;
            let mut cur: Vec<Parsed> = Vec::with_capacity(batch);
            let mut read_err = None;
            while !end && cur.len() < batch {
                match rx.recv() {
                    Ok(Ok(raw)) => {
                        let mut p = spare.pop().unwrap_or_default();
                        p.raw = raw;
                        cur.push(p);
                    }
                    Ok(Err(e)) => {
                        read_err = Some(e);
                        end = true;
                    }
                    Err(_) => end = true,
                }
            }
            if cur.is_empty() && pending.is_empty() {
                return read_err.map_or(Ok(()), |e| Err(stopped(e, merger, max_line)));
            }
            // Merge the previous step's blocks (in file order) while this
            // step's are parsed.
            let (merged, ()) = rayon::join(
                || pending.iter().try_for_each(|p| merger.merge(p)),
                || cur.par_iter_mut().for_each(|p| p.parse(kind, max_line)),
            );
            merged?;
            for mut p in pending.drain(..) {
                // The reader may have stopped: then the buffer is just freed.
                let _ = free_tx.send(std::mem::take(&mut p.raw));
                spare.push(p);
            }
            pending = cur;
            if let Some(e) = read_err {
                // An error in the blocks read before the I/O error comes first.
                pending.iter().try_for_each(|p| merger.merge(p))?;
                return Err(stopped(e, merger, max_line));
            }
        }
    })
}

/// The error for the reading thread's stop, after every block it sent.
fn stopped(stop: Stop, merger: &Merger<'_, '_>, max_line: usize) -> Error {
    match stop {
        Stop::Io(e) => e,
        Stop::LongLine => Error::Parse {
            file: merger.file.to_string(),
            line: merger.lines() + 1,
            msg: parse::long_line(max_line),
        },
    }
}
