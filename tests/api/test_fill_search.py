"""How fill() finds the ctypes objects that read a buffer's memory as
pointers when the memory's owner is exported elsewhere too: without a walk
of the heap per fill, and without missing one whatever its age (made
before the first such fill, after it, moved on by collections, or with the
collector's callback taken away).  The refusals themselves are in
test_fill_targets.py."""
import sysconfig

import pytest

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

# A fill target whose owner is exported elsewhere too (a view held): the
# case that searches.
SETUP = """
        import ctypes, gc, arc4py
        from arc4py import _core

        def refused(target):
            try:
                arc4py.fill(target)
            except TypeError as exc:
                assert "pointer" in str(exc), exc
                return True
            return False

        data = bytearray(64)
        held = memoryview(data)
"""


@pytest.mark.skipif(FREE_THREADED, reason="a free-threaded build's collector "
                    "has no young generation: there each search walks the heap")
def test_searched_fills_walk_the_heap_once(child):
    proc = child(SETUP + """
        walks = []
        real = gc.get_objects

        class Counting:
            def __getattr__(self, name):
                return getattr(gc, name)

            def get_objects(self, *args, **kwargs):
                if not args and not kwargs:
                    walks.append(1)  # the whole heap
                return real(*args, **kwargs)

        _core._gc = Counting()
        for _ in range(100):
            assert arc4py.fill(data) == 64
            junk = [[i] for i in range(50)]  # new objects, collections
        print(len(walks))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1"]


@pytest.mark.parametrize("when", [
    "before the first search",
    "after it",
    "after it, then collected past the young generation",
    "after the callback was taken away",
])
def test_a_holder_of_any_age_is_found(child, when):
    code = SETUP + """
        when = WHEN
        if when != "before the first search":
            assert arc4py.fill(data) == 64
        if when == "after the callback was taken away":
            gc.callbacks.clear()
        holder = (ctypes.py_object * 2).from_address(
            ctypes.addressof(ctypes.c_char.from_buffer(data)) + 8)
        holder[0] = "keep me"
        if when.endswith("young generation"):
            gc.collect(0)
            gc.collect(1)
            junk = [[i] for i in range(5000)]
        assert refused(data) and refused(memoryview(data)[4:12])
        assert holder[0] == "keep me"
        assert arc4py.fill(memoryview(data)[32:]) == 32  # no holder reads it
        del holder
        assert arc4py.fill(data) == 64
        print("ok")
    """.replace("WHEN", repr(when))
    proc = child(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_a_holder_made_while_the_collector_is_off_is_found(child):
    proc = child(SETUP + """
        assert arc4py.fill(data) == 64
        gc.disable()
        junk = [[i] for i in range(5000)]
        holder = (ctypes.c_char_p * 2).from_buffer(data, 16)
        assert refused(data)
        assert not gc.isenabled()  # a search never turns it on
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]
