"""The engine of ``arc4py bench``: the bench-arc4random MB/s report.

Like the C library's bench-arc4random, each figure comes from a timed loop
of calls of one request size::

    MB/s = calls * bytes per call / elapsed seconds      (1 MB = 10**6 bytes)

Rows: ``arc4random`` (4 bytes a call), ``arc4random_buf(16)`` ...
``arc4random_buf(128)``, and fills of 4 KiB, 64 KiB and 1 MiB into a
preallocated ``bytearray``.  Each row is measured in one thread, then in
``--threads`` threads at once (the sum over all of them).

The generator's core is fixed at import (``ARC4PY_BACKEND``), so another
core is measured by running this same report in a subprocess with
``ARC4PY_BACKEND=<core> ... --json`` and collecting its figures.  Peers for
``--compare`` (``os.urandom``, ``secrets.token_bytes``, numpy's
``default_rng().bytes`` and the C library's ``arc4random`` /
``arc4random_buf`` through ctypes) are measured in the same run.

Run it as ``arc4py bench``, ``python -m arc4py bench`` or
``python bench/bench_arc4random.py``.
"""
import os
import sys
import time
from itertools import repeat as _repeat

MB = 10 ** 6

#: Calls per trip round a timing loop (the loops are unrolled this much so
#: that the loop itself weighs little beside the call being measured).
UNROLL = 8

#: Default seconds per figure, and the budget --quick spreads over them all.
DEFAULT_DURATION = 0.5
QUICK_BUDGET = 18.0
QUICK_MAX_DURATION = 0.25
MIN_DURATION = 0.005


class Row:
    """One line of the report: a kind of call and its bytes per call."""

    __slots__ = ("id", "name", "kind", "size")

    def __init__(self, id, name, kind, size):
        self.id = id        # short name for --rows and JSON
        self.name = name    # what the table shows
        self.kind = kind    # "u32" | "buf" | "fill"
        self.size = size    # bytes per call

    def as_dict(self):
        return {"id": self.id, "name": self.name, "kind": self.kind,
                "bytes": self.size}


ROWS = (
    [Row("arc4random", "arc4random", "u32", 4)]
    + [Row(f"buf{n}", f"arc4random_buf({n})", "buf", n)
       for n in (16, 32, 48, 64, 80, 96, 112, 128)]
    + [Row("fill4k", "fill 4 KiB", "fill", 4 << 10),
       Row("fill64k", "fill 64 KiB", "fill", 64 << 10),
       Row("fill1m", "fill 1 MiB", "fill", 1 << 20)]
)
ROW_IDS = tuple(r.id for r in ROWS)


# ---- timing loops -------------------------------------------------------------
# Each runs n trips of UNROLL calls.  Kept flat: no partial(), no lambda.

def _loop0(n, f):
    for _ in _repeat(None, n):
        f(); f(); f(); f(); f(); f(); f(); f()  # noqa: E702


def _loop1(n, f, a):
    for _ in _repeat(None, n):
        f(a); f(a); f(a); f(a); f(a); f(a); f(a); f(a)  # noqa: E702


def _loop2(n, f, a, b):
    for _ in _repeat(None, n):
        f(a, b); f(a, b); f(a, b); f(a, b)  # noqa: E702
        f(a, b); f(a, b); f(a, b); f(a, b)  # noqa: E702


# ---- what is measured -------------------------------------------------------

class Source:
    """A column of the report: arc4py on one core, or a peer.

    ``job(row)`` is called once in every measuring thread and returns
    ``(loop, args)`` with that thread's own buffers and generators, so that
    no two threads share anything but the code under test.
    """

    kind = "peer"
    key = ""
    label = ""
    description = ""

    def job(self, row):
        raise NotImplementedError


class Arc4pySource(Source):
    kind = "core"

    def __init__(self, core):
        import arc4py
        self.arc4py = arc4py
        self.core = core
        self.key = self.label = f"arc4py:{core}"
        self.description = f"arc4py on the {core} core"

    def job(self, row):
        a = self.arc4py
        if row.kind == "u32":
            return _loop0, (a.arc4random,)
        if row.kind == "buf":
            return _loop1, (a.arc4random_buf, row.size)
        return _loop1, (a.fill, bytearray(row.size))


