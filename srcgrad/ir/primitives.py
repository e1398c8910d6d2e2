"""The primitive table: every op the IR may contain, with its type rule.

This table is the single source of truth: the derivative rules (ad/rules.py), forward rules
and each backend are tables keyed by these names, and tests/compiler/test_primitive_tables.py
fails when one of them misses a primitive.

Example:
    >>> PRIMITIVES["sin"].result_type([F64], {})
    f64
"""
from ..errors import TypingError
from . import join_primitives, shape_primitives
from .primitive_table import PRIMITIVES, define, table_entry
from .types import BOOL, F32, F64, I64, NONE, UNDO_LOG, ArrayType, TapeType, unify


def _numeric(t, what):
    if t not in (F64, I64, BOOL):
        raise TypingError(f"{what} needs numbers, got {t}")
    return t


def _elementwise(scalar_rule):
    """Lift a scalar type rule to numpy broadcasting: any array operand makes an array result
    of the largest rank, its dtype given by the scalar rule on the element types."""
    def rule(ts, attrs):
        arrays = [t for t in ts if isinstance(t, ArrayType)]
        if not arrays:
            return scalar_rule(ts, attrs)
        elem = scalar_rule([t.dtype if isinstance(t, ArrayType) else t for t in ts], attrs)
        return ArrayType(elem, max(t.ndim for t in arrays))
    rule.elementwise = True
    return rule


def _float_rule(ts, attrs):
    for t in ts:
        _numeric(t, "this math function")
    return F64


def _arith_rule(ts, attrs):
    a, b = (_numeric(t, "arithmetic") for t in ts)
    t = unify(a, b)
    return I64 if t is BOOL else t


def _same_rule(ts, attrs):
    t = _numeric(ts[0], "this operation")
    return I64 if t is BOOL else t


def _bool_rule(ts, attrs):
    return BOOL


def _pow_rule(ts, attrs):
    a, b = ts
    return I64 if unify(a, b) in (I64, BOOL) and attrs.get("int_result") else F64


def _select_rule(ts, attrs):
    c, a, b = ts
    t = unify(a, b)
    if t is None:
        raise TypingError(f"the two branches have types {a} and {b}")
    return t


def _const_rule(ts, attrs):
    return attrs["type"]


def _index_rule(ts, attrs):
    arr = ts[0]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays can be indexed, not {arr}")
    if len(ts) - 1 != arr.ndim:
        raise TypingError(f"an array of {arr.ndim} dimensions needs {arr.ndim} indices here, got {len(ts) - 1}")
    for t in ts[1:]:
        if t not in (I64, BOOL):
            raise TypingError(f"array indices must be integers, got {t}")
    return F64 if arr.dtype is F32 else arr.dtype


def _shape_rule(ts, attrs):
    arr = ts[0]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays have a shape, not {arr}")
    if not 0 <= attrs["axis"] < arr.ndim:
        raise TypingError(f"axis {attrs['axis']} is out of range for an array of {arr.ndim} dimensions")
    return I64


def _region_rule(ts, attrs):
    return attrs.get("result_types", ())


# constants and conversions
define("const", _const_rule, "a literal or a global read at compile time; attrs: value, type")
define("to_f64", lambda ts, a: ArrayType(F64, ts[0].ndim) if isinstance(ts[0], ArrayType) else F64,
     "float(x); an int or bool array becomes a float64 array", shaped_like=0)
define("to_i64", lambda ts, a: I64, "int(x): truncates toward 0", may_raise=True)     # int(nan), int(inf)
define("to_bool", lambda ts, a: BOOL, "bool(x)")

# arithmetic (Python semantics: / is true division, // and % floor toward -inf)
for _n, _sym in (("add", "+"), ("sub", "-"), ("mul", "*")):
    define(_n, _elementwise(_arith_rule), f"a {_sym} b (ints: 64 bits, OverflowError beyond)", overflows=True)
def _div_rule(ts, attrs):
    _arith_rule(ts, attrs)      # checks the operands
    return F64


