//! Flat cells grouped by their `indexes` value ([`group_flat`]):
//! torchmetrics' `(preds, target, indexes)`.
//!
//! Three ways, the first that applies: sorted `indexes` (the group starts
//! found chunk by chunk on the pool, no copy of the cells); values spanning
//! a range no wider than the cells (a counting sort, one counter a value);
//! any other values (numbered through a hash map, then the same counting
//! sort).  Memory follows the cells or the groups, never the largest index
//! value.
//!
//! Not kept: sorting `(index, cell)` pairs (not linear); the sorted scan by
//! 64-cell blocks of bits, branch-free (slower than the branch a cell).

use rayon::prelude::*;

/// Flat cells grouped by query (torchmetrics' `(preds, target, indexes)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatGroups {
    /// Group `g` is places `offsets[g]..offsets[g + 1]` of the cells in group
    /// order (input order within a group).
    pub offsets: Vec<i64>,
    /// Cell `c`'s place in group order; empty when the input is already
    /// grouped (each cell is at its own place).
    pub place: Vec<i64>,
    /// The index value of each group, ascending.
    pub keys: Vec<i64>,
}

/// Group cells by their `indexes` value: any values, sorted or not; memory
/// proportional to the number of cells when unsorted (each cell's place, 8
/// bytes a cell, and, for values spanning a range wider than the number of
/// cells, each cell's group, 4 bytes), to the number of groups otherwise,
/// never to the largest index value.  At most [`SORTED_CHUNK`] cells are
/// grouped on the calling thread, without rayon.
pub fn group_flat(indexes: &[i64]) -> FlatGroups {
    if let Some(g) = group_sorted(indexes, SORTED_CHUNK) {
        return g;
    }
    if let Some(g) = group_by_range(indexes) {
        return g;
    }
    // A counting sort by group: number the distinct values as they come (a
    // hash map, as large as the groups), rank them, count, and give each cell
    // its group's next place, so input order holds within a group.  Why: this is
    // linear, where sorting `(index, cell)` pairs is not.
    let mut ids: hashbrown::HashMap<i64, u32> = hashbrown::HashMap::new();
    let mut keys: Vec<i64> = Vec::new();
    let group: Vec<u32> = indexes
        .iter()
        .map(|&x| {
            *ids.entry(x).or_insert_with(|| {
                keys.push(x);
                (keys.len() - 1) as u32
            })
        })
        .collect();
    drop(ids);
    // rank[g]: the place of group g's value among the sorted values.
    let mut by_value: Vec<u32> = (0..keys.len() as u32).collect();
    by_value.sort_unstable_by_key(|&g| keys.get(g as usize).copied());
    let mut rank = vec![0u32; keys.len()];
    for (r, &g) in by_value.iter().enumerate() {
        if let Some(x) = rank.get_mut(g as usize) {
            *x = r as u32;
        }
    }
    let slot = |g: &u32| rank.get(*g as usize).map_or(0, |&r| r as usize);
    let (offsets, place) = places(&group, keys.len(), slot);
    let keys = by_value
        .iter()
        .filter_map(|&g| keys.get(g as usize).copied())
        .collect();
    FlatGroups {
        offsets,
        place,
        keys,
    }
}

/// The group offsets and each cell's place in group order, the cells' groups
/// numbered `slot(x) < groups` in the order of their values: count the cells
/// of each group, then give each cell, in input order, its group's next place.
/// Why places rather than the cells in group order: the cells are then copied
/// into group order by writes to their places, reading the input in order
/// ([`Numbers::in_groups`](super::Numbers::in_groups)); reading them through
/// the group order instead reads each cell from a random place, and those
/// reads cost about twice the writes.
fn places<X: Sync>(
    cells: &[X],
    groups: usize,
    slot: impl Fn(&X) -> usize + Sync,
) -> (Vec<i64>, Vec<i64>) {
    let n = cells.len();
    // Parts of the cells counted and placed side by side, one per thread of
    // the pool, each with its own counters (groups x parts x 8 bytes, no more
    // than the cells' places); one part when the call is small.
    let parts = if n <= SORTED_CHUNK {
        1
    } else {
        rayon::current_num_threads().min(n / groups.max(1)).max(1)
    };
    let len = n.div_ceil(parts).max(1);
    let count = |part: &[X]| {
        let mut c = vec![0i64; groups];
        for x in part {
            if let Some(k) = c.get_mut(slot(x)) {
                *k += 1;
            }
        }
        c
    };
    let mut next: Vec<Vec<i64>> = if parts == 1 {
        vec![count(cells)]
    } else {
        cells.par_chunks(len).map(count).collect()
    };
    // offsets[v]: the cells of groups below v; next[p][v]: part p's first
    // place in group v (the parts in input order within a group).
    let mut offsets = Vec::with_capacity(groups + 1);
    let mut run = 0i64;
    for v in 0..groups {
        offsets.push(run);
        for part in next.iter_mut() {
            if let Some(k) = part.get_mut(v) {
                let c = *k;
                *k = run;
                run += c;
            }
        }
    }
    offsets.push(run);
    let take = |next: &mut Vec<i64>, x: &X| match next.get_mut(slot(x)) {
        Some(p) => {
            *p += 1;
            *p - 1
        }
        None => 0,
    };
    let place = match next.as_mut_slice() {
        [one] => cells.iter().map(|x| take(one, x)).collect(),
        all => {
            let mut place = vec![0i64; n];
            place
                .par_chunks_mut(len)
                .zip(cells.par_chunks(len))
                .zip(all.par_iter_mut())
                .for_each(|((out, part), next)| {
                    for (o, x) in out.iter_mut().zip(part) {
                        *o = take(next, x);
                    }
                });
            place
        }
    };
    (offsets, place)
}

