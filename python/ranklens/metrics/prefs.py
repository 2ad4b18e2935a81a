"""Preference measures (trec_eval 10.0 ``-R prefs`` / ``-R qrels_prefs``, ``prefs_*``).

Ground truth: judgment lines ``(jg, jsg, doc, level)``.  A judgment group (JG)
is one user's information need; within one of its sub-groups (JSG) a document
with a higher ``level`` is preferred to every document with a lower one.  Within
a JG preferences are transitive across JSGs; different JGs may contradict each
other.  Level 0 means non-relevant, ``> 0`` relevant.

The ranking: documents in rank order (the caller ranks by score descending, ties
by doc id *ascending*, as trec_eval's form_prefs_counts.c, and cuts at ``-M``).
Each judged document gets a position: the retrieved ones their order among the
judged retrieved documents (``0 .. njr-1``), the others ``njr, njr+1, ...`` in doc
id order.  A preference ``A > B`` is fulfilled-retrieved when both are retrieved
and A is above B, fulfilled-implied when only A is retrieved, possible-retrieved
/ possible-implied when both / exactly one are retrieved (fulfilled or not),
not-occurring when neither is.

A JG with one JSG is a list of equivalence classes (ECs, one per level, highest
first): every pair of lines across two ECs is a preference (a document listed
twice counts twice).  A JG with several JSGs becomes a preference relation (each
document pair once), closed transitively; a cycle is an error.  Per query:

* ``prefs_num_prefs_poss`` = possible (retrieved + implied + not occurring),
  ``prefs_num_prefs_ful`` = fulfilled (retrieved + implied),
  ``prefs_num_prefs_ful_ret`` = fulfilled-retrieved, summed over JGs;
* ``prefs_simp`` = ful / poss; ``_ret`` counts pairs with both retrieved only,
  ``_imp`` leaves out the not-occurring ones; 0 with nothing to count;
* ``prefs_pair``: the mean over document pairs with any preference of
  ``count(A>B) / (count(A>B) + count(B>A))``, A being the higher-placed
  document, counts over all JGs; pairs with neither retrieved score 0;
* ``prefs_avgjg``: the mean over JGs of ful / poss (a JG with nothing possible
  adds 0); ``_ret``/``_imp`` likewise;
* ``prefs_avgjg_Rnonrel(_ret)``: avgjg with each JG's non-relevant documents set
  to R, its number of relevant (``_ret``: relevant retrieved) documents.  With
  ``N <= R`` non-relevant ones, ``R - N`` fulfilled preferences are added per
  relevant retrieved document and ``R - N`` possible ones per relevant document;
  with more, only the first R non-relevant documents are kept and the counts
  are recomputed.

trec_eval's arithmetic is kept where it surprises (its output is the
specification): the EC recount also pairs the last EC with its own first R
documents; ``_Rnonrel_ret`` multiplies the added possible preferences by the
number of all relevant documents, and its relation recount cuts after the
``num_rel + 1``-th non-relevant retrieved document; one JG whose Rnonrel ratio
is 0/0 makes the sum NaN and the query 0.  Not reproduced (trec_eval reads past
its array): a recount whose last EC holds fewer than R documents uses the EC as
it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ranklens.errors import RanklensInputError

NAMES = (
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
)

Line = tuple[str, str, str, float]  # (jg, jsg, doc, level)


def _key(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _div(a: float, b: float) -> float:
    """C's double division: 0/0 is NaN (x/0 does not occur here)."""
    return a / b if b else math.nan


def prefs(lines: Sequence[Line], ranking: Sequence[str]) -> dict[str, float]:
    """Every preference measure of one query; ``ranking``: doc ids, best first."""
    judged = sorted({doc for _, _, doc, _ in lines}, key=_key)
    judged_set = set(judged)
    position: dict[str, int] = {}
    for doc in ranking:
        if doc in judged_set:
            if doc in position:
                raise RanklensInputError(f"document {doc!r} is ranked more than once")
            position[doc] = len(position)
    njr = len(position)
    for doc in judged:
        position.setdefault(doc, len(position))
    n = len(judged)
    for _, _, doc, level in lines:
        if not math.isfinite(level):
            raise RanklensInputError(f"document {doc!r}: preference level is NaN or infinite")

    counts: dict[tuple[int, int], int] = {}
    groups: dict[str, list[tuple[str, float, int]]] = {}
    for jg, jsg, doc, level in lines:
        groups.setdefault(jg, []).append((jsg, level, position[doc]))
    jgs = []
    for jg in sorted(groups, key=_key):
        group = sorted(groups[jg], key=lambda t: (_key(t[0]), -t[1], t[2]))
        if len({t[0] for t in group}) == 1:
            jgs.append(_equivalence_classes(group, njr, counts))
        else:
            jgs.append(_relation(group, n, njr, counts))
    return _measures(jgs, counts, n, njr)


