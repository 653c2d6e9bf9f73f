"""arc4py.uuid4() and arc4py.uuid7(): the stdlib's UUID layouts (uuid7 as
Python 3.14's, RFC 9562), unique, ordered, and fresh in a forked child."""
import os
import pickle
import platform
import sys
import threading
import time
import uuid

import pytest

import arc4py

N = 20000


def _fields7(u):
    """(milliseconds, 42-bit counter, 32-bit tail) of a version-7 UUID."""
    v = u.int
    return v >> 80, ((v >> 64) & 0xFFF) << 30 | ((v >> 32) & 0x3FFF_FFFF), v & 0xFFFF_FFFF


@pytest.mark.parametrize("make, version", [(arc4py.uuid4, 4), (arc4py.uuid7, 7)])
def test_version_variant_and_type(make, version):
    for _ in range(1000):
        u = make()
        assert type(u) is uuid.UUID
        assert u.version == version
        assert u.variant == uuid.RFC_4122
        assert u.is_safe is uuid.SafeUUID.unknown
        # the same UUID as the stdlib builds from its text, bytes and int
        assert uuid.UUID(str(u)) == u == uuid.UUID(bytes=u.bytes)
        if version == 4:  # (UUID(version=7) is refused before 3.14)
            assert uuid.UUID(int=u.int, version=version) == u
        assert hash(u) == hash(uuid.UUID(int=u.int))
        assert pickle.loads(pickle.dumps(u)) == u
    with pytest.raises(TypeError):
        u.int = 0  # immutable, as the stdlib's


@pytest.mark.parametrize("make", [arc4py.uuid4, arc4py.uuid7])
def test_unique(make):
    assert len({make() for _ in range(N)}) == N


def test_uuid4_every_free_bit_varies():
    seen_one = seen_zero = 0
    for _ in range(400):
        v = arc4py.uuid4().int
        seen_one |= v
        seen_zero |= ~v
    fixed = (0xF << 76) | (0x3 << 62)
    free = ((1 << 128) - 1) & ~fixed
    assert seen_one & free == free and seen_zero & free == free


def test_uuid4_layout_as_the_stdlib():
    # The stdlib's uuid4 keeps every bit of its 16 random bytes but the
    # version and variant: so does ours (rebuilt here through UUID's own
    # constructor from the same random part).
    for _ in range(200):
        u = arc4py.uuid4()
        assert uuid.UUID(bytes=u.bytes, version=4) == u


def test_uuid7_layout_as_python_314():
    before = time.time_ns() // 1_000_000
    u = arc4py.uuid7()
    after = time.time_ns() // 1_000_000
    ms, counter, _tail = _fields7(u)
    assert before <= ms <= after + 1
    assert counter < 1 << 42
    # A new millisecond starts the counter below 2**41 (its top bit clear).
    starts = []
    for _ in range(50):
        time.sleep(0.002)
        starts.append(_fields7(arc4py.uuid7())[1])
    assert all(c < 1 << 41 for c in starts)
    assert len(set(starts)) == len(starts)


@pytest.mark.skipif(not hasattr(uuid, "uuid7"), reason="uuid.uuid7 is new in Python 3.14")
def test_uuid7_fields_read_by_the_stdlib():
    ours, theirs = arc4py.uuid7(), uuid.uuid7()
    assert ours.version == theirs.version == 7
    assert abs(ours.time - theirs.time) < 1000


def test_uuid7_strictly_increasing_in_a_thread():
    us = [arc4py.uuid7() for _ in range(N)]
    assert all(a < b for a, b in zip(us, us[1:]))
    # same millisecond: the counter steps by one
    same = [(a, b) for a, b in zip(us, us[1:]) if _fields7(a)[0] == _fields7(b)[0]]
    assert same
    assert all(_fields7(b)[1] == _fields7(a)[1] + 1 for a, b in same)