class UrandomSource(Source):
    key = label = "os.urandom"
    description = "os.urandom(n): the getrandom(2) system call per call"

    def job(self, row):
        return _loop1, (os.urandom, row.size)


class SecretsSource(Source):
    key = "secrets"
    label = "secrets"
    description = "secrets.token_bytes(n)"

    def __init__(self):
        import secrets
        self.token_bytes = secrets.token_bytes

    def job(self, row):
        return _loop1, (self.token_bytes, row.size)


class NumpySource(Source):
    key = label = "numpy"
    description = "numpy.random.default_rng().bytes(n) (PCG64: not a CSPRNG)"

    def __init__(self):
        import numpy
        self.numpy = numpy
        self.description += f", numpy {numpy.__version__}"

    def job(self, row):
        rng = self.numpy.random.default_rng()   # one per thread
        return _loop1, (rng.bytes, row.size)


class LibcSource(Source):
    key = label = "libc"
    description = ("the C library's arc4random() / arc4random_buf() through "
                   "ctypes (the ctypes call overhead dominates small requests)")

    def __init__(self):
        import ctypes
        self.ctypes = ctypes
        lib = ctypes.CDLL(None)
        missing = [s for s in ("arc4random", "arc4random_buf")
                   if not hasattr(lib, s)]
        if missing:
            raise LookupError("the C library exports no "
                              + " or ".join(missing)
                              + " (glibc has them from 2.36)")
        libc_ver = " ".join(v for v in _libc_version() if v)
        if libc_ver:
            self.description += f", {libc_ver}"

    def job(self, row):
        ct = self.ctypes
        lib = ct.CDLL(None)   # own function objects per thread
        if row.kind == "u32":
            f = lib.arc4random
            f.restype = ct.c_uint32
            f.argtypes = ()
            return _loop0, (f,)
        f = lib.arc4random_buf
        f.restype = None
        f.argtypes = (ct.c_void_p, ct.c_size_t)
        buf = ct.create_string_buffer(row.size)
        ptr = ct.cast(buf, ct.c_void_p)   # keeps buf alive (ptr._objects)
        return _loop2, (f, ptr, ct.c_size_t(row.size))


def _libc_version():
    import platform
    try:
        return platform.libc_ver()
    except Exception:  # pragma: no cover - odd platforms
        return ("", "")


PEERS = (
    ("os.urandom", UrandomSource),
    ("secrets", SecretsSource),
    ("numpy", NumpySource),
    ("libc", LibcSource),
)


def make_peers():
    """The peers this machine has, and {name: why not} for those it lacks."""
    peers, skipped = [], {}
    for name, cls in PEERS:
        try:
            peers.append(cls())
        except ImportError as exc:
            skipped[name] = f"not installed ({exc})"
        except (LookupError, OSError, AttributeError, TypeError) as exc:
            skipped[name] = str(exc)
    return peers, skipped


# ---- measuring ----------------------------------------------------------------

def _calibrate(loop, args, target):
    """Trips per batch so that one batch of ``loop`` takes about ``target``
    seconds (this also warms the caches and the thread's generator up)."""
    perf = time.perf_counter
    n = 1
    while True:
        t0 = perf()
        loop(n, *args)
        dt = perf() - t0
        if dt >= target or n >= 1 << 30:
            return n
        if dt < target / 64:
            n *= 16
        else:
            n = max(n + 1, int(n * target / dt * 1.05))


def _timed(loop, args, batch, duration):
    """Run batches until ``duration`` has passed; (calls, t_start, t_end)."""
    perf = time.perf_counter
    trips = 0
    t0 = perf()
    deadline = t0 + duration
    while True:
        loop(batch, *args)
        trips += batch
        t = perf()
        if t >= deadline:
            return trips * UNROLL, t0, t


