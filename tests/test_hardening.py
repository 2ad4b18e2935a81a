"""Robustness: fork safety, Ctrl-C, bounded input, hostile input (issue 19).

The fork and Ctrl-C tests run a fresh interpreter in a subprocess, with a
generous timeout: a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

import ranklens
from ranklens import Qrels, Run, evaluate, evaluate_files
from ranklens.compat import autorag
from ranklens.errors import ParseError

DATA = Path(__file__).parent / "data"


def run_python(code: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (no thread-count override: the
    default pool is the one under test)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANKLENS_NUM_THREADS",)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **kw,
    )


# -- 1. fork ---------------------------------------------------------------------------


def test_forked_child_can_evaluate_read_and_stream():
    # The parent uses every parallel path once (so rayon's pools exist, the kept
    # threads= pools too), then a forked child uses them again; a child stuck on
    # the parent's pool times out.
    code = f"""
        import multiprocessing as mp
        import ranklens
        from ranklens import Qrels, Run, evaluate, evaluate_files

        QRELS, RUN = {str(DATA / "qrels.test")!r}, {str(DATA / "results.test")!r}

        def work(out):
            q, r = Qrels.from_trec(QRELS), Run.from_trec(RUN)
            a = evaluate(q, r, "map")["map"]
            b = evaluate_files(QRELS, RUN, "map")["map"]
            c = evaluate({{"q": {{"d": 1}}}}, {{"q": {{"d": 1.0}}}}, "map")["map"]
            # threads=: pools kept from call to call (one and three threads).
            d = [
                ranklens.evaluate_dense([[0.5, 0.2, 0.9]], [[1, 0, 2]], "ndcg", threads=t)["ndcg"]
                for t in (1, 3)
            ]
            out.put((a, b, c, d))

        if __name__ == "__main__":
            parent = mp.Queue()
            work(parent)
            expected = parent.get()
            ctx = mp.get_context("fork")
            out = ctx.Queue()
            child = ctx.Process(target=work, args=(out,))
            child.start()
            child.join(30)
            if child.is_alive():
                child.kill()
                raise SystemExit("the forked child hung")
            assert child.exitcode == 0, child.exitcode
            assert out.get(timeout=5) == expected
            print("ok", expected)
    """
    p = run_python(code)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ok")


# -- Shapes past the memory ----------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "ranklens.evaluate_dense(f, f, 'P@1')",
        "ranklens.knn_recall(i, i, 1)",
        "ranklens.evaluate_topk(i, i, 'P@1')",
        "ranklens.evaluate_topk(i, f, 'P@1', relevant_is='labels')",
        "ranklens.evaluate_flat(f.reshape(-1), f.reshape(-1), i.reshape(-1), 'P@1')",
    ],
)
def test_a_shape_past_the_memory_is_an_error_not_an_abort(call):
    # Zero-stride views claim 2**59 cells: the values they would give do not fit in
    # memory.  Run in a child, so that an abort cannot end the test run.
    code = f"""
        import numpy as np, ranklens
        shape = (2**40, 2**19)
        f = np.broadcast_to(np.zeros(1, np.float32), shape)
        i = np.broadcast_to(np.zeros(1, np.int64), shape)
        try:
            {call}
        except (MemoryError, ValueError, ranklens.RanklensInputError) as e:
            print(type(e).__name__, e)
    """
    p = run_python(code)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "memory" in p.stdout or "too big" in p.stdout or "allocate" in p.stdout, p.stdout


# -- 2. Ctrl-C -------------------------------------------------------------------------

# A child runs `call` (which would take minutes) and reports how it ended; the
# parent sends SIGINT once the call has started.  KeyboardInterrupt must come
# within INTERRUPT_BOUND seconds of the signal, as the child measures it (its
# `except` clock against the parent's send time, both `time.time()` of one
# machine): a generous functional bound (the calls look at the signal every
# 50 ms or every few thousand rows read), not a speed target.  The process
# must end within INTERRUPT_BOUND more (no thread left running).
INTERRUPT_BOUND = 5.0

CHILD = """
import sys, time
DELAY = 2.0
{setup}
print("ready", DELAY, flush=True)
try:
    {call}
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.time(), flush=True)
else:
    print("returned", time.time(), flush=True)
{after}
"""


class Ended(NamedTuple):
    """How an interrupted child ended: its report ("" if it did not end
    within INTERRUPT_BOUND of the signal), the seconds from the signal to its
    report (inf without one), and what it printed after the report."""

    report: str
    latency: float
    rest: str
    delay: float


def interrupt_child(setup: str, call: str, feed=None, after: str = "") -> Ended:
    """Run the child, SIGINT it during `call`, return how it ended (`Ended`).
    The signal comes DELAY seconds after "ready" (2 s, or what `setup` sets).
    ``feed``, if given, writes to the child's stdin until it fails, counting
    the bytes in ``written``: the signal then waits until the child has read
    20 MB (so it is inside the call).  ``after`` runs in the child once the
    call has ended (a second call, to see that nothing was left broken)."""
    import signal
    import threading
    import time

    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_NUM_THREADS"}
    code = CHILD.format(setup=textwrap.dedent(setup).strip(), call=call, after=after)
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        written = [0]
        if feed:
            threading.Thread(target=feed, args=(child.stdin, written), daemon=True).start()
        ready = child.stdout.readline().split()
        assert ready[:1] == ["ready"], child.stderr.read()
        delay = float(ready[1])
        if feed:
            deadline = time.monotonic() + 60
            while written[0] < 20 << 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert written[0] >= 20 << 20, "the child does not read its input"
        else:
            time.sleep(delay)
        sent = time.time()
        os.kill(child.pid, signal.SIGINT)
        try:
            # Not communicate(): it would close stdin, and the end of the input
            # would end the call without any interruption.
            child.wait(timeout=2 * INTERRUPT_BOUND)
        except subprocess.TimeoutExpired:
            return Ended("", math.inf, "", delay)
        out, err = child.stdout.read(), child.stderr.read()
        assert "PanicException" not in err, err
        lines = out.splitlines()
        if not lines:
            return Ended("", math.inf, err, delay)
        report, _, at = lines[0].partition(" ")
        return Ended(report, float(at) - sent, "\n".join(lines[1:]), delay)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


def assert_interrupted(ended: Ended, bound: float = INTERRUPT_BOUND) -> None:
    assert ended.report == "KeyboardInterrupt", ended
    assert ended.latency < bound, ended


def endless_run(pipe, written: list) -> None:
    """Distinct run lines, written until the reader goes away."""
    i = 0
    try:
        while True:
            text = "".join(f"q{i + j} 0 d{j} 1 1.5 t\n" for j in range(5000))
            pipe.write(text)
            written[0] += len(text)
            i += 5000
    except (BrokenPipeError, OSError, ValueError):
        pass


def test_ctrl_c_stops_a_long_bootstrap_compare():
    setup = """
        import ranklens
        n = 20000  # 200,000 resamples of 20,000 queries: minutes of work
        q = {f"q{i}": {"a": 1} for i in range(n)}
        r1 = ranklens.Run({f"q{i}": {"a": 1.0, "b": 0.5} for i in range(n)}, name="r1")
        r2 = ranklens.Run({f"q{i}": {"b": 1.0, "a": 0.5 + (i % 2)} for i in range(n)}, name="r2")
    """
    call = 'ranklens.compare(q, [r1, r2], "map", test="bootstrap", n_resamples=200_000)'
    assert_interrupted(interrupt_child(setup, call))


@pytest.mark.parametrize(
    "call",
    [
        "ranklens.evaluate_dense(f, f, 'ndcg')",
        "ranklens.evaluate_topk(i, i, 'map')",
        "ranklens.knn_recall(i, i, 100)",
        "ranklens.evaluate_flat(p, t, x, rbp)",
        "ranklens.evaluate_dense(g, g, rbp)",
    ],
)
def test_ctrl_c_stops_a_long_array_call(call):
    # Zero-stride views of 2**27 rows: minutes of work, read without a copy.
    setup = """
        import numpy as np, ranklens
        shape = (2**27, 100)
        f = np.broadcast_to(np.arange(100, dtype=np.float32), shape)
        i = np.broadcast_to(np.arange(100, dtype=np.int64), shape)
        # Fewer cells on a thousand metrics each: the work is cells x metrics.
        # evaluate_flat: 10,000 queries of 1,000 cells (real arrays: a view
        # would be copied); evaluate_dense: 60,000 rows of 1,000.
        rbp = [f"rbp(p={(j + 1) / 1002})" for j in range(1000)]
        p = np.tile(np.arange(1000, dtype=np.float32), 10_000)
        t, x = p > 900, np.repeat(np.arange(10_000), 1000)
        g = np.broadcast_to(np.arange(1000, dtype=np.float32), (60_000, 1000))
    """
    assert_interrupted(interrupt_child(setup, call))


def test_ctrl_c_stops_evaluate_on_many_metrics():
    # Fewer rows than a large call's (99,000), on 80,000 metrics: each
    # metric reads every row of its query, a few seconds a query.
    setup = """
        import ranklens
        docs = {f"d{j}": float(j) for j in range(1000)}
        run = ranklens.Run({f"q{i}": docs for i in range(99)})
        qrels = ranklens.Qrels({f"q{i}": {"d1": 1, "d7": 2} for i in range(99)})
        ms = [f"rbp(p={(j + 1) / 80002})" for j in range(80000)]
    """
    after = 'print(ranklens.evaluate(qrels, run, "recall").values.mean())'
    ended = interrupt_child(setup, "ranklens.evaluate(qrels, run, ms)", after=after)
    assert_interrupted(ended)
    assert ended.rest == "1.0", ended


# Rows of 10,000 ids (one list object, a row read in ~0.1 ms): a million rows
# are minutes of reading under the GIL, little memory.  `Rows`: a sized
# iterable that is no list (the rows iterated, in C: no bytecode runs).
SCORER_SETUP = """
    import pandas as pd
    import ranklens
    ids = [f"d{i}" for i in range(10_000)]
    n = 1_000_000
    ret, rel = [ids] * n, [["x"]] * n
    sc = ranklens.Scorer(["recall"])

    class Rows:
        def __init__(self, rows):
            self.rows = rows

        def __len__(self):
            return len(self.rows)

        def __iter__(self):
            return iter(self.rows)

    df = pd.DataFrame({"retrieved_ids": ret, "relevant": rel})
