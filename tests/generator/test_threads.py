"""Per-thread states: threads never share, repeat or overlap a stream,
including threads that come and go (a new thread's state is fresh, never a
recycled one)."""
import pytest

import arc4py
from helpers import run_threads


def test_32_threads_2000_draws_all_distinct():
    def draw(_):
        buf = arc4py.arc4random_buf
        return [buf(16) for _ in range(2000)]

    results = run_threads(32, draw)
    every = [x for r in results for x in r]
    assert len(every) == 64000
    assert all(len(x) == 16 for x in every)
    assert len(set(every)) == len(every)


def test_thread_churn_never_repeats():
    """500 short-lived threads, a few alive at a time, so thread stacks,
    TLS slots and state pages get reused."""
    seen = []
    for _ in range(50):
        results = run_threads(
            10, lambda i: [arc4py.arc4random_buf(16) for _ in range(20)]
            + [arc4py.arc4random().to_bytes(4, "little")
               + arc4py.arc4random().to_bytes(4, "little")
               + arc4py.random_u64().to_bytes(8, "little")])
        for r in results:
            seen.extend(r)
    assert len(seen) == 500 * 21
    assert len(set(seen)) == len(seen)


def test_churn_with_one_draw_per_thread():
    """The very first output of each new thread: fresh every time."""
    firsts = []
    for _ in range(100):
        firsts.extend(run_threads(3, lambda i: arc4py.arc4random_buf(16)))
    firsts.append(arc4py.arc4random_buf(16))
    assert len(set(firsts)) == len(firsts) == 301


def test_threads_get_unrelated_streams():
    """No 8-byte window of one thread's output appears anywhere in another's,
    at any offset (so no thread runs a shifted copy of another's stream)."""
    def draw(_):
        small = b"".join(arc4py.arc4random_buf(16) for _ in range(256))
        big = arc4py.arc4random_buf(4096)
        return small + big

    streams = run_threads(8, draw)
    windows = [{s[i:i + 8] for i in range(len(s) - 7)} for s in streams]
    for a in range(len(streams)):
        for b in range(a + 1, len(streams)):
            assert not windows[a] & windows[b], f"threads {a} and {b} overlap"
    main = arc4py.arc4random_buf(4096)
    main_windows = {main[i:i + 8] for i in range(len(main) - 7)}
    for w in windows:
        assert not w & main_windows


def test_concurrent_large_fills_are_distinct():
    size = 4 << 20

    def fill(_):
        outs = []
        for _ in range(3):
            buf = bytearray(size)
            assert arc4py.fill(buf) == size
            outs.append(bytes(buf))
        return outs

    results = run_threads(2, fill)
    blobs = [b for r in results for b in r]
    chunks = set()
    for blob in blobs:
        for i in range(0, size, 64):
            chunks.add(blob[i:i + 64])
    # Every 64-byte block of 24 MiB is distinct: no two fills share a
    # keystream, and none of them is zero.
    assert len(chunks) == len(blobs) * (size // 64)


def test_concurrent_fills_of_numpy_arrays():
    np = pytest.importorskip("numpy")

    def fill(_):
        a = np.zeros(1 << 18, dtype=np.uint64)
        assert arc4py.fill(a) == a.nbytes
        return a

    results = run_threads(4, fill)
    every = np.sort(np.concatenate(results))
    assert every.size == 4 << 18
    assert (every[1:] != every[:-1]).all(), "repeated 64-bit words"


def test_a_large_fill_lets_other_threads_run():
    """The GIL is released for a large request: another thread runs while
    the fill is in flight, seeing its first bytes written and its last
    ones not yet (it could see neither if the fill held the GIL).

    A busy host may not schedule the watcher inside one fill's few
    milliseconds, so the fill is tried again; a fill that held the GIL
    would fail every try."""
    import threading

    zeros = bytes(64)
    for _ in range(20):
        buf = bytearray(64 << 20)
        watching, done = threading.Event(), threading.Event()
        seen = []

        def watch():
            watching.set()
            while not done.is_set():
                if buf[:64] != zeros and buf[-64:] == zeros:
                    seen.append(True)
                    return

        watcher = threading.Thread(target=watch)
        watcher.start()
        watching.wait()
        arc4py.fill(buf)
        done.set()
        watcher.join()
        assert buf[-64:] != zeros
        if seen:
            return
    pytest.fail("no other thread ran while a 64 MiB fill was in flight, in 20 fills")
