"""arc4py's numpy features against numpy's own generators, as ratios.

A script, not a test: ``python bench/bench_numpy.py [--repeat N] [--json]``.
Each pair is measured in the same run, interleaved (ours, theirs, ours, ...),
and the best of N repeats kept for each side, so a noisy shared machine
moves both alike.  A ratio is numpy's time / arc4py's time: above 1.0 means
arc4py is faster.

The three comparisons and their bars:
  random_u32(size=2**20) vs default_rng().integers(0, 2**32, ..., uint32)   >= 1.5x
  BitGenerator().random_raw(2**17) vs PCG64().random_raw(2**17)             >= 1.0x
  Generator(BitGenerator()).random(10**6) vs default_rng().random(10**6)
                                                    within 1.3x (>= 0.77)

Then, for context, ns per value of Generator(X).random(10**6) for every
numpy bit generator X and arc4py's.  numpy's Generator calls the bit
generator's next_double once per value, through a function pointer, with the
generator's state in memory; the lightest of numpy's own (SFC64) shows what
that call costs by itself, whatever the generator.  arc4py's value costs that
call plus 8 bytes of ChaCha20 keystream.
"""
import argparse
import json
import os
import sys
import timeit

import numpy as np

try:
    import arc4py
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import arc4py


def best_of(func, number, repeat):
    """Per-call seconds: the best of ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(func, number=number, repeat=repeat)) / number


def compare(ours, theirs, number, repeat):
    """Interleave the two so drifts in machine load hit both alike."""
    ours(), theirs()  # warm up: first-use costs, page faults
    t_ours, t_theirs = [], []
    for _ in range(repeat):
        t_ours.append(best_of(ours, number, 1))
        t_theirs.append(best_of(theirs, number, 1))
    return min(t_ours), min(t_theirs)


def cases():
    n32 = 2 ** 20
    rng = np.random.default_rng()
    yield ("random_u32(size=2**20) vs Generator.integers(uint32)", 1.5,
           lambda: arc4py.random_u32(size=n32),
           lambda: rng.integers(0, 2 ** 32, size=n32, dtype=np.uint32), 20)

    bg = arc4py.BitGenerator()
    pcg = np.random.PCG64()
    nraw = 2 ** 17
    yield ("BitGenerator().random_raw(2**17) vs PCG64().random_raw(2**17)", 1.0,
           lambda: bg.random_raw(nraw), lambda: pcg.random_raw(nraw), 40)

    ours_gen = np.random.Generator(arc4py.BitGenerator())
    theirs_gen = np.random.default_rng()
    nrand = 10 ** 6
    yield ("Generator(BitGenerator()).random(10**6) vs default_rng().random(10**6)",
           1 / 1.3, lambda: ours_gen.random(nrand),
           lambda: theirs_gen.random(nrand), 5)


def per_value_context(repeat):
    """ns per value of Generator(X).random(10**6), best of ``repeat``,
    interleaved over numpy's bit generators and arc4py's."""
    n = 10 ** 6
    gens = [("arc4py.BitGenerator", np.random.Generator(arc4py.BitGenerator()))]
    for name in ("PCG64", "PCG64DXSM", "SFC64", "Philox", "MT19937"):
        gens.append((name, np.random.Generator(getattr(np.random, name)())))
    best = {name: float("inf") for name, _ in gens}
    for _name, g in gens:
        g.random(n)  # warm up
    for _ in range(repeat):
        for name, g in gens:
            best[name] = min(best[name], best_of(lambda g=g: g.random(n), 1, 1))
    return {name: t / n * 1e9 for name, t in best.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15,
                        help="repeats per side; the best is kept (default 15)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--no-context", action="store_true",
                        help="skip the per-value table of numpy's generators")
    args = parser.parse_args(argv)

    results = []
    for name, bar, ours, theirs, number in cases():
        t_ours, t_theirs = compare(ours, theirs, number, args.repeat)
        ratio = t_theirs / t_ours
        results.append({"case": name, "arc4py_s": t_ours, "numpy_s": t_theirs,
                        "ratio": ratio, "bar": bar, "meets_bar": ratio >= bar})

    context = None if args.no_context else per_value_context(args.repeat)

    if args.json:
        print(json.dumps({"backend": arc4py.backend(), "numpy": np.__version__,
                          "results": results,
                          "random_ns_per_value": context}, indent=2))
        return 0
    print(f"arc4py {arc4py.__version__} (core {arc4py.backend()}), "
          f"numpy {np.__version__}; ratio = numpy time / arc4py time")
    for r in results:
        flag = "ok " if r["meets_bar"] else "LOW"
        print(f"  {flag} {r['ratio']:5.2f}x (bar {r['bar']:.2f}x)  "
              f"arc4py {r['arc4py_s'] * 1e3:8.3f} ms  "
              f"numpy {r['numpy_s'] * 1e3:8.3f} ms  {r['case']}")
    if context:
        print("Generator(X).random(10**6), ns per value (one next_double call "
              "each):")
        for name, ns in sorted(context.items(), key=lambda kv: kv[1]):
            print(f"  {ns:6.2f} ns  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