"""

# After the interruption, a second call gives the right value (nothing left
# broken: the Scorer's buffers, the pool).
SCORER_AFTER = 'print(sc.batch([["a", "b"]], [["b"]], threads=None)["recall"][0])'


@pytest.mark.parametrize(
    "call",
    [
        "sc.batch(ret, rel)",  # pipelined: read here, scored on a pool thread
        "sc.batch(ret, rel, threads=1)",  # read whole, then scored
        "sc.batch(Rows(ret), Rows(rel))",  # iterated
        "ranklens.score_batch(ret, rel, 'recall')",
        "ranklens.score_frame(df, relevant_col='relevant', metrics='recall', semantics='trec')",
    ],
)
def test_ctrl_c_stops_a_long_batch(call):
    ended = interrupt_child(SCORER_SETUP, call, after=SCORER_AFTER)
    assert_interrupted(ended)
    assert ended.rest == "1.0", ended


# Rows whose scoring is the long part: 1,000 hits each, on a thousand metrics
# (each reads every hit), ~25 ms a row, ~0.4 ms to read.
HEAVY_SETUP = """
    import ranklens
    ids = [f"d{i}" for i in range(10_000)]
    rel = ids[::10]
    heavy = ranklens.Scorer([f"rbp(p={(j + 1) / 1002})" for j in range(1000)])
    sc = ranklens.Scorer(["recall"])
