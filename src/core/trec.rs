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
//!   online for a query's consecutive lines (a small per-block hash set); a
//!   duplicate split across non-consecutive blocks of one query is caught by
//!   [`Builder::finish`], and its line is then found by reading the file a
//!   second time (for stdin or a generic reader the line is not known: line 0).
//! * Line numbers are physical (1-based, counting comments and blank lines).
//!
//! Input is read in 1 MiB blocks, lines found with `memchr`, fields split on the
//! bytes; nothing is allocated per line.  gzip input is recognised by its magic
//! bytes (`1f 8b`), whatever the file name; concatenated members are read.
//! [`for_each_run_chunk`] reads a run grouped by query in chunks of whole
//! queries instead (scoring a run larger than memory: `stream.rs`).

use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::{show, Error, Result};
use crate::core::vocab::Vocab;
use flate2::bufread::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

/// Read block size (the buffer grows for a longer line).
const BLOCK: usize = 1 << 20;
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
        let stdin = io::stdin();
        return parse_trec_file(stdin.lock(), STDIN_NAME, kind, round_f32);
    }
    let file = open(path)?;
    match parse_any(file, path, kind, round_f32) {
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
    reader: impl BufRead,
    file: &str,
    kind: Kind,
    round_f32: bool,
) -> Result<Encoded> {
    parse_trec_file(reader, file, kind, round_f32).map(|t| t.encoded)
}