def test_uuid7_ordered_across_threads():
    # Each thread records its UUIDs; merged in the order they were made
    # (the generator's lock orders them), every one is above the one before.
    made = []
    lock = threading.Lock()

    def worker():
        for _ in range(3000):
            with lock:
                made.append(arc4py.uuid7())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(a < b for a, b in zip(made, made[1:]))
    free = []  # without an outer lock: all distinct, each thread's increasing

    def free_worker():
        mine = [arc4py.uuid7() for _ in range(3000)]
        assert all(a < b for a, b in zip(mine, mine[1:]))
        free.extend(mine)

    threads = [threading.Thread(target=free_worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(free)) == 12000


@pytest.mark.skipif(not hasattr(uuid, "uuid7"),
                    reason="uuid.uuid7() is new in Python 3.14")
def test_uuid7_mixed_with_the_stdlibs_is_not_in_order():
    # docs/tour.rst: each module keeps its own counter, so the order holds
    # within each, not between them
    made = []
    for _ in range(2000):
        made += [arc4py.uuid7(), uuid.uuid7()]
    assert made[0::2] == sorted(made[0::2])
    assert made != sorted(made)


def test_uuid7_clock_going_back_keeps_order(monkeypatch):
    # The last UUID's millisecond is kept and the counter counts on.
    from arc4py import _uuid
    first = arc4py.uuid7()
    ms, counter, _ = _fields7(first)
    monkeypatch.setattr(_uuid._time, "time_ns", lambda: (ms - 5000) * 1_000_000)
    later = [arc4py.uuid7() for _ in range(3)]
    assert first < later[0] < later[1] < later[2]
    assert [_fields7(u)[:2] for u in later] == [(ms, counter + i) for i in (1, 2, 3)]


def test_uuid7_counter_overflow_moves_the_timestamp(monkeypatch):
    from arc4py import _uuid
    now = time.time_ns()
    monkeypatch.setattr(_uuid._time, "time_ns", lambda: now)
    a = arc4py.uuid7()
    monkeypatch.setattr(_uuid, "_last_counter", (1 << 42) - 1)
    b = arc4py.uuid7()
    assert _fields7(b)[0] == _fields7(a)[0] + 1
    assert _fields7(b)[1] < 1 << 41 and a < b


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_child_draws_fresh():
    arc4py.uuid4(), arc4py.uuid7()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, f"{arc4py.uuid4().int} {arc4py.uuid7().int}".encode())
        finally:
            os._exit(0)
    os.close(w)
    parent4, parent7 = arc4py.uuid4(), arc4py.uuid7()
    with os.fdopen(r) as f:
        child4, child7 = (uuid.UUID(int=int(x)) for x in f.read().split())
    os.waitpid(pid, 0)
    assert child4 != parent4
    assert child7 != parent7
    # the child starts its own counter: not the parent's next count
    c_ms, c_counter, _ = _fields7(child7)
    p_ms, p_counter, _ = _fields7(parent7)
    assert (c_ms, c_counter) != (p_ms, p_counter)
    assert c_counter < 1 << 41 or c_ms != p_ms


def test_raw_fork_child_does_not_continue_the_counter(monkeypatch):
    """A fork by the raw system call runs no atfork handler: the child
    must still not take the parent's next count in the same millisecond
    (the clock is held still, in the child too, so every child is in it)."""
    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        pytest.skip("raw fork syscall number 57 is x86_64 Linux only")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall.argtypes = [ctypes.c_long]
    SYS_fork = 57
    from arc4py import _uuid
    now = time.time_ns()
    monkeypatch.setattr(_uuid._time, "time_ns", lambda: now)
    continued = 0
    for _ in range(100):
        r, w = os.pipe()
        parent = arc4py.uuid7()
        pid = libc.syscall(SYS_fork)
        if pid == 0:
            try:
                os.write(w, arc4py.uuid7().bytes)
            finally:
                os._exit(0)
        assert pid > 0, f"raw fork failed: errno {ctypes.get_errno()}"
        os.close(w)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        p_ms, p_counter, _ = _fields7(parent)
        c_ms, c_counter, _ = _fields7(uuid.UUID(bytes=data))
        assert c_ms == p_ms
        continued += c_counter == p_counter + 1
    assert continued == 0, f"{continued} of 100 children took the parent's " \
                           f"next count"
