"""`ranklens report` / `ranklens.report`: the embedded numbers are compare()'s and
explain()'s, every input form gives the same report, groups are shown, the command
line's exit codes and run names, `gate --html`, and the page itself driven in a
headless Chromium as a person would use it."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ranklens

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
METRICS = ["ndcg@10", "map", "P@10", "mrr"]
_DATA = re.compile(r'<script type="application/json" id="ranklens-data">(.*?)</script>', re.S)


def data_of(text: str) -> dict:
    """The JSON document a report embeds."""
    m = _DATA.search(text)
    assert m is not None
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The example qrels, its run, and a second run (the first with its scores
    shuffled within each query), also as files with the same run tag."""
    qrels = ranklens.Qrels.from_trec(str(EXAMPLES / "qrels.txt"))
    run = ranklens.Run.from_trec(str(EXAMPLES / "run.txt"))
    rng = random.Random(7)
    other = {}
    for q, docs in run.to_dict().items():
        scores = list(docs.values())
        rng.shuffle(scores)
        other[q] = dict(zip(docs, scores))
    other_run = ranklens.Run(other, name="STANDARD")
    d = tmp_path_factory.mktemp("report-case")
    other_path = d / "shuffled.txt"
    other_run.to_trec(str(other_path))
    return qrels, run, ranklens.Run.from_trec(str(other_path)), other_path


def cmd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ranklens.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


# -- the numbers -----------------------------------------------------------------
def test_numbers_are_compares_and_explains(case):
    qrels, run, other, _ = case
    runs = {"bm25": run, "shuffled": other}
    depth = 15
    data = data_of(ranklens.report(qrels, runs, METRICS, depth=depth, test="student"))
    cmp = ranklens.compare(qrels, runs, METRICS, test="student")
    fields = data["summaryFields"]
    assert len(data["summary"]) == len(cmp.results)
    for row, r in zip(data["summary"], cmp.results):
        assert row == [getattr(r, f) for f in fields]
    assert data["runs"] == cmp.runs and data["metrics"] == cmp.metric_names
    assert data["queries"] == cmp.query_ids
    for k, name in enumerate(cmp.runs):
        for j in range(len(METRICS)):
            assert data["scores"][k][j] == cmp.scores[name][:, j].tolist()
    level = cmp.settings["relevance_level"]
    for i, qid in enumerate(cmp.query_ids):
        nrel, per_run, _ = data["q"][i]
        judged = qrels[qid]
        assert nrel == sum(1 for v in judged.values() if v >= level)
        for k, name in enumerate(cmp.runs):
            flat, first, num_ret, formulas, missed = per_run[k]
            ex = ranklens.explain(qrels, runs[name], qid, k=depth, metrics=cmp.metric_names)
            assert formulas == [ex.formulas[m] for m in cmp.metric_names]
            assert list(ex.values.values()) == [data["scores"][k][j][i] for j in range(4)]
            assert num_ret == ex.num_ret
            rows = [flat[t : t + 3] for t in range(0, len(flat), 3)]
            assert len(rows) == len(ex.ranked) == min(depth, ex.num_ret)
            for (d, label, score), r in zip(rows, ex.ranked):
                assert data["docs"][d] == r["doc"]
                assert label == r["label"] and score == r["score"]
            ranking = runs[name].ranking(qid)
            rel = [n for n, doc in enumerate(ranking, 1) if judged.get(doc, -1) >= level]
            assert first == (rel[0] if rel else None)
            wanted = {doc for doc, v in judged.items() if v >= level} - set(ranking)
            assert {data["docs"][d] for d in missed} == wanted


