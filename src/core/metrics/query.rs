//! The query as the kernels see it: `Query`, the shared running sums
//! (`Prefix`, `PrefixBuf`), the tie groups of `ties="expected"` (`TieGroups`),
//! and the rank discount; the kernels' input, importing no kernel.

use std::sync::OnceLock;

/// One query as the kernels see it.
#[derive(Clone, Copy, Debug)]
pub struct Query<'a> {
    /// Label of the document at rank `i + 1`; NaN when it is not in the qrels.
    pub ranked: &'a [f64],
    /// Labels of all judged documents of the query, any order.
    pub judged: &'a [f64],
    /// Positive labels of the judged documents, largest first.
    pub ideal: &'a [f64],
    /// `ties="expected"` only: the groups of tied documents (see
    /// `expected.rs`); empty (`TieGroups::default()`) otherwise.
    pub ties: TieGroups<'a>,
    /// Running sums over `ranked` at the evaluation's relevance level, built
    /// once per query (`PrefixBuf::build`), or `None`: kernels then scan.
    pub prefix: Option<Prefix<'a>>,
    /// Subtopic judgments (the diversity metrics, `diversity.rs`); empty
    /// (`Subtopics::default()`) when the qrels carry none.
    pub subtopics: Subtopics<'a>,
}

/// One query's subtopic judgments (intent-aware / diversity metrics).
///
/// The judged documents are numbered `0..n` in the order of their id bytes
/// (ascending: ndeval breaks ties of its greedy ideal ranking by document id).
/// Document `p` has the judgments `(ids[i], labels[i])` for `i` in
/// `bounds[p]..bounds[p + 1]`: subtopic index (local to the query) and label.
#[derive(Clone, Copy, Debug, Default)]
pub struct Subtopics<'a> {
    pub ids: &'a [u32],
    pub labels: &'a [f64],
    /// `n + 1` entries (empty when the qrels carry no subtopics).
    pub bounds: &'a [usize],
    /// The judged document at each rank of `Query::ranked` (same length), or
    /// [`UNJUDGED`].
    pub ranked: &'a [u32],
    /// Computed once per query (`eval/score.rs`), or `None`: kernels then count.
    /// The relevance level and the number of relevant judged documents of each
    /// subtopic at that level (one entry per subtopic index).
    pub relevant_docs: Option<(f64, &'a [u32])>,
}

/// `Subtopics::ranked` entry of a document not in the qrels.
pub const UNJUDGED: u32 = u32::MAX;

impl<'a> Subtopics<'a> {
    /// Whether the qrels carry subtopic judgments.
    pub fn present(&self) -> bool {
        !self.bounds.is_empty()
    }

    /// Judged documents.
    pub fn num_docs(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// Size of the subtopic index space (largest index + 1).
    pub fn num_subtopics(&self) -> usize {
        match self.relevant_docs {
            Some((_, n)) => n.len(),
            None => self.ids.iter().map(|&s| s as usize + 1).max().unwrap_or(0),
        }
    }

    /// Relevant judged documents of each subtopic at `level` (counted here
    /// unless `relevant_docs` holds them at that level).
    pub fn relevant_docs_at(&self, level: f64) -> std::borrow::Cow<'a, [u32]> {
        if let Some((l, n)) = self.relevant_docs {
            if l == level {
                return std::borrow::Cow::Borrowed(n);
            }
        }
        let mut n = vec![0u32; self.num_subtopics()];
        for p in 0..self.num_docs() {
            for t in self.relevant(p, level) {
                if let Some(c) = n.get_mut(t) {
                    *c += 1;
                }
            }
        }
        std::borrow::Cow::Owned(n)
    }

    /// The subtopics judged document `p` is relevant to at `level`.
    pub fn relevant(&self, p: usize, level: f64) -> impl Iterator<Item = usize> + '_ {
        let (a, b) = match (self.bounds.get(p), self.bounds.get(p + 1)) {
            (Some(&a), Some(&b)) if a <= b && b <= self.ids.len().min(self.labels.len()) => (a, b),
            _ => (0, 0),
        };
        self.ids[a..b]
            .iter()
            .zip(&self.labels[a..b])
            .filter(move |(_, &l)| is_rel(l, level))
            .map(|(&s, _)| s as usize)
    }
}

/// Running sums over one query's ranking, shared by every metric and cutoff.
///
/// Why: kernels that each rescan the top k (P@1..100, recall@.., ndcg@..,
/// map@..) would spend much of a many-metric evaluation rescanning; with these
/// sums a cutoff is one lookup.  Each sum is accumulated in rank order, exactly as the
/// scanning kernels add, so both paths give the same bits (tested in
/// `mod.rs`, `prefix_tests`).
#[derive(Clone, Copy, Debug)]
pub struct Prefix<'a> {
    /// The relevance level `rel` and `ap` (and `num_rel`) were counted at.
    pub level: f64,
    /// R at that level.
    pub num_rel: usize,
    /// `rel[i]`: relevant documents among the first `i` (length `ranked + 1`).
    pub rel: &'a [u32],
    /// `ap[i]`: sum of precision at the relevant ranks among the first `i`.
    pub ap: &'a [f64],
    /// `dcg[i]`: DCG (gain = label) of the first `i` documents.
    pub dcg: &'a [f64],
    /// `idcg[i]`: DCG of the first `i` ideal gains (length `ideal + 1`).
    pub idcg: &'a [f64],
}

