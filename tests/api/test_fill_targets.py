"""fill() and chacha20_keystream_into(): the buffers they refuse (not a
buffer, read-only, non-contiguous, ctypes memory that hides pointers,
however it is reached) with their exact error type, and the buffers they
fill."""
import array
import mmap

import pytest

import arc4py
from helpers import run_child

KEY = bytes(range(32))
NONCE8 = bytes(8)


# ---- fill ------------------------------------------------------------------

@pytest.mark.parametrize("target", [3, "abc", None, 1.5, [0, 0]])
def test_fill_not_a_buffer(target):
    with pytest.raises(TypeError):
        arc4py.fill(target)


def test_fill_read_only_buffers(tmp_path):
    with pytest.raises(TypeError):
        arc4py.fill(b"abc")
    with pytest.raises(TypeError):
        arc4py.fill(memoryview(b"x"))
    ro = bytearray(4)
    with pytest.raises(TypeError):
        arc4py.fill(memoryview(ro).toreadonly())
    assert ro == bytearray(4)
    path = tmp_path / "data"
    path.write_bytes(b"\0" * 4096)
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            with pytest.raises(TypeError):
                arc4py.fill(m)
        finally:
            m.close()
    assert path.read_bytes() == b"\0" * 4096


def test_fill_read_only_numpy():
    np = pytest.importorskip("numpy")
    a = np.zeros(16, dtype=np.uint8)
    a.flags.writeable = False
    with pytest.raises(TypeError):
        arc4py.fill(a)
    assert not a.any()


def test_fill_non_contiguous():
    data = bytearray(10)
    with pytest.raises((ValueError, BufferError)):
        arc4py.fill(memoryview(data)[::2])
    assert data == bytearray(10)


def test_fill_non_contiguous_numpy():
    np = pytest.importorskip("numpy")
    base = np.zeros((4, 4))
    with pytest.raises((ValueError, BufferError)):
        arc4py.fill(base[:, 1])
    with pytest.raises((ValueError, BufferError)):
        arc4py.fill(np.zeros((4, 4), order="F"))
    with pytest.raises((ValueError, BufferError)):
        arc4py.fill(np.zeros((4, 6), dtype=np.uint8)[:, ::2])
    assert not base.any()


def test_fill_edge_cases():
    assert arc4py.fill(bytearray()) == 0
    assert arc4py.fill(memoryview(bytearray())) == 0
    b = bytearray(64)
    assert arc4py.fill(b) == 64 and any(b)
    # A writable memoryview slice fills only that slice.
    b = bytearray(64)
    assert arc4py.fill(memoryview(b)[16:48]) == 32
    assert b[:16] == bytes(16) and b[48:] == bytes(16) and any(b[16:48])


def test_fill_array_array():
    a = array.array("I", [0] * 100)
    assert arc4py.fill(a) == 100 * a.itemsize
    assert any(a)
    d = array.array("d", [0.0] * 8)
    assert arc4py.fill(d) == 64


def test_fill_mmap():
    m = mmap.mmap(-1, 8192, access=mmap.ACCESS_WRITE)
    try:
        assert arc4py.fill(m) == 8192
        assert any(m[:])
    finally:
        m.close()
    m = mmap.mmap(-1, 100)
    try:
        assert arc4py.fill(m) == 100
    finally:
        m.close()


@pytest.mark.parametrize("dtype,shape", [
    ("uint8", (64,)), ("int16", (8, 8)), ("uint32", (3, 5, 7)),
    ("float64", (100,)), ("complex128", (4, 4)), ("uint64", ()),
    ("int8", (1 << 16,)), ("float32", (2, 0, 3)),
])
def test_fill_numpy(dtype, shape):
    np = pytest.importorskip("numpy")
    a = np.zeros(shape, dtype=dtype)
    assert arc4py.fill(a) == a.nbytes
    if a.nbytes >= 8:
        assert any(a.tobytes())


def test_fill_numpy_contiguous_slice():
    np = pytest.importorskip("numpy")
    a = np.zeros((8, 8), dtype=np.uint32)
    assert arc4py.fill(a[2:4]) == 2 * 8 * 4
    assert not a[:2].any() and not a[4:].any() and a[2:4].any()


# ---- ctypes buffers that hide pointers ctypes follows on read --------------------

