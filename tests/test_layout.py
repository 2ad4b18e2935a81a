"""Object reads without C-API calls (``src/bindings/layout/``) against the calls.

On the CPython versions with a layout table (3.9 to 3.13), the dict paths and
``Scorer.batch`` read a ``str``'s text and cached hash, a ``float``'s value, a
``list``'s items and a dict's entry table from the objects; ``RANKLENS_LAYOUT=api``
keeps the C-API calls.  The same inputs in two fresh interpreters, one each way, must
give the same bits.  ``make smoke`` runs this file on every one of those versions.
"""

from __future__ import annotations

import sys
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from _child import child_json
from ranklens import _ranklens

SCRIPT = textwrap.dedent(
    """
    import json, random
    import numpy as np
    import ranklens
    from ranklens.compat import pytrec_eval

    rng = random.Random(7)
    ids = [f"d{i}" for i in range(40)] + ["é1", "ü2", "x" * 70, "1"]
    retrieved = [rng.sample(ids, rng.randint(0, 12)) for _ in range(5000)]
    relevant = [rng.sample(ids, rng.randint(1, 4)) for _ in range(5000)]
    retrieved[3] = ["fresh" + str(i) for i in range(5)]  # hashes not computed yet
    relevant[3] = ["fresh" + str(i) for i in (1, 3)]
    scorer = ranklens.Scorer(["P@5", "recall@5", "mrr", "ndcg@10", "map", "hit_rate@5"])
    batch = scorer.batch(retrieved, relevant)
    qrels = {f"q{q}": {d: rng.randint(0, 3) for d in rng.sample(ids, 8)} for q in range(300)}
    run = {f"q{q}": {d: rng.random() for d in rng.sample(ids, 20)} for q in range(300)}
    # Dict tables of every shape the walks meet (see layout/dict.rs):
    # deleted entries, the general kind (a non-str key added, then deleted),
    # indices of 1, 2 and 4 bytes, an instance's split table, dict subclasses.
    import collections
    class Obj:
        pass
    for q in range(0, 300, 7):
        docs = run[f"q{q}"]
        for d in list(docs)[::3]:
            del docs[d]
        docs[f"new{q}"] = rng.random()
    general = run["q1"]
    general[12345] = 1.0
    del general[12345]
    run["q2"] = {f"big{i}": rng.random() for i in range(70000)}
    o = Obj()
    o.a, o.b, o.c = 0.5, 1.5, 1.5
    run["q4"] = o.__dict__
    run["q5"] = collections.defaultdict(float, {"d1": 1.0, "d2": 2.0, "é": 2.0})
    od = collections.OrderedDict({"d1": 1.0, "d2": 2.0, "d3": 2.0, "d4": 0.5})
    od.move_to_end("d1")
    run["q6"] = od
    drop_in = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "P.5"}).evaluate(run)
    res = ranklens.evaluate(qrels, run, ["ndcg@10", "map", "P@5"])
    r = ranklens.Run(run)
    print(json.dumps({
        "object_reads": ranklens._ranklens._object_reads,
        "batch": {k: [float(x).hex() for x in v] for k, v in batch.items()},
        "drop_in": {q: {m: float(v).hex() for m, v in d.items()} for q, d in drop_in.items()},
        "drop_in_order": [list(drop_in), [list(d) for d in drop_in.values()]],
        "evaluate": [float(x).hex() for x in res.values.ravel()],
        "run": [float(x).hex() for x in r.values] + r.query_ids,
        # Each row's input position: the order the dicts were walked in.
        "order": ranklens._ranklens.encode_mapping(run, "run")[7].tolist(),
    }))
    """
)


def _run(layout: str | None) -> dict:
    return child_json(SCRIPT, "RANKLENS_LAYOUT", layout)


def test_object_reads_equal_the_c_api_calls():
    direct, calls = _run(None), _run("api")
    # Both ways taken: the reads on the CPython versions with a table in
    # layout/versions.rs (here, 64-bit little-endian GIL builds), the calls under
    # RANKLENS_LAYOUT=api.
    known = (
        sys.implementation.name == "cpython"
        and (3, 9) <= sys.version_info[:2] <= (3, 13)
        and sys.maxsize > 2**32
        and sys.byteorder == "little"
        and getattr(sys, "_is_gil_enabled", lambda: True)()
        and not hasattr(sys, "getobjects")
    )
    assert direct.pop("object_reads") is known
    assert calls.pop("object_reads") is False
    assert direct == calls
    assert len(direct["batch"]["precision@5"]) == 5000


# -- the dict walks (layout/dict.rs `DictEntries`) against Python's own iteration ------
OPS = st.lists(
    st.tuples(st.sampled_from(["add", "del", "int", "move", "uni"]), st.integers(0, 60)),
    max_size=80,
)


def _build(ops: list[tuple[str, int]], big: bool) -> dict:
    """A dict shaped by ``ops``: insertions, deletions (holes in the entry table), a
    non-str key added then deleted (the general kind), keys moved to the end."""
    d: dict = {f"b{i}": float(i % 5) for i in range(300)} if big else {}
    for op, x in ops:
        key = f"d{x}"
        if op == "add":
            d[key] = float(x % 7) / 2
        elif op == "uni":
            d[f"é{x}"] = -float(x)
        elif op == "del":
            d.pop(key, None)
        elif op == "int":
            d[x] = 1.0
            del d[x]
        elif key in d:
            d[key] = d.pop(key)
    return d


@settings(max_examples=150, deadline=None, derandomize=True)
@given(queries=st.lists(st.tuples(OPS, st.booleans()), min_size=1, max_size=5), drop=st.booleans())
def test_dict_walk_reads_entries_in_python_order(queries, drop: bool) -> None:
    """``Run(dict)``'s walk (the entry tables read directly where the layout is known)
    gives each dict's entries in the order Python iterates them, with their values."""
    run = {f"q{i}": _build(ops, big) for i, (ops, big) in enumerate(queries)}
    if drop and len(run) > 1:
        del run["q0"]  # a hole in the outer table too
    arrays = _ranklens.encode_mapping(run, "run")
    doc_bytes, doc_offsets, doc_ids, values = arrays[3], arrays[4], arrays[5], arrays[6]
    raw = doc_bytes.tobytes()
    arena = [raw[doc_offsets[i] : doc_offsets[i + 1]].decode() for i in range(len(doc_offsets) - 1)]
    # The arena holds each row's id in input (walk) order.
    assert arena == [d for docs in run.values() for d in docs]
    by_row = [0.0] * len(arena)
    for r, v in zip(doc_ids.tolist(), values.tolist()):
        by_row[r] = v
    assert by_row == [v for docs in run.values() for v in docs.values()]
