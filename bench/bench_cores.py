#!/usr/bin/env python3
"""MB/s of each ChaCha20 core beside OpenSSL's ChaCha20, in the same run.

Every core writes raw keystream with
``arc4py.chacha20_keystream_into(key, nonce, buf, backend=name)`` into a
preallocated bytearray; OpenSSL (through the ``cryptography`` package)
encrypts a preallocated buffer of zeros into another with
``encryptor.update_into(zeros, out)``, which is the same keystream.  Nothing
is allocated inside the timed loops.

The machine is shared and noisy, so measurements are interleaved: each
round visits every request size and, within it, every core and OpenSSL in a
rotating order.  A figure is the median over all rounds, shown with their
spread (median absolute deviation, scaled to a standard deviation); '!'
marks one whose spread is more than 10% of its median (unstable, as pyperf
flags it).

MB/s = calls x bytes per call / elapsed seconds, with 1 MB = 10**6 bytes.
At 1 MiB it also prints the ratios avx2/generic, sse2/generic, ssse3/sse2,
avx512/avx2 (where the CPU has AVX-512) and the fastest core's to OpenSSL.

Usage: python bench/bench_cores.py [--quick] [--json]
"""
import argparse
import importlib.util
import json
import platform
import sys
import textwrap
from functools import partial
from pathlib import Path


def _import_arc4py():
    """Prefer a built in-place tree next to this script (python setup.py
    build_ext --inplace), else the installed package."""
    root = Path(__file__).resolve().parent.parent
    if any((root / "arc4py").glob("_core*.so")) or any(
            (root / "arc4py").glob("_core*.pyd")):
        sys.path.insert(0, str(root))
    import arc4py
    return arc4py


arc4py = _import_arc4py()

# The bench's own timing, table and machine code (arc4py/bench/), from the
# tree _import_arc4py() chose: hence below it, not at the top.
from arc4py.bench.machine import cpu_model  # noqa: E402
from arc4py.bench.report import (  # noqa: E402
    fmt_rate,
    fmt_spread,
    size_label,
    table,
    unstable_note,
)
from arc4py.bench.timing import Progress, interleaved, loop0, mb_per_s, summarize  # noqa: E402

SIZES = (64, 256, 1 << 10, 4 << 10, 64 << 10, 1 << 20)

#: (numerator, denominator) of the ratios shown at 1 MiB.
RATIOS = (
    ("avx2", "generic"),
    ("sse2", "generic"),
    ("ssse3", "sse2"),
    ("avx512", "avx2"),
)


def core_call(name, size):
    key = bytes(range(32))
    nonce = bytes(8)
    buf = bytearray(size)
    return partial(arc4py.chacha20_keystream_into, key, nonce, buf,
                   backend=name)


def openssl_call(size):
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    enc = Cipher(algorithms.ChaCha20(bytes(range(32)), bytes(16)),
                 None).encryptor()
    zeros = bytes(size)
    out = bytearray(size)
    return partial(enc.update_into, zeros, out)


def openssl_version():
    try:
        from cryptography.hazmat.backends.openssl.backend import backend
        return backend.openssl_version_text()
    except (ImportError, AttributeError):
        return None


def measure(sources, sizes, rounds, duration):
    """{source: {size: summary of its MB/s over ``rounds`` interleaved
    rounds}} (timing.summarize: median, spread, rounds, unstable)."""
    calls = {(s, n): make(n) for s, make in sources.items() for n in sizes}
    jobs = {key: (lambda f=f: (loop0, (f,))) for key, f in calls.items()}
    progress = Progress(len(jobs) * rounds)
    try:
        rates = interleaved(jobs, rounds, duration, progress)
    finally:
        progress.close()
    return {s: {n: summarize([mb_per_s(r, n) for r in rates[(s, n)]])
                for n in sizes} for s in sources}


