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
//!   found by reading the file a second time (for stdin or a generic reader the
//!   line is not known: line 0).
//! * Line numbers are physical (1-based, counting comments and blank lines).
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
//! Splitting a line: one pass over the block computes a bitmap of separator
//! bytes, eight bytes at a time (SWAR); each line's fields are then found from
//! a 128-bit window of it with `trailing_zeros`, without a branch per byte or
//! per field (lines of 128 bytes or more use a byte loop).  A plain line
//! (exactly 6 run or 4 qrels fields, single separators, a newline right after
//! the last field) also gets its end from the bitmap ([`split_plain`]); other
//! lines are found with `memchr` (a call per line was ~120 of the ~1,180
//! instructions a line; 1,027 since (1,019 before both splitters took the same
//! `window`), 7% less CPU: 1.48 s against 1.58 for the
//! 10M-line run, median of 12).  Values are parsed
//! from the bytes by `fast-float2`.  gzip input is recognised by its magic bytes
//! (`1f 8b`), whatever the file name; concatenated members are read.
//! [`for_each_run_chunk`] reads a run grouped by query in chunks of whole
//! queries instead (scoring a run larger than memory: `stream.rs`), with the
//! same blocks parsed in parallel: the merging step cuts a chunk once it holds
//! enough rows and a new query starts, and hands it to the caller (who scores
//! it, on the pool, while the next blocks are parsed).  It was line by line on
//! one thread: 2.0 s to score the benchmark run with 1M-row chunks, now 1.15 s,
//! and 0.9 s with 100k-row chunks (the default of `evaluate_files` since): a
//! 1M-row chunk's arrays (~40 MB) are above glibc's largest `mmap` threshold,
//! so each chunk was mapped, faulted in page by page and unmapped again (sys
//! time 0.38 s against 0.20 s); below it the heap reuses the memory.  Smaller
//! chunks (30k, 10k rows) cost more in per-chunk work than they save.
//!
//! Measured on the 10M-line benchmark run (646 MiB, 2 cores; `bench_read`,
//! `bench_parse_only`): the single-threaded reader took ~1.1 s to parse and
//! ~1.3 s in `finish`; now ~0.95 s to parse (1.6 s of CPU, of which ~0.1 s is
//! the kernel's copy in the reading thread and ~0.2 s page faults of the
//! growing rows) and ~0.15 s in `finish`.  `Run.from_trec` in a fresh Python
//! process: 2.2-2.6 s and +497 MiB before, 0.97-1.04 s and +430 MiB after (the
//! arrays themselves: 417 MiB); its gzip copy 4.0-4.5 s before, 2.3-2.4 s after
//! (decompression alone is 1.75 s on one core: gzip input is bound by it).
//!
//! Where the parse's CPU goes (third session, `bench_parse_only`, 1.35 s of CPU
//! for the 10M lines, found by taking parts out of `Parsed::parse`): the float
//! fields ~0.15-0.2 s (17-digit scores: fast-float2's slow path half the
//! time), the duplicate check of each segment ~0.15-0.2 s, and ~1.0 s for the
//! rest (splitting, copying rows, the kernel's read copy, page faults), with no
//! hot spot in the profile.  So half the speed of `cat` (3.6 GB/s: ~36 ns of
//! CPU a line on 2 cores) is out of reach of a parser that keeps every row.
//!
//! Why not (measured, kept here so that nobody tries again):
//!
//! * `str::parse::<f64>` after `from_utf8`: ~45 ns a score field, of which ~20
//!   are the UTF-8 check of a short string; `fast-float2` parses the bytes in
//!   ~22 ns with the same algorithm, and accepts exactly the same syntax with
//!   the same values (30M random strings compared; a proptest keeps it so).
//! * SWAR on each line (8 bytes at a time from the field start): no faster
//!   than the byte loop, the loop exit at each field end is still a mispredicted
//!   branch; the cost is the branches, not the bytes.  The bitmap is ~2x faster.
//! * Reading the whole file first, or mapping it: memory the size of the file
//!   (and `mmap` is `unsafe`); the reading thread overlaps the kernel copy with
//!   the parsing anyway.
//! * Line ends from a newline bitmap computed with the separator bitmap, in
//!   place of `memchr_iter` (whose per-line call costs ~120 instructions of the
//!   ~1,180 a line, callgrind): the second mask made `classify` 1.7 times the
//!   instructions (one fused pass: 2.5 times, the compiler no longer vectorises
//!   it) and walking the bitmap added ~30 a line in the loop: 4% more in all.
//!   Comparing query ids with two word loads instead of `memcmp` (`same_bytes`)
//!   did help: -1.5%; so did taking a plain line's end from the fields already
//!   found (`split_plain`, a few byte checks): -8.8%, and -5.3% more by
//!   walking only the field ends (one `u128` bit scan a field, not two).
//! * A hand-written decimal parser for the scores (8 digits at a time, the
//!   exact `m / 10^k` division below 2^53, an exact `u128` division above, and
//!   fast-float2 for anything else): the same bits on all 10M benchmark scores,
//!   but 20-30% slower than fast-float2 (hot in cache, 38 ns against 32).
//! * Transparent huge pages for the row arrays (`madvise`; the machine has
//!   THP and defrag set to `madvise`): 500 MB touched took 1.48 s the first
//!   time (direct compaction), against 0.23 s with 4 KiB pages, and 0.08 s
//!   only once compacted memory was at hand.  A stall that size on a user's
//!   first load is worse than the faults it saves.
//! * More memory in flight (1 MiB blocks, 4 per thread a step: ~45 MiB of
//!   buffers): no faster, and glibc keeps most of it after the load (freed
//!   blocks in the threads' arenas): +27 MiB of resident memory for good after
//!   reading the benchmark run, +30 MiB at the peak of the whole evaluation.
//!   512 KiB and 2 per thread: +7 MiB; 128 KiB blocks: more per-block
//!   overhead and no less memory.

use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::{show, Error, Result};
use crate::core::vocab::Vocab;
use flate2::bufread::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use hashbrown::{DefaultHashBuilder, HashTable};
use rayon::prelude::*;
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::mpsc;

/// Read block size of the sequential reader and of the writer (the buffer
/// grows for a longer line).
const BLOCK: usize = 1 << 20;
/// Block size of the parallel reader: a block is cut at its last newline (it
/// grows for a longer line) and parsed by one task.
const PAR_BLOCK: usize = 512 << 10;
/// The name used in messages for standard input.
const STDIN_NAME: &str = "<stdin>";

/// A file read: the encoded rows and, for a run, its tags.
#[derive(Debug, Clone, PartialEq)]
pub struct TrecFile {
    pub encoded: Encoded,
    /// Tag (6th field) of the first run line; `None` for qrels or an empty run.
    pub tag: Option<String>,
    /// Tag of the last run line: what trec_eval prints as `runid`.
    pub last_tag: Option<String>,
}

/// Read a run or qrels file (`"-"` = stdin); gzip detected by magic bytes.
pub fn read_trec(path: &str, kind: Kind, round_f32: bool) -> Result<Encoded> {
    read_trec_file(path, kind, round_f32).map(|t| t.encoded)
}

