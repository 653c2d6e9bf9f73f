"""Stress: many threads, a fork storm, and thread churn, all at once-ish.

    python tests/stress/stress.py            # 256 threads for 30 s, 1,000 forks,
                                             # 10,000 thread create/exit cycles
    python tests/stress/stress.py --quick    # 32 threads, 3 s, 50 forks, 1,000 cycles
    python tests/stress/stress.py --threads N --seconds S --forks F --cycles C

The fork storm is in fork_storm.py.

Phase 1: ``--threads`` threads make mixed calls through the whole public API
for ``--seconds`` while a fork storm runs alongside: ``--forks`` children in
all, alternately made by ``os.fork()`` and (on x86_64 Linux, with
MADV_WIPEONFORK) by the raw ``fork`` system call through ctypes, which runs no
pthread_atfork handler.  Every child draws, sends its outputs back through a
pipe and leaves with ``os._exit``.  For the instant of each raw fork the
workers are parked (blocked in read(2), their generator states warm
mid-buffer): a raw fork skips CPython's after-fork repair of the GIL, and a
thread waiting for the GIL at that moment would leave the child hung in
CPython (not in arc4py).  The storm runs until all forks are done, which
takes longer than ``--seconds`` with hundreds of threads.

Phase 2: ``--cycles`` threads are created, each draws, and exits (8 at a time).
The resident set (VmRSS) and the total size of the live generator state pages
(the mappings /proc/self/smaps flags ``wf``, MADV_WIPEONFORK) are printed at
the start, middle and end: a state page leaked per thread would show as
~4 KiB x cycles (~40 MB for 10,000).

Every 16-byte output collected (arc4random_buf(16), token_bytes(16), 16-byte
slices of fills, from every thread and every child) must be distinct, and
every call must return a well-formed result.  The last line printed is a JSON
summary; the exit status is 0 only if every check held.
"""
import argparse
import gc
import json
import os
import random as _stdrandom
import sys
import threading
import time
import traceback
import warnings

import arc4py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fork_storm import RAW_FORK, fork_storm

from helpers import (
    BUFFER_BYTES,
    DIRECT_BYTES,
    REKEY_BYTES,
    Failure,
    check,
    rss_kib,
    state_pages_kib,
    write_all,
)

try:
    import numpy as np
except ImportError:  # the numpy calls are skipped, the rest runs
    np = None

#: Request sizes around the generator's limits: the last buffered size, the
#: first direct one, a refill's worth, past a whole buffer.
MID_SIZES = (100, DIRECT_BYTES - 1, DIRECT_BYTES,
             BUFFER_BYTES - REKEY_BYTES, BUFFER_BYTES + 1, 5000)
# Python 3.12+ warns when a process with threads forks: that is the point here.
warnings.filterwarnings("ignore", category=DeprecationWarning)


# ---- the mixed calls a worker makes ----------------------------------------------

