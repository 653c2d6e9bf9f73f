"""The package face's numpy names: ``default_rng`` and, where numpy is
installed, ``BitGenerator``, without importing numpy until one is used.

A module ``__getattr__`` would do that too, but while a module has one
CPython specialises none of its attribute loads, and every
``arc4py.<name>()`` call would pay for it.  So ``arc4py.BitGenerator`` is
first a stand-in (``NumpyClass``) whose first use imports ``arc4py._numpy``
and puts the class itself in the package's namespace.
"""
import sys


def load():
    """``arc4py._numpy``, imported on first use (ImportError naming the
    ``arc4py[numpy]`` extra without numpy); from then on
    ``arc4py.BitGenerator`` is its class."""
    from arc4py import _core
    numpy_side = _core._load_numpy()
    face = vars(sys.modules["arc4py"])
    if isinstance(face.get("BitGenerator"), NumpyClass):
        face["BitGenerator"] = numpy_side.BitGenerator
    return numpy_side


def numpy_installed():
    """Whether numpy can be found, without importing it."""
    from importlib.util import find_spec
    try:
        return find_spec("numpy") is not None
    except (ImportError, ValueError):
        return False


class NumpyClass:
    # The stand-in for a class of arc4py._numpy: calling it, an attribute,
    # isinstance() and issubclass() either way (through __bases__ and
    # __class__) and a class statement naming it as a base all go to the
    # class, loaded first.
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def _cls(self):
        return getattr(load(), self._name)

    def __call__(self, *args, **kwargs):
        return self._cls()(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._cls(), attr)

    @property
    def __doc__(self):
        return self._cls().__doc__

    @property
    def __signature__(self):
        # inspect.signature() reads this before __call__'s (*args, **kwargs)
        from inspect import signature
        return signature(self._cls())

    # isinstance(arc4py.BitGenerator, type) is True (read-only here)
    @property  # type: ignore[misc]
    def __class__(self):
        return type(self._cls())

    def __instancecheck__(self, obj):
        return isinstance(obj, self._cls())

    def __subclasscheck__(self, cls):
        return issubclass(cls, self._cls())

    def __mro_entries__(self, bases):
        return (self._cls(),)

    def __repr__(self):
        return repr(self._cls())


def default_rng(seed=None):
    """A ``numpy.random.Generator`` over a new ``arc4py.BitGenerator``:
    every numpy distribution, drawn from the CSPRNG.

    ``seed`` takes what ``numpy.random.default_rng`` takes that cannot
    reproduce a stream: ``None`` or a seed sequence that holds no seed (a
    new generator), an ``arc4py.BitGenerator`` (wrapped), a ``Generator``
    over one (returned as it is).  A real seed is a ``TypeError``: a CSPRNG
    seeds itself from the OS; use ``numpy.random.default_rng(seed)`` for a
    reproducible stream.
    """
    return load().default_rng(seed)


default_rng.__module__ = "arc4py"