"""


@pytest.mark.parametrize(
    "call",
    [
        "heavy.batch([ids] * 1000, [rel] * 1000, threads=1)",  # read, then scored
        "heavy.batch([ids] * 5000, [rel] * 5000)",  # pipelined
    ],
)
def test_ctrl_c_stops_a_long_scoring(call):
    ended = interrupt_child(HEAVY_SETUP, call, after=SCORER_AFTER)
    assert_interrupted(ended)
    assert ended.rest == "1.0", ended


def test_ctrl_c_stops_a_long_gate():
    # The gate's evaluations and its randomization test (compare's resampling):
    # 10^9 resamples of 20,000 queries.
    setup = """
        import ranklens
        n = 20000
        q = {f"q{i}": {"a": 1} for i in range(n)}
        r1 = ranklens.Run({f"q{i}": {"a": 1.0, "b": 0.5} for i in range(n)})
        r2 = ranklens.Run({f"q{i}": {"b": 1.0, "a": 0.5 + (i % 2)} for i in range(n)})
    """
    call = "ranklens.gate(q, r1, r2, 0.01, metrics='map', test='randomization', n_resamples=10**9)"
    after = "print(ranklens.gate(q, r1, r1, 0.01, metrics='map').passed)"
    ended = interrupt_child(setup, call, after=after)
    assert_interrupted(ended)
    assert ended.rest == "True", ended


def test_ctrl_c_stops_the_gate_command(tmp_path):
    # `ranklens gate` on files: exit 130, one line on stderr.
    n = 20000
    (tmp_path / "q").write_text("".join(f"q{i} 0 a 1\n" for i in range(n)))
    (tmp_path / "b").write_text("".join(f"q{i} 0 a 1 1.0 b\nq{i} 0 b 2 0.5 b\n" for i in range(n)))
    (tmp_path / "c").write_text(
        "".join(f"q{i} 0 b 1 1.0 c\nq{i} 0 a 2 {0.5 + i % 2} c\n" for i in range(n))
    )
    setup = f"""
        from ranklens.cli import main
        d = {str(tmp_path)!r}
    """
    call = (
        "code = main(['gate', d + '/q', d + '/b', d + '/c', '-m', 'map', '--max-drop', "
        "'0.01', '--test', 'randomization', '--n-resamples', '1000000000', '--no-config'])\n"
        "    print(f'exit{code}', time.time(), flush=True)"
    )
    ended = interrupt_child(setup, call)
    assert ended.report == "exit130", ended
    assert ended.latency < INTERRUPT_BOUND, ended


# The start of both children below: 3 million entries as dicts, `call` (with
# `setup` run first), and T, the best of three whole calls.
LARGE_DICTS_HEAD = """
import os, signal, subprocess, time, ranklens
from ranklens.compat import pytrec_eval
run = {{f"q{{i}}": {{f"d{{j}}": float(j) for j in range(10000)}} for i in range(300)}}
qrels = {{q: {{d: int(v) % 3 for d, v in docs.items()}} for q, docs in run.items()}}
{setup}
def call():
    {call}
