"""arc4py's generator beside its peers, as ratios measured in one run: the
cost of one call against random.getrandbits, small requests against
os.urandom, a 1 MiB fill against OpenSSL's ChaCha20, and fills from one
thread against two.

    python bench/bench_generator.py [--rounds N]

Each comparison is interleaved (A, B, A, B, ...) over many short rounds,
because the machine is shared and noisy: a drift in load hits both sides
alike.  Each side is reported as the median of its rounds with their
spread (median absolute deviation, scaled to a standard deviation), and
flagged '!' (unstable) when that is more than 10% of the median, as pyperf
does.  Not a test: it prints figures.
"""
import argparse
import os
import random
import textwrap
import timeit

import arc4py
from arc4py.cli.report import fmt_spread, unstable_note
from arc4py.cli.timing import MB, batch_target, calibrate, loop1, measure_multi_rounds, summarize


def ns_per_call(stmt, glb, number, setup="pass"):
    """One round: ns per call over ``number`` calls of ``stmt``."""
    t = timeit.timeit(stmt, setup=setup, globals=glb, number=number)
    return t / number * 1e9


def interleaved(pairs, number, rounds):
    """pairs: {label: (stmt, globals[, setup])} -> {label: summary of the
    ns per call of every round} (timing.summarize).  Arguments belong in
    setup (locals of timeit's loop): a global read costs CPython 3.11
    ~6 ns a call, as much as the call being timed."""
    samples = {k: [] for k in pairs}
    for _ in range(rounds):
        for label, (stmt, glb, *setup) in pairs.items():
            samples[label].append(ns_per_call(stmt, glb, number, *setup))
    return {k: summarize(v) for k, v in samples.items()}


def cell(s, unit, scale=1.0):
    """'12.3 ns ±2%' (or '±14%!' when unstable)."""
    return (f"{s['median'] * scale:8.1f} {unit} "
            f"{fmt_spread(s['spread'], s['unstable']):>5}")


def openssl_fill_1mib():
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    except ImportError:
        return None
    zeros = bytes(1 << 20)
    out = bytearray((1 << 20) + 16)
    key, nonce = os.urandom(32), os.urandom(16)

    def run():
        enc = Cipher(algorithms.ChaCha20(key, nonce), None).encryptor()
        enc.update_into(zeros, out)
    return run


def threaded_fill(nthreads, seconds=1.0, size=8 << 20):
    """Aggregate MB/s of ``nthreads`` threads each filling its own
    ``size``-byte buffer (the bench's own timing code), per round."""
    def job():
        return loop1, (arc4py.fill, bytearray(size))

    batch = calibrate(*job(), batch_target(seconds / 5))
    _, _, rates = measure_multi_rounds(job, nthreads, seconds, batch)
    return summarize([r * size / MB for r in rates])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200,
                    help="interleaved rounds per comparison (default 200)")
    args = ap.parse_args()
    print(f"arc4py {arc4py.__version__}, core {arc4py.backend()}; each "
          f"figure: median of {args.rounds} interleaved rounds ± their "
          f"spread")
    unstable = False

    g = random.Random().getrandbits
    calls = interleaved({
        "random.Random().getrandbits(32)": ("g(32)", {"g": g}),
        "arc4py.random_u32()": ("f()", {"f": arc4py.random_u32}),
        "arc4py.arc4random()": ("f()", {"f": arc4py.arc4random}),
    }, 20_000, args.rounds)
    base = calls["random.Random().getrandbits(32)"]["median"]
    print("\nper call:")
    for k, s in calls.items():
        unstable |= s["unstable"]
        print(f"  {k:34s} {cell(s, 'ns')}   "
              f"{s['median'] / base:5.2f}x the time of getrandbits(32)")

    print("\nsmall requests vs os.urandom:")
    for n in (16, 128):
        r = interleaved({
            "urandom": ("f(n)", {"f": os.urandom}, f"n = {n}"),
            "arc4py": ("f(n)", {"f": arc4py.arc4random_buf}, f"n = {n}"),
        }, 20_000, args.rounds)
        unstable |= r["arc4py"]["unstable"] or r["urandom"]["unstable"]
        print(f"  arc4random_buf({n:3d}) {cell(r['arc4py'], 'ns')}, "
              f"os.urandom {cell(r['urandom'], 'ns')}: "
              f"{r['urandom']['median'] / r['arc4py']['median']:5.2f}x faster")

    run_ossl = openssl_fill_1mib()
    buf = bytearray(1 << 20)
    pairs = {"arc4py.fill(1 MiB)": ("f(b)", {"f": arc4py.fill, "buf": buf},
                                    "b = buf")}
    if run_ossl:
        pairs["OpenSSL ChaCha20 1 MiB"] = ("f()", {"f": run_ossl})
    r = interleaved(pairs, 20, args.rounds)
    print("\n1 MiB fill (MB/s from the median time):")
    for k, s in r.items():
        unstable |= s["unstable"]
        print(f"  {k:24s} {(1 << 20) / s['median'] * 1e3:8.0f} MB/s "
              f"{fmt_spread(s['spread'], s['unstable'])}")
    if run_ossl:
        ratio = r["OpenSSL ChaCha20 1 MiB"]["median"] / r["arc4py.fill(1 MiB)"]["median"]
        print(f"  fill / OpenSSL = {ratio:.3f}x")

    one, two = threaded_fill(1), threaded_fill(2)
    unstable |= one["unstable"] or two["unstable"]
    print(f"\n8 MiB fills: 1 thread {cell(one, 'MB/s')}, 2 threads "
          f"{cell(two, 'MB/s')}: {two['median'] / one['median']:.2f}x")
    if unstable:
        print("\n" + textwrap.fill(unstable_note(), 79))


if __name__ == "__main__":
    main()
