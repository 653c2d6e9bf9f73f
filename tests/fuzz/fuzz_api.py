"""Fuzz arc4py's public API with hostile arguments.

    python tests/fuzz/fuzz_api.py -runs=1000000        # atheris (libFuzzer flags)
    python tests/fuzz/fuzz_api.py -max_total_time=60 corpus_dir/
    python tests/fuzz/fuzz_api.py --random 20000 [--seed S]   # no atheris needed

With atheris installed (pip install atheris) the harness runs under
libFuzzer's coverage-guided mutation (Python-level coverage: arc4py's Python
code is instrumented, its C extension is not).  ``--random N`` feeds N random
inputs to the same harness without atheris; the CI test in
tests/generator/test_hardening.py uses it.

Each input picks one operation and builds hostile arguments for it: wrong
types, sizes near limits (0, 1, 2**31, 2**63 - 1, -1, huge ints), objects
whose ``__index__``/``__len__`` lie or raise, buffers of every kind
(bytearray, bytes, read-only and non-contiguous memoryviews, zero-length,
array.array, mmap, ctypes arrays, numpy arrays and views of many dtypes,
read-only, strided, transposed, with object fields), backend names (random
strings), keys and nonces of every length, counters near 2**32 and 2**64.

The contract checked: every call either succeeds with a correct-looking
result (range, length, type; keystreams equal to an independent ChaCha20,
the ``cryptography`` package, when it is installed; a filled buffer really
written, a refused buffer untouched) or raises one of TypeError, ValueError,
OverflowError, MemoryError, BufferError, IndexError, NotImplementedError,
ImportError (or the harness's own HostileError, raised by its hostile
objects).  Anything else is raised out of the harness: atheris reports it
as a crash, ``--random`` stops and prints the input.  A crash of the
interpreter is a finding too.

The operations and drivers are here; the inputs they build (hostile
integers, sizes, buffers, keys) are in fuzz_inputs.py.

Memory is guarded: a size that would really be allocated is kept at or below
1 MiB; sizes of 2**61 and more (which must fail) are passed as they are.
"""

import ctypes
import mmap
import sys
import time

try:
    import atheris
except ImportError:
    atheris = None

if atheris is not None and __name__ == "__main__" and "--random" not in sys.argv:
    with atheris.instrument_imports():
        import fuzz_inputs  # noqa: F401 - imported here to be instrumented

        import arc4py
else:
    import arc4py

try:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
except ImportError:
    Cipher = None

from fuzz_inputs import (
    HUGE,
    KEY_LENS,
    MIB,
    Data,
    Finding,
    HostileError,
    as_int,
    buffer_bytes,
    call,
    check,
    describe,
    elements,
    guard,
    key_like,
    make_buffer,
    np,
    object_leaves,
    raw_int,
    size_arg,
    size_tuple,
    wrap_int,
)

# ---- the operations -------------------------------------------------------------------