/// [`read_trec`], also returning the run's tags.
pub fn read_trec_file(path: &str, kind: Kind, round_f32: bool) -> Result<TrecFile> {
    if path == "-" {
        return parse_trec_file(io::stdin(), STDIN_NAME, kind, round_f32);
    }
    let file = open(path)?;
    match parse_any(file, path, kind, round_f32, PAR_BLOCK) {
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
    parse_any(reader, file, kind, round_f32, PAR_BLOCK).map_err(|e| match e {
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
    mut on_chunk: impl FnMut(Encoded) -> Result<()> + Send,
) -> Result<(Option<String>, Option<String>)> {
    if path == "-" {
        run_chunks(
            io::stdin(),
            STDIN_NAME,
            round_f32,
            chunk_rows,
            PAR_BLOCK,
            &mut on_chunk,
        )
    } else {
        run_chunks(
            open(path)?,
            path,
            round_f32,
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
    round_f32: bool,
    chunk_rows: usize,
    block: usize,
    on_chunk: &mut (dyn FnMut(Encoded) -> Result<()> + Send),
) -> Result<(Option<String>, Option<String>)> {
    let chunker = Chunker {
        round_f32,
        min_rows: chunk_rows.max(1),
        done: hashbrown::HashMap::new(),
        open_line: 0,
        on_chunk,
    };
    let mut m = parse_blocks(r, file, Kind::Run, round_f32, block, Some(chunker))?;
    if !m.b.is_empty() {
        m.cut()?;
    }
    Ok((
        m.first_tag.as_ref().map(|t| show(t)),
        m.first_tag.as_ref().map(|_| show(&m.last_tag)),
    ))
}

/// Rows to write, borrowed: the layout of [`Encoded`] (what the bindings hold
/// as numpy arrays), so writing from Python needs no copy.
#[derive(Clone, Copy, Debug)]
pub struct TrecRows<'a> {
    pub queries: Vocab<'a>,
    pub docs: Vocab<'a>,
    pub offsets: &'a [i64],
    pub doc_ids: &'a [u32],
    pub values: &'a [f64],
}

impl<'a> TrecRows<'a> {
    pub fn new(enc: &'a Encoded) -> Result<Self> {
        Ok(TrecRows {
            queries: Vocab::new(&enc.queries.bytes, &enc.queries.offsets)?,
            docs: Vocab::new(&enc.docs.bytes, &enc.docs.offsets)?,
            offsets: &enc.offsets,
            doc_ids: &enc.doc_ids,
            values: &enc.values,
        })
    }
}

/// Write a run: `qid Q0 doc rank score tag`, queries in id order, rows in the
/// stored (ranking) order with ranks 1, 2, ...  `.gz` paths are compressed;
/// `"-"` is stdout.  Scores are printed so that they read back exactly.
pub fn write_run(path: &str, enc: &Encoded, tag: &str) -> Result<()> {
    write_run_rows(path, TrecRows::new(enc)?, tag)
}

/// Write qrels: `qid 0 doc label`; integer labels without a decimal point,
/// others printed so that they read back exactly.
pub fn write_qrels(path: &str, enc: &Encoded) -> Result<()> {
    write_qrels_rows(path, TrecRows::new(enc)?)
}

/// [`write_run`] from borrowed rows.
pub fn write_run_rows(path: &str, rows: TrecRows<'_>, tag: &str) -> Result<()> {
    if tag.is_empty() || tag.bytes().any(is_space) {
        return Err(Error::InvalidInput(format!(
            "the run tag {tag:?} must be non-empty and contain no whitespace"
        )));
    }
    write_rows(path, rows, |out, q, d, rank, v| {
        out.extend_from_slice(q);
        out.extend_from_slice(b" Q0 ");
        out.extend_from_slice(d);
        // Writing to a Vec cannot fail.
        let _ = write!(out, " {rank} ");
        push_value(out, v);
        out.push(b' ');
        out.extend_from_slice(tag.as_bytes());
        out.push(b'\n');
    })
}

/// [`write_qrels`] from borrowed rows.
pub fn write_qrels_rows(path: &str, rows: TrecRows<'_>) -> Result<()> {
    write_rows(path, rows, |out, q, d, _rank, v| {
        out.extend_from_slice(q);
        out.extend_from_slice(b" 0 ");
        out.extend_from_slice(d);
        out.push(b' ');
        push_value(out, v);
        out.push(b'\n');
    })
}

// ---------------------------------------------------------------------------
// Reading

/// C `isspace` on ASCII: space, \t, \n, \v, \f, \r.
#[inline(always)]
fn is_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// Whitespace-separated fields of one line.
struct Fields<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && is_space(s[i]) {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        loop {
            // Every separator is <= b' ': one comparison per byte of a field.
            while i < s.len() && s[i] > b' ' {
                i += 1;
            }
            if i == s.len() || is_space(s[i]) {
                break;
            }
            i += 1; // a control byte that is not a separator
        }
        self.i = i;
        Some(&s[start..i])
    }
}

fn io_error(file: &str, e: io::Error) -> Error {
    Error::Io {
        file: file.to_string(),
        msg: e.to_string(),
    }
}

fn open(path: &str) -> Result<File> {
    File::open(path).map_err(|e| io_error(path, e))
}

/// A field for a message: quoted, shortened if long.
fn quote(field: &[u8]) -> String {
    const MAX: usize = 60;
    if field.len() <= MAX {
        format!("{:?}", show(field))
    } else {
        format!("{:?}...", show(&field[..MAX]))
    }
}

fn dup_error(file: &str, line: u64, query: &str, doc: &str, first: Option<u64>) -> Error {
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

/// Feed the complete lines of `r` to `on_line` (without the `\n`; a last line
/// without one included).  `on_line` returns `Ok(false)` to stop early.
fn for_each_line<R: Read>(
    mut r: R,
    file: &str,
    mut on_line: impl FnMut(&[u8]) -> Result<bool>,
) -> Result<()> {
    let mut buf = vec![0u8; BLOCK];
    let (mut start, mut filled) = (0usize, 0usize);
    loop {
        if filled == buf.len() {
            if start > 0 {
                buf.copy_within(start..filled, 0);
                filled -= start;
                start = 0;
            } else {
                // One line longer than the buffer.
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = match r.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(file, e)),
        };
        if n == 0 {
            break;
        }
        let scan = filled;
        filled += n;
        let mut pos = start;
        for nl in memchr::memchr_iter(b'\n', &buf[scan..filled]) {
            let end = scan + nl;
            if !on_line(&buf[pos..end])? {
                return Ok(());
            }
            pos = end + 1;
        }
        start = pos;
    }
    if start < filled {
        on_line(&buf[start..filled])?;
    }
    Ok(())
}

/// `r` itself, or a gzip decoder over it if it starts with the gzip magic.
fn maybe_gunzip<'a, R: Read + Send + 'a>(
    mut r: R,
    file: &str,
) -> Result<Box<dyn Read + Send + 'a>> {
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match r.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(file, e)),
        }
    }
    let r = io::Cursor::new(head[..got].to_vec()).chain(r);
    if head[..got] == [0x1f, 0x8b] {
        Ok(Box::new(MultiGzDecoder::new(BufReader::with_capacity(
            1 << 18,
            r,
        ))))
    } else {
        Ok(Box::new(r))
    }
}

/// Parse, leaving a duplicate split across blocks as `DuplicateDocument`:
/// the parallel reader, with blocks of `block` bytes.
fn parse_any(
    r: impl Read + Send,
    file: &str,
    kind: Kind,
    round_f32: bool,
    block: usize,
) -> Result<TrecFile> {
    parse_blocks(r, file, kind, round_f32, block, None)?.finish()
}

/// [`parse_any`] up to the builder's `finish`; with `chunks`, the rows are
/// handed out in chunks of whole queries as they are merged.
fn parse_blocks<'f, 'c>(
    r: impl Read + Send,
    file: &'f str,
    kind: Kind,
    round_f32: bool,
    block: usize,
    chunks: Option<Chunker<'c>>,
) -> Result<Merger<'f, 'c>> {
    let r = maybe_gunzip(r, file)?;
    // Blocks parsed per step: two per thread, so that the step's last block
    // leaves little idle time, and memory in flight stays small (see the
    // module doc: the allocator keeps it after the load).
    let batch = 2 * rayon::current_num_threads().max(1);
    let mut merger = Merger::new(file, kind, round_f32);
    merger.chunks = chunks;
    std::thread::scope(|s| -> Result<()> {
        let (tx, rx) = mpsc::sync_channel::<Result<Vec<u8>>>(batch);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        s.spawn(move || read_blocks(r, file, block, &tx, &free_rx));
        let mut spare: Vec<Parsed> = Vec::new();
        let mut pending: Vec<Parsed> = Vec::new();
        let mut end = false;
        loop {
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
                return read_err.map_or(Ok(()), Err);
            }
            // Merge the previous step's blocks (in file order) while this
            // step's are parsed.
            let (merged, ()) = rayon::join(
                || pending.iter().try_for_each(|p| merger.merge(p)),
                || cur.par_iter_mut().for_each(|p| p.parse(kind)),
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
                return Err(e);
            }
        }
    })?;
    Ok(merger)
}

/// The reading thread of [`parse_any`]: blocks of whole lines of about `size`
/// bytes (the last one may lack its newline) sent in file order; buffers come
/// back through `free` to be reused.  Stops at the end, at an I/O error (sent),
/// or when the receiver is gone.
fn read_blocks(
    mut r: impl Read,
    file: &str,
    size: usize,
    tx: &mpsc::SyncSender<Result<Vec<u8>>>,
    free: &mpsc::Receiver<Vec<u8>>,
) {
    let size = size.max(1);
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let mut buf = free.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry);
        carry.clear();
        loop {
            let want = size.saturating_sub(buf.len()).max(size / 2).max(1);
            buf.reserve(want);
            let got = match (&mut r).take(want as u64).read_to_end(&mut buf) {
                Ok(n) => n,
                Err(e) => {
                    let _ = tx.send(Err(io_error(file, e)));
                    return;
                }
            };
            eof = got < want;
            if eof {
                break;
            }
            if let Some(nl) = memchr::memrchr(b'\n', &buf) {
                carry.extend_from_slice(&buf[nl + 1..]);
                buf.truncate(nl + 1);
                break;
            }
            // No newline yet: one line longer than the block, read on.
        }
        if !buf.is_empty() && tx.send(Ok(buf)).is_err() {
            return;
        }
    }
}

/// One block of whole lines and what [`Parsed::parse`] makes of it: its rows,
/// the runs of consecutive rows of one query (segments), and the first error.
/// Line numbers are 1-based within the block.
#[derive(Default)]
struct Parsed {
    raw: Vec<u8>,
    /// Lines in the block (physical, counting comments and blank lines).
    lines: u64,
    /// Row `i`'s document id is `docs[bounds[i]..bounds[i + 1]]`.
    docs: Vec<u8>,
    bounds: Vec<u32>,
    values: Vec<f64>,
    /// Line of each row.
    line_of: Vec<u32>,
    /// (query id as a range of `raw`, first row) of each segment.
    segs: Vec<(usize, usize, u32)>,
    /// Run tags of the first and last rows, as ranges of `raw`.
    tags: Option<((usize, usize), (usize, usize))>,
    /// The first error: line and message (parsing stops there).
    err: Option<(u64, BlockError)>,
    /// The current segment's rows, to find a document listed twice.
    seen: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// Separator bitmap of `raw` (see [`classify`]).
    bits: Vec<u64>,
}

enum BlockError {
    Msg(String),
    /// A document listed twice in one segment; `first` is the earlier line.
    Dup {
        first: u64,
        query: String,
        doc: String,
    },
}

/// The range of `part` (a subslice of `whole`) in `whole`.
fn range_in(whole: &[u8], part: &[u8]) -> (usize, usize) {
    let a = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    (a, a + part.len())
}

