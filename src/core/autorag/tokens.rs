//! Token overlap between passages: AutoRAG's `retrieval_token_precision`,
//! `retrieval_token_recall` and `retrieval_token_f1`.
//!
//! Normalisation is SQuAD v1.1's `normalize_answer`, as AutoRAG's
//! `normalize_string` applies it, in this order:
//!
//! 1. lowercase (full Unicode lowercasing, as Python's `str.lower`);
//! 2. drop ASCII punctuation (Python's `string.punctuation`, `_` included);
//! 3. replace the articles `a`, `an`, `the` by a space where they are whole
//!    words (Python's `\b(a|an|the)\b`: a maximal run of word characters,
//!    alphanumeric or `_`, equal to one of them);
//! 4. split on whitespace (Python's `str.split()`: Unicode White_Space plus
//!    the separators U+001C..U+001F).
//!
//! Per pair (retrieved passage, ground-truth passage), with `same` the size of
//! the multiset intersection of their tokens: precision = same / retrieved
//! tokens, recall = same / ground-truth tokens, f1 their harmonic mean
//! (`2 * p * r / (p + r)`), all three 0 when `same` is 0.  Per row, each of the
//! three is maximised over the ground-truth passages (all groups flattened),
//! then averaged over the retrieved passages with numpy's pairwise summation
//! (`np.mean`), so the numbers are AutoRAG's to the last bit.
//!
//! One known approximation: Python's word characters are `str.isalnum()`
//! (letters, digits, numerics), Rust's `char::is_alphanumeric` also counts the
//! few combining marks that are Other_Alphabetic; the two can differ only for an
//! article glued to such a mark.

use crate::core::eval;
use crate::core::vocab::Interner;

/// Python's `str.isspace`.
#[inline]
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

