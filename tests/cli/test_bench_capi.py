"""``arc4py bench --c-api``: the report's rows (arc4py/bench/sources.py) as
C calls, timed as the Python rows are (timing.py), in the report's table
(report.py).

The children run the real C loops with a few milliseconds per figure; the
checks are on the shape of what they print, never on a figure.  In process,
a fake C module stands in for arc4py.bench._capi_loops: the calls it is asked
for, not timings.
"""
import json
import sys

import pytest

from arc4py.bench.command import select_rows
from arc4py.bench.sources import ROWS
from arc4py.bench.timing import UNROLL, UNSTABLE_SPREAD
from helpers import child_env, run_python, run_to_closed_pipe, without_bench_progress

try:
    from arc4py.bench import capi
except ImportError:  # not importorskip: pytest 9 lets this ImportError through
    pytest.skip("this build has no C loops (Linux only)", allow_module_level=True)

BENCH = ["-m", "arc4py", "bench", "--c-api", "--threads", "1"]
SHORT = ["--rows", "arc4random,fill4k", "--duration", "0.005"]
COLUMNS = ["arc4py", "libc", "libbsd", "openssl"]


def bench(*args, **kwargs):
    """``arc4py bench --c-api`` in a child interpreter (text output)."""
    return run_python([*BENCH, *args], env=child_env(ARC4PY_BACKEND=None),
                      **kwargs)


class FakeC:
    """Stands in for arc4py.bench._capi_loops: records what it is asked to run
    and runs nothing."""

    def __init__(self, missing=None):
        self.missing = dict(missing or {})
        self.asked = set()      # (column, kind, size)
        self.counts = set()     # call counts

    def columns(self):
        return {c: self.missing.get(c) for c in COLUMNS}

    def run_calls(self, column, kind, size, calls):
        self.asked.add((column, kind, size))
        self.counts.add(calls)


@pytest.fixture
def fake_c(monkeypatch):
    fake = FakeC(missing={"openssl": "absent here"})
    monkeypatch.setattr(capi, "c_loops", fake)
    return fake


# ---- one set of rows, one timing, one table -------------------------------------

def test_rows_are_the_reports(fake_c):
    result = capi.measure_c_api(ROWS, 0.0005)
    assert [(r["id"], r["label"], r["size"]) for r in result["rows"]] == [
        (r.id, r.name, r.size) for r in ROWS]
    assert result["columns"] == COLUMNS
    assert result["skipped"] == {"openssl": "absent here"}
    for row in result["rows"]:
        assert list(row["mbps"]) == result["columns"]
        assert row["mbps"]["openssl"] is None
        assert all(type(v) is float and v > 0 for c, v in row["mbps"].items()
                   if c != "openssl")


def test_calls_are_the_rows_in_unrolled_trips(fake_c):
    rows = select_rows("arc4random,buf16,fill4k")
    capi.measure_c_api(rows, 0.0005)
    # a fill is arc4random_buf() at the C level; no call to a skipped column
    assert fake_c.asked == {(c, kind, size)
                            for c in ("arc4py", "libc", "libbsd")
                            for kind, size in (("u32", 4), ("buf", 16),
                                               ("buf", 4096))}
    # counted in timing.py's trips of UNROLL calls
    assert all(n > 0 and n % UNROLL == 0 for n in fake_c.counts)


@pytest.mark.parametrize("args, error", [
    (("nosuch", "u32", 4, 8), ValueError),
    (("arc4py", "u32", 16, 8), ValueError),
    (("arc4py", "bits", 4, 8), ValueError),
    (("arc4py", "buf", 16, 0), ValueError),
    (("arc4py", "buf", -1, 8), ValueError),
    ((1, "buf", 16, 8), TypeError),
])
def test_c_loops_refuse_bad_arguments(args, error):
    with pytest.raises(error):
        capi.c_loops.run_calls(*args)


# ---- the real C loops, briefly ---------------------------------------------------

def test_real_c_loops_shape():
    rep = capi.measure_c_api(ROWS, 0.005)
    assert set(rep) == {"columns", "rows", "skipped"}
    assert rep["columns"] == COLUMNS
    assert [(r["id"], r["label"], r["size"]) for r in rep["rows"]] == [
        (r.id, r.name, r.size) for r in ROWS]
    for col, why in rep["skipped"].items():
        assert col in rep["columns"] and isinstance(why, str) and why
    if sys.platform.startswith("linux"):
        assert "arc4py" not in rep["skipped"]
    for row in rep["rows"]:
        assert list(row["mbps"]) == rep["columns"]
        for col, v in row["mbps"].items():
            if col in rep["skipped"]:
                assert v is None
                assert col not in row["spread"] and col not in row["unstable"]
            else:
                assert type(v) is float and v > 0
                # each figure's spread over its rounds, as the Python rows'
                assert type(row["spread"][col]) is float and row["spread"][col] >= 0
                assert row["unstable"][col] == (row["spread"][col] > UNSTABLE_SPREAD)


def c_table(stdout):
    """The C-API table's lines: the report's last."""
    lines = stdout.splitlines()
    return lines[next(i for i, line in enumerate(lines)
                      if line.startswith("C API, MB/s")):]


def test_json_and_table_agree():
    as_json, as_text = bench(*SHORT, "--json"), bench(*SHORT)
    assert as_json.returncode == 0, as_json.stderr
    assert as_text.returncode == 0, as_text.stderr
    c_api = json.loads(as_json.stdout)["c_api"]
    assert [r["id"] for r in c_api["rows"]] == ["arc4random", "fill4k"]
    assert c_api["columns"] == COLUMNS
    table = c_table(as_text.stdout)
    assert table[0].startswith("C API, MB/s from C calls")
    assert ("vs libbsd" in table[0]) == ("libbsd" not in c_api["skipped"])
    assert table[1].split() == ["request", *COLUMNS]
    assert [line.split()[0] for line in table[3:5]] == ["arc4random", "fill"]
    for name in c_api["skipped"]:
        assert any(line.startswith(f"* {name}: skipped: ") for line in table)


# ---- a reader that goes away ----------------------------------------------------

@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_closed_pipe_ends_quietly(fmt, tmp_path):
    status, err = run_to_closed_pipe([*BENCH, *SHORT, *fmt], cwd=tmp_path)
    assert status == 0, err
    assert without_bench_progress(err) == b"", err