def test_every_input_form_gives_the_same_report(case, tmp_path):
    qrels, run, other, other_path = case
    run_path = str(EXAMPLES / "run.txt")
    qrels_path = str(EXAMPLES / "qrels.txt")
    named = {"run.txt": run, "shuffled.txt": other}
    reference = data_of(ranklens.report(qrels, named, ["map"]))
    forms = [
        (qrels_path, [run_path, str(other_path)]),  # files, named by file (same tag)
        (qrels.to_dict(), {"run.txt": run.to_dict(), "shuffled.txt": other.to_dict()}),
        (qrels, {"run.txt": run_path, "shuffled.txt": other_path}),
        (
            qrels,
            [
                ranklens.Run(run.to_dict(), name="run.txt"),
                ranklens.Run(other.to_dict(), name="shuffled.txt"),
            ],
        ),
    ]
    for q, runs in forms:
        data = data_of(ranklens.report(q, runs, ["map"]))
        for key in ("runs", "summary", "scores", "queries", "docs", "q"):
            assert data[key] == reference[key], key
    out = tmp_path / "r.html"
    cmp = ranklens.compare(qrels, named, ["map"])
    text = cmp.to_report(out, qrels, named)
    assert out.read_text(encoding="utf-8") == text
    assert data_of(text)["summary"] == reference["summary"]
    # compare keeps the rankings it compared: to_report(path) alone, the same page
    assert data_of(cmp.to_report(None)) == data_of(text)
    # a comparison without them (unpickled) asks for them
    import pickle

    again = pickle.loads(pickle.dumps(cmp))
    assert again.results == cmp.results
    with pytest.raises(ranklens.RanklensInputError, match="give to_report"):
        again.to_report(None)
    with pytest.raises(ranklens.RanklensInputError, match="both qrels and runs"):
        cmp.to_report(None, qrels)


def test_the_file_is_self_contained(case):
    qrels, run, other, _ = case
    text = ranklens.report(
        qrels, {"a": run, "b": other}, ["map"], title="a </script> <b> @@RANKLENS_DATA@@"
    )
    assert not re.search(r"\b(src|href)\s*=", text)
    assert "@import" not in text and "url(" not in text
    assert set(re.findall(r"https?://[^\s\"'`]+", text)) <= {"http://www.w3.org/2000/svg"}
    assert text.count("</script>") == 2  # the data and the script; the title is escaped
    assert data_of(text)["title"] == "a </script> <b> @@RANKLENS_DATA@@"


def test_bad_arguments_are_input_errors(case):
    qrels, run, other, _ = case
    runs = {"a": run, "b": other}
    with pytest.raises(ranklens.RanklensInputError, match="depth"):
        ranklens.report(qrels, runs, ["map"], depth=0)
    with pytest.raises(ranklens.RanklensInputError, match="at least 2 runs"):
        ranklens.report(qrels, {"a": run}, ["map"])
    cmp = ranklens.compare(qrels, runs, ["map"])
    with pytest.raises(ranklens.RanklensInputError, match="either a comparison"):
        ranklens.report(qrels, runs, comparison=cmp, test="student")
    with pytest.raises(ranklens.RanklensInputError, match="other runs"):
        ranklens.report(qrels, {"b": other, "a": run}, comparison=cmp)


# -- groups ------------------------------------------------------------------------
def test_subtopic_qrels_show_their_subtopics():
    qrels = ranklens.Qrels.from_subtopics(
        [("q1", "s1", "d1", 1), ("q1", "s2", "d1", 1), ("q1", "s2", "d2", 1), ("q1", "s1", "d3", 0)]
    )
    runs = {"a": {"q1": {"d1": 3, "d3": 2}}, "b": {"q1": {"d2": 3, "x": 2}}}
    data = data_of(ranklens.report(qrels, runs, ["alpha_ndcg@10", "P@5"]))
    assert data["qrels"] == "subtopics"
    groups = {data["docs"][int(d)]: text for d, text in data["q"][0][2].items()}
    assert groups["d1"] == "s1, s2" and groups["d2"] == "s2" and groups["d3"] == "none"
    missed_a = {data["docs"][d] for d in data["q"][0][1][0][4]}
    assert missed_a == {"d2"}


def test_grouped_ground_truth_shows_groups_and_missed_groups():
    qrels = ranklens.Qrels.from_groups({"q1": [["a1", "a2"], ["b1"], ["c1", "c2"]]})
    runs = {"x": {"q1": ["a2", "a1", "n"]}, "y": {"q1": ["b1", "n"]}}
    data = data_of(ranklens.report(qrels, runs, ["recall@10", "P@3"]))
    assert data["qrels"] == "grouped"
    docs = data["docs"]
    groups = {docs[int(d)]: text for d, text in data["q"][0][2].items()}
    assert groups["a1"] == groups["a2"] == "group 0" and groups["c2"] == "group 2"
    missed_x = sorted(docs[d] for d in data["q"][0][1][0][4])
    assert missed_x == ["b1", "c1", "c2"]
    # a later member of a satisfied group is labelled as explain labels it
    ex = ranklens.explain(qrels, runs["x"], "q1", k=20, metrics=["recall@10", "P@3"])
    flat = data["q"][0][1][0][0]
    assert flat[1::3] == [r["label"] for r in ex.ranked]


