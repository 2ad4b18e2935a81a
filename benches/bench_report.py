"""The HTML report at scale: its size, how long it takes to write, and how fast it
opens and sorts in a headless Chromium.

Synthetic data (seed 0, ``make_data``): ``--queries`` queries, 3 runs of ``--docs``
documents each from a pool of 300 documents a query (30 judged, labels 0-2),
``ndcg@10`` and ``map``, the report embedded to ``--depth``::

    python benches/bench_report.py --queries 10000 --docs 100 --depth 20 --repeat 3

Printed: the time ``ranklens.report`` takes (compare, one ``explain`` per query and
run, the page), the file's size, and in the browser (Selenium driving Debian's
``chromium`` / ``chromedriver``), best and median of ``--repeat`` fresh loads:

* time to interactive: ``performance.now()`` when the page has parsed its data and
  drawn the summary, the charts and the first page of the query table (the
  ``data-ready`` marker the script sets), from the start of navigation;
* sort: one click on a column header (sort all queries, draw the page), timed in
  the page around a synthetic click (the handler runs synchronously);
* filter: the table narrowed to a text and drawn (the 60 ms typing pause the page
  waits for taken off);
* open: a click on a query, its rankings drawn side by side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ranklens


def make_data(nq: int, nd: int) -> tuple[ranklens.Qrels, dict[str, ranklens.Run]]:
    """Per query 30 of 300 documents judged (labels 0-2); each run ranks ``nd``
    documents, judged ones drawn more often, a document's score noise plus the
    run's skill times its label (run0 < run1 < run2 on average)."""
    rng = np.random.default_rng(0)
    pool = 300
    skill = {"run0": 0.2, "run1": 0.35, "run2": 0.5}
    qrels = {}
    runs: dict[str, dict[str, dict[str, float]]] = {name: {} for name in skill}
    for i in range(nq):
        q = f"q{i:05d}"
        judged = rng.choice(pool, 30, replace=False)
        labels = np.zeros(pool)
        labels[judged] = rng.choice([0, 0, 1, 2], 30)
        qrels[q] = {f"d{d}": int(labels[d]) for d in judged.tolist()}
        weight = np.ones(pool)
        weight[judged] = 4.0
        for name, k in skill.items():
            docs = rng.choice(pool, nd, replace=False, p=weight / weight.sum())
            scores = (rng.random(nd) + k * labels[docs]).round(4)
            runs[name][q] = {f"d{d}": float(x) for d, x in zip(docs.tolist(), scores.tolist())}
    return ranklens.Qrels(qrels), {n: ranklens.Run(r) for n, r in runs.items()}


_SORT_JS = """
const th = document.querySelector('#queries th[data-key="' + arguments[0] + '"]');
const t0 = performance.now();
th.click();
return performance.now() - t0;
"""

# The page filters once typing pauses for 60 ms: this timer, queued after the
# page's, fires once the table is drawn; the pause is taken off.
_FILTER_JS = """
const done = arguments[arguments.length - 1];
const input = document.getElementById('filter');
input.value = arguments[0];
const t0 = performance.now();
input.dispatchEvent(new Event('input'));
setTimeout(() => done(performance.now() - t0 - 60), 60);
"""

_OPEN_JS = """
const tr = document.querySelector('#queries tbody tr');
const t0 = performance.now();
tr.click();
return performance.now() - t0;
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1600",
    ):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def screenshot(report: str, png: str) -> None:
    """The page with the first query of the table (the largest loss of A against B)
    open, its rankings to depth 10."""
    drv = browser()
    try:
        drv.set_window_size(1400, 2000)
        drv.get("file://" + os.path.abspath(report))
        for _ in range(600):
            if drv.execute_script("return window.ranklensReady"):
                break
            time.sleep(0.1)
        drv.execute_script(_OPEN_JS)
        height = drv.execute_script("return document.documentElement.scrollHeight")
        drv.set_window_size(1400, min(int(height) + 40, 4000))
        drv.save_screenshot(png)
    finally:
        drv.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="keep the report here")
    ap.add_argument(
        "--screenshot",
        default=None,
        metavar="PNG",
        help="save a screenshot of the report, the most degraded query open (docs/img/report.png)",
    )
    args = ap.parse_args()

    qrels, runs = make_data(args.queries, args.docs)
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="ranklens-report-"), "report.html")
    t0 = time.perf_counter()
    ranklens.report(qrels, runs, ["ndcg@10", "map"], out, depth=args.depth)
    written = time.perf_counter() - t0
    size = os.path.getsize(out)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"{args.queries} queries x 3 runs x {args.docs} documents, depth {args.depth}, "
        f"ranklens {ranklens.__version__} (commit {commit or '?'}), Python {sys.version.split()[0]}"
    )
    print(f"ranklens.report: {written:.1f} s; file: {size / 2**20:.1f} MiB ({size} bytes)")

    tti, sort, filt, opened = [], [], [], []
    for _ in range(args.repeat):
        drv = browser()
        try:
            drv.get("file://" + os.path.abspath(out))
            drv.implicitly_wait(0)
            for _ in range(600):
                ready = drv.execute_script("return window.ranklensReady")
                if ready:
                    break
                time.sleep(0.1)
            tti.append(float(ready))
            sort.append(float(drv.execute_script(_SORT_JS, "run0")))
            sort.append(float(drv.execute_script(_SORT_JS, "run0")))  # descending
            filt.append(float(drv.execute_async_script(_FILTER_JS, "q00")))
            opened.append(float(drv.execute_script(_OPEN_JS)))
            version = drv.capabilities.get("browserVersion", "?")
        finally:
            drv.quit()

    def show(name: str, xs: list[float]) -> None:
        print(f"{name:<20} best {min(xs):8.1f} ms   median {statistics.median(xs):8.1f} ms")

    if args.screenshot:
        screenshot(out, args.screenshot)
    print(f"Chromium {version} (headless), {args.repeat} fresh loads:")
    show("time to interactive", tti)
    show("sort (a column)", sort)
    show("filter (text)", filt)
    show("open a query", opened)
    return 0


if __name__ == "__main__":
    sys.exit(main())
