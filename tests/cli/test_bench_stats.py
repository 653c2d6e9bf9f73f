"""The bench's figures are medians over rounds with a spread, an unstable
figure is flagged (as pyperf flags one), and nothing the bench prints is
an internal target.  The scripts in bench/ run briefly in children; their
figures are not checked, only what they say about them."""
import json
import re

import pytest

from arc4py.bench import report
from arc4py.bench.timing import (
    UNROLL,
    UNSTABLE_SPREAD,
    interleaved,
    loop0,
    loop_of,
    summarize,
    timed,
)
from helpers import REPO, run_python

# What an internal target looks like in output: a bar, a verdict on it, an
# issue number.
TARGET_WORDS = re.compile(r"\bbar\b|\bLOW\b|MISSED|\baim\b|[Ii]ssue \d", re.M)


def test_summarize_median_and_spread():
    s = summarize([10.0, 10.0, 10.0])
    assert s == {"median": 10.0, "spread": 0.0, "rounds": 3, "unstable": False}
    s = summarize([9.9, 10.0, 10.1, 10.0, 1000.0])   # one disturbed round
    assert s["median"] == 10.0 and not s["unstable"]
    s = summarize([5.0, 10.0, 15.0, 20.0])
    assert s["unstable"] and s["spread"] > UNSTABLE_SPREAD
    assert summarize([7.0])["spread"] == 0.0


def test_loops_make_unroll_calls_per_trip():
    calls = []
    loop0(3, lambda: calls.append(1))
    assert len(calls) == 3 * UNROLL
    seen = []
    loop_of("f(x, k=y)", ("f", "x"), {"y": 7})(2, lambda a, k: seen.append((a, k)), 5)
    assert seen == [(5, 7)] * (2 * UNROLL)


def test_a_figure_has_two_rounds_even_when_a_batch_outlasts_it():
    import time
    calls, t0, t1, cpu, rounds = timed(loop0, (lambda: time.sleep(0.001),),
                                       1, 0.0001)
    assert len(rounds) == 2 and calls == 2 * UNROLL and t1 > t0


def test_interleaved_times_every_job_every_round():
    made = []

    def job(key):
        def make():
            made.append(key)
            return loop0, (lambda: None,)
        return make

    rates = interleaved({"a": job("a"), "b": job("b")}, 3, 0.0005)
    assert sorted(made) == ["a", "b"]          # each job made once
    assert {k: len(v) for k, v in rates.items()} == {"a": 3, "b": 3}
    assert all(r > 0 for v in rates.values() for r in v)


def _fake_report(unstable):
    fig = {"source": "arc4py:generic", "row": "buf16", "name": "arc4random_buf(16)",
           "bytes": 16, "threads": 1, "calls": 100, "seconds": 1.0,
           "mb_per_s": 123.4, "calls_per_s": 7.7e6, "rounds": 10,
           "spread": 0.25 if unstable else 0.03, "unstable": unstable}
    return {"arc4py_version": "0", "cpu_model": "cpu", "cpu_count": 1,
            "python_version": "3", "python_implementation": "CPython",
            "backend": "generic", "backends": ["generic"], "duration": 0.5,
            "threads": 1, "rows": [{"id": "buf16", "name": "arc4random_buf(16)",
                                    "bytes": 16}],
            "columns": ["arc4py:generic"], "descriptions": {}, "skipped": {},
            "figures": [fig]}


@pytest.mark.parametrize("unstable", [False, True])
def test_report_shows_spread_and_flags_unstable(unstable):
    text = "\n".join(report.format_report(_fake_report(unstable)))
    assert "median of its rounds" in text
    if unstable:
        assert "123 ±25%!" in text and "! unstable" in text
    else:
        assert "123 ±3%" in text and "unstable" not in text
    assert not TARGET_WORDS.search(text)


def test_bench_json_has_rounds_and_spread():
    r = run_python(["-m", "arc4py", "bench", "--json", "--quick", "--duration",
                    "0.01", "--threads", "2", "--rows", "buf16"],
                   ARC4PY_BACKEND=None)
    assert r.returncode == 0, r.stderr
    for f in json.loads(r.stdout)["figures"]:
        assert f["rounds"] >= 2
        assert f["spread"] >= 0 and isinstance(f["unstable"], bool)


SCRIPTS = {
    "bench_cores.py": ["--rounds", "2", "--duration", "0.002",
                       "--backends", "generic", "--no-openssl"],
    "bench_generator.py": ["--rounds", "2"],
    "bench_numpy.py": ["--repeat", "2", "--no-context"],
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_scripts_print_medians_and_no_targets(script):
    path = REPO / "bench" / script
    if not path.exists():
        pytest.skip("bench/ is not next to the tests")
    if script == "bench_numpy.py":
        pytest.importorskip("numpy")
    r = run_python([path, *SCRIPTS[script]], timeout=300, ARC4PY_BACKEND=None)
    assert r.returncode == 0, r.stderr
    assert "median" in r.stdout and "±" in r.stdout
    assert not TARGET_WORDS.search(r.stdout), r.stdout