def op_arc4random_buf(d):
    n = size_arg(d)
    fn = d.pick([arc4py.arc4random_buf, arc4py.token_bytes, arc4py.token_hex,
                 arc4py.token_urlsafe, arc4py.Random().randbytes])
    ok, r = call(fn, n)
    v = as_int(n)
    if n is None and fn in (arc4py.token_bytes, arc4py.token_hex,
                            arc4py.token_urlsafe):
        v = 32  # the default, as the secrets module
    if not ok:
        check(v is None or v < 0 or v >= HUGE or isinstance(n, bool) or fn in (
            arc4py.token_bytes, arc4py.token_hex, arc4py.token_urlsafe)
            or isinstance(r, HostileError),
            f"{fn.__name__}({n!r}) raised {r!r}")
        return
    check(v is not None and 0 <= v < HUGE, f"{fn.__name__}({n!r}) succeeded")
    if fn is arc4py.token_hex:
        check(isinstance(r, str) and len(r) == 2 * v, "token_hex length")
        int(r or "0", 16)
    elif fn is arc4py.token_urlsafe:
        check(isinstance(r, str) and len(r) == (4 * v + 2) // 3, "urlsafe len")
    else:
        check(type(r) is bytes and len(r) == v, f"{fn.__name__} length")
        check(v < 32 or any(r), "32+ zero bytes")


def op_scalars(d):
    fn = d.pick([arc4py.arc4random, arc4py.random_u32, arc4py.random_u64,
                 arc4py.random, arc4py.stir, arc4py.backends, arc4py.backend,
                 arc4py.cpu_features, arc4py.fork_protection])
    extra = d.int_in(0, 2) if d.chance(60) else 0
    args = [wrap_int(d, raw_int(d)) for _ in range(extra)]
    if fn in (arc4py.arc4random, arc4py.random_u32, arc4py.random_u64,
              arc4py.random) and extra == 1:  # size=: an array
        return op_arrays(d, fn, args[0])
    ok, r = call(fn, *args)
    if extra:
        check(not ok, f"{fn.__name__} took {extra} extra arguments")
        return
    check(ok, f"{fn.__name__}() raised {r!r}")
    if fn in (arc4py.arc4random, arc4py.random_u32):
        check(type(r) is int and 0 <= r < 1 << 32, "u32 range")
    elif fn is arc4py.random_u64:
        check(type(r) is int and 0 <= r < 1 << 64, "u64 range")
    elif fn is arc4py.random:
        check(type(r) is float and 0.0 <= r < 1.0, "random() range")
    elif fn is arc4py.backends:
        check(isinstance(r, tuple) and r and r[-1] in ("generic",), "backends")
    elif fn is arc4py.backend:
        check(r in arc4py.backends(), "backend")


def op_bounded(d):
    which = d.byte() % 4
    x = wrap_int(d, raw_int(d))
    v = as_int(x)
    if which == 0:
        ok, r = call(arc4py.arc4random_uniform, x)
        if ok:
            check(v is not None and 1 <= v <= 1 << 32 and 0 <= r < v,
                  f"arc4random_uniform({x!r}) -> {r}")
        else:
            check(v is None or not 1 <= v <= 1 << 32 or isinstance(r, HostileError),
                  f"arc4random_uniform({x!r}) raised {r!r}")
    elif which == 1:
        ok, r = call(arc4py.randbelow, x)
        if ok:
            check(v is not None and v >= 1 and 0 <= r < v, f"randbelow({x!r}) -> {r}")
        else:
            check(v is None or v < 1 or isinstance(r, HostileError)
                  or isinstance(r, MemoryError), f"randbelow({x!r}) raised {r!r}")
    elif which == 2:
        x = wrap_int(d, guard(raw_int(d), 1 << 23))
        v = as_int(x)
        fn = d.pick([arc4py.randbits, arc4py.Random().getrandbits])
        ok, r = call(fn, x)
        if ok:
            check(v is not None and v >= 0 and type(r) is int
                  and 0 <= r < 1 << v, f"randbits({x!r}) -> out of range")
        else:
            check(v is None or v < 0 or v >= HUGE or isinstance(r, HostileError),
                  f"randbits({x!r}) raised {r!r}")
    else:
        seqs = [[], [1], list(range(10)), "abc", b"xyz", range(0), range(10 ** 20),
                tuple("ab"), bytearray(b"q")]
        seq = d.pick(seqs)
        if d.chance(50):
            n = raw_int(d)
            seq = type("Hostile", (), {
                "__len__": lambda self: n,
                "__getitem__": lambda self, i: (_ for _ in ()).throw(
                    HostileError("getitem"))})()
        ok, r = call(arc4py.choice, seq)
        if ok:
            check(r in seq, "choice result not in seq")
        else:
            check(isinstance(r, (IndexError, HostileError, OverflowError,
                                 ValueError, TypeError)), f"choice raised {r!r}")


def op_arrays(d, fn=None, size=None):
    if np is None:
        return
    if fn is None:
        fn = d.pick([arc4py.arc4random, arc4py.random_u32, arc4py.random_u64,
                     arc4py.random])
        size = size_tuple(d)
    total = elements(size)
    if total is not None and MIB // 8 < total < HUGE and not isinstance(size, bool):
        return  # would really allocate: not here
    ok, r = call(fn, size)
    if not ok:
        return  # any allowed error is fine for an odd size
    if size is None:
        check(type(r) is (float if fn is arc4py.random else int), "scalar")
        return
    want = {arc4py.random_u64: np.uint64, arc4py.random: np.float64}.get(
        fn, np.uint32)
    check(isinstance(r, np.ndarray) and r.dtype == want and r.flags.c_contiguous,
          f"{fn.__name__}(size={size!r}) -> {type(r)}")
    if total is not None:
        check(r.size == total, "array size")
    check(r.nbytes < 32 or r.any(), "32+ zero bytes in an array")
    if fn is arc4py.random:
        check(bool(((r >= 0.0) & (r < 1.0)).all()), "random(size=) range")


def op_fill(d):
    buf = make_buffer(d)
    valid, nbytes, snap = describe(buf)
    fn = d.pick([arc4py.fill, arc4py.fill, "keystream_into"])
    if fn == "keystream_into":
        key, nonce, counter, backend = bytes(32), bytes(8), 0, None
        ok, r = call(arc4py.chacha20_keystream_into, key, nonce, buf,
                     counter=counter, backend=backend)
    else:
        ok, r = call(fn, buf)
    name = "fill" if fn is arc4py.fill else "chacha20_keystream_into"
    if ok:
        check(valid is not False, f"{name} accepted {type(buf).__name__} "
              f"{getattr(buf, 'dtype', '')} {getattr(buf, 'flags', '')}")
        check(r == nbytes, f"{name} returned {r}, buffer has {nbytes} bytes")
        after = buffer_bytes(buf)
        if fn is arc4py.fill:
            check(nbytes < 32 or any(after), f"{name} left 32+ zero bytes")
        else:
            check(after == arc4py.chacha20_keystream(key, nonce, nbytes),
                  "keystream_into differs from keystream")
    else:
        check(valid is not True or isinstance(r, MemoryError),
              f"{name} refused a valid {type(buf).__name__} "
              f"{getattr(buf, 'dtype', '')}: {r!r}")
        if snap is not None:
            if isinstance(snap, list):
                now = (object_leaves(buf) if not isinstance(buf, ctypes.Array)
                       else [id(buf[i]) for i in range(len(buf))])
                check(now == snap, f"{name} raised {r!r} but changed objects")
            else:
                check(buffer_bytes(buf) == snap, f"{name} raised {r!r} but "
                      f"changed the buffer")
        if np is not None and isinstance(buf, np.ndarray) and buf.dtype.hasobject:
            check(isinstance(r, TypeError), f"object array: {r!r}")
    if isinstance(buf, mmap.mmap) and not buf.closed:
        buf.close()


def reference(key, nonce, length, counter):
    """OpenSSL's keystream.  Recent ``cryptography`` releases refuse a stream
    whose low 32-bit counter word would wrap, so an 8-byte-nonce stream that
    crosses a multiple of 2**32 blocks is asked for in parts, each at its own
    counter (the 12-byte layout never wraps: arc4py refuses that first)."""
    parts = []
    while True:
        to_wrap = 2**32 - (counter & 0xFFFFFFFF)
        part = length if len(nonce) == 12 else min(length, to_wrap * 64)
        full = (counter % 2**(8 * (16 - len(nonce)))).to_bytes(
            16 - len(nonce), "little") + nonce
        parts.append(Cipher(algorithms.ChaCha20(key, full), None)
                     .encryptor().update(bytes(part)))
        length -= part
        counter += to_wrap
        if length <= 0:
            return b"".join(parts)


def op_keystream(d):
    key = key_like(d, d.pick(KEY_LENS) if d.chance(60) else 32)
    nonce = key_like(d, d.pick(KEY_LENS) if d.chance(60) else d.pick([8, 12]))
    length = size_arg(d, limit=1 << 14)
    c = d.byte() % 4
    if c == 0:
        counter = 0
    elif c == 1:
        counter = d.pick([2 ** 32, 2 ** 64]) - d.int_in(0, 70)
    else:
        counter = wrap_int(d, raw_int(d))
    names = list(arc4py.backends()) + ["avx512", "neon", "generic"]
    b = d.byte() % 6
    if b < 2:
        backend = None
    elif b < 4:
        backend = d.pick(names)
    elif b == 4:
        backend = d.text()
        if d.chance(60):
            backend = d.pick(names) + d.pick(["\x00", "\x00x", " ", "é", "\udcff"])
    else:
        backend = d.pick([b"avx2", 3, None, ["generic"]])
    ok, r = call(arc4py.chacha20_keystream, key, nonce, length, counter=counter,
                 backend=backend)
    if not ok:
        return
    # It succeeded: every argument must have been a valid one.
    kb = bytes(memoryview(key)) if not isinstance(key, str) else None
    nb = bytes(memoryview(nonce)) if not isinstance(nonce, str) else None
    n = as_int(length)
    ctr = as_int(counter)
    check(isinstance(backend, (str, type(None))), f"backend {backend!r} accepted")
    check(backend is None or backend in arc4py.backends(),
          f"backend {backend!r} accepted")
    check(kb is not None and len(kb) == 32, f"key of {kb!r} accepted")
    check(nb is not None and len(nb) in (8, 12), f"nonce {nb!r} accepted")
    check(n is not None and n >= 0 and not isinstance(length, float), "length")
    check(ctr is not None and ctr >= 0, f"counter {counter!r} accepted")
    blocks = max((n + 63) // 64, 1)
    limit = 2 ** 32 if len(nb) == 12 else 2 ** 64
    check(ctr + blocks <= limit, f"counter {ctr} + {blocks} blocks passed 2**"
          f"{32 if len(nb) == 12 else 64}")
    check(type(r) is bytes and len(r) == n, "keystream length")
    if Cipher is not None and n <= 1 << 14:
        check(r == reference(kb, nb, n, ctr), f"keystream differs from the "
              f"reference (backend {backend}, counter {ctr}, {n} bytes)")


def op_random_class(d):
    r = arc4py.Random()
    k = d.byte() % 6
    if k == 0:
        ok, e = call(r.getstate)
        check(not ok and isinstance(e, NotImplementedError), "getstate")
    elif k == 1:
        ok, e = call(r.setstate, d.pick([None, (3, (), None), 5]))
        check(not ok and isinstance(e, NotImplementedError), "setstate")
    elif k == 2:
        check(r.seed(d.pick([None, 1, "x", b"y", 2 ** 100])) is None, "seed")
    elif k == 3:
        a = guard(raw_int(d), 1 << 20)
        ok, x = call(r.randrange, a)
        if ok:
            check(0 <= x < a, "randrange")
    elif k == 4:
        lst = list(range(d.int_in(0, 30)))
        r.shuffle(lst)
        check(sorted(lst) == list(range(len(lst))), "shuffle")
    else:
        ok, x = call(r.uniform, 1.0, 2.0)
        check(ok and 1.0 <= x <= 2.0, "uniform")


def op_bitgenerator(d):
    if np is None:
        return
    k = d.byte() % 6
    if k == 0:
        seedless = np.random.bit_generator.SeedlessSeedSequence()
        seed = d.pick([None, 0, 1, 2 ** 64, "x", b"", np.random.SeedSequence(1),
                       seedless])
        ok, bg = call(arc4py.BitGenerator, seed)
        check(ok == (seed is None or seed is seedless),
              f"BitGenerator({seed!r}) -> {ok}")
        return
    bg = arc4py.BitGenerator()
    if k == 1:
        size = size_tuple(d)
        total = elements(size)
        if total is not None and MIB // 8 < total < HUGE:
            return
        ok, r = call(bg.random_raw, size)
        if ok and size is not None:
            check(isinstance(r, np.ndarray) and r.dtype == np.uint64, "random_raw")
    elif k == 2:
        ok, e = call(setattr, bg, "state", d.pick([None, {}, {"state": 1}]))
        check(not ok, "setting state succeeded")
    elif k == 3:
        g = np.random.Generator(bg)
        lo = raw_int(d) % 1000
        v = g.integers(lo, lo + 10, size=d.int_in(0, 20))
        check(((v >= lo) & (v < lo + 10)).all(), "integers")
        x = g.random(d.int_in(0, 20))
        check(((x >= 0) & (x < 1)).all(), "random")
    elif k == 4:
        # (numpy's own spawn() loops over n: no huge n here)
        n = d.pick([0, 1, 3, -1, "x", None, 2.0])
        ok, kids = call(bg.spawn, n)
        if ok:
            raws = [k.random_raw() for k in kids] + [bg.random_raw()]
            check(len(set(raws)) == len(raws), "spawned generators repeat")
        ok, other = call(bg.jumped, d.pick([1, 0, 5, -1, "x", 1.5]))
        if ok:
            check(other.random_raw() != bg.random_raw(), "jumped generator repeats")
    else:
        import pickle
        bg2 = pickle.loads(pickle.dumps(bg))
        check(bg2.random_raw() != bg.random_raw(), "pickled copy repeats")


OPS = [op_arc4random_buf, op_scalars, op_bounded, op_arrays, op_fill, op_fill,
       op_keystream, op_keystream, op_random_class, op_bitgenerator]
COUNTS = [0] * len(OPS)


def TestOneInput(raw):
    d = Data(raw)
    i = d.byte() % len(OPS)
    COUNTS[i] += 1
    OPS[i](d)


# ---- drivers ---------------------------------------------------------------------

def run_random(n, seed=None, max_seconds=None, report=None):
    """Feed ``n`` random inputs to the harness (no atheris).  Returns the
    number run.  A finding propagates, with the input in its message."""
    import random as stdrandom
    rnd = stdrandom.Random(seed)
    start = time.monotonic()
    done = 0
    for done in range(1, n + 1):
        raw = rnd.randbytes(rnd.choice([4, 16, 64, 200]))
        try:
            TestOneInput(raw)
        except BaseException as e:
            raise Finding(f"input {raw.hex()} (run {done}): {type(e).__name__}: "
                          f"{e}") from e
        if max_seconds is not None and time.monotonic() - start > max_seconds:
            break
        if report and done % report == 0:
            print(f"#{done} in {time.monotonic() - start:.1f}s", flush=True)
    return done


def main(argv):
    if len(argv) > 1 and argv[1] == "--random":
        n = int(argv[2]) if len(argv) > 2 else 20000
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else None
        t0 = time.monotonic()
        done = run_random(n, seed, report=max(n // 10, 1))
        print(f"fuzz_api --random: {done} executions in "
              f"{time.monotonic() - t0:.1f}s, no finding; per operation: "
              + ", ".join(f"{op.__name__[3:]}={c}" for op, c in zip(OPS, COUNTS)))
        return 0
    if atheris is None:
        print("fuzz_api: atheris is not installed (pip install atheris); "
              "use --random N", file=sys.stderr)
        return 2
    # Coverage of the harness's own branches (which argument kinds were
    # built) guides the mutations, besides arc4py's Python code.
    atheris.instrument_func(TestOneInput)
    for fn in list(globals().values()):
        if callable(fn) and getattr(fn, "__module__", None) == __name__ \
                and hasattr(fn, "__code__"):
            globals()[fn.__name__] = atheris.instrument_func(fn)
    OPS[:] = [globals()[op.__name__] for op in OPS]
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
