"""How ``arc4py bench`` shows its figures: aligned tables (also used by
bench/*.py), the text report, the C-API table and the plot.  The JSON
report is the dict these read, printed as it is."""
import textwrap

from arc4py.bench.timing import UNSTABLE_SPREAD

#: What every figure is, as the first line of a report says it.
UNIT = "MB/s (1 MB = 10**6 bytes; MB/s = calls x bytes per call / elapsed)"


def fmt_rate(x):
    """MB/s with 3 significant digits or so: 1,515 / 33.8 / 0.23."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_ratio(r):
    return f"{r:.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def table(header, lines):
    """Left-aligned first column, right-aligned others, a rule under the
    header; a list of lines."""
    widths = [max(len(str(c[i])) for c in [header] + lines)
              for i in range(len(header))]
    out = []
    for k, cells in enumerate([header] + lines):
        parts = [str(cells[0]).ljust(widths[0])]
        parts += [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])]
        out.append("  ".join(parts).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def size_label(n, unit=""):
    """4 -> '4' (or '4 B' with unit='B'), 4096 -> '4 KiB', 1 << 20 -> '1 MiB'."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} {unit}" if unit else str(n)


def fmt_spread(spread, unstable=False):
    """A figure's spread over its rounds: '±3%', with '!' if unstable."""
    return f"±{spread * 100:.0f}%" + ("!" if unstable else "")


def _cell(v, base, fig=None):
    """A rate, with its spread when ``fig`` (its figure) has one and its
    ratio to ``base`` when there is one."""
    if v is None:
        return "-"
    spread = ""
    if fig is not None and "spread" in fig:
        spread = " " + fmt_spread(fig["spread"], fig.get("unstable", False))
    return fmt_rate(v) + spread + (f" ({fmt_ratio(v / base)})" if base else "")


def unstable_note(what="figure"):
    """The note under a table that flagged an unstable figure."""
    return (f"! unstable: the {what}'s rounds spread by more than "
            f"{UNSTABLE_SPREAD:.0%} of their median; the machine was busy or "
            f"changed speed while it ran.  Run it again on an idle machine, "
            f"or for longer.  (± is the rounds' median absolute deviation, "
            f"scaled to a standard deviation.)")


def _notes(notes):
    out = [""]
    for n in notes:
        out += textwrap.wrap(n, width=100, initial_indent="* ",
                             subsequent_indent="  ")
    return out


def format_report(report):
    """The human-readable report as a list of lines."""
    cols = report["columns"]
    rows = report["rows"]
    threads = report["threads"]
    figs = {(f["source"], f["row"], f["threads"]): f
            for f in report["figures"]}
    by = {k: f["mb_per_s"] for k, f in figs.items()}
    base = "os.urandom" if "os.urandom" in cols and len(cols) > 1 else None

    out = [
        f"arc4py {report['arc4py_version']} bench-arc4random: {UNIT}",
        f"CPU: {report['cpu_model']} ({report['cpu_count']} CPUs); "
        f"Python {report['python_version']} "
        f"({report['python_implementation']})",
        f"generator core: {report['backend']} (available: "
        f"{', '.join(report['backends'])}); {report['duration']:.3g} s "
        f"per figure: the median of its rounds, ± their spread",
    ]
    measured = [c.split(":", 1)[1] for c in cols if c.startswith("arc4py:")]
    if measured != [report["backend"]]:
        out.append(f"cores measured: {', '.join(measured) or 'none'} (those "
                   f"other than {report['backend']} in subprocesses with "
                   f"ARC4PY_BACKEND set)")
    modes = [(1, "1 thread")]
    if threads > 1:
        modes.append((threads, f"{threads} threads, aggregate MB/s over all "
                               f"threads"))
    for nthreads, title in modes:
        out += ["", title + (" (ratio: vs os.urandom)" if base else "")]
        lines = []
        for r in rows:
            b = by.get((base, r["id"], nthreads))
            lines.append([r["name"]] + [
                _cell(by.get((c, r["id"], nthreads)), b if c != base else None,
                      figs.get((c, r["id"], nthreads)))
                for c in cols])
        out += table(["request"] + cols, lines)

    notes = ["Each call goes through a name bound once (f = "
             "arc4py.arc4random, then f(); the same for the peers), as "
             "the C library's bench-arc4random calls a function: a "
             "program's arc4py.arc4random() adds a module attribute load "
             "(bench/bench_generator.py times both forms)."]
    if any(f.get("unstable") for f in report["figures"]):
        notes.append(unstable_note())
    if threads > 1:
        notes.append(
            f"Multi-thread figures add up the bytes of all {threads} threads. "
            "Small requests (arc4random, arc4random_buf, fill 4 KiB) hold the "
            "GIL for each call, so they do not scale with threads (they may "
            "even drop); large fills release the GIL and scale with cores.")
    for c in cols:
        if not c.startswith("arc4py:"):
            notes.append(f"{c}: {report['descriptions'][c]}.")
    if any(not c.startswith("arc4py:") for c in cols):
        notes.append("arc4py fills and libc write into a preallocated buffer; "
                     "os.urandom, secrets and numpy return a new bytes object "
                     "per call, as arc4random_buf() does.")
    for name, why in report["skipped"].items():
        notes.append(f"{name}: skipped: {why}.")
    if notes:
        out += _notes(notes)
    if report.get("c_api") is not None:
        out += [""] + format_c_api(report["c_api"])
    return out


