"""Refuse ctypes buffers that hide pointers ctypes follows on read.

``fill()`` and ``chacha20_keystream_into()`` already refuse buffers whose
format says they hold Python objects (``"O"``).  ctypes does not always say
so: a ``Union`` or a ``_pack_``-ed ``Structure`` holding a ``py_object``
exports plain ``"B"``, and ``c_char_p`` / ``c_wchar_p`` are pointers that
ctypes dereferences when the field is read.  Random bytes there crash the
process later, so for ctypes objects (``arc4py._core`` finds them behind
memoryviews and numpy arrays) the type itself is walked: fields, array
elements, nested structures and unions, at any depth.

Pointer types read as pointer objects (``POINTER(T)``, ``c_void_p``,
function pointers) are left alone: reading them dereferences nothing, and
following one (``.contents``) is an explicit act, as with any pointer.
"""
import sys

# _SimpleCData type codes ctypes turns into objects by following the value:
# py_object ("O"), c_char_p ("z"), c_wchar_p ("Z").
_POINTER_CODES = frozenset("OzZ")


def _pointer_field(ctypes, ctype, depth=0):
    """The first type within ``ctype`` that ctypes dereferences on read,
    or None."""
    if depth > 256:  # a type nested this deep is no plain data
        return ctype
    if issubclass(ctype, ctypes._SimpleCData):
        code = getattr(ctype, "_type_", "")
        return ctype if isinstance(code, str) and code in _POINTER_CODES \
            else None
    if issubclass(ctype, ctypes.Array):
        return _pointer_field(ctypes, ctype._type_, depth + 1)
    if issubclass(ctype, (ctypes.Structure, ctypes.Union)):
        # _fields_ of a subclass add to its bases' fields: walk them all.
        for klass in ctype.__mro__:
            for field in vars(klass).get("_fields_", ()):
                found = _pointer_field(ctypes, field[1], depth + 1)
                if found is not None:
                    return found
    return None


def refuse_pointer_holders(obj):
    """Raise ``TypeError`` if the ctypes object ``obj``'s type holds
    ``py_object``, ``c_char_p`` or ``c_wchar_p`` anywhere."""
    found = _pointer_field(sys.modules["ctypes"], type(obj))
    if found is not None:
        raise TypeError(
            f"cannot fill a {type(obj).__name__}: it holds "
            f"{found.__name__}, a pointer ctypes follows on read; random "
            f"bytes are not pointers")