def _pointer_holders():
    """ctypes objects whose memory holds a py_object, c_char_p or c_wchar_p,
    most of them behind a format that does not say so."""
    import ctypes as C

    class InUnion(C.Union):  # exports "B"
        _fields_ = [("o", C.py_object), ("n", C.c_uint64)]

    class Packed(C.Structure):  # _pack_: exports "B" (before 3.14)
        # The layout _pack_ implied until 3.14, which deprecates leaving it
        # unsaid (older Pythons ignore _layout_).
        _layout_ = "ms"
        _pack_ = 1
        _fields_ = [("a", C.c_uint8), ("o", C.py_object)]

    class ColonName(C.Structure):  # a ':' in a field name
        _fields_ = [("x:y", C.c_int), ("o", C.py_object)]

    class HoldsCharP(C.Structure):
        _fields_ = [("n", C.c_int), ("s", C.c_char_p)]

    class Nested(C.Union):  # an array of structures inside a union
        _fields_ = [("inner", HoldsCharP * 3), ("n", C.c_int)]

    class Base(C.Structure):
        _fields_ = [("w", C.c_wchar_p)]

    class Derived(Base):  # the pointer is in the base class's fields
        _fields_ = [("n", C.c_int)]

    class MyCharP(C.c_char_p):  # a subclass of a pointer type
        pass

    return [InUnion(), Packed(), ColonName(), HoldsCharP(), Nested(),
            Derived(), (C.c_char_p * 4)(), (C.c_wchar_p * 2)(),
            ((C.py_object * 2) * 2)(), (MyCharP * 2)(), C.py_object(),
            C.c_char_p(), C.c_wchar_p()]


@pytest.mark.parametrize("index", range(13))
def test_ctypes_pointer_holders_refused(index):
    obj = _pointer_holders()[index]
    before = bytes(memoryview(obj).cast("B"))
    for target in (obj, memoryview(obj), memoryview(obj).cast("B")):
        with pytest.raises(TypeError, match="pointer"):
            arc4py.fill(target)
        with pytest.raises(TypeError, match="pointer"):
            arc4py.chacha20_keystream_into(KEY, NONCE8, target)
    # nothing was written: reading the fields is still safe
    assert bytes(memoryview(obj).cast("B")) == before


@pytest.mark.parametrize("alias", ["PickleBuffer", "from_buffer",
                                   "from_buffer of a memoryview",
                                   "array field of the holder"])
def test_ctypes_pointer_holder_behind_an_alias_refused(alias):
    """PickleBuffer and ctypes aliases (from_buffer, a plain array field of
    a union that also holds a py_object) export the holder's memory:
    refused like the holder itself."""
    import ctypes as C
    import pickle

    class Holder(C.Union):
        _fields_ = [("o", C.py_object), ("b", C.c_ubyte * 8)]

    obj = Holder()
    obj.o = "keep me"
    target = {
        "PickleBuffer": lambda: pickle.PickleBuffer(obj),
        "from_buffer": lambda: (C.c_ubyte * 8).from_buffer(obj),
        "from_buffer of a memoryview":
            lambda: (C.c_ubyte * 8).from_buffer(memoryview(obj)),
        "array field of the holder": lambda: obj.b,
    }[alias]()
    before = bytes(memoryview(obj).cast("B"))
    with pytest.raises(TypeError, match="pointer"):
        arc4py.fill(target)
    with pytest.raises(TypeError, match="pointer"):
        arc4py.chacha20_keystream_into(KEY, NONCE8, target)
    assert bytes(memoryview(obj).cast("B")) == before
    assert obj.o == "keep me"