def mixed_round(out, buf_small, buf_mid, buf_big, pick, rnd, rng):
    """One round of calls; appends every 16-byte output to ``out``."""
    b = arc4py.arc4random_buf(16)
    check(type(b) is bytes and len(b) == 16, "arc4random_buf(16)")
    out += b
    x = arc4py.arc4random()
    check(0 <= x < 1 << 32, "arc4random range")
    x = arc4py.random_u32()
    check(0 <= x < 1 << 32, "random_u32 range")
    x = arc4py.random_u64()
    check(0 <= x < 1 << 64, "random_u64 range")
    f = arc4py.random()
    check(0.0 <= f < 1.0, "random() range")
    k = pick.randrange(1, 1 << 32)
    check(0 <= arc4py.arc4random_uniform(k) < k, "arc4random_uniform range")
    n = pick.randrange(1, 1 << 200)
    check(0 <= arc4py.randbelow(n) < n, "randbelow range")
    k = pick.randrange(0, 300)
    check(arc4py.randbits(k).bit_length() <= k, "randbits width")
    t = arc4py.token_bytes(16)
    check(len(t) == 16, "token_bytes(16)")
    out += t
    check(len(arc4py.token_hex(8)) == 16, "token_hex")
    arc4py.token_urlsafe()
    check(arc4py.choice("abcdef") in "abcdef", "choice")
    # fills on the buffered, direct and GIL-released paths
    check(arc4py.fill(buf_small) == 16, "fill(16)")
    out += buf_small
    check(arc4py.fill(buf_mid) == len(buf_mid), "fill(mid)")
    out += buf_mid[:16]
    out += buf_mid[-16:]
    which = pick.random()
    if which < 0.05:
        check(arc4py.fill(buf_big) == len(buf_big), "fill(big)")
        out += buf_big[:16]
        out += buf_big[-16:]
    elif which < 0.06:
        arc4py.stir()
    elif which < 0.2:
        lst = list(range(20))
        rnd.shuffle(lst)
        check(sorted(lst) == list(range(20)), "Random.shuffle")
        check(0 <= rnd.randrange(10 ** 20) < 10 ** 20, "Random.randrange")
    if rng is not None and which > 0.8:
        a = arc4py.random_u32(size=8)
        check(a.dtype == np.uint32 and a.shape == (8,), "random_u32(size)")
        a = arc4py.random_u64(size=(2, 2))
        out += a.tobytes()
        v = rng.integers(0, 10, size=4)
        check(((v >= 0) & (v < 10)).all(), "Generator.integers")
        arr = np.empty(4, dtype=np.uint32)
        arc4py.fill(arr)
        out += arr.tobytes()


class Pauser:
    """Parks every worker blocked in read(2) on a pipe, so that a raw fork
    can be made while no other thread waits for (or holds a mutex of) the
    GIL; resume() writes one byte per parked worker.

    A parked worker has finished giving up the GIL before it blocks; the
    forker checks that through /proc (every other thread in the read
    system call on this pipe), not only through a counter."""

    def __init__(self, n):
        self.r, self.w = os.pipe()
        self.lock = threading.Lock()
        self.want = False
        self.parked = 0
        self.alive = n

    def checkpoint(self):
        if self.want:
            with self.lock:
                self.parked += 1
            os.read(self.r, 1)

    def leave(self):
        with self.lock:
            self.alive -= 1

    def _all_parked(self):
        me = str(threading.get_native_id())
        want = f"0 {hex(self.r)} "  # SYS_read (x86_64) on the pipe
        for tid in os.listdir("/proc/self/task"):
            if tid == me:
                continue
            try:
                with open(f"/proc/self/task/{tid}/syscall") as f:
                    line = f.read()
            except OSError:
                continue  # the thread is gone
            if not line.startswith(want):
                return False
        return True

    def pause(self, timeout=120):
        self.want = True
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                counted = self.parked >= self.alive
            if counted and self._all_parked():
                return
            if time.monotonic() > deadline:
                raise Failure(f"workers did not park within {timeout}s "
                              f"({self.parked}/{self.alive})")
            time.sleep(0.0005)

    def resume(self):
        self.want = False
        with self.lock:
            n, self.parked = self.parked, 0
        if n:
            write_all(self.w, b"x" * n)


def worker(idx, stop, ready, outs, errors, counts, pauser):
    try:
        out = bytearray()
        outs[idx] = out
        pick = _stdrandom.Random(idx)  # sizes and choices only, not output
        rnd = arc4py.Random()
        rng = arc4py.default_rng() if np is not None else None
        buf_small = bytearray(16)
        buf_mid = bytearray(pick.choice(MID_SIZES))
        buf_big = bytearray(pick.choice([1 << 14, 100_000, 1 << 20]))
        ready.wait()
        rounds = 0
        while not stop.is_set():
            pauser.checkpoint()
            mixed_round(out, buf_small, buf_mid, buf_big, pick, rnd, rng)
            rounds += 1
            # Give the GIL away every round: with hundreds of CPU-bound
            # threads, CPython hands it on only every 5 ms otherwise, and
            # the forking thread would wait seconds for each turn.
            time.sleep(0)
        counts[idx] = rounds
    except BaseException:
        errors.append(f"thread {idx}:\n{traceback.format_exc()}")
    finally:
        pauser.leave()