def _batch_target(duration):
    return min(max(duration / 10, 0.0005), 0.05)


def measure_single(source, row, duration):
    """One thread: (figure dict, batch size calibrated)."""
    loop, args = source.job(row)
    batch = _calibrate(loop, args, _batch_target(duration))
    calls, t0, t1 = _timed(loop, args, batch, duration)
    return _figure(source, row, 1, calls, t1 - t0), batch


def measure_multi(source, row, threads, duration, batch):
    """``threads`` threads started together; the figure is the sum of their
    bytes over the time from the first start to the last finish."""
    import threading

    barrier = threading.Barrier(threads)
    results = [None] * threads
    errors = []

    def worker(i):
        try:
            loop, args = source.job(row)
            loop(1, *args)          # this thread's state and buffers, warm
            barrier.wait()
            results[i] = _timed(loop, args, batch, duration)
        except threading.BrokenBarrierError:
            pass
        except BaseException as exc:  # re-raised in the calling thread
            errors.append(exc)
            barrier.abort()

    pool = [threading.Thread(target=worker, args=(i,), daemon=True,
                             name=f"arc4py-bench-{i}")
            for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    calls = sum(r[0] for r in results)
    elapsed = max(r[2] for r in results) - min(r[1] for r in results)
    return _figure(source, row, threads, calls, elapsed)


def _figure(source, row, threads, calls, elapsed):
    return {
        "source": source.key,
        "row": row.id,
        "name": row.name,
        "bytes": row.size,
        "threads": threads,
        "calls": calls,
        "seconds": elapsed,
        "mb_per_s": calls * row.size / elapsed / MB,
        "calls_per_s": calls / elapsed,
    }


# ---- machine facts ----------------------------------------------------------

def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or platform as a fallback)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware",
                                   "cpu model", "Processor"):
                    if value.strip():
                        return value.strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine() or "unknown"


def machine_facts():
    import platform
    import arc4py
    return {
        "arc4py_version": arc4py.__version__,
        "backend": arc4py.backend(),
        "backends": list(arc4py.backends()),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_features": list(arc4py.cpu_features()),
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


# ---- the command --------------------------------------------------------------

DESCRIPTION = """\
The bench-arc4random report: MB/s of arc4random() and arc4random_buf(16..128)
calls and of 4 KiB / 64 KiB / 1 MiB fills, in one thread and in many, for
arc4py's cores and (with --compare) its peers, measured in the same run.

MB/s = calls x bytes per call / elapsed seconds, with 1 MB = 10**6 bytes.
"""

EPILOG = """\
examples:
  arc4py bench --quick                   the whole report in about 20 s
  arc4py bench --backend all --compare   every core beside its peers
  arc4py bench --json > figures.json     every figure, machine-readable
  arc4py bench --plot mbps.png           MB/s against request size
"""


def add_arguments(p):
    """The options of ``arc4py bench`` (shared with bench/bench_arc4random.py)."""
    import argparse
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
        "--threads", type=int, metavar="N", default=None,
        help="threads for the multi-thread figures (default: one per CPU, "
             f"here {os.cpu_count() or 1}); 1 leaves them out")
    p.add_argument(
        "--duration", type=float, metavar="SECONDS", default=None,
        help=f"seconds per figure (default {DEFAULT_DURATION}; "
             "--quick picks a smaller one)")
    p.add_argument(
        "--quick", action="store_true",
        help="shorter measurements: the whole report in under 30 s, "
             "whatever else is asked (an explicit --duration wins)")
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


class UsageError(Exception):
    """A bad option: one line on stderr, exit status 2."""


def _select_rows(spec):
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


