"""Values between Python and compiled code: ctypes types, array structs, results.

Arrays cross as (data pointer, shape, strides counted in elements). Results come back as
numbers, as the argument itself, as a view of an argument, or as an array over memory the
call allocated, which the returned array then owns.

Example:
    >>> import numpy as np
    >>> from srcgrad.ir.types import F64, ArrayType
    >>> s = array_struct(ctype_of(ArrayType(F64, 1)), np.ones(3))
    >>> list(s.shape), list(s.strides)
    ([3], [1])
"""
import ctypes
import ctypes.util

import numpy as np

from ..ir.types import BOOL, F64, I64, NUMPY_DTYPES

_CTYPES = {F64: ctypes.c_double, I64: ctypes.c_int64, BOOL: ctypes.c_int8}

_STRUCTS = {}


def ctype_of(t):
    if not t.is_array:
        return _CTYPES[t]
    key = t.ndim
    if key not in _STRUCTS:
        _STRUCTS[key] = type(f"Array{key}", (ctypes.Structure,), {"_fields_": [
            ("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * t.ndim), ("strides", ctypes.c_int64 * t.ndim)]})
    return _STRUCTS[key]


def array_struct(ct, a):
    """The (data, shape, strides) struct of ``a``; strides are counted in elements."""
    s = ct()
    s.data = a.ctypes.data
    s.shape[:] = a.shape
    s.strides[:] = [st // a.itemsize for st in a.strides]
    s._keep = a
    return s


def element_strided(a):
    """``a`` itself, or a copy when a stride is not a whole number of elements (a field of a
    structured array, say): compiled code addresses elements, not bytes."""
    if all(st % a.itemsize == 0 for st in a.strides):
        return a
    return a.copy()


class Memory:
    """Native memory seen as a numpy array; it keeps ``owner`` alive as long as the array."""

    def __init__(self, address, shape, strides, dtype, owner):
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "strides": strides,
                                    "data": (address, False), "version": 3}
        self.owner = owner


def numpy_dtype(t):
    """The numpy dtype of an array type's elements."""
    return np.dtype(NUMPY_DTYPES[t.dtype])


def memory_view(s, t, owner):
    """The array an array struct ``s`` of type ``t`` describes, over its memory (no copy);
    ``owner`` is kept alive as long as the array."""
    dtype = numpy_dtype(t)
    shape = tuple(s.shape[:])
    if 0 in shape:
        return np.zeros(shape, dtype)
    strides = tuple(st * dtype.itemsize for st in s.strides[:])
    return np.asarray(Memory(s.data, shape, strides, dtype, owner))


def result_value(o, kind, arrays, owned):
    """A result as Python sees it: a number, an argument itself, a view of an argument (as
    numpy's ``x.T`` or ``x[1:]`` would be), or an array over memory the call allocated, which
    it then owns (``owned``: the call's allocations, arena.py, which give it its owner).
    ``arrays``: the array arguments that are not empty, each with its data pointer."""
    if not kind.is_array:
        return bool(o.value) if kind is BOOL else o.value
    dtype = numpy_dtype(kind)
    shape = tuple(o.shape[:])
    if 0 in shape:
        return np.zeros(shape, dtype)
    data = o.data
    if data in owned:           # a new array (or a view of one that starts where it starts)
        return memory_view(o, kind, owned.take(data))
    strides = tuple(st * dtype.itemsize for st in o.strides[:])
    low, high = _byte_bounds(data, shape, strides, dtype.itemsize)
    for a, a_data in arrays:
        if a_data == data and a.shape == shape and a.strides == strides:
            return a
        a_low, a_high = _byte_bounds(a_data, a.shape, a.strides, a.itemsize)
        if a_low <= low and high <= a_high:
            view = memory_view(o, kind, a)
            if not a.flags.writeable:
                view.flags.writeable = False
            return view
    return memory_view(o, kind, None).copy()


def _byte_bounds(data, shape, strides, itemsize):
    """The first byte and one past the last byte of the (non-empty) array at ``data``."""
    low = data + sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    high = data + sum((n - 1) * st for n, st in zip(shape, strides) if st > 0) + itemsize
    return low, high


def libc_free(ptr):
    if ptr:
        _LIBC.free(ctypes.c_void_p(ptr))


_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
_LIBC.free.argtypes = [ctypes.c_void_p]
