//! Tests of the reader and writer, and the sequential reader they compare the
//! parallel one with.

use super::merge::*;
use super::parse::*;
use super::read::*;
use super::split::*;
use super::write::*;
use super::*;
use crate::core::encode::Builder;
use crate::core::vocab::Vocab;
use flate2::write::GzEncoder;
use flate2::Compression;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;
use std::io::Write;
use std::path::{Path, PathBuf};
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
    /// The line of each row.
    row_lines: Vec<u64>,
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
            row_lines: Vec::new(),
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
        self.row_lines.push(self.line_no);
        self.b.row(q, doc, value)
    }
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
    let read = for_each_line(r, file, |line| p.line(line).map(|()| true));
    let Parser {
        b,
        first_tag,
        last_tag,
        row_lines,
        ..
    } = p;
    // A duplicate of non-consecutive lines, named with its lines; it comes
    // before any error of a later line.
    let (encoded, rows) = b.finish_locating();
    let locate = |e: Error| match (e, rows) {
        (Error::DuplicateDocument { query, doc }, Some((a, b))) => {
            dup_error(file, row_lines[b], &query, &doc, Some(row_lines[a]))
        }
        (e, _) => e,
    };
    if let Err(e) = read {
        return Err(match encoded {
            Err(dup @ Error::DuplicateDocument { .. }) => locate(dup),
            _ => e,
        });
    }
    let encoded = encoded.map_err(locate)?;
    Ok(TrecFile {
        encoded,
        last_tag: first_tag.as_ref().map(|_| show(&last_tag)),
        tag: first_tag.map(|t| show(&t)),
    })
}

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
    // A generic reader cannot be read twice: the lines of its rows are kept.
    let (line, msg) = parse_err(text, Kind::Run);
    assert_eq!(line, 4);
    assert!(
        msg.contains("\"a\"") && msg.contains("first on line 1"),
        "{msg}"
    );
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
    let text = format!("q Q0 {doc} 1 1 t\nq Q0 e 2 0.5 t\n");
    let opts = ReadOptions {
        max_line: 4 * BLOCK,
        ..ReadOptions::default()
    };
    let t = parse_trec_with(text.as_bytes(), "mem.txt", Kind::Run, &opts).unwrap();
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
    // No tied scores: no input positions kept (`core::encode`).
    assert!(back.extra.is_empty() && run.extra.is_empty());

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
fn subtopic_qrels_writer() {
    // Rows: q/a judged for subtopics x and y, q/b for y.
    let (q, q_off, docs, d_off) = (
        b"q".to_vec(),
        vec![0i64, 1],
        b"ab".to_vec(),
        vec![0i64, 1, 2],
    );
    let rows = TrecRows {
        queries: Vocab::new(&q, &q_off).unwrap(),
        docs: Vocab::new(&docs, &d_off).unwrap(),
        offsets: &[0, 3],
        doc_ids: &[0, 0, 1],
        values: &[1.0, 0.0, 2.0],
    };
    let (names, starts) = (b"xy".to_vec(), vec![0i64, 1, 2]);
    let vocab = Vocab::new(&names, &starts).unwrap();
    let p = tmp("div.qrels");
    let path = p.to_str().unwrap();
    write_subtopic_qrels_rows(path, rows, vocab, &[0, 1, 1]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "q x a 1\nq y a 0\nq y b 2\n"
    );
    for ids in [&[0u32, 1][..], &[0, 1, 2]] {
        assert!(matches!(
            write_subtopic_qrels_rows(path, rows, vocab, ids),
            Err(Error::InvalidInput(_))
        ));
    }
    let (spaced, ends) = (b"x y".to_vec(), vec![0i64, 3]);
    let spaced = Vocab::new(&spaced, &ends).unwrap();
    assert!(matches!(
        write_subtopic_qrels_rows(path, rows, spaced, &[0, 0, 0]),
        Err(Error::InvalidInput(_))
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
/// The parallel reader up to `finish`, on the run file at `path` (benches).
fn parse_file(path: &str, block: usize) -> Merger<'_, 'static> {
    let merger = Merger::new(path, Kind::Run, false);
    parse_blocks(
        open(path).unwrap(),
        merger,
        Kind::Run,
        &ReadOptions::new(false),
        block,
    )
    .unwrap()
}

fn parse_par(text: &[u8], kind: Kind, block: usize) -> Result<TrecFile> {
    parse_any(text, "mem.txt", kind, &ReadOptions::new(false), block, true).map_err(|e| match e {
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
        match parse_any(r, "f", Kind::Run, &ReadOptions::new(false), block, false) {
            Err(Error::Io { file, msg }) => assert!(file == "f" && msg.contains("fire")),
            other => panic!("{other:?}"),
        }
        // A bad line before the failure comes first.
        let bad = text.replacen("q Q0 d3 1 1 t", "q Q0 d3 1 x t", 1);
        let r = FailAfter(bad.as_bytes(), 1500);
        match parse_any(r, "f", Kind::Run, &ReadOptions::new(false), block, false) {
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
        let res = run_chunks(text.as_bytes(), "mem.txt", &ReadOptions::new(false), chunk_rows, block, &mut |e| {
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
    let t = read_trec_file(dir.join("results.test").to_str().unwrap(), Kind::Run, false).unwrap();
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
        let m = parse_file(&path, PAR_BLOCK);
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
        let m = parse_file(&path, block);
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

#[test]
fn a_set_flag_stops_the_read() {
    let opts = ReadOptions {
        cancel: Cancel::new(),
        ..ReadOptions::default()
    };
    let text = "q1 0 a 1 1.0 t\n";
    assert!(parse_trec_with(text.as_bytes(), "mem.txt", Kind::Run, &opts).is_ok());
    opts.cancel.cancel();
    assert_eq!(
        parse_trec_with(text.as_bytes(), "mem.txt", Kind::Run, &opts).err(),
        Some(Error::Interrupted)
    );
}

#[test]
fn a_line_past_the_limit_names_its_line_whatever_the_blocks() {
    // Line 2 is 300 bytes: found by the reading thread (small blocks) or by
    // the parse (a block that holds it whole), with the same line.
    let text = format!("q 0 a 1 1 t\n{}\nq 0 b 1 1 t\n", "x".repeat(300));
    let opts = ReadOptions {
        max_line: 100,
        ..ReadOptions::default()
    };
    for block in [16, 64, 1000] {
        match parse_any(text.as_bytes(), "f", Kind::Run, &opts, block, false) {
            Err(Error::Parse { line, msg, .. }) => {
                assert!(line == 2 && msg.contains("longer than 100 bytes"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
    }
}
