"""What a compile read outside the function: every global, closure cell and attribute of a
module-level object that the frontend resolved (and froze into the code), so that the compiled
object can tell later whether they still hold what they held (srcgrad/reuse.py asks before it
hands the same object out again).

A read is recorded only while ``recording`` is active (Compiled._specialise); a snapshot keeps
numbers by value, arrays by a digest of their bytes (an array changed in place is a change),
containers element by element, functions by identity with their code and defaults, and any
other object (a module, a compiled function) by identity.

Example:
    >>> import numpy as np
    >>> table = {"w": np.ones(3)}
    >>> with recording() as reads:
    ...     record_name({}, table, "w", table["w"])
    >>> unchanged(reads)
    True
    >>> table["w"][0] = 2.0
    >>> unchanged(reads)
    False
"""
import builtins
import contextlib
import contextvars
import hashlib
import types

import numpy as np

_READS = contextvars.ContextVar("srcgrad_reads", default=None)
_MISSING = object()


@contextlib.contextmanager
def recording():
    """Collect the reads of the lowering inside into the dict this yields, each once (a compile
    nested inside, of another compiled function, records into its own)."""
    reads = {}
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


class _NameRead:
    """A name resolved as Context.resolve_global does: closure cell, module, builtins."""

    def __init__(self, cells, namespace, name, value):
        self.cells, self.namespace, self.name = cells, namespace, name
        self.was = snapshot(value)

    def now(self):
        cell = self.cells.get(self.name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:          # an empty cell: the name falls through, as it did then
                pass
        if self.name in self.namespace:
            return self.namespace[self.name]
        return getattr(builtins, self.name, _MISSING)


class _AttributeRead:
    def __init__(self, obj, attr, value):
        self.obj, self.attr = obj, attr
        self.was = snapshot(value)

    def now(self):
        return getattr(self.obj, self.attr, _MISSING)


def record_name(cells, namespace, name, value):
    """Note that ``name`` resolved to ``value`` (``cells``: the function's closure cells by name)."""
    reads = _READS.get()
    if reads is None:
        return
    key = ("name", id(namespace), id(cells.get(name)), name)
    if key not in reads:            # (a snapshot may hash an array: once per compile)
        reads[key] = _NameRead(cells, namespace, name, value)


def record_attribute(obj, attr, value):
    """Note that ``obj.attr`` (a module-level object's attribute) was ``value``."""
    reads = _READS.get()
    if reads is None:
        return
    key = ("attribute", id(obj), attr)
    if key not in reads:
        reads[key] = _AttributeRead(obj, attr, value)


class _Same:
    """Compares by identity (an object whose value the compile did not look into)."""

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def snapshot(v):
    """A comparable record of ``v`` as the compile saw it."""
    if isinstance(v, np.ndarray):
        data = np.ascontiguousarray(v)
        return ("array", v.dtype.str, v.shape, hashlib.blake2b(data.view(np.uint8) if data.size else b"").digest())
    if isinstance(v, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        return ("value", type(v), repr(v))         # repr: -0.0 is not 0.0, nan is nan
    if isinstance(v, (tuple, list)):
        return ("sequence", type(v), tuple(snapshot(x) for x in v))
    if isinstance(v, dict):
        return ("dict", type(v), tuple((snapshot(k), snapshot(x)) for k, x in v.items()))
    if isinstance(v, types.FunctionType):
        return ("function", _Same(v), _Same(v.__code__), snapshot(v.__defaults__), snapshot(v.__kwdefaults__))
    return ("object", _Same(v))


def unchanged(reads, seen=None):
    """Whether every read (a dict that ``recording`` filled) still gives what it gave; a
    compiled function read (a helper decorated with srcgrad) is asked about its own reads too."""
    seen = set() if seen is None else seen
    for r in list(reads.values()):
        v = r.now()
        if snapshot(v) != r.was:
            return False
        inner = getattr(v, "reads_unchanged", None)
        if inner is not None and id(v) not in seen:
            seen.add(id(v))
            if not inner(seen):
                return False
    return True