#[inline]
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// AutoRAG's `normalize_string(s).split()`, appended to `out` as byte ranges
/// into `buf` (which is cleared and refilled with the normalised text).
pub fn tokenize(s: &str, buf: &mut String, out: &mut Vec<(usize, usize)>) {
    buf.clear();
    out.clear();
    // 1 + 2: lowercase, drop ASCII punctuation.
    let mut clean = String::with_capacity(s.len());
    if s.is_ascii() {
        clean.extend(
            s.bytes()
                .filter(|b| !b.is_ascii_punctuation())
                .map(|b| b.to_ascii_lowercase() as char),
        );
    } else {
        clean.extend(
            s.to_lowercase()
                .chars()
                .filter(|c| !c.is_ascii_punctuation()),
        );
    }
    // 3: whole-word articles become a space.
    let mut chars = clean.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_word(c) {
            buf.push(c);
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some(&(j, d)) = chars.peek() {
            if !is_word(d) {
                break;
            }
            end = j + d.len_utf8();
            chars.next();
        }
        let word = &clean[i..end];
        if matches!(word, "a" | "an" | "the") {
            buf.push(' ');
        } else {
            buf.push_str(word);
        }
    }
    // 4: split on whitespace.
    let mut start: Option<usize> = None;
    for (i, c) in buf.char_indices() {
        if is_py_space(c) {
            if let Some(a) = start.take() {
                out.push((a, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(a) = start {
        out.push((a, buf.len()));
    }
}

/// The normalised tokens of `s`, as owned strings (tests and debugging).
pub fn tokens(s: &str) -> Vec<String> {
    let (mut buf, mut out) = (String::new(), Vec::new());
    tokenize(s, &mut buf, &mut out);
    out.iter().map(|&(a, b)| buf[a..b].to_string()).collect()
}

/// numpy's pairwise summation of a float64 array (`np.add.reduce`), exactly.
pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut r = 0.0;
        for &x in a {
            r += x;
        }
        r
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

/// Size of the multiset intersection of two sorted id lists.
fn common(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// (precision, recall, f1) of one retrieved passage against one ground-truth
/// passage, given their sorted token ids.
pub fn overlap(pred: &[u32], gt: &[u32]) -> [f64; 3] {
    let same = common(pred, gt);
    if same == 0 {
        return [0.0; 3];
    }
    let p = same as f64 / pred.len() as f64;
    let r = same as f64 / gt.len() as f64;
    [p, r, (2.0 * p * r) / (p + r)]
}

/// Passages, flattened: passage `i` is `text[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct Passages<'a> {
    pub text: &'a str,
    pub offsets: &'a [usize],
}

impl Passages<'_> {
    fn get(&self, i: usize) -> &str {
        &self.text[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// Per-thread scratch space.
#[derive(Default)]
struct Scratch {
    buf: String,
    ranges: Vec<(usize, usize)>,
    ids: Vec<u32>,
    bounds: Vec<usize>,
    best: [Vec<f64>; 3],
}

/// Rows one task of [`token_scores_ranges`] holds: a call of at most this
/// many rows runs them in order on the calling thread (fewer than
/// [`super::TASK_ROWS`]: a row tokenises all its passages).
pub const TASK_ROWS: usize = 8;

/// Token precision, recall and f1 of every row (`rows * 3` values, in that
/// order), NaN for a row with `valid[row] == false`.  Row `r`'s retrieved
/// passages are `pred_start[r]..pred_end[r]`, its ground-truth passages (all
/// groups) `gt_start[r]..gt_end[r]`, indices into `passages`.
pub fn token_scores_ranges(
    passages: Passages<'_>,
    pred_start: &[usize],
    pred_end: &[usize],
    gt_start: &[usize],
    gt_end: &[usize],
    valid: &[bool],
) -> Vec<f64> {
    let n = valid.len();
    assert!([pred_start, pred_end, gt_start, gt_end]
        .iter()
        .all(|x| x.len() == n));
    let mut out = vec![f64::NAN; n * 3];
    eval::for_each_row(&mut out, 3, TASK_ROWS, Scratch::default, |s, r, o| {
        if !valid[r] {
            return;
        }
        let (p0, p1) = (pred_start[r], pred_end[r]);
        let (g0, g1) = (gt_start[r], gt_end[r]);
        // Every passage of the row as sorted token ids (row-local ids).
        let mut vocab = Interner::new();
        s.ids.clear();
        s.bounds.clear();
        s.bounds.push(0);
        for i in (p0..p1).chain(g0..g1) {
            tokenize(passages.get(i), &mut s.buf, &mut s.ranges);
            let start = s.ids.len();
            for &(a, b) in &s.ranges {
                // Fewer than 2^32 tokens in one row: interning cannot fail.
                s.ids
                    .push(vocab.intern(&s.buf.as_bytes()[a..b]).unwrap_or(u32::MAX));
            }
            s.ids[start..].sort_unstable();
            s.bounds.push(s.ids.len());
        }
        let np = p1 - p0;
        let toks = |i: usize| &s.ids[s.bounds[i]..s.bounds[i + 1]];
        for b in s.best.iter_mut() {
            b.clear();
        }
        for i in 0..np {
            let mut best = [f64::NEG_INFINITY; 3];
            for j in np..np + (g1 - g0) {
                let v = overlap(toks(i), toks(j));
                for (b, x) in best.iter_mut().zip(v) {
                    *b = b.max(x);
                }
            }
            for (col, x) in s.best.iter_mut().zip(best) {
                col.push(x);
            }
        }
        for (o, col) in o.iter_mut().zip(&s.best) {
            *o = numpy_sum(col) / np as f64;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squad_normalisation() {
        assert_eq!(tokens("The Cat sat on a mat."), ["cat", "sat", "on", "mat"]);
        assert_eq!(
            tokens("  an  apple, AN Apple\tthe_end "),
            ["apple", "apple", "theend"]
        );
        // punctuation is removed before articles: "a-b" -> "ab"; "the's" -> "thes"
        assert_eq!(tokens("a-b the's"), ["ab", "thes"]);
        // a non-ASCII, non-word character separates words: "the’s" -> " ’s"
        assert_eq!(tokens("the\u{2019}s"), ["\u{2019}s"]);
        assert_eq!(tokens("ÉCOLE théâtre"), ["école", "théâtre"]);
        assert_eq!(tokens("x\u{1c}y\u{a0}z"), ["x", "y", "z"]);
        assert!(tokens("the a an !!").is_empty());
        assert!(tokens("").is_empty());
    }

    #[test]
    fn pair_overlap() {
        // pred [1, 1, 2], gt [1, 3]: same = 1, p = 1/3, r = 1/2
        let v = overlap(&[1, 1, 2], &[1, 3]);
        assert_eq!(v[0], 1.0 / 3.0);
        assert_eq!(v[1], 0.5);
        assert_eq!(v[2], (2.0 * (1.0 / 3.0) * 0.5) / (1.0 / 3.0 + 0.5));
        let (p, r) = (1.0, 2.0 / 3.0);
        assert_eq!(
            overlap(&[1, 1], &[1, 1, 1]),
            [p, r, (2.0 * p * r) / (p + r)]
        );
        assert_eq!(overlap(&[], &[1]), [0.0; 3]);
        assert_eq!(common(&[1, 1, 2, 5], &[1, 2, 2, 5, 5]), 3);
    }

    #[test]
    fn numpy_pairwise_sum() {
        let a: Vec<f64> = (0..300).map(|i| 0.1 * i as f64 + 1e-3).collect();
        for n in [0, 1, 7, 8, 9, 17, 128, 129, 300] {
            let naive: f64 = a[..n].iter().sum();
            assert!((numpy_sum(&a[..n]) - naive).abs() < 1e-9);
        }
        // The blocked order: 8 partial sums, then the tail.
        let b = [1e16, 1.0, -1e16, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let r = ((1e16 + 1.0) + (-1e16 + 1.0)) + 0.0 + 1.0;
        assert_eq!(numpy_sum(&b), r);
    }

    #[test]
    fn rows() {
        let texts = ["the cat sat", "a dog", "cat sat down", "dog"];
        let mut text = String::new();
        let mut offsets = vec![0];
        for t in texts {
            text.push_str(t);
            offsets.push(text.len());
        }
        let p = Passages {
            text: &text,
            offsets: &offsets,
        };
        // row 0: preds 0, 1; gts 2, 3.  row 1: invalid.
        let out = token_scores_ranges(p, &[0, 2], &[2, 2], &[2, 4], &[4, 4], &[true, false]);
        // pred "cat sat" vs "cat sat down": p 1, r 2/3; vs "dog": 0.
        // pred "dog" vs "dog": 1, 1, 1.
        assert_eq!(out[0], (1.0 + 1.0) / 2.0);
        assert_eq!(out[1], (2.0 / 3.0 + 1.0) / 2.0);
        let f = (2.0 * 1.0 * (2.0 / 3.0)) / (1.0 + 2.0 / 3.0);
        assert_eq!(out[2], (f + 1.0) / 2.0);
        assert!(out[3..].iter().all(|x| x.is_nan()));
    }
}