def ratios(figures, cores, openssl):
    """The 1 MiB ratios of medians, as dicts with name and value."""
    at = 1 << 20
    out = []
    for num, den in RATIOS:
        if num in cores and den in cores:
            v = figures[num][at]["median"] / figures[den][at]["median"]
            out.append({"name": f"{num}/{den}", "value": v})
    if openssl in figures:
        fastest = max(cores, key=lambda c: figures[c][at]["median"])
        v = figures[fastest][at]["median"] / figures[openssl][at]["median"]
        out.append({"name": f"fastest ({fastest})/OpenSSL", "value": v})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="MB/s = calls x bytes per call / elapsed seconds "
               "(1 MB = 10**6 bytes)")
    p.add_argument("--rounds", type=int, default=15,
                   help="interleaved rounds; a figure is their median "
                        "(default 15)")
    p.add_argument("--duration", type=float, default=0.03,
                   help="seconds per timing (default 0.03)")
    p.add_argument("--quick", action="store_true",
                   help="3 rounds of 0.02 s (a few seconds in all)")
    p.add_argument("--backends", metavar="NAME[,NAME...]",
                   help="cores to measure (default: every core this CPU runs)")
    p.add_argument("--no-openssl", action="store_true",
                   help="leave OpenSSL out")
    p.add_argument("--json", action="store_true",
                   help="print the figures and ratios as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 3, 0.02
    if args.rounds < 2 or not args.duration > 0:
        p.error("--rounds must be >= 2 (a spread needs two) and --duration > 0")

    cores = list(arc4py.backends())
    if args.backends:
        wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
        bad = [b for b in wanted if b not in cores]
        if bad:
            p.error(f"not runnable here: {', '.join(bad)}; "
                    f"available: {', '.join(cores)}")
        cores = wanted
    sources = {c: partial(core_call, c) for c in cores}
    openssl = None
    skipped = None
    if not args.no_openssl:
        if importlib.util.find_spec("cryptography") is not None:
            openssl = "OpenSSL"
            sources[openssl] = openssl_call
        else:
            skipped = ("OpenSSL: skipped: the cryptography package is not "
                       "installed (pip install cryptography)")

    figures = measure(sources, SIZES, args.rounds, args.duration)
    rs = ratios(figures, cores, openssl)
    unstable = any(f["unstable"] for row in figures.values()
                   for f in row.values())

    if args.json:
        print(json.dumps({
            "arc4py_version": arc4py.__version__,
            "cpu_model": cpu_model(),
            "cpu_features": list(arc4py.cpu_features()),
            "python_version": platform.python_version(),
            "openssl_version": openssl_version() if openssl else None,
            "rounds": args.rounds,
            "duration": args.duration,
            "unit": "MB/s, 1 MB = 10**6 bytes; the median of the rounds",
            "sizes": list(SIZES),
            "mb_per_s": {s: {str(n): f["median"] for n, f in row.items()}
                         for s, row in figures.items()},
            "spread": {s: {str(n): f["spread"] for n, f in row.items()}
                       for s, row in figures.items()},
            "unstable": {s: [n for n, f in row.items() if f["unstable"]]
                         for s, row in figures.items()},
            "ratios_at_1MiB": rs,
            "skipped": skipped,
        }, indent=2))
    else:
        cols = list(sources)
        print(f"ChaCha20 keystream, MB/s (1 MB = 10**6 bytes): the median of "
              f"{args.rounds} interleaved rounds of {args.duration:g} s, ± "
              f"their spread")
        print(f"CPU: {cpu_model()}; arc4py {arc4py.__version__}; Python "
              f"{platform.python_version()}"
              + (f"; {openssl_version()}" if openssl else ""))
        print()
        lines = [[size_label(n, "B")] + [
            f"{fmt_rate(figures[c][n]['median'])} "
            f"{fmt_spread(figures[c][n]['spread'], figures[c][n]['unstable'])}"
            for c in cols] for n in SIZES]
        print("\n".join(table(["size"] + cols, lines)))
        if unstable:
            print()
            print(textwrap.fill(unstable_note(), 79))
        print()
        print("ratios at 1 MiB (of the medians):")
        for r in rs:
            print(f"  {r['name']:<28} {r['value']:6.2f}x")
        if "avx512" not in arc4py.backends():
            print("  avx512/avx2: no AVX-512 core on this CPU")
        if skipped:
            print(skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
