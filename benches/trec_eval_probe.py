"""Differential probe: ``ranklens trec_eval`` against trec_eval 10.0 built from source.

    python benches/trec_eval_probe.py /path/to/trec_eval-checkout --cases 2000 --seed 0

The first argument is a trec_eval source checkout (usnistgov/trec_eval, the 10.0
tag or commit f425365), where ``make`` is run, or an already built ``trec_eval``
binary.  Nothing is downloaded.  Each case is a seeded random qrels/run pair
(ties, negative labels, unjudged and unretrieved documents, queries without a
relevant or a judged document, run-only queries, qrels topics missing from the
run, comment lines, free rank column, trailing fields, tabs) and a random
command line over every option the CLI accepts (``-q -c -n -J -M -l -N -Z -R qrels``,
``-m`` with each measure family, its parameters and the nicknames, long
options, ``-`` for stdin).  Both programs run on it from the case's folder and
their stdout are compared byte for byte; a case agrees when both succeed with
the same bytes or both fail.  A share of the cases (``--prefs-share``, 0.25 by
default) use the judgment-group formats instead (:func:`make_group_case`):
``-R prefs`` files with several judgment groups and sub-groups (levels 0 and
negative, documents listed twice), ``-R qrels_prefs`` and ``-R qrels_jg`` files
with several groups, asking for the preference measures and nicknames or the
``*_avgjg`` measures with their parameters.

Differences are grouped by the measures whose lines differ; the known ones
(docs/trec_eval.md, "Differences from trec_eval") are named.  ``--out DIR``
keeps every differing case (inputs, both outputs); ``--export DIR`` writes a
small set of agreeing and differing cases that covers each option family and
each difference class, with trec_eval's output as the expected file and a
``MANIFEST.md`` listing them (how tests/data/probe was made)::

    python benches/trec_eval_probe.py /tmp/trec_eval --cases 6000 --seed 1 --export tests/data/probe
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import shlex
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ranklens.cli._trec_eval import main as ranklens_trec_eval

# -m arguments, by family: bare, with parameters, nicknames.
MEASURE_ARGS = {
    "nickname": ["official", "all_trec", "set"],
    "counts": ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "runid"],
    "map": ["map", "gm_map", "map_cut", "map_cut.2,4,7", "set_map"],
    "precision": ["P", "P.1,3,7", "relative_P", "relative_P.2,6", "set_P", "set_relative_P"],
    "recall": ["recall", "recall.2,50", "set_recall", "Rprec", "Rprec_mult", "Rprec_mult.0.5,1.5"],
    "rank": ["recip_rank", "success", "success.1,2,4", "bpref", "gm_bpref", "infAP"],
    "iprec": ["iprec_at_recall", "iprec_at_recall.0,.25,.5,1", "11pt_avg", "11pt_avg..25,.5,.75"],
    "gain": ["ndcg", "ndcg.1=3,2=9", "ndcg_cut", "ndcg_cut.3,10", "ndcg_rel", "Rndcg", "binG"],
    "gain_g": ["G", "G.1=2,2=5", "dcg", "dcg.1=1,3=7"],
    "rbp": ["rbp", "rbp.p=0.5", "rbp.1=0.5,2=1", "rbp_resid", "rbp_resid.p=0.7"],
    "set": ["utility", "utility.2,-1,0,0", "set_F", "set_F.0.5", "relstring", "relstring.5"],
    "unj": ["unj", "unj.1,3"],
}
# Drawn from a random stream of their own (--extra-share), so that the cases of
# a seed stay those of the list above (tests/data/probe was made without them).
EXTRA_MEASURE_ARGS = ["yaap", "ideal_dcg", "ideal_dcg.1=2,2=5", "ideal_dcg.0=1,2=3"]
GAIN_RBP = {"ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "binG"}

# Names of the known difference classes (docs/trec_eval.md), by differing measure.
KNOWN = {
    "rbp": "rbp: uninitialised min/max in m_rbp.c (value depends on earlier stack contents)",
    "qrels-comment": "trec_eval crashes: qrels file ends with a comment line (get_qrels.c)",
    "zscores": "-Z lookup past the end of trec_eval's table: crash or a neighbour's entry"
    " (convert_zscores.c)",
    "short-ec": "prefs_avgjg_Rnonrel(_ret): recount reads past a last EC shorter than R"
    " (m_prefs_avgjg_Rnonrel*.c)",
}


def short_last_ec(prefs_file: bytes) -> bool:
    """A one-sub-group judgment group whose last (lowest-level) EC has fewer lines
    than the group has relevant lines, its non-relevant lines spread over two or
    more levels <= 0: where the non-relevant (retrieved) documents outnumber the
    relevant (retrieved) ones, the Rnonrel recount reads past that EC
    (KNOWN["short-ec"]).  Necessary for the over-read, whatever is retrieved."""
    groups: dict[tuple[bytes, bytes], list[tuple[bytes, float]]] = {}
    for line in prefs_file.splitlines():
        f = line.split()
        if line.startswith(b"#"):
            continue
        if len(f) == 5:  # -R prefs
            groups.setdefault((f[0], f[1]), []).append((f[2], float(f[4])))
        elif len(f) == 4:  # -R qrels_prefs: one sub-group
            groups.setdefault((f[0], f[1]), []).append((b"0", float(f[3])))
    for lines in groups.values():
        if len({jsg for jsg, _ in lines}) != 1:
            continue
        rel = sum(1 for _, lv in lines if lv > 0)
        lowest = min(lv for _, lv in lines)
        nonrel_levels = {lv for _, lv in lines if lv <= 0}
        if len(nonrel_levels) > 1 and sum(1 for _, lv in lines if lv == lowest) < rel:
            return True
    return False


@dataclass
class Case:
    index: int
    args: list[str]
    files: dict[str, bytes]
    stdin: bytes | None = None
    features: set[str] = field(default_factory=set)


# ---------------------------------------------------------------------------
# Inputs


def _score(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.5:
        return rng.choice(["1", "2", "3", "0.5", "2.0", "-1"])  # ties
    if kind < 0.9:
        return f"{rng.uniform(-2, 10):.4f}"
    return rng.choice(["1e-3", "2.5E1", "+4", "7."])


def _ws(rng: random.Random, tabs: bool) -> str:
    return "\t" if tabs and rng.random() < 0.5 else " " * rng.choice([1, 1, 1, 2])


def make_case(index: int, seed: int, extra_share: float = 0.0) -> Case:
    rng = random.Random(f"{seed}:{index}")
    feats: set[str] = set()
    n_q = rng.randint(1, 6)
    qids = rng.sample(["1", "2", "3", "10", "101", "q7", "A", "b-2", "301"], n_q)
    pool = [f"d{i}" for i in range(rng.randint(3, 14))]
    labels = rng.choice([[0, 1], [0, 1, 2, 3], [-1, 0, 1, 2], [0, 0, 1], [1], [0]])
    tabs = rng.random() < 0.2

    qrels_lines: list[str] = []
    judged: dict[str, list[str]] = {}
    for q in qids:
        docs = rng.sample(pool, rng.randint(1, len(pool)))
        judged[q] = docs
        for d in docs:
            w = _ws(rng, tabs)
            qrels_lines.append(f"{q}{w}0{w}{d}{w}{rng.choice(labels)}\n")
    if rng.random() < 0.3:
        rng.shuffle(qrels_lines)
        feats.add("qrels-unsorted")
    if rng.random() < 0.15:
        qrels_lines.insert(rng.randint(0, len(qrels_lines)), "# a comment line\n")
        feats.add("comments")

    complete = rng.random() < 0.5
    run_qids = list(qids)
    if complete and len(qids) > 1 and rng.random() < 0.6:
        run_qids.remove(rng.choice(qids))  # -c scores it on the bogus ranking
        feats.add("missing-topic")
    elif not complete and rng.random() < 0.03:
        run_qids.remove(rng.choice(qids))  # both must refuse
        feats.add("missing-topic-refused")
    if rng.random() < 0.2:
        run_qids.append("999")  # no qrels: ignored
        feats.add("run-only-topic")

    unjudged = [f"u{i}" for i in range(rng.randint(0, 8))]
    trailing = rng.random() < 0.15
    tag = rng.choice(["run1", "tagA", "x"])
    run_lines: list[str] = []
    for q in run_qids:
        cands = pool + unjudged
        if rng.random() < 0.15:
            cands = unjudged or ["u0"]  # no judged document retrieved
            feats.add("no-judged-retrieved")
        docs = rng.sample(cands, rng.randint(1, len(cands)))
        for rank, d in enumerate(docs, 1):
            w = _ws(rng, tabs)
            r = rank if rng.random() < 0.7 else rng.randint(0, 50)
            extra = f"{w}extra field" if trailing and rng.random() < 0.5 else ""
            run_lines.append(f"{q}{w}Q0{w}{d}{w}{r}{w}{_score(rng)}{w}{tag}{extra}\n")
    if not run_lines:
        run_lines.append(f"999 Q0 u0 1 1.0 {tag}\n")
    if trailing:
        feats.add("trailing-fields")
    if rng.random() < 0.4:
        rng.shuffle(run_lines)
    if rng.random() < 0.15:
        run_lines.insert(rng.randint(0, len(run_lines)), "# comment\n")
        feats.add("comments")
    if rng.random() < 0.3:
        run_lines[-1] = run_lines[-1].replace(tag, "lasttag")  # runid is the last line's tag
    files = {"in.qrels": "".join(qrels_lines).encode(), "in.run": "".join(run_lines).encode()}

    # Command line
    groups: list[list[str]] = []
    if rng.random() < 0.6:
        groups.append(["-q"])
        feats.add("-q")
    if complete:
        groups.append([rng.choice(["-c", "--complete_rel_info_wanted"])])
        feats.add("-c")
    if rng.random() < 0.3:
        groups.append(["-J"])
        feats.add("-J")
    if rng.random() < 0.2:
        m = rng.choice([0, 1, 2, 3, 5, 10])
        groups.append(rng.choice([[f"-M{m}"], ["-M", str(m)], [f"--Max_retrieved_per_topic={m}"]]))
        feats.add("-M")
    if rng.random() < 0.25:
        groups.append(["-l", str(rng.choice([0, 1, 2, 3]))])
        feats.add("-l")
    if rng.random() < 0.15:
        groups.append([f"-N{rng.choice([0, 5, 20, 1000])}"])
        feats.add("-N")
    if rng.random() < 0.08:
        groups.append(["-n"])
        feats.add("-n")
    if rng.random() < 0.1:
        groups.append(["-R", "qrels"])
        feats.add("-R qrels")
    specs: list[str] = []
    if rng.random() < 0.1:
        feats.add("-m default")
    else:
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            fam = rng.choice(list(MEASURE_ARGS))
            spec = rng.choice(MEASURE_ARGS[fam])
            specs.append(spec)
            feats.add(f"-m {fam}")
    for s in specs:
        groups.append(rng.choice([["-m", s], [f"-m{s}"]]))
    extra = random.Random(f"{seed}:{index}:extra")
    if extra.random() < extra_share:
        spec = extra.choice(EXTRA_MEASURE_ARGS)
        groups.append(["-m", spec])
        feats.add(f"-m {spec.split('.')[0]}")
    if rng.random() < 0.1:
        names = ["map", "P_5", "ndcg", "recip_rank", "num_ret", "bpref", "Rprec", "rbp"]
        zl = []
        for q in qids:
            for n in rng.sample(names, rng.randint(0, len(names))):
                sd = rng.choice(["0", "0.1", "0.25", "1"])
                zl.append(f"{q} {n} {rng.uniform(0, 1):.3f} {sd}\n")
        if not zl:
            zl.append(f"{qids[0]} map 0.5 0.2\n")
        if rng.random() < 0.8:
            # Entries sorting after every qid and every measure name keep
            # trec_eval's binary searches inside its table (see KNOWN["zscores"]).
            zl += [f"{q} ~ 0 1\n" for q in qids] + ["~ ~ 0 1\n"]
        else:
            feats.add("-Z unguarded")
        files["in.z"] = "".join(zl).encode()
        groups.append(["-Z", "in.z"])
        feats.add("-Z")
    stdin = None
    run_arg = "in.run"
    if rng.random() < 0.15:
        stdin, run_arg = files.pop("in.run"), "-"
        feats.add("stdin")
    if rng.random() < 0.3:  # getopt permutes: options may follow or sit between the files
        rng.shuffle(groups)
        i, j = sorted(rng.sample(range(len(groups) + 2), 2))
        groups.insert(i, ["in.qrels"])
        groups.insert(j, [run_arg])
        feats.add("permuted")
    else:
        groups += [["in.qrels"], [run_arg]]
    args = [a for g in groups for a in g]
    return Case(index, args, files, stdin, feats)


PREFS_ARGS = [
    "all_prefs",
    "prefs",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_pair_imp",
    "prefs_num_prefs_ful_ret",
]
JG_ARGS = ["qrels_jg", "map_avgjg", "P_avgjg", "P_avgjg.1,3,7", "Rprec_mult_avgjg.0.5,1,2"]


def make_group_case(index: int, seed: int) -> Case:
    """A case in a judgment-group format: ``-R prefs``, ``qrels_prefs`` or ``qrels_jg``.

    Each judgment group has a hidden grade per document; a sub-group judges a
    random subset by that grade, so a group is consistent (trec_eval aborts on a
    cycle) -- except in a few cases, where a random level breaks that."""
    rng = random.Random(f"{seed}:{index}:groups")
    fmt = rng.choice(["prefs", "prefs", "qrels_prefs", "qrels_jg"])
    feats = {f"-R {fmt}"}
    qids = rng.sample(["1", "2", "3", "10", "q7", "A"], rng.randint(1, 4))
    pool = [f"d{i}" for i in range(rng.randint(2, 12))]
    levels = rng.choice([[0, 1], [0, 1, 2, 3], [-1, 0, 1, 2], [0, 0, 1], [1, 2], [0]])
    lines = []
    for q in qids:
        for g in range(rng.randint(1, 3)):
            grade = {d: rng.choice(levels) for d in pool}
            n_sub = rng.choice([1, 1, 2, 3]) if fmt == "prefs" else 1
            seen = set()
            for sub in range(n_sub):
                for d in rng.sample(pool, rng.randint(1, len(pool))):
                    if fmt != "prefs" and d in seen:
                        continue  # qrels formats: one line per document and group
                    seen.add(d)
                    lv = grade[d]
                    if fmt == "prefs" and rng.random() < 0.01:
                        lv = rng.choice(levels)  # may make the group inconsistent
                        feats.add("inconsistent?")
                    if fmt == "prefs":
                        lines.append(f"{q} u{g} s{sub} {d} {lv}\n")
                        if rng.random() < 0.05:
                            lines.append(f"{q} u{g} s{sub} {d} {lv}\n")
                            feats.add("listed twice")
                    else:
                        lines.append(f"{q} u{g} {d} {lv}\n")
    rng.shuffle(lines)
    if rng.random() < 0.15:  # not as the last line: trec_eval reads past the buffer then
        lines.insert(rng.randint(0, len(lines) - 1), "# a comment line\n")
        feats.add("comments")
    complete = rng.random() < 0.4
    run_qids = list(qids)
    if complete and len(qids) > 1 and rng.random() < 0.5:
        run_qids.remove(rng.choice(qids))
        feats.add("missing-topic")
    unjudged = [f"u{i}" for i in range(rng.randint(0, 5))]
    run_lines = []
    for q in run_qids:
        cands = pool + unjudged
        k = rng.randint(0, len(cands)) if complete else rng.randint(1, len(cands))
        for rank, d in enumerate(rng.sample(cands, k), 1):
            run_lines.append(f"{q} Q0 {d} {rank} {_score(rng)} r1\n")
    if not run_lines:
        run_lines.append("999 Q0 u0 1 1.0 r1\n")
    rng.shuffle(run_lines)
    files = {"in.qrels": "".join(lines).encode(), "in.run": "".join(run_lines).encode()}
    args = ["-R", fmt]
    if rng.random() < 0.7:
        args.append("-q")
    if complete:
        args.append("-c")
    if rng.random() < 0.2:
        args.append(f"-M{rng.choice([0, 1, 2, 5])}")
        feats.add("-M")
    if fmt == "qrels_jg":
        if rng.random() < 0.3:
            args += ["-l", str(rng.choice([0, 1, 2]))]
            feats.add("-l")
        if rng.random() < 0.2:
            args.append("-J")
            feats.add("-J")
    for spec in rng.sample(JG_ARGS if fmt == "qrels_jg" else PREFS_ARGS, rng.randint(1, 2)):
        args += ["-m", spec]
        feats.add(f"-m {spec.split('.')[0]}")
    return Case(index, [*args, "in.qrels", "in.run"], files, None, feats)


# ---------------------------------------------------------------------------
# Running


def build_trec_eval(path: Path) -> Path:
    """``make`` in a source checkout (or accept a built binary); check it is 10.0."""
    if path.is_dir():
        subprocess.run(["make"], cwd=path, check=True, stdout=subprocess.DEVNULL)
        path = path / "trec_eval"
    out = subprocess.run([str(path), "-v"], capture_output=True, text=True)
    version = (out.stdout + out.stderr).strip()
    if "10.0" not in version:
        sys.exit(f"{path}: expected trec_eval 10.0, got {version!r}")
    return path.resolve()


def _write(case: Case, folder: Path) -> None:
    for name, data in case.files.items():
        (folder / name).write_bytes(data)


def run_trec_eval(binary: Path, case: Case, folder: Path) -> tuple[int, bytes]:
    p = subprocess.run(
        [str(binary), *case.args], cwd=folder, input=case.stdin or b"", capture_output=True
    )
    return p.returncode, p.stdout


def run_ranklens(case: Case, folder: Path) -> tuple[int, bytes]:
    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(case.stdin or b""))
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rc = ranklens_trec_eval(list(case.args))
    finally:
        os.chdir(old_cwd)
        sys.stdin = old_stdin
    return rc, out.getvalue().encode()


def differing_measures(a: bytes, b: bytes) -> set[str]:
    """The measure names (first field, digits and params dropped) of differing lines."""
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    names = set()
    for x, y in zip(la, lb):
        if x != y:
            names.add(x.split("\t")[0].strip())
    if len(la) != len(lb):
        names.add("<line count>")
    return names


def classify(case: Case, te_out: bytes, rk_out: bytes) -> str:
    names = differing_measures(te_out, rk_out)
    if "-Z unguarded" in case.features:
        # ranklens's line counts a missing entry (-1000000) where trec_eval's read
        # past its table found a neighbour's entry
        ours = set(rk_out.splitlines()) - set(te_out.splitlines())
        if any(float(line.split(b"\t")[-1]) <= -1e5 for line in ours if line.startswith(b"Z")):
            return KNOWN["zscores"]
    rnonrel = {"prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret"}
    prefs_fmt = {"-R prefs", "-R qrels_prefs"} & case.features
    if prefs_fmt and names <= rnonrel and short_last_ec(case.files["in.qrels"]):
        return KNOWN["short-ec"]
    fams = {n.split("_")[0] if n.startswith(("rbp", "Zrbp")) else n for n in names}
    if fams <= {"rbp", "Zrbp"}:
        return KNOWN["rbp"]
    return "unexplained: " + ",".join(sorted(names))


def classify_crash(case: Case, te_rc: int, rk_rc: int) -> str:
    """Exit statuses differ: name the known trec_eval crashes (killed by a signal)."""
    if te_rc < 0 and rk_rc == 0:
        lines = [x for x in case.files["in.qrels"].splitlines() if x.strip()]
        if lines and lines[-1].lstrip().startswith(b"#"):
            return KNOWN["qrels-comment"]
        if "-Z unguarded" in case.features:
            return KNOWN["zscores"]
    return f"unexplained: exit status trec_eval {te_rc}, ranklens {rk_rc}"


# ---------------------------------------------------------------------------
# Export: a small covering set as test data


def export(chosen: list[tuple[Case, bytes, str]], out: Path, how: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for case, expected, klass in chosen:
        stem = f"p{case.index:04d}"
        renames = {name: f"{stem}.{name[3:]}" for name in case.files}
        for name, data in case.files.items():
            (out / renames[name]).write_bytes(data)
        if case.stdin is not None:
            (out / f"{stem}.stdin").write_bytes(case.stdin)
        (out / f"{stem}.out").write_bytes(expected)
        args = [renames.get(a, a) for a in case.args]
        stdin = f"{stem}.stdin" if case.stdin is not None else ""
        rows.append(f"| {stem}.out | `{shlex.join(args)}` | {stdin} | {klass} |\n")
    head = (
        "# trec_eval 10.0 differential cases\n\n"
        "Made from seeded random inputs by\n\n"
        f"    python benches/trec_eval_probe.py TREC_EVAL {how}\n\n"
        "with TREC_EVAL a usnistgov/trec_eval source checkout (the 10.0 release commit,\n"
        "f425365) built by its own Makefile.  Each expected output is what that binary\n"
        "printed for the arguments, run from this folder (stdin: the file fed to `-`).\n"
        "Class: `agrees`, or the difference class of docs/trec_eval.md (`ranklens trec_eval`\n"
        "prints rbp as defined there; tests/test_trec_eval_cli.py marks those rows xfail).\n\n"
        "| expected output | arguments | stdin | class |\n| --- | --- | --- | --- |\n"
    )
    (out / "MANIFEST.md").write_text(head + "".join(rows))


def choose_for_export(results: list[tuple[Case, bytes, str]], limit: int, times: int = 4) -> list:
    """Greedy cover of every feature and every difference class ``times`` times
    (in different cases), smallest inputs first."""
    # trec_eval reads memory past its z-score table, or past an equivalence class
    # (short-ec), there: no output to pin down
    results = [
        r for r in results if "-Z unguarded" not in r[0].features and r[2] != KNOWN["short-ec"]
    ]
    results = sorted(results, key=lambda r: len(r[1]) + sum(map(len, r[0].files.values())))
    want = set().union(*(r[0].features for r in results)) | {r[2] for r in results}
    chosen: list = []
    seen: Counter[str] = Counter()

    def gain(r: tuple[Case, bytes, str]) -> int:
        return sum(1 for f in r[0].features | {r[2]} if seen[f] < times)

    while len(chosen) < limit and results:
        best = max(results, key=gain)
        if not gain(best):
            break
        chosen.append(best)
        seen.update(best[0].features | {best[2]})
        results.remove(best)
    missing = want - set(seen)
    if missing:
        print(f"export: not covered within {limit} cases: {sorted(missing)}", file=sys.stderr)
    return sorted(chosen, key=lambda r: r[0].index)


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trec_eval", type=Path, help="trec_eval source checkout or binary")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="keep every differing case here")
    ap.add_argument("--export", type=Path, help="write a covering set of cases as test data")
    ap.add_argument("--export-limit", type=int, default=40)
    ap.add_argument("--prefs-share", type=float, default=0.25, help="share of judgment-group cases")
    ap.add_argument(
        "--extra-share",
        type=float,
        default=0.1,
        help="share of qrels cases that also ask for yaap or ideal_dcg",
    )
    a = ap.parse_args(argv)
    binary = build_trec_eval(a.trec_eval)

    classes: Counter[str] = Counter()
    counts = Counter()
    exportable: list[tuple[Case, bytes, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.cases):
            rng = random.Random(f"{a.seed}:{i}:kind")
            use_groups = rng.random() < a.prefs_share
            if use_groups:
                case = make_group_case(i, a.seed)
            else:
                case = make_case(i, a.seed, a.extra_share)
            folder = Path(tmp) / f"c{i}"
            folder.mkdir()
            _write(case, folder)
            rk_rc, rk_out = run_ranklens(case, folder)
            te_rc, te_out = run_trec_eval(binary, case, folder)
            if te_rc != 0 or rk_rc != 0:
                same = te_rc != 0 and rk_rc != 0
                counts["both fail" if same else "exit status differs"] += 1
                if not same:
                    classes[classify_crash(case, te_rc, rk_rc)] += 1
                    _keep(a.out, case, te_out, rk_out)
                continue
            for line in te_out.splitlines():
                if line.endswith(b"-nan"):  # which measures trec_eval prints as NaN
                    case.features.add("-nan " + line.split()[0].decode().split("_")[0])
            if te_out == rk_out:
                counts["identical"] += 1
                exportable.append((case, te_out, "agrees"))
                continue
            counts["differ"] += 1
            klass = classify(case, te_out, rk_out)
            classes[klass] += 1
            exportable.append((case, te_out, klass))
            _keep(a.out, case, te_out, rk_out)

    print(f"trec_eval: {binary}")
    print(f"cases: {a.cases} (seed {a.seed})")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}")
    if classes:
        print("differences by class:")
        for k, v in classes.most_common():
            print(f"  {v:5d}  {k}")
    if a.export:
        how = (
            f"--cases {a.cases} --seed {a.seed} --prefs-share {a.prefs_share} "
            f"--extra-share {a.extra_share} --export {a.export} --export-limit {a.export_limit}"
        )
        export(choose_for_export(exportable, a.export_limit), a.export, how)
    unexplained = sum(v for k, v in classes.items() if k.startswith("unexplained"))
    return 1 if unexplained else 0


def _keep(out: Path | None, case: Case, te_out: bytes, rk_out: bytes) -> None:
    if out is None:
        return
    folder = out / f"c{case.index:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    _write(case, folder)
    if case.stdin is not None:
        (folder / "stdin").write_bytes(case.stdin)
    (folder / "args").write_text(shlex.join(case.args) + "\n")
    (folder / "trec_eval.out").write_bytes(te_out)
    (folder / "ranklens.out").write_bytes(rk_out)


if __name__ == "__main__":
    sys.exit(main())
