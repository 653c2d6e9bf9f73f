"""A short run through every public call, for memory checkers (valgrind,
sanitizers): small enough to finish under valgrind in a minute or two.

    python tests/stress/smoke.py

Touches: every generator call and size path (buffered, direct, GIL
released), every buffer kind fill() takes and the errors it raises, the
ChaCha20 cores (all of them), secrets-style helpers, Random, numpy arrays and
BitGenerator, stir(), fork_protection(), threads (new states, thread exit
freeing them) and a fork (os.fork; the child draws and reports through a
pipe).  Prints "smoke: ok" and exits 0 when every check held.
"""
import array
import mmap
import os
import sys

import arc4py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import (
    BUFFER_BYTES,
    DIRECT_BYTES,
    REKEY_BYTES,
    run_threads,
)

try:
    import numpy as np
except ImportError:
    np = None

#: Request sizes at every edge of the generator's paths: the first and last
#: buffered sizes, the first direct one, what one refill leaves for
#: requests (BUFFER_BYTES - REKEY_BYTES) and a whole buffer.
EDGE_SIZES = (0, 1, 15, 16, 63, 64, DIRECT_BYTES - 1, DIRECT_BYTES,
              BUFFER_BYTES - REKEY_BYTES - 1, BUFFER_BYTES - REKEY_BYTES,
              BUFFER_BYTES, 4097, (1 << 14) - 1, 1 << 14, 100_000, 1 << 20,
              (1 << 20) + 3)

ERRORS = (TypeError, ValueError, OverflowError, MemoryError, BufferError,
          IndexError, NotImplementedError)


def expect_error(fn, *exc):
    expected = exc or ERRORS
    try:
        fn()
    except expected:
        return
    raise AssertionError(f"{fn} did not raise {expected}")


def generator_calls():
    seen = set()
    for _ in range(50):
        assert 0 <= arc4py.arc4random() < 1 << 32
        assert 0 <= arc4py.random_u32() < 1 << 32
        assert 0 <= arc4py.random_u64() < 1 << 64
        assert 0.0 <= arc4py.random() < 1.0
        assert 0 <= arc4py.arc4random_uniform(7) < 7
        assert 0 <= arc4py.arc4random_uniform(1 << 32) < 1 << 32
        assert arc4py.arc4random_uniform(1) == 0
        assert 0 <= arc4py.randbelow(10 ** 40) < 10 ** 40
        assert arc4py.randbits(0) == 0 and arc4py.randbits(77) < 1 << 77
        seen.add(arc4py.arc4random_buf(16))
    assert len(seen) == 50
    for n in EDGE_SIZES:
        b = arc4py.arc4random_buf(n)
        assert len(b) == n and (n < 16 or any(b))
    assert len(arc4py.token_bytes()) == 32 and len(arc4py.token_bytes(5)) == 5
    assert len(arc4py.token_hex(4)) == 8 and arc4py.token_urlsafe(3)
    assert arc4py.choice([1, 2, 3]) in (1, 2, 3)
    expect_error(lambda: arc4py.choice([]), IndexError)
    arc4py.stir()
    assert arc4py.fork_protection() is not None
    assert arc4py.backend() in arc4py.backends()
    for bad in (lambda: arc4py.arc4random_buf(-1),
                lambda: arc4py.arc4random_buf(1.5),
                lambda: arc4py.arc4random_buf("3"),
                lambda: arc4py.arc4random_buf(2 ** 62),
                lambda: arc4py.arc4random_buf(2 ** 100),
                lambda: arc4py.arc4random_uniform(0),
                lambda: arc4py.arc4random_uniform(2 ** 32 + 1),
                lambda: arc4py.randbelow(0),
                lambda: arc4py.randbits(-1),
                lambda: arc4py.fill(3)):
        expect_error(bad)


