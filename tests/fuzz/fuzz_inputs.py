"""The inputs of tests/fuzz/fuzz_api.py: a reader over the fuzzer's bytes
(``Data``), hostile integers, sizes and objects, buffers of every kind, keys
and nonces, and the contract's own pieces (``ALLOWED``, ``check``,
``call``, ``reference``: OpenSSL's ChaCha20 keystream).
"""
import array
import atexit
import ctypes
import mmap
import operator
import os
import sys
import tempfile
from decimal import Decimal
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import BUFFER_BYTES, DIRECT_BYTES, REKEY_BYTES

try:
    import numpy as np
except ImportError:
    np = None

ALLOWED = (TypeError, ValueError, OverflowError, MemoryError, BufferError,
           IndexError, NotImplementedError, ImportError)

MIB = 1 << 20
HUGE = 1 << 61  # at or above this, a size must fail, never allocate


class HostileError(Exception):
    """Raised by the harness's own hostile objects: passing it through is
    the right behaviour."""


class Finding(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise Finding(msg)


# ---- input decoding --------------------------------------------------------------

class Data:
    """A deterministic reader over the fuzzer's bytes (zeros when exhausted)."""

    def __init__(self, raw):
        self.raw = raw
        self.i = 0

    def byte(self):
        if self.i < len(self.raw):
            self.i += 1
            return self.raw[self.i - 1]
        return 0

    def int_in(self, lo, hi):
        span = hi - lo + 1
        nbytes = max(1, (span.bit_length() + 7) // 8)
        v = 0
        for _ in range(nbytes):
            v = (v << 8) | self.byte()
        return lo + v % span

    def pick(self, seq):
        return seq[self.int_in(0, len(seq) - 1)]

    def chance(self, num, den=256):
        return self.byte() * den < num * 256

    def take(self, n):
        out = self.raw[self.i:self.i + n]
        self.i += len(out)
        return out + bytes(n - len(out))

    def text(self, maxlen=12):
        n = self.int_in(0, maxlen)
        b = self.take(n)
        kind = self.byte() % 3
        if kind == 0:
            return b.decode("latin-1")
        if kind == 1:
            return b.decode("utf-8", "replace")
        return "".join(chr(0x20 + x % 0x5f) for x in b)


# the generator's limits: first direct request, what a refill leaves, a buffer
_DIRECT, _REFILL = DIRECT_BYTES, BUFFER_BYTES - REKEY_BYTES
SPECIAL = sorted({0, 1, 2, 3, 4, 7, 8, 12, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65,
                  127, 128, 255, 256, 257, 1023, 1024, _DIRECT - 1, _DIRECT,
                  _DIRECT + 1, _REFILL - 1, _REFILL, _REFILL + 1, BUFFER_BYTES,
                  4095, 4096, 16383, 16384, 16385, 65535, 65536,
                  MIB - 1, MIB, MIB + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2,
                  2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53, 2 ** 61, 2 ** 62,
                  2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, 2 ** 64 + 1, 2 ** 100,
                  10 ** 30, 2 ** 1000, sys.maxsize, sys.maxsize + 1})


def raw_int(d):
    kind = d.byte() % 6
    if kind <= 2:
        v = d.pick(SPECIAL)
        v += d.int_in(-2, 2) if d.chance(64) else 0
    elif kind == 3:
        v = d.int_in(0, 5000)
    elif kind == 4:
        v = d.int_in(0, 2 ** 70)
    else:
        v = int.from_bytes(d.take(d.int_in(0, 40)), "little")
    return -v if d.chance(40) else v


def guard(v, limit=MIB):
    """Keep a size that would really be allocated at or below ``limit``;
    a size of HUGE or more (which must fail) is left alone."""
    if limit < v < HUGE:
        return v % (limit + 1)
    return v


class Idx:
    """An object with an __index__ that returns ``v`` (or raises it)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        if isinstance(self.v, BaseException):
            raise self.v
        return self.v

    def __repr__(self):
        return f"Idx({self.v!r})"


def wrap_int(d, v):
    """``v`` as one of many int-like (or not) objects."""
    k = d.byte() % 20
    if k < 8:
        return v
    if k == 8:
        return Idx(v)
    if k == 9:
        return Idx(HostileError("__index__ raised"))
    if k == 10:
        return Idx(str(v))          # __index__ returning a non-int
    if k == 11:
        return bool(v & 1)
    if k == 12:
        try:
            return float(v)
        except OverflowError:
            return float("inf")
    if k == 13:
        return d.pick([float("nan"), float("inf"), -0.0, 1.5, 3.0])
    if k == 14:
        return str(v) if d.chance(128) else str(v).encode()
    if k == 15:
        return d.pick([None, [], (), {}, object(), 1j, Decimal(3), Fraction(7, 2)])
    if k == 16 and np is not None:
        for t in (np.int64, np.uint64, np.int32, np.uint8):
            try:
                with np.errstate(all="ignore"):
                    return t(v)
            except (OverflowError, ValueError):
                continue
        return v
    if k == 17 and np is not None:
        return np.float64(1.0)
    if k == 18:
        return type("IntSub", (int,), {})(v)
    return v


def as_int(x):
    """The int a call would see in ``x`` (None if it is no int)."""
    if isinstance(x, float) or (np is not None and isinstance(x, np.floating)):
        return None
    try:
        return operator.index(x)
    except Exception:
        return None


def size_arg(d, limit=MIB):
    v = raw_int(d)
    if d.chance(128):
        v = d.int_in(0, 300)
    return wrap_int(d, guard(v, limit))


# ---- buffers ------------------------------------------------------------------------

_RO_FILE = None


def _ro_file():
    global _RO_FILE
    if _RO_FILE is None:
        fd, path = tempfile.mkstemp(prefix="arc4py-fuzz-")
        os.write(fd, bytes(range(256)) * 16)
        os.close(fd)
        _RO_FILE = open(path, "rb")
        if os.name == "nt":  # Windows removes no open file: at exit, closed
            atexit.register(_remove_ro_file, path)
        else:
            os.unlink(path)
    return _RO_FILE


def _remove_ro_file(path):
    _RO_FILE.close()
    try:
        os.unlink(path)
    except OSError:  # a mapping of it still open
        pass


NP_DTYPES = ["u1", "i1", "u2", "<i2", ">i2", "u4", "<i4", ">u4", "u8", "i8", "f2",
             "f4", "f8", "g", "c8", "c16", "?", "S5", "U3", "V7", "M8[s]",
             "m8[ns]", "O", [("a", "u1"), ("b", "<f8")], [("t", "M8[s]"), ("o", "O")],
             [("x", "i4"), ("o", "O")], [("s", "S3"), ("n", "u2", (2,))],
             ("u1", (3,)), ("O", (2,))]
ARRAY_CODES = list("bBhHiIlLqQfd") + (["u"] if sys.version_info < (3, 16) else [])


def make_numpy(d):
    dt = np.dtype(d.pick(NP_DTYPES))
    ndim = d.int_in(0, 3)
    shape = tuple(d.int_in(0, 9) for _ in range(ndim))
    order = "F" if d.chance(60) else "C"
    a = np.zeros(shape, dtype=dt, order=order)
    op = d.byte() % 12
    if op == 1 and a.ndim:
        a = a[::d.int_in(1, 3)]
    elif op == 2 and a.ndim >= 2:
        a = a.T
    elif op == 3 and a.ndim:
        a = a[::-1]
    elif op == 4:
        a = a[np.newaxis]
    elif op == 5 and a.ndim and a.shape[0]:
        a = a[1:]
    elif op == 6:
        a.flags.writeable = False
    elif op == 7:
        a = np.broadcast_to(a, (2,) + a.shape)           # read-only, stride 0
    elif op == 8 and a.ndim and a.size:
        a = np.lib.stride_tricks.as_strided(a, shape=(3,) + a.shape,
                                            strides=(0,) + a.strides,
                                            writeable=True)  # overlapping rows
    elif op == 9 and dt.itemsize and a.size and not dt.hasobject:
        try:
            a = a.view(np.uint8)
        except ValueError:
            pass
    elif op == 10 and a.ndim and a.shape[-1] > 1 and not dt.hasobject:
        a = a[..., 1:]
    elif op == 11:
        a = a.reshape(-1)
    if a.size and dt.hasobject and a.flags.writeable:
        val = None if d.chance(128) else "x"
        if dt.names:
            for name in dt.names:
                if dt[name].hasobject:
                    a[name] = val
        else:
            a[...] = val
    return a


def make_buffer(d):
    k = d.byte() % 17
    n = d.pick([0, 1, 15, 16, 17, 63, 64, 100, _DIRECT - 1, _DIRECT,
                BUFFER_BYTES, 4097, 16384, 70000])
    if k == 0:
        return bytearray(n)
    if k == 1:
        return bytes(n)
    if k == 2:
        return memoryview(bytearray(n))
    if k == 3:
        return memoryview(bytearray(n)).toreadonly()
    if k == 4:
        return memoryview(bytearray(n))[::d.int_in(1, 4)]
    if k == 5:
        mv = memoryview(bytearray(max(n, 8) * 4))
        fmt = d.pick(["I", "d", "b", "Q", "h"])
        try:
            mv = mv.cast(fmt)
            if d.chance(128):
                mv = mv.cast("B").cast(fmt, (2, len(mv) // 2))
        except (TypeError, ValueError):
            pass
        return mv
    if k == 6:
        mv = memoryview(bytearray(16))
        mv.release()
        return mv
    if k == 7:
        return array.array(d.pick(ARRAY_CODES), bytes(
            (n // 8) * 8) if d.chance(200) else [])
    if k == 8:
        m = mmap.mmap(-1, max(n, 1))
        if d.chance(40):
            m.close()
        return m
    if k == 9:
        return mmap.mmap(_ro_file().fileno(), 0, access=mmap.ACCESS_READ)
    if k == 10:
        t = d.pick([ctypes.c_uint8, ctypes.c_int32, ctypes.c_double,
                    ctypes.c_uint64])
        return (t * max(n // 8, 1))()
    if k == 11:
        arr = (ctypes.py_object * 3)()
        for i in range(3):
            arr[i] = "x"
        return arr
    if k == 12:
        import pickle
        return pickle.PickleBuffer(bytearray(n) if d.chance(200) else bytes(n))
    if k == 13:
        return d.pick([None, 3, "abc", 1.5, [1, 2], object(), b"", ""])
    if k >= 14 and np is not None:
        return make_numpy(d)
    return bytearray(n)


def describe(buf):
    """(valid, nbytes, snapshot) for a buffer: valid means fill() must take
    it (writable, C-contiguous, no Python objects in it)."""
    if np is not None and isinstance(buf, np.ndarray):
        valid = (buf.flags.writeable and buf.flags.c_contiguous
                 and not buf.dtype.hasobject)
        # Overlapping views are reported C-contiguous only when they are not.
        if buf.dtype.hasobject:
            snap = object_leaves(buf)
        else:
            snap = buf.tobytes()
        return valid, buf.nbytes, snap
    if isinstance(buf, ctypes.Array) and buf._type_ is ctypes.py_object:
        return False, ctypes.sizeof(buf), [id(buf[i]) for i in range(len(buf))]
    try:
        mv = memoryview(buf)
    except (TypeError, ValueError):
        return False, 0, None
    with mv:
        valid = not mv.readonly and mv.c_contiguous
        if not mv.readonly and mv.nbytes == 0:
            valid = None  # empty: contiguous or not, either answer is right
        return valid, mv.nbytes, mv.tobytes()


def object_leaves(a):
    """What an object array holds: the identity of each str/None it holds
    (the harness puts only those in), the value of everything else."""
    out = []
    stack = list(reversed(a.ravel().tolist())) if a.size else []
    while stack:
        y = stack.pop()
        if isinstance(y, (tuple, list)):
            stack.extend(reversed(y))
        elif isinstance(y, str) or y is None:
            out.append(id(y))
        else:
            out.append(repr(y))
    return out


def buffer_bytes(buf):
    if np is not None and isinstance(buf, np.ndarray):
        return buf.tobytes()
    with memoryview(buf) as mv:
        return mv.tobytes()


# ---- helpers of the operations ----------------------------------------------

def call(fn, *args, **kwargs):
    """(True, result) or (False, exception) for allowed exceptions; anything
    else propagates."""
    try:
        return True, fn(*args, **kwargs)
    except ALLOWED + (HostileError,) as e:
        return False, e


def size_tuple(d):
    kind = d.byte() % 6
    if kind == 0:
        return wrap_int(d, guard(raw_int(d), 1 << 15))
    if kind == 1:
        return ()
    if kind == 2:
        dims = [d.int_in(0, 12) for _ in range(d.int_in(1, 4))]
        return tuple(dims) if d.chance(200) else dims
    if kind == 3:
        return tuple(d.pick([0, 1, 2, -1, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 64,
                             1.5, "3", None]) for _ in range(d.int_in(1, 3)))
    if kind == 4:
        return (1,) * d.int_in(30, 70)
    return d.pick([None, "x", 1.5, object(), [[1, 2]], (2 ** 40, 2 ** 40)])


def elements(size):
    """Number of elements ``size`` asks for, or None if it is not valid."""
    if size is None:
        return None
    v = as_int(size)
    if v is not None and not isinstance(size, bool):
        return v
    try:
        dims = tuple(size)
    except TypeError:
        return None
    total = 1
    for x in dims:
        if isinstance(x, (float, str, bytes)) or x is None:
            return None
        x = as_int(x)
        if x is None:
            return None
        total *= x
    return total


KEY_LENS = [0, 1, 8, 12, 16, 24, 31, 32, 33, 40, 64]


def key_like(d, n):
    raw = d.take(n)
    k = d.byte() % 8
    if k < 4:
        return raw
    if k == 4:
        return bytearray(raw)
    if k == 5:
        return memoryview(raw)
    if k == 6:
        return d.pick([raw.decode("latin-1"), None, n, array.array("B", raw),
                       memoryview(bytearray(raw * 2))[::2]])
    return np.frombuffer(raw, dtype=np.uint8) if np is not None else raw
