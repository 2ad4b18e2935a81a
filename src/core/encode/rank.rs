//! One query's run rows put in trec_eval's ranking order: score descending,
//! then document id descending by bytes.
//!
//! Most runs arrive ranked, and most of the rest ranked by score with their
//! ties in another order, so the costly full sort is the last resort: a check
//! first, then only the runs of equal scores, read through the tie notes
//! [`Builder`] took while the ids were in cache.
//!
//! Rejected alternative: comparing the ids of every tied pair here (no
//! notes): their bytes are far out of cache by now, a visible share of a
//! dict load.

use crate::core::vocab::Vocab;

use super::finish::{Scratch, Task};
#[cfg(doc)]
use super::Builder;

/// Put a query's run rows in ranking order: score descending, then document
/// id descending by bytes (strings compared only between equal scores).  Rows
/// already in that order (most run files) are left as they are; rows ranked by
/// score with ties in another order (also common) only have their ties sorted.
///
/// `notes`: for a query read in one block through [`Builder::row`], the
/// block's first input row and the bits of [`Builder`]'s `disorder` (input
/// rows that tie with the row before and are out of order with it).  With
/// them a run of equal scores is known to be in order, or, for two rows, to
/// need a swap, without reading the ids, whose bytes are far out of cache by
/// now.
pub(super) fn rank(t: &mut Task<'_>, dv: Vocab<'_>, s: &mut Scratch, notes: Option<(u32, &[u64])>) {
    let (ids, vals) = (&mut *t.ids, &mut *t.vals);
    if (1..vals.len()).all(|i| vals[i - 1].total_cmp(&vals[i]).is_ge()) {
        let by_doc = |a: &u32, b: &u32| dv.get(*b as usize).cmp(dv.get(*a as usize));
        // The notes name input rows: row `i` of the query is input row
        // `first + i` here (one block, rows not yet moved).
        let (first, notes) = match notes {
            Some((first, n)) => (first as usize, Some(n)),
            None => (0, None),
        };
        // Whether input row `r` is out of order with the row before it.
        let noted = |n: &[u64], r: usize| n.get(r / 64).is_some_and(|w| w >> (r % 64) & 1 != 0);
        let mut i = 0;
        while i < vals.len() {
            let j = (i + 1..vals.len())
                .find(|&j| vals[j].total_cmp(&vals[i]).is_ne())
                .unwrap_or(vals.len());
            if let (Some(n), true) = (notes, j - i > 1) {
                // The pairs of this run: input rows first + i + 1 .. first + j.
                if !(first + i + 1..first + j).any(|r| noted(n, r)) {
                    i = j;
                    continue;
                }
                if j - i == 2 {
                    ids.swap(i, i + 1);
                    i = j;
                    continue;
                }
            }
            let tie = &mut ids[i..j];
            if tie.windows(2).any(|w| by_doc(&w[0], &w[1]).is_gt()) {
                tie.sort_unstable_by(by_doc);
            }
            i = j;
        }
        return;
    }
    let order = |i: usize, j: usize| {
        vals[j]
            .total_cmp(&vals[i])
            .then_with(|| dv.get(ids[j] as usize).cmp(dv.get(ids[i] as usize)))
    };
    s.perm.clear();
    s.perm.extend(0..ids.len() as u32);
    s.perm
        .sort_unstable_by(|&i, &j| order(i as usize, j as usize));
    s.ids.clear();
    s.ids.extend(s.perm.iter().map(|&i| ids[i as usize]));
    s.vals.clear();
    s.vals.extend(s.perm.iter().map(|&i| vals[i as usize]));
    ids.copy_from_slice(&s.ids);
    vals.copy_from_slice(&s.vals);
}