def buffers():
    targets = [bytearray(100), bytearray(0), bytearray(50_000),
               memoryview(bytearray(64)), memoryview(bytearray(64))[8:40],
               array.array("I", range(100)), array.array("d", [0.0] * 10),
               mmap.mmap(-1, 8192)]
    if np is not None:
        for dt in ("u1", "i2", "u4", "i8", "f4", "f8", "c16", "?", "V3",
                   "<u2", ">u4", "M8[s]"):
            targets.append(np.zeros(33, dtype=dt))
        targets.append(np.zeros((4, 5), dtype="u4")[1:3])   # contiguous rows
        targets.append(np.zeros((0, 3)))
    for t in targets:
        n = arc4py.fill(t)
        want = t.nbytes if np is not None and isinstance(t, np.ndarray) \
            else memoryview(t).nbytes
        assert n == want, (t, n)
    targets[7].close()  # the mmap
    for ro in (b"abc", memoryview(b"abc"), memoryview(bytearray(8)).toreadonly()):
        expect_error(lambda ro=ro: arc4py.fill(ro), TypeError)
    expect_error(lambda: arc4py.fill(memoryview(bytearray(64))[::2]),
                 ValueError, BufferError)
    if np is not None:
        a = np.zeros(16)
        a.flags.writeable = False
        expect_error(lambda: arc4py.fill(a), TypeError, ValueError)
        expect_error(lambda: arc4py.fill(np.zeros((4, 4))[:, 1]),
                     ValueError, BufferError)


def cores():
    key, n8, n12 = bytes(range(32)), bytes(8), bytes(12)
    ref = None
    for name in arc4py.backends():
        out = [arc4py.chacha20_keystream(key, n8, k, counter=c, backend=name)
               for k in (0, 1, 63, 64, 65, 255, 257, 1024, 1 << 14)
               for c in (0, 0xFFFFFFFF, 2 ** 64 - 300)]
        out.append(arc4py.chacha20_keystream(key, n12, 100, counter=2 ** 32 - 2,
                                             backend=name))
        buf = bytearray(777)
        arc4py.chacha20_keystream_into(key, n8, buf, backend=name)
        out.append(bytes(buf))
        if ref is None:
            ref = out
        assert out == ref, f"core {name} disagrees"
    expect_error(lambda: arc4py.chacha20_keystream(key, n12, 200,
                                                   counter=2 ** 32 - 1))
    expect_error(lambda: arc4py.chacha20_keystream(key[:31], n8, 1))
    expect_error(lambda: arc4py.chacha20_keystream(key, n8, 1, backend="nope"))


def random_class():
    r = arc4py.Random()
    r.seed(1)
    deck = list(range(52))
    r.shuffle(deck)
    assert sorted(deck) == list(range(52))
    r.sample(range(100), 10), r.choices("abc", k=5), r.gauss(0, 1)
    r.randrange(10, 1000, 7), r.uniform(1, 2), r.getrandbits(100), r.randbytes(9)
    expect_error(r.getstate, NotImplementedError)


def numpy_calls():
    if np is None:
        return
    a = arc4py.random_u32(size=(3, 4))
    assert a.shape == (3, 4) and a.dtype == np.uint32
    b = arc4py.random_u64(size=100_000)
    assert b.dtype == np.uint64 and len(np.unique(b)) == 100_000
    assert arc4py.random_u32(size=0).size == 0
    g = np.random.Generator(arc4py.BitGenerator())
    g.random(5), g.normal(size=5), g.integers(0, 10, 5), g.bytes(10)
    g.standard_gamma(2.0, size=5), g.permutation(10)
    bg = g.bit_generator
    bg.random_raw(), bg.random_raw(7)
    rng = arc4py.default_rng()
    rng.choice(10, 3), rng.uniform(size=3)
    expect_error(lambda: arc4py.random_u32(size=-1))
    expect_error(lambda: arc4py.random_u32(size="x"), TypeError)


def threads():
    def work(_):
        mine = [arc4py.arc4random_buf(16) for _ in range(20)]
        buf = bytearray(1 << 15)
        arc4py.fill(buf)
        mine.append(bytes(buf[:16]))
        if np is not None:
            mine.append(arc4py.random_u64(size=2).tobytes())
        return mine

    outs = []
    for _ in range(3):  # created, drawn from, exited: states freed each time
        for mine in run_threads(4, work):
            outs.extend(mine)
    assert len(set(outs)) == len(outs)


def fork():
    if not hasattr(os, "fork"):
        return
    before = arc4py.arc4random_buf(16)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(r)
            os.write(w, arc4py.arc4random_buf(16) + arc4py.arc4random_buf(4000))
            status = 0
        finally:
            os._exit(status)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    parent = arc4py.arc4random_buf(16)
    assert len(data) == 4016 and data[:16] not in (before, parent)


def main():
    generator_calls()
    buffers()
    cores()
    random_class()
    numpy_calls()
    threads()
    fork()
    print("smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
