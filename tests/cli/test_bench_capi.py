"""``python -m arc4py._bench_capi``, the C-API table alone, beside ``arc4py
bench --c-api``: one set of rows (cli/sources.py), one way of timing them
(cli/timing.py), one table (cli/report.py).

The children run the real C loops with a few milliseconds per figure; the
checks are on the shape of what they print, never on a figure.  In process,
a fake C module stands in for arc4py._bench_capi_c: the calls it is asked
for, not timings.
"""
import json
import os
import re

import pytest

from arc4py import _bench_capi
from arc4py.cli import main as cli_main, report
from arc4py.cli.bench import select_rows
from arc4py.cli.sources import ROWS
from arc4py.cli.timing import UNROLL
from helpers import child_env, run_child, run_python, start_python

#: The two entry points to the C-API table, with their arguments.
ENTRY_POINTS = {
    "module": ["-m", "arc4py._bench_capi"],
    "bench": ["-m", "arc4py", "bench", "--c-api", "--threads", "1"],
}
SHORT = ["--rows", "arc4random,fill4k", "--duration", "0.005"]


def child(entry, *args, **kwargs):
    """Run one entry point in a child interpreter (text output)."""
    return run_python([*ENTRY_POINTS[entry], *SHORT, *args],
                      env=child_env(ARC4PY_BACKEND=None), **kwargs)


class FakeC:
    """Stands in for arc4py._bench_capi_c: records what it is asked to run
    and runs nothing."""

    def __init__(self, missing=None):
        self.missing_ = dict(missing or {})
        self.asked = set()      # (column, kind, size)
        self.counts = set()     # call counts

    def columns(self):
        return _bench_capi.COLUMNS

    def missing(self, column):
        return self.missing_.get(column)

    def time_calls(self, column, kind, size, calls):
        self.asked.add((column, kind, size))
        self.counts.add(calls)
        return 0.0


@pytest.fixture
def fake_c(monkeypatch):
    fake = FakeC(missing={"openssl": "absent here"})
    monkeypatch.setattr(_bench_capi, "_c_module", lambda: (fake, None))
    return fake


# ---- --help and bad usage -----------------------------------------------------