define("div", _elementwise(_div_rule), "true division", may_raise=True)
define("floordiv", _elementwise(_arith_rule), "floor division (toward -inf)", may_raise=True)
define("mod", _elementwise(_arith_rule), "remainder with the sign of the divisor", may_raise=True)
define("pow", _elementwise(_pow_rule), "x ** y; attrs: int_result for int ** non-negative int constant",
     may_raise=True, unbounded_slope=True, overflows=True)
define("neg", _elementwise(_same_rule), "-x", overflows=True)
define("abs", _elementwise(_same_rule), "abs(x); np.abs on arrays", overflows=True)
define("min", _elementwise(_arith_rule), "min(a, b); np.minimum on arrays")
define("max", _elementwise(_arith_rule), "max(a, b); np.maximum on arrays")
define("atan2", _elementwise(_float_rule), "math.atan2(y, x): the angle of the point (x, y)", may_raise=True)
define("hypot", _elementwise(_float_rule), "math.hypot(x, y): sqrt(x * x + y * y) without overflow",
       may_raise=True)

# elementary functions of floats
UNARY_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log",
              "log1p", "log2", "log10", "sqrt", "erf")
_ON_ARRAYS = {"asin": "; np.arcsin on arrays", "acos": "; np.arccos on arrays", "atan": "; np.arctan on arrays",
              "erf": ""}
# math.sqrt(-1.0), math.log(0.0) raise on the python backend; these never raise (NaN or inf instead)
_TOTAL_MATH = ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "atan")
for _n in UNARY_MATH:
    define(_n, _elementwise(_float_rule), f"math.{_n}(x)" + _ON_ARRAYS.get(_n, f"; np.{_n} on arrays"),
           may_raise=_n not in _TOTAL_MATH,
         unbounded_slope=_n in ("sqrt", "log", "log1p", "log2", "log10", "asin", "acos"))
define("floor", lambda ts, a: I64, "math.floor: an int", may_raise=True)
define("ceil", lambda ts, a: I64, "math.ceil: an int", may_raise=True)
define("round", lambda ts, a: I64, "round(x): the nearest int, halves to even", may_raise=True)

# comparisons and logic
for _n, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")):
    define(_n, _elementwise(_bool_rule), f"a {_sym} b: a bool")
define("not", _bool_rule, "not x")
define("and", _bool_rule, "both operands evaluated (they have no side effects)")
define("or", _bool_rule, "either operand true (both evaluated)")
def _select_array_rule(ts, attrs):
    c, a, b = ts
    if not any(isinstance(t, ArrayType) for t in ts):
        return _select_rule(ts, attrs)
    elems = [t.dtype if isinstance(t, ArrayType) else t for t in ts]
    return ArrayType(_select_rule(elems, attrs), max(t.ndim for t in ts if isinstance(t, ArrayType)))


define("select", _select_array_rule, "cond ? a : b (np.where on arrays)")

# arrays
define("index", _index_rule, "x[i, j]: one element", may_raise=True, index_start=1, adjoint="structural")
define("shape", _shape_rule, "x.shape[axis]; attrs: axis", shape_operand=0)

# whole arrays
def _float_array(t, what):
    if not (isinstance(t, ArrayType) and t.dtype in (F64, I64, BOOL)):
        raise TypingError(f"{what} needs an array, got {t}")
    return t


def _reduce_rule(ts, attrs):
    t = _float_array(ts[0], "this reduction")
    elem = I64 if t.dtype is BOOL else t.dtype
    axis = attrs.get("axis")
    if axis is None or t.ndim == 1:
        return elem
    if not 0 <= axis < t.ndim:
        raise TypingError(f"axis {axis} is out of range for an array of {t.ndim} dimensions")
    return ArrayType(elem, t.ndim - 1)


def _matmul_rule(ts, attrs):
    a, b = ts
    for t in ts:
        if not isinstance(t, ArrayType) or t.ndim not in (1, 2):
            raise TypingError(f"np.dot and @ take vectors and matrices here, got {t}")
    elem = unify(a.dtype, b.dtype)
    rank = a.ndim + b.ndim - 2
    return elem if rank == 0 else ArrayType(elem, rank)


def _like_second(ts, attrs):
    return ts[1]


def _setitem_rule(ts, attrs):
    arr, v = ts[0], ts[1]
    _index_rule([arr] + list(ts[2:]), attrs)
    if v not in (F64, I64, BOOL):
        raise TypingError(f"an array element takes a number, got {v}")
    if arr.dtype not in (F64, F32) and v is F64:
        raise TypingError(f"cannot store a float into an array of {arr.dtype}")
    return arr


def _new_array_rule(ts, attrs):
    for t in ts:
        if t not in (I64, BOOL):
            raise TypingError(f"array sizes must be integers, got {t}")
    return ArrayType(attrs.get("dtype", F64), len(ts))


def _slice_rule(ts, attrs):
    arr = ts[0]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays can be sliced, not {arr}")
    spec = attrs["spec"]
    new_axes = sum(1 for s in spec if s[0] == "n")      # None / np.newaxis: a length-1 axis
    if len(spec) - new_axes > arr.ndim:
        raise TypingError(f"too many indices for an array of {arr.ndim} dimensions")
    for t in ts[1:]:
        if t not in (I64, BOOL):
            raise TypingError(f"slice bounds and indices must be integers, got {t}")
    kept = sum(1 for s in spec if s[0] in "sn") + arr.ndim - (len(spec) - new_axes)
    return ArrayType(arr.dtype, kept)


def _setslice_rule(ts, attrs):
    arr, v = ts[0], ts[1]
    part = _slice_rule([arr] + list(ts[2:]), attrs)
    if isinstance(v, ArrayType) and v.ndim > part.ndim:
        raise TypingError(f"cannot store an array of {v.ndim} dimensions into a slice of {part.ndim}")
    return arr


define("slice", _slice_rule, "x[a:b, j, ::s]: a view; attrs: spec, one entry per axis ('i',) or "
     "('s', has_start, has_stop, has_step), or ('n',) for a new length-1 axis (None); operands: the array, then the bounds given",
     view=True, may_raise=True, adjoint="structural")
define("setslice", _setslice_rule, "x[a:b] = v: a new version of x (written in place)",
     writes=0, may_raise=True, key="slice", adjoint="structural")
define("slice_add", lambda ts, a: ts[0], "adjoint accumulation: arr[slice] += g; returns arr (in place)", writes=0,
     may_raise=True, key="slice", accumulates=True, internal=True)
define("setitem", _setitem_rule, "x[i, j] = v: a new version of x (the backends write in place)", writes=0,
     may_raise=True, index_start=2, key="item", adjoint="structural")
# numpy's advanced indexing: integer index arrays and boolean masks (copies, not views)
def _index_arrays(arr, idx, what):
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays can be indexed, not {arr}")
    if len(idx) > arr.ndim:
        raise TypingError(f"too many indices for an array of {arr.ndim} dimensions")
    for t in idx:
        if not (isinstance(t, ArrayType) and t.dtype is I64):
            raise TypingError(f"{what} take int64 index arrays, got {t}")
    return max(t.ndim for t in idx)         # the index arrays broadcast together


def _gather_rule(ts, attrs):
    arr, idx = ts[0], ts[1:]
    rank = _index_arrays(arr, idx, "x[idx]")
    return ArrayType(arr.dtype, rank + arr.ndim - len(idx))


def _scatter_rule(ts, attrs):
    arr, v, idx = ts[0], ts[1], ts[2:]
    _index_arrays(arr, idx, "x[idx] = v")
    if (v.dtype if isinstance(v, ArrayType) else v) is F64 and arr.dtype not in (F64, F32):
        raise TypingError(f"cannot store floats into an array of {arr.dtype}")
    return arr


def _mask_rule(ts, attrs):
    arr, mask = ts[0], ts[-1]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays can be indexed, not {arr}")
    if not (isinstance(mask, ArrayType) and mask.dtype is BOOL and mask.ndim <= arr.ndim):
        raise TypingError(f"a mask is a bool array of at most the array's {arr.ndim} dimensions, got {mask}")
    return ArrayType(arr.dtype, 1 + arr.ndim - mask.ndim)


def _setmask_rule(ts, attrs):
    _mask_rule([ts[0], ts[2]], attrs)
    v = ts[1]
    if (v.dtype if isinstance(v, ArrayType) else v) is F64 and ts[0].dtype not in (F64, F32):
        raise TypingError(f"cannot store floats into an array of {ts[0].dtype}")
    return ts[0]


define("gather", _gather_rule, "x[i], X[i, j] with int64 index arrays (broadcast together): a copy of shape "
     "idx.shape + the axes not indexed; negative indices wrap; attrs: last_only (the adjoint of x[idx] = v: "
     "an entry whose place a later entry also names reads 0)", allocates=True, may_raise=True, adjoint="structural")
define("scatter", _scatter_rule, "x[idx] = v: a new version of x (in place); a repeated place keeps the last value",
     writes=0, may_raise=True, key="indices", adjoint="structural")
define("scatter_add", _scatter_rule, "np.add.at(x, idx, v): x[idx] += v where repeated places accumulate; "
     "returns x (in place)", writes=0, may_raise=True, key="indices", accumulates=True, adjoint="structural")
define("mask_select", _mask_rule, "x[mask], mask a bool array over x's leading axes: a copy, its first axis the "
     "count of True", allocates=True, may_raise=True, adjoint="structural")
define("setmask", _setmask_rule, "x[mask] = v (v a number or one value per True): a new version of x (in place)",
     writes=0, may_raise=True, key="mask", adjoint="structural")
define("full", _new_array_rule, "np.zeros/np.ones/np.full/np.empty(shape): operands: the sizes; attrs: value",
     allocates=True, may_raise=True)
define("empty", _new_array_rule, "an array of these sizes whose every element is written before anything reads "
     "it (ir/write_passes.py makes it of np.zeros followed by writes); attrs: dtype", allocates=True, may_raise=True)
define("sum", _reduce_rule, "np.sum(x) or np.sum(x, axis=k); attrs: axis")
define("prod", _reduce_rule, "np.prod(x[, axis=k])")
define("amax", _reduce_rule, "np.max(x[, axis=k])", may_raise=True)       # of an empty array
define("amin", _reduce_rule, "np.min(x[, axis=k])", may_raise=True)
define("reduce_grad", _like_second, "the gradient of np.prod, exact at zeros: attrs: of ('prod'), axis; "
     "operands: g, x, out (max/min's gradient is built from eq, select, sum and div)", adjoint="refused", internal=True)
define("arange", lambda ts, a: ArrayType(F64 if any(t is F64 for t in ts) else I64, 1), "np.arange(start, stop, step)",
     allocates=True, may_raise=True)
define("size", lambda ts, a: I64, "x.size", shape_operand=0)
define("matmul", _matmul_rule, "np.dot(a, b), a @ b for vectors and matrices", may_raise=True, adjoint_shaped=True)
define("transpose", lambda ts, a: _float_array(ts[0], ".T"), "x.T", view=True)
define("outer", lambda ts, a: ArrayType(F64, 2), "np.outer(a, b) of two vectors")
define("copy", lambda ts, a: ts[0], "a fresh copy of an array", allocates=True, shaped_like=0)
define("sum_to", _like_second, "g summed over broadcast dims to the shape of the second operand; g itself "
     "when the shapes are equal", may_alias=True, shape_operand=1, may_raise=True, internal=True)
define("broadcast_like", _like_second, "g broadcast to the shape of the second operand; attrs: axis",
     shape_operand=1, may_raise=True, internal=True)

# adjoint bookkeeping (made by ad/reverse.py, never by the frontend)
def _tape_new_rule(ts, attrs):
    return TapeType(attrs["items"])


def _tape_get_rule(ts, attrs):
    return list(ts[0].items)


def _zeros_like_rule(ts, attrs):
    return ts[0]


def _index_add_rule(ts, attrs):
    return ts[0]


define("tape_new", _tape_new_rule, "a tape for per-iteration values; operand: length (none: grows); attrs: items",
     allocates=True, internal=True, scalar_only=True)
define("tape_put", lambda ts, a: NONE, "tape[k] = values (attrs: append for a growing tape)",
     effect=True, adjoint="refused",
     internal=True)
define("tape_get", _tape_get_rule, "the values stored at tape[k]", may_alias=True, adjoint="refused", internal=True)
# the undo log: what in-place writes overwrote, put back by the reverse sweep (ad/reverse.py)
define("undo_new", lambda ts, a: UNDO_LOG, "an empty undo log", allocates=True, internal=True)
define("undo_mark", lambda ts, a: I64, "the undo log's height now (rewind to it later); never merged with "
     "another (passes.py): the height changes", internal=True)
define("undo_save", lambda ts, a: NONE, "save on the undo log the elements the next write overwrites: operands: "
     "the array, the log, then the write's index operands (its value left out); attrs: write (the write's "
     "primitive) and the write's attrs", effect=True, may_raise=True, adjoint="refused", internal=True)
define("undo_rewind", lambda ts, a: NONE, "put back, latest first, every element saved on the undo log since it "
     "had the height of operand 1", effect=True, internal=True)
define("zeros_like", _zeros_like_rule, "an array of zeros shaped like the operand",
     allocates=True, shape_operand=0, internal=True)
define("index_add", _index_add_rule, "adjoint accumulation: arr[idx] += g; returns arr (updated in place)",
     writes=0, may_raise=True, index_start=2, key="item", accumulates=True, internal=True)
define("range_len", lambda ts, a: I64, "len(range(start, stop, step))", may_raise=True, scalar_only=True)

# calls into user code with a hand-written derivative (srcgrad.custom_vjp)
define("call_custom", lambda ts, a: list(a["result_types"]), "fn(*operands); attrs: fn (a custom_vjp)",
     effect=True, may_raise=True, may_alias=True, adjoint="structural")
define("call_custom_vjp", lambda ts, a: list(a["result_types"]),
     "fn.vjp(*args, *results, *cotangents) -> one cotangent per float argument; attrs: fn, n_args",
     effect=True, may_raise=True, may_alias=True, adjoint="refused", internal=True)

# structured control flow: ops that own regions
define("if", _region_rule, "operands: cond; regions: then, else; each yields the results",
     region_op=True, adjoint="structural")
define("for", _region_rule, "operands: start, stop, step, *init; region args: i, *carried",
     region_op=True, adjoint="structural")
define("while", _region_rule, "operands: *init; regions: cond (args -> yield bool), body (args -> yield carried)",
     region_op=True, adjoint="structural")
define("assert", lambda ts, a: NONE, "raises AssertionError(message) when the operand is false", effect=True,
     may_raise=True, scalar_only=True)
define("yield", lambda ts, a: NONE, "ends a region", effect=True)
define("return", lambda ts, a: NONE, "ends the function", effect=True)

# linear algebra and contractions (issue 11; frontend/numpy_linalg.py makes them)
def _matrix(t, what, square=True):
    if not (isinstance(t, ArrayType) and t.ndim == 2 and t.dtype in (F64, I64, BOOL, F32)):
        raise TypingError(f"{what} takes a {'square ' if square else ''}matrix here (a 2-d array; stacks of "
                          f"matrices are not supported yet), got {t}")
    return t


def _number_of_matrix(what):
    def rule(ts, attrs):
        _matrix(ts[0], what)
        return F64
    return rule


def _einsum_rule(ts, attrs):
    inputs, output = attrs["spec"]
    if len(inputs) != len(ts):
        raise TypingError(f"np.einsum: {len(inputs)} subscripts for {len(ts)} operands")
    for t, sub in zip(ts, inputs):
        if not isinstance(t, ArrayType) or t.ndim != len(sub):
            raise TypingError(f"np.einsum: the subscripts '{sub}' need an array of {len(sub)} dimensions, got {t}")
    return ArrayType(F64, len(output)) if output else F64


def _solve_rule(ts, attrs):
    _matrix(ts[0], "np.linalg.solve")
    if not (isinstance(ts[1], ArrayType) and ts[1].ndim in (1, 2)):
        raise TypingError(f"np.linalg.solve takes b as a vector or a matrix here, got {ts[1]}")
    return ArrayType(F64, ts[1].ndim)


define("einsum", _einsum_rule, "np.einsum with explicit subscripts; attrs: spec = (input subscripts, output "
     "subscripts); a new array (or a number for '->'); an output index repeats only in gradients ('i->ii': a "
     "diagonal, zeros elsewhere)", may_raise=True)
define("norm_sqrt", _elementwise(_float_rule), "the square root of a 2-norm's sum of squares: sqrt, except that "
     "its derivative at 0 is taken as 0 (torch.linalg.norm's gradient at the zero vector)", may_raise=True)
define("det", _number_of_matrix("np.linalg.det"), "np.linalg.det (LU with partial pivoting)",
     may_raise=True)
define("slogdet_sign", _number_of_matrix("np.linalg.slogdet"),
     "the sign of np.linalg.slogdet (0.0 for a singular matrix)", may_raise=True)
define("slogdet_log", _number_of_matrix("np.linalg.slogdet"),
     "the log|det| of np.linalg.slogdet (-inf for a singular matrix)", may_raise=True)
define("inv", lambda ts, a: ArrayType(F64, _matrix(ts[0], "np.linalg.inv").ndim),
     "np.linalg.inv: a new array; LinAlgError('Singular matrix')", may_raise=True)
define("solve", _solve_rule, "np.linalg.solve(A, b), b a vector or a matrix: a new array; "
     "LinAlgError('Singular matrix')", may_raise=True)
define("cholesky", lambda ts, a: ArrayType(F64, _matrix(ts[0], "np.linalg.cholesky").ndim),
     "np.linalg.cholesky: the lower factor (reads A's lower triangle), a new array; "
     "LinAlgError('Matrix is not positive definite')", may_raise=True)
define("cholesky_grad", lambda ts, a: ArrayType(F64, 2), "the adjoint of A = L L^T from gL: operands gL, L "
     "(PyTorch's formula: symmetric)", may_raise=True, adjoint="refused", internal=True)


def _svdvals_grad_rule(ts, attrs):
    _matrix(ts[1], "the gradient of the singular values", square=False)
    if attrs["mode"] not in ("vjp", "jvp"):
        raise TypingError(f"svdvals_grad: mode {attrs['mode']!r} is not 'vjp' or 'jvp'")
    want = 1 if attrs["mode"] == "vjp" else 2
    if not (isinstance(ts[0], ArrayType) and ts[0].ndim == want):
        raise TypingError(f"svdvals_grad ({attrs['mode']}) takes t as an array of {want} dimensions, got {ts[0]}")
    return ArrayType(F64, 3 - want)


# the singular values (np.linalg.norm's ord=2, -2 and 'nuc' reduce them). The derivative is
# PyTorch's svdvals backward, U diag(t) V^T, but at kinks it is that of d|x| at 0 in this project:
# the terms of a singular value that is exactly 0 are dropped, on both backends (so the gradient at
# the zero matrix is 0; PyTorch gives the subgradient of whatever U, V LAPACK returns there). At
# equal singular values U diag(t) V^T does not depend on the basis chosen where t is equal over
# the tie (amax/amin share ties evenly)
define("svdvals", lambda ts, a: _matrix(ts[0], "np.linalg.svdvals", square=False) and ArrayType(F64, 1),
     "np.linalg.svd(A, compute_uv=False) of an m×n matrix: its k = min(m, n) singular values, descending, a new "
     "array; LinAlgError('SVD did not converge') where A holds a NaN (an infinity gives NaNs, as numpy's)",
     may_raise=True)
define("svdvals_grad", _svdvals_grad_rule, "the derivative of svdvals(A), A = U diag(s) V^T the reduced SVD, "
     "terms with s_j == 0 dropped: operands t, A; attrs: mode ('vjp': t is the k-vector adjoint of s, the result "
     "U diag(t) V^T, m×n; 'jvp': t is dA, m×n, the result the k-vector diag(U^T dA V))",
     may_raise=True, adjoint="refused",
     internal=True)


# reductions, scans and rounding (issue 11, the reductions family)
def _expand_dims_rule(ts, attrs):
    t = _float_array(ts[0], "keepdims")
    if not 0 <= attrs["axis"] <= t.ndim:
        raise TypingError(f"axis {attrs['axis']} is out of range for keepdims of an array of {t.ndim} dimensions")
    return ArrayType(t.dtype, t.ndim + 1)


def _scan_rule(ts, attrs):
    t = _float_array(ts[0], "np.cumsum/np.cumprod")
    if not 0 <= attrs["axis"] < t.ndim:
        raise TypingError(f"axis {attrs['axis']} is out of range for an array of {t.ndim} dimensions")
    return ArrayType(F64, t.ndim)


def _arg_rule(ts, attrs):
    t = _reduce_rule(ts, attrs)
    return ArrayType(I64, t.ndim) if isinstance(t, ArrayType) else I64


define("expand_dims", _expand_dims_rule, "a new axis of size 1 at attrs axis (keepdims=True): a view", view=True)
define("cumsum", _scan_rule, "np.cumsum(x, axis=k); attrs: axis, reverse (sums from the end: its adjoint)",
       shaped_like=0)
define("cumprod", _scan_rule, "np.cumprod(x, axis=k); attrs: axis", shaped_like=0)
define("cumprod_grad", lambda ts, a: ArrayType(F64, ts[1].ndim), "d cumprod, exact at zeros (no division): "
     "operands: t, x; attrs: axis, mode ('vjp': t is the adjoint of the result; 'jvp': t is dx)", adjoint="refused",
     internal=True, shaped_like=1)
define("argmax", _arg_rule, "np.argmax(x[, axis=k]): the first largest (the first NaN)", may_raise=True)
define("argmin", _arg_rule, "np.argmin(x[, axis=k]): the first smallest (the first NaN)", may_raise=True)
for _n in ("float_floor", "float_ceil", "float_trunc", "float_rint"):
    define(_n, _elementwise(_float_rule), f"np.{_n[6:]}: a float (math.floor/ceil give ints: 'floor', 'ceil')")
def _along_rule(ts, attrs):
    g, idx = ts
    if not (isinstance(idx, ArrayType) and idx.dtype is I64 and isinstance(g, ArrayType) and g.ndim == idx.ndim):
        raise TypingError(f"take/put along an axis needs an array and int indices of its rank, got {g} and {idx}")
    return ArrayType(F64, g.ndim)


define("argsort", lambda ts, a: ArrayType(I64, _scan_rule(ts, a).ndim),
     "np.argsort(x, axis=k, kind='stable'): a stable order, NaNs last; attrs: axis")
define("take_along", _along_rule, "np.take_along_axis(g, idx, axis): np.sort is x taken along argsort(x); "
     "attrs: axis", may_raise=True)
define("put_along", _along_rule, "the adjoint of take_along for a permutation idx: out (zeros) with "
     "out[.., idx[i], ..] += g[.., i, ..]; attrs: axis", may_raise=True, internal=True)

# the families' records (their modules import only primitive_table.py)
join_primitives.define_all()
shape_primitives.define_all()

__all__ = ["PRIMITIVES", "UNARY_MATH", "define", "table_entry"]