class Progress:
    """One self-overwriting line on stderr, only when stderr is a terminal."""

    def __init__(self, total):
        self.total = total
        self.done = 0
        try:
            self.on = sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError):
            self.on = False

    def show(self, text):
        if self.on:
            sys.stderr.write(f"\r\x1b[K[{self.done}/{self.total}] {text}")
            sys.stderr.flush()

    def step(self, n=1):
        self.done += n

    def close(self):
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _measure_in_process(sources, rows, threads, duration, progress):
    figures = []
    for row in rows:
        for src in sources:
            progress.show(f"{src.label}  {row.name}  1 thread")
            single, batch = measure_single(src, row, duration)
            figures.append(single)
            progress.step()
            if threads > 1:
                progress.show(f"{src.label}  {row.name}  {threads} threads")
                figures.append(measure_multi(src, row, threads, duration,
                                             batch))
                progress.step()
    return figures


def _measure_in_subprocess(core, rows, threads, duration):
    """Run this report for one core in a child with ARC4PY_BACKEND=core."""
    import json
    import subprocess

    cmd = [sys.executable, "-m", "arc4py", "bench", "--json", "--child",
           "--backend", core, "--threads", str(threads),
           "--duration", repr(duration), "--rows", ",".join(r.id for r in rows)]
    import arc4py
    env = dict(os.environ, ARC4PY_BACKEND=core)
    # the child must import this same arc4py, even an in-place build
    home = os.path.dirname(os.path.dirname(os.path.abspath(arc4py.__file__)))
    if os.path.realpath(home) not in _site_dirs():
        env["PYTHONPATH"] = os.pathsep.join(
            [home] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                      if p])
    # run where that arc4py lives: `-m` puts the cwd first on sys.path, and
    # a source tree there (without its built extension) would shadow it
    proc = subprocess.run(cmd, env=env, cwd=home, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit status "
                                                     f"{proc.returncode}"]
        raise RuntimeError(f"measuring core {core} in a subprocess failed: "
                           f"{lines[-1]}")
    report = json.loads(proc.stdout)
    return [f for f in report["figures"] if f["source"] == f"arc4py:{core}"]


def _site_dirs():
    import site
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    if getattr(site, "ENABLE_USER_SITE", False):
        dirs.append(site.getusersitepackages())
    return {os.path.realpath(d) for d in dirs}


def collect(cores, compare, rows, threads, duration, child=False):
    """Measure everything; the report as a dict (what --json prints)."""
    import arc4py

    current = arc4py.backend()
    peers, skipped = make_peers() if compare else ([], {})
    local = [c for c in cores if c == current]
    remote = [c for c in cores if c != current]
    if remote and child:
        raise UsageError(f"--child: the core is {current}, not "
                         f"{', '.join(remote)}")
    modes = 2 if threads > 1 else 1
    progress = Progress(len(rows) * modes * (len(cores) + len(peers)))
    figures = []
    sources = [Arc4pySource(c) for c in local] + peers
    try:
        for core in cores:
            if core in remote:
                progress.show(f"arc4py:{core}  (subprocess, "
                              f"ARC4PY_BACKEND={core})")
                try:
                    figures += _measure_in_subprocess(core, rows, threads,
                                                      duration)
                except (RuntimeError, ValueError, KeyError) as exc:
                    skipped[f"arc4py:{core}"] = str(exc)
                progress.step(len(rows) * modes)
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


def _quick_duration(rows, threads, ncolumns):
    figures = len(rows) * (2 if threads > 1 else 1) * max(ncolumns, 1)
    # calibration costs about a fifth more than the timed part
    return max(MIN_DURATION, min(QUICK_MAX_DURATION,
                                 QUICK_BUDGET / 1.25 / figures))


# ---- the table ----------------------------------------------------------------

