//! Preference measures (trec_eval 10.0 `-R prefs` / `-R qrels_prefs`, `prefs_*`).
//!
//! Ground truth: judgment lines `(jg, jsg, doc, level)`.  A judgment group (JG)
//! is one user's (or one assessor's) information need; within one of its
//! sub-groups (JSG) a document with a higher `level` is preferred to every
//! document with a lower one.  Within a JG preferences are transitive across
//! JSGs; different JGs may contradict each other.  A level of 0 means
//! "non-relevant", `> 0` relevant (`-R qrels_prefs` reads a qrels file as one JG
//! per value of its second column, one JSG each).
//!
//! The ranking: the judged documents of the run in rank order (the caller ranks
//! by score descending, ties by doc id *ascending*, as trec_eval's
//! form_prefs_counts.c does, and cuts at `-M`).  With `njr` judged documents
//! retrieved, each judged document gets a position `0..num_judged`: retrieved
//! ones their order in the ranking, the others `njr, njr+1, ...` in doc id order
//! (the caller passes doc ids whose numeric order is the byte order of the
//! names).  A preference `A > B` is
//!
//! * fulfilled-retrieved when both are retrieved and A ranks above B,
//! * fulfilled-implied when only A is retrieved,
//! * possible-retrieved / possible-implied: every preference with both
//!   retrieved / exactly one retrieved (fulfilled or not),
//! * not-occurring when neither is retrieved.
//!
//! A JG with one JSG is a list of equivalence classes (ECs, one per level, in
//! decreasing level): every pair across two ECs is counted, once per line, so a
//! document listed twice counts twice.  A JG with several JSGs becomes a
//! preference matrix (a document pair counts once), closed transitively; a
//! cycle is an error (trec_eval aborts).  Per query, with sums over JGs:
//!
//! * `prefs_num_prefs_poss` = Σ possible (retrieved + implied + not occurring),
//!   `prefs_num_prefs_ful` = Σ fulfilled (retrieved + implied),
//!   `prefs_num_prefs_ful_ret` = Σ fulfilled-retrieved (summed over queries);
//! * `prefs_simp` = ful / poss; `_ret`: both retrieved only; `_imp`: without
//!   the not-occurring ones (0 when there is nothing to count);
//! * `prefs_pair`: the mean over document pairs with any preference of
//!   `count(A>B) / (count(A>B) + count(B>A))` (counts over all JGs, A above B),
//!   pairs with neither retrieved scoring 0; `_ret`/`_imp` as above;
//! * `prefs_avgjg`: the mean over JGs of the JG's ful / poss (JGs with nothing
//!   possible count 0); `_ret`, `_imp` likewise;
//! * `prefs_avgjg_Rnonrel(_ret)`: avgjg with each JG's non-relevant documents
//!   set to R, its relevant ones (retrieved ones for `_ret`): with fewer
//!   (`N <= R`), `R - N` fulfilled preferences are added per relevant
//!   retrieved document and `R - N` possible ones per relevant document; with
//!   more, only the first R non-relevant documents (rank order) of the last EC /
//!   of the matrix are kept and the counts recomputed.
//!
//! trec_eval's own arithmetic is kept where it is surprising, since its output
//! is the specification: the EC recount pairs the last EC with its own first R
//! documents too; `_Rnonrel_ret` multiplies the added possible preferences by
//! R of all (not retrieved) relevant documents and its matrix recount keeps the
//! `num_rel + 1`-th non-relevant document's position over all relevant ones; a
//! JG whose Rnonrel ratio is 0/0 makes the query's sum NaN, which trec_eval
//! then scores 0 (`if (sum > 0.0)`); the avgjg means divide by every JG.  Not
//! reproduced (trec_eval reads past its array, undefined behaviour): an Rnonrel
//! recount whose last EC has fewer than R documents (non-relevant documents
//! split over several non-positive levels) uses the EC as it is.
//!
//! Cost per query: the pairs of each JG (O(n²) for one with n documents; the
//! transitive closure O(m³ / 64) for a relation over m documents) and an
//! `n x n` matrix of 16-bit pair counts over the query's n judged documents;
//! a query with more than 16,384 judged documents is refused.

use crate::core::error::{Error, Result};