# Each made so that the ctypes module is not where a check could look it up,
# or the holder's format is hidden behind views; run in a child, so a crash
# (a fill that got through, then a read of the planted pointer) fails the
# test rather than the run.  The child prints "refused" on TypeError, and
# reads the field in any case.
_BYPASSES = {
    "made from _ctypes alone, seen through a cast": """
        import _ctypes
        import arc4py
        class P(_ctypes._SimpleCData):
            _type_ = "O"
        class A(_ctypes.Array):
            _type_ = P
            _length_ = 4
        obj = A()
        obj[0] = "keep me"
        target = memoryview(obj).cast("B")
    """,
    "a union from _ctypes alone (format B)": """
        import _ctypes
        import arc4py
        class P(_ctypes._SimpleCData):
            _type_ = "O"
        class U8(_ctypes._SimpleCData):
            _type_ = "Q"
        class U(_ctypes.Union):
            _fields_ = [("o", P), ("n", U8)]
        obj = U()
        obj.o = "keep me"
        target = obj
    """,
    "made before ctypes left sys.modules": """
        import ctypes, sys
        obj = (ctypes.py_object * 4)()
        obj[0] = "keep me"
        del sys.modules["ctypes"]
        import arc4py
        target = memoryview(obj).cast("B")
    """,
    "ctypes and _ctypes gone from sys.modules after import": """
        import arc4py, ctypes, sys
        obj = (ctypes.py_object * 4)()
        obj[0] = "keep me"
        del sys.modules["ctypes"], sys.modules["_ctypes"]
        target = memoryview(obj).cast("B")
    """,
    "a chain of memoryviews": """
        import ctypes, arc4py
        obj = (ctypes.py_object * 4)()
        obj[0] = "keep me"
        target = memoryview(memoryview(memoryview(obj).cast("B"))[0:16])
    """,
    "a PickleBuffer over a cast": """
        import ctypes, pickle, arc4py
        obj = (ctypes.py_object * 4)()
        obj[0] = "keep me"
        target = pickle.PickleBuffer(memoryview(obj).cast("B"))
    """,
}


