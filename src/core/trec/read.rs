//! Reading bytes: files and stdin, gzip detected by its magic bytes, blocks of
//! whole lines for the parallel parse (the reading thread), line by line.
//!
//! gzip input is recognised by its magic bytes
//! (`1f 8b`), whatever the file name; concatenated members are read.
//!
//! Why not:
//!
//! * Reading the whole file first, or mapping it: memory the size of the file
//!   (and `mmap` is `unsafe`); the reading thread overlaps the kernel copy with
//!   the parsing anyway.

use super::split::Fields;
use crate::core::error::{Error, Result};
use flate2::bufread::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::mpsc;

/// Read block size of the sequential reader and of the writer (the buffer
/// grows for a longer line).
pub(super) const BLOCK: usize = 1 << 20;

pub(super) fn io_error(file: &str, e: io::Error) -> Error {
    Error::Io {
        file: file.to_string(),
        msg: e.to_string(),
    }
}

pub(super) fn open(path: &str) -> Result<File> {
    File::open(path).map_err(|e| io_error(path, e))
}

/// Feed the complete lines of `r` to `on_line` (without the `\n`; a last line
/// without one included).  `on_line` returns `Ok(false)` to stop early.
pub(super) fn for_each_line<R: Read>(
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
pub(super) fn maybe_gunzip<'a, R: Read + Send + 'a>(
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

/// Why the reading thread stopped before the end.
pub(super) enum Stop {
    Io(Error),
    /// The line after the blocks sent is longer than the limit (its number is
    /// known only where the lines are counted: [`parse_blocks`]).
    ///
    /// [`parse_blocks`]: super::parse_blocks
    LongLine,
}

/// The UTF-8 byte order mark, dropped from the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The reading thread of [`parse_any`]: blocks of whole lines of about `size`
/// bytes (the last one may lack its newline) sent in file order; buffers come
/// back through `free` to be reused.  Stops at the end, at an I/O error (sent),
/// at a line longer than `max_line` bytes (sent: memory stays within about
/// `max_line + size` a buffer, whatever the input, a gzip bomb included), or
/// when the receiver is gone.  A UTF-8 byte order mark at the start is dropped
/// (else it would be part of the first query id).
///
/// [`parse_any`]: super::parse_any
pub(super) fn read_blocks(
    mut r: impl Read,
    file: &str,
    size: usize,
    max_line: usize,
    tx: &mpsc::SyncSender<std::result::Result<Vec<u8>, Stop>>,
    free: &mpsc::Receiver<Vec<u8>>,
) {
    let size = size.max(1);
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    let mut first = true;
    while !eof {
        let mut buf = free.try_recv().unwrap_or_default();
        buf.clear();
        // The carry is the start of a line: it holds no newline.
        buf.extend_from_slice(&carry);
        carry.clear();
        loop {
            let want = size.saturating_sub(buf.len()).max(size / 2).max(1);
            buf.reserve(want);
            let start = buf.len();
            let got = match (&mut r).take(want as u64).read_to_end(&mut buf) {
                Ok(n) => n,
                Err(e) => {
                    let _ = tx.send(Err(Stop::Io(io_error(file, e))));
                    return;
                }
            };
            if first {
                first = false;
                if buf.starts_with(BOM) {
                    buf.drain(..BOM.len());
                }
            }
            eof = got < want;
            if eof {
                break;
            }
            // Only the bytes just read: rescanning the whole buffer made a
            // long line quadratic.
            if let Some(nl) = memchr::memrchr(b'\n', &buf[start.min(buf.len())..]) {
                let nl = start.min(buf.len()) + nl;
                carry.extend_from_slice(&buf[nl + 1..]);
                buf.truncate(nl + 1);
                break;
            }
            // No newline yet: the buffer is one line longer than the block.
            if buf.len() > max_line {
                let _ = tx.send(Err(Stop::LongLine));
                return;
            }
        }
        if !buf.is_empty() && tx.send(Ok(buf)).is_err() {
            return;
        }
    }
}

/// Lines (first, second) where `doc` is listed for `query` in `path`.
pub(super) fn find_duplicate(path: &str, query: &str, doc: &str) -> Result<Option<(u64, u64)>> {
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
