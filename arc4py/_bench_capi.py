"""The C-level rows of ``arc4py bench --c-api``.

The same rows as the Python report (``arc4random``, ``arc4random_buf(16)``
... ``(128)``, and 4 KiB, 64 KiB and 1 MiB requests), measured as C calls in
a compiled loop (arc4py/cbind/bench_capi.c) for:

  arc4py   arc4py's C API (arc4py/capi.h), through its capsule
  libc     the C library's arc4random / arc4random_buf (glibc >= 2.36)
  libbsd   libbsd.so.0's (OpenBSD's implementation)
  openssl  OpenSSL 3's RAND_bytes (libcrypto.so.3)

each peer loaded with dlopen() in C; a library that is absent is a skipped
column, with the reason.  MB/s = calls * bytes per call / seconds, 1 MB =
10**6 bytes; each figure is the best of a few timed runs.

    python -m arc4py._bench_capi [--quick] [--json]
"""
import json
import sys

MB = 10 ** 6

#: (label, kind, bytes per call); kind "u32" is arc4random(), "buf" a buffer.
ROWS = (
    [("arc4random", "u32", 4)]
    + [(f"arc4random_buf({n})", "buf", n) for n in range(16, 129, 16)]
    + [("fill 4 KiB", "buf", 4 << 10), ("fill 64 KiB", "buf", 64 << 10),
       ("fill 1 MiB", "buf", 1 << 20)]
)
COLUMNS = ("arc4py", "libc", "libbsd", "openssl")


def _c_module():
    """The compiled loops, or None and why (not built on this platform)."""
    try:
        from arc4py import _bench_capi_c
    except ImportError as exc:
        return None, f"the C timing module is not available: {exc}"
    return _bench_capi_c, None


def _best_rate(cmod, column, kind, size, target, repeats):
    """MB/s of one column and row: calibrate the call count so one run lasts
    about ``target`` seconds, then keep the fastest of ``repeats`` runs."""
    calls = 16
    elapsed = cmod.time_calls(column, kind, size, calls)
    while elapsed < target:
        grow = 10.0 if elapsed <= 0 else min(10.0, 1.3 * target / elapsed)
        calls = max(calls + 1, int(calls * grow))
        elapsed = cmod.time_calls(column, kind, size, calls)
    best = elapsed
    for _ in range(repeats - 1):
        best = min(best, cmod.time_calls(column, kind, size, calls))
    return calls * size / best / MB


def measure_c_api(quick: bool = False) -> dict:
    """Measure every row for every column.

    Returns ``{"columns": [name, ...], "rows": [{"label": str, "size": int,
    "mbps": {column: float or None}}, ...], "skipped": {column: reason}}``;
    a skipped column has ``None`` in every row.
    """
    target, repeats = (0.01, 3) if quick else (0.05, 5)
    skipped = {}
    cmod, why_not = _c_module()
    columns = list(COLUMNS) if cmod is None else list(cmod.columns())
    for col in columns:
        why = why_not if cmod is None else cmod.missing(col)
        if why is not None:
            skipped[col] = why
    rows = []
    for label, kind, size in ROWS:
        mbps = {}
        for col in columns:
            mbps[col] = (None if col in skipped else
                         _best_rate(cmod, col, kind, size, target, repeats))
        rows.append({"label": label, "size": size, "mbps": mbps})
    return {"columns": columns, "rows": rows, "skipped": skipped}


def format_table(result: dict) -> str:
    """The result as a text table, with arc4py's ratio to each peer."""
    cols = result["columns"]
    peers = [c for c in cols if c != "arc4py"]
    head = ["C calls, MB/s"] + cols + [f"arc4py/{p}" for p in peers]
    lines = [head]
    for row in result["rows"]:
        m = row["mbps"]
        cells = [row["label"]]
        cells += ["-" if m[c] is None else f"{m[c]:,.0f}" for c in cols]
        for p in peers:
            ok = m.get("arc4py") and m[p]
            cells.append(f"{m['arc4py'] / m[p]:.1f}x" if ok else "-")
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                     for i, (c, w) in enumerate(zip(line, widths)))
           for line in lines]
    for col, why in result["skipped"].items():
        out.append(f"skipped {col}: {why}")
    out.append("MB/s = calls x bytes per call / seconds, 1 MB = 10**6 bytes")
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    result = measure_c_api(quick="--quick" in argv)
    if "--json" in argv:
        print(json.dumps(result, indent=2))
    else:
        import arc4py
        print(f"arc4py {arc4py.__version__}, core {arc4py.backend()}")
        print(format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
