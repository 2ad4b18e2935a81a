//! Writing runs and qrels (plain, gzip, stdout) from borrowed rows.

use super::read::{io_error, BLOCK};
use super::split::{is_space, quote};
use crate::core::encode::Encoded;
use crate::core::error::{Error, Result};
use crate::core::vocab::Vocab;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{self, BufWriter, Write};

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
    write_rows(path, rows, |out, q, d, at, v| {
        out.extend_from_slice(q);
        out.extend_from_slice(b" Q0 ");
        out.extend_from_slice(d);
        // Writing to a Vec cannot fail.
        let _ = write!(out, " {} ", at.rank);
        push_value(out, v);
        out.push(b' ');
        out.extend_from_slice(tag.as_bytes());
        out.push(b'\n');
    })
}

/// [`write_qrels`] from borrowed rows.
pub fn write_qrels_rows(path: &str, rows: TrecRows<'_>) -> Result<()> {
    write_rows(path, rows, |out, q, d, _at, v| {
        out.extend_from_slice(q);
        out.extend_from_slice(b" 0 ");
        out.extend_from_slice(d);
        out.push(b' ');
        push_value(out, v);
        out.push(b'\n');
    })
}

/// Write diversity qrels: `qid subtopic doc label` (the format NIST's ndeval
/// reads), one line per row; the second field is the row's subtopic, by index
/// into `subtopics`.  A document judged for several subtopics has one row per
/// subtopic, in the stored order.
pub fn write_subtopic_qrels_rows(
    path: &str,
    rows: TrecRows<'_>,
    subtopics: Vocab<'_>,
    subtopic_ids: &[u32],
) -> Result<()> {
    if subtopic_ids.len() != rows.doc_ids.len() {
        return Err(Error::InvalidInput(
            "one subtopic index per row is needed".into(),
        ));
    }
    if subtopic_ids.iter().any(|&s| s as usize >= subtopics.len()) {
        return Err(Error::InvalidInput(
            "a subtopic index is out of range".into(),
        ));
    }
    for i in 0..subtopics.len() {
        let id = subtopics.get(i);
        if id.is_empty() || id.iter().any(|&b| is_space(b)) {
            return Err(Error::InvalidInput(format!(
                "subtopic {} cannot be written to a TREC file (empty, whitespace)",
                quote(id),
            )));
        }
    }
    write_rows(path, rows, |out, q, d, at, v| {
        let s = subtopic_ids
            .get(at.row)
            .map_or(&b""[..], |&s| subtopics.get(s as usize));
        out.extend_from_slice(q);
        out.push(b' ');
        out.extend_from_slice(s);
        out.push(b' ');
        out.extend_from_slice(d);
        out.push(b' ');
        push_value(out, v);
        out.push(b'\n');
    })
}

/// Check the layout and that every id can be written as one field.
pub(super) fn check_rows(r: &TrecRows<'_>) -> Result<()> {
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
pub(super) fn push_value(out: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    // Writing to a Vec cannot fail.
    let _ = if a == 0.0 || (1e-5..1e16).contains(&a) {
        write!(out, "{v}")
    } else {
        write!(out, "{v:e}")
    };
}

/// Where a line's row stands: its rank in its query (from 1) and its index
/// among all rows.
#[derive(Clone, Copy, Debug)]
pub(super) struct At {
    pub rank: usize,
    pub row: usize,
}

/// Format rows into a buffer, `line(out, qid, doc, at, value)` appending one
/// line, and write the buffer out in blocks.
pub(super) fn write_rows(
    path: &str,
    rows: TrecRows<'_>,
    mut line: impl FnMut(&mut Vec<u8>, &[u8], &[u8], At, f64),
) -> Result<()> {
    check_rows(&rows)?;
    let mut body = |w: &mut dyn Write| -> io::Result<()> {
        let mut out = Vec::with_capacity(BLOCK + 4096);
        for (qi, span) in rows.offsets.windows(2).enumerate() {
            let q = rows.queries.get(qi);
            let (a, b) = (span[0] as usize, span[1] as usize);
            let ranked = rows.doc_ids[a..b].iter().zip(&rows.values[a..b]);
            for (k, (&d, &v)) in ranked.enumerate() {
                let at = At {
                    rank: k + 1,
                    row: a + k,
                };
                line(&mut out, q, rows.docs.get(d as usize), at, v);
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
