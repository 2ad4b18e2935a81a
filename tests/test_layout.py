"""Object reads without C-API calls (``src/bindings/layout.rs``) against the calls.

On the CPython versions whose object layout is known, the dict paths and
``Scorer.batch`` read a ``str``'s text and cached hash, a ``float``'s value and a
``list``'s items from the objects; ``RANKLENS_LAYOUT=api`` keeps the C-API calls.
The same inputs in two fresh interpreters, one each way, must give the same bits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

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
    }))
    """
)


def _run(layout: str | None) -> dict:
    env = dict(os.environ)
    env.pop("RANKLENS_LAYOUT", None)
    if layout is not None:
        env["RANKLENS_LAYOUT"] = layout
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_object_reads_equal_the_c_api_calls():
    direct, calls = _run(None), _run("api")
    # Both ways taken: the reads on the CPython versions of layout.rs (here, 64-bit
    # little-endian GIL builds), the calls under RANKLENS_LAYOUT=api.
    known = (
        sys.implementation.name == "cpython"
        and (3, 9) <= sys.version_info[:2] <= (3, 14)
        and sys.maxsize > 2**32
        and sys.byteorder == "little"
        and getattr(sys, "_is_gil_enabled", lambda: True)()
        and not hasattr(sys, "getobjects")
    )
    assert direct.pop("object_reads") is known
    assert calls.pop("object_reads") is False
    assert direct == calls
    assert len(direct["batch"]["precision@5"]) == 5000