/// [`parse_trec`], also returning the run's tags.
pub fn parse_trec_file(
    reader: impl BufRead,
    file: &str,
    kind: Kind,
    round_f32: bool,
) -> Result<TrecFile> {
    parse_any(reader, file, kind, round_f32).map_err(|e| match e {
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
    mut on_chunk: impl FnMut(Encoded) -> Result<()>,
) -> Result<(Option<String>, Option<String>)> {
    let mut go = |r: Box<dyn Read + '_>, file: &str| {
        let mut p = Parser::new(file, Kind::Run, round_f32);
        p.chunks = Some(Chunks {
            min_rows: chunk_rows.max(1) as u64,
            start_row: 0,
            done: hashbrown::HashMap::new(),
            block_line: 0,
            ready: None,
        });
        let dup = |e: Error| match e {
            Error::DuplicateDocument { query, doc } => dup_error(file, 0, &query, &doc, None),
            e => e,
        };
        for_each_line(r, file, |line| {
            p.line(line)?;
            if let Some(rows) = p.chunks.as_mut().and_then(|c| c.ready.take()) {
                on_chunk(rows.finish().map_err(dup)?)?;
            }
            Ok(true)
        })?;
        if p.rows > p.chunks.as_ref().map_or(0, |c| c.start_row) {
            let b = std::mem::replace(&mut p.b, Builder::new(Kind::Run, round_f32));
            on_chunk(b.finish().map_err(dup)?)?;
        }
        Ok((
            p.first_tag.as_ref().map(|t| show(t)),
            p.first_tag.as_ref().map(|_| show(&p.last_tag)),
        ))
    };
    if path == "-" {
        let stdin = io::stdin();
        go(maybe_gunzip(stdin.lock(), STDIN_NAME)?, STDIN_NAME)
    } else {
        go(maybe_gunzip(open(path)?, path)?, path)
    }
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
fn maybe_gunzip<'a, R: Read + 'a>(mut r: R, file: &str) -> Result<Box<dyn Read + 'a>> {
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

/// Parse, leaving a duplicate split across blocks as `DuplicateDocument`.
fn parse_any(r: impl Read, file: &str, kind: Kind, round_f32: bool) -> Result<TrecFile> {
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

/// The documents of the current block of consecutive lines of one query, with
/// the line each was first seen on.  Exact (compares bytes), and small.
struct BlockSet {
    arena: Vec<u8>,
    table: HashTable<(usize, usize, u64)>,
    hasher: DefaultHashBuilder,
}

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

struct Parser<'f> {
    file: &'f str,
    kind: Kind,
    b: Builder,
    line_no: u64,
    /// The current block's query (bytes and id), to skip the lookup.
    cur_q: Vec<u8>,
    cur_id: Option<u32>,
    /// Distinct queries so far (ids are dense, in first-seen order).
    nq: u32,
    seen: BlockSet,
    first_tag: Option<Vec<u8>>,
    last_tag: Vec<u8>,
    round_f32: bool,
    /// Rows read so far.
    rows: u64,
    /// Reading in chunks ([`for_each_run_chunk`]); `None` reads the file whole.
    chunks: Option<Chunks>,
}

/// The state of a chunked read: see [`for_each_run_chunk`].
struct Chunks {
    min_rows: u64,
    /// `Parser::rows` when the current chunk started.
    start_row: u64,
    /// Every query whose block of lines has ended, with the line it started on.
    done: hashbrown::HashMap<Vec<u8>, u64>,
    /// The line the current query's block started on.
    block_line: u64,
    /// A full chunk, to hand out before the next line.
    ready: Option<Builder>,
}

impl<'f> Parser<'f> {
    fn new(file: &'f str, kind: Kind, round_f32: bool) -> Self {
        Parser {
            round_f32,
            rows: 0,
            chunks: None,
            file,
            kind,
            b: Builder::new(kind, round_f32),
            line_no: 0,
            cur_q: Vec::new(),
            cur_id: None,
            nq: 0,
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

    #[cold]
    fn bad_value(&self, field: &[u8], what: &str, parsed: bool) -> Error {
        self.err(if parsed {
            format!(
                "{what} {} is not finite (NaN, infinite or out of range)",
                quote(field)
            )
        } else {
            format!("{what} {} is not a number", quote(field))
        })
    }

    #[inline]
    fn value(&self, field: &[u8], what: &str) -> Result<f64> {
        match std::str::from_utf8(field)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            Some(v) if v.is_finite() => Ok(v),
            Some(_) => Err(self.bad_value(field, what, true)),
            None => Err(self.bad_value(field, what, false)),
        }
    }

    #[inline]
    fn line(&mut self, line: &[u8]) -> Result<()> {
        self.line_no += 1;
        let mut fields = Fields { s: line, i: 0 };
        let Some(qid) = fields.next() else {
            return Ok(()); // blank
        };
        if qid[0] == b'#' {
            return Ok(()); // comment
        }
        let (doc, value) = match self.kind {
            Kind::Run => {
                let mut f = [qid; 6];
                let mut n = 1;
                while n < 6 {
                    match fields.next() {
                        Some(x) => f[n] = x,
                        None => break,
                    }
                    n += 1;
                }
                if n < 6 {
                    return Err(self.err(format!(
                        "a run line needs at least 6 fields (qid iter docno rank score tag), found {n}"
                    )));
                }
                let [_, _iter, doc, _rank, score, tag] = f;
                let v = self.value(score, "the score (field 5)")?;
                if self.first_tag.is_none() {
                    self.first_tag = Some(tag.to_vec());
                }
                if self.last_tag != tag {
                    self.last_tag.clear();
                    self.last_tag.extend_from_slice(tag);
                }
                (doc, v)
            }
            Kind::Qrels => {
                let mut f = [qid; 4];
                let mut n = 1;
                while n < 4 {
                    match fields.next() {
                        Some(x) => f[n] = x,
                        None => break,
                    }
                    n += 1;
                }
                if n == 4 && fields.next().is_some() {
                    n = 5 + fields.count();
                }
                if n != 4 {
                    return Err(self.err(format!(
                        "a qrels line needs exactly 4 fields (qid iter docno label), found {n}"
                    )));
                }
                let [_, _iter, doc, label] = f;
                (doc, self.value(label, "the label (field 4)")?)
            }
        };
        let q = match self.cur_id {
            Some(q) if self.cur_q == qid => q,
            _ => {
                if self.chunks.is_some() {
                    self.chunk_block(qid)?;
                }
                let q = self.b.query(qid)?;
                if q == self.nq {
                    self.nq += 1;
                }
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
        self.rows += 1;
        self.b.row(q, doc, value)
    }

    /// Chunked read, a block of query `qid` starts: check that the query has
    /// not been seen before, and close the chunk if it is full.
    #[cold]
    fn chunk_block(&mut self, qid: &[u8]) -> Result<()> {
        let Some(c) = self.chunks.as_mut() else {
            return Ok(());
        };
        if let Some(&first) = c.done.get(qid) {
            return Err(self.err(format!(
                "query {} appears again after other queries (its lines started on line \
                 {first}): the run file is not grouped by query, so it cannot be scored \
                 chunk by chunk; use evaluate(Run.from_trec(...)), which reads it whole",
                quote(qid)
            )));
        }
        if self.cur_id.is_some() {
            let start = c.block_line;
            c.done.insert(self.cur_q.clone(), start);
        }
        c.block_line = self.line_no;
        if self.rows - c.start_row >= c.min_rows {
            let full = std::mem::replace(&mut self.b, Builder::new(self.kind, self.round_f32));
            c.ready = Some(full);
            c.start_row = self.rows;
            self.nq = 0;
            self.cur_id = None;
        }
        Ok(())
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
