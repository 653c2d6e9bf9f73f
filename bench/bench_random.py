"""Every public method of ``random.Random``: arc4py.Random beside the
stdlib's Mersenne Twister (``random.Random``) and ``random.SystemRandom``.

    python bench/bench_random.py [--rounds N] [--duration S] [--only NAME,...]

The three classes are timed interleaved (MT, arc4py, SystemRandom, MT, ...)
over many short rounds, because the machine is shared and noisy.  Each
figure is the median ns per call over the rounds with its spread (as
``arc4py bench`` gives it: the scaled median absolute deviation over the
median); a figure whose spread passes 10 % is marked unstable ("!").
The ratio is MT's median over arc4py's: above 1.00 arc4py is faster.
Each method is called on a local instance ``r`` (``r.randint(1, 6)``).
A second table times the module functions as a program calls them,
``random.randint(1, 6)`` with ``random`` the stdlib's module or
``import arc4py as random`` (``--only module`` for it alone).
A last table times ``arc4py.uuid4()`` beside ``uuid.uuid4()`` (and
``uuid7()``, from Python 3.14) the same way (``--only uuid`` for it alone).
"""
import argparse
import math
import random
import sys
import uuid

import arc4py
from arc4py.bench.report import fmt_spread
from arc4py.bench.timing import UNSTABLE_SPREAD, interleaved, loop_of, summarize

# (label, call): the call is a method of ``r`` with its arguments.
CALLS = [
    ("random()", "r.random()"),
    ("getrandbits(32)", "r.getrandbits(32)"),
    ("getrandbits(64)", "r.getrandbits(64)"),
    ("getrandbits(256)", "r.getrandbits(256)"),
    ("randbytes(16)", "r.randbytes(16)"),
    ("randrange(10**6)", "r.randrange(1000000)"),
    ("randrange(2**80)", "r.randrange(1208925819614629174706176)"),
    ("randrange(0, 100, 3)", "r.randrange(0, 100, 3)"),
    ("randint(1, 6)", "r.randint(1, 6)"),
    ("choice(list10)", "r.choice(seq)"),
    ("choices(list10, k=10)", "r.choices(seq, k=10)"),
    ("choices(list10, w, k=10)", "r.choices(seq, weights, k=10)"),
    ("choices(list10, cum_w, k=10)", "r.choices(seq, cum_weights=cum, k=10)"),
    ("sample(range100, 5)", "r.sample(pop, 5)"),
    ("shuffle(list100)", "r.shuffle(deck)"),
    ("uniform(1, 2)", "r.uniform(1.0, 2.0)"),
    ("triangular()", "r.triangular()"),
    ("triangular(0, 10, 2)", "r.triangular(0.0, 10.0, 2.0)"),
    ("normalvariate()", "r.normalvariate(0.0, 1.0)"),
    ("gauss()", "r.gauss(0.0, 1.0)"),
    ("lognormvariate()", "r.lognormvariate(0.0, 1.0)"),
    ("expovariate(1)", "r.expovariate(1.0)"),
    ("vonmisesvariate()", "r.vonmisesvariate(1.0, 2.0)"),
    ("gammavariate(0.5)", "r.gammavariate(0.5, 1.0)"),
    ("gammavariate(1)", "r.gammavariate(1.0, 1.0)"),
    ("gammavariate(3)", "r.gammavariate(3.0, 1.0)"),
    ("betavariate(2, 3)", "r.betavariate(2.0, 3.0)"),
    ("paretovariate(2)", "r.paretovariate(2.0)"),
    ("weibullvariate(1, 2)", "r.weibullvariate(1.0, 2.0)"),
]
if sys.version_info >= (3, 12):
    CALLS += [("binomialvariate(10)", "r.binomialvariate(10, 0.5)"),
              ("binomialvariate(100)", "r.binomialvariate(100, 0.3)")]

CLASSES = [("random.Random", random.Random), ("arc4py.Random", arc4py.Random),
           ("SystemRandom", random.SystemRandom)]


def setup_for(cls):
    return {"r": cls(), "seq": list(range(10)), "pop": range(100),
            "deck": list(range(100)), "weights": [0.5, 1.0, 2.5, 4.0, 1.5] * 2,
            "cum": [0.5, 1.5, 4.0, 8.0, 9.5, 10.0, 11.0, 13.5, 17.5, 19.0]}


# (label, the stdlib's call, arc4py's): the uuid functions, outside the
# class table (uuid.uuid7 is new in Python 3.14).
UUID_CALLS = [("uuid4()", "uuid.uuid4()", "arc4py.uuid4()")]
if hasattr(uuid, "uuid7"):
    UUID_CALLS.append(("uuid7()", "uuid.uuid7()", "arc4py.uuid7()"))