# ---- distinctness ------------------------------------------------------------------

def count_repeats(blobs):
    """Number of repeated 16-byte values over all blobs (each a multiple of
    16 bytes long) and the total number of values."""
    data = b"".join(bytes(b) for b in blobs)
    if len(data) % 16:
        raise Failure(f"collected {len(data)} bytes, not a multiple of 16")
    total = len(data) // 16
    if np is None:
        seen = set()
        for i in range(0, len(data), 16):
            seen.add(data[i:i + 16])
        return total - len(seen), total
    words = np.frombuffer(data, dtype="<u8").reshape(-1, 2)
    first = np.sort(words[:, 0])
    # Candidates: equal first halves (for random data, practically none);
    # compare those exactly, all 16 bytes.
    dup_first = np.unique(first[1:][first[1:] == first[:-1]])
    repeats = 0
    if dup_first.size:
        mask = np.isin(words[:, 0], dup_first)
        rows = words[mask]
        full = [r.tobytes() for r in rows]
        repeats = len(full) - len(set(full))
    return repeats, total


# ---- phases ------------------------------------------------------------------------

def phase_threads_and_forks(n_threads, seconds, n_forks, summary):
    stop = threading.Event()
    ready = threading.Barrier(n_threads + 1)
    pauser = Pauser(n_threads)
    outs = [None] * n_threads
    counts = [0] * n_threads
    errors = []
    threads = [threading.Thread(target=worker,
                                args=(i, stop, ready, outs, errors, counts,
                                      pauser),
                                daemon=True)
               for i in range(n_threads)]
    for t in threads:
        t.start()
    child_results = []
    fork_stats = {}
    main_out = bytearray()
    ready.wait()
    t0 = time.monotonic()
    # The storm runs in this (the main) thread, spread over the run.
    fork_storm(n_forks, seconds * 0.9, pauser, child_results, errors,
               fork_stats, main_out)
    while time.monotonic() - t0 < seconds:
        main_out += arc4py.arc4random_buf(16)
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join(60)
    elapsed = time.monotonic() - t0
    alive = sum(t.is_alive() for t in threads)
    if alive:
        errors.append(f"{alive} worker threads did not stop")
    repeats, total = count_repeats([o for o in outs if o] + child_results
                                   + [main_out])
    summary.update({
        "threads": n_threads, "seconds": round(elapsed, 2),
        "rounds": sum(counts), **fork_stats,
        "outputs_16B": total, "repeats": repeats,
        "child_outputs_16B": sum(len(r) for r in child_results) // 16,
    })
    print(f"phase 1: {n_threads} threads x {elapsed:.1f}s, {sum(counts)} rounds "
          f"of mixed calls; {fork_stats.get('forks')} forks "
          f"({fork_stats.get('raw_forks')} raw) in {fork_stats.get('fork_seconds')}s; "
          f"{total} 16-byte outputs, {repeats} repeats", flush=True)
    if repeats:
        errors.append(f"{repeats} repeated 16-byte outputs")
    return errors