@pytest.mark.parametrize("bypass", sorted(_BYPASSES))
def test_ctypes_pointer_holder_refused_however_reached(bypass):
    code = _BYPASSES[bypass] + """
        try:
            arc4py.fill(target)
        except TypeError as exc:
            assert "pointer" in str(exc), exc
            print("refused")
        try:
            arc4py.chacha20_keystream_into(bytes(32), bytes(8), target)
        except TypeError:
            print("refused")
        assert (obj[0] if hasattr(obj, "__getitem__") else obj.o) == "keep me"
    """
    proc = run_child(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.split() == ["refused", "refused"], proc.stdout


# Memory that a pointer-holding ctypes object was made over, or that a
# class's __buffer__ (PEP 688) hands out: each filled, then read, in a child.
# "holder" is the py_object array whose first item is read afterwards.
_ALIASES = {
    "__buffer__ returning a cast of a py_object array": """
        import ctypes, sys, arc4py
        if sys.version_info < (3, 12):
            print("skip: __buffer__ in Python classes is 3.12+ (PEP 688)")
            raise SystemExit
        holder = (ctypes.py_object * 4)()
        holder[0] = "keep me"
        class Exporter:
            def __buffer__(self, flags):
                return memoryview(holder).cast("B")
        target = Exporter()
    """,
    "from_address over a ctypes byte array": """
        import ctypes, arc4py
        target = (ctypes.c_ubyte * 32)()
        holder = (ctypes.py_object * 4).from_address(ctypes.addressof(target))
        holder[0] = "keep me"
    """,
    "a byte array from_address over a py_object array": """
        import ctypes, arc4py
        holder = (ctypes.py_object * 4)()
        holder[0] = "keep me"
        target = (ctypes.c_ubyte * 32).from_address(ctypes.addressof(holder))
    """,
    "from_buffer over a bytearray, filling the bytearray": """
        import ctypes, arc4py
        target = bytearray(32)
        holder = (ctypes.py_object * 4).from_buffer(target)
        holder[0] = "keep me"
    """,
    "from_buffer over an mmap, filling the mmap": """
        import ctypes, mmap, arc4py
        target = mmap.mmap(-1, 4096)
        holder = (ctypes.py_object * 4).from_buffer(target)
        holder[0] = "keep me"
    """,
    "from_buffer over an array.array, filling the array": """
        import array, ctypes, arc4py
        target = array.array("B", bytes(32))
        holder = (ctypes.py_object * 4).from_buffer(target)
        holder[0] = "keep me"
    """,
    "from_address over an mmap another view exports too": """
        import ctypes, mmap, arc4py
        target = mmap.mmap(-1, 4096)
        view = memoryview(target)
        address = ctypes.addressof(ctypes.c_char.from_buffer(target))
        holder = (ctypes.py_object * 4).from_address(address + 64)
        holder[0] = "keep me"
    """,
    "from_buffer over a bytearray, filling a view of it": """
        import ctypes, arc4py
        data = bytearray(64)
        holder = (ctypes.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
        target = memoryview(data)[20:30]
    """,
    # The holder's view shares the memoryview's one export of the owner:
    # the owner counts one export all the same.
    "from_buffer over a memoryview, filling that view": """
        import ctypes, arc4py
        data = bytearray(64)
        target = memoryview(data)
        holder = (ctypes.py_object * 2).from_buffer(target, 16)
        holder[0] = "keep me"
    """,
    "from_buffer over a slice of a memoryview, filling the view": """
        import array, ctypes, arc4py
        target = memoryview(array.array("B", bytes(64)))
        holder = (ctypes.py_object * 2).from_buffer(target[16:32])
        holder[0] = "keep me"
    """,
    "from_buffer over a memoryview, filling a PickleBuffer of it": """
        import ctypes, mmap, pickle, arc4py
        view = memoryview(mmap.mmap(-1, 4096))
        holder = (ctypes.py_object * 2).from_buffer(view, 16)
        holder[0] = "keep me"
        target = pickle.PickleBuffer(view)
    """,
    "from_buffer over a memoryview, filling a view of a PickleBuffer of it": """
        import ctypes, pickle, arc4py
        view = memoryview(bytearray(64))
        holder = (ctypes.py_object * 2).from_buffer(view, 16)
        holder[0] = "keep me"
        target = memoryview(pickle.PickleBuffer(view))
    """,
    # numpy counts no exports: one taken from an array is not passed on
    # to the owner under it.
    "from_buffer over a memoryview, filling a numpy array over it": """
        import ctypes, arc4py
        try:
            import numpy
        except ImportError:
            print("skip: numpy is not installed"); raise SystemExit
        view = memoryview(bytearray(64))
        holder = (ctypes.py_object * 2).from_buffer(view, 16)
        holder[0] = "keep me"
        target = numpy.frombuffer(view, numpy.uint8)
        del view
    """,
    "from_buffer over a numpy array over a bytearray, filling the array": """
        import ctypes, arc4py
        try:
            import numpy
        except ImportError:
            print("skip: numpy is not installed"); raise SystemExit
        target = numpy.frombuffer(bytearray(64), numpy.uint8)
        holder = (ctypes.py_object * 2).from_buffer(target, 16)
        holder[0] = "keep me"
    """,
    # numpy's own base is followed, not what a subclass calls its base.
    "from_buffer over a bytearray, filling a numpy subclass over it": """
        import ctypes, arc4py
        try:
            import numpy
        except ImportError:
            print("skip: numpy is not installed"); raise SystemExit
        class Rebased(numpy.ndarray):
            base = property(lambda self: numpy.zeros(8, numpy.uint8))
        data = bytearray(64)
        target = numpy.frombuffer(data, numpy.uint8).view(Rebased)
        holder = (ctypes.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
    """,
    "from_buffer over a class's __buffer__, which hands out a kept view": """
        import ctypes, sys, arc4py
        if sys.version_info < (3, 12):
            print("skip: __buffer__ in Python classes is 3.12+ (PEP 688)")
            raise SystemExit
        class Exporter:
            view = memoryview(bytearray(64))
            def __buffer__(self, flags):
                return self.view
        target = Exporter()
        holder = (ctypes.py_object * 2).from_buffer(target, 16)
        holder[0] = "keep me"
    """,
}


@pytest.mark.parametrize("alias", sorted(_ALIASES))
def test_memory_a_pointer_holder_reads_is_refused(alias, child):
    code = _ALIASES[alias] + """
        for call in (arc4py.fill,
                     lambda b: arc4py.chacha20_keystream_into(
                         bytes(32), bytes(8), b)):
            try:
                call(target)
            except TypeError as exc:
                assert "pointer" in str(exc), exc
                print("refused")
        assert holder[0] == "keep me"
    """
    proc = child(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    if proc.stdout.startswith("skip: "):
        pytest.skip(proc.stdout[len("skip: "):].strip())
    assert proc.stdout.split() == ["refused", "refused"], proc.stdout


def test_buffer_method_is_checked_as_it_answered(child):
    """A __buffer__ (PEP 688) that answers with plain bytes once and a
    py_object array after: the memory filled is the memory checked."""
    proc = child("""
        import ctypes, sys, arc4py
        if sys.version_info < (3, 12):
            print("skip"); raise SystemExit
        holder = (ctypes.py_object * 4)()
        holder[0] = "keep me"
        plain = bytearray(32)
        class Fickle:
            calls = 0
            def __buffer__(self, flags):
                self.calls += 1
                if self.calls == 1:
                    return memoryview(plain)
                return memoryview(holder).cast("B")
        for call in (arc4py.fill, lambda b: arc4py.chacha20_keystream_into(
                bytes(32), bytes(8), b)):
            target = Fickle()
            try:
                print(call(target))
            except TypeError as exc:
                assert "pointer" in str(exc), exc
                print("refused")
            assert target.calls == 1, target.calls
        assert holder[0] == "keep me"
        assert any(plain)
    """)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    if proc.stdout.split() == ["skip"]:
        pytest.skip("__buffer__ in Python classes is 3.12+ (PEP 688)")
    assert proc.stdout.split() == ["32", "32"], proc.stdout


def test_memory_viewed_elsewhere_without_pointers_still_fills():
    import ctypes as C
    data = bytearray(64)
    view = memoryview(data)          # a second export of data
    plain = (C.c_uint32 * 4).from_buffer(data)
    assert arc4py.fill(data) == 64 and any(data)
    assert arc4py.fill(view[8:24]) == 16
    ubytes = (C.c_ubyte * 16)()
    alias = (C.c_double * 2).from_address(C.addressof(ubytes))
    assert arc4py.fill(ubytes) == 16 and any(ubytes)
    assert arc4py.chacha20_keystream_into(KEY, NONCE8, alias) == 16
    del view, plain


def test_array_and_mmap_export_counts_read_right():
    """fill() believes array.array's and mmap's export counts (private to
    their modules) only once it has seen them read right here; else it
    searches the live ctypes objects on every fill."""
    assert arc4py._core._counts_right(array.array, True)
    assert arc4py._core._counts_right(mmap.mmap, False)
    a = array.array("B", bytes(8))
    sole_export = arc4py._core._unsearched_owner
    assert sole_export(a) is False     # no export at all
    with memoryview(a):
        assert sole_export(a) is True
        with memoryview(a):
            assert sole_export(a) is False


def test_bytearray_fill_after_its_holder_is_gone():
    import ctypes as C
    data = bytearray(32)
    holder = (C.py_object * 4).from_buffer(data)
    with pytest.raises(TypeError, match="pointer"):
        arc4py.fill(data)
    del holder
    assert arc4py.fill(data) == 32


def test_ctypes_pointer_holder_behind_numpy_refused():
    np = pytest.importorskip("numpy")
    obj = _pointer_holders()[0]
    a = np.asarray(memoryview(obj).cast("B"))  # writable view of the union
    assert a.flags.writeable
    with pytest.raises(TypeError, match="pointer"):
        arc4py.fill(a)
    with pytest.raises(TypeError, match="pointer"):
        arc4py.fill(a[1:3])


def test_ctypes_plain_numeric_types_still_fill():
    import ctypes as C

    class Point(C.Structure):
        _fields_ = [("x", C.c_double), ("y", C.c_double)]

    class Mixed(C.Union):
        _fields_ = [("pts", Point * 2), ("raw", C.c_uint8 * 32),
                    ("p", C.c_void_p), ("q", C.POINTER(C.c_int))]

    class Flags(C.Structure):
        _fields_ = [("a", C.c_uint32, 3), ("b", C.c_uint32, 29),
                    ("c", C.c_char * 8), ("w", C.c_wchar * 2)]

    for obj in (C.c_uint32(), (C.c_int16 * 10)(), Point(), Mixed(),
                Flags(), (Point * 3)(), C.c_char(), (C.c_char * 16)()):
        n = C.sizeof(obj)
        assert arc4py.fill(obj) == n
        assert arc4py.fill(memoryview(obj)) == n
        assert arc4py.chacha20_keystream_into(KEY, NONCE8, obj) == n
    m = Mixed()
    arc4py.fill(m)
    assert any(m.raw)


def test_numpy_object_dtypes_still_refused():
    np = pytest.importorskip("numpy")
    for a in (np.empty(3, dtype=object),
              np.empty(2, dtype=[("a", "i4"), ("o", "O")]),
              np.empty(2, dtype=[("t", "M8[s]"), ("o", "O")])):
        with pytest.raises(TypeError):
            arc4py.fill(a)
        with pytest.raises(TypeError):
            arc4py.chacha20_keystream_into(KEY, NONCE8, a)
