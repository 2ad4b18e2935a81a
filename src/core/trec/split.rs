//! Splitting a line into its fields (C `isspace` separators): the separator
//! bitmap, the splitters over it, and the byte loop; the lowest stage.
//!
//! Splitting a line: one pass over the block computes a bitmap of separator
//! bytes, eight bytes at a time (SWAR); each line's fields are then found from
//! a 128-bit window of it with `trailing_zeros`, without a branch per byte or
//! per field (lines of 128 bytes or more use a byte loop).  A plain line
//! (exactly 6 run or 4 qrels fields, single separators, a newline right after
//! the last field) also gets its end from the bitmap ([`split_plain`]), which
//! spares it a `memchr` call (a sizeable share of a line's work); other lines
//! are found with `memchr`.  Query ids are compared with two word loads
//! (`same_bytes`), not a `memcmp` call, and a plain line walks only its field
//! ends (one `u128` bit scan a field).
//!
//! Why not (figures in `docs/design/performance.md`):
//!
//! * SWAR on each line (8 bytes at a time from the field start): no faster
//!   than the byte loop, the loop exit at each field end is still a mispredicted
//!   branch; the cost is the branches, not the bytes;
//! * line ends from a newline bitmap computed with the separator bitmap, in
//!   place of `memchr_iter`: the second mask (or one fused pass, which the
//!   compiler does not vectorise) makes `classify` dearer than the calls it
//!   saves, and walking the bitmap adds work in the loop: more in all.

use crate::core::encode::Kind;
use crate::core::error::show;

/// C `isspace` on ASCII: space, \t, \n, \v, \f, \r.
#[inline(always)]
pub(super) fn is_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// Whitespace-separated fields of one line.
pub(super) struct Fields<'a> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
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

/// A field for a message: quoted, shortened if long.
pub(super) fn quote(field: &[u8]) -> String {
    const MAX: usize = 60;
    if field.len() <= MAX {
        format!("{:?}", show(field))
    } else {
        format!("{:?}...", show(&field[..MAX]))
    }
}

/// A line's first six fields (empty where missing) and how many fields it
/// has: exact for qrels; for runs, exact below 6 and at least 6 otherwise.
pub(super) type Split<'a> = ([&'a [u8]; 6], usize);

/// Split a line byte by byte (any length).
pub(super) fn split_slow(line: &[u8], kind: Kind) -> Split<'_> {
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
/// (SWAR): far cheaper than a branch per byte.  Returns whether
/// `raw` holds a byte above 0x7f (so that only such blocks check UTF-8).
pub(super) fn classify(raw: &[u8], bits: &mut Vec<u64>) -> bool {
    bits.clear();
    let chunks = raw.chunks_exact(64);
    let rest = chunks.remainder();
    let mut high = 0u64;
    bits.extend(chunks.map(|c| {
        let mut m = 0u64;
        for (j, w) in c.chunks_exact(8).enumerate() {
            let x = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default());
            high |= x;
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
    high & HIGH_BITS != 0 || rest.iter().any(|&b| b > 0x7f)
}

/// The 128 bits of the separator bitmap (see [`classify`]) from byte `pos` on;
/// past the bitmap's end, separators.
#[inline(always)]
pub(super) fn window(bits: &[u64], pos: usize) -> u128 {
    let (wi, off) = (pos / 64, (pos % 64) as u32);
    let word = |i: usize| bits.get(i).copied().unwrap_or(!0) as u128;
    ((word(wi) | (word(wi + 1) << 64)) >> off) | word(wi + 2).checked_shl(128 - off).unwrap_or(0)
}

/// Split the line `raw[pos..end]` from `m`, the [`window`] of the separator
/// bitmap at `pos`, without a branch per byte or per field; `None` for a line
/// of 128 bytes or more.
#[inline(always)]
pub(super) fn split_bits(raw: &[u8], m: u128, pos: usize, end: usize) -> Option<Split<'_>> {
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
/// for its end with `memchr` then: a call per line is a sizeable share of a
/// line's work).
#[inline(always)]
pub(super) fn split_plain(raw: &[u8], m: u128, pos: usize, n: usize) -> Option<(Split<'_>, usize)> {
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