def _classify(i: int, j: int, njr: int) -> str:
    """Category of a preference (doc at position i) > (doc at position j)."""
    if i < njr and j < njr:
        return "ful_ret" if i < j else "unful_ret"
    if i < njr:
        return "ful_imp"
    if j < njr:
        return "unful_imp"
    return "notoccur"


def _tally(jg: dict, pairs: list[tuple[int, int]], njr: int, counts: dict) -> None:
    for k in ("ful_ret", "unful_ret", "ful_imp", "unful_imp", "notoccur"):
        jg[k] = 0
    for i, j in pairs:
        # trec_eval's counters are 16-bit (unsigned short): they wrap past 65,535
        counts[(i, j)] = (counts.get((i, j), 0) + 1) % 65536
        jg[_classify(i, j, njr)] += 1
    jg["poss_ret"] = jg["ful_ret"] + jg["unful_ret"]
    jg["poss_imp"] = jg["ful_imp"] + jg["unful_imp"]


def _count_kept(pairs: list[tuple[int, int]], njr: int) -> tuple[int, int]:
    """(fulfilled, possible) of the given preferences, implied ones fulfilled."""
    ful = sum(1 for i, j in pairs if i < njr and i < j)
    return ful, len(pairs)


def _equivalence_classes(group: list, njr: int, counts: dict) -> dict:
    ecs: list[tuple[float, list[int]]] = []
    for _, level, p in group:
        if ecs and ecs[-1][0] == level:
            ecs[-1][1].append(p)
        else:
            ecs.append((level, [p]))
    jg = {"num_rel": 0, "num_rel_ret": 0, "num_nonrel": 0, "num_nonrel_ret": 0}
    for level, ranks in ecs:
        kind = "rel" if level > 0 else "nonrel"
        jg[f"num_{kind}"] += len(ranks)
        jg[f"num_{kind}_ret"] += sum(1 for r in ranks if r < njr)
    pairs = []
    for e1, (_, higher) in enumerate(ecs):
        for _, lower in ecs[e1 + 1 :]:
            for i in higher:
                for j in lower:
                    if i == j:
                        raise RanklensInputError(
                            "a document has two levels in one judgment sub-group"
                        )
                    pairs.append((i, j))
    _tally(jg, pairs, njr, counts)

    # Recounts for Rnonrel: the inner ECs pairwise (the last EC only as the
    # higher one, which has no lower partner), then every EC - the last one
    # included - against the first R documents of the last EC.
    last = ecs[-1][1]
    inner = ecs[:-1]

    def recount(cut: int, ret_only: bool) -> tuple[int, int]:
        keep = (lambda rs: [r for r in rs if r < njr]) if ret_only else (lambda rs: rs)
        new_nonrel = keep(last[:cut])
        pairs = []
        for e1, (_, higher) in enumerate(ecs):
            for _, lower in inner[e1 + 1 :]:
                pairs += [(i, j) for i in keep(higher) for j in keep(lower)]
            pairs += [(i, j) for i in keep(higher) for j in new_nonrel]
        ful = sum(1 for i, j in pairs if i < j and i < njr)
        return ful, len(pairs)

    jg["recount"] = recount(jg["num_rel"], False)
    jg["recount_ret"] = recount(jg["num_rel_ret"], True)
    return jg


