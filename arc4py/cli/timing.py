"""How ``arc4py bench`` (and bench/*.py) time calls: unrolled loops,
calibration, timed runs in one thread and in many, and a progress line.

Every figure follows the C library's bench-arc4random::

    MB/s = calls * bytes per call / elapsed seconds      (1 MB = 10**6 bytes)
"""
import sys
import time
from itertools import repeat as _repeat

MB = 10 ** 6


def mb_per_s(calls, nbytes, seconds):
    """The figure of ``calls`` calls of ``nbytes`` bytes each in ``seconds``."""
    return calls * nbytes / seconds / MB


#: Calls per trip round a timing loop (the loops are unrolled this much so
#: that the loop itself weighs little beside the call being measured).
UNROLL = 8


# ---- timing loops: n trips of UNROLL calls; flat (no partial(), no lambda) ----

def loop0(n, f):
    """n trips of 8 calls f()."""
    for _ in _repeat(None, n):
        f()
        f()
        f()
        f()
        f()
        f()
        f()
        f()


def loop1(n, f, a):
    """n trips of 8 calls f(a)."""
    for _ in _repeat(None, n):
        f(a)
        f(a)
        f(a)
        f(a)
        f(a)
        f(a)
        f(a)
        f(a)


def loop2(n, f, a, b):
    """n trips of 8 calls f(a, b)."""
    for _ in _repeat(None, n):
        f(a, b)
        f(a, b)
        f(a, b)
        f(a, b)
        f(a, b)
        f(a, b)
        f(a, b)
        f(a, b)


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


def batch_target(duration):
    """Seconds per calibrated batch for a figure of ``duration`` seconds."""
    return min(max(duration / 10, 0.0005), 0.05)


def measure_single(job, duration):
    """``job()`` -> (loop, args), timed in this thread for ``duration``
    seconds: (calls, elapsed seconds, batch size calibrated)."""
    loop, args = job()
    batch = calibrate(loop, args, batch_target(duration))
    calls, t0, t1 = timed(loop, args, batch, duration)
    return calls, t1 - t0, batch


def measure_multi(job, threads, duration, batch):
    """``threads`` threads, each with its own ``job()`` (its own buffers and
    generator), started together: (calls of all, seconds from the first
    start to the last finish)."""
    import threading

    barrier = threading.Barrier(threads)
    results = [None] * threads
    errors = []

    def worker(i):
        try:
            loop, args = job()
            loop(1, *args)          # this thread's state and buffers, warm
            barrier.wait()
            results[i] = timed(loop, args, batch, duration)
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
    return calls, max(r[2] for r in results) - min(r[1] for r in results)


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

    def tick(self, text):
        """One step done, then show ``text``."""
        self.step()
        self.show(text)

    def close(self):
        if self.on:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
