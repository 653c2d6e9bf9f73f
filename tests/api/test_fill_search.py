"""How fill() finds the ctypes objects that read a buffer's memory as
pointers when the memory's owner is exported elsewhere too: every live one,
whatever its age, type or maker, found by the walk just before the write,
and no collection run by a fill.  Each case runs in a child interpreter, as
a holder missed means random bytes read as pointers (a crash).  The
refusals themselves are in test_fill_targets.py."""
import textwrap

import pytest

# A fill target whose owner is exported elsewhere too (a view held): the
# case that searches.  A missed holder is read after the fill, as a caller
# would: a crash, not a quiet pass.
SETUP = """
        import ctypes, gc, sys, threading, arc4py

        def refused(target):
            try:
                arc4py.fill(target)
            except TypeError as exc:
                assert "pointer" in str(exc), exc
                return True
            return False

        data = bytearray(64)
        held = memoryview(data)
        assert arc4py.fill(data) == 64  # a first search before the case
"""

_CASES = {
    # ctypes loaded again: a second _ctypes module, a second _CData class.
    "ctypes imported again": """
        del sys.modules["ctypes"], sys.modules["_ctypes"]
        import ctypes as again
        holder = (again.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
        check(holder, lambda: holder[0])
    """,
    # A holder type without __weakref__, made after the first search.
    "a type with __slots__ = ()": """
        class Slotted(ctypes.Structure):
            __slots__ = ()
            _fields_ = [("p", ctypes.py_object)]
        holder = Slotted.from_buffer(data, 16)
        holder.p = "keep me"
        gc.collect()
        check(holder, lambda: holder.p)
    """,
    # One such object elsewhere, then an ordinary holder over data.
    "a type with __slots__ = () elsewhere": """
        class Slotted(ctypes.Structure):
            __slots__ = ()
            _fields_ = [("p", ctypes.py_object)]
        other = bytearray(16)
        elsewhere = Slotted.from_buffer(other)
        holder = (ctypes.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
        gc.collect()
        check(holder, lambda: holder[0])
        del holder
        assert arc4py.fill(data) == 64  # the other memory is not data's
    """,
    # gc.callbacks emptied around a collection, then put back.
    "the collector's callbacks taken away and put back": """
        saved = gc.callbacks[:]
        gc.callbacks.clear()
        holder = (ctypes.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
        gc.collect()
        gc.callbacks[:] = saved
        check(holder, lambda: holder[0])
    """,
    # Moved to the oldest generation with no collection.
    "gc.freeze() then gc.unfreeze()": """
        holder = (ctypes.py_object * 2).from_buffer(data, 16)
        holder[0] = "keep me"
        gc.freeze()
        gc.unfreeze()
        check(holder, lambda: holder[0])
    """,
    # Brought back by its own finalizer after its weak references died.
    "resurrected by its finalizer": """
        kept = []

        class Back(ctypes.Structure):
            _fields_ = [("p", ctypes.py_object)]

            def __del__(self):
                kept.append(self)

        made = Back.from_buffer(data, 16)
        made.p = "keep me"
        made.me = made
        del made
        gc.collect()
        holder = kept[0]
        check(holder, lambda: holder.p)
    """,
    # Made by another thread while this one fills other memory.
    "made by another thread": """
        sys.setswitchinterval(1e-6)
        made, stop = [], []

        def maker():
            while not stop and len(made) < 3000:
                mine = bytearray(64)
                view = memoryview(mine)
                hold = (ctypes.py_object * 2).from_buffer(mine, 16)
                hold[0] = "keep me"
                made.append((mine, view, hold))

        thread = threading.Thread(target=maker)
        thread.start()
        while thread.is_alive():
            numbers = [ctypes.c_int() for _ in range(10)]
            arc4py.fill(data)
        stop.append(1)
        thread.join()
        gc.collect()
        for mine, view, hold in made:
            check(hold, lambda: hold[0], mine)
    """,
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_live_holder_is_found_however_it_came(child, case):
    proc = child(SETUP + """
        def check(holder, read, memory=data):
            assert refused(memory), "wrote over a live holder"
            assert read() == "keep me"

CASE
        print("ok")
    """.replace("CASE", textwrap.indent(textwrap.dedent(_CASES[case]),
                                        " " * 8)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_a_weakref_less_holder_type_does_not_refuse_other_fills(child):
    proc = child("""
        import ctypes, arc4py

        class Slotted(ctypes.Structure):
            __slots__ = ()
            _fields_ = [("p", ctypes.py_object)]

        other = bytearray(16)
        elsewhere = Slotted.from_buffer(other)
        data = bytearray(64)
        held = memoryview(data)
        assert arc4py.fill(data) == 64
        assert arc4py.fill(data) == 64
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_a_fill_runs_no_collection(child):
    # A fill that sets off a collection runs finalizers between its look
    # and its write (one could make a holder over the memory), and one
    # that collects the young generation only leaks what the older ones
    # keep.
    proc = child(SETUP + """
        gc.collect()
        gc.set_threshold(100_000)
        made = []

        class Later:
            def __del__(self):
                made.append((ctypes.py_object * 2).from_buffer(data, 16))
                made[0][0] = "keep me"

        later = Later()
        later.me = later
        del later
        before = [gen["collections"] for gen in gc.get_stats()]
        for _ in range(20):
            junk = [[i] for i in range(200)]
            wrote = not refused(data)
            if made:
                assert not wrote, "wrote over a holder made in the fill"
                assert made[0][0] == "keep me"
        assert [gen["collections"] for gen in gc.get_stats()] == before
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_a_holder_made_while_the_collector_is_off_is_found(child):
    proc = child(SETUP + """
        gc.disable()
        junk = [[i] for i in range(5000)]
        holder = (ctypes.c_char_p * 2).from_buffer(data, 16)
        assert refused(data)
        assert not gc.isenabled()  # a search never turns it on
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_a_holder_over_part_of_the_memory(child):
    proc = child(SETUP + """
        holder = (ctypes.py_object * 2).from_address(
            ctypes.addressof(ctypes.c_char.from_buffer(data)) + 8)
        holder[0] = "keep me"
        assert refused(data) and refused(memoryview(data)[4:12])
        assert holder[0] == "keep me"
        assert arc4py.fill(memoryview(data)[32:]) == 32  # no holder reads it
        del holder
        assert arc4py.fill(data) == 64
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]
