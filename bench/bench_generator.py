"""arc4py's generator beside its peers, as ratios measured in one run: the
cost of one call against random.getrandbits (each as a program writes it,
``arc4py.random_u32()``, and through a name bound once, ``f()``), the
module functions as ``import arc4py as random`` gives them beside the
stdlib's, small requests against
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

import arc4py
from arc4py.bench.report import fmt_spread, unstable_note
from arc4py.bench.timing import (
    batch_target,
    calibrate,
    interleaved,
    loop0,
    loop1,
    loop2,
    loop_of,
    mb_per_s,
    measure_multi_rounds,
    summarize,
)

#: Seconds per round of one call.
ROUND = 0.002


def ns_per_call(jobs, rounds, target=ROUND):
    """{label: job} -> {label: summary of the ns per call of every
    interleaved round} (timing.interleaved, timing.summarize)."""
    return {k: summarize([1e9 / r for r in v])
            for k, v in interleaved(jobs, rounds, target).items()}


def cell(s, unit, scale=1.0):
    """'12.3 ns ±2%' (or '±14%!' when unstable)."""
    return (f"{s['median'] * scale:8.1f} {unit} "
            f"{fmt_spread(s['spread'], s['unstable']):>5}")


def as_written(expr, **modules):
    """A timing job's (loop, args) for ``expr`` as a program writes it: its
    names (``arc4py`` unless given) are globals of the loop, looked up on
    every call."""
    return loop_of(expr, (), modules or {"arc4py": arc4py}), ()


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
    rates = measure_multi_rounds(job, nthreads, seconds, batch)[2]
    return summarize([mb_per_s(r, size) for r in rates])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200,
                    help="interleaved rounds per comparison (default 200)")
    args = ap.parse_args()
    print(f"arc4py {arc4py.__version__}, core {arc4py.backend()}; each "
          f"figure: median of {args.rounds} interleaved rounds ± their "
          f"spread")
    unstable = False

    # Each call in two forms: as a program writes it (a module attribute
    # looked up per call) and through a name bound once (a loop argument).
    g = random.Random().getrandbits
    calls = ns_per_call({
        "random.Random().getrandbits(32)": lambda: (loop1, (g, 32)),
        "arc4py.random_u32()": lambda: as_written("arc4py.random_u32()"),
        "f() (f = arc4py.random_u32)": lambda: (loop0, (arc4py.random_u32,)),
        "arc4py.arc4random()": lambda: as_written("arc4py.arc4random()"),
        "f() (f = arc4py.arc4random)": lambda: (loop0, (arc4py.arc4random,)),
    }, args.rounds)
    base = calls["random.Random().getrandbits(32)"]["median"]
    print("\nper call (g = random.Random().getrandbits and f: a name bound "
          "once; arc4py.<name>(): as a program writes it):")
    for k, s in calls.items():
        unstable |= s["unstable"]
        print(f"  {k:34s} {cell(s, 'ns')}   "
              f"{s['median'] / base:5.2f}x g(32)")

    # `import arc4py as random`: the module functions through the module.
    calls = ns_per_call({
        "random.randint(1, 6), the stdlib's": lambda: (
            loop_of("random.randint(1, 6)", (), {"random": random}), ()),
        "random.randint(1, 6), arc4py as random": lambda: as_written(
            "random.randint(1, 6)", random=arc4py),
        "f(1, 6) (f = arc4py.randint)": lambda: (loop2, (arc4py.randint, 1, 6)),
    }, args.rounds)
    base = calls["random.randint(1, 6), the stdlib's"]["median"]
    print("\nmodule functions (import arc4py as random):")
    for k, s in calls.items():
        unstable |= s["unstable"]
        print(f"  {k:40s} {cell(s, 'ns')}   "
              f"{s['median'] / base:5.2f}x the stdlib's")

    print("\nsmall requests vs os.urandom:")
    for n in (16, 128):
        r = ns_per_call({
            "urandom": lambda n=n: (loop1, (os.urandom, n)),
            "arc4py": lambda n=n: (loop1, (arc4py.arc4random_buf, n)),
        }, args.rounds)
        unstable |= r["arc4py"]["unstable"] or r["urandom"]["unstable"]
        print(f"  arc4random_buf({n:3d}) {cell(r['arc4py'], 'ns')}, "
              f"os.urandom {cell(r['urandom'], 'ns')}: "
              f"{r['urandom']['median'] / r['arc4py']['median']:5.2f}x faster")

    run_ossl = openssl_fill_1mib()
    buf = bytearray(1 << 20)
    jobs = {"arc4py.fill(1 MiB)": lambda: (loop1, (arc4py.fill, buf))}
    if run_ossl:
        jobs["OpenSSL ChaCha20 1 MiB"] = lambda: (loop0, (run_ossl,))
    r = ns_per_call(jobs, args.rounds, target=0.01)
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