impl Parsed {
    fn parse(&mut self, kind: Kind) {
        let Parsed {
            raw,
            lines,
            docs,
            bounds,
            values,
            line_of,
            segs,
            tags,
            err,
            seen,
            hasher,
            bits,
        } = self;
        docs.clear();
        bounds.clear();
        bounds.push(0);
        values.clear();
        line_of.clear();
        segs.clear();
        *tags = None;
        *err = None;
        if raw.len() >= u32::MAX as usize {
            *lines = 1;
            *err = Some((1, BlockError::Msg("a line longer than 4 GiB".into())));
            return;
        }
        let raw: &[u8] = raw;
        classify(raw, bits);
        let mut line_no = 0u32;
        let mut cur_q: &[u8] = &[];
        let mut pos = 0usize;
        let plain_fields = match kind {
            Kind::Run => 6,
            Kind::Qrels => 4,
        };
        while pos < raw.len() {
            let m = window(bits, pos);
            let (split, end) = split_plain(raw, m, pos, plain_fields).unwrap_or_else(|| {
                let end = memchr::memchr(b'\n', &raw[pos..]).map_or(raw.len(), |i| pos + i);
                let split = split_bits(raw, m, pos, end)
                    .unwrap_or_else(|| split_slow(&raw[pos..end], kind));
                (split, end)
            });
            pos = end + 1;
            line_no += 1;
            let (qid, doc, value, tag) = match row_of(split, kind) {
                Ok(Some(row)) => row,
                Ok(None) => continue,
                Err(msg) => {
                    *err = Some((line_no as u64, BlockError::Msg(msg)));
                    break;
                }
            };
            let row = values.len() as u32;
            if segs.is_empty() || !same_bytes(qid, cur_q) {
                cur_q = qid;
                let (a, b) = range_in(raw, qid);
                segs.push((a, b, row));
                reset_table(seen);
            }
            let h = hasher.hash_one(doc);
            let doc_of = |r: u32| {
                let r = r as usize;
                docs.get(bounds[r] as usize..bounds[r + 1] as usize)
                    .unwrap_or_default()
            };
            // One probe: find the document, or take its free slot.
            match seen.entry(h, |&r| doc_of(r) == doc, |&r| hasher.hash_one(doc_of(r))) {
                hashbrown::hash_table::Entry::Occupied(e) => {
                    *err = Some((
                        line_no as u64,
                        BlockError::Dup {
                            first: line_of[*e.get() as usize] as u64,
                            query: show(qid),
                            doc: show(doc),
                        },
                    ));
                    break;
                }
                hashbrown::hash_table::Entry::Vacant(e) => {
                    e.insert(row);
                }
            }
            docs.extend_from_slice(doc);
            bounds.push(docs.len() as u32);
            values.push(value);
            line_of.push(line_no);
            if kind == Kind::Run {
                let t = range_in(raw, tag);
                match tags {
                    Some((_, last)) => *last = t,
                    None => *tags = Some((t, t)),
                }
            }
        }
        *lines = line_no as u64;
    }
}

/// `a == b` for short byte strings (query ids) without a `memcmp` call: two
/// overlapping loads for 4 to 16 bytes.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| {
        u64::from_le_bytes(
            s.get(i..i + 8)
                .and_then(|x| x.try_into().ok())
                .unwrap_or_default(),
        )
    };
    let w4 = |s: &[u8], i: usize| {
        u32::from_le_bytes(
            s.get(i..i + 4)
                .and_then(|x| x.try_into().ok())
                .unwrap_or_default(),
        )
    };
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        _ => a == b,
    }
}

/// Empty a duplicate table; cost proportional to its last use (a table grown
/// by one huge query is replaced rather than cleared again and again).
fn reset_table(t: &mut HashTable<u32>) {
    let n = t.len().max(64);
    if t.capacity() > 4 * n {
        *t = HashTable::with_capacity(n);
    } else {
        t.clear();
    }
}

/// Appends parsed blocks, in file order, to the [`Builder`]: turns block line
/// numbers into file line numbers and checks the documents of a query whose
/// lines cross a block boundary (each block checked its own).
struct Merger<'f, 'c> {
    file: &'f str,
    b: Builder,
    /// Reading in chunks ([`for_each_run_chunk`]); `None` reads the file whole.
    chunks: Option<Chunker<'c>>,
    /// Lines in the blocks merged so far.
    lines: u64,
    first_tag: Option<Vec<u8>>,
    last_tag: Vec<u8>,
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
}

/// The state of a chunked read (see [`for_each_run_chunk`]).
struct Chunker<'c> {
    /// The builder option of every chunk (a chunk is always a run).
    round_f32: bool,
    min_rows: usize,
    /// Every query whose lines have ended, with the line they started on.
    done: hashbrown::HashMap<Vec<u8>, u64>,
    /// The line the open query's lines started on.
    open_line: u64,
    on_chunk: &'c mut (dyn FnMut(Encoded) -> Result<()> + Send),
}

impl<'f, 'c> Merger<'f, 'c> {
    fn new(file: &'f str, kind: Kind, round_f32: bool) -> Self {
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
        }
    }

    fn merge(&mut self, p: &Parsed) -> Result<()> {
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
    fn cut(&mut self) -> Result<()> {
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

    fn finish(self) -> Result<TrecFile> {
        let encoded = self.b.finish()?;
        Ok(TrecFile {
            encoded,
            last_tag: self.first_tag.as_ref().map(|_| show(&self.last_tag)),
            tag: self.first_tag.map(|t| show(&t)),
        })
    }
}

/// A builder for TREC input: each block of consecutive lines of one query is
/// checked for duplicates while reading.
fn new_builder(kind: Kind, round_f32: bool) -> Builder {
    let mut b = Builder::new(kind, round_f32);
    b.assume_unique_within_blocks();
    b
}

/// The sequential reader (line by line into the builder); the tests compare
/// it with [`parse_any`].
#[cfg(test)]
fn parse_sequential(
    r: impl Read + Send,
    file: &str,
    kind: Kind,
    round_f32: bool,
) -> Result<TrecFile> {
    let r = maybe_gunzip(r, file)?;
    let mut p = Parser::new(file, kind, round_f32);
    for_each_line(r, file, |line| p.line(line).map(|()| true))?;
    let Parser {
        b,
        first_tag,
        last_tag,
        ..
    } = p;
    let encoded = b.finish()?;
    Ok(TrecFile {
        encoded,
        last_tag: first_tag.as_ref().map(|_| show(&last_tag)),
        tag: first_tag.map(|t| show(&t)),
    })
}

/// A value field: a finite `f64` in Rust's float syntax (`fast-float2`
/// parses exactly that syntax, correctly rounded, from bytes).
#[inline]
fn parse_value(field: &[u8], what: &str) -> std::result::Result<f64, String> {
    match fast_float2::parse::<f64, _>(field) {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!(
            "{what} {} is not finite (NaN, infinite or out of range)",
            quote(field)
        )),
        Err(_) => Err(format!("{what} {} is not a number", quote(field))),
    }
}

/// A row of a line: (qid, doc, value, tag; the tag is empty for qrels).
type Row<'a> = (&'a [u8], &'a [u8], f64, &'a [u8]);

/// A line's first six fields (empty where missing) and how many fields it
/// has: exact for qrels; for runs, exact below 6 and at least 6 otherwise.
type Split<'a> = ([&'a [u8]; 6], usize);

#[cfg(test)]
/// One line: `None` for a blank or comment line, else (qid, doc, value, tag;
/// the tag is empty for qrels); `Err` is the message for a malformed line.
#[inline]
fn parse_line(line: &[u8], kind: Kind) -> std::result::Result<Option<Row<'_>>, String> {
    row_of(split_slow(line, kind), kind)
}