def _relation(group: list, n: int, njr: int, counts: dict) -> dict:
    level_of: dict[int, float] = {}
    prefer: set[tuple[int, int]] = set()
    for k, (jsg, level, p) in enumerate(group):
        cur = level_of.get(p, -1.0)
        if (cur > 0 and level == 0) or (cur == 0 and level > 0):
            raise RanklensInputError(
                "a document has both level 0 and a positive level in one judgment group"
            )
        level_of[p] = level
        for jsg2, level2, p2 in group[k + 1 :]:
            if jsg2 != jsg:
                break
            if level2 != level:
                prefer.add((p, p2))
    # transitive closure
    docs = sorted(level_of)
    changed = True
    while changed:
        changed = False
        for a, b in list(prefer):
            for c in docs:
                if (b, c) in prefer and (a, c) not in prefer:
                    prefer.add((a, c))
                    changed = True
    prefer = {(a, b) for a, b in prefer if a != b}
    for a, b in prefer:
        if (b, a) in prefer:
            raise RanklensInputError(
                "inconsistent preferences in one judgment group: two documents are "
                "each preferred to the other"
            )
    jg = {
        "num_rel": sum(1 for p in docs if level_of[p] > 0),
        "num_rel_ret": sum(1 for p in docs if level_of[p] > 0 and p < njr),
        "num_nonrel": sum(1 for p in docs if level_of[p] == 0),
        "num_nonrel_ret": sum(1 for p in docs if level_of[p] == 0 and p < njr),
    }
    pairs = sorted(prefer)
    _tally(jg, pairs, njr, counts)

    def recount(limit: int, ret_only: bool) -> tuple[int, int]:
        # non-relevant documents from the (num_rel + 1)-th one on (in position
        # order, among positions below limit) are dropped
        nonrel = [p for p in docs if p < limit and level_of[p] == 0]
        first = nonrel[jg["num_rel"]] if len(nonrel) > jg["num_rel"] else limit
        kept = [
            (i, j)
            for i, j in pairs
            if not (i >= first and level_of[i] == 0)
            and not (j >= first and level_of[j] == 0)
            and (not ret_only or (i < njr and j < njr))
        ]
        return _count_kept(kept, njr)

    jg["recount"] = recount(n, False)
    jg["recount_ret"] = recount(njr, True)
    return jg


def _measures(jgs: list[dict], counts: dict, n: int, njr: int) -> dict[str, float]:
    def total(*keys: str) -> int:
        return sum(jg[k] for jg in jgs for k in keys)

    poss = total("poss_ret", "poss_imp", "notoccur")
    ful = total("ful_ret", "ful_imp")
    ful_ret = total("ful_ret")
    poss_ret = total("poss_ret")
    poss_imp = total("poss_ret", "poss_imp")

    def simp(f: int, p: int) -> float:
        return f / p if p else 0.0

    def pair_sum(pairs: list[tuple[int, int]], s: float = 0.0) -> tuple[float, int]:
        # one running sum: retrieved pairs, then on over retrieved-unretrieved
        k = 0
        for i, j in pairs:
            x, y = counts.get((i, j), 0), counts.get((j, i), 0)
            if x or y:
                k += 1
                s += x / (x + y)
        return s, k

    s1, k1 = pair_sum([(i, j) for i in range(njr) for j in range(i + 1, njr)])
    s12, k2 = pair_sum([(i, j) for i in range(njr) for j in range(njr, n)], s1)
    _, k3 = pair_sum([(i, j) for i in range(njr, n) for j in range(i + 1, n)])

    def mean(s: float, k: int) -> float:
        return s / k if k else 0.0

    def avgjg(*fp: tuple[str, ...]) -> float:
        s = 0.0
        for jg in jgs:
            f = sum(jg[k] for k in fp[0])
            p = sum(jg[k] for k in fp[1])
            if p:
                s += f / p
        return s / len(jgs) if s > 0 else 0.0

    def rnonrel(ret: bool) -> float:
        s = 0.0
        for jg in jgs:
            r = jg["num_rel_ret"] if ret else jg["num_rel"]
            nn = jg["num_nonrel_ret"] if ret else jg["num_nonrel"]
            if r >= nn:
                if ret:
                    f, p = jg["ful_ret"], jg["poss_ret"]
                else:
                    f = jg["ful_ret"] + jg["ful_imp"]
                    p = jg["poss_ret"] + jg["poss_imp"] + jg["notoccur"]
                f += jg["num_rel_ret"] * (r - nn)
                p += jg["num_rel"] * (r - nn)
            else:
                f, p = jg["recount_ret"] if ret else jg["recount"]
            s += _div(f, p)
        return s / len(jgs) if s > 0 else 0.0

    all_f, all_p = ("ful_ret", "ful_imp"), ("poss_ret", "poss_imp", "notoccur")
    values = (
        float(poss),
        float(ful),
        float(ful_ret),
        simp(ful, poss),
        mean(s12, k1 + k2 + k3),
        avgjg(all_f, all_p),
        rnonrel(False),
        simp(ful_ret, poss_ret),
        mean(s1, k1),
        avgjg(("ful_ret",), ("poss_ret",)),
        rnonrel(True),
        simp(ful, poss_imp),
        mean(s12, k1 + k2),
        avgjg(all_f, ("poss_ret", "poss_imp")),
    )
    return dict(zip(NAMES, values))
