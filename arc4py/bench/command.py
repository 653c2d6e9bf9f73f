"""``arc4py bench``: the bench-arc4random MB/s report.

Like the C library's bench-arc4random, each figure comes from a timed loop
of calls of one request size (timing.py)::

    MB/s = calls * bytes per call / elapsed seconds      (1 MB = 10**6 bytes)

Rows and columns are in sources.py, tables and the plot in
report.py.  Each row is measured in one thread, then in ``--threads``
threads at once (the sum over all of them).

The generator's core is fixed at import (``ARC4PY_BACKEND``), so another
core is measured by running this same report in a subprocess with
``ARC4PY_BACKEND=<core> ... --json`` and collecting its figures.  Peers for
``--compare`` are measured in the same run.  ``--c-api`` adds the C-level
table of capi.py (arc4py's C API beside libc's and libbsd's arc4random
and OpenSSL's RAND_bytes), where this build has it: the same rows, timed
the same way.  Every output path is checked before anything is measured.

Run it as ``arc4py bench``, ``python -m arc4py bench`` or
``python bench/bench_arc4random.py``.
"""
import os
import sys

from arc4py.bench.sources import PEERS, ROW_IDS, ROWS

#: Default seconds per figure, and the budget --quick spreads over them all.
DEFAULT_DURATION = 0.5
QUICK_BUDGET = 18.0
QUICK_MAX_DURATION = 0.25
#: A report takes about this many times its figures' timed seconds (the
#: calibrations, the threads' start, the peers' set-up): 1.8 to 3.4 on two
#: busy cores, the default report and --compare, --quick or not.
EXPECTED_FACTOR = 2.5
MIN_DURATION = 0.005
#: The most seconds per figure --duration takes: an hour (the whole report
#: has dozens of figures).
MAX_DURATION = 3600.0

HELP = ("the bench-arc4random MB/s report (arc4random, arc4random_buf, "
        "fills; one and many threads; --compare with peers)")

DESCRIPTION = """\
The bench-arc4random report: MB/s of arc4random() and arc4random_buf(16..128)
calls and of 4 KiB / 64 KiB / 1 MiB fills, in one thread and in many, for
arc4py's cores and (with --compare) its peers, measured in the same run.

MB/s = calls x bytes per call / elapsed seconds, with 1 MB = 10**6 bytes.
"""

EPILOG = """\
examples:
  arc4py bench --quick                   the whole report, shorter
  arc4py bench --backend all --compare   every core beside its peers
  arc4py bench --c-api                   also the C API beside libbsd, OpenSSL
  arc4py bench --json > figures.json     every figure, machine-readable
  arc4py bench --plot mbps.png           MB/s against request size
"""


def add_parser(sub):
    """Add the ``bench`` subcommand to the subparsers ``sub``."""
    import argparse
    p = sub.add_parser("bench", help=HELP, description=DESCRIPTION,
                       epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--backend", metavar="NAME|all", default=None,
        help="the core(s) to measure: a name from `arc4py info` or 'all' "
             "(default: the core chosen at import). Cores other than the "
             "current one are measured in a subprocess with ARC4PY_BACKEND "
             "set; each gets a column")
    p.add_argument(
        "--compare", action="store_true",
        help="add columns for os.urandom, secrets.token_bytes, numpy's "
             "default_rng().bytes (if numpy is installed) and the C library's "
             "arc4random/arc4random_buf through ctypes (if it exports them), "
             "measured in the same run, with ratios against os.urandom")
    p.add_argument(
        "--c-api", action="store_true",
        help="also measure the same rows as C calls: arc4py's C API beside "
             "libc's and libbsd's arc4random and OpenSSL's RAND_bytes, loaded "
             "with dlopen (a table with ratios against libbsd, one thread, "
             "the same seconds per figure)")
    p.add_argument(
        "--threads", type=int, metavar="N", default=None,
        help="threads for the multi-thread figures (default: one per CPU, "
             f"here {os.cpu_count() or 1}); 1 leaves them out")
    p.add_argument(
        "--duration", type=float, metavar="SECONDS", default=None,
        help=f"seconds per figure (default {DEFAULT_DURATION}; "
             "--quick picks a smaller one)")
    p.add_argument(
        "--quick", action="store_true",
        help="shorter measurements, whatever else is asked (an explicit "
             "--duration wins): on two cores the report takes about 30 s, "
             "about 80 s with --compare")
    p.add_argument(
        "--rows", metavar="ID[,ID...]", default=None,
        help="measure only these rows: " + ", ".join(ROW_IDS))
    p.add_argument(
        "--json", action="store_true",
        help="print every figure as JSON on stdout instead of the table "
             "(with the CPU model, arc4py version, core and Python version)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--plot", metavar="FILE.png", default=None,
        help="also draw MB/s against request size (log-log, a line per core "
             "and peer) into FILE.png; needs matplotlib "
             "(pip install 'arc4py[plot]')")
    return p