# -- the command line ----------------------------------------------------------------
def test_cli_writes_the_report_and_names_runs_by_file(case, tmp_path):
    _, _, _, other_path = case
    out = tmp_path / "report.html"
    qrels, run = str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    p = cmd("report", qrels, run, str(other_path), "-m", "map", "-m", "P@10", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    data = data_of(out.read_text(encoding="utf-8"))
    assert data["runs"] == ["run.txt", "shuffled.txt"]  # both tagged STANDARD
    assert data["metrics"] == ["map", "precision@10"]
    p = cmd("report", qrels, run, str(other_path), "-o", str(out), "--baseline", str(other_path))
    assert p.returncode == 0, p.stderr
    assert data_of(out.read_text(encoding="utf-8"))["settings"]["baseline"] == "shuffled.txt"


@pytest.mark.parametrize(
    "args",
    [
        ["RUN"],  # one run
        ["RUN", "RUN"],  # the same file twice
        ["RUN", "OTHER", "-m", "nosuchmetric"],
        ["RUN", "OTHER", "--depth", "0"],
        ["RUN", "OTHER", "--test", "nosuchtest"],
        ["RUN", "OTHER", "--alpha", "2"],
        ["RUN", "OTHER", "--baseline", "nosuchrun"],
        ["RUN", "OTHER", "--threads", "-3"],
    ],
)
def test_cli_usage_errors_exit_2(case, tmp_path, args):
    _, _, _, other_path = case
    subst = {"RUN": str(EXAMPLES / "run.txt"), "OTHER": str(other_path)}
    out = tmp_path / "r.html"
    p = cmd("report", str(EXAMPLES / "qrels.txt"), *[subst.get(a, a) for a in args], "-o", str(out))
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and not out.exists()
    p = cmd("report", str(EXAMPLES / "qrels.txt"), subst["RUN"], subst["OTHER"])  # no -o
    assert p.returncode == 2


def test_cli_bad_data_exits_1(case, tmp_path):
    _, _, _, other_path = case
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1 relevant\n")  # neither a run line nor a qrels line
    run = str(EXAMPLES / "run.txt")
    for args in (
        [str(EXAMPLES / "qrels.txt"), run, str(tmp_path / "missing.txt")],
        [str(EXAMPLES / "qrels.txt"), run, str(bad)],
        [str(bad), run, str(other_path)],
        [str(EXAMPLES / "qrels.txt"), run, str(other_path), "-o", str(tmp_path / "no/dir.html")],
    ):
        if "-o" not in args:
            args = [*args, "-o", str(tmp_path / "r.html")]
        p = cmd("report", *args)
        assert p.returncode == 1, (args, p.stderr)
        assert p.stderr.startswith("ranklens report: ") and p.stderr.count("\n") == 1


def test_evaluate_names_runs_that_share_a_tag_by_file(case):
    _, _, _, other_path = case
    p = cmd(str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"), str(other_path), "-m", "map")
    assert p.returncode == 0, p.stderr
    names = [line.split()[0] for line in p.stdout.splitlines()[1:]]
    assert names == ["run.txt", "shuffled.txt"]
    p = cmd(str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"), "-m", "map")
    assert p.stdout.splitlines()[1].split()[0] == "STANDARD"  # one run: its tag


def test_gate_html_writes_the_report(case, tmp_path):
    _, _, _, other_path = case
    out = tmp_path / "gate.html"
    summary = tmp_path / "summary.md"
    p = cmd(
        "gate",
        str(EXAMPLES / "qrels.txt"),
        str(EXAMPLES / "run.txt"),
        str(other_path),
        "-m",
        "map",
        "--max-drop",
        "1",
        "--no-config",
        "--summary",
        str(summary),
        "--html",
        str(out),
    )
    assert p.returncode == 0, p.stderr
    assert summary.read_text().strip()
    data = data_of(out.read_text(encoding="utf-8"))
    assert data["runs"] == ["shuffled.txt", "run.txt"]  # candidate, then the baseline
    assert data["settings"]["baseline"] == "run.txt"
    assert data["settings"]["test"] == "student"
    p = cmd(
        "gate",
        *(str(EXAMPLES / f) for f in ("qrels.txt", "run.txt")),
        str(other_path),
        "-m",
        "map",
        "--max-drop",
        "1",
        "--no-config",
        "--html",
        str(tmp_path / "no" / "dir.html"),
    )
    assert p.returncode == 3 and "Traceback" not in p.stderr


# -- in a browser ----------------------------------------------------------------------
def _browser():
    """A headless Chromium driven by Selenium, or a skip naming what is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install 'ranklens[test]')")
    binary = next(
        (
            shutil.which(b)
            for b in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(b)
        ),
        None,
    )
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip(
            "no headless browser: install Debian's chromium and chromium-driver "
            "(.ci/run does, as root)"
        )
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1600",
    ):
        opts.add_argument(a)
    # An explicit driver path: Selenium Manager never looks for one on the network.
    return webdriver.Chrome(service=Service(driver), options=opts)


def test_in_a_browser(case, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    qrels, run, other, _ = case
    runs = {"bm25": run, "shuffled": other}
    cmp = ranklens.compare(qrels, runs, METRICS)
    path = tmp_path / "report.html"
    ranklens.report(qrels, runs, METRICS, path, depth=30)
    drv = _browser()
    try:
        drv.get(path.as_uri())
        wait = WebDriverWait(drv, 30)
        wait.until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))
        assert [e for e in drv.get_log("browser") if e["level"] == "SEVERE"] == []

        # the summary shows compare's numbers
        rows = drv.find_elements(By.CSS_SELECTOR, "#summary tbody tr")
        assert len(rows) == len(cmp.results)
        for tr, r in zip(rows, cmp.results):
            cells = tr.find_elements(By.TAG_NAME, "td")
            assert [c.text for c in cells[:3]] == [r.metric, r.run, r.other]
            assert cells[3].text == f"{r.mean:.4f}" and cells[5].text == f"{r.diff:.4f}"
            assert float(cells[5].get_attribute("data-value")) == r.diff
            assert float(cells[7].get_attribute("data-value")) == r.p_adjusted
            assert cells[12].text == f"{r.wins}/{r.ties}/{r.losses}"

        # the charts: one pair per metric
        assert len(drv.find_elements(By.CSS_SELECTOR, "#charts .chart-pair")) == len(METRICS)

        # sorted by A - B (the default), then by run A's score, then descending
        diffs = {
            q: a - b
            for q, a, b in zip(
                cmp.query_ids, cmp.scores["bm25"][:, 0], cmp.scores["shuffled"][:, 0]
            )
        }

        def shown() -> list[str]:  # read in one go: the table may be re-rendering
            return drv.execute_script(
                "return Array.from(document.querySelectorAll('#queries tbody tr'),"
                " tr => tr.dataset.q)"
            )

        assert shown() == sorted(cmp.query_ids, key=lambda q: (diffs[q], cmp.query_ids.index(q)))
        drv.find_element(By.CSS_SELECTOR, '#queries th[data-key="run0"]').click()
        scores = dict(zip(cmp.query_ids, cmp.scores["bm25"][:, 0]))
        assert [scores[q] for q in shown()] == sorted(scores.values())
        drv.find_element(By.CSS_SELECTOR, '#queries th[data-key="run0"]').click()
        assert [scores[q] for q in shown()] == sorted(scores.values(), reverse=True)

        # filter by text
        target = cmp.query_ids[-1]
        drv.find_element(By.ID, "filter").send_keys(target)
        wait.until(lambda d: shown() == [q for q in cmp.query_ids if target in q])

        # open the query: the rankings side by side
        drv.find_element(By.CSS_SELECTOR, f'#queries tbody tr[data-q="{target}"]').click()
        wait.until(lambda d: d.find_element(By.ID, "detail").get_attribute("data-query") == target)
        columns = drv.find_elements(By.CSS_SELECTOR, "#detail .ranking")
        assert [c.get_attribute("data-run") for c in columns] == ["bm25", "shuffled"]
        for col, name in zip(columns, ["bm25", "shuffled"]):
            ex = ranklens.explain(qrels, runs[name], target, k=10, metrics=METRICS)
            trs = col.find_elements(By.CSS_SELECTOR, "tbody tr")
            assert [tr.get_attribute("data-doc") for tr in trs] == [r["doc"] for r in ex.ranked]
            for tr, r in zip(trs, ex.ranked):
                label = tr.find_elements(By.TAG_NAME, "td")[2].text
                assert label == ("unjudged" if r["label"] is None else f"{r['label']:g}")
            codes = [c.text for c in col.find_elements(By.CSS_SELECTOR, "li code")]
            assert codes == [ex.formulas[m] for m in ex.formulas]
        # a deeper view of the same query
        from selenium.webdriver.support.ui import Select

        Select(drv.find_element(By.ID, "depth")).select_by_value("30")
        first = drv.find_elements(By.CSS_SELECTOR, "#detail .ranking")[0]
        assert len(first.find_elements(By.CSS_SELECTOR, "tbody tr")) == min(
            30, len(run.ranking(target))
        )
        drv.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 0
    finally:
        drv.quit()
    if os.environ.get("RANKLENS_REPORT_SCREENSHOT"):  # where to keep a copy
        shutil.copy(tmp_path / "report.png", os.environ["RANKLENS_REPORT_SCREENSHOT"])


def test_groups_in_a_browser(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    qrels = ranklens.Qrels.from_groups({"q1": [["a1", "a2"], ["b1"], ["c1", "c2"]]})
    runs = {"x": {"q1": ["a2", "a1", "n"]}, "y": {"q1": ["b1", "n"]}}
    path = tmp_path / "groups.html"
    ranklens.report(qrels, runs, ["recall@10"], path)
    drv = _browser()
    try:
        drv.get(path.as_uri())
        wait = WebDriverWait(drv, 30)
        wait.until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))
        drv.find_element(By.CSS_SELECTOR, '#queries tbody tr[data-q="q1"]').click()
        col = drv.find_element(By.CSS_SELECTOR, '#detail .ranking[data-run="x"]')
        heads = [th.text for th in col.find_elements(By.CSS_SELECTOR, "thead th")]
        assert heads[-1] == "group"
        rows = [
            [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in col.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]
        assert [(r[1], r[-1]) for r in rows] == [("a2", "group 0"), ("a1", "group 0"), ("n", "")]
        missed = col.find_element(By.CSS_SELECTOR, ".missed").text
        assert "b1 (group 1)" in missed and "c1 (group 2)" in missed
    finally:
        drv.quit()


def test_pages_of_the_query_table_in_a_browser(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    rng = random.Random(3)
    qrels = {f"q{i:03d}": {f"d{j}": rng.choice([0, 1, 2]) for j in range(8)} for i in range(250)}
    runs = {name: {q: {f"d{j}": rng.random() for j in range(10)} for q in qrels} for name in "ab"}
    path = tmp_path / "pages.html"
    ranklens.report(qrels, runs, ["ndcg@5"], path)
    cmp = ranklens.compare(qrels, runs, ["ndcg@5"])
    diff = cmp.scores["a"][:, 0] - cmp.scores["b"][:, 0]
    expected = [cmp.query_ids[i] for i in sorted(range(250), key=lambda i: (diff[i], i))]
    drv = _browser()
    try:
        drv.get(path.as_uri())
        WebDriverWait(drv, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.ready")
        )

        def shown() -> list[str]:
            return drv.execute_script(
                "return Array.from(document.querySelectorAll('#queries tbody tr'),"
                " tr => tr.dataset.q)"
            )

        assert shown() == expected[:100]
        drv.find_element(By.ID, "next").click()
        drv.find_element(By.ID, "next").click()
        assert shown() == expected[200:]
        assert drv.find_element(By.ID, "page").text == "page 3 of 3"
        assert not drv.find_element(By.ID, "next").is_enabled()
    finally:
        drv.quit()
