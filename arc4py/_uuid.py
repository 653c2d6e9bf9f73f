"""``uuid4()`` and ``uuid7()``: the stdlib's UUID layouts over arc4py's draws.

Both return ``uuid.UUID`` objects, bit for bit what ``uuid.uuid4()`` and
Python 3.14's ``uuid.uuid7()`` (RFC 9562) would give, on every supported
Python.  Import them from ``arc4py``.
"""
import os as _os
import threading as _threading
import time as _time
from uuid import UUID as _UUID, SafeUUID as _SafeUUID

from arc4py._core import randbits as _randbits, _share_between_threads

# The version nibble (bits 76-79) and the RFC 9562 variant (bits 62-63: 10).
_VERSION_MASK = ~((0xF << 76) | (0x3 << 62))
_VERSION_4 = (4 << 76) | (0x2 << 62)
_VERSION_7 = (7 << 76) | (0x2 << 62)

_COUNTER_MAX = (1 << 42) - 1
_MS_MASK = (1 << 48) - 1

_new = object.__new__
_UNKNOWN = _SafeUUID.unknown
_slots = vars(_UUID)
if "int" in _slots and "is_safe" in _slots:
    # UUID.__setattr__ refuses every write (the object is immutable); UUID's
    # own constructor writes its two slots through object.__setattr__, that
    # is through these descriptors.
    _set_int = _slots["int"].__set__
    _set_is_safe = _slots["is_safe"].__set__

    def _from_int(value):
        """A UUID holding ``value`` (already carrying its version and
        variant), without the checks and keyword parsing of ``UUID(int=)``."""
        u = _new(_UUID)
        _set_int(u, value)
        _set_is_safe(u, _UNKNOWN)
        return u
else:  # a UUID class laid out otherwise: its constructor
    def _from_int(value):
        return _UUID(int=value)
del _slots


def uuid4():
    """A random UUID (version 4), as ``uuid.uuid4()``: 122 random bits
    from arc4py's CSPRNG, the version and variant set."""
    return _from_int((_randbits(128) & _VERSION_MASK) | _VERSION_4)


# uuid7 state: the last millisecond and 42-bit counter handed out, and the
# process they were handed out in.  One lock orders the UUIDs of every
# thread; a forked child starts afresh (its own lock, a new random counter),
# so it never continues the parent's sequence: the atfork handler sees
# os.fork(), the process id a fork no handler ran for (a raw fork system
# call).
_lock = _threading.Lock()
_last_ms = -1
_last_counter = 0
_pid = _os.getpid()


def _reset_after_fork():
    global _lock, _last_ms, _last_counter, _pid
    _lock = _threading.Lock()
    _last_ms = -1
    _last_counter = 0
    _pid = _os.getpid()


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_reset_after_fork)


def uuid7():
    """A time-ordered UUID (version 7), as Python 3.14's ``uuid.uuid7()``.

    RFC 9562 layout: 48 bits of milliseconds since the Unix epoch, a 42-bit
    counter (the 12 bits after the version, then the 30 after the variant)
    and 32 random bits.  A new millisecond starts the counter at a random
    41-bit value; within one millisecond (or while the clock reads earlier
    than the last UUID's, whose millisecond is kept) each UUID takes the
    next count, so the UUIDs of a process increase strictly in the order
    they are made, across threads too.  When the counter overflows, the
    timestamp moves one millisecond on and the counter restarts.
    """
    global _last_ms, _last_counter, _pid
    fresh = _randbits(73)  # a starting counter (41 bits) and the tail (32)
    with _lock:
        ms = _time.time_ns() // 1_000_000
        pid = _os.getpid()
        if pid != _pid:  # forked without the atfork handler: start afresh
            _pid = pid
            _last_ms = -1
        if ms > _last_ms:
            counter = fresh >> 32
        else:  # the same millisecond, or a clock set back: count on
            counter = _last_counter + 1
            ms = _last_ms
            if counter > _COUNTER_MAX:
                ms += 1
                counter = fresh >> 32
        _last_ms = ms
        _last_counter = counter
    return _from_int(((ms & _MS_MASK) << 80) | ((counter >> 30) << 64)
                     | ((counter & 0x3FFF_FFFF) << 32)
                     | (fresh & 0xFFFF_FFFF) | _VERSION_7)


# Free-threaded builds: what every uuid4() and uuid7() call loads from this
# module, and the class and SafeUUID member each UUID holds a reference to
# (the uuid module's, which live as long as it), made immortal, so that
# threads making UUIDs at once do not all write one reference count (the
# functions themselves are arc4py's public names: arc4py/__init__.py).
_share_between_threads(_VERSION_MASK, _VERSION_4, _VERSION_7, _COUNTER_MAX,
                       _MS_MASK, _new, _UNKNOWN, _UUID, _from_int,
                       *([_set_int, _set_is_safe] if "_set_int" in globals()
                         else []))