class UsageError(Exception):
    """A bad option: one line on stderr, exit status 2."""


def select_rows(spec):
    """The rows ``--rows`` names (all when ``spec`` is empty); UsageError
    for an unknown one."""
    if not spec:
        return list(ROWS)
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in ROW_IDS]
    if unknown or not wanted:
        raise UsageError(f"--rows: unknown row {', '.join(unknown) or spec!r}; "
                         f"choose from {', '.join(ROW_IDS)}")
    return [r for r in ROWS if r.id in wanted]


def _select_cores(spec):
    import arc4py
    here = arc4py.backends()
    if spec is None:
        return [arc4py.backend()]
    if spec == "all":
        return list(here)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    for name in names:
        if name not in here:
            from arc4py._core import ALL_BACKENDS
            why = ("cannot run on this CPU" if name in ALL_BACKENDS
                   else "is not a core")
            raise UsageError(f"--backend: {name!r} {why}; available here: "
                             f"{', '.join(here)} (or 'all')")
    return names


def _figure(source, row, threads, calls, elapsed, rates):
    """One figure; ``rates`` are its rounds' calls per second.  mb_per_s is
    their median (what the report shows), spread their spread over that
    median (timing.summarize)."""
    from arc4py.bench.timing import mb_per_s, summarize
    stats = summarize(rates)
    return {
        "source": source.key,
        "row": row.id,
        "name": row.name,
        "bytes": row.size,
        "threads": threads,
        "calls": calls,
        "seconds": elapsed,
        "mb_per_s": mb_per_s(stats["median"], row.size),
        "calls_per_s": stats["median"],
        "rounds": stats["rounds"],
        "spread": stats["spread"],
        "unstable": stats["unstable"],
    }


def _measure_in_process(sources, rows, threads, duration, progress):
    from arc4py.bench.timing import measure_multi_rounds, measure_single_rounds
    figures = []
    for row in rows:
        for src in sources:
            def job(src=src, row=row):
                return src.job(row)
            progress.show(f"{src.label}  {row.name}  1 thread")
            calls, elapsed, batch, rates = measure_single_rounds(job, duration)
            figures.append(_figure(src, row, 1, calls, elapsed, rates))
            progress.step()
            if threads > 1:
                progress.show(f"{src.label}  {row.name}  {threads} threads")
                calls, elapsed, rates, _ = measure_multi_rounds(
                    job, threads, duration, batch)
                figures.append(_figure(src, row, threads, calls, elapsed,
                                       rates))
                progress.step()
        progress.finished(row.name)
    return figures


def _measure_in_subprocess(core, rows, threads, duration):
    """Run this report for one core in a child with ARC4PY_BACKEND=core."""
    import json
    import subprocess

    from arc4py.bench.machine import arc4py_home, child_env

    cmd = [sys.executable, "-m", "arc4py", "bench", "--json", "--child",
           "--backend", core, "--threads", str(threads),
           "--duration", repr(duration), "--rows", ",".join(r.id for r in rows)]
    # run where that arc4py lives: `-m` puts the cwd first on sys.path, and
    # a source tree there (without its built extension) would shadow it
    proc = subprocess.run(cmd, env=child_env(ARC4PY_BACKEND=core),
                          cwd=arc4py_home(), capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit status "
                                                     f"{proc.returncode}"]
        raise RuntimeError(f"measuring core {core} in a subprocess failed: "
                           f"{lines[-1]}")
    report = json.loads(proc.stdout)
    return [f for f in report["figures"] if f["source"] == f"arc4py:{core}"]


def collect(cores, compare, rows, threads, duration, child=False):
    """Measure everything; the report as a dict (what --json prints)."""
    import arc4py
    from arc4py.bench.machine import machine_facts
    from arc4py.bench.sources import Arc4pySource, make_peers
    from arc4py.bench.timing import Progress

    current = arc4py.backend()
    peers, skipped = make_peers() if compare else ([], {})
    local = [c for c in cores if c == current]
    remote = [c for c in cores if c != current]
    if remote and child:
        raise UsageError(f"--child: the core is {current}, not "
                         f"{', '.join(remote)}")
    modes = 2 if threads > 1 else 1
    progress = Progress(len(rows) * modes * (len(cores) + len(peers)),
                        lines=not child)
    figures = []
    sources = [Arc4pySource(c) for c in local] + peers
    try:
        for core in remote:
            progress.show(f"arc4py:{core}  (subprocess, "
                          f"ARC4PY_BACKEND={core})")
            try:
                figures += _measure_in_subprocess(core, rows, threads,
                                                  duration)
            except (RuntimeError, ValueError, KeyError) as exc:
                skipped[f"arc4py:{core}"] = str(exc)
            progress.step(len(rows) * modes)
            progress.finished(f"arc4py:{core} (subprocess), every row")
        figures += _measure_in_process(sources, rows, threads, duration,
                                       progress)
    finally:
        progress.close()
    columns = [f"arc4py:{c}" for c in cores
               if f"arc4py:{c}" not in skipped] + [p.key for p in peers]
    descriptions = {f"arc4py:{c}": f"arc4py on the {c} core" for c in cores}
    descriptions.update({p.key: p.description for p in peers})
    report = machine_facts()
    report.update({
        "unit": "MB/s, 1 MB = 10**6 bytes; MB/s = calls * bytes per call / "
                "elapsed seconds",
        "threads": threads,
        "duration": duration,
        "rows": [r.as_dict() for r in rows],
        "columns": columns,
        "descriptions": {k: descriptions[k] for k in columns},
        "skipped": skipped,
        "figures": figures,
    })
    return report


