"""The primitives of numpy's shapes and views (issue 11): reshape, restride (transpose,
moveaxis, swapaxes, flip, squeeze, expand_dims), astype, and the array literals np.array([..]).

ir/primitives.py calls ``define_all`` once, and these records join its table.

Example:
    >>> from srcgrad.ir.primitives import PRIMITIVES
    >>> from srcgrad.ir.types import F64, I64, ArrayType
    >>> PRIMITIVES["reshape"].result_type([ArrayType(F64, 1), I64, I64], {})
    f64[2]
"""
from ..errors import TypingError
from .primitive_table import define
from .types import BOOL, F32, F64, I64, ArrayType

RESTRIDE_KINDS = ("permute", "flip", "squeeze", "expand")


def _array(t, what):
    if not isinstance(t, ArrayType):
        raise TypingError(f"{what} needs an array, got {t}")
    return t


def _reshape_rule(ts, attrs):
    x = _array(ts[0], "reshape")
    for t in ts[1:]:
        if t not in (I64, BOOL):
            raise TypingError(f"array sizes must be integers, got {t}")
    if len(ts) == 1:
        raise TypingError("reshape to a 0-d array: srcgrad has no 0-d arrays")
    return ArrayType(x.dtype, len(ts) - 1)


def _restride_rule(ts, attrs):
    x = _array(ts[0], attrs["kind"])
    kind, axes = attrs["kind"], attrs["axes"]
    assert kind in RESTRIDE_KINDS, kind
    ndim = {"squeeze": x.ndim - len(axes), "expand": x.ndim + len(axes)}.get(kind, x.ndim)
    if ndim < 1:
        raise TypingError("this squeeze leaves a 0-d array: srcgrad has no 0-d arrays")
    return ArrayType(x.dtype, ndim)


def _astype_rule(ts, attrs):
    x = _array(ts[0], "astype")
    return ArrayType(attrs["dtype"], x.ndim)


def _pack_rule(ts, attrs):
    for t in ts:
        if t not in (F64, I64, BOOL):
            raise TypingError(f"np.array([...]) takes numbers here, got {t}")
    return ArrayType(attrs["dtype"], len(attrs["shape"]))


def _stack_rule(ts, attrs):
    first = _array(ts[0], "np.array([...]) of arrays")
    for t in ts:
        if _array(t, "np.array([...]) of arrays").ndim != first.ndim:
            raise TypingError("np.array([...]) of arrays of different ranks")
    return ArrayType(attrs["dtype"], first.ndim + 1)


def define_all():
    """Add the family's records to the table (ir/primitives.py calls this once)."""
    define("reshape", _reshape_rule, "np.reshape(x, sizes), x.ravel(); operands: x, then the new sizes (one may be "
         "-1). A view when x is C-contiguous, else a copy (numpy views some other layouts too: in-place writes "
         "where that would show are refused, frontend/numpy_shapes.py)", view=True, may_raise=True, adjoint_shaped=True)
    define("restride", _restride_rule, "a view of x with new strides; attrs: kind (permute: x.transpose(axes); "
         "flip: np.flip(x, axes); squeeze: drops the size-1 axes, raising numpy's ValueError when one is not 1; "
         "expand: np.expand_dims(x, axes)), axes (a tuple of axes of x, or of the result for expand)",
         view=True, may_raise=True)
    define("astype", _astype_rule, "x.astype(dtype): a fresh array (numpy's casts: a float to an int truncates "
         "toward 0, to bool is x != 0); attrs: dtype", allocates=True, shaped_like=0)
    define("pack", _pack_rule, "np.array([a, b, ...]) or np.array([[a, b], [c, d]]) of numbers: a fresh C-ordered "
         "array; attrs: shape (the literal's, a tuple of ints), dtype", allocates=True)
    define("stack", _stack_rule, "np.array([x, y, ...]) of equal-shaped arrays: a fresh array one rank up; raises "
         "numpy's ValueError when the shapes differ; attrs: dtype", allocates=True, may_raise=True, adjoint_shaped=True)


__all__ = ["RESTRIDE_KINDS", "F32"]
