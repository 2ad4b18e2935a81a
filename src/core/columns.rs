//! Building the encoded form from columns: one (query id, doc id, value) per row,
//! as data frames and Arrow tables hold them.
//!
//! Id columns arrive in Arrow's layouts, borrowed without copying:
//!
//! * [`Ids::Strings`]: row `i` is `bytes[offsets[i]..offsets[i + 1]]`, offsets
//!   `i32` (`string`) or `i64` (`large_string`), absolute into `bytes` (a sliced
//!   Arrow array passes its offsets from its own offset on, and the whole data
//!   buffer);
//! * [`Ids::Dict`]: a dictionary of strings (same layout) and one index per row
//!   (dictionary-encoded Arrow columns, pandas categoricals); a negative index is
//!   a null (pandas' code -1);
//! * [`Ids::Int`] / [`Ids::UInt`]: integer ids, written in decimal.
//!
//! Values are `f64`.  A table whose columns are chunked differently is passed as
//! several [`Chunk`]s cut at the union of the chunk boundaries (the Python side
//! does that with zero-copy slices); rows are numbered across chunks, so an
//! error names the row of the whole table and the column.
//!
//! Everything goes through [`Builder`], which checks values and duplicates and
//! sorts.  Two shortcuts keep the per-row cost at one hash of the document id:
//! a query id equal to the previous row's is not hashed again (frames are
//! usually grouped by query), and a dictionary's query ids are interned once
//! per entry, on first use (an unused entry must not become an empty query).

use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::{Error, Result};
use crate::core::vocab::NONE;
use std::io::Write;