def phase_thread_churn(cycles, summary, batch=8, rss_limit=True):
    outs = []
    errors = []

    def draw(slot):
        try:
            b = arc4py.arc4random_buf(16)
            buf = bytearray(4096)
            arc4py.fill(buf)
            x = arc4py.arc4random()
            if not 0 <= x < 1 << 32:
                raise Failure("arc4random range")
            outs[slot] = b + bytes(buf[:16])
        except BaseException:
            errors.append(traceback.format_exc())

    def run(n):
        base = len(outs)
        outs.extend([b""] * n)
        for start in range(0, n, batch):
            ts = [threading.Thread(target=draw, args=(base + start + j,))
                  for j in range(min(batch, n - start))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()

    arc4py.arc4random()
    run(200)  # warm up: stacks cached, allocator arenas settled
    gc.collect()
    points = [("start", rss_kib(), state_pages_kib())]
    t0 = time.monotonic()
    run(cycles // 2)
    gc.collect()
    points.append(("middle", rss_kib(), state_pages_kib()))
    run(cycles - cycles // 2)
    gc.collect()
    points.append(("end", rss_kib(), state_pages_kib()))
    elapsed = time.monotonic() - t0
    repeats, total = count_repeats([b for b in outs if b])
    for name, rss, wf in points:
        print(f"phase 2: {name:6s} after {'warm-up' if name == 'start' else name}: "
              f"VmRSS {rss} kB, live state pages {wf} kB", flush=True)
    rss_growth = points[2][1] - points[0][1]
    wf_growth = points[2][2] - points[0][2]
    print(f"phase 2: {cycles} thread cycles in {elapsed:.1f}s: VmRSS "
          f"{rss_growth:+d} kB, state pages {wf_growth:+d} kB; "
          f"{total} outputs, {repeats} repeats", flush=True)
    summary.update({
        "cycles": cycles, "cycle_seconds": round(elapsed, 2),
        "rss_kib": [p[1] for p in points], "state_pages_kib": [p[2] for p in points],
        "cycle_outputs_16B": total, "cycle_repeats": repeats,
    })
    if errors:
        errors = [f"{len(errors)} churn threads failed; first:\n{errors[0]}"]
    if len([b for b in outs if b]) != len(outs):
        errors.append("some churn threads drew nothing")
    if repeats:
        errors.append(f"{repeats} repeated outputs across new threads")
    if wf_growth > 0:
        errors.append(f"live generator state pages grew by {wf_growth} kB "
                      f"over {cycles} threads: a state leaks")
    # 4 KiB a thread would be ~40 MB for 10,000; allow allocator noise.
    limit = max(4096, cycles * 4 // 10)
    if rss_limit and rss_growth > limit:
        errors.append(f"VmRSS grew by {rss_growth} kB over {cycles} threads "
                      f"(limit {limit} kB)")
    return errors


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="32 threads, 3 s, 50 forks, 1,000 thread cycles")
    p.add_argument("--threads", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--forks", type=int)
    p.add_argument("--cycles", type=int)
    p.add_argument("--no-rss-limit", action="store_true",
                   help="print VmRSS but do not judge it (under ASan, whose "
                        "quarantine holds freed memory); the state-page "
                        "count is still checked")
    a = p.parse_args(argv)
    d = (32, 3.0, 50, 1000) if a.quick else (256, 30.0, 1000, 10000)
    n_threads = a.threads if a.threads is not None else d[0]
    seconds = a.seconds if a.seconds is not None else d[1]
    n_forks = a.forks if a.forks is not None else d[2]
    cycles = a.cycles if a.cycles is not None else d[3]
    if not hasattr(os, "fork"):
        n_forks = 0
    print(f"arc4py {arc4py.__version__} core={arc4py.backend()} "
          f"protection={','.join(arc4py.fork_protection())} "
          f"raw-fork={'yes' if RAW_FORK else 'no'} numpy={'yes' if np else 'no'}",
          flush=True)
    summary = {"backend": arc4py.backend()}
    t0 = time.monotonic()
    errors = phase_threads_and_forks(n_threads, seconds, n_forks, summary)
    if n_forks and summary.get("forks") != n_forks:
        errors.append(f"only {summary.get('forks')} of {n_forks} forks completed")
    errors += phase_thread_churn(cycles, summary, rss_limit=not a.no_rss_limit)
    summary["total_seconds"] = round(time.monotonic() - t0, 2)
    summary["errors"] = len(errors)
    for e in errors[:10]:
        print("ERROR:", e, file=sys.stderr)
    print(json.dumps(summary), flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
