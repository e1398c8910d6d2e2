"""The compiler's types: scalars (f64, i64, bool) and numpy arrays by dtype and rank.

Example:
    >>> type_of(1.5), type_of(3), type_of(np.ones((2, 2)))
    (f64, i64, f64[2])
"""
import numpy as np


class Type:
    """A scalar type; arrays are ``ArrayType``."""

    def __init__(self, name, py):
        self.name, self.py = name, py

    def __repr__(self):
        return self.name

    is_array = False


F64 = Type("f64", float)
F32 = Type("f32", float)      # only as the element type of float32 arrays: elements are read as f64
I64 = Type("i64", int)
BOOL = Type("bool", bool)
NONE = Type("none", type(None))


class ArrayType:
    """A numpy array of ``dtype`` (a scalar Type) and ``ndim`` dimensions (the shape is not part of it)."""

    is_array = True

    def __init__(self, dtype, ndim):
        self.dtype, self.ndim = dtype, ndim
        self._hash = hash((dtype.name, ndim))      # a call's signature hashes its arguments' types

    def __eq__(self, other):
        return self is other or (isinstance(other, ArrayType) and (self.dtype, self.ndim) == (other.dtype, other.ndim))

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"{self.dtype}[{self.ndim}]"


class TapeType:
    """Per-iteration storage of a loop's values for the reverse sweep."""

    is_array = False

    def __init__(self, items):
        self.items = tuple(items)

    def __eq__(self, other):
        return isinstance(other, TapeType) and self.items == other.items

    def __hash__(self):
        return hash(self.items)

    def __repr__(self):
        return "tape<" + ", ".join(map(repr, self.items)) + ">"


class UndoLogType:
    """The reverse sweep's log of overwritten array elements (ad/reverse.py): each in-place
    write saves what it overwrites, and the reverse sweep puts it back."""

    is_array = False

    def __eq__(self, other):
        return isinstance(other, UndoLogType)

    def __hash__(self):
        return hash("undo")

    def __repr__(self):
        return "undo_log"


UNDO_LOG = UndoLogType()


NUMPY_DTYPES = {F64: np.float64, F32: np.float32, I64: np.int64, BOOL: np.bool_}    # an element type's numpy dtype
_NP_SCALARS = {np.dtype(d): t for t, d in NUMPY_DTYPES.items()}


_ARRAYS = {}          # (numpy dtype, ndim) -> its ArrayType, one object each: found by identity


def type_of(value):
    """The compiler type of a runtime argument, or None if the compiler does not take it."""
    if type(value) is np.ndarray:              # the common case first
        key = (value.dtype, value.ndim)
        t = _ARRAYS.get(key)
        if t is None:
            dt = _NP_SCALARS.get(value.dtype)
            if dt is None:
                return None
            t = _ARRAYS[key] = ArrayType(dt, value.ndim)
        return t
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return I64
    if isinstance(value, (float, np.floating)):
        return F64
    if isinstance(value, np.ndarray):
        dt = _NP_SCALARS.get(value.dtype)
        if dt is None:
            return None
        return ArrayType(dt, value.ndim)
    return None


def user_name(t):
    """A type in the words of the user's Python: ``int``, ``float``, ``bool``, ``int64 array``."""
    if isinstance(t, ArrayType):
        return {F64: "float64", F32: "float32", I64: "int64", BOOL: "bool"}[t.dtype] + " array"
    return {F64: "float", I64: "int", BOOL: "bool"}.get(t, repr(t))


def is_float(t):
    """Values with gradients: f64 numbers and float arrays."""
    return t is F64 or (isinstance(t, ArrayType) and t.dtype in (F64, F32))


def unify(a, b):
    """The type both a and b convert to (int and float meet at float), or None."""
    if a == b:
        return a
    nums = {F64: 2, I64: 1, BOOL: 0}
    if a in nums and b in nums:
        return a if nums[a] >= nums[b] else b
    return None