/// Offsets or indices of an Arrow array, in either integer width.
#[derive(Clone, Copy, Debug)]
pub enum Ints<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Ints<'_> {
    pub fn len(&self) -> usize {
        match self {
            Ints::I32(s) => s.len(),
            Ints::I64(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn at(&self, i: usize) -> i64 {
        match self {
            Ints::I32(s) => s[i] as i64,
            Ints::I64(s) => s[i],
        }
    }
}

/// One id column (or one chunk of it).
#[derive(Clone, Copy, Debug)]
pub enum Ids<'a> {
    /// Arrow string layout: `offsets.len()` is rows + 1.
    Strings { bytes: &'a [u8], offsets: Ints<'a> },
    /// A dictionary (string layout) and one index into it per row; < 0 is null.
    Dict {
        bytes: &'a [u8],
        offsets: Ints<'a>,
        indices: Ints<'a>,
    },
    /// Signed integer ids.
    Int(&'a [i64]),
    /// Unsigned integer ids.
    UInt(&'a [u64]),
}

impl Ids<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Ids::Strings { offsets, .. } => offsets.len().saturating_sub(1),
            Ids::Dict { indices, .. } => indices.len(),
            Ids::Int(v) => v.len(),
            Ids::UInt(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Check a string layout once, so that rows can be sliced without failing.
fn check_layout(bytes: &[u8], offsets: &Ints<'_>, column: &str, what: &str) -> Result<()> {
    let bad = |m: &str| {
        Err(Error::InvalidInput(format!(
            "column {column:?}: {what} {m}"
        )))
    };
    if offsets.is_empty() {
        return bad("offsets are empty (need one more than the number of strings)");
    }
    let mut prev = offsets.at(0);
    if prev < 0 {
        return bad("offsets are negative");
    }
    for i in 1..offsets.len() {
        let o = offsets.at(i);
        if o < prev {
            return bad("offsets decrease");
        }
        prev = o;
    }
    if prev as u64 > bytes.len() as u64 {
        return bad("offsets run past the data buffer");
    }
    Ok(())
}

/// Every string of a (checked) layout is valid UTF-8: ids are text (`str`)
/// in every output, and Arrow `binary` columns may hold any bytes, which
/// decoded with replacement characters would merge distinct ids.  One pass
/// over the bytes and a byte test per offset; the first bad string's index
/// (from 0) otherwise.
fn first_not_utf8(bytes: &[u8], offsets: &Ints<'_>) -> Option<usize> {
    let n = offsets.len() - 1;
    let (a, b) = (offsets.at(0) as usize, offsets.at(n) as usize);
    // A UTF-8 buffer cut only before a byte that does not continue a
    // character (0b10xxxxxx) holds UTF-8 strings.
    let boundary = |o: i64| bytes.get(o as usize).map_or(true, |&c| (c as i8) >= -0x40);
    if std::str::from_utf8(&bytes[a..b]).is_ok() && (0..=n).all(|i| boundary(offsets.at(i))) {
        return None;
    }
    (0..n).find(|&i| std::str::from_utf8(slice(bytes, offsets, i)).is_err())
}

#[inline]
fn slice<'a>(bytes: &'a [u8], offsets: &Ints<'_>, i: usize) -> &'a [u8] {
    &bytes[offsets.at(i) as usize..offsets.at(i + 1) as usize]
}

fn null_error(row: usize, column: &str) -> Error {
    Error::InvalidInput(format!("column {column:?}, row {row}: the id is null"))
}

/// Reads one id column row by row (dictionary entries resolved by the caller).
struct Reader<'a> {
    ids: Ids<'a>,
    dict_len: usize,
    buf: Vec<u8>,
}

impl<'a> Reader<'a> {
    /// `row0`: the number of the chunk's first row in the whole table.
    fn new(ids: Ids<'a>, column: &str, row0: usize) -> Result<Self> {
        let mut dict_len = 0;
        let not_utf8 = |what: String| {
            Err(Error::InvalidInput(format!(
                "column {column:?}, {what}: the id is not valid UTF-8"
            )))
        };
        match &ids {
            Ids::Strings { bytes, offsets } => {
                check_layout(bytes, offsets, column, "string")?;
                if let Some(i) = first_not_utf8(bytes, offsets) {
                    return not_utf8(format!("row {}", row0 + i));
                }
            }
            Ids::Dict { bytes, offsets, .. } => {
                check_layout(bytes, offsets, column, "dictionary")?;
                if let Some(k) = first_not_utf8(bytes, offsets) {
                    return not_utf8(format!("dictionary entry {k}"));
                }
                dict_len = offsets.len() - 1;
            }
            Ids::Int(_) | Ids::UInt(_) => {}
        }
        Ok(Reader {
            ids,
            dict_len,
            buf: Vec::with_capacity(24),
        })
    }

    /// The dictionary index of row `i` (`Dict` only), checked.
    #[inline]
    fn index(&self, i: usize, row: usize, column: &str) -> Result<usize> {
        let Ids::Dict { indices, .. } = &self.ids else {
            return Err(Error::InvalidInput(format!(
                "column {column:?}: not a dictionary-encoded column"
            )));
        };
        let k = indices.at(i);
        if k < 0 {
            return Err(null_error(row, column));
        }
        if k as u64 >= self.dict_len as u64 {
            return Err(Error::InvalidInput(format!(
                "column {column:?}, row {row}: dictionary index {k} out of range \
                 ({} entries)",
                self.dict_len
            )));
        }
        Ok(k as usize)
    }

    /// The bytes of row `i` (`row`: its number in the whole table, for messages).
    #[inline]
    fn get(&mut self, i: usize, row: usize, column: &str) -> Result<&[u8]> {
        match self.ids {
            Ids::Strings { bytes, offsets } => Ok(slice(bytes, &offsets, i)),
            Ids::Dict { bytes, offsets, .. } => {
                let k = self.index(i, row, column)?;
                Ok(slice(bytes, &offsets, k))
            }
            Ids::Int(v) => {
                self.buf.clear();
                let _ = write!(self.buf, "{}", v[i]);
                Ok(&self.buf)
            }
            Ids::UInt(v) => {
                self.buf.clear();
                let _ = write!(self.buf, "{}", v[i]);
                Ok(&self.buf)
            }
        }
    }
}

/// One chunk of rows: the three columns, of equal length.
#[derive(Clone, Copy, Debug)]
pub struct Chunk<'a> {
    pub queries: Ids<'a>,
    pub docs: Ids<'a>,
    pub values: &'a [f64],
}

/// Column names, for messages.
#[derive(Clone, Copy, Debug)]
pub struct Names<'a> {
    pub query: &'a str,
    pub doc: &'a str,
    pub value: &'a str,
}

/// Encode rows given as column chunks (in row order).  `round_f32` as in
/// [`Builder::new`].
pub fn encode_columns(
    kind: Kind,
    chunks: &[Chunk<'_>],
    names: Names<'_>,
    round_f32: bool,
) -> Result<Encoded> {
    let mut b = Builder::new(kind, round_f32);
    b.reserve(chunks.iter().map(|c| c.values.len()).sum());
    let mut row0 = 0usize;
    // The query of the previous row (reused when the next row's id is equal).
    let mut last_q: Option<(Vec<u8>, u32)> = None;
    for c in chunks {
        let n = c.values.len();
        for (ids, name) in [(&c.queries, names.query), (&c.docs, names.doc)] {
            if ids.len() != n {
                return Err(Error::InvalidInput(format!(
                    "column {name:?} has {} rows where column {:?} has {n} (rows {row0}..)",
                    ids.len(),
                    names.value
                )));
            }
        }
        let mut qr = Reader::new(c.queries, names.query, row0)?;
        let mut dr = Reader::new(c.docs, names.doc, row0)?;
        // Dictionary-encoded queries: each entry interned once, when first used.
        let mut qdict: Vec<u32> = vec![NONE; qr.dict_len];
        for (i, &value) in c.values.iter().enumerate() {
            let row = row0 + i;
            let q = if matches!(qr.ids, Ids::Dict { .. }) {
                let k = qr.index(i, row, names.query)?;
                if qdict[k] == NONE {
                    qdict[k] = b.query(qr.get(i, row, names.query)?)?;
                }
                qdict[k]
            } else {
                let qb = qr.get(i, row, names.query)?;
                match &mut last_q {
                    Some((prev, id)) if prev.as_slice() == qb => *id,
                    slot => {
                        let id = b.query(qb)?;
                        match slot {
                            Some((prev, pid)) => {
                                prev.clear();
                                prev.extend_from_slice(qb);
                                *pid = id;
                            }
                            None => *slot = Some((qb.to_vec(), id)),
                        }
                        id
                    }
                }
            };
            let doc = dr.get(i, row, names.doc)?;
            b.row(q, doc, value).map_err(|e| match e {
                Error::NonFinite { .. } => {
                    Error::InvalidInput(format!("{e} (row {row}, column {:?})", names.value))
                }
                e => e,
            })?;
        }
        // A dictionary chunk's query ids are not comparable to the next chunk's.
        if matches!(qr.ids, Ids::Dict { .. }) {
            last_q = None;
        }
        row0 += n;
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::show;

    const NAMES: Names<'static> = Names {
        query: "query_id",
        doc: "doc_id",
        value: "score",
    };

    fn dict_of(e: &Encoded) -> Vec<(String, Vec<(String, f64)>)> {
        let qv = e.queries.view();
        let dv = e.docs.view();
        (0..qv.len())
            .map(|q| {
                let (a, b) = (e.offsets[q] as usize, e.offsets[q + 1] as usize);
                let rows = (a..b)
                    .map(|j| (show(dv.get(e.doc_ids[j] as usize)), e.values[j]))
                    .collect();
                (show(qv.get(q)), rows)
            })
            .collect()
    }

    #[test]
    fn strings_dict_and_ints_agree_with_the_builder() {
        // rows: (q1, d1, 1.0) (q1, d2, 3.0) (q2, d1, 2.0) (q1, d3, 2.0)
        let qbytes = b"q1q1q2q1";
        let qoff = [0i32, 2, 4, 6, 8];
        let dbytes = b"xxd1d2d1d3"; // a sliced array: offsets start at 2
        let doff = [2i64, 4, 6, 8, 10];
        let values = [1.0, 3.0, 2.0, 2.0];
        let strings = Chunk {
            queries: Ids::Strings {
                bytes: qbytes,
                offsets: Ints::I32(&qoff),
            },
            docs: Ids::Strings {
                bytes: dbytes,
                offsets: Ints::I64(&doff),
            },
            values: &values,
        };
        let e1 = encode_columns(Kind::Run, &[strings], NAMES, false).unwrap();
        let mut b = Builder::new(Kind::Run, false);
        for (q, d, v) in [
            ("q1", "d1", 1.0),
            ("q1", "d2", 3.0),
            ("q2", "d1", 2.0),
            ("q1", "d3", 2.0),
        ] {
            b.push(q.as_bytes(), d.as_bytes(), v).unwrap();
        }
        let expected = b.finish().unwrap();
        assert_eq!(e1, expected);

        // Same rows, queries dictionary-encoded (with an unused entry "zz"),
        // split into two chunks.
        let dict = b"zzq2q1";
        let dict_off = [0i32, 2, 4, 6];
        let idx = [2i32, 2, 1, 2];
        let c1 = Chunk {
            queries: Ids::Dict {
                bytes: dict,
                offsets: Ints::I32(&dict_off),
                indices: Ints::I32(&idx[..2]),
            },
            docs: Ids::Strings {
                bytes: dbytes,
                offsets: Ints::I64(&doff[..3]),
            },
            values: &values[..2],
        };
        let c2 = Chunk {
            queries: Ids::Dict {
                bytes: dict,
                offsets: Ints::I32(&dict_off),
                indices: Ints::I32(&idx[2..]),
            },
            docs: Ids::Strings {
                bytes: dbytes,
                offsets: Ints::I64(&doff[2..]),
            },
            values: &values[2..],
        };
        let e2 = encode_columns(Kind::Run, &[c1, c2], NAMES, false).unwrap();
        assert_eq!(dict_of(&e2), dict_of(&expected));
        assert_eq!(e2.extra, expected.extra);

        // Integer ids become decimal strings.
        let qi = [7i64, 7, -3];
        let du = [10u64, 2, 10];
        let e3 = encode_columns(
            Kind::Qrels,
            &[Chunk {
                queries: Ids::Int(&qi),
                docs: Ids::UInt(&du),
                values: &[1.0, 0.5, 2.0],
            }],
            NAMES,
            false,
        )
        .unwrap();
        assert_eq!(
            dict_of(&e3),
            vec![
                ("-3".to_string(), vec![("10".to_string(), 2.0)]),
                (
                    "7".to_string(),
                    vec![("10".to_string(), 1.0), ("2".to_string(), 0.5)]
                ),
            ]
        );
    }

    #[test]
    fn errors_name_row_and_column() {
        let dict = b"ab";
        let off = [0i64, 1, 2];
        let idx = [0i64, -1];
        let d = [1i64, 2];
        let c = Chunk {
            queries: Ids::Dict {
                bytes: dict,
                offsets: Ints::I64(&off),
                indices: Ints::I64(&idx),
            },
            docs: Ids::Int(&d),
            values: &[1.0, 2.0],
        };
        let e = encode_columns(Kind::Run, &[c, c], NAMES, false).unwrap_err();
        assert_eq!(e.to_string(), "column \"query_id\", row 1: the id is null");

        let c = Chunk {
            queries: Ids::Int(&d),
            docs: Ids::Int(&d),
            values: &[1.0, f64::NAN],
        };
        let e = encode_columns(Kind::Run, &[c, c], NAMES, false).unwrap_err();
        assert!(
            e.to_string().contains("row 1, column \"score\""),
            "{}",
            e.to_string()
        );

        let c = Chunk {
            queries: Ids::Int(&d),
            docs: Ids::Int(&[5, 5]),
            values: &[1.0, 2.0],
        };
        let c2 = Chunk {
            queries: Ids::Int(&[1]),
            docs: Ids::Int(&[5]),
            values: &[1.0],
        };
        assert_eq!(
            encode_columns(Kind::Qrels, &[c, c2], NAMES, false),
            Err(Error::DuplicateDocument {
                query: "1".into(),
                doc: "5".into()
            })
        );

        let bad = Chunk {
            queries: Ids::Strings {
                bytes: b"abc",
                offsets: Ints::I32(&[0, 2, 9]),
            },
            docs: Ids::Int(&d),
            values: &[1.0, 2.0],
        };
        assert!(encode_columns(Kind::Run, &[bad], NAMES, false).is_err());
        let short = Chunk {
            queries: Ids::Int(&d),
            docs: Ids::Int(&[1]),
            values: &[1.0, 2.0],
        };
        assert!(encode_columns(Kind::Run, &[short], NAMES, false).is_err());
        let out_of_range = Chunk {
            queries: Ids::Dict {
                bytes: dict,
                offsets: Ints::I64(&off),
                indices: Ints::I64(&[0, 2]),
            },
            docs: Ids::Int(&d),
            values: &[1.0, 2.0],
        };
        assert!(encode_columns(Kind::Run, &[out_of_range], NAMES, false).is_err());
    }

    #[test]
    fn empty_input() {
        let e = encode_columns(Kind::Run, &[], NAMES, false).unwrap();
        assert_eq!(e.offsets, vec![0]);
        assert!(e.doc_ids.is_empty());
    }

    #[test]
    fn ids_that_are_not_utf8_are_an_error_naming_the_row() {
        // Rows 1 and 2 ("q\xff", "q\xfe") decoded with replacement
        // characters were one query.
        let bytes = b"q1q\xffq\xfe";
        let offsets = [0i64, 2, 4, 6];
        let docs = b"aaa";
        let doffsets = [0i64, 1, 2, 3];
        let chunk = Chunk {
            queries: Ids::Strings {
                bytes,
                offsets: Ints::I64(&offsets),
            },
            docs: Ids::Strings {
                bytes: docs,
                offsets: Ints::I64(&doffsets),
            },
            values: &[1.0, 1.0, 1.0],
        };
        let e = encode_columns(Kind::Run, &[chunk, chunk], NAMES, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("column {:?}, row 1: the id is not valid UTF-8", NAMES.query)
        );
        // A character cut by an offset: each string alone is checked.
        let cut = "é".as_bytes();
        let chunk = Chunk {
            queries: Ids::Strings {
                bytes: cut,
                offsets: Ints::I64(&[0, 1, 2]),
            },
            docs: Ids::Strings {
                bytes: b"ab",
                offsets: Ints::I64(&[0, 1, 2]),
            },
            values: &[1.0, 1.0],
        };
        assert!(encode_columns(Kind::Run, &[chunk], NAMES, false)
            .unwrap_err()
            .to_string()
            .contains("row 0: the id is not valid UTF-8"));
    }
}
