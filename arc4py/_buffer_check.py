"""Refuse buffers whose memory a ctypes object reads as pointers.

``fill()`` and ``chacha20_keystream_into()`` already refuse buffers whose
format says they hold Python objects (``"O"``).  ctypes does not always say
so: a ``Union`` or a ``_pack_``-ed ``Structure`` holding a ``py_object``
exports plain ``"B"``, and ``c_char_p`` / ``c_wchar_p`` are pointers that
ctypes dereferences when the field is read.  Random bytes there crash the
process later, so for ctypes objects, found behind any chain of views, the
type itself is walked: fields, array elements, nested structures and unions,
at any depth.

Memory can also be the same bytes as a pointer-holding ctypes object made
over it (``from_buffer()``, ``from_address()``), with no link from the
owner back to it.  A ``bytearray``, ``array.array`` or ``mmap`` counts its
exports, so one exported only to the buffer being filled has no
``from_buffer()`` object over it; for any other owner, or one exported
elsewhere too, the live ctypes objects are searched for a pointer holder
whose memory overlaps the buffer's.  Not searched, as a search costs
milliseconds in a large process and every fill would pay it: memory a
numpy array owns, and a ``from_address()`` object over one of the three
counting owners that nothing else views.

Pointer types read as pointer objects (``POINTER(T)``, ``c_void_p``,
function pointers) are left alone: reading them dereferences nothing, and
following one (``.contents``) is an explicit act, as with any pointer.
"""
import gc

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
    object whose buffer is another's, numpy arrays (their ``base``), and
    the memoryview a class's ``__buffer__`` returned (PEP 688)."""
    obj = buffer
    for _ in range(64):
        if _base_named(type(obj), "numpy", "ndarray") and \
                obj.base is not None:
            nxt = obj.base
        elif _base_named(type(obj), "builtins", "_buffer_wrapper"):
            # What a Py_buffer from __buffer__ names as its owner: it holds
            # the memoryview __buffer__ returned, and reads as no buffer.
            nxt = next((r for r in gc.get_referents(obj)
                        if type(r) is memoryview), None)
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


def _cdata_classes():
    """``_ctypes._CData`` as each loaded ``_ctypes`` made it: none if
    ctypes was never imported.  Found among ``object``'s subclasses, so
    that neither ``ctypes`` nor ``_ctypes`` need be in ``sys.modules``."""
    return tuple(klass for klass in object.__subclasses__()
                 if klass.__name__ == "_CData"
                 and klass.__module__ == "_ctypes")


def _holder_over(start, length, instances, span):
    """A live ctypes object whose type holds a pointer ctypes follows on
    read and whose memory overlaps ``length`` bytes at ``start``, and that
    pointer's type; or None.  ``instances`` and ``span``: as for
    ``refuse_pointer_holders``."""
    classes = _cdata_classes()
    if not classes or length <= 0:
        return None
    end = start + length
    verdicts = {}  # each type walked once
    for obj in instances(classes):
        cls = type(obj)
        found = verdicts.get(cls, False)
        if found is False:
            found = verdicts[cls] = _pointer_field(cls)
        if found is None:
            continue
        address, size = span(obj)
        if address < end and start < address + size:
            return obj, found
    return None


def _refuse_by_type(obj):
    """Raise ``TypeError`` if the ctypes object ``obj``'s type, or that of
    any ctypes object whose memory it shares (a field's owner, what
    ``from_buffer()`` wraps), holds a pointer ctypes follows on read."""
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


def refuse_pointer_holders(buffer, start, length, unsearched, instances,
                           span):
    """Raise ``TypeError`` if ``length`` bytes at address ``start``, the
    memory of ``buffer`` (what a Py_buffer names as its owner), are read
    by a ctypes object as ``py_object``, ``c_char_p`` or ``c_wchar_p``:
    the memory belongs to such an object (seen through any views: see
    ``exporter``), or one was made over it.  ``unsearched(owner)`` says
    whether the owner's memory needs no search (see above);
    ``instances(classes)`` lists the live objects of those classes,
    ``span(obj)`` an object's (address, length)."""
    obj = exporter(buffer)
    if _is_cdata(obj):
        _refuse_by_type(obj)
    elif unsearched(obj):
        return
    hit = _holder_over(start, length, instances, span)
    if hit is not None:
        holder, found = hit
        raise TypeError(
            f"cannot fill a {type(obj).__name__}: its memory is also a "
            f"{type(holder).__name__}, which holds {found.__name__}, a "
            f"pointer ctypes follows on read; random bytes are not "
            f"pointers")