/// [`parse_line`] after splitting.
#[inline(always)]
fn row_of((f, n): Split<'_>, kind: Kind) -> std::result::Result<Option<Row<'_>>, String> {
    let [qid, _iter, doc, rank_or_label, score, tag] = f;
    if n == 0 || qid.first() == Some(&b'#') {
        return Ok(None); // blank or comment
    }
    match kind {
        Kind::Run => {
            if n < 6 {
                return Err(format!(
                    "a run line needs at least 6 fields (qid iter docno rank score tag), found {n}"
                ));
            }
            let v = parse_value(score, "the score (field 5)")?;
            Ok(Some((qid, doc, v, tag)))
        }
        Kind::Qrels => {
            if n != 4 {
                return Err(format!(
                    "a qrels line needs exactly 4 fields (qid iter docno label), found {n}"
                ));
            }
            let v = parse_value(rank_or_label, "the label (field 4)")?;
            Ok(Some((qid, doc, v, &[])))
        }
    }
}

/// Split a line byte by byte (any length).
fn split_slow(line: &[u8], kind: Kind) -> Split<'_> {
    let mut fields = Fields { s: line, i: 0 };
    let mut f: [&[u8]; 6] = [&[]; 6];
    let mut n = 0;
    while n < 6 {
        match fields.next() {
            Some(x) => f[n] = x,
            None => break,
        }
        n += 1;
    }
    if kind == Kind::Qrels && n == 6 {
        n += fields.count();
    }
    (f, n)
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` that is below `n` (`n <= 128`), exactly
/// (no carry crosses bytes).
#[inline(always)]
fn bytes_below(x: u64, n: u8) -> u64 {
    !(((x & !HIGH_BITS) + LOW_BITS * (0x80 - n as u64)) | x) & HIGH_BITS
}

/// One bit per byte of `raw`, set for the separators (C `isspace`), in words
/// of 64 bytes; two all-ones words after the end.  Eight bytes at a time
/// (SWAR): about 20 times cheaper than a branch per byte.
fn classify(raw: &[u8], bits: &mut Vec<u64>) {
    bits.clear();
    let chunks = raw.chunks_exact(64);
    let rest = chunks.remainder();
    bits.extend(chunks.map(|c| {
        let mut m = 0u64;
        for (j, w) in c.chunks_exact(8).enumerate() {
            let x = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default());
            // isspace: 0x20, or 0x09..=0x0d.
            let sp =
                bytes_below(x ^ (LOW_BITS * 0x20), 1) | (bytes_below(x, 14) & !bytes_below(x, 9));
            // The high bits, gathered into the top byte by the multiply.
            m |= ((sp >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * j);
        }
        m
    }));
    let mut m = 0u64;
    for (j, &b) in rest.iter().enumerate() {
        m |= (is_space(b) as u64) << j;
    }
    bits.push(m | (!0u64).checked_shl(rest.len() as u32).unwrap_or(0));
    bits.extend([!0, !0]);
}

/// The 128 bits of the separator bitmap (see [`classify`]) from byte `pos` on;
/// past the bitmap's end, separators.
#[inline(always)]
fn window(bits: &[u64], pos: usize) -> u128 {
    let (wi, off) = (pos / 64, (pos % 64) as u32);
    let word = |i: usize| bits.get(i).copied().unwrap_or(!0) as u128;
    ((word(wi) | (word(wi + 1) << 64)) >> off) | word(wi + 2).checked_shl(128 - off).unwrap_or(0)
}

/// Split the line `raw[pos..end]` from `m`, the [`window`] of the separator
/// bitmap at `pos`, without a branch per byte or per field; `None` for a line
/// of 128 bytes or more.
#[inline(always)]
fn split_bits(raw: &[u8], m: u128, pos: usize, end: usize) -> Option<Split<'_>> {
    let len = end - pos;
    if len >= 128 {
        return None;
    }
    // Past the line's end, separators.
    let m = m | (!0u128 << len);
    // Field starts: a non-separator after a separator (or first); ends: a
    // separator after a non-separator.
    let mut starts = !m & ((m << 1) | 1);
    let mut ends = m & (!m << 1);
    let n = starts.count_ones() as usize;
    let mut f: [&[u8]; 6] = [&[]; 6];
    for slot in f.iter_mut().take(n) {
        let a = starts.trailing_zeros() as usize;
        let b = ends.trailing_zeros() as usize;
        starts &= starts - 1;
        ends &= ends - 1;
        *slot = raw.get(pos + a..pos + b).unwrap_or_default();
    }
    Some((f, n))
}

/// Split the line that starts at `raw[pos]` and find its end, from `m` (the
/// [`window`] of the separator bitmap at `pos`) alone, when it is a plain line: exactly `n` fields (`n` <=
/// 6), the first at `pos`, one separator byte between fields and none of them a
/// newline, and a newline right after the last field, within 128 bytes.  The
/// split and the newline's index; `None` for any other line (the caller looks
/// for its end with `memchr` then: a call per line costs about a tenth of a
/// line's instructions).
#[inline(always)]
fn split_plain(raw: &[u8], m: u128, pos: usize, n: usize) -> Option<(Split<'_>, usize)> {
    // In a plain line the separators before the newline are single bytes, so
    // each set bit ends a field and the next field starts right after it.
    let mut rest = m;
    let mut f: [&[u8]; 6] = [&[]; 6];
    let mut start = 0usize;
    let mut newlines = 0u32;
    for slot in f.iter_mut().take(n) {
        let e = rest.trailing_zeros() as usize;
        rest &= rest.wrapping_sub(1);
        *slot = raw.get(pos + start..pos + e).unwrap_or_default();
        newlines += u32::from(raw.get(pos + e) == Some(&b'\n'));
        start = e + 1;
    }
    // The last field's end.
    let last = start.wrapping_sub(1);
    let end = pos + last;
    // No separator at `pos`, none right after another (empty fields) up to
    // the last field's end.
    let doubled = m & ((m << 1) | 1);
    let plain = n > 0
        && last < 128
        && doubled.trailing_zeros() as usize > last
        // The newline ends the last field, and only that one.
        && raw.get(end) == Some(&b'\n')
        && newlines == 1;
    plain.then_some(((f, n), end))
}

/// The documents of the current block of consecutive lines of one query, with
/// the line each was first seen on.  Exact (compares bytes), and small.
#[cfg(test)]
struct BlockSet {
    arena: Vec<u8>,
    table: HashTable<(usize, usize, u64)>,
    hasher: DefaultHashBuilder,
}

#[cfg(test)]
impl BlockSet {
    fn new() -> Self {
        BlockSet {
            arena: Vec::new(),
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// Add `doc`; if already there, the line it was first seen on.
    #[inline]
    fn insert(&mut self, doc: &[u8], line: u64) -> Option<u64> {
        let h = self.hasher.hash_one(doc);
        let arena = &self.arena;
        if let Some(e) = self.table.find(h, |e| &arena[e.0..e.0 + e.1] == doc) {
            return Some(e.2);
        }
        let start = self.arena.len();
        self.arena.extend_from_slice(doc);
        let (arena, hasher) = (&self.arena, &self.hasher);
        self.table.insert_unique(h, (start, doc.len(), line), |e| {
            hasher.hash_one(&arena[e.0..e.0 + e.1])
        });
        None
    }

    /// Start a new block; cost proportional to the last block's size (a table
    /// grown by one huge block is replaced rather than cleared again and again).
    fn reset(&mut self) {
        let n = self.table.len().max(64);
        if self.table.capacity() > 4 * n {
            self.table = HashTable::with_capacity(n);
            self.arena = Vec::with_capacity(self.arena.len());
        } else {
            self.table.clear();
            self.arena.clear();
        }
    }
}

/// The sequential reader, line by line into the builder: the reference the
/// tests compare the parallel reader with (and a profiling baseline).
#[cfg(test)]
struct Parser<'f> {
    file: &'f str,
    kind: Kind,
    b: Builder,
    line_no: u64,
    /// The current block's query (bytes and id), to skip the lookup.
    cur_q: Vec<u8>,
    cur_id: Option<u32>,
    seen: BlockSet,
    first_tag: Option<Vec<u8>>,
    last_tag: Vec<u8>,
}

#[cfg(test)]
impl<'f> Parser<'f> {
    fn new(file: &'f str, kind: Kind, round_f32: bool) -> Self {
        Parser {
            file,
            kind,
            b: new_builder(kind, round_f32),
            line_no: 0,
            cur_q: Vec::new(),
            cur_id: None,
            seen: BlockSet::new(),
            first_tag: None,
            last_tag: Vec::new(),
        }
    }

    fn err(&self, msg: String) -> Error {
        Error::Parse {
            file: self.file.to_string(),
            line: self.line_no,
            msg,
        }
    }

    fn line(&mut self, line: &[u8]) -> Result<()> {
        self.line_no += 1;
        let (qid, doc, value, tag) = match parse_line(line, self.kind) {
            Ok(Some(row)) => row,
            Ok(None) => return Ok(()),
            Err(msg) => return Err(self.err(msg)),
        };
        if self.kind == Kind::Run {
            if self.first_tag.is_none() {
                self.first_tag = Some(tag.to_vec());
            }
            if self.last_tag != tag {
                self.last_tag.clear();
                self.last_tag.extend_from_slice(tag);
            }
        }
        let q = match self.cur_id {
            Some(q) if self.cur_q == qid => q,
            _ => {
                let q = self.b.query(qid)?;
                self.seen.reset();
                self.cur_q.clear();
                self.cur_q.extend_from_slice(qid);
                self.cur_id = Some(q);
                q
            }
        };
        if let Some(first) = self.seen.insert(doc, self.line_no) {
            return Err(dup_error(
                self.file,
                self.line_no,
                &show(qid),
                &show(doc),
                Some(first),
            ));
        }
        self.b.row(q, doc, value)
    }
}

/// Lines (first, second) where `doc` is listed for `query` in `path`.
fn find_duplicate(path: &str, query: &str, doc: &str) -> Result<Option<(u64, u64)>> {
    let r = maybe_gunzip(open(path)?, path)?;
    let (query, doc) = (query.as_bytes(), doc.as_bytes());
    let (mut line_no, mut first, mut found) = (0u64, None, None);
    for_each_line(r, path, |line| {
        line_no += 1;
        let mut f = Fields { s: line, i: 0 };
        if f.next() == Some(query) && f.nth(1) == Some(doc) {
            match first {
                None => first = Some(line_no),
                Some(a) => {
                    found = Some((a, line_no));
                    return Ok(false);
                }
            }
        }
        Ok(true)
    })?;
    Ok(found)
}

// ---------------------------------------------------------------------------
// Writing

/// Check the layout and that every id can be written as one field.
fn check_rows(r: &TrecRows<'_>) -> Result<()> {
    let bad = |m: &str| Error::InvalidInput(m.to_string());
    let o = r.offsets;
    if o.len() != r.queries.len() + 1 || o[0] != 0 || o.windows(2).any(|w| w[1] < w[0]) {
        return Err(bad(
            "row offsets must start at 0, not decrease, one per query plus one",
        ));
    }
    let rows = o[o.len() - 1] as u64;
    if rows != r.doc_ids.len() as u64 || rows != r.values.len() as u64 {
        return Err(bad("row offsets must end at the number of rows"));
    }
    if r.doc_ids.iter().any(|&d| d as usize >= r.docs.len()) {
        return Err(bad("a document id is out of range"));
    }
    for (vocab, what) in [(r.queries, "query"), (r.docs, "document")] {
        for i in 0..vocab.len() {
            let id = vocab.get(i);
            let leading_hash = what == "query" && id.first() == Some(&b'#');
            if id.is_empty() || id.iter().any(|&b| is_space(b)) || leading_hash {
                let extra = if what == "query" {
                    " or a leading #"
                } else {
                    ""
                };
                return Err(Error::InvalidInput(format!(
                    "{what} id {} cannot be written to a TREC file (empty, whitespace{extra})",
                    quote(id),
                )));
            }
        }
    }
    Ok(())
}

/// Append `v` as the shortest text that reads back exactly (`{}`; `{:e}` for
/// very small or large magnitudes, where `{}` would print many zeros).
fn push_value(out: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    // Writing to a Vec cannot fail.
    let _ = if a == 0.0 || (1e-5..1e16).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

/// Format rows into a buffer, `line(out, qid, doc, rank, value)` appending one
/// line, and write the buffer out in blocks.
fn write_rows(
    path: &str,
    rows: TrecRows<'_>,
    mut line: impl FnMut(&mut Vec<u8>, &[u8], &[u8], usize, f64),
) -> Result<()> {
    check_rows(&rows)?;
    let mut body = |w: &mut dyn Write| -> io::Result<()> {
        let mut out = Vec::with_capacity(BLOCK + 4096);
        for (qi, span) in rows.offsets.windows(2).enumerate() {
            let q = rows.queries.get(qi);
            let (a, b) = (span[0] as usize, span[1] as usize);
            let ranked = rows.doc_ids[a..b].iter().zip(&rows.values[a..b]);
            for (k, (&d, &v)) in ranked.enumerate() {
                line(&mut out, q, rows.docs.get(d as usize), k + 1, v);
                if out.len() >= BLOCK {
                    w.write_all(&out)?;
                    out.clear();
                }
            }
        }
        w.write_all(&out)
    };
    let result = if path == "-" {
        let stdout = io::stdout();
        let mut w = stdout.lock();
        body(&mut w).and_then(|()| w.flush())
    } else {
        let file = File::create(path).map_err(|e| io_error(path, e))?;
        if path.ends_with(".gz") {
            let mut gz = GzEncoder::new(
                BufWriter::with_capacity(1 << 18, file),
                Compression::default(),
            );
            body(&mut gz)
                .and_then(|()| gz.finish())
                .and_then(|mut w| w.flush())
        } else {
            let mut file = file;
            body(&mut file).and_then(|()| file.flush())
        }
    };
    result.map_err(|e| io_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn parse(text: &str, kind: Kind) -> Result<TrecFile> {
        parse_trec_file(text.as_bytes(), "mem.txt", kind, false)
    }

    /// `{qid: [(doc, value)]}` in stored order, as strings.
    fn rows(e: &Encoded) -> Vec<(String, Vec<(String, f64)>)> {
        let (q, d) = (e.queries.view(), e.docs.view());
        (0..q.len())
            .map(|i| {
                let (a, b) = (e.offsets[i] as usize, e.offsets[i + 1] as usize);
                let r = (a..b)
                    .map(|k| (show(d.get(e.doc_ids[k] as usize)), e.values[k]))
                    .collect();
                (show(q.get(i)), r)
            })
            .collect()
    }

    fn distinct_docs(e: &Encoded) -> usize {
        let v = e.docs.view();
        (0..v.len())
            .map(|i| v.get(i))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// The same rows in the same stored order, compared as strings: a file
    /// written in ranking order and read back numbers its documents in that
    /// order, and its input positions are the ranking positions.
    fn assert_same_rows(a: &Encoded, b: &Encoded) {
        assert_eq!(rows(a), rows(b));
    }

    fn parse_err(text: &str, kind: Kind) -> (u64, String) {
        match parse(text, kind) {
            Err(Error::Parse { file, line, msg }) => {
                assert_eq!(file, "mem.txt");
                (line, msg)
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ranklens_trec_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn run_basic_comments_blank_crlf_tabs_extra() {
        let text = "# a comment\n\
                    \n   \t\n\
                    q1 Q0 d1 1 0.5 tagA\r\n\
                    q1\tQ0\td2\t2\t  2.1\ttagB extra fields here\n\
                    \t# indented comment\n\
                    q2 Q0 d#3 x -1e-3 tagC";
        let t = parse(text, Kind::Run).unwrap();
        assert_eq!(t.tag.as_deref(), Some("tagA"));
        assert_eq!(t.last_tag.as_deref(), Some("tagC"));
        assert_eq!(
            rows(&t.encoded),
            vec![
                ("q1".into(), vec![("d2".into(), 2.1), ("d1".into(), 0.5)]),
                ("q2".into(), vec![("d#3".into(), -0.001)]),
            ]
        );
    }

    #[test]
    fn run_field_errors() {
        let (line, msg) = parse_err("q Q0 d 1 1.0 t\nq Q0 d2 1 1.0\n", Kind::Run);
        assert_eq!(line, 2);
        assert!(msg.contains("found 5"), "{msg}");
        let (line, msg) = parse_err("\n# c\nq Q0 d 1 abc t\n", Kind::Run);
        assert_eq!(line, 3);
        assert!(msg.contains("score") && msg.contains("\"abc\""), "{msg}");
        for bad in ["NaN", "nan", "inf", "-infinity", "1e400"] {
            let (line, msg) = parse_err(&format!("q Q0 d 1 {bad} t"), Kind::Run);
            assert_eq!(line, 1);
            assert!(msg.contains("not finite"), "{msg}");
        }
        let (_, msg) = parse_err("q Q0 d 1 1.5abc t", Kind::Run);
        assert!(msg.contains("not a number"), "{msg}");
        // Display form: file:line: message.
        let e = parse("q Q0 d 1 x t", Kind::Run).unwrap_err();
        assert!(e.to_string().starts_with("mem.txt:1: "), "{e}");
    }

    #[test]
    fn duplicates_with_line_numbers() {
        let (line, msg) = parse_err("q Q0 a 1 3 t\nq Q0 b 2 2 t\n\nq Q0 a 3 1 t\n", Kind::Run);
        assert_eq!(line, 4);
        assert!(
            msg.contains("\"q\"") && msg.contains("\"a\"") && msg.contains("line 1"),
            "{msg}"
        );
        let (line, _) = parse_err("q 0 a 1\nq 0 a 0\n", Kind::Qrels);
        assert_eq!(line, 2);
        // Same doc under different queries is fine.
        assert!(parse("q 0 a 1\nr 0 a 0\nq 0 b 1\n", Kind::Qrels).is_ok());
    }

    #[test]
    fn duplicate_across_split_blocks() {
        let text = "q Q0 a 1 3 t\nr Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n";
        // A generic reader cannot be read twice: no line number.
        let (line, msg) = parse_err(text, Kind::Run);
        assert_eq!(line, 0);
        assert!(msg.contains("\"a\""), "{msg}");
        // A file is rescanned for the exact line.
        let p = tmp("split_dup.txt");
        std::fs::write(&p, text).unwrap();
        match read_trec(p.to_str().unwrap(), Kind::Run, false) {
            Err(Error::Parse { line, msg, .. }) => {
                assert_eq!(line, 4);
                assert!(msg.contains("first on line 1"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        // Split blocks without duplicates are fine.
        let t = parse("q Q0 a 1 3 t\nr Q0 a 1 3 t\nq Q0 b 2 2 t\n", Kind::Run).unwrap();
        assert_eq!(t.encoded.offsets, vec![0, 2, 3]);
    }

    #[test]
    fn qrels_fields_and_float_labels() {
        let t = parse(
            "q 0 a 1\nq 0 b 0.5\nq\t0\tc\t-1 \r\nq 0 d 2.25",
            Kind::Qrels,
        )
        .unwrap();
        assert_eq!(t.tag, None);
        assert_eq!(
            rows(&t.encoded),
            vec![(
                "q".into(),
                vec![
                    ("a".into(), 1.0),
                    ("b".into(), 0.5),
                    ("c".into(), -1.0),
                    ("d".into(), 2.25)
                ]
            )]
        );
        let (line, msg) = parse_err("q 0 a 1\nq 0 b\n", Kind::Qrels);
        assert_eq!(line, 2);
        assert!(msg.contains("found 3"), "{msg}");
        let (line, msg) = parse_err("q 0 a 1 extra\n", Kind::Qrels);
        assert_eq!(line, 1);
        assert!(msg.contains("found 5"), "{msg}");
        let (_, msg) = parse_err("q 0 a 1 x y z\n", Kind::Qrels);
        assert!(msg.contains("found 7"), "{msg}");
        let (_, msg) = parse_err("q 0 a nan\n", Kind::Qrels);
        assert!(msg.contains("label"), "{msg}");
    }

    #[test]
    fn empty_inputs() {
        for text in ["", "\n\n", "# only a comment\n", "  \r\n"] {
            for kind in [Kind::Run, Kind::Qrels] {
                let t = parse(text, kind).unwrap();
                assert_eq!(t.encoded.offsets, vec![0]);
                assert!(t.encoded.doc_ids.is_empty());
                assert_eq!(t.tag, None);
            }
        }
        let p = tmp("empty.txt");
        std::fs::write(&p, "").unwrap();
        assert_eq!(
            read_trec(p.to_str().unwrap(), Kind::Run, false)
                .unwrap()
                .offsets,
            vec![0]
        );
    }

    #[test]
    fn long_lines_grow_the_buffer() {
        let doc = "d".repeat(3 * BLOCK);
        let t = parse(&format!("q Q0 {doc} 1 1 t\nq Q0 e 2 0.5 t\n"), Kind::Run).unwrap();
        assert_eq!(t.encoded.doc_ids.len(), 2);
    }

    #[test]
    fn many_lines_across_blocks() {
        let mut text = String::new();
        for q in 0..50 {
            for d in 0..2000 {
                text.push_str(&format!(
                    "q{q} Q0 doc{d} {d} {} run\n",
                    1.0 / (d + 1) as f64
                ));
            }
        }
        let t = parse(&text, Kind::Run).unwrap();
        assert_eq!(t.encoded.offsets.len(), 51);
        assert_eq!(t.encoded.doc_ids.len(), 100_000);
        // One arena entry per row; 2000 distinct document ids among them.
        assert_eq!(t.encoded.docs.offsets.len(), 100_001);
        assert_eq!(distinct_docs(&t.encoded), 2000);
    }

    #[test]
    fn gz_roundtrip_and_magic_detection() {
        let text = "q1 Q0 a 1 0.1 r\nq1 Q0 b 2 1e-7 r\nq1 Q0 c 3 3e20 r\nq2 Q0 a 1 -2.5 r\n\
                    q2 Q0 z 2 0.30000000000000004 r\n";
        let run = parse(text, Kind::Run).unwrap().encoded;
        let gz = tmp("run.txt.gz");
        write_run(gz.to_str().unwrap(), &run, "mytag").unwrap();
        let bytes = std::fs::read(&gz).unwrap();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        let back = read_trec_file(gz.to_str().unwrap(), Kind::Run, false).unwrap();
        assert_same_rows(&back.encoded, &run);
        assert_eq!(back.tag.as_deref(), Some("mytag"));
        // gzip detected by content, not name.
        let odd = tmp("run_gz_without_suffix.txt");
        std::fs::write(&odd, &bytes).unwrap();
        assert_same_rows(
            &read_trec(odd.to_str().unwrap(), Kind::Run, false).unwrap(),
            &run,
        );
        // Concatenated gzip members.
        let mut two = bytes.clone();
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(b"q3 Q0 x 1 1 r\n").unwrap();
        two.extend(enc.finish().unwrap());
        let both = parse_trec(&two[..], "two.gz", Kind::Run, false).unwrap();
        assert_eq!(both.offsets.len(), 4);
    }

    #[test]
    fn plain_roundtrip_text() {
        let run = parse(
            "q1 Q0 a 1 0.5 r\nq1 Q0 b 2 2 r\nq0 Q0 c 1 1e-300 r\n",
            Kind::Run,
        )
        .unwrap()
        .encoded;
        let p = tmp("run.txt");
        write_run(p.to_str().unwrap(), &run, "t").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "q0 Q0 c 1 1e-300 t\nq1 Q0 b 1 2 t\nq1 Q0 a 2 0.5 t\n"
        );
        let back = read_trec(p.to_str().unwrap(), Kind::Run, false).unwrap();
        assert_same_rows(&back, &run);
        assert_eq!(back.extra, vec![0, 0, 1]);
        assert_eq!(run.extra, vec![0, 1, 0]); // input order: a then b

        let qrels = parse("q 0 b 2\nq 0 a 0.5\nq 0 c -1\n", Kind::Qrels)
            .unwrap()
            .encoded;
        let p = tmp("qrels.txt");
        write_qrels(p.to_str().unwrap(), &qrels).unwrap();
        // Qrels rows are stored (and written) in first-seen document order.
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "q 0 b 2\nq 0 a 0.5\nq 0 c -1\n"
        );
        assert_eq!(
            read_trec(p.to_str().unwrap(), Kind::Qrels, false).unwrap(),
            qrels
        );
    }

    #[test]
    fn writer_rejects_unwritable_ids_and_tags() {
        let mut b = Builder::new(Kind::Run, false);
        b.push(b"q", b"a b", 1.0).unwrap();
        let enc = b.finish().unwrap();
        let p = tmp("bad.txt");
        assert!(matches!(
            write_run(p.to_str().unwrap(), &enc, "t"),
            Err(Error::InvalidInput(_))
        ));
        let ok = parse("q Q0 a 1 1 t", Kind::Run).unwrap().encoded;
        assert!(matches!(
            write_run(p.to_str().unwrap(), &ok, "a b"),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            write_run(p.to_str().unwrap(), &ok, ""),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            write_run("/nonexistent_dir_ranklens/x.txt", &ok, "t"),
            Err(Error::Io { .. })
        ));
    }

    #[test]
    fn io_errors() {
        match read_trec("/nonexistent_ranklens_file.txt", Kind::Run, false) {
            Err(Error::Io { file, .. }) => assert_eq!(file, "/nonexistent_ranklens_file.txt"),
            other => panic!("{other:?}"),
        }
        // A corrupt gzip stream is an I/O error, not a panic.
        let bad = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3];
        assert!(matches!(
            parse_trec(&bad[..], "bad.gz", Kind::Run, false),
            Err(Error::Io { .. })
        ));
    }

    #[test]
    fn round_f32_is_passed_through() {
        let t = parse_trec_file(
            &b"q Q0 a 1 1.0000000001 t\nq Q0 b 2 1 t\n"[..],
            "m",
            Kind::Run,
            true,
        )
        .unwrap();
        assert_eq!(t.encoded.values, vec![1.0, 1.0]);
    }

    /// The parallel reader with blocks of `block` bytes.
    fn parse_par(text: &[u8], kind: Kind, block: usize) -> Result<TrecFile> {
        parse_any(text, "mem.txt", kind, false, block).map_err(|e| match e {
            Error::DuplicateDocument { query, doc } => dup_error("mem.txt", 0, &query, &doc, None),
            e => e,
        })
    }

    /// Block sizes that cut lines and queries at every position (a block
    /// grows to hold one line), and larger ones.
    fn block_sizes(len: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (1..=len.min(80) + 1).collect();
        v.extend([97, 256, 1000, 4096, len / 2 + 1, len + 1, 1 << 20]);
        v
    }

    /// The parallel reader gives what the sequential one gives: rows, tags,
    /// or the same error (file, line, message), for every block size.
    fn assert_par_same(text: &[u8], kind: Kind) {
        let want = parse_sequential(text, "mem.txt", kind, false).map_err(|e| match e {
            Error::DuplicateDocument { query, doc } => dup_error("mem.txt", 0, &query, &doc, None),
            e => e,
        });
        for block in block_sizes(text.len()) {
            let got = parse_par(text, kind, block);
            assert_eq!(got, want, "block size {block}, text {:?}", show(text));
        }
    }

    const MIXED_RUN: &str = "# header comment\n\
        q1 Q0 d1 1 0.5 tagA\r\n\
        q1\tQ0\td2\t2\t  2.1\ttagB extra fields\n\
        \n   \t\n\
        q10 Q0 d1 1 3 t\n\
        q10 Q0 d3 2 3 t\n\
        \t# indented comment\n\
        q1 Q0 d4 3 -1e-3 t\n\
        q2 Q0 d#3 x 7 tagC\n\
        q10 Q0 d9 3 3 t\n\
        q2 Q0 a 1 -0 tagD";

    #[test]
    fn parallel_equals_sequential() {
        assert_par_same(MIXED_RUN.as_bytes(), Kind::Run);
        assert_par_same(format!("{MIXED_RUN}\n").as_bytes(), Kind::Run);
        let qrels = "q 0 a 1\r\nq 0 b 0.5\n# c\n\nr 0 a 2\nq 0 c -1\n10 0 x 1\n9 0 x 0";
        assert_par_same(qrels.as_bytes(), Kind::Qrels);
        for text in ["", "\n", "\n\n# c\n", "q Q0 d 1 1 t", "q 0 d 1\n"] {
            assert_par_same(text.as_bytes(), Kind::Run);
            assert_par_same(text.as_bytes(), Kind::Qrels);
        }
        // Many queries and rows over many blocks.
        let mut text = String::new();
        for q in 0..30 {
            for d in 0..40 {
                let score = ((d * 7 + q) % 13) as f64 / 4.0; // ties
                text.push_str(&format!("{} Q0 doc{d} {d} {score} run{q}\n", q * 37 % 101));
            }
        }
        let want = parse_sequential(text.as_bytes(), "mem.txt", Kind::Run, false).unwrap();
        for block in [1, 50, 333, 1000, 4096, 20_000] {
            assert_eq!(parse_par(text.as_bytes(), Kind::Run, block).unwrap(), want);
        }
    }

    #[test]
    fn parallel_errors_name_the_first_bad_line() {
        let good = "q Q0 a 1 1 t\n# c\nq Q0 b 2 0.5 t\n\nr Q0 a 1 1 t\n";
        for bad in [
            "q Q0 c 3 abc t\n",
            "q Q0 c 3 1\n",
            "q Q0 c 3 nan t\n",
            "r Q0 a 2 0 t\n", // duplicate of line 5
        ] {
            for at in 0..=good.lines().count() {
                let mut lines: Vec<&str> = good.lines().collect();
                lines.insert(at, bad.trim_end());
                // A second error later must not be the one reported.
                lines.push("q Q0 z 9 bad t");
                let text = lines.join("\n");
                assert_par_same(text.as_bytes(), Kind::Run);
            }
        }
        // A duplicate whose two lines are in different blocks, and lines
        // counted across blocks.
        let text = "q Q0 a 1 3 t\n\n# x\nq Q0 b 2 2 t\nq Q0 c 2 2 t\nq Q0 a 3 1 t\nq Q0 x 3 1 t\n";
        for block in block_sizes(text.len()) {
            match parse_par(text.as_bytes(), Kind::Run, block) {
                Err(Error::Parse { line, msg, .. }) => {
                    assert_eq!(line, 6, "block {block}");
                    assert!(msg.contains("first on line 1"), "{msg}");
                }
                other => panic!("{other:?}"),
            }
        }
        let qrels = "q 0 a 1\nq 0 b 1\nq 0 c\n";
        assert_par_same(qrels.as_bytes(), Kind::Qrels);
    }

    #[test]
    fn parallel_gzip_and_files() {
        // Repeated queries are split blocks: the duplicate is found by finish,
        // the earliest listing that repeats one (line 14 repeats line 2).
        let text = MIXED_RUN
            .repeat(3)
            .replace("q2 Q0 a 1 -0 tagD", "q2 Q0 a 1 -0 tagD\n");
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(MIXED_RUN.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let want = parse_sequential(MIXED_RUN.as_bytes(), "mem.txt", Kind::Run, false).unwrap();
        for block in block_sizes(MIXED_RUN.len()) {
            assert_eq!(parse_par(&gz, Kind::Run, block).unwrap(), want);
        }
        let p = tmp("par_dup.txt");
        std::fs::write(&p, &text).unwrap();
        match read_trec(p.to_str().unwrap(), Kind::Run, false) {
            Err(Error::Parse { line, msg, .. }) => {
                assert_eq!(line, 14);
                assert!(msg.contains("first on line 2"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// A reader that fails after `n` bytes.
    struct FailAfter<'a>(&'a [u8], usize);

    impl Read for FailAfter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.1 == 0 {
                return Err(io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            self.1 -= n;
            Ok(n)
        }
    }

    #[test]
    fn parallel_io_error_after_earlier_lines() {
        let mut text = String::new();
        for d in 0..200 {
            text.push_str(&format!("q Q0 d{d} 1 1 t\n"));
        }
        for block in [16, 100, 1000] {
            // The lines read before the failure are fine: the I/O error.
            let r = FailAfter(text.as_bytes(), 1500);
            match parse_any(r, "f", Kind::Run, false, block) {
                Err(Error::Io { file, msg }) => assert!(file == "f" && msg.contains("fire")),
                other => panic!("{other:?}"),
            }
            // A bad line before the failure comes first.
            let bad = text.replacen("q Q0 d3 1 1 t", "q Q0 d3 1 x t", 1);
            let r = FailAfter(bad.as_bytes(), 1500);
            match parse_any(r, "f", Kind::Run, false, block) {
                Err(Error::Parse { line, .. }) => assert_eq!(line, 4),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn parallel_result_does_not_depend_on_threads() {
        let mut text = String::new();
        for q in 0..50 {
            for d in 0..30 {
                text.push_str(&format!("{q} Q0 d{} {d} {} r\n", (d * 31 + q) % 97, d % 5));
            }
        }
        let run = |t: usize| {
            crate::core::eval::with_threads(Some(t), || parse_par(text.as_bytes(), Kind::Run, 300))
                .unwrap()
                .unwrap()
        };
        let one = run(1);
        assert_eq!(run(2), one);
        assert_eq!(run(5), one);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Random files (few queries and documents: duplicates, split and
        /// interleaved queries; comments, blank lines, CRLF, tabs, bad lines).
        #[test]
        fn parallel_equals_sequential_random(
            lines in proptest::collection::vec((0u8..12, 0u8..3, 0u8..6, 0u8..5), 0..40),
            qrels in proptest::bool::ANY,
            block in 1usize..200,
        ) {
            let kind = if qrels { Kind::Qrels } else { Kind::Run };
            let mut text = String::new();
            for (i, &(what, q, d, v)) in lines.iter().enumerate() {
                let sep = if i % 3 == 0 { "\t" } else { " " };
                let end = if i % 4 == 0 { "\r\n" } else { "\n" };
                let row = if qrels {
                    format!("q{q}{sep}0{sep}d{d}{sep}{v}")
                } else {
                    format!("q{q}{sep}Q0{sep}d{d}{sep}1{sep}{}{sep}t{i}", v as f64 / 2.0)
                };
                let line = match what {
                    0 => "# comment".to_string(),
                    1 => "  ".to_string(),
                    2 if i % 5 == 0 => format!("q{q} Q0 d{d} 1 nope t"),
                    _ => row,
                };
                text.push_str(&line);
                text.push_str(end);
            }
            if lines.len() % 2 == 1 {
                text.pop(); // no final newline
            }
            let want = parse_sequential(text.as_bytes(), "mem.txt", kind, false).map_err(|e| match e {
                Error::DuplicateDocument { query, doc } => dup_error("mem.txt", 0, &query, &doc, None),
                e => e,
            });
            proptest::prop_assert_eq!(parse_par(text.as_bytes(), kind, block), want);
        }

        /// The chunked reader gives, chunk by chunk, what a sequential model
        /// gives: queries cut into chunks once `chunk_rows` rows are held,
        /// each chunk encoded as the builder encodes its rows, the same tags;
        /// or the first error in file order (bad line, document listed twice,
        /// a query that comes back), with its line.  Any block size.
        #[test]
        fn chunks_equal_sequential_model(
            lines in proptest::collection::vec((0u8..12, 0u8..4, 0u8..6, 0u8..5), 0..40),
            block in 1usize..200,
            chunk_rows in 1usize..12,
        ) {
            let mut text = String::new();
            for (i, &(what, q, d, v)) in lines.iter().enumerate() {
                let line = match what {
                    0 => "# comment".to_string(),
                    1 => "  ".to_string(),
                    2 if i % 7 == 0 => format!("q{q} Q0 d{d} 1 nope t"),
                    // Mostly the query of the line before: grouped runs.
                    3..=8 if i > 0 => {
                        let q = lines[..i].iter().rev().find(|l| l.0 > 2).map_or(q, |l| l.1);
                        format!("q{q} Q0 d{d} 1 {} t{i}", v as f64 / 2.0)
                    }
                    _ => format!("q{q}\tQ0\td{d}\t1\t{}\tt{i}", v as f64 / 2.0),
                };
                text.push_str(&line);
                text.push('\n');
            }
            // The model.
            let model = || -> Result<(Vec<Encoded>, Option<String>, Option<String>)> {
                let mut out = Vec::new();
                let mut b = new_builder(Kind::Run, false);
                let (mut first_tag, mut last_tag) = (None, None);
                let mut done: std::collections::HashMap<Vec<u8>, u64> = Default::default();
                // The open query: id, first line, its documents' lines.
                type Open = (Vec<u8>, u64, std::collections::HashMap<Vec<u8>, u64>);
                let mut open: Option<Open> = None;
                let (mut q, mut rows) = (0u32, 0usize);
                for (i, line) in text.lines().enumerate() {
                    let line_no = i as u64 + 1;
                    let perr = |msg: String| Error::Parse { file: "mem.txt".into(), line: line_no, msg };
                    let Some((qid, doc, v, tag)) = parse_line(line.as_bytes(), Kind::Run).map_err(perr)? else {
                        continue;
                    };
                    if open.as_ref().map(|o| o.0.as_slice()) != Some(qid) {
                        if let Some(&first) = done.get(qid) {
                            return Err(perr(format!("appears again; first {first}")));
                        }
                        if let Some((oq, ol, _)) = open.take() {
                            done.insert(oq, ol);
                        }
                        if rows >= chunk_rows {
                            out.push(std::mem::replace(&mut b, new_builder(Kind::Run, false)).finish()?);
                            rows = 0;
                        }
                        q = b.query(qid)?;
                        open = Some((qid.to_vec(), line_no, Default::default()));
                    }
                    if let Some(o) = open.as_mut() {
                        if let Some(&first) = o.2.get(doc) {
                            return Err(dup_error("mem.txt", line_no, &show(qid), &show(doc), Some(first)));
                        }
                        o.2.insert(doc.to_vec(), line_no);
                    }
                    b.row(q, doc, v)?;
                    rows += 1;
                    first_tag.get_or_insert_with(|| show(tag));
                    last_tag = Some(show(tag));
                }
                if rows > 0 {
                    out.push(b.finish()?);
                }
                Ok((out, first_tag, last_tag))
            };
            let mut got = Vec::new();
            let res = run_chunks(text.as_bytes(), "mem.txt", false, chunk_rows, block, &mut |e| {
                got.push(e);
                Ok(())
            });
            match (model(), res) {
                (Ok((want, t0, t1)), Ok((g0, g1))) => {
                    proptest::prop_assert_eq!(got, want);
                    proptest::prop_assert_eq!((g0, g1), (t0, t1));
                }
                (Err(Error::Parse { line: wl, msg: wm, .. }), Err(Error::Parse { file, line, msg })) => {
                    proptest::prop_assert_eq!((file.as_str(), line), ("mem.txt", wl));
                    if let Some(first) = wm.strip_prefix("appears again; first ") {
                        let want = format!("(its lines started on line {first})");
                        proptest::prop_assert!(msg.contains(&want), "{msg}");
                    } else {
                        proptest::prop_assert_eq!(msg, wm);
                    }
                }
                (want, got) => proptest::prop_assert!(false, "{want:?} != {got:?}"),
            }
        }

        /// The short-id comparison is `==` (lengths 0 to 20: equal ids, ids
        /// that differ in one byte, and unrelated ids).
        #[test]
        fn same_bytes_is_eq(
            a in proptest::collection::vec(0u8..3, 0..20),
            b in proptest::collection::vec(0u8..3, 0..20),
            mode in 0u8..3,
            at in 0usize..20,
        ) {
            let b = match mode {
                0 => a.clone(),
                // `a` with one byte changed: equal but for one position.
                1 if !a.is_empty() => {
                    let mut c = a.clone();
                    c[at % a.len()] ^= 1;
                    c
                }
                _ => b,
            };
            proptest::prop_assert_eq!(same_bytes(&a, &b), a == b);
        }

        /// The bitmap splitter agrees with the byte loop (any bytes, any
        /// alignment of the line in its block).
        #[test]
        fn split_bits_equals_split_slow(
            before in proptest::collection::vec(proptest::sample::select(vec![b'a', b' ', b'\n']), 0..70),
            line in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'#', b' ', b' ', b'\t', b'\r', 0x0b, 0x0c, 0x01, 0x1f, 0x21, 0x7f, 0x80, 0xff]),
                0..140,
            ),
            after in proptest::collection::vec(proptest::sample::select(vec![b'b', b' ', b'\n']), 0..70),
        ) {
            let raw: Vec<u8> = [&before[..], &line[..], &after[..]].concat();
            let mut bits = Vec::new();
            classify(&raw, &mut bits);
            for (j, &b) in raw.iter().enumerate() {
                proptest::prop_assert_eq!(bits[j / 64] >> (j % 64) & 1 == 1, is_space(b));
            }
            let (pos, end) = (before.len(), before.len() + line.len());
            match split_bits(&raw, window(&bits, pos), pos, end) {
                Some(got) => proptest::prop_assert_eq!(got, split_slow(&line, Kind::Qrels)),
                None => proptest::prop_assert!(line.len() >= 128),
            }
        }

        /// `split_plain` takes the plain lines (and only those) and splits
        /// them as `split_slow` does, with the line's end from `memchr`.
        #[test]
        fn split_plain_is_exact(
            lines in proptest::collection::vec(
                (
                    proptest::collection::vec("[a-c#]{1,24}", 0..9),
                    proptest::collection::vec(proptest::sample::select(vec![" ", " ", " ", "  ", "\t", "\r", "\x0b"]), 9),
                    proptest::bool::weighted(0.1),
                ),
                1..12,
            ),
            last_newline in proptest::bool::ANY,
            n in proptest::sample::select(vec![4usize, 6]),
        ) {
            let mut raw: Vec<u8> = Vec::new();
            let mut starts = Vec::new();
            for (words, seps, lead) in &lines {
                starts.push(raw.len());
                if *lead {
                    raw.extend_from_slice(seps[8].as_bytes());
                }
                for (i, w) in words.iter().enumerate() {
                    if i > 0 {
                        raw.extend_from_slice(seps[i].as_bytes());
                    }
                    raw.extend_from_slice(w.as_bytes());
                }
                raw.push(b'\n');
            }
            if !last_newline {
                raw.pop();
            }
            let mut bits = Vec::new();
            classify(&raw, &mut bits);
            for (k, &pos) in starts.iter().enumerate() {
                let end = memchr::memchr(b'\n', &raw[pos..]).map_or(raw.len(), |i| pos + i);
                let (words, seps, lead) = &lines[k];
                let plain = !lead
                    && words.len() == n
                    && seps[1..n].iter().all(|s| s.len() == 1)
                    && end < raw.len()
                    && end - pos < 128;
                match split_plain(&raw, window(&bits, pos), pos, n) {
                    Some((got, e)) => {
                        proptest::prop_assert!(plain);
                        proptest::prop_assert_eq!(e, end);
                        proptest::prop_assert_eq!(got, split_slow(&raw[pos..end], Kind::Qrels));
                    }
                    None => proptest::prop_assert!(!plain),
                }
            }
        }

        /// fast-float2 accepts exactly Rust's float syntax, with the same value.
        #[test]
        fn value_syntax_is_rusts(s in "[-+]?[0-9]{0,3}[.]?[0-9]{0,3}([eE][-+]?[0-9]{0,4})?|[-+]?(inf|nan|infinity|NaN|x)") {
            let std = s.parse::<f64>().ok().filter(|v| v.is_finite());
            let ours = parse_value(s.as_bytes(), "v").ok();
            proptest::prop_assert_eq!(std.map(f64::to_bits), ours.map(f64::to_bits));
        }
    }

    /// Counts derived independently, e.g. for results.test:
    /// `awk 'NF>0 && $1 !~ /^#/' F | wc -l` (rows),
    /// `awk 'NF>0 && $1 !~ /^#/ {print $1}' F | sort -u | wc -l` (queries),
    /// `awk 'NF>0 && $1 !~ /^#/ {print $3}' F | sort -u | wc -l` (distinct docs).
    #[test]
    fn conformance_files() {
        let dir = Path::new("/work/shared/conformance/trec_eval");
        if !dir.exists() {
            eprintln!("skipping: {} not found", dir.display());
            return;
        }
        let cases = [
            ("results.test", Kind::Run, 3, 1500, 1500),
            ("qrels.test", Kind::Qrels, 3, 3681, 3338),
            ("qrels.test.with-comments", Kind::Qrels, 3, 3681, 3338),
            ("results.comment.test", Kind::Run, 301, 30100, 29865),
            ("qrels.comment.test", Kind::Qrels, 31, 5890, 5828),
            // Query blocks interleaved (165 blocks, 2 queries), extra fields.
            ("results.trunc", Kind::Run, 2, 584, 584),
        ];
        for (name, kind, nq, nrows, ndocs) in cases {
            let path = dir.join(name);
            let t = read_trec_file(path.to_str().unwrap(), kind, false)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let e = &t.encoded;
            assert_eq!(e.offsets.len() - 1, nq, "{name}");
            assert_eq!(e.doc_ids.len(), nrows, "{name}");
            assert_eq!(e.docs.offsets.len() - 1, nrows, "{name}");
            assert_eq!(distinct_docs(e), ndocs, "{name}");
            if kind == Kind::Run {
                assert!(t.tag.is_some(), "{name}");
            }
        }
        let t =
            read_trec_file(dir.join("results.test").to_str().unwrap(), Kind::Run, false).unwrap();
        assert_eq!(t.tag.as_deref(), Some("STANDARD"));
        assert_eq!(t.last_tag.as_deref(), Some("STANDARD"));
    }

    /// User + system CPU time of this process so far (Linux; else 0).
    fn cpu_seconds() -> f64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let f: Vec<f64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .map(|x| x.parse().unwrap_or(0.0))
            .collect();
        f.iter().sum::<f64>() / 100.0
    }

    /// Profiling: the parallel parse alone, `RANKLENS_TREC_BENCH` times
    /// `RANKLENS_TREC_REPEAT`.
    #[test]
    #[ignore]
    fn bench_parse_only() {
        let Ok(path) = std::env::var("RANKLENS_TREC_BENCH") else {
            return;
        };
        let n: usize = std::env::var("RANKLENS_TREC_REPEAT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        for _ in 0..n {
            let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
            let m = parse_blocks(
                open(&path).unwrap(),
                &path,
                Kind::Run,
                false,
                PAR_BLOCK,
                None,
            )
            .unwrap();
            eprintln!(
                "parse {:.3} s (cpu {:.2}), {} rows",
                t0.elapsed().as_secs_f64(),
                cpu_seconds() - c0,
                m.b.len()
            );
            let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
            let e = m.finish().unwrap();
            eprintln!(
                "finish {:.3} s (cpu {:.2})",
                t0.elapsed().as_secs_f64(),
                cpu_seconds() - c0,
            );
            drop(e);
        }
    }

    /// Timing: `RANKLENS_TREC_BENCH=/tmp/run10m.txt cargo test --release --lib
    /// trec::tests::bench_read -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn bench_read() {
        let Ok(path) = std::env::var("RANKLENS_TREC_BENCH") else {
            eprintln!("set RANKLENS_TREC_BENCH to a run file");
            return;
        };
        let bytes = std::fs::metadata(&path).unwrap().len() as f64;
        // Phases: split + float parse only; then parse into the Builder; then finish.
        let t0 = std::time::Instant::now();
        let mut n = 0usize;
        for_each_line(open(&path).unwrap(), &path, |line| {
            n += line.len();
            Ok(true)
        })
        .unwrap();
        eprintln!("lines only: {:.3} s ({n})", t0.elapsed().as_secs_f64());
        let t0 = std::time::Instant::now();
        let mut n = 0usize;
        for_each_line(open(&path).unwrap(), &path, |line| {
            let mut f = Fields { s: line, i: 0 };
            n += f.nth(4).map_or(0, |x| x.len());
            Ok(true)
        })
        .unwrap();
        eprintln!("split only: {:.3} s ({n})", t0.elapsed().as_secs_f64());
        let t0 = std::time::Instant::now();
        let mut bs = BlockSet::new();
        let mut n = 0usize;
        let mut lq: Vec<u8> = Vec::new();
        for_each_line(open(&path).unwrap(), &path, |line| {
            let mut f = Fields { s: line, i: 0 };
            let q = f.next().unwrap();
            if q != &lq[..] {
                bs.reset();
                lq = q.to_vec();
            }
            n += bs.insert(f.nth(1).unwrap(), 0).is_some() as usize;
            Ok(true)
        })
        .unwrap();
        eprintln!(
            "split + blockset: {:.3} s ({n})",
            t0.elapsed().as_secs_f64()
        );
        let t0 = std::time::Instant::now();
        let mut sum = 0.0;
        for_each_line(open(&path).unwrap(), &path, |line| {
            let mut f = Fields { s: line, i: 0 };
            if let Some(x) = f.nth(4) {
                sum += std::str::from_utf8(x).unwrap().parse::<f64>().unwrap();
            }
            Ok(true)
        })
        .unwrap();
        eprintln!(
            "split+parse floats: {:.3} s ({sum})",
            t0.elapsed().as_secs_f64()
        );
        // The doc vocabulary alone (vocab.rs): interning, then sorting.
        let t0 = std::time::Instant::now();
        let mut it = crate::core::vocab::Interner::new();
        for_each_line(open(&path).unwrap(), &path, |line| {
            let mut f = Fields { s: line, i: 0 };
            it.intern(f.nth(2).unwrap()).unwrap();
            Ok(true)
        })
        .unwrap();
        eprintln!(
            "split + intern docs: {:.3} s ({} docs)",
            t0.elapsed().as_secs_f64(),
            it.len()
        );
        let t0 = std::time::Instant::now();
        let _ = it.into_sorted();
        eprintln!("Interner::into_sorted: {:.3} s", t0.elapsed().as_secs_f64());
        let t0 = std::time::Instant::now();
        let mut p = Parser::new(&path, Kind::Run, false);
        for_each_line(open(&path).unwrap(), &path, |l| p.line(l).map(|()| true)).unwrap();
        eprintln!("parser into builder: {:.3} s", t0.elapsed().as_secs_f64());
        let t0 = std::time::Instant::now();
        let _ = p.b.finish().unwrap();
        eprintln!("finish: {:.3} s", t0.elapsed().as_secs_f64());
        for block in [256 << 10, 1 << 20, 4 << 20] {
            let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
            let m =
                parse_blocks(open(&path).unwrap(), &path, Kind::Run, false, block, None).unwrap();
            let (t1, c1) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
            let e = m.finish().unwrap();
            let (t2, c2) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            eprintln!(
                "parallel, blocks of {} KiB: parse {t1:.3} s (cpu {c1:.2}), finish {t2:.3} s (cpu {c2:.2})",
                block >> 10,
            );
            drop(e);
        }
        for _ in 0..3 {
            let t0 = std::time::Instant::now();
            let e = read_trec(&path, Kind::Run, false).unwrap();
            let s = t0.elapsed().as_secs_f64();
            let rows = e.doc_ids.len() as f64;
            eprintln!(
                "{path}: {rows} rows, {:.1} MB in {s:.3} s: {:.0} MB/s, {:.2} M rows/s",
                bytes / 1e6,
                bytes / 1e6 / s,
                rows / 1e6 / s
            );
        }
    }
}
