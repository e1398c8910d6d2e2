"""Attributes replaced for a while and put back: the profiler's timers and forward AD's tangent
wrappers go around the Tensor methods and module functions only while they are on, so the
eager mode's hot path carries nothing for them otherwise.

Example:
    >>> from srcgrad.eager.tensor import Tensor
    >>> original = Tensor.__mul__
    >>> patches = Patches()
    >>> patches.put(Tensor, "__mul__", lambda a, b: "patched")      # the profiler puts a timer
    >>> Tensor([2.0]) * 3.0
    'patched'
    >>> patches.undo()            # Tensor.__mul__ is the original again
    >>> Tensor.__mul__ is original
    True
"""
import sys

_MISSING = object()

# The modules that hand out srcgrad.eager's functions under their own names as well, so that a
# wrapper must go on their names too: srcgrad itself (``from .eager import *``), which adds itself
# (reexported_by). The profiler and forward AD read this list rather than import srcgrad, which
# imports them.
REEXPORTS = []


def reexported_by(module_name):
    """Add the module of that name (imported, or importing now) to ``REEXPORTS``."""
    REEXPORTS.append(sys.modules[module_name])


class Patches:
    """The replacements made so far, undone last first."""

    def __init__(self):
        self._made = []
        self._names = set()

    def __contains__(self, owner_and_name):
        return owner_and_name in self._names

    def put(self, owner, name, new):
        """``owner.name = new``, remembering what ``owner`` itself held (nothing, for a name
        a module hands out lazily through ``__getattr__``)."""
        self._made.append((owner, name, owner.__dict__.get(name, _MISSING)))
        self._names.add((owner, name))
        setattr(owner, name, new)

    def undo(self):
        while self._made:
            owner, name, original = self._made.pop()
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._names.clear()
