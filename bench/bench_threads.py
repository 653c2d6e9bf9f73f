#!/usr/bin/env python3
"""Per-call throughput in 1, 2, ... N threads at once: arc4py beside
random.Random (one shared, one per thread), os.urandom and secrets.

    python bench/bench_threads.py [--threads 1,2,4] [--rounds 5]
                                  [--duration 0.2] [--quick] [--json]
                                  [--only SUBSTRING]

Each figure is the calls of all threads together per second (millions),
the threads started at a barrier and timed from the first start to the
last finish, with each thread's CPU time beside (arc4py/bench/timing.py's
measure_multi_rounds).  Every (row, threads) pair is measured once per
round, rounds interleaved, so that a burst of load elsewhere on the machine
hits every row alike; the table gives the median over the rounds and their
spread (as ``arc4py bench`` gives it), and for each
thread count above one the ratio of its median to the one-thread median
(2.00x: perfect scaling on two cores).  "cpu k/1" is that ratio per CPU
second the threads used: about 1.00 when the threads lose nothing to
what they share (a reference count, a lock, a cache line), and much less
affected than the wall-clock ratio by other programs taking the CPUs
(meaningless on a GIL build, whose waiting threads use no CPU).  The last
row, math.floor of a float each thread made, is the machine's own
reference: a call that shares nothing.

The calls are written the way a program writes them (``arc4py.random_u32()``:
a module attribute, looked up per call; a shared ``Random`` as a module
global ``R``), not through a local alias, because the lookup is part of
what threads share; the rows saying "one shared" or "a local name" hand
the object to the loop as a local, for comparison.  Run it on a
free-threaded build (python3.14t; PYTHON_GIL unset, or 0) to see the
calls scale, and on a GIL build for comparison (there two threads share
one interpreter lock, so about 1.00x is the best possible).
"""
import argparse
import json
import math
import os
import random
import secrets
import statistics
import sys
import sysconfig
import uuid
from pathlib import Path

# Prefer a tree built in place next to this script over an installed arc4py.
_root = Path(__file__).resolve().parent.parent
# (built for this interpreter: a free-threaded one loads only its own)
if (_root / "arc4py" / ("_core" + sysconfig.get_config_var("EXT_SUFFIX"))).exists():
    sys.path.insert(0, str(_root))

import arc4py  # noqa: E402 - after sys.path
from arc4py.bench.report import fmt_spread, table  # noqa: E402
from arc4py.bench.timing import (  # noqa: E402
    Progress,
    batch_target,
    calibrate,
    loop_of,
    measure_multi_rounds,
    summarize,
)

# numpy's BLAS threads would otherwise spin beside the measured ones.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
try:
    import numpy as np
except ImportError:
    np = None


# ---- rows: what each thread calls ----------------------------------------------------
# (label, expression, per-thread setup): the expression is unrolled UNROLL
# times in a loop compiled for the row; the names the setup returns are
# that loop's arguments (made in each measuring thread, so "one per
# thread" objects belong to the thread that uses them), module names are
# its globals.  Shared objects are made once, here.

_SHARED_RANDOM = random.Random()
_SHARED = {}


def _shared(key, make):
    if key not in _SHARED:
        _SHARED[key] = make()
    return _SHARED[key]


def _rows():
    rows = [
        ("arc4py.random_u32()", "arc4py.random_u32()", None),
        ("arc4py.arc4random_buf(16)", "arc4py.arc4random_buf(16)", None),
        ("arc4py.random()", "arc4py.random()", None),
        ("arc4py.Random().random(), one per thread", "rng.random()",
         lambda: {"rng": arc4py.Random()}),
        ("arc4py.Random().getrandbits(32), one per thread",
         "rng.getrandbits(32)",
         lambda: {"rng": arc4py.Random()}),
        ("arc4py.Random().gauss(), one per thread", "rng.gauss(0.0, 1.0)",
         lambda: {"rng": arc4py.Random()}),
        ("arc4py.Random().random(), one shared", "rng.random()",
         lambda: {"rng": _shared("arc4py.Random", arc4py.Random)}),
        ("arc4py.Random().getrandbits(32), one shared", "rng.getrandbits(32)",
         lambda: {"rng": _shared("arc4py.Random", arc4py.Random)}),
        ("arc4py.Random().randint(1, 6), one shared", "rng.randint(1, 6)",
         lambda: {"rng": _shared("arc4py.Random", arc4py.Random)}),
        ("arc4py.randint(1, 6) (the module's shared Random)",
         "arc4py.randint(1, 6)", None),
        ("R.randint(1, 6), R = arc4py.Random() a module global",
         "R.randint(1, 6)", None),
        ("R.random(), R = arc4py.Random() a module global", "R.random()",
         None),
        ("arc4py.uuid4()", "arc4py.uuid4()", None),
        ("arc4py.uniform(0.0, 1.0) (the module's shared Random)",
         "arc4py.uniform(0.0, 1.0)", None),
        ("arc4py.shuffle(x), x a list of 10 per thread", "arc4py.shuffle(x)",
         lambda: {"x": list(range(10))}),
        ("arc4py.randbelow(1000)", "arc4py.randbelow(1000)", None),
        ("arc4py.randbelow(n), n made per thread", "arc4py.randbelow(n)",
         lambda: {"n": int("1000")}),
        ("arc4py.randbelow(n), one shared n", "arc4py.randbelow(n)",
         lambda: {"n": _shared("n", lambda: int("1000"))}),
        ("arc4py.token_bytes(16)", "arc4py.token_bytes(16)", None),
        ("random_u32, a local name", "f()",
         lambda: {"f": arc4py.random_u32}),
    ]
    if np is not None:
        rows += [
            ("Generator(BitGenerator()).random(), one per thread",
             "g.random()",
             lambda: {"g": np.random.Generator(arc4py.BitGenerator())}),
            ("Generator(BitGenerator()).random(), one shared", "g.random()",
             lambda: {"g": _shared("Generator", lambda: np.random.Generator(
                 arc4py.BitGenerator()))}),
        ]
    rows += [
        ("random.Random().random(), one per thread", "rng.random()",
         lambda: {"rng": random.Random()}),
        ("random.Random().random(), one shared", "rng.random()",
         lambda: {"rng": _SHARED_RANDOM}),
        ("random.Random().getrandbits(32), one shared", "rng.getrandbits(32)",
         lambda: {"rng": _SHARED_RANDOM}),
        ("random.Random().randint(1, 6), one shared", "rng.randint(1, 6)",
         lambda: {"rng": _SHARED_RANDOM}),
        ("STD_R.randint(1, 6), STD_R = random.Random() a module global",
         "STD_R.randint(1, 6)", None),
        ("uuid.uuid4()", "uuid.uuid4()", None),
        ("random.random() (the module's shared one)", "random.random()", None),
        ("random.randint(1, 6) (the module's shared one)",
         "random.randint(1, 6)", None),
        ("random.shuffle(x), x a list of 10 per thread", "random.shuffle(x)",
         lambda: {"x": list(range(10))}),
        ("os.urandom(16)", "os.urandom(16)", None),
        ("secrets.token_bytes(16)", "secrets.token_bytes(16)", None),
        ("secrets.randbelow(1000)", "secrets.randbelow(1000)", None),
        # x made in each thread: a float constant in the loop's code would
        # be one object all threads pass (and take references on).
        ("reference: math.floor(x)", "math.floor(x)",
         lambda: {"x": float("1.5")}),
    ]
    return rows


# Shared objects as programs share them: a module global each thread
# reaches by name (R, STD_R), beside the rows above that hand a shared
# object to the loop as a local.
_GLOBALS = {"arc4py": arc4py, "random": random, "os": os,
            "secrets": secrets, "math": math, "uuid": uuid,
            "R": arc4py.Random(), "STD_R": random.Random()}


def _job(expr, setup):
    """A timing job: called in each thread, (loop, args), the loop compiled
    there (one function per thread: nothing shared but expr's)."""
    names = sorted(setup().keys()) if setup else []

    def job():
        env = setup() if setup else {}
        return loop_of(expr, names, _GLOBALS), tuple(env[n] for n in names)

    return job


# ---- measuring -----------------------------------------------------------------------

def measure(rows, counts, rounds, duration, progress):
    """{label: {threads: [(Mcalls per wall second, Mcalls per CPU second)
    per round]}}, rounds interleaved."""
    jobs, batches = {}, {}
    for label, expr, setup in rows:
        jobs[label] = _job(expr, setup)
        batches[label] = calibrate(*jobs[label](), batch_target(duration))
    rates = {label: {k: [] for k in counts} for label in jobs}
    for r in range(rounds):
        for label, job in jobs.items():
            for k in counts:
                progress.show(f"round {r + 1}/{rounds}  {label}  "
                              f"{k} thread(s)")
                _, _, wall, cpu = measure_multi_rounds(
                    job, k, duration, batches[label], rounds=1)
                rates[label][k].append((wall[0] / 1e6, cpu[0] / 1e6))
                progress.step()
    return rates


def report(rates, counts, meta):
    more = [k for k in counts if k != 1]
    header = (["calls"] + [f"{k} thr Mcalls/s" for k in counts]
              + [f"{k}/1" for k in more] + [f"cpu {k}/1" for k in more])
    lines = []
    for label, by_k in rates.items():
        wall = {k: summarize([w for w, _ in v]) for k, v in by_k.items()}
        cpu = {k: statistics.median(c for _, c in v) for k, v in by_k.items()}
        med = {k: s["median"] for k, s in wall.items()}
        cells = [label] + [f"{s['median']:.2f} "
                           f"{fmt_spread(s['spread'], s['unstable'])}"
                           for s in wall.values()]
        cells += [f"{med[k] / med[1]:.2f}x" if med[1] else "-" for k in more]
        cells += [f"{cpu[k] / cpu[1]:.2f}" if cpu[1] else "-" for k in more]
        lines.append(cells)
    out = [f"{meta['python']} ({meta['build']}; GIL "
           f"{'on' if meta['gil'] else 'off'}), {meta['cpus']} CPUs, "
           f"load average {meta['load_before']} before, "
           f"{meta['load_after']} after",
           f"medians of {meta['rounds']} interleaved rounds of "
           f"{meta['duration']} s; ±: the rounds' spread (median absolute "
           "deviation, scaled to a standard deviation, over the median); "
           "k/1: k threads' calls per second over one thread's; cpu k/1: "
           "the same per CPU second used (about 1.00: nothing lost to "
           "sharing; meaningless with a GIL)", ""]
    return out + table(header, lines)


def _load():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "?"


def build_parser():
    p = argparse.ArgumentParser(
        prog="bench_threads.py",
        description="per-call throughput in 1..N threads: arc4py beside "
                    "random.Random, os.urandom and secrets")
    p.add_argument("--threads", default=None, metavar="1,2,...",
                   help="thread counts (default: 1 up to one per CPU, "
                        "doubling, and the CPU count)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=float, default=0.2,
                   help="seconds per figure (default 0.2)")
    p.add_argument("--quick", action="store_true",
                   help="3 rounds of 0.05 s (a smoke run)")
    p.add_argument("--only", metavar="SUBSTRING", default=None,
                   help="only the rows whose label contains SUBSTRING (or "
                        "one of several, comma-separated)")
    p.add_argument("--json", action="store_true",
                   help="print the figures as JSON instead of a table")
    return p


def _counts(text):
    if text:
        counts = sorted({int(x) for x in text.split(",")})
        if counts[0] < 1:
            raise SystemExit("bench_threads.py: thread counts must be >= 1")
    else:
        cpus = os.cpu_count() or 1
        counts, k = [], 1
        while k < cpus:
            counts.append(k)
            k *= 2
        counts.append(cpus)
    return counts if 1 in counts else [1] + counts


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 3, 0.05
    counts = _counts(args.threads)
    wanted = None if args.only is None else args.only.split(",")
    rows = [r for r in _rows() if wanted is None or any(w in r[0] for w in wanted)]
    if not rows:
        raise SystemExit(f"bench_threads.py: no row matches {args.only!r}")
    progress = Progress(len(rows) * len(counts) * args.rounds)
    meta = {"python": sys.version.split()[0],
            "build": "free-threaded" if sysconfig.get_config_var(
                "Py_GIL_DISABLED") else "GIL build",
            "cpus": os.cpu_count(), "rounds": args.rounds,
            "duration": args.duration, "threads": counts,
            "load_before": _load()}
    try:
        rates = measure(rows, counts, args.rounds, args.duration, progress)
    finally:
        progress.close()
    meta["load_after"] = _load()
    meta["gil"] = getattr(sys, "_is_gil_enabled", lambda: True)()
    if args.json:
        print(json.dumps({"meta": meta, "rates": {
            label: {str(k): v for k, v in by_k.items()}
            for label, by_k in rates.items()}}))
    else:
        print("\n".join(report(rates, counts, meta)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
