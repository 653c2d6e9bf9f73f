"""``arc4py.SeedIgnoredWarning``: where a seed is given to arc4py and
ignored, for a user who wants to find those places (``arc4py.Random.seed``
calls ``seed_ignored``)."""
import random as _stdlib
import reprlib as _reprlib
import sys as _sys
import warnings as _warnings


class SeedIgnoredWarning(UserWarning):
    """Warned where a seed is given to arc4py and ignored: ``seed(42)``,
    ``Random(42)``, ``Random().seed(42)``.  Off unless a warnings filter
    names this category, so that a blanket ``-W error`` breaks nothing:
    ``warnings.simplefilter("default", arc4py.SeedIgnoredWarning)`` shows
    each place once, ``"error"`` raises it there, as does
    ``pytest -W error::arc4py.SeedIgnoredWarning``."""

    __module__ = "arc4py"


# The filters in force: from 3.14 a catch_warnings() block may keep its own
# in a context variable (context-aware warnings), which warnings.filters,
# the module's list, does not show.
_filters_in_force = getattr(_warnings, "_get_filters", None) or (
    lambda: _warnings.filters)
_std_init_code = _stdlib.Random.__init__.__code__


def seed_ignored(args, kwds):
    """Warns if ``seed(*args, **kwds)`` gave a seed (anything but None)
    and a filter names the category, at the caller: the code that called
    seed() (compiled, seed has no frame of its own), or that made the
    Random whose ``__init__`` passed its seed on."""
    given = kwds["a"] if "a" in kwds else args[0] if args else None
    if given is None or not any(
            isinstance(f[2], type) and issubclass(f[2], SeedIgnoredWarning)
            for f in _filters_in_force()):
        return
    level = 3 if _sys._getframe(1).f_code is _std_init_code else 2
    _warnings.warn(
        f"arc4py ignores the seed {_reprlib.repr(given)}: a CSPRNG seeds "
        f"itself from the OS and its output cannot be reproduced; for a "
        f"reproducible stream use a seeded generator, such as the standard "
        f"library's random.Random(seed)", SeedIgnoredWarning, stacklevel=level)