/// Cells a task of the sorted-`indexes` scan reads: [`group_flat`] groups
/// at most this many cells in order on the calling thread, without the pool.
pub const SORTED_CHUNK: usize = 1 << 16;

/// [`group_flat`] of sorted `indexes` (`None` if they are not sorted): the
/// check and the group starts in one pass, chunk by chunk on the pool.  Why:
/// a serial check and scan took about as long as scoring the groups on two
/// threads; each chunk compares its first cell with the cell before it,
/// so the starts are those of one serial scan.
pub(super) fn group_sorted(indexes: &[i64], chunk: usize) -> Option<FlatGroups> {
    let chunk = chunk.max(1);
    // Chunk `c`'s group starts and their values; `None` if out of order.
    let part = |(c, cells): (usize, &[i64])| {
        let base = c * chunk;
        let mut prev = base.checked_sub(1).and_then(|p| indexes.get(p)).copied();
        let (mut starts, mut keys) = (Vec::new(), Vec::new());
        for (j, &x) in cells.iter().enumerate() {
            match prev {
                Some(p) if x < p => return None,
                Some(p) if x == p => {}
                _ => {
                    starts.push((base + j) as i64);
                    keys.push(x);
                }
            }
            prev = Some(x);
        }
        Some((starts, keys))
    };
    // One chunk: on this thread, in order (rayon's loop would start its
    // global pool when called outside one: `eval::with_threads_or_inline`).
    let parts: Vec<Option<(Vec<i64>, Vec<i64>)>> = if indexes.len() <= chunk {
        vec![part((0, indexes))]
    } else {
        indexes.par_chunks(chunk).enumerate().map(part).collect()
    };
    let mut offsets = Vec::new();
    let mut keys = Vec::new();
    for part in parts {
        let (starts, k) = part?;
        offsets.extend(starts);
        keys.extend(k);
    }
    offsets.push(indexes.len() as i64);
    Some(FlatGroups {
        offsets,
        place: Vec::new(),
        keys,
    })
}

/// [`group_flat`] when the index values span a range no wider than the
/// number of cells (query numbers, the usual case): a counting sort with one
/// counter per value of the range, no hashing (faster than the hash map);
/// `None` for a wider range.
fn group_by_range(indexes: &[i64]) -> Option<FlatGroups> {
    let first = *indexes.first()?;
    let span = |cells: &[i64]| {
        cells
            .iter()
            .fold((first, first), |(lo, hi), &x| (lo.min(x), hi.max(x)))
    };
    let (lo, hi) = if indexes.len() <= SORTED_CHUNK {
        span(indexes)
    } else {
        indexes
            .par_chunks(SORTED_CHUNK)
            .map(span)
            .reduce(|| (first, first), |a, b| (a.0.min(b.0), a.1.max(b.1)))
    };
    let width = usize::try_from(hi.checked_sub(lo)?).ok()?.checked_add(1)?;
    if width > indexes.len() {
        return None;
    }
    let (all, place) = places(indexes, width, |&x| (x - lo) as usize);
    // The values with cells, and the offsets of their groups alone.
    let mut offsets = vec![0i64];
    let mut keys = Vec::new();
    for (v, w) in all.windows(2).enumerate() {
        if w[1] > w[0] {
            keys.push(lo + v as i64);
            offsets.push(w[1]);
        }
    }
    Some(FlatGroups {
        offsets,
        place,
        keys,
    })
}