def uuid_table(rounds, seconds):
    """The uuid rows: the stdlib's and arc4py's, timed interleaved."""
    print(f"\n{'uuid':<24}{'uuid module':>20}{'arc4py':>20}{'uuid / arc4py':>15}")
    for label, theirs, ours in UUID_CALLS:
        jobs = {which: (lambda e=expr: (loop_of(e, (), globals()), ()))
                for which, expr in (("uuid", theirs), ("arc4py", ours))}
        rates = interleaved(jobs, rounds, seconds)
        times = {which: [1e9 / r for r in v] for which, v in rates.items()}
        ratio = (summarize(times["uuid"])["median"]
                 / summarize(times["arc4py"])["median"])
        print(f"{label:<24}{figure(times['uuid']):>20}"
              f"{figure(times['arc4py']):>20}{ratio:14.2f}x")


# The module functions as a program calls them, ``random.<name>(...)``
# with ``random`` the stdlib's module or ``import arc4py as random``: a
# global and a module attribute looked up per call (the class table above
# calls a local instance's methods).
MODULE_CALLS = [("random()", "random.random()"),
                ("randint(1, 6)", "random.randint(1, 6)"),
                ("choice(list10)", "random.choice(seq)"),
                ("shuffle(list100)", "random.shuffle(deck)"),
                ("uniform(1, 2)", "random.uniform(1.0, 2.0)"),
                ("gauss()", "random.gauss(0.0, 1.0)")]


def module_table(rounds, seconds):
    """The module functions through each module, timed interleaved."""
    print(f"\n{'module function':<24}{'random':>20}{'arc4py as random':>20}"
          f"{'random / arc4py':>17}")
    names = {"seq": list(range(10)), "deck": list(range(100))}
    for label, expr in MODULE_CALLS:
        jobs = {which: (lambda m=module, e=expr: (
                    loop_of(e, tuple(names), {"random": m}),
                    tuple(names.values())))
                for which, module in (("random", random), ("arc4py", arc4py))}
        rates = interleaved(jobs, rounds, seconds)
        times = {which: [1e9 / r for r in v] for which, v in rates.items()}
        ratio = (summarize(times["random"])["median"]
                 / summarize(times["arc4py"])["median"])
        print(f"{label:<24}{figure(times['random']):>20}"
              f"{figure(times['arc4py']):>20}{ratio:16.2f}x")


def job(call, cls):
    """A timing job (arc4py/bench/timing.py): ``call`` with setup_for(cls)'s names
    as the loop's arguments and this module's names as its globals."""
    names = setup_for(cls)
    loop = loop_of(call, tuple(names), globals())
    return lambda: (loop, tuple(names.values()))


def measure(call, rounds, seconds):
    """{class name: [ns per call of each interleaved round]}."""
    rates = interleaved({name: job(call, cls) for name, cls in CLASSES},
                        rounds, seconds)
    return {name: [1e9 / r for r in v] for name, v in rates.items()}


def figure(values):
    stats = summarize(values)
    return (f"{stats['median']:8.1f} "
            f"{fmt_spread(stats['spread'], stats['unstable']):>5}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--duration", type=float, default=0.0005,
                        help="seconds per round and class (default 0.0005: "
                             "short rounds dodge a busy machine's pauses)")
    parser.add_argument("--only", help="comma-separated labels (prefixes)")
    args = parser.parse_args(argv)
    if args.rounds < 4 or not args.duration > 0:
        parser.error("--rounds must be >= 4 and --duration > 0")
    chosen, with_uuid, with_module = CALLS, True, True
    if args.only:
        wanted = [w.strip() for w in args.only.split(",")]
        chosen = [c for c in CALLS if any(c[0].startswith(w) for w in wanted)]
        with_uuid = any("uuid".startswith(w) for w in wanted)
        with_module = any("module".startswith(w) for w in wanted)
        if not chosen and not with_uuid and not with_module:
            parser.error(f"no call matches {args.only!r}")

    print(f"Python {sys.version.split()[0]}, arc4py {arc4py.__version__} "
          f"(core {arc4py.backend()}); ns per call, median of {args.rounds} "
          f"interleaved rounds of {args.duration:g} s, ± spread "
          f"(!: above {UNSTABLE_SPREAD:.0%})")
    head = f"{'method':<24}" + "".join(f"{n:>20}" for n, _ in CLASSES)
    print(head + f"{'MT / arc4py':>13}")
    print("-" * len(head + " " * 13))
    ratios = []
    for label, call in chosen:
        t = measure(call, args.rounds, args.duration)
        ratio = (summarize(t["random.Random"])["median"]
                 / summarize(t["arc4py.Random"])["median"])
        ratios.append(ratio)
        print(f"{label:<24}" + "".join(f"{figure(t[n]):>20}" for n, _ in CLASSES)
              + f"{ratio:12.2f}x")
    if ratios:
        print(f"\nslowest ratio {min(ratios):.2f}x, geometric mean "
              f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x "
              f"(above 1.00: arc4py.Random is faster than the Mersenne Twister)")
    if with_module:
        module_table(args.rounds, args.duration)
    if with_uuid:
        uuid_table(args.rounds, args.duration)


if __name__ == "__main__":
    main()
