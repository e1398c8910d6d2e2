"""The values the frontend holds besides IR values, each known only while compiling: a name
unbound on some path (``Unbound``), what a ``return`` returns (``Returned``) and the end of a
loop iteration (``CONTINUE``), functions used as values (``NestedFunction``, ``FunctionRef``),
and the type ``UNSET`` of a return slot nothing has stored into yet. (Containers are Trees,
srcgrad/trees.py, with Range and Zipped in containers.py; dtypes are dtypes.py's DType.)

In a module of their own, below every lowering module, so that each can test for them without
importing another.

Example:
    >>> from srcgrad.ir.types import F64, I64
    >>> join_types(UNSET, F64), join_types(I64, F64)
    (f64, f64)
"""
from ..ir.types import Type, unify
from .dtypes import DType


class Unbound:
    """A name assigned on some paths only: reading it is an error (Python's UnboundLocalError)."""

    def __init__(self, name):
        self.name = name


class Returned(list):
    """The leaves a `return` returns, with ``tree``: the container they came in (None for one value)."""

    def __init__(self, leaves, tree=None):
        super().__init__(leaves)
        self.tree = tree

    def value(self):
        """The returned value as the frontend holds it: a Tree or one IR value."""
        return self.tree.refill(iter(self)) if self.tree is not None else self[0]


class _ContinueMarker:
    def __repr__(self):
        return "CONTINUE"


# how statements end that end a loop's iteration (`continue`), beside None (they fall
# through) and a Returned (they return)
CONTINUE = _ContinueMarker()


class NestedFunction:
    """A ``def`` or ``lambda`` of the function being compiled: its AST (a FunctionDef), the
    values of its defaults (computed at the ``def``), the context that defined it and the
    variables it sees (the definer's, as they are where the function is read)."""

    def __init__(self, fdef, defaults, definer, env):
        self.fdef, self.defaults, self.definer, self.env = fdef, defaults, definer, env

    def seen_from(self, env):
        """This function as read in ``env`` of its definer: its free variables take their values there."""
        return NestedFunction(self.fdef, self.defaults, self.definer, env)


class FunctionRef:
    """A module-level function (or a numpy/math function) used as a value: called where it ends up."""

    def __init__(self, obj):
        self.obj = obj


# values known only while compiling: they are never carried or merged, only passed along
STATIC_OBJECTS = (NestedFunction, FunctionRef, DType)


def same_static(a, b):
    """Whether two functions or dtypes are the same one (a nested def read twice, a global read twice)."""
    if isinstance(a, NestedFunction) and isinstance(b, NestedFunction):
        return a.fdef is b.fdef
    if isinstance(a, FunctionRef) and isinstance(b, FunctionRef):
        return a.obj is b.obj
    return a is b


def static_words(v):
    """A static object in the user's words, for messages."""
    return "a dtype" if isinstance(v, DType) else "a function"


# The type of the values a `return` inside a loop stores before any is stored: they take
# the type of what is returned (an int, an array), as if the first assignment were before
# the loop; where one is read unset, it reads a zero of that type (the flag says it is unused).
UNSET = Type("unset", None)


def join_types(a, b):
    """``unify`` with UNSET below every type."""
    return b if a is UNSET else a if b is UNSET else unify(a, b)


def convert_or_zero(b, v, t):
    """``v`` converted to ``t`` by builder ``b``; an UNSET value becomes a zero of type ``t``."""
    if v.type is not UNSET:
        return b.convert(v, t)
    if t.is_array:
        return b.emit("full", [b.const(0)] * t.ndim, {"value": 0.0, "dtype": t.dtype})
    return b.const(0, t)