def c_api_base(c_api):
    """The column the C-API ratios are against: libbsd's, if measured."""
    return next((c for c in c_api["columns"] if "libbsd" in c.lower()), None)


def format_c_api(c_api):
    """The C-API table (``measure_c_api()``'s dict) as a list of lines: C
    calls, no Python in the timed loop, with ratios against libbsd's
    arc4random where it was measured; then why any column is missing."""
    cols = c_api["columns"]
    base = c_api_base(c_api)
    if base is not None and not any(
            r["mbps"].get(base) for r in c_api["rows"]):
        base = None
    out = ["C API, MB/s from C calls (no Python in the timed loop)"
           + (f" (ratio: vs {base})" if base else "")]
    lines = []
    for r in c_api["rows"]:
        b = r["mbps"].get(base) if base else None
        lines.append([r["label"]] + [
            _cell(r["mbps"].get(c), b if c != base else None, _c_figure(r, c))
            for c in cols])
    out += table(["request"] + cols, lines)
    notes = [f"{name}: skipped: {why}." for name, why
             in c_api.get("skipped", {}).items()]
    if any(any(r.get("unstable", {}).values()) for r in c_api["rows"]):
        notes.insert(0, unstable_note())
    if notes:
        out += _notes(notes)
    return out


def _c_figure(row, column):
    """A C-API figure's spread and flag, as _cell takes them (None where
    the row has none: a skipped column, or a report without spreads)."""
    if column not in row.get("spread", {}):
        return None
    return {"spread": row["spread"][column],
            "unstable": row.get("unstable", {}).get(column, False)}


def plot(report, path):
    """MB/s against bytes per call, log-log: a line per column, solid for
    one thread, dashed for all threads, dotted for the C API."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    threads = report["threads"]
    fig, ax = plt.subplots(figsize=(9, 6))
    by = {(f["source"], f["row"], f["threads"]): f["mb_per_s"]
          for f in report["figures"]}
    lines = []      # (label, style, points)
    for col in report["columns"]:
        for nthreads, style in ((1, "-"), (threads, "--")):
            if nthreads == 1 and style == "--":
                continue
            pts = sorted((r["bytes"], by[(col, r["id"], nthreads)])
                         for r in rows if (col, r["id"], nthreads) in by)
            label = col + (f" ({nthreads} threads)" if nthreads > 1 else "")
            lines.append((col, label, style, pts))
    c_api = report.get("c_api")
    for col in (c_api or {}).get("columns", ()):
        pts = sorted((r["size"], r["mbps"][col]) for r in c_api["rows"]
                     if r["mbps"].get(col))
        lines.append(("C " + col, f"C API: {col}", ":", pts))
    colors = {}
    for key, label, style, pts in lines:
        if not pts:
            continue
        color = colors.setdefault(key, f"C{len(colors) % 10}")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                marker="o", color=color, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({p[0] for _, _, _, pts in lines for p in pts}
                   or {r["bytes"] for r in rows})
    ticks = [s for s in sizes if s & (s - 1) == 0] or sizes  # powers of two
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(s) for s in ticks])
    ax.set_xlabel("bytes per call")
    ax.set_ylabel("MB/s (1 MB = 10**6 bytes)")
    ax.set_title(f"arc4py {report['arc4py_version']} on "
                 f"{report['cpu_model']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
