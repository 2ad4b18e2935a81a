//! Parsing one block of whole lines into rows (`Parsed`): values, segments of
//! one query's consecutive lines, the duplicate check within a segment, the
//! block's first error.
//!
//! Values are parsed from the bytes by `fast-float2`.  The parse's CPU is
//! spread over the float fields, the duplicate check of each segment and the
//! rest (splitting, copying rows, the kernel's read copy, page faults), with no
//! hot spot: the speed of `cat` is out of reach of a parser that keeps every
//! row (profile in `docs/design/performance.md`).
//!
//! Why not:
//!
//! * `str::parse::<f64>` after `from_utf8`: the UTF-8 check of a short string
//!   costs about as much as the parse; `fast-float2` parses the bytes with the
//!   same algorithm, and accepts exactly the same syntax with the same values
//!   (a proptest keeps it so);
//! * a hand-written decimal parser for the scores (8 digits at a time, the
//!   exact `m / 10^k` division below 2^53, an exact `u128` division above, and
//!   fast-float2 for anything else): the same bits, but slower than
//!   fast-float2.

use super::split::{classify, is_space, quote, split_bits, split_plain, split_slow, window, Split};
use crate::core::encode::Kind;
use crate::core::error::show;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

/// One block of whole lines and what [`Parsed::parse`] makes of it: its rows,
/// the runs of consecutive rows of one query (segments), and the first error.
/// Line numbers are 1-based within the block.
#[derive(Default)]
pub(super) struct Parsed {
    pub(super) raw: Vec<u8>,
    /// Lines in the block (physical, counting comments and blank lines).
    pub(super) lines: u64,
    /// Row `i`'s document id is `docs[bounds[i]..bounds[i + 1]]`.
    pub(super) docs: Vec<u8>,
    pub(super) bounds: Vec<u32>,
    pub(super) values: Vec<f64>,
    /// Line of each row.
    pub(super) line_of: Vec<u32>,
    /// (query id as a range of `raw`, first row) of each segment.
    pub(super) segs: Vec<(usize, usize, u32)>,
    /// Run tags of the first and last rows, as ranges of `raw`.
    pub(super) tags: Option<((usize, usize), (usize, usize))>,
    /// The first error: line and message (parsing stops there).
    pub(super) err: Option<(u64, BlockError)>,
    /// The current segment's rows, to find a document listed twice.
    seen: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// Separator bitmap of `raw` (see [`classify`]).
    bits: Vec<u64>,
}

pub(super) enum BlockError {
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
    /// Parse the block; a line longer than `max_line` bytes is an error.
    pub(super) fn parse(&mut self, kind: Kind, max_line: usize) {
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
        let high = classify(raw, bits);
        // Checked only in blocks that hold a carriage return at all.
        let has_cr = memchr::memchr(b'\r', raw).is_some();
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
            let line = &raw[pos..end];
            pos = end + 1;
            line_no += 1;
            let checked = if line.len() > max_line {
                Err(long_line(max_line))
            } else if has_cr && cr_inside(line) {
                Err(CR_INSIDE.to_string())
            } else {
                row_of(split, kind)
            };
            let (qid, doc, value, tag) = match checked {
                Ok(Some(row)) => row,
                Ok(None) => continue,
                Err(msg) => {
                    *err = Some((line_no as u64, BlockError::Msg(msg)));
                    break;
                }
            };
            if high {
                if let Some(msg) =
                    not_utf8(qid, "query id").or_else(|| not_utf8(doc, "document id"))
                {
                    *err = Some((line_no as u64, BlockError::Msg(msg)));
                    break;
                }
            }
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

/// The message for a line longer than `max_line` bytes.
pub(super) fn long_line(max_line: usize) -> String {
    format!(
        "a line longer than {max_line} bytes, the limit (max_line_bytes): a file that is not \
         in TREC format, or one to read with a higher limit"
    )
}

const CR_INSIDE: &str = "a carriage return (\\r) inside a line: the file's lines seem to end \
                         in \\r alone (classic Mac OS); convert its line ends to \\n";

/// Whether a carriage return comes before the last field of `line` (one at
/// its end, as in `\r\n` line ends, is whitespace like any other).
fn cr_inside(line: &[u8]) -> bool {
    let end = line
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(0, |i| i + 1);
    memchr::memchr(b'\r', &line[..end]).is_some()
}

/// An id that is not valid UTF-8: ids are text in every output (Python
/// `str`), and decoding the bytes with replacement characters would merge
/// distinct ids.
fn not_utf8(id: &[u8], what: &str) -> Option<String> {
    std::str::from_utf8(id).err().map(|_| {
        let shown = id[..id.len().min(60)].escape_ascii();
        format!("the {what} \"{shown}\" is not valid UTF-8")
    })
}

/// `a == b` for short byte strings (query ids) without a `memcmp` call: two
/// overlapping loads for 4 to 16 bytes.
#[inline(always)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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
pub(super) fn reset_table(t: &mut HashTable<u32>) {
    let n = t.len().max(64);
    if t.capacity() > 4 * n {
        *t = HashTable::with_capacity(n);
    } else {
        t.clear();
    }
}

/// A value field: a finite `f64` in Rust's float syntax (`fast-float2`
/// parses exactly that syntax, correctly rounded, from bytes).
#[inline]
pub(super) fn parse_value(field: &[u8], what: &str) -> std::result::Result<f64, String> {
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
pub(super) type Row<'a> = (&'a [u8], &'a [u8], f64, &'a [u8]);

#[cfg(test)]
/// One line: `None` for a blank or comment line, else (qid, doc, value, tag;
/// the tag is empty for qrels); `Err` is the message for a malformed line.
#[inline]
pub(super) fn parse_line(line: &[u8], kind: Kind) -> std::result::Result<Option<Row<'_>>, String> {
    row_of(split_slow(line, kind), kind)
}

/// A split line's row (`parse_line`'s, after splitting).
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
