"""How ``arc4py bench`` and bench/*.py time calls: unrolled loops,
calibration, timed runs in one thread and in many, interleaved rounds, the
median and spread of a figure's rounds, and a progress line.

Every figure follows the C library's bench-arc4random::

    MB/s = calls * bytes per call / elapsed seconds      (1 MB = 10**6 bytes)

A figure is timed as several rounds; it is reported as their median, with
their spread (the median absolute deviation, scaled to match a standard
deviation) relative to it, and flagged unstable when the spread is more
than UNSTABLE_SPREAD of the median (pyperf's rule of thumb).  Both are
robust: one round a neighbour disturbed moves neither.
"""
import statistics
import sys
import threading
import time
from itertools import repeat as _repeat

MB = 10 ** 6


def mb_per_s(calls_per_s, nbytes):
    """The figure of ``calls_per_s`` calls a second of ``nbytes`` bytes each."""
    return calls_per_s * nbytes / MB

#: A figure whose rounds spread by more than this fraction of their median
#: is flagged unstable (as pyperf flags a std dev > 10% of the mean): the
#: machine was too busy for the figure to mean much.
UNSTABLE_SPREAD = 0.10

#: The median absolute deviation times this estimates the standard
#: deviation of normally distributed rounds (1 / Phi^-1(3/4)).
_MAD_TO_SD = 1.4826

#: Rounds of a multi-thread figure (each a barrier, then all threads timed).
MULTI_ROUNDS = 5

#: Calls per trip round a timing loop (the loops are unrolled this much so
#: that the loop itself weighs little beside the call being measured).
UNROLL = 8


# ---- timing loops: n trips of UNROLL calls; flat (no partial(), no lambda) ----

def loop_of(expr, names=(), namespace=None):
    """A timing loop ``loop(n, *args)``: n trips of UNROLL evaluations of
    ``expr``, whose ``names`` are the loop's arguments (locals: a global
    read costs about as much as a cheap call) and whose other names are
    looked up in ``namespace`` (its globals)."""
    src = (f"def loop(_n{''.join(', ' + n for n in names)}):\n"
           "    for _ in _repeat(None, _n):\n" + f"        {expr}\n" * UNROLL)
    ns = dict(namespace or {}, _repeat=_repeat)
    exec(compile(src, f"<loop: {expr}>", "exec"), ns)
    return ns["loop"]


loop0 = loop_of("f()", ("f",))                  # f()
loop1 = loop_of("f(a)", ("f", "a"))             # f(a)
loop2 = loop_of("f(a, b)", ("f", "a", "b"))     # f(a, b)


# ---- measuring ----------------------------------------------------------------

def calibrate(loop, args, target):
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


def time_batch(loop, args, batch):
    """Seconds one batch of ``loop`` takes."""
    t0 = time.perf_counter()
    loop(batch, *args)
    return time.perf_counter() - t0


def timed(loop, args, batch, duration):
    """Run batches until ``duration`` has passed, and at least two (a
    spread needs two), timing each (each is a round): (calls, t_start,
    t_end, CPU seconds this thread used, [seconds of each batch])."""
    perf = time.perf_counter
    rounds = []
    c0 = time.thread_time()
    t0 = t = perf()
    deadline = t0 + duration
    while True:
        loop(batch, *args)
        t_prev, t = t, perf()
        rounds.append(t - t_prev)
        if t >= deadline and len(rounds) > 1:
            return (len(rounds) * batch * UNROLL, t0, t,
                    time.thread_time() - c0, rounds)


def summarize(values):
    """The median of a figure's per-round ``values`` and their spread:
    {"median", "spread" (scaled median absolute deviation / median; 0.0
    for one round), "rounds", "unstable" (spread > UNSTABLE_SPREAD)}."""
    values = list(values)
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    spread = mad * _MAD_TO_SD / median if median > 0 else 0.0
    return {"median": median, "spread": spread, "rounds": len(values),
            "unstable": spread > UNSTABLE_SPREAD}


def batch_target(duration):
    """Seconds per calibrated batch for a figure of ``duration`` seconds."""
    return min(max(duration / 10, 0.0005), 0.05)


