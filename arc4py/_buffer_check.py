"""Refuse ctypes buffers that hide pointers ctypes follows on read.

``fill()`` and ``chacha20_keystream_into()`` already refuse buffers whose
format says they hold Python objects (``"O"``).  ctypes does not always say
so: a ``Union`` or a ``_pack_``-ed ``Structure`` holding a ``py_object``
exports plain ``"B"``, and ``c_char_p`` / ``c_wchar_p`` are pointers that
ctypes dereferences when the field is read.  Random bytes there crash the
process later, so for ctypes objects (``arc4py._keystream`` finds them behind
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


def _memory_owners(ctypes, obj):
    """The other ctypes objects whose memory ``obj`` shares: the object it
    is a field or element of (``_b_base_``), and what ``from_buffer()``
    made it over (kept alive in ``_objects`` as a memoryview), followed
    through memoryviews and numpy arrays."""
    owners = []
    if obj._b_base_ is not None:
        owners.append(obj._b_base_)
    kept = obj._objects
    for value in (kept.values() if isinstance(kept, dict) else ()):
        for _ in range(64):
            if isinstance(value, memoryview):
                value = value.obj
            elif getattr(value, "base", None) is not None and \
                    type(value).__name__ == "ndarray":
                value = value.base
            else:
                break
        if isinstance(value, ctypes._SimpleCData.__mro__[1]):
            owners.append(value)
    return owners


def refuse_pointer_holders(obj):
    """Raise ``TypeError`` if the ctypes object ``obj``'s type holds
    ``py_object``, ``c_char_p`` or ``c_wchar_p`` anywhere, or the type of
    any ctypes object whose memory it shares (a field's owner, what
    ``from_buffer()`` wraps): writing through the alias would plant the
    same pointers."""
    ctypes = sys.modules["ctypes"]
    todo, seen = [obj], set()
    while todo and len(seen) < 256:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        found = _pointer_field(ctypes, type(cur))
        if found is not None:
            what = type(obj).__name__
            if cur is not obj:
                what += f" (over a {type(cur).__name__})"
            raise TypeError(
                f"cannot fill a {what}: it holds {found.__name__}, a "
                f"pointer ctypes follows on read; random bytes are not "
                f"pointers")
        todo.extend(_memory_owners(ctypes, cur))
