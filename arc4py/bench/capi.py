"""The C-level rows of ``arc4py bench --c-api``.

The report's rows (sources.py) made as C calls in a compiled loop
(arc4py.bench._capi_loops, from capi_loops.c) for:

  arc4py   arc4py's C API (arc4py/capi.h), through its capsule
  libc     the C library's arc4random / arc4random_buf (glibc >= 2.36)
  libbsd   libbsd.so.0's (OpenBSD's implementation)
  openssl  OpenSSL 3's RAND_bytes (libcrypto.so.3)

each peer loaded with dlopen() in C; a library that is absent is a skipped
column, with the reason.  Each figure is timed as the Python rows are
(timing.py): one thread, the median of its rounds.  Importing this
module fails where the C loops are not built.
"""
from arc4py.bench import _capi_loops as c_loops
from arc4py.bench.timing import UNROLL, Progress, mb_per_s, measure_single_rounds, summarize

#: The C loops' kind of call for a row's kind: a fill is an
#: arc4random_buf() into a buffer at the C level.
C_KINDS = {"u32": "u32", "buf": "buf", "fill": "buf"}


def _c_calls(trips, column, kind, size):
    """A timing loop (timing.py): ``trips`` trips of UNROLL calls, made
    by one compiled loop with the GIL released."""
    c_loops.run_calls(column, kind, size, trips * UNROLL)


def measure_c_api(rows, duration):
    """Measure ``rows`` (sources.Row) for every column, each figure for
    ``duration`` seconds.

    Returns ``{"columns": [name, ...], "rows": [{"id": str, "label": str,
    "size": int, "mbps": {column: float or None}, "spread": {column: float},
    "unstable": {column: bool}}, ...], "skipped": {column: reason}}``; a
    skipped column has ``None`` in ``mbps`` and no spread.  A figure's
    spread and its flag are the Python rows' (timing.summarize).
    """
    status = c_loops.columns()
    columns = list(status)
    skipped = {c: why for c, why in status.items() if why is not None}
    measured = [c for c in columns if c not in skipped]
    progress = Progress(len(rows) * len(measured))
    out = []
    try:
        for row in rows:
            mbps, spread, unstable = dict.fromkeys(columns), {}, {}
            for col in measured:
                args = (col, C_KINDS[row.kind], row.size)
                progress.show(f"C API {col}  {row.name}")
                stats = summarize(measure_single_rounds(
                    lambda args=args: (_c_calls, args), duration)[3])
                mbps[col] = mb_per_s(stats["median"], row.size)
                spread[col], unstable[col] = stats["spread"], stats["unstable"]
                progress.step()
            out.append({"id": row.id, "label": row.name, "size": row.size,
                        "mbps": mbps, "spread": spread, "unstable": unstable})
            progress.finished(f"C API {row.name}")
    finally:
        progress.close()
    return {"columns": columns, "rows": out, "skipped": skipped}