def _fmt_rate(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _fmt_ratio(r):
    return f"{r:.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"


def _table(header, lines):
    """Left-aligned first column, right-aligned others."""
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


def format_report(report):
    """The human-readable report as a list of lines."""
    cols = report["columns"]
    rows = report["rows"]
    threads = report["threads"]
    by = {(f["source"], f["row"], f["threads"]): f["mb_per_s"]
          for f in report["figures"]}
    base = "os.urandom" if "os.urandom" in cols and len(cols) > 1 else None

    out = [
        f"arc4py {report['arc4py_version']} bench-arc4random: MB/s "
        f"(1 MB = 10**6 bytes; MB/s = calls x bytes per call / elapsed)",
        f"CPU: {report['cpu_model']} ({report['cpu_count']} CPUs); "
        f"Python {report['python_version']} "
        f"({report['python_implementation']})",
        f"generator core: {report['backend']} (available: "
        f"{', '.join(report['backends'])}); {report['duration']:.3g} s "
        f"per figure",
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
        header = ["request"] + cols
        lines = []
        for r in rows:
            cells = [r["name"]]
            for c in cols:
                v = by.get((c, r["id"], nthreads))
                if v is None:
                    cells.append("-")
                    continue
                cell = _fmt_rate(v)
                b = by.get((base, r["id"], nthreads)) if base else None
                if b and c != base:
                    cell += f" ({_fmt_ratio(v / b)})"
                cells.append(cell)
            lines.append(cells)
        out += _table(header, lines)

    notes = []
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
        import textwrap
        out.append("")
        for n in notes:
            out += textwrap.wrap(n, width=100, initial_indent="* ",
                                 subsequent_indent="  ")
    return out


def plot(report, path):
    """MB/s against bytes per call, log-log: a line per column, solid for
    one thread, dashed for all threads."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    threads = report["threads"]
    fig, ax = plt.subplots(figsize=(9, 6))
    by = {(f["source"], f["row"], f["threads"]): f["mb_per_s"]
          for f in report["figures"]}
    for i, col in enumerate(report["columns"]):
        color = f"C{i % 10}"
        for nthreads, style in ((1, "-"), (threads, "--")):
            if nthreads == 1 and style == "--":
                continue
            pts = sorted((r["bytes"], by[(col, r["id"], nthreads)])
                         for r in rows if (col, r["id"], nthreads) in by)
            if not pts:
                continue
            label = col + (f" ({nthreads} threads)" if nthreads > 1 else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                    marker="o", color=color, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({r["bytes"] for r in rows})
    ticks = [s for s in sizes if s & (s - 1) == 0] or sizes  # powers of two
    ax.set_xticks(ticks)
    ax.set_xticklabels([_size_label(s) for s in ticks])
    ax.set_xlabel("bytes per call")
    ax.set_ylabel("MB/s (1 MB = 10**6 bytes)")
    ax.set_title(f"arc4py {report['arc4py_version']} on "
                 f"{report['cpu_model']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _size_label(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return str(n)


def _has_matplotlib():
    import importlib.util
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


def run(args):
    """``arc4py bench`` with parsed ``args``; the exit status."""
    import json

    try:
        rows = _select_rows(args.rows)
        cores = _select_cores(args.backend)
        threads = args.threads if args.threads is not None else (
            os.cpu_count() or 1)
        if threads < 1:
            raise UsageError(f"--threads must be >= 1, not {threads}")
        if args.duration is not None and not args.duration > 0:
            raise UsageError(f"--duration must be > 0, not {args.duration}")
        if args.plot and not _has_matplotlib():
            raise UsageError("--plot needs matplotlib, which is not "
                             "installed: pip install 'arc4py[plot]'")
        if args.duration is not None:
            duration = args.duration
        elif args.quick:
            npeers = len(PEERS) if args.compare else 0
            duration = _quick_duration(rows, threads, len(cores) + npeers)
        else:
            duration = DEFAULT_DURATION
        report = collect(cores, args.compare, rows, threads, duration,
                         child=getattr(args, "child", False))
    except UsageError as exc:
        sys.stderr.write(f"arc4py bench: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("arc4py bench: interrupted\n")
        return 130

    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(format_report(report)) + "\n")
    sys.stdout.flush()
    if args.plot:
        plot(report, args.plot)
        if not args.json:
            sys.stdout.write(f"\nplot written to {args.plot}\n")
    return 0


def build_parser(prog="arc4py bench"):
    import argparse
    p = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def main(argv=None):
    """Parse ``argv`` (default: sys.argv[1:]) and run the report."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
