"""What ``arc4py bench`` measures: the rows (a kind of call and its bytes
per call) and the columns (arc4py on one core, or a peer: os.urandom,
secrets, numpy, the C library's arc4random through ctypes)."""
import os

from arc4py.bench.timing import loop0, loop1, loop2


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
        self.core = core
        self.key = self.label = f"arc4py:{core}"
        self.description = f"arc4py on the {core} core"

    def job(self, row):
        import arc4py as a
        if row.kind == "u32":
            return loop0, (a.arc4random,)
        if row.kind == "buf":
            return loop1, (a.arc4random_buf, row.size)
        return loop1, (a.fill, bytearray(row.size))


class UrandomSource(Source):
    key = label = "os.urandom"
    description = "os.urandom(n): the getrandom(2) system call per call"

    def job(self, row):
        return loop1, (os.urandom, row.size)


class SecretsSource(Source):
    key = label = "secrets"
    description = "secrets.token_bytes(n)"

    def __init__(self):
        import secrets
        self.token_bytes = secrets.token_bytes

    def job(self, row):
        return loop1, (self.token_bytes, row.size)


class NumpySource(Source):
    key = label = "numpy"
    description = ("numpy.random.default_rng(): bit_generator.random_raw() "
                   "for arc4random, .bytes(n) for the rest (PCG64: not a "
                   "CSPRNG)")

    def __init__(self):
        import numpy
        self.default_rng = numpy.random.default_rng
        self.description += f", numpy {numpy.__version__}"

    def job(self, row):
        rng = self.default_rng()   # one per thread
        if row.kind == "u32":      # numpy's cheapest scalar draw: one word
            return loop0, (rng.bit_generator.random_raw,)
        return loop1, (rng.bytes, row.size)


class LibcSource(Source):
    key = label = "libc"
    description = ("the C library's arc4random() / arc4random_buf() through "
                   "ctypes (the ctypes call overhead dominates small requests)")

    def __init__(self):
        import ctypes

        from arc4py.bench.machine import libc_version
        lib = ctypes.CDLL(None)
        missing = [s for s in ("arc4random", "arc4random_buf")
                   if not hasattr(lib, s)]
        if missing:
            raise LookupError("the C library exports no "
                              + " or ".join(missing)
                              + " (glibc has them from 2.36)")
        version = libc_version()
        if version:
            self.description += f", {version}"

    def job(self, row):
        import ctypes as ct
        lib = ct.CDLL(None)   # own function objects per thread
        if row.kind == "u32":
            f = lib.arc4random
            f.restype = ct.c_uint32
            f.argtypes = ()
            return loop0, (f,)
        f = lib.arc4random_buf
        f.restype = None
        f.argtypes = (ct.c_void_p, ct.c_size_t)
        buf = ct.create_string_buffer(row.size)
        ptr = ct.cast(buf, ct.c_void_p)   # keeps buf alive (ptr._objects)
        return loop2, (f, ptr, ct.c_size_t(row.size))


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
