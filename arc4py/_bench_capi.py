"""The C-level rows of ``arc4py bench --c-api``.

The rows of the Python report (arc4py/cli/sources.py), each made as C calls
in a compiled loop (arc4py._bench_capi_c, from arc4py/cbind/bench_capi.c)
for:

  arc4py   arc4py's C API (arc4py/capi.h), through its capsule
  libc     the C library's arc4random / arc4random_buf (glibc >= 2.36)
  libbsd   libbsd.so.0's (OpenBSD's implementation)
  openssl  OpenSSL 3's RAND_bytes (libcrypto.so.3)

each peer loaded with dlopen() in C; a library that is absent is a skipped
column, with the reason.  Calibration, timing and the MB/s figure are
arc4py/cli/timing.py's and the table is arc4py/cli/report.py's, so this
module's table is the one ``arc4py bench --c-api`` ends with: the same
rows, the same figures, the same ratios (against libbsd).

    python -m arc4py._bench_capi [--quick] [--duration S] [--rows IDS] [--json]
"""
import json
import sys

from arc4py.cli import Parser, bench
from arc4py.cli.output import write_stdout
from arc4py.cli.sources import ROW_IDS, ROWS
from arc4py.cli.timing import UNROLL, Progress, mb_per_s, measure_single_rounds, summarize

PROG = "python -m arc4py._bench_capi"

#: The C module's columns, named here too for a build without that module
#: (every column is then skipped, with the reason).
COLUMNS = ("arc4py", "libc", "libbsd", "openssl")

#: The C module's kind of call for a row's kind: a fill is an
#: arc4random_buf() into a buffer at the C level.
C_KINDS = {"u32": "u32", "buf": "buf", "fill": "buf"}


def _c_module():
    """The compiled loops, or None and why (not built on this platform)."""
    try:
        from arc4py import _bench_capi_c
    except ImportError as exc:
        return None, f"the C timing module is not available: {exc}"
    return _bench_capi_c, None


def _c_calls(trips, time_calls, column, kind, size):
    """``trips`` trips of UNROLL calls, the count timing.py's loops take,
    made by one compiled loop with the GIL released; timing.py's clock
    times it as it times the Python rows."""
    time_calls(column, kind, size, trips * UNROLL)


def c_api_duration(rows, duration=None, quick=False):
    """Seconds per figure of the C table alone (bench.figure_duration over
    its figures: every row for every column)."""
    return bench.figure_duration(duration, quick, len(rows) * len(COLUMNS))


def measure_c_api(rows=None, duration=None, quick=False):
    """Measure ``rows`` (sources.Row; default all) for every column, each
    figure for ``duration`` seconds (default ``c_api_duration``).

    Returns ``{"columns": [name, ...], "rows": [{"id": str, "label": str,
    "size": int, "mbps": {column: float or None}}, ...], "skipped": {column:
    reason}}``; a skipped column has ``None`` in every row.
    """
    rows = list(ROWS if rows is None else rows)
    if duration is None:
        duration = c_api_duration(rows, quick=quick)
    cmod, why_not = _c_module()
    columns = list(COLUMNS) if cmod is None else list(cmod.columns())
    skipped = {}
    for col in columns:
        why = why_not if cmod is None else cmod.missing(col)
        if why is not None:
            skipped[col] = why
    measured = [c for c in columns if c not in skipped]
    progress = Progress(len(rows) * len(measured))
    out = []
    try:
        for row in rows:
            mbps = dict.fromkeys(columns)
            for col in measured:
                def job(col=col, row=row):
                    return _c_calls, (cmod.time_calls, col, C_KINDS[row.kind],
                                      row.size)
                progress.show(f"C API {col}  {row.name}")
                # the median of the rounds, as every figure of the report
                rates = measure_single_rounds(job, duration)[3]
                mbps[col] = mb_per_s(summarize(rates)["median"], row.size)
                progress.step()
            out.append({"id": row.id, "label": row.name, "size": row.size,
                        "mbps": mbps})
    finally:
        progress.close()
    return {"columns": columns, "rows": out, "skipped": skipped}


DESCRIPTION = """\
The C-API table of `arc4py bench --c-api` alone: MB/s of the report's rows
made as C calls in a compiled loop, for arc4py's C API beside libc's and
libbsd's arc4random and OpenSSL's RAND_bytes (each loaded with dlopen; an
absent one is skipped), with ratios against libbsd.

MB/s = calls x bytes per call / elapsed seconds, with 1 MB = 10**6 bytes.
"""


def build_parser():
    """The options: a few of ``arc4py bench``'s, with the same meaning."""
    import argparse
    p = Parser(prog=PROG, description=DESCRIPTION,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="shorter measurements (an explicit --duration wins)")
    p.add_argument("--duration", type=float, metavar="SECONDS", default=None,
                   help=f"seconds per figure (default "
                        f"{bench.DEFAULT_DURATION}; --quick picks a smaller "
                        "one)")
    p.add_argument("--rows", metavar="ID[,ID...]", default=None,
                   help="measure only these rows: " + ", ".join(ROW_IDS))
    p.add_argument("--json", action="store_true",
                   help="print the figures as JSON on stdout instead of the "
                        "table")
    return p


def format_c_api_run(result, duration):
    """The table as this module prints it: what and where, then the table
    ``arc4py bench --c-api`` ends with."""
    import arc4py
    from arc4py.cli.report import UNIT, format_c_api
    return [f"arc4py {arc4py.__version__} C API bench: {UNIT}",
            f"generator core: {arc4py.backend()}; {duration:.3g} s per "
            f"figure", ""] + format_c_api(result)


def main(argv=None):
    """``python -m arc4py._bench_capi``; the exit status."""
    try:
        args = build_parser().parse_args(
            sys.argv[1:] if argv is None else list(argv))
    except SystemExit as exc:  # --help and usage errors
        return exc.code if isinstance(exc.code, int) else 2
    try:
        rows = bench.select_rows(args.rows)
        duration = c_api_duration(rows, args.duration, args.quick)
        result = measure_c_api(rows=rows, duration=duration)
    except bench.UsageError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    except (OSError, RuntimeError, ValueError) as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    if args.json:
        write_stdout(json.dumps(result, indent=2) + "\n")
    else:
        write_stdout("\n".join(format_c_api_run(result, duration)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
