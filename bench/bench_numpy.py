"""arc4py's numpy features against numpy's own generators, as ratios.

A script, not a test: ``python bench/bench_numpy.py [--repeat N] [--json]``.
Each pair is measured in the same run, interleaved (ours, theirs, ours, ...)
over N rounds, so a noisy shared machine moves both alike.  Each side is
the median of its rounds, with their spread (median absolute deviation,
scaled to a standard deviation; '!' marks a spread above 10% of the
median: unstable, as pyperf flags it).  A ratio is numpy's median time /
arc4py's: above 1.0 means arc4py is faster.

The three comparisons:
  random_u32(size=2**20) vs default_rng().integers(0, 2**32, ..., uint32)
  BitGenerator().random_raw(2**17) vs PCG64().random_raw(2**17)
  Generator(BitGenerator()).random(10**6) vs default_rng().random(10**6)

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
import textwrap

import numpy as np

try:
    import arc4py
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import arc4py

from arc4py.bench.report import fmt_spread, unstable_note
from arc4py.bench.timing import interleaved, loop0, summarize

#: Seconds per round of one side.
ROUND = 0.02


def seconds_per_call(funcs, repeat):
    """{name: func} -> {name: summary (timing.summarize) of the seconds per
    call of ``repeat`` interleaved rounds}: a drift in machine load hits
    every side alike."""
    rates = interleaved({k: (lambda f=f: (loop0, (f,)))
                         for k, f in funcs.items()}, repeat, ROUND)
    return {k: summarize([1 / r for r in v]) for k, v in rates.items()}


def cases():
    n32 = 2 ** 20
    rng = np.random.default_rng()
    yield ("random_u32(size=2**20) vs Generator.integers(uint32)",
           lambda: arc4py.random_u32(size=n32),
           lambda: rng.integers(0, 2 ** 32, size=n32, dtype=np.uint32))

    bg = arc4py.BitGenerator()
    pcg = np.random.PCG64()
    nraw = 2 ** 17
    yield ("BitGenerator().random_raw(2**17) vs PCG64().random_raw(2**17)",
           lambda: bg.random_raw(nraw), lambda: pcg.random_raw(nraw))

    ours_gen = np.random.Generator(arc4py.BitGenerator())
    theirs_gen = np.random.default_rng()
    nrand = 10 ** 6
    yield ("Generator(BitGenerator()).random(10**6) vs default_rng().random(10**6)",
           lambda: ours_gen.random(nrand),
           lambda: theirs_gen.random(nrand))


def per_value_context(repeat):
    """Summaries of the ns per value of Generator(X).random(10**6) over
    ``repeat`` rounds, interleaved over numpy's bit generators and
    arc4py's."""
    n = 10 ** 6
    gens = [("arc4py.BitGenerator", np.random.Generator(arc4py.BitGenerator()))]
    for name in ("PCG64", "PCG64DXSM", "SFC64", "Philox", "MT19937"):
        gens.append((name, np.random.Generator(getattr(np.random, name)())))
    per_call = seconds_per_call({name: (lambda g=g: g.random(n))
                                 for name, g in gens}, repeat)
    return {name: {**s, "median": s["median"] / n * 1e9}
            for name, s in per_call.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15,
                        help="interleaved rounds per side (default 15)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--no-context", action="store_true",
                        help="skip the per-value table of numpy's generators")
    args = parser.parse_args(argv)
    if args.repeat < 2:
        parser.error("--repeat must be >= 2 (a spread needs two rounds)")

    results = []
    for name, ours, theirs in cases():
        both = seconds_per_call({"ours": ours, "theirs": theirs}, args.repeat)
        s_ours, s_theirs = both["ours"], both["theirs"]
        results.append({"case": name, "arc4py_s": s_ours["median"],
                        "numpy_s": s_theirs["median"],
                        "arc4py_spread": s_ours["spread"],
                        "numpy_spread": s_theirs["spread"],
                        "arc4py_unstable": s_ours["unstable"],
                        "numpy_unstable": s_theirs["unstable"],
                        "rounds": args.repeat,
                        "ratio": s_theirs["median"] / s_ours["median"]})

    context = None if args.no_context else per_value_context(args.repeat)

    if args.json:
        print(json.dumps({"backend": arc4py.backend(), "numpy": np.__version__,
                          "results": results,
                          "random_ns_per_value": context}, indent=2))
        return 0
    print(f"arc4py {arc4py.__version__} (core {arc4py.backend()}), "
          f"numpy {np.__version__}; median of {args.repeat} interleaved "
          f"rounds ± their spread; ratio = numpy time / arc4py "
          f"time")
    unstable = False
    for r in results:
        unstable |= r["arc4py_unstable"] or r["numpy_unstable"]
        print(f"  {r['ratio']:5.2f}x  "
              f"arc4py {r['arc4py_s'] * 1e3:8.3f} ms "
              f"{fmt_spread(r['arc4py_spread'], r['arc4py_unstable']):>6}  "
              f"numpy {r['numpy_s'] * 1e3:8.3f} ms "
              f"{fmt_spread(r['numpy_spread'], r['numpy_unstable']):>6}  "
              f"{r['case']}")
    if context:
        print("Generator(X).random(10**6), ns per value (one next_double call "
              "each):")
        for name, s in sorted(context.items(), key=lambda kv: kv[1]["median"]):
            unstable |= s["unstable"]
            print(f"  {s['median']:6.2f} ns "
                  f"{fmt_spread(s['spread'], s['unstable']):>6}  {name}")
    if unstable:
        print(textwrap.fill(unstable_note(), 79))
    return 0


if __name__ == "__main__":
    sys.exit(main())
