"""The per-call bars (issue 13) and the fill bars, as ratios measured in one
run.

    python bench/bench_generator.py [--rounds N]

Each comparison is interleaved (A, B, A, B, ...) over many short rounds and
the best round of each side is kept, because the machine is shared and
noisy: a round a neighbour disturbed is simply not the best one.  Not a
test: it prints figures and says which bars they meet.
"""
import argparse
import os
import random
import timeit

import arc4py
from arc4py.cli.timing import MB, batch_target, calibrate, loop1, measure_multi


def best_ns_per_call(stmt, glb, number, rounds, setup="pass"):
    t = min(timeit.repeat(stmt, setup=setup, globals=glb, number=number,
                          repeat=rounds))
    return t / number * 1e9


def interleaved(pairs, number, rounds):
    """pairs: {label: (stmt, globals[, setup])} -> {label: best ns per
    call}.  Arguments belong in setup (locals of timeit's loop): a global
    read costs CPython 3.11 ~6 ns a call, as much as the call being timed."""
    best = {k: float("inf") for k in pairs}
    for _ in range(rounds):
        for label, (stmt, glb, *setup) in pairs.items():
            best[label] = min(best[label],
                              best_ns_per_call(stmt, glb, number, 1, *setup))
    return best


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


def threaded_fill_mbps(nthreads, seconds=1.0, size=8 << 20):
    """Aggregate MB/s of ``nthreads`` threads each filling its own
    ``size``-byte buffer for ``seconds`` (the bench's own timing code)."""
    def job():
        return loop1, (arc4py.fill, bytearray(size))

    batch = calibrate(*job(), batch_target(seconds))
    calls, elapsed = measure_multi(job, nthreads, seconds, batch)
    return calls * size / elapsed / MB


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200,
                    help="interleaved rounds per comparison (default 200)")
    args = ap.parse_args()
    print(f"arc4py {arc4py.__version__}, core {arc4py.backend()}")

    g = random.Random().getrandbits
    calls = interleaved({
        "random.Random().getrandbits(32)": ("g(32)", {"g": g}),
        "arc4py.random_u32()": ("f()", {"f": arc4py.random_u32}),
        "arc4py.arc4random()": ("f()", {"f": arc4py.arc4random}),
    }, 20_000, args.rounds)
    base = calls["random.Random().getrandbits(32)"]
    print("\nper call (best of rounds):")
    for k, v in calls.items():
        print(f"  {k:34s} {v:7.1f} ns   {v / base:5.2f}x getrandbits")
    print("  bar: random_u32() <= 0.90x")

    print("\nsmall requests vs os.urandom:")
    for n in (16, 128):
        r = interleaved({
            "urandom": ("f(n)", {"f": os.urandom}, f"n = {n}"),
            "arc4py": ("f(n)", {"f": arc4py.arc4random_buf}, f"n = {n}"),
        }, 20_000, args.rounds)
        print(f"  arc4random_buf({n:3d}) {r['arc4py']:7.1f} ns, os.urandom "
              f"{r['urandom']:7.1f} ns: {r['urandom'] / r['arc4py']:5.2f}x faster (bar 12x)")

    run_ossl = openssl_fill_1mib()
    buf = bytearray(1 << 20)
    pairs = {"arc4py.fill(1 MiB)": ("f(b)", {"f": arc4py.fill, "buf": buf},
                                    "b = buf")}
    if run_ossl:
        pairs["OpenSSL ChaCha20 1 MiB"] = ("f()", {"f": run_ossl})
    r = interleaved(pairs, 20, args.rounds)
    print("\n1 MiB fill:")
    for k, v in r.items():
        print(f"  {k:24s} {(1 << 20) / v * 1e3:8.0f} MB/s")
    if run_ossl:
        ratio = r["OpenSSL ChaCha20 1 MiB"] / r["arc4py.fill(1 MiB)"]
        print(f"  fill / OpenSSL = {ratio:.3f}x (bar 0.97x, aim 1.0x)")

    one = max(threaded_fill_mbps(1) for _ in range(3))
    two = max(threaded_fill_mbps(2) for _ in range(3))
    print(f"\n8 MiB fills: 1 thread {one:.0f} MB/s, 2 threads {two:.0f} MB/s: "
          f"{two / one:.2f}x (bar 1.7x)")


if __name__ == "__main__":
    main()
