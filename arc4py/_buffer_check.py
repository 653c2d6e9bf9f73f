"""Refuse ctypes buffers that hide pointers ctypes follows on read.

``fill()`` and ``chacha20_keystream_into()`` already refuse buffers whose
format says they hold Python objects (``"O"``).  ctypes does not always say
so: a ``Union`` or a ``_pack_``-ed ``Structure`` holding a ``py_object``
exports plain ``"B"``, and ``c_char_p`` / ``c_wchar_p`` are pointers that
ctypes dereferences when the field is read.  Random bytes there crash the
process later, so for ctypes objects, found behind any chain of views, the
type itself is walked: fields, array elements, nested structures and unions,
at any depth.

Pointer types read as pointer objects (``POINTER(T)``, ``c_void_p``,
function pointers) are left alone: reading them dereferences nothing, and
following one (``.contents``) is an explicit act, as with any pointer.
"""
# _SimpleCData type codes ctypes turns into objects by following the value:
# py_object ("O"), c_char_p ("z"), c_wchar_p ("Z").
_POINTER_CODES = frozenset("OzZ")


def _base_named(cls, module, name):
    """Whether ``cls`` derives from the class ``module.name``.  Classes are
    recognised by name, not taken from ``sys.modules``: ctypes objects
    exist whether or not ``ctypes`` (or ``_ctypes``) is imported or still
    in ``sys.modules``."""
    for klass in cls.__mro__:
        if klass.__name__ == name and klass.__module__ == module:
            return True
    return False


def _is_cdata(obj):
    return _base_named(type(obj), "_ctypes", "_CData")


def exporter(buffer):
    """The object whose memory ``buffer`` is, seen through any chain of
    views: memoryviews (cast or sliced), ``PickleBuffer`` and any other
    object whose buffer is another's, and numpy arrays (their ``base``)."""
    obj = buffer
    for _ in range(64):
        if _base_named(type(obj), "numpy", "ndarray") and \
                obj.base is not None:
            nxt = obj.base
        else:
            try:
                with memoryview(obj) as view:
                    nxt = view.obj
            except (TypeError, ValueError, BufferError, NotImplementedError):
                return obj  # exports no buffer (or none memoryview reads)
        if nxt is obj or nxt is None:
            return obj
        obj = nxt
    return obj


def _pointer_field(ctype, depth=0):
    """The first type within ``ctype`` that ctypes dereferences on read,
    or None."""
    if depth > 256:  # a type nested this deep is no plain data
        return ctype
    if _base_named(ctype, "_ctypes", "_SimpleCData"):
        code = getattr(ctype, "_type_", "")
        return ctype if isinstance(code, str) and code in _POINTER_CODES \
            else None
    if _base_named(ctype, "_ctypes", "Array"):
        return _pointer_field(ctype._type_, depth + 1)
    if _base_named(ctype, "_ctypes", "Structure") or \
            _base_named(ctype, "_ctypes", "Union"):
        # _fields_ of a subclass add to its bases' fields: walk them all.
        for klass in ctype.__mro__:
            for field in vars(klass).get("_fields_", ()):
                found = _pointer_field(field[1], depth + 1)
                if found is not None:
                    return found
    return None


def _memory_owners(obj):
    """The other ctypes objects whose memory ``obj`` shares: the object it
    is a field or element of (``_b_base_``), and what ``from_buffer()``
    made it over (kept alive in ``_objects`` as a view)."""
    owners = []
    if obj._b_base_ is not None:
        owners.append(obj._b_base_)
    kept = obj._objects
    for value in (kept.values() if isinstance(kept, dict) else ()):
        value = exporter(value)
        if _is_cdata(value):
            owners.append(value)
    return owners


def refuse_pointer_holders(buffer):
    """Raise ``TypeError`` if ``buffer``'s memory belongs to a ctypes object
    (seen through any views: see ``exporter``) whose type holds
    ``py_object``, ``c_char_p`` or ``c_wchar_p`` anywhere, or the type of
    any ctypes object whose memory it shares (a field's owner, what
    ``from_buffer()`` wraps): writing through the alias would plant the
    same pointers."""
    obj = exporter(buffer)
    if not _is_cdata(obj):
        return
    todo, seen = [obj], set()
    while todo and len(seen) < 256:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        found = _pointer_field(type(cur))
        if found is not None:
            what = type(obj).__name__
            if cur is not obj:
                what += f" (over a {type(cur).__name__})"
            raise TypeError(
                f"cannot fill a {what}: it holds {found.__name__}, a "
                f"pointer ctypes follows on read; random bytes are not "
                f"pointers")
        todo.extend(_memory_owners(cur))