def test_help_prints_usage():
    proc = run_python(["-m", "arc4py._bench_capi", "--help"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m arc4py._bench_capi")
    assert "--rows" in proc.stdout and "--json" in proc.stdout
    assert "C API, MB/s" not in proc.stdout      # no table
    assert proc.stderr == ""


def test_help_loads_no_c_loops():
    proc = run_child("""
        import runpy, sys
        sys.argv = ["_bench_capi", "--help"]
        try:
            runpy.run_module("arc4py._bench_capi", run_name="__main__")
        except SystemExit as exc:
            code = exc.code
        sys.stderr.write(repr((code, "arc4py._bench_capi_c" in sys.modules)))
    """, timeout=60)
    assert proc.stderr == "(0, False)"


def test_help_in_process_measures_nothing(monkeypatch, capsys):
    def measure_c_api(**kwargs):
        raise AssertionError("--help measured")

    monkeypatch.setattr(_bench_capi, "measure_c_api", measure_c_api)
    assert _bench_capi.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage:")


@pytest.mark.parametrize("opt", [["--bogus"], ["--rows", "nosuchrow"],
                                 ["--duration", "0"], ["--duration", "x"]])
def test_bad_usage_is_one_line_and_status_2(opt, capsys):
    assert _bench_capi.main(opt) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    assert captured.err.startswith("python -m arc4py._bench_capi: error: ")


# ---- a reader that goes away ----------------------------------------------------

@pytest.mark.parametrize("fmt", [[], ["--json"]])
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_closed_pipe_ends_quietly(entry, fmt, tmp_path):
    # the read end is closed before the child writes anything: what
    # `| head -1` leaves, without the race against head's exit
    read, write = os.pipe()
    os.close(read)
    try:
        proc = start_python([*ENTRY_POINTS[entry], *SHORT, *fmt], stdout=write,
                            cwd=tmp_path, env=child_env(ARC4PY_BACKEND=None))
    finally:
        os.close(write)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert err == b""


# ---- one set of rows, one timing, one table -------------------------------------

def test_rows_are_the_reports(fake_c):
    result = _bench_capi.measure_c_api(duration=0.0005)
    assert [(r["id"], r["label"], r["size"]) for r in result["rows"]] == [
        (r.id, r.name, r.size) for r in ROWS]
    assert result["columns"] == list(_bench_capi.COLUMNS)
    assert result["skipped"] == {"openssl": "absent here"}
    for row in result["rows"]:
        assert list(row["mbps"]) == result["columns"]
        assert row["mbps"]["openssl"] is None
        assert all(type(v) is float and v > 0 for c, v in row["mbps"].items()
                   if c != "openssl")


def test_calls_are_the_rows_in_unrolled_trips(fake_c):
    rows = select_rows("arc4random,buf16,fill4k")
    _bench_capi.measure_c_api(rows=rows, duration=0.0005)
    # a fill is arc4random_buf() at the C level; no call to a skipped column
    assert fake_c.asked == {(c, kind, size)
                            for c in ("arc4py", "libc", "libbsd")
                            for kind, size in (("u32", 4), ("buf", 16),
                                               ("buf", 4096))}
    # counted in timing.py's trips of UNROLL calls
    assert all(n > 0 and n % UNROLL == 0 for n in fake_c.counts)


FIXED = {
    "columns": ["arc4py", "libc", "libbsd", "openssl"],
    "rows": [{"id": "arc4random", "label": "arc4random", "size": 4,
              "mbps": {"arc4py": 800.0, "libc": 8.0, "libbsd": 16.0,
                       "openssl": None}},
             {"id": "fill4k", "label": "fill 4 KiB", "size": 4096,
              "mbps": {"arc4py": 3000.0, "libc": 300.0, "libbsd": 500.0,
                       "openssl": None}}],
    "skipped": {"openssl": "absent here"},
}


def test_both_print_the_reports_table(monkeypatch, capsys):
    asked = []

    def measure_c_api(rows=None, duration=None, quick=False):
        asked.append(([r.id for r in rows], duration))
        return json.loads(json.dumps(FIXED))

    monkeypatch.setattr(_bench_capi, "measure_c_api", measure_c_api)
    assert _bench_capi.main(SHORT) == 0
    alone = capsys.readouterr().out.splitlines()
    assert cli_main(["bench", "--c-api", "--threads", "1", *SHORT]) == 0
    in_report = capsys.readouterr().out.splitlines()
    table = report.format_c_api(FIXED)
    assert "vs libbsd" in table[0]
    assert alone[-len(table):] == table == in_report[-len(table):]
    assert asked == [(["arc4random", "fill4k"], 0.005)] * 2


def c_table(stdout):
    """The C-API table's lines, digits and rules made alike."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("C API, MB/s"))
    return [re.sub(r"-+", "-", re.sub(r"\d[\d,.]*", "#", " ".join(line.split())))
            for line in lines[start:]]


def json_shape(c_api):
    return (c_api["columns"], c_api["skipped"],
            [(r["id"], r["label"], r["size"],
              sorted(c for c, v in r["mbps"].items() if v is None))
             for r in c_api["rows"]])


def test_both_entry_points_agree():
    alone, in_report = child("module", "--json"), child("bench", "--json")
    assert alone.returncode == 0, alone.stderr
    assert in_report.returncode == 0, in_report.stderr
    a = json.loads(alone.stdout)
    b = json.loads(in_report.stdout)["c_api"]
    assert json_shape(a) == json_shape(b)
    assert [r["id"] for r in a["rows"]] == ["arc4random", "fill4k"]

    alone, in_report = child("module"), child("bench")
    assert alone.returncode == 0, alone.stderr
    assert in_report.returncode == 0, in_report.stderr
    table = c_table(alone.stdout)
    assert table == c_table(in_report.stdout)
    assert ("vs libbsd" in table[0]) == ("libbsd" not in a["skipped"])