/// One judgment line of a query.  `jg` / `jsg` are ordinals in the byte order
/// of their names (JGs are visited in that order; it fixes the summation order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pref {
    pub jg: u32,
    pub jsg: u32,
    pub doc: u32,
    pub level: f64,
}

/// The measures, in trec_eval's table order (the columns of [`prefs`]).
pub const NAMES: [&str; 14] = [
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
];

/// Largest `num_judged` of one query: the pair-count matrix is `num_judged²`
/// 16-bit counters (512 MiB at this size), as trec_eval's `unsigned short`
/// array, whose wrap-around past 65,535 judgment groups is kept too.
const MAX_JUDGED: usize = 1 << 14;

#[derive(Default)]
struct Jg {
    ful_ret: u64,
    poss_ret: u64,
    ful_imp: u64,
    poss_imp: u64,
    notoccur: u64,
    num_rel: u64,
    num_rel_ret: u64,
    num_nonrel: u64,
    num_nonrel_ret: u64,
    /// Recounts for Rnonrel when N > R: (ful, poss) over all / retrieved.
    recount: (u64, u64),
    recount_ret: (u64, u64),
}

/// One line with its document's position: (jsg, level, position).
type Line = (u32, f64, usize);

/// All 14 measures of one query (see [`NAMES`]).
pub fn prefs(judgments: &[Pref], ranked: &[u32]) -> Result<[f64; 14]> {
    // Positions: judged documents, retrieved ones first in rank order.
    let mut docs: Vec<u32> = judgments.iter().map(|p| p.doc).collect();
    docs.sort_unstable();
    docs.dedup();
    let n = docs.len();
    if n > MAX_JUDGED {
        return Err(Error::InvalidInput(format!(
            "{n} judged documents in one query; preference measures take at most {MAX_JUDGED}"
        )));
    }
    let mut pos: Vec<Option<usize>> = vec![None; n];
    let mut njr = 0usize;
    for d in ranked {
        if let Ok(k) = docs.binary_search(d) {
            if pos[k].is_some() {
                return Err(Error::InvalidInput(format!(
                    "document #{d} is ranked more than once"
                )));
            }
            pos[k] = Some(njr);
            njr += 1;
        }
    }
    let mut next = njr;
    let pos: Vec<usize> = pos
        .into_iter()
        .map(|p| {
            p.unwrap_or_else(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    for p in judgments {
        if !p.level.is_finite() {
            return Err(Error::InvalidInput(format!(
                "document #{}: preference level is NaN or infinite",
                p.doc
            )));
        }
    }

    // Lines by JG, then JSG, level descending, position ascending.
    let mut lines: Vec<(u32, Line)> = judgments
        .iter()
        .map(|p| {
            let k = docs.binary_search(&p.doc).unwrap_or(0);
            (p.jg, (p.jsg, p.level, pos.get(k).copied().unwrap_or(0)))
        })
        .collect();
    lines.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1 .0.cmp(&b.1 .0))
            .then(b.1 .1.total_cmp(&a.1 .1))
            .then(a.1 .2.cmp(&b.1 .2))
    });

    let mut counts = vec![0u16; n * n];
    let mut jgs: Vec<Jg> = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let jg_id = lines[start].0;
        let end = start + lines[start..].iter().take_while(|l| l.0 == jg_id).count();
        let group: Vec<Line> = lines[start..end].iter().map(|l| l.1).collect();
        let one_jsg = group.iter().all(|l| l.0 == group[0].0);
        let jg = if one_jsg {
            jg_ec(&group, n, njr, &mut counts)?
        } else {
            jg_matrix(&group, n, njr, &mut counts)?
        };
        jgs.push(jg);
        start = end;
    }
    Ok(measures(&jgs, &counts, n, njr))
}