/// Owned storage for a [`Prefix`], reused across queries.
#[derive(Default, Debug)]
pub struct PrefixBuf {
    rel: Vec<u32>,
    ap: Vec<f64>,
    dcg: Vec<f64>,
    idcg: Vec<f64>,
}

impl PrefixBuf {
    pub fn build<'a>(
        &'a mut self,
        ranked: &[f64],
        judged: &[f64],
        ideal: &[f64],
        level: f64,
    ) -> Prefix<'a> {
        self.rel.clear();
        self.ap.clear();
        self.dcg.clear();
        self.idcg.clear();
        let (mut rel, mut ap, mut dcg) = (0u32, 0.0, 0.0);
        self.rel.push(0);
        self.ap.push(0.0);
        self.dcg.push(0.0);
        for (i, &l) in ranked.iter().enumerate() {
            if is_rel(l, level) {
                rel += 1;
                ap += rel as f64 / (i + 1) as f64;
            }
            if l > 0.0 {
                dcg += l / discount(i);
            }
            self.rel.push(rel);
            self.ap.push(ap);
            self.dcg.push(dcg);
        }
        let mut idcg = 0.0;
        self.idcg.push(0.0);
        for (i, &g) in ideal.iter().enumerate() {
            idcg += g / discount(i);
            self.idcg.push(idcg);
        }
        Prefix {
            level,
            num_rel: judged.iter().filter(|&&l| is_rel(l, level)).count(),
            rel: &self.rel,
            ap: &self.ap,
            dcg: &self.dcg,
            idcg: &self.idcg,
        }
    }
}

#[inline]
pub fn is_rel(label: f64, level: f64) -> bool {
    label >= 0.0 && label >= level
}

impl<'a> Query<'a> {
    /// The shared running sums, when they were counted at `level`.
    #[inline]
    pub fn prefix_at(&self, level: f64) -> Option<Prefix<'a>> {
        self.prefix.filter(|p| p.level == level)
    }

    /// The number of documents in the top `k` (all for `None`).
    #[inline]
    pub fn depth(&self, k: Option<usize>) -> usize {
        k.map_or(self.ranked.len(), |k| k.min(self.ranked.len()))
    }

    /// R: relevant documents in the qrels.
    pub fn num_rel(&self, level: f64) -> usize {
        if let Some(p) = self.prefix_at(level) {
            return p.num_rel;
        }
        self.judged.iter().filter(|&&l| is_rel(l, level)).count()
    }

    /// The top `k` of the ranking (all of it for `None`).
    pub fn top(&self, k: Option<usize>) -> &[f64] {
        match k {
            Some(k) if k < self.ranked.len() => &self.ranked[..k],
            _ => self.ranked,
        }
    }

    /// Relevant documents among the top `k`.
    pub fn rel_in_top(&self, k: Option<usize>, level: f64) -> usize {
        if let Some(p) = self.prefix_at(level) {
            return p.rel[self.depth(k)] as usize;
        }
        self.top(k).iter().filter(|&&l| is_rel(l, level)).count()
    }
}

/// `ties="expected"`: the ranking's groups of equal scores, each in uniformly
/// random order.  Empty (the default) when the order is fixed.
#[derive(Clone, Copy, Debug, Default)]
pub struct TieGroups<'a> {
    /// Labels of the ranked documents, group after group (NaN: not in the
    /// qrels); `Query.ranked` is a prefix of it.  Longer than `ranked` when the
    /// last group straddles the `max_docs` cut: then all its members are here.
    pub labels: &'a [f64],
    /// Group boundaries: group g is `labels[bounds[g]..bounds[g + 1]]`;
    /// `bounds[0] = 0`, the last entry is `labels.len()`.
    pub bounds: &'a [usize],
}

impl TieGroups<'_> {
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }
}

#[inline]
/// `log2(i + 2)`: the discount of the document at 0-based position `i`.
/// Cached for the first 4096 ranks (a `log2` call is a visible share of a
/// many-metric evaluation); the cached values are the same computation, bit
/// for bit.
pub(crate) fn discount(i: usize) -> f64 {
    match discounts().get(i) {
        Some(&d) => d,
        None => ((i + 2) as f64).log2(),
    }
}

/// The cached discounts: `discounts()[i]` is [`discount`]`(i)`, for the
/// first 4096 ranks.
pub(crate) fn discounts() -> &'static [f64] {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    TABLE.get_or_init(|| (0..4096).map(|i| ((i + 2) as f64).log2()).collect())
}
