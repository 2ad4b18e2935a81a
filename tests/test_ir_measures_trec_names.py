"""``ir_measures.parse_trec_measure`` after ``ranklens.compat.ir_measures.install()``:
trec_eval's names of the measures ir_measures lacks (``Rndcg``, ``11pt_avg``,
``relative_P``, ``gm_map``, ``gm_bpref``, ``binG``, ``G``, ``ndcg_rel``,
``utility``, ``Rprec_mult``, ``num_nonrel_judged_ret``) parse, with trec_eval's
default parameters, and give pytrec_eval's numbers for the same trec_eval name;
the names ir_measures has (``set_map``, ``set_F``, ``map``, ``P_5``) stay its own.
"""

from __future__ import annotations

import pytest

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

from ranklens.compat import ir_measures as rl  # noqa: E402
from ranklens.compat import ir_measures_trec as trec  # noqa: E402
from test_compat_ir_measures_more import CASES  # noqa: E402


@pytest.fixture(autouse=True)
def installed():
    saved = list(ir_measures.DefaultPipeline.providers)
    rl.install()
    yield
    ir_measures.DefaultPipeline.providers[:] = saved


CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]  # trec_eval's relative_P defaults
MULTS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]  # m_Rprec_mult.c

PARSED = {
    "Rndcg": [trec.Rndcg],
    "11pt_avg": [trec.IPrecAvg],
    "relative_P": [trec.RelP @ k for k in CUTOFFS],
    "relative_P_5": [trec.RelP @ 5],
    "relative_P.5,10": [trec.RelP @ 5, trec.RelP @ 10],
    "gm_map": [trec.GMAP],
    "gm_bpref": [trec.GMBpref],
    "binG": [trec.binG],
    "G": [trec.G],
    "G.0=0,1=1,2=3": [trec.G(gains={0: 0.0, 1: 1.0, 2: 3.0})],
    "ndcg_rel": [trec.nDCGRel],
    "utility": [trec.Utility],
    "utility.2,-1,0,0": [trec.Utility(a=2.0, b=-1.0, c=0.0, d=0.0)],
    "Rprec_mult": [trec.RprecMult(mult=m) for m in MULTS],
    "Rprec_mult_0.5": [trec.RprecMult(mult=0.5)],
    "num_nonrel_judged_ret": [trec.NumNonRelJudgedRet],
    # ir_measures' own
    "set_map": [ir_measures.SetAP],
    "set_F": [ir_measures.SetF(beta=1.0)],
    "map": [ir_measures.AP],
    "P_5": [ir_measures.P @ 5],
}


@pytest.mark.parametrize("name", list(PARSED))
def test_parses(name: str) -> None:
    assert ir_measures.parse_trec_measure(name) == PARSED[name]
    # as PyTerrier reads a string metric: the name looked up at the call
    from ir_measures import parse_trec_measure

    assert parse_trec_measure(name) == PARSED[name]
    assert trec.parse_trec_measure(name) == PARSED[name]


@pytest.mark.parametrize("name", ["Rndcg_5", "utility.1,2", "G.5", "gm_map.3", "nosuch"])
def test_bad_names_are_value_errors(name: str) -> None:
    with pytest.raises(ValueError):
        ir_measures.parse_trec_measure(name)


def test_nicknames_include_them(capsys) -> None:
    got = set(ir_measures.parse_trec_measure("all_trec"))
    for name in ("Rndcg", "11pt_avg", "gm_map", "binG", "G", "utility", "ndcg_rel"):
        assert set(PARSED[name]) <= got, name
    assert set(PARSED["relative_P"]) <= got and set(PARSED["Rprec_mult"]) <= got
    # only relstring, not a number, is still left out
    assert "skipped ['relstring']" in capsys.readouterr().out


def test_install_twice_wraps_once() -> None:
    rl.install()
    wrapped = ir_measures.util.parse_trec_measure
    assert not hasattr(wrapped._ranklens_wraps, "_ranklens_wraps")
    assert ir_measures.parse_trec_measure is wrapped


# trec_eval name as ranklens parses it -> the same name as pytrec_eval takes it
PYTREC = {
    "Rndcg": "Rndcg",
    "11pt_avg": "11pt_avg",
    "relative_P_5": "relative_P.5",
    "binG": "binG",
    "G": "G",
    "ndcg_rel": "ndcg_rel",
    "utility": "utility",
    "Rprec_mult_0.5": "Rprec_mult.0.5",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
}


@pytest.mark.parametrize("case", range(1, len(CASES), 4))
def test_values_are_pytrec_evals(case: int) -> None:
    qrels, run = CASES[case]  # odd cases: distinct scores, exact in float32
    qrels = {q: docs for q, docs in qrels.items() if any(v >= 0 for v in docs.values())}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC.values()))
    want = evaluator.evaluate({q: d for q, d in run.items() if d})
    provider = ir_measures.providers.registry["ranklens"]
    for name, theirs in PYTREC.items():
        (measure,) = ir_measures.parse_trec_measure(name)
        got = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
        key = theirs.replace(".", "_", 1) if theirs.startswith("relative_P") else theirs
        key = "Rprec_mult_0.50" if theirs.startswith("Rprec_mult") else key
        for qid, values in want.items():
            assert got[qid] == pytest.approx(values[key], abs=1e-9), (qid, name)