full = []
for _ in range(3):
    t = time.monotonic(); call(); full.append(time.monotonic() - t)
full = min(full)
"""

# Encoding an in-memory dict holds the GIL; the walk runs the pending signal
# handlers itself every few tens of thousands of rows.  The child has the
# kernel raise SIGALRM (delivered whatever holds the GIL; its handler raises
# KeyboardInterrupt) a tenth of T into a second call: the interrupt must come
# before half of T, where a walk that never looks answers only at its end.  A
# ratio of the call's own time, not a speed target; a third call shows nothing
# was left broken.
ENCODE_CHILD = """
def alarm(*_):
    raise KeyboardInterrupt
signal.signal(signal.SIGALRM, alarm)
signal.setitimer(signal.ITIMER_REAL, full / 10)
t = time.monotonic()
try:
    call()
    print("returned", full, time.monotonic() - t, flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", full, time.monotonic() - t, flush=True)
signal.setitimer(signal.ITIMER_REAL, 0)
call()
print("again", flush=True)
"""


# AutoRAG's rows: 300,000 of ten ids each, read with the GIL held.
AUTORAG_ROWS = """
from ranklens.compat import autorag
ret = [[f"d{j}" for j in range(10)] for _ in range(300_000)]
gt = [[["d1"], ["d7", "d9"]] for _ in range(300_000)]
"""


@pytest.mark.parametrize(
    ("setup", "call"),
    [
        ("", "ranklens.Run(run)"),
        ("", "ranklens.Qrels(qrels)"),
        ("", "pytrec_eval.RelevanceEvaluator(qrels, {'map'})"),
        ("", "ranklens.evaluate(qrels, run, 'map')"),
        (AUTORAG_ROWS, "autorag.retrieval_metrics(gt, ret)"),
    ],
)
def test_ctrl_c_stops_encoding_a_large_dict(setup, call):
    code = (LARGE_DICTS_HEAD + ENCODE_CHILD).format(setup=setup, call=call)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report, full, elapsed = out.stdout.split()[:3]
    assert report == "KeyboardInterrupt", out.stdout
    assert float(elapsed) < float(full) / 2, out.stdout
    assert out.stdout.split()[-1] == "again", out.stdout


# The dict path of `evaluate` and of the pytrec_eval drop-in reads the run by
# borrowed pointers and may run no Python code, so it asks for SIGINT itself
# (Python's own handler only) between chunks.  The child has `kill -INT` sent
# to itself seven tenths of T into a second call (in the run's walk), by a
# process started just before it (the signal must be SIGINT, and no thread of
# the child can send it while the call holds the GIL); the interrupt must come
# within a fifth of T, where a walk that never looks answers at the call's end.
DICT_PATH_CHILD = """
at = {fraction} * full
killer = subprocess.Popen(["sh", "-c", f"sleep {{at + 0.02}}; kill -INT {{os.getpid()}}"])
time.sleep(0.02)  # the shell started, its sleep running
t = time.monotonic()
try:
    call()
    print("returned", full, at, time.monotonic() - t, flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", full, at, time.monotonic() - t, flush=True)
killer.wait()
call()
print("again", flush=True)
"""


@pytest.mark.parametrize(
    ("setup", "call"),
    [
        ("", "ranklens.evaluate(qrels, run, 'map')"),
        ("ev = pytrec_eval.RelevanceEvaluator(qrels, {'map'})", "ev.evaluate(run)"),
    ],
)
def test_ctrl_c_stops_the_dict_path(setup, call):
    code = (LARGE_DICTS_HEAD + DICT_PATH_CHILD).format(setup=setup, call=call, fraction=0.7)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report, full, at, elapsed = out.stdout.split()[:4]
    assert report == "KeyboardInterrupt", out.stdout
    # answered within a fifth of the call of the signal, not at the call's end
    assert float(elapsed) - 0.05 < float(at) + float(full) / 5, out.stdout
    assert out.stdout.split()[-1] == "again", out.stdout


def test_ctrl_c_stops_reading_stdin():
    setup = "import ranklens"
    call = 'ranklens.Run.from_trec("-")'
    assert_interrupted(interrupt_child(setup, call, feed=endless_run))


def test_ctrl_c_stops_streaming_stdin():
    setup = f"""
        import ranklens
        QRELS = {str(DATA / "qrels.test")!r}
    """
    call = 'ranklens.evaluate_files(QRELS, "-", "map")'
    assert_interrupted(interrupt_child(setup, call, feed=endless_run))


def test_ctrl_c_while_numpy_api_loads_is_keyboard_interrupt():
    # Ctrl-C landing in the Python code that loading numpy's C API runs (its
    # version parsing): a KeyboardInterrupt, never a PanicException.
    code = f"""
        import numpy.lib

        def interrupted(*args, **kwargs):
            raise KeyboardInterrupt

        numpy.lib.NumpyVersion = interrupted
        try:
            import ranklens

            ranklens.Qrels.from_trec({str(DATA / "qrels.test")!r})
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        except BaseException as e:
            print(type(e).__name__)
    """
    p = run_python(code)
    assert p.stdout.strip() == "KeyboardInterrupt", p.stdout + p.stderr


# -- 3, 7. bounded lines ---------------------------------------------------------------


def test_a_line_past_the_limit_is_a_parse_error_naming_file_and_line(tmp_path):
    p = tmp_path / "run.txt"
    p.write_text("q 0 a 1 1.0 t\n" + "q 0 " + "d" * (3 << 20) + " 1 1.0 t\nq 0 b 1 1.0 t\n")
    with pytest.raises(ParseError, match=r"run\.txt:2: a line longer than 1048576 bytes"):
        Run.from_trec(p)
    with pytest.raises(ParseError, match=r"run\.txt:2: a line longer than 1000 bytes"):
        Run.from_trec(p, max_line_bytes=1000)
    # A higher limit reads it: three documents for query q.
    assert len(Run.from_trec(p, max_line_bytes=4 << 20).ranking("q")) == 3


def test_a_gzip_bomb_without_a_newline_stops_at_the_limit(tmp_path):
    p = tmp_path / "bomb.gz"
    with gzip.open(p, "wb") as f:
        for _ in range(64):  # 64 MiB of zeros (64 KiB compressed), no newline
            f.write(b"0" * (1 << 20))
    with pytest.raises(ParseError, match=r"bomb\.gz:1: a line longer than 1048576 bytes"):
        Run.from_trec(p)
    with pytest.raises(ParseError, match=r"bomb\.gz:1: a line longer than 4096 bytes"):
        evaluate_files(DATA / "qrels.test", p, "map", max_line_bytes=4096)


# -- 4. FIFO and stdin: never read again -----------------------------------------------

SPLIT_DUP = "q1 0 a 1\nq2 0 b 1\nq1 0 a 0\n"
# Lines 1 and 3 list document a for q1; their lines are not consecutive.
SPLIT_DUP_MSG = 'query "q1": document "a" is listed more than once (first on line 1)'


def test_a_fifo_holding_a_split_duplicate_is_not_opened_again(tmp_path):
    fifo = tmp_path / "qrels.fifo"
    os.mkfifo(fifo)
    code = f"""
        import threading
        from ranklens import Qrels
        from ranklens.errors import ParseError

        def write():
            with open({str(fifo)!r}, "w") as f:
                f.write({SPLIT_DUP!r})

        threading.Thread(target=write, daemon=True).start()
        try:
            Qrels.from_trec({str(fifo)!r})
        except ParseError as e:
            print(e)
    """
    p = run_python(code, timeout=30)
    assert p.stdout.strip() == f"{fifo}:3: {SPLIT_DUP_MSG}", p.stderr


def test_stdin_holding_a_split_duplicate_names_its_lines(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text(SPLIT_DUP)
    code = """
        from ranklens import Qrels
        from ranklens.errors import ParseError
        try:
            Qrels.from_trec("-")
        except ParseError as e:
            print(e)
    """
    with open(path) as stdin:
        p = run_python(code, stdin=stdin)
    assert p.stdout.strip() == f"<stdin>:3: {SPLIT_DUP_MSG}", p.stderr


# -- 8, 9. BOM, CR-only line ends ------------------------------------------------------


def test_a_utf8_bom_is_not_part_of_the_first_query_id(tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_bytes(b"\xef\xbb\xbfq1 0 a 1\n")
    r.write_bytes(b"\xef\xbb\xbfq1 0 a 1 1.0 t\n")
    assert Qrels.from_trec(q).query_ids == ["q1"]
    # q1's one relevant document is ranked first: AP = 1/1.
    assert evaluate(Qrels.from_trec(q), Run.from_trec(r), "map")["map"] == 1.0


def test_cr_only_line_ends_are_an_error_naming_the_file(tmp_path):
    mac = tmp_path / "mac.txt"
    mac.write_bytes(b"q1 0 a 1 1.0 t\rq1 0 b 2 0.5 t\r")
    with pytest.raises(ParseError, match=r"mac\.txt:1: a carriage return"):
        Run.from_trec(mac)
    dos = tmp_path / "dos.txt"
    dos.write_bytes(b"q1 0 a 1 1.0 t\r\nq1 0 b 2 0.5 t\r\n")
    assert Run.from_trec(dos).ranking("q1") == ["a", "b"]


# -- 14. non-UTF-8 ids -----------------------------------------------------------------


def test_ids_that_are_not_utf8_are_an_error_not_merged(tmp_path):
    # Decoded with replacement characters, q\xff and q\xfe were one query.
    r = tmp_path / "r.txt"
    r.write_bytes(b"q1 0 a 1 1.0 t\nq\xff 0 a 1 1.0 t\nq\xfe 0 a 1 1.0 t\n")
    with pytest.raises(ParseError, match=r'r\.txt:2: the query id "q\\xff" is not valid UTF-8'):
        Run.from_trec(r)
    r.write_bytes(b"q1 0 d\xff 1 1.0 t\nq1 0 d\xfe 2 0.5 t\n")
    with pytest.raises(ParseError, match=r'r\.txt:1: the document id "d\\xff" is not valid UTF-8'):
        Run.from_trec(r)


def test_arrow_binary_ids_that_are_not_utf8_are_an_error_not_merged():
    pa = pytest.importorskip("pyarrow")
    from ranklens.errors import RanklensInputError

    table = pa.table(
        {
            "query_id": pa.array([b"q1", b"q\xff", b"q\xfe"], pa.binary()),
            "doc_id": pa.array([b"a", b"a", b"a"], pa.binary()),
            "score": [1.0, 1.0, 1.0],
        }
    )
    with pytest.raises(RanklensInputError, match=r"row 1: the id is not valid UTF-8"):
        Run.from_arrow(table)


# -- 17. the first error in file order -------------------------------------------------


def test_the_first_error_in_file_order_is_reported(tmp_path):
    r = tmp_path / "r.txt"
    # Line 3 repeats line 1 (not consecutive: found at the end); line 4 is bad.
    r.write_text("q1 0 a 1 1.0 t\nq2 0 b 1 1.0 t\nq1 0 a 2 0.5 t\nq3 0 c 1 x t\n")
    with pytest.raises(ParseError) as e:
        Run.from_trec(r)
    assert str(e.value) == (
        f'{r}:3: query "q1": document "a" is listed more than once (first on line 1)'
    )


# -- 10. values past the largest float -------------------------------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_a_gain_past_the_largest_float_is_the_same_error_in_both_backends(backend):
    from ranklens.errors import RanklensInputError

    # ndcg_burges's gain 2^label - 1 and err's 2^label overflow from label 1024 on.
    for metric in ["ndcg_burges", "err"]:
        with pytest.raises(RanklensInputError, match=f'query "q", metric {metric}: the value'):
            evaluate({"q": {"a": 1024}}, {"q": {"a": 1.0}}, metric, backend=backend)
    # A sum past 1.8e308: dcg's linear gains 1e308 at ranks 1, 2, 3 add up to
    # 1e308 (1 + 1/log2(3) + 1/2) = 2.13e308.
    q3 = {"q": {"a": 1e308, "b": 1e308, "c": 1e308}}
    r3 = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    with pytest.raises(RanklensInputError, match='query "q", metric dcg: the value'):
        evaluate(q3, r3, "dcg", backend=backend)
    # Label 1023 is fine: the one document is ranked first, ndcg = 1.
    res = evaluate({"q": {"a": 1023}}, {"q": {"a": 1.0}}, "ndcg_burges", backend=backend)
    assert res["ndcg_burges"] == 1.0


def test_cli_json_never_holds_nan_or_infinity(tmp_path, capsys):
    import json

    from ranklens.cli import main

    # dcg of a label of 1e308 at rank 1 is 1e308 per query (log2(2) = 1); the
    # mean adds the two first, as trec_eval does: 2e308 is past the largest
    # float, so the mean is infinite, written as null.
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 1e308\nq2 0 a 1e308\n")
    r.write_text("q1 0 a 1 1.0 t\nq2 0 a 1 1.0 t\n")
    assert main([str(q), str(r), "-m", "dcg", "--format", "json", "-q"]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc[0]["aggregate"]["dcg"] is None
    assert doc[0]["per_query"]["dcg"] == {"q1": 1e308, "q2": 1e308}


# -- 13. parameter ranges --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("rbp(p=2)", "rbp parameter p must be in [0, 1), got 2"),
        ("rbp(p=-0.5)", "rbp parameter p must be in [0, 1), got -0.5"),
        ("rbp_resid(p=1)", "rbp_resid parameter p must be in [0, 1), got 1"),
        ("iprec_at_recall_1.5", "iprec_at_recall parameter recall must be in [0, 1], got 1.5"),
        ("Rprec_mult_-1", "rprec_mult parameter mult must be in (0, inf), got -1"),
        ("set_F.-1", "set_f parameter beta must be in [0, inf), got -1"),
        ("err(gmax=-2)", "err parameter gmax must be in [0, inf), got -2"),
    ],
)
def test_out_of_range_parameters_are_unknown_metrics(name, why):
    from ranklens import parse_metric
    from ranklens.errors import UnknownMetricError

    with pytest.raises(UnknownMetricError, match=re.escape(why)):
        parse_metric(name)


def test_parameters_at_the_ends_of_their_ranges_are_accepted():
    from ranklens import parse_metric

    for name in ["rbp(p=0)", "iprec_at_recall_0", "iprec_at_recall_1", "set_F.0", "err(gmax=0)"]:
        parse_metric(name)


# -- 15. messages ----------------------------------------------------------------------

Q = {"q": {"a": 1}}
R = {"q": {"a": 1.0}}


@pytest.mark.parametrize(
    ("call", "error", "why"),
    [
        (lambda: evaluate(Q, R, "ndcg@99999999999999999999"), "UnknownMetricError", "cutoff"),
        (lambda: evaluate(Q, R, "ndcg@5 10"), "UnknownMetricError", "cutoff '5 10'"),
        (lambda: evaluate(Q, R, None), "UnknownMetricError", "metrics must be"),
        (lambda: evaluate(Q, R, "map", threads=10**30), "RanklensInputError", "threads"),
        (lambda: evaluate(Q, R, "map", relevance_level=10**400), "RanklensInputError", "level"),
        (lambda: evaluate(Q, R, "map", ties=None), "RanklensInputError", "ties"),
        (lambda: Run.from_trec(123), "RanklensInputError", "path must be"),
        (lambda: Run.from_trec("/no/such\udc80"), "RanklensInputError", "not valid UTF-8"),
        (lambda: Qrels.from_trec(b"/no/such\xff"), "RanklensInputError", "not valid UTF-8"),
    ],
)
def test_bad_arguments_are_ranklens_errors_naming_them(call, error, why):
    import ranklens.errors

    with pytest.raises(getattr(ranklens.errors, error)) as e:
        call()
    assert why in str(e.value)


def test_a_bytes_path_is_read():
    assert Qrels.from_trec(os.fsencode(DATA / "qrels.test")).query_ids


# -- 16. CLI exit codes and one-line messages ------------------------------------------


def test_cli_option_errors_are_usage_errors(capsys):
    from ranklens.cli import main

    qrels, run = str(DATA / "qrels.test"), str(DATA / "results.test")
    for extra in (["-m", "foo"], ["-l", "nan"], ["--threads", "0"], ["--chunk-rows", "0"]):
        code = main([qrels, run, *extra])
        out, err = capsys.readouterr()
        assert (code, out, err.count("\n")) == (2, "", 1), (extra, err)


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
def test_cli_output_that_cannot_be_written_is_one_line(redirect):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    qrels, run = str(DATA / "qrels.test"), str(DATA / "results.test")
    cmd = f"{sys.executable} -m ranklens.cli {qrels} {run} -m map {redirect}"
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert p.stderr.count("\n") == 1 and "cannot write the output" in p.stderr, p.stderr


@pytest.mark.parametrize(
    "make",
    [
        lambda: ranklens.Run({"q\ud800": {"d": 1.0}}),
        lambda: ranklens.Run({"q": {"d\ud800": 1.0}}),
        lambda: ranklens.Run({"q": ["d\ud800"]}),
        lambda: ranklens.Qrels({"q": {"d\ud800": 1}}),
        # ids packed in one call (records, pandas object columns, JSON Lines)
        lambda: ranklens.Run.from_records([("q", "d\ud800", 1.0)]),
        # AutoRAG's ids and passages
        lambda: autorag.retrieval_recall([[["a\ud800"]]], [["a"]]),
        lambda: autorag.retrieval_token_f1([[["a b"]]], [["a\ud800 b"]]),
        # the Scorer's general path (its plain-str list fast path compares such
        # an id exactly: tests/test_ids.py)
        lambda: ranklens.Scorer(["map"])(("a\ud800", "b"), ["b"]),
        lambda: ranklens.Scorer(["map"])(["b"], {"a\ud800": 1}),
        lambda: ranklens.score(["x"], {"a\ud800": 1}, ["map"]),
    ],
)
def test_a_lone_surrogate_in_an_id_is_an_input_error(make):
    # e.g. os.fsdecode of bytes that are not UTF-8: not a bare UnicodeEncodeError
    with pytest.raises(ranklens.RanklensInputError, match="lone surrogate"):
        make()


def test_the_scorer_names_the_row_of_a_lone_surrogate():
    # read by the rule of every door (bindings::ids) outside the plain-str
    # list fast path: an error naming the row
    scorer = ranklens.Scorer(["map"])
    with pytest.raises(ranklens.RanklensInputError, match=r"^row 1: .*lone surrogate"):
        scorer.batch([["a"], {"b\ud800": 1.0, "b": 0.5}], [["a"], ["b"]])