def figure_duration(duration, quick, figures):
    """Seconds per figure: ``duration`` when given (UsageError unless
    > 0 and at most MAX_DURATION), else with ``quick`` the quick budget
    spread over ``figures`` figures, else the default."""
    if duration is not None:
        if not 0 < duration <= MAX_DURATION:  # nan and inf fail too
            raise UsageError(f"--duration must be > 0 and at most "
                             f"{MAX_DURATION:g} seconds, not {duration}")
        return duration
    if not quick:
        return DEFAULT_DURATION
    # calibration costs about a fifth more than the timed part
    return max(MIN_DURATION, min(QUICK_MAX_DURATION,
                                 QUICK_BUDGET / 1.25 / max(figures, 1)))


def _check_plot(path):
    """UsageError unless matplotlib is installed and ``path`` can be
    written: checked before the bench runs, not after."""
    import importlib.util
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--plot: no such folder: {folder}")
    if os.path.isdir(path):
        raise UsageError(f"--plot: {path} is a folder")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise UsageError(f"--plot: cannot write {path}: permission denied")
    try:
        have = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        have = False
    if not have:
        raise UsageError("--plot needs matplotlib, which is not "
                         "installed: pip install 'arc4py[plot]'")


def c_api_bench():
    """The module capi.py; UsageError if this build has no C loops."""
    import importlib
    try:
        return importlib.import_module("arc4py.bench.capi")
    except ImportError as exc:
        raise UsageError(f"--c-api: this build has no C-API bench "
                         f"({exc})") from None


def run(args):
    """``arc4py bench`` with parsed ``args``; the exit status."""
    import json

    from arc4py.bench.report import format_report, plot
    from arc4py.bench.timing import stderr_is_a_terminal
    from arc4py.cli.output import write_stderr, write_stdout

    try:
        rows = select_rows(args.rows)
        cores = _select_cores(args.backend)
        threads = args.threads if args.threads is not None else (
            os.cpu_count() or 1)
        if threads < 1:
            raise UsageError(f"--threads must be >= 1, not {threads}")
        if args.plot:
            _check_plot(args.plot)
        c_api = c_api_bench() if args.c_api else None
        npeers = len(PEERS) if args.compare else 0
        figures = (len(rows) * (2 if threads > 1 else 1)
                   * max(len(cores) + npeers, 1))
        if c_api is not None:
            # the C table's figures, one thread each, share the budget
            figures += len(rows) * len(c_api.c_loops.columns())
        duration = figure_duration(args.duration, args.quick, figures)
        if not (args.child or stderr_is_a_terminal()):
            write_stderr(f"arc4py bench: {figures} figures of {duration:.3g} s "
                         f"each, about {figures * duration * EXPECTED_FACTOR:.0f}"
                         f" s in all; a line on stderr as each row is done\n")
        report = collect(cores, args.compare, rows, threads, duration,
                         child=args.child)
        if c_api is not None:
            try:
                report["c_api"] = c_api.measure_c_api(rows, duration)
            except (OSError, RuntimeError, ValueError) as exc:
                write_stderr(f"arc4py bench: error: --c-api: {exc}\n")
                return 1
    except UsageError as exc:
        write_stderr(f"arc4py bench: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        write_stderr("arc4py bench: interrupted\n")
        return 130

    if args.plot:   # first: a reader that leaves early must not lose it
        try:
            plot(report, args.plot)
        except OSError as exc:
            write_stderr(f"arc4py bench: error: --plot: {exc}\n")
            return 1
    if args.json:
        write_stdout(json.dumps(report, indent=2) + "\n")
    else:
        write_stdout("\n".join(format_report(report)) + "\n")
        if args.plot:
            write_stdout(f"\nplot written to {args.plot}\n")
    return 0
