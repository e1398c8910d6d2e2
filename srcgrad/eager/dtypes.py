"""Tensor dtypes and PyTorch's type-promotion rules.

Example:
    >>> from srcgrad.eager.dtypes import float32, int64, promote_types
    >>> promote_types(int64, float32)
    torch.float32
"""
import numpy as np


class dtype:
    """A tensor element type; prints as PyTorch prints it (``torch.float32``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_rank", "_legacy")

    def __init__(self, name, np_dtype, is_float, rank, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = is_float
        self.is_signed = name not in ("uint8", "bool")
        self.itemsize = self.np.itemsize
        self._rank = rank          # order inside its category (bool < int < float)
        self._legacy = legacy      # legacy type name used in error messages

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, False, 0, "BoolTensor")
uint8 = dtype("uint8", np.uint8, False, 1, "ByteTensor")
int8 = dtype("int8", np.int8, False, 1, "CharTensor")
int16 = dtype("int16", np.int16, False, 2, "ShortTensor")
int32 = dtype("int32", np.int32, False, 3, "IntTensor")
int64 = dtype("int64", np.int64, False, 4, "LongTensor")
float16 = dtype("float16", np.float16, True, 1, "HalfTensor")
float32 = dtype("float32", np.float32, True, 2, "FloatTensor")
float64 = dtype("float64", np.float64, True, 3, "DoubleTensor")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
FROM_NUMPY = {d.np: d for d in ALL}


def _by_name(name):
    return {d.name: d for d in ALL}[name]


def from_numpy_dtype(np_dtype):
    """The srcgrad dtype of a numpy dtype; float64 for Python floats, int64 for ints."""
    try:
        return FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported "
                        "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")


def to_dtype(d):
    """Accepts a srcgrad dtype, a numpy dtype or a Python type (``float``, ``int``, ``bool``)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


def category(d):
    """0 for bool, 1 for integers, 2 for floating point."""
    return 2 if d.is_floating_point else (0 if d is bool_ else 1)


def promote_types(a, b):
    """PyTorch's promote_types: the smallest dtype both values fit in (int64 + float32 -> float32)."""
    if a is b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        return a if a._rank >= b._rank else b
    return from_numpy_dtype(np.promote_types(a.np, b.np))


_defaults_global = {"dtype": float32}


def get_default_dtype():
    """The dtype of new floating-point tensors (float32 unless changed).

    >>> get_default_dtype()
    torch.float32
    """
    return _defaults_global["dtype"]


def set_default_dtype(d):
    """Set the dtype of new floating-point tensors: ``float32`` or ``float64``."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _defaults_global["dtype"] = d


def scalar_dtype(value):
    """The dtype a Python scalar takes when it is wrapped into a tensor on its own."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def result_type(tensors, scalars=()):
    """PyTorch's result type of an op on tensors and Python scalars.

    Dimensioned tensors decide; zero-dim tensors and Python scalars only lift the result
    into a higher category (int tensor * 2.5 -> default float dtype; float32 * float64 0-dim
    -> float32).
    """
    dim_t = zero_t = wrapped = None
    for t in tensors:
        d = t.dtype
        if t._data.ndim:
            dim_t = d if dim_t is None else promote_types(dim_t, d)
        else:
            zero_t = d if zero_t is None else promote_types(zero_t, d)
    for s in scalars:
        d = scalar_dtype(s) if not isinstance(s, np.generic) else _wrapped_np_scalar(s)
        wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim_t, _combine(zero_t, wrapped))


def _wrapped_np_scalar(s):
    d = from_numpy_dtype(s.dtype)
    if d.is_floating_point:
        return get_default_dtype()
    return bool_ if d is bool_ else int64


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher
