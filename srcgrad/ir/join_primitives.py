"""The primitives of joining, splitting and building arrays (np.concatenate and its
relatives, np.split's equal division, diagonals, triangles, np.linspace, np.roll), added to
the one table of ir/primitives.py when it is imported.

Example:
    >>> from srcgrad.ir.primitives import PRIMITIVES
    >>> from srcgrad.ir.types import F64, ArrayType
    >>> PRIMITIVES["concat"].result_type([ArrayType(F64, 1)] * 2, {"axis": 0, "expand": (False, False)})
    f64[1]
"""
from ..errors import TypingError
from .primitive_table import define
from .types import BOOL, F32, F64, I64, ArrayType


def _array(t, what, ranks=None):
    if not isinstance(t, ArrayType):
        raise TypingError(f"{what} needs an array, got {t}")
    if ranks is not None and t.ndim not in ranks:
        raise TypingError(f"{what} needs an array of {' or '.join(map(str, ranks))} dimension(s), got {t}")
    return t


def _ints(ts, what):
    for t in ts:
        if t not in (I64, BOOL):
            raise TypingError(f"{what} must be integers, got {t}")


def result_dtype(dtypes):
    """numpy's result type of arrays of these dtypes joined (np.result_type of arrays)."""
    dtypes = set(dtypes)
    if F64 in dtypes or (F32 in dtypes and I64 in dtypes):
        return F64
    for t in (F32, I64):
        if t in dtypes:
            return t
    return BOOL


def _concat_rule(ts, attrs):
    """Operand k gains a new axis at ``axis`` where ``expand[k]`` (np.stack, a vector in
    np.vstack or np.column_stack); then every operand has the result's rank."""
    ranks = {_array(t, "joining arrays").ndim + bool(e) for t, e in zip(ts, attrs["expand"])}
    if len(ranks) != 1:
        raise TypingError("all the input arrays must have same number of dimensions")
    rank = ranks.pop()
    if not 0 <= attrs["axis"] < rank:
        raise TypingError(f"axis {attrs['axis']} is out of bounds for array of dimension {rank}")
    return ArrayType(result_dtype(t.dtype for t in ts), rank)


def _split_size_rule(ts, attrs):
    _ints(ts, "the length to split")
    return I64


def _diagonal_rule(ts, attrs):
    x = _array(ts[0], "np.diagonal", (2,))
    _ints(ts[1:], "the offset of a diagonal")
    return ArrayType(x.dtype, 1)


def _diag_embed_rule(ts, attrs):
    v = _array(ts[0], "a diagonal", (1,))
    _ints(ts[1:], "the shape and offset of a diagonal")
    return ArrayType(v.dtype, 2)


def _tri_rule(ts, attrs):
    _ints(ts, "np.tri's sizes and offset")
    return ArrayType(BOOL, 2)


def _linspace_rule(ts, attrs):
    for t in ts[:2]:
        if t not in (F64, I64, BOOL):
            raise TypingError(f"np.linspace needs numbers for start and stop, got {t}")
    _ints(ts[2:], "np.linspace's number of samples")
    return ArrayType(F64, 1)


def _roll_rule(ts, attrs):
    x = _array(ts[0], "np.roll")
    _ints(ts[1:], "np.roll's shift")
    axis = attrs.get("axis")
    if axis is not None and not 0 <= axis < x.ndim:
        raise TypingError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    return x


def _tile_rule(ts, attrs):
    x = _array(ts[0], "np.tile")
    _ints(ts[1:], "np.tile's repetitions")
    if len(ts) - 1 < x.ndim:
        raise TypingError("np.tile needs one repetition count per axis (padded with 1s in front)")
    return ArrayType(x.dtype, len(ts) - 1)


def _repeat_rule(ts, attrs):
    x = _array(ts[0], "np.repeat")
    _ints(ts[1:], "np.repeat's count")
    axis = attrs.get("axis")
    if axis is not None and not 0 <= axis < x.ndim:
        raise TypingError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    return ArrayType(x.dtype, 1 if axis is None else x.ndim)


def _repeat_each_rule(ts, attrs):
    counts = _array(ts[1], "np.repeat's counts", (1,))
    if counts.dtype is not I64:
        raise TypingError(f"np.repeat's counts must be integers, got {counts}")
    return _repeat_rule(ts[:1], attrs)