/// A JG with one JSG: equivalence classes by level.
fn jg_ec(group: &[Line], n: usize, njr: usize, counts: &mut [u16]) -> Result<Jg> {
    let mut ecs: Vec<(f64, Vec<usize>)> = Vec::new();
    for &(_, level, p) in group {
        match ecs.last_mut() {
            Some((l, ranks)) if *l == level => ranks.push(p),
            _ => ecs.push((level, vec![p])),
        }
    }
    let mut jg = Jg::default();
    for (e1, (level, r1s)) in ecs.iter().enumerate() {
        let ret = r1s.iter().filter(|&&r| r < njr).count() as u64;
        if *level > 0.0 {
            jg.num_rel_ret += ret;
            jg.num_rel += r1s.len() as u64;
        } else {
            jg.num_nonrel_ret += ret;
            jg.num_nonrel += r1s.len() as u64;
        }
        for (_, r2s) in &ecs[e1 + 1..] {
            for &r1 in r1s {
                for &r2 in r2s {
                    if r1 == r2 {
                        return Err(Error::InvalidInput(format!(
                            "a document has two levels in one judgment sub-group \
                             (position {r1})"
                        )));
                    }
                    if let Some(c) = counts.get_mut(r1 * n + r2) {
                        *c = c.wrapping_add(1);
                    }
                    if r1 < r2 {
                        if r2 < njr {
                            jg.ful_ret += 1;
                        } else if r1 < njr {
                            jg.ful_imp += 1;
                        } else {
                            jg.notoccur += 1;
                        }
                    } else if r1 < njr {
                        jg.poss_ret += 1;
                    } else if r2 < njr {
                        jg.poss_imp += 1;
                    } else {
                        jg.notoccur += 1;
                    }
                }
            }
        }
    }
    jg.poss_ret += jg.ful_ret;
    jg.poss_imp += jg.ful_imp;

    // Rnonrel recounts: the last EC cut to its first R (resp. R retrieved).
    let ful_if = |r1: usize, r2: usize| r1 < r2 && r1 < njr;
    let last = ecs.last().map(|e| e.1.as_slice()).unwrap_or(&[]);
    let head = |k: u64| &last[..(k as usize).min(last.len())];
    let inner = ecs.len().saturating_sub(1);
    let (mut ful, mut poss) = (0u64, 0u64);
    let new_nonrel = head(jg.num_rel);
    for (e1, (_, r1s)) in ecs.iter().enumerate() {
        for (_, r2s) in ecs.iter().take(inner).skip(e1 + 1) {
            for &r1 in r1s {
                for &r2 in r2s {
                    if ful_if(r1, r2) {
                        ful += 1;
                    } else {
                        poss += 1;
                    }
                }
            }
        }
        for &r1 in r1s {
            for &r2 in new_nonrel {
                if ful_if(r1, r2) {
                    ful += 1;
                } else {
                    poss += 1;
                }
            }
        }
    }
    jg.recount = (ful, poss + ful);
    let (mut ful, mut poss) = (0u64, 0u64);
    let ret = |rs: &[usize]| rs.iter().take_while(|&&r| r < njr).count();
    let new_nonrel = head(jg.num_rel_ret);
    let new_nonrel = &new_nonrel[..ret(new_nonrel)];
    for (e1, (_, r1s)) in ecs.iter().enumerate() {
        let r1s = &r1s[..ret(r1s)];
        for (_, r2s) in ecs.iter().take(inner).skip(e1 + 1) {
            for &r1 in r1s {
                for &r2 in &r2s[..ret(r2s)] {
                    if r1 < r2 {
                        ful += 1;
                    } else {
                        poss += 1;
                    }
                }
            }
        }
        for &r1 in r1s {
            for &r2 in new_nonrel {
                if r1 < r2 {
                    ful += 1;
                } else {
                    poss += 1;
                }
            }
        }
    }
    jg.recount_ret = (ful, poss + ful);
    Ok(jg)
}