def measure_single_rounds(job, duration):
    """``job()`` -> (loop, args), timed in this thread for ``duration``
    seconds in calibrated batches, each a round: (calls, elapsed seconds,
    batch size, [calls per second of each round])."""
    loop, args = job()
    batch = calibrate(loop, args, batch_target(duration))
    calls, t0, t1, _, rounds = timed(loop, args, batch, duration)
    return calls, t1 - t0, batch, [batch * UNROLL / dt for dt in rounds]


def measure_multi_rounds(job, threads, duration, batch, rounds=MULTI_ROUNDS):
    """``threads`` threads, each with its own ``job()`` (its own buffers and
    generator), in ``rounds`` rounds of ``duration / rounds`` seconds, the
    threads starting each round together, timed from the first start to
    the last finish: (calls of all, seconds of all rounds, [aggregate
    calls/s per round], [calls per CPU second the threads used, per
    round])."""
    barrier = threading.Barrier(threads)
    results = [[] for _ in range(threads)]
    errors = []
    per_round = duration / rounds

    def worker(i):
        try:
            loop, args = job()
            loop(1, *args)          # this thread's state and buffers, warm
            for _ in range(rounds):
                barrier.wait()
                results[i].append(timed(loop, args, batch, per_round))
        except threading.BrokenBarrierError:
            pass
        except BaseException as exc:  # re-raised in the calling thread
            errors.append(exc)
            barrier.abort()

    run_threads(worker, threads, errors)
    calls = elapsed = 0
    rates, cpu_rates = [], []
    for k in range(rounds):
        got = [r[k] for r in results]
        n = sum(g[0] for g in got)
        dt = max(g[2] for g in got) - min(g[1] for g in got)
        cpu = sum(g[3] for g in got)
        calls += n
        elapsed += dt
        rates.append(n / dt)
        cpu_rates.append(n / cpu if cpu > 0 else 0.0)
    return calls, elapsed, rates, cpu_rates


def interleaved(jobs, rounds, target, progress=None):
    """``jobs`` ({key: job}, each ``job()`` -> (loop, args)) calibrated to
    batches of about ``target`` seconds, then timed in ``rounds`` rounds of
    one batch each, the order rotating from round to round, so that a drift
    in the machine's load hits every job alike: {key: [calls per second of
    each round]}.  ``progress`` (a Progress) is shown each step."""
    made = {k: job() for k, job in jobs.items()}
    batches = {}
    for k, (loop, args) in made.items():      # calibrate (and warm up)
        if progress:
            progress.show(f"calibrating {k}")
        batches[k] = calibrate(loop, args, target)
    keys = list(jobs)
    rates = {k: [] for k in keys}
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            if progress:
                progress.show(f"round {r + 1}/{rounds}  {k}")
            loop, args = made[k]
            rates[k].append(batches[k] * UNROLL
                            / time_batch(loop, args, batches[k]))
            if progress:
                progress.step()
    return rates


def stderr_is_a_terminal():
    """Whether stderr is a terminal (where a line can rewrite itself)."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Progress on stderr: on a terminal one self-overwriting line
    (``show``); elsewhere (a pipe, a file, CI, a notebook) a line for each
    part that ``finished`` names, with the seconds since the start, so
    that a long run is never silent.  ``lines=False``: none of those."""

    def __init__(self, total, lines=True):
        self.total = total
        self.done = 0
        self.on = stderr_is_a_terminal()
        self.lines = lines and not self.on and sys.stderr is not None
        self.start = time.perf_counter()

    def show(self, text):
        if self.on:
            sys.stderr.write(f"\r\x1b[K[{self.done}/{self.total}] {text}")
            sys.stderr.flush()

    def step(self, n=1):
        self.done += n

    def finished(self, text):
        if self.lines:
            elapsed = time.perf_counter() - self.start
            try:
                sys.stderr.write(f"[{self.done}/{self.total}] {text}: done "
                                 f"({elapsed:.0f} s)\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # nobody reads stderr any more
                self.lines = False

    def close(self):
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def run_threads(worker, threads, errors):
    """``worker(i)`` in ``threads`` threads, waited for; then the first
    exception the workers put in ``errors``, if any, is raised here."""
    pool = [threading.Thread(target=worker, args=(i,), daemon=True,
                             name=f"arc4py-bench-{i}")
            for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