def _summed_back_rule(ts, attrs):
    _array(ts[0], "a gradient")
    return ArrayType(F64, _array(ts[1], "an array").ndim)


def _kron_rule(ts, attrs):
    a, b = (_array(t, "np.kron", (1, 2)) for t in ts)
    if a.ndim != b.ndim or a.dtype != b.dtype or a.dtype not in (F64, I64):
        raise TypingError(f"np.kron takes two float or two int arrays of one rank here, got {a} and {b}")
    return a


def _kron_grad_rule(ts, attrs):
    _array(ts[0], "a gradient")
    return ArrayType(F64, _array(ts[2], "np.kron's operand").ndim)


def define_all():
    """Add the family's records to the table (ir/primitives.py calls this once)."""
    define("concat", _concat_rule, "np.concatenate / np.stack / np.hstack / np.vstack / np.column_stack: a new "
         "array (a copy); attrs: axis, expand (one bool per operand: it gains a new axis there), fn (the numpy "
         "function, for its error message)", allocates=True, may_raise=True, adjoint_shaped=True)
    define("split_size", _split_size_rule, "n // sections for np.split, raising numpy's ValueError when the "
         "division is not equal; attrs: sections", may_raise=True)
    define("diagonal", _diagonal_rule, "np.diagonal(x, k) of a matrix: a new vector (a copy; numpy's is a "
         "read-only view)", allocates=True, adjoint_shaped=True)
    define("diag_embed", _diag_embed_rule, "an (n, m) matrix of zeros with vector v on diagonal k; operands: v, n, "
         "m, k (np.diag of a vector, np.eye, the adjoint of np.diagonal)",
         allocates=True, may_raise=True, adjoint_shaped=True)
    define("tri", _tri_rule, "np.tri(n, m, k, dtype=bool): True where j <= i + k; operands: n, m, k",
         allocates=True, may_raise=True)
    define("linspace", _linspace_rule, "np.linspace(start, stop, num, endpoint); attrs: endpoint", allocates=True,
         may_raise=True)
    define("roll", _roll_rule, "np.roll(x, shift, axis): a new array (a copy); attrs: axis (None: the flattened "
         "array, reshaped back)", allocates=True, adjoint_shaped=True)
    define("tile", _tile_rule, "np.tile(x, reps): operands: x, one count per axis of the result (padded with 1s "
         "in front); a new array", allocates=True, may_raise=True, adjoint_shaped=True)
    define("tile_sum", _summed_back_rule, "the adjoint of np.tile: g's tiles summed to x's shape; operands: g, x, "
         "the counts", allocates=True, shape_operand=1, adjoint="refused", internal=True)
    define("repeat", _repeat_rule, "np.repeat(x, r, axis): each element r times; attrs: axis (None: of the "
         "flattened array); a new array", allocates=True, may_raise=True, adjoint_shaped=True)
    define("repeat_sum", _summed_back_rule, "the adjoint of np.repeat: each run of r elements of g summed; "
         "operands: g, x, r; attrs: axis", allocates=True, shape_operand=1, adjoint="refused", internal=True)
    define("kron", _kron_rule, "np.kron(a, b) of two vectors or two matrices: out[i·p + k] = a[i]·b[k] per axis "
         "(p: b's shape)", allocates=True, adjoint_shaped=True)
    define("kron_grad", _kron_grad_rule, "the adjoint of np.kron for one operand: operands: g, the other operand, "
         "the operand (read for its shape); attrs: wrt (0: a, 1: b)",
         allocates=True, shape_operand=2, adjoint="refused",
         internal=True)
    define("repeat_each", _repeat_each_rule, "np.repeat(x, counts, axis): element i counts[i] times (one count: "
         "each); attrs: axis (None: of the flattened array); a new array",
         allocates=True, may_raise=True, adjoint_shaped=True)
    define("repeat_each_sum", _summed_back_rule, "the adjoint of np.repeat with counts: each element's run of g "
         "summed; operands: g, x, counts; attrs: axis", allocates=True, shape_operand=1, adjoint="refused",
         internal=True)