/// A JG with several JSGs: a transitively closed preference matrix over the
/// JG's documents (local indices in position order).
fn jg_matrix(group: &[Line], n: usize, njr: usize, counts: &mut [u16]) -> Result<Jg> {
    let mut ranks: Vec<usize> = group.iter().map(|l| l.2).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let m = ranks.len();
    let local = |r: usize| ranks.binary_search(&r).unwrap_or(0);
    let words = m.div_ceil(64);
    let mut a = vec![0u64; m * words];
    let set = |a: &mut Vec<u64>, i: usize, j: usize| {
        if let Some(w) = a.get_mut(i * words + j / 64) {
            *w |= 1 << (j % 64);
        }
    };
    let get = |a: &[u64], i: usize, j: usize| {
        a.get(i * words + j / 64)
            .is_some_and(|w| w >> (j % 64) & 1 == 1)
    };
    // level per document: the last line's, in the sorted order (trec_eval's
    // rel_array); a document both 0 and > 0 is an error.
    let mut rel: Vec<f64> = vec![-1.0; m];
    for (i, &(jsg, level, r)) in group.iter().enumerate() {
        let li = local(r);
        let cur = rel[li];
        if (cur > 0.0 && level == 0.0) || (cur == 0.0 && level > 0.0) {
            return Err(Error::InvalidInput(format!(
                "a document has both level 0 and a positive level in one judgment group \
                 (position {r})"
            )));
        }
        rel[li] = level;
        let below = group[i + 1..]
            .iter()
            .take_while(|l| l.0 == jsg)
            .skip_while(|l| l.1 == level);
        for &(_, _, r2) in below {
            set(&mut a, li, local(r2));
        }
    }
    // Transitive closure (Warshall), then drop self preferences.
    for k in 0..m {
        let row_k: Vec<u64> = a[k * words..(k + 1) * words].to_vec();
        for i in 0..m {
            if get(&a, i, k) {
                for (w, x) in a[i * words..(i + 1) * words].iter_mut().zip(&row_k) {
                    *w |= x;
                }
            }
        }
    }
    for i in 0..m {
        if let Some(w) = a.get_mut(i * words + i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    for i in 0..m {
        for j in i + 1..m {
            if get(&a, i, j) && get(&a, j, i) {
                return Err(Error::InvalidInput(format!(
                    "inconsistent preferences in one judgment group: positions {} and {} \
                     are each preferred to the other",
                    ranks[i], ranks[j]
                )));
            }
        }
    }
    let mut jg = Jg::default();
    for (li, &r) in ranks.iter().enumerate() {
        if rel[li] > 0.0 {
            jg.num_rel += 1;
            jg.num_rel_ret += u64::from(r < njr);
        } else if rel[li] == 0.0 {
            jg.num_nonrel += 1;
            jg.num_nonrel_ret += u64::from(r < njr);
        }
    }
    for (li, &ri) in ranks.iter().enumerate() {
        for (lj, &rj) in ranks.iter().enumerate() {
            if !get(&a, li, lj) {
                continue;
            }
            if let Some(c) = counts.get_mut(ri * n + rj) {
                *c = c.wrapping_add(1);
            }
            if ri < njr {
                if rj < ri {
                    jg.poss_ret += 1;
                } else if rj < njr {
                    jg.ful_ret += 1;
                } else {
                    jg.ful_imp += 1;
                }
            } else if rj < njr {
                jg.poss_imp += 1;
            } else {
                jg.notoccur += 1;
            }
        }
    }
    jg.poss_ret += jg.ful_ret;
    jg.poss_imp += jg.ful_imp;

    // Rnonrel recounts: non-relevant documents after the (R+1)-th are dropped.
    let first_discarded = |limit: usize| {
        let mut seen = 0;
        for (li, &r) in ranks.iter().enumerate() {
            if r >= limit {
                break;
            }
            if rel[li] == 0.0 {
                seen += 1;
                if seen == jg.num_rel + 1 {
                    return r;
                }
            }
        }
        limit
    };
    let recount = |first: usize, ret_only: bool| {
        let (mut ful, mut poss) = (0u64, 0u64);
        let kept = |li: usize| !(ranks[li] >= first && rel[li] == 0.0);
        for (li, &ri) in ranks.iter().enumerate() {
            if !kept(li) || (ret_only && ri >= njr) {
                continue;
            }
            for (lj, &rj) in ranks.iter().enumerate() {
                if li == lj || !kept(lj) || (ret_only && rj >= njr) || !get(&a, li, lj) {
                    continue;
                }
                if ri < njr && ri < rj {
                    ful += 1;
                } else {
                    poss += 1;
                }
            }
        }
        (ful, poss + ful)
    };
    jg.recount = recount(first_discarded(n), false);
    jg.recount_ret = recount(first_discarded(njr), true);
    Ok(jg)
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}

fn measures(jgs: &[Jg], counts: &[u16], n: usize, njr: usize) -> [f64; 14] {
    let sum = |f: &dyn Fn(&Jg) -> u64| jgs.iter().map(f).sum::<u64>();
    let poss = sum(&|j| j.poss_ret + j.poss_imp + j.notoccur);
    let ful = sum(&|j| j.ful_ret + j.ful_imp);
    let ful_ret = sum(&|j| j.ful_ret);
    let poss_ret = sum(&|j| j.poss_ret);
    let poss_imp = sum(&|j| j.poss_ret + j.poss_imp);
    let simp = |f: u64, p: u64| if p > 0 { ratio(f, p) } else { 0.0 };

    // pairs: (sum over retrieved pairs, count), (retrieved-unretrieved), count of neither
    let c = |i: usize, j: usize| counts.get(i * n + j).copied().unwrap_or(0);
    // trec_eval accumulates one sum over the retrieved pairs, then on over the
    // retrieved-unretrieved ones (the order fixes the rounding).
    let pair_part =
        |mut s: f64, is: std::ops::Range<usize>, js: &dyn Fn(usize) -> std::ops::Range<usize>| {
            let mut k = 0u64;
            for i in is {
                for j in js(i) {
                    let (x, y) = (c(i, j), c(j, i));
                    if x > 0 || y > 0 {
                        k += 1;
                        s += f64::from(x) / (f64::from(x) + f64::from(y));
                    }
                }
            }
            (s, k)
        };
    let (s1, k1) = pair_part(0.0, 0..njr, &|i| i + 1..njr);
    let (s12, k2) = pair_part(s1, 0..njr, &|_| njr..n);
    let (_, k3) = pair_part(0.0, njr..n, &|i| i + 1..n);
    let mean = |s: f64, k: u64| if k > 0 { s / k as f64 } else { 0.0 };

    let avgjg = |f: &dyn Fn(&Jg) -> (u64, u64)| {
        let mut s = 0.0;
        for j in jgs {
            let (a, b) = f(j);
            if b > 0 {
                s += ratio(a, b);
            }
        }
        if s > 0.0 {
            s / jgs.len() as f64
        } else {
            0.0
        }
    };
    let rnonrel = |ret: bool| {
        let mut s = 0.0;
        for j in jgs {
            let (r, nn) = if ret {
                (j.num_rel_ret, j.num_nonrel_ret)
            } else {
                (j.num_rel, j.num_nonrel)
            };
            let (f, p) = if r >= nn {
                let (f, p) = if ret {
                    (j.ful_ret, j.poss_ret)
                } else {
                    (j.ful_ret + j.ful_imp, j.poss_ret + j.poss_imp + j.notoccur)
                };
                (f + j.num_rel_ret * (r - nn), p + j.num_rel * (r - nn))
            } else if ret {
                j.recount_ret
            } else {
                j.recount
            };
            s += ratio(f, p);
        }
        if s > 0.0 {
            s / jgs.len() as f64
        } else {
            0.0
        }
    };
    [
        poss as f64,
        ful as f64,
        ful_ret as f64,
        simp(ful, poss),
        mean(s12, k1 + k2 + k3),
        avgjg(&|j| (j.ful_ret + j.ful_imp, j.poss_ret + j.poss_imp + j.notoccur)),
        rnonrel(false),
        simp(ful_ret, poss_ret),
        mean(s1, k1),
        avgjg(&|j| (j.ful_ret, j.poss_ret)),
        rnonrel(true),
        simp(ful, poss_imp),
        mean(s12, k1 + k2),
        avgjg(&|j| (j.ful_ret + j.ful_imp, j.poss_ret + j.poss_imp)),
    ]
}

/// [`prefs`] for many queries, in parallel: query `i`'s lines are
/// `jud_offsets[i]..jud_offsets[i + 1]` of the four columns, its ranking
/// `ranked_offsets[i]..ranked_offsets[i + 1]` of `ranked`.  Row-major
/// `queries x 14` values.
pub fn prefs_batch(
    jg: &[u32],
    jsg: &[u32],
    doc: &[u32],
    level: &[f64],
    jud_offsets: &[u64],
    ranked: &[u32],
    ranked_offsets: &[u64],
) -> Result<Vec<f64>> {
    use rayon::prelude::*;
    let nl = jg.len();
    if jsg.len() != nl || doc.len() != nl || level.len() != nl {
        return Err(Error::InvalidInput(
            "preference columns of different lengths".into(),
        ));
    }
    if jud_offsets.len() != ranked_offsets.len() || jud_offsets.is_empty() {
        return Err(Error::InvalidInput(
            "judgment and ranking offsets of different lengths".into(),
        ));
    }
    let range = |o: &[u64], i: usize, len: usize| -> Result<std::ops::Range<usize>> {
        let a = o.get(i).copied().unwrap_or(0) as usize;
        let b = o.get(i + 1).copied().unwrap_or(0) as usize;
        if a > b || b > len {
            return Err(Error::InvalidInput(format!("bad offsets for query #{i}")));
        }
        Ok(a..b)
    };
    let nq = jud_offsets.len() - 1;
    let rows: Vec<[f64; 14]> = (0..nq)
        .into_par_iter()
        .map(|i| {
            let j = range(jud_offsets, i, nl)?;
            let r = range(ranked_offsets, i, ranked.len())?;
            let lines: Vec<Pref> = j
                .map(|k| Pref {
                    jg: jg[k],
                    jsg: jsg[k],
                    doc: doc[k],
                    level: level[k],
                })
                .collect();
            prefs(&lines, &ranked[r])
        })
        .collect::<Result<_>>()?;
    Ok(rows.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(jg: u32, jsg: u32, doc: u32, level: f64) -> Pref {
        Pref {
            jg,
            jsg,
            doc,
            level,
        }
    }

    #[test]
    fn one_pair_fulfilled_and_not() {
        // doc 0 > doc 1
        let j = [p(0, 0, 0, 1.0), p(0, 0, 1, 0.0)];
        let v = prefs(&j, &[0, 1]).unwrap_or([f64::NAN; 14]);
        assert_eq!(&v[..4], &[1.0, 1.0, 1.0, 1.0]);
        let v = prefs(&j, &[1, 0]).unwrap_or([f64::NAN; 14]);
        assert_eq!(&v[..4], &[1.0, 0.0, 0.0, 0.0]);
        // only the preferred one retrieved: fulfilled, implied
        let v = prefs(&j, &[0]).unwrap_or([f64::NAN; 14]);
        assert_eq!(&v[..4], &[1.0, 1.0, 0.0, 1.0]);
        assert_eq!(v[7], 0.0); // simp_ret: nothing possible among retrieved
        assert_eq!(v[11], 1.0); // simp_imp
    }

    #[test]
    fn transitive_across_subgroups() {
        // get_prefs.c's example: 1>2, 1>3, 2>3 (sub1); 2>4 (sub2) => 1>4 too.
        let j = [
            p(0, 0, 1, 3.0),
            p(0, 0, 2, 2.0),
            p(0, 0, 3, 1.0),
            p(0, 1, 2, 5.0),
            p(0, 1, 4, 4.0),
        ];
        let v = prefs(&j, &[]).unwrap_or([f64::NAN; 14]);
        assert_eq!(v[0], 5.0);
        let v = prefs(&j, &[4, 3, 2, 1]).unwrap_or([f64::NAN; 14]);
        assert_eq!((v[0], v[1]), (5.0, 0.0));
    }

    #[test]
    fn cycle_is_an_error() {
        let j = [
            p(0, 0, 1, 2.0),
            p(0, 0, 2, 1.0),
            p(0, 1, 2, 2.0),
            p(0, 1, 1, 1.0),
        ];
        assert!(prefs(&j, &[1, 2]).is_err());
    }

    #[test]
    fn two_levels_in_one_ec_group_is_an_error() {
        let j = [p(0, 0, 1, 2.0), p(0, 0, 1, 1.0)];
        assert!(prefs(&j, &[1]).is_err());
    }

    #[test]
    fn pair_counts_conflicting_groups() {
        // JG 0: 1 > 2; JG 1: 2 > 1; ranking 1, 2: the pair scores 1/2.
        let j = [
            p(0, 0, 1, 1.0),
            p(0, 0, 2, 0.0),
            p(1, 0, 2, 1.0),
            p(1, 0, 1, 0.0),
        ];
        let v = prefs(&j, &[1, 2]).unwrap_or([f64::NAN; 14]);
        assert_eq!(v[3], 0.5); // simp
        assert_eq!(v[4], 0.5); // pair
        assert_eq!(v[5], 0.5); // avgjg: (1 + 0) / 2
    }
}
