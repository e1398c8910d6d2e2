"""The IR interpreter: the reference semantics of the IR, in plain Python and numpy.

It runs a Function of any stage (the frontend's primal IR, the IR after each pass, the
reverse- or forward-mode IR) by walking its ops; it shares no code with the backends, so that
translation validation (tests/fuzz/validate.py) compares the IR before and after each pass
against an independent reading of what the IR means.

Semantics, op by op (``EVAL``, keyed by primitive name like every other table):

- numbers are Python ``float``/``int``/``bool``; ``/``, ``//``, ``%`` and ``**`` on numbers are
  CPython's (ZeroDivisionError, floor toward -inf, the sign fix of float ``%``); an ``i64``
  result outside the 64-bit range raises OverflowError, since compiled code would wrap there;
- elementary functions (sin, log, ...) follow numpy, as both backends do: NaN and infinities
  propagate instead of raising math's domain errors;
- arrays are numpy arrays, and in-place ops (setitem, setslice, index_add, slice_add) write
  into the operand's buffer: the "new version" they return is that same object, so every
  alias (a slice, a transpose, the caller's argument, an item stored on a tape) sees the write;
- tapes are Python lists holding references (not copies) of what was stored.

Example:
    >>> from srcgrad.frontend.lower import lower
    >>> from srcgrad.ir.types import F64
    >>> def f(x):
    ...     return x * x + 1.0
    >>> interpret(lower(f, [F64]), [0.5])      # what compiled f(0.5) must return
    1.25
"""
import math

import numpy as np

from ..errors import NEGATIVE_INT_POWER
from .indexing_eval import INDEXING_EVAL
from .linalg_eval import LINALG_EVAL
from .interpret_joins import JOIN_EVAL
from .types import BOOL, F64, I64, NUMPY_DTYPES, ArrayType
from .shape_eval import SHAPE_EVAL
from .interpret_keys import index_key, slice_key
from .undo_eval import UNDO_EVAL

_I64_MIN, _I64_MAX = -2**63, 2**63 - 1
# ops whose results come as a sequence (any number of them); every other op gives one value or none
_MANY = {"if", "for", "while", "tape_get", "call_custom", "call_custom_vjp"}


def interpret(fn, args):
    """Run IR Function ``fn`` on ``args`` (numbers and numpy arrays, used as given: writes into an
    argument array are seen by the caller). Returns one value, or a tuple for several results,
    as the compiled function would."""
    if len(args) != len(fn.params):
        raise TypeError(f"{fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    env = {p: _typed(p.type, a) for p, a in zip(fn.params, args)}
    out = _Interpreter(env).block(fn.body)
    return out[0] if len(out) == 1 else tuple(out)


class _Interpreter:
    def __init__(self, env):
        self.env = env

    def block(self, block, args=()):
        """Run ``block`` with its arguments bound to ``args``; the operands of its terminator."""
        env = self.env
        for a, v in zip(block.args, args):
            env[a] = v
        for op in block.ops:
            ins = [env[v] for v in op.operands]
            if op.prim in ("yield", "return"):
                return ins
            out = EVAL[op.prim](self, op, ins)
            if op.prim in _MANY:
                for r, v in zip(op.results, out):
                    env[r] = _typed(r.type, v)
            elif op.results:
                env[op.results[0]] = _typed(op.results[0].type, out)
        raise RuntimeError("srcgrad: a block without a terminator")    # the verifier rules this out


def _typed(t, v):
    """``v`` as a value of IR type ``t``: exact Python numbers, arrays as numpy arrays."""
    if t is F64:
        return float(v)
    if t is I64:
        v = int(v)
        if not _I64_MIN <= v <= _I64_MAX:
            raise OverflowError(f"integer {v} is beyond the 64-bit integers compiled code computes with")
        return v
    if t is BOOL:
        return bool(v)
    if isinstance(t, ArrayType) and not isinstance(v, np.ndarray):
        return np.asarray(v, dtype=NUMPY_DTYPES[t.dtype])
    return v


def _any_array(ins):
    return any(isinstance(v, np.ndarray) for v in ins)


def _elementwise(scalar, array):
    """An op on numbers (Python's operator) or, with an array operand, numpy's ufunc (IEEE:
    no exception for a division by zero, as the backends' array code)."""
    def run(it, op, ins):
        if _any_array(ins):
            with np.errstate(all="ignore"):
                return array(*ins)
        return scalar(*ins)
    return run


def _pow(a, b):
    r = float(a) ** float(b)
    return math.nan if isinstance(r, complex) else r      # a negative base to a fractional power: NaN, as C's pow


def _pow_op(it, op, ins):
    a, b = ins
    if _any_array(ins):
        with np.errstate(all="ignore"):
            return np.power(a, b)
    if op.results[0].type is I64:
        if b < 0:
            raise ValueError(NEGATIVE_INT_POWER)
        return int(a) ** int(b)
    return _pow(a, b)


def _numpy_math(name):
    """Elementary functions as numpy computes them (both backends agree: NaN, not an error)."""
    f = getattr(np, name)

    def run(it, op, ins):
        with np.errstate(all="ignore"):
            out = f(*[np.float64(v) if not isinstance(v, np.ndarray) else v for v in ins])
        return out if isinstance(out, np.ndarray) else float(out)
    return run


def _erf(it, op, ins):
    (x,) = ins
    if isinstance(x, np.ndarray):
        return np.vectorize(math.erf, otypes=[np.float64])(x)
    return math.erf(x)


def _min(a, b):
    return b if b < a else a       # Python's min(a, b): the first unless the second is smaller


def _max(a, b):
    return b if b > a else a


def _setitem(it, op, ins):
    arr, v, *idx = ins
    arr[index_key(idx)] = v
    return arr              # the new version is the same buffer


def _index_add(it, op, ins):
    arr, g, *idx = ins
    key = index_key(idx)
    arr[key] = arr.dtype.type(arr[key].item() + g)      # added in float64, then stored (float32 rounds)
    return arr


def _setslice(it, op, ins):
    arr, v, *bounds = ins
    arr[slice_key(op, bounds)] = v
    return arr


def _slice_add(it, op, ins):
    arr, g, *bounds = ins
    arr[slice_key(op, bounds)] += g
    return arr


def _index(it, op, ins):
    arr, *idx = ins
    return arr[index_key(idx)]


def _full(it, op, ins):
    dtype = NUMPY_DTYPES[op.attrs.get("dtype", F64)]
    return np.full(tuple(int(n) for n in ins), op.attrs["value"], dtype=dtype)


def _empty(it, op, ins):
    # NaN, not np.empty's leftovers: an element read before it is written shows as NaN in
    # translation validation, every time
    dtype = NUMPY_DTYPES[op.attrs.get("dtype", F64)]
    return np.full(tuple(int(n) for n in ins), np.nan, dtype=dtype)


def _reduce(f):
    def run(it, op, ins):
        return f(np.ascontiguousarray(ins[0]), axis=op.attrs.get("axis"))
    return run


def _matmul(a, b):
    # a copy in C order first: numpy's (and BLAS's) order of summation depends on the memory
    # layout, and the interpreter must give one answer for one value (a transpose is a view)
    return np.ascontiguousarray(a) @ np.ascontiguousarray(b)


def _sum_to(g, like):
    """``g`` summed over the dimensions broadcasting added to reach ``like``'s shape; ``g``
    itself when the shapes agree (an alias, as the backends give)."""
    shape = np.shape(like)
    g = np.asarray(g)
    if g.shape == shape:
        return g
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for k, n in enumerate(shape):
        if n == 1 and g.shape[k] != 1:
            g = g.sum(axis=k, keepdims=True)
    return g.reshape(shape)


def _broadcast_like(it, op, ins):
    g, like = ins
    axis = op.attrs.get("axis")
    g = np.asarray(g, dtype=np.float64)
    if axis is not None:
        g = np.expand_dims(g, axis)
    out = np.empty(np.shape(like), dtype=np.float64)
    out[...] = g
    return out


def _reduce_grad(it, op, ins):
    """d prod(x) times g: each element's share is the product of the others (exact where
    elements are zero)."""
    g, x, out = ins
    axis = op.attrs.get("axis")
    x = np.asarray(x, dtype=np.float64)
    if axis is None:
        x1, g1 = x.reshape(1, -1), np.reshape(g, (1,))
    else:
        x1 = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
        g1 = np.broadcast_to(np.asarray(g, dtype=np.float64), np.shape(out)).reshape(-1)
    res = np.zeros_like(x1)
    for r in range(x1.shape[0]):
        row = x1[r]
        for k in range(row.size):
            res[r, k] = g1[r] * np.prod(np.delete(row, k))
    if axis is None:
        return res.reshape(x.shape)
    moved = list(np.moveaxis(x, axis, -1).shape)
    return np.moveaxis(res.reshape(moved), -1, axis)


def _if(it, op, ins):
    return it.block(op.then if ins[0] else op.orelse)


def _for(it, op, ins):
    start, stop, step, *carried = ins
    body = op.body
    for i in range(start, stop, step):       # ValueError for a zero step, as range()
        carried = it.block(body, [i] + carried)
    return carried


def _while(it, op, ins):
    cond, body = op.test, op.body
    carried = ins
    while it.block(cond, carried)[0]:
        carried = it.block(body, carried)
    return carried


def _tape_new(it, op, ins):
    return [None] * int(ins[0]) if ins else []


def _tape_put(it, op, ins):
    tape, k, *vals = ins
    if op.attrs.get("append"):
        tape.append(tuple(vals))
    else:
        tape[k] = tuple(vals)       # references: an array stored here sees later writes to it


def _tape_get(it, op, ins):
    tape, k = ins
    return tape[k]


def _call_custom(it, op, ins):
    out = op.attrs["fn"].fun(*ins)
    return out if len(op.results) > 1 else [out]


def _call_custom_vjp(it, op, ins):
    cts = op.attrs["fn"].vjp(*ins)
    return [cts[k] for k in op.attrs["targets"]]


def _assert(it, op, ins):
    if not ins[0]:
        raise AssertionError(op.attrs["message"])


def _single(f):
    return lambda it, op, ins: f(*ins)


_ARITH = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "div": (lambda a, b: a / b, np.true_divide),
    "floordiv": (lambda a, b: a // b, np.floor_divide), "mod": (lambda a, b: a % b, np.mod),
    "neg": (lambda a: -a, np.negative), "abs": (abs, np.abs), "min": (_min, np.minimum), "max": (_max, np.maximum),
    "atan2": (math.atan2, np.arctan2), "hypot": (math.hypot, np.hypot),
    "lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater), "ge": (lambda a, b: a >= b, np.greater_equal),
    "eq": (lambda a, b: a == b, np.equal), "ne": (lambda a, b: a != b, np.not_equal),
}
_NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}

EVAL = {name: _elementwise(*fs) for name, fs in _ARITH.items()}
EVAL.update({n: _numpy_math(_NUMPY_NAMES.get(n, n)) for n in
             ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log",
              "log1p", "log2", "log10", "sqrt")})
EVAL.update({
    "const": lambda it, op, ins: op.attrs["value"],
    "to_f64": lambda it, op, ins: ins[0].astype(np.float64) if isinstance(ins[0], np.ndarray) else float(ins[0]),
    "to_i64": _single(int),          # truncates; ValueError for NaN, OverflowError for inf, as int()
    "to_bool": _single(bool),
    "pow": _pow_op,
    "erf": _erf,
    "floor": _single(math.floor),
    "ceil": _single(math.ceil),
    "round": _single(round),
    "not": _single(lambda a: not a),
    "and": _single(lambda a, b: bool(a) and bool(b)),
    "or": _single(lambda a, b: bool(a) or bool(b)),
    "select": lambda it, op, ins: np.where(*ins) if _any_array(ins) else (ins[1] if ins[0] else ins[2]),
    "index": _index,
    "shape": lambda it, op, ins: ins[0].shape[op.attrs["axis"]],
    "slice": lambda it, op, ins: ins[0][slice_key(op, ins[1:])],       # a view, as numpy's
    "setslice": _setslice,
    "slice_add": _slice_add,
    "setitem": _setitem,
    "full": _full,
    "empty": _empty,
    "sum": _reduce(np.sum),
    "prod": _reduce(np.prod),
    "amax": _reduce(np.max),
    "amin": _reduce(np.min),
    "reduce_grad": _reduce_grad,
    "arange": lambda it, op, ins: np.arange(*ins, dtype=NUMPY_DTYPES[op.results[0].type.dtype]),
    "size": lambda it, op, ins: ins[0].size,
    "matmul": _single(_matmul),
    "transpose": lambda it, op, ins: ins[0].T,                          # a view
    "outer": _single(lambda a, b: np.outer(a, b).astype(np.float64, copy=False)),
    "copy": lambda it, op, ins: ins[0].copy(),
    "sum_to": _single(_sum_to),
    "broadcast_like": _broadcast_like,
    "tape_new": _tape_new,
    "tape_put": _tape_put,
    "tape_get": _tape_get,
    "zeros_like": _single(np.zeros_like),
    "index_add": _index_add,
    "range_len": _single(lambda a, b, c: len(range(a, b, c))),
    "call_custom": _call_custom,
    "call_custom_vjp": _call_custom_vjp,
    "if": _if,
    "for": _for,
    "while": _while,
    "assert": _assert,
    "yield": None,         # terminators: ``block`` hands their operands back
    "return": None,
})
EVAL.update(INDEXING_EVAL)       # x[idx], x[mask] and their writes (indexing_eval.py)
EVAL.update(UNDO_EVAL)           # the reverse sweep's log of overwritten elements (undo_eval.py)
EVAL.update(LINALG_EVAL)
EVAL["norm_sqrt"] = _numpy_math("sqrt")
EVAL.update(SHAPE_EVAL)      # reshape, restride, astype, pack, stack (shape_eval.py)


# the reductions family (issue 11): numpy's own functions, on C-ordered copies where the
# order of summation could depend on the layout
def _cumsum(it, op, ins):
    x, axis = np.ascontiguousarray(ins[0], dtype=np.float64), op.attrs["axis"]
    if op.attrs.get("reverse"):
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis).copy()
    return np.cumsum(x, axis=axis)


def _cumprod_grad(it, op, ins):
    """vjp: grad[i] = P[i-1]·S[i] with S[i] = t[i] + x[i+1]·S[i+1]; jvp: dP[i] = dP[i-1]·x[i] + P[i-1]·t[i]
    (P the running product, P[-1] = 1): exact where x holds zeros."""
    t, x = (np.moveaxis(np.array(v, dtype=np.float64), op.attrs["axis"], 0) for v in ins)
    t = np.broadcast_to(t, x.shape)
    n, out = x.shape[0], np.zeros(x.shape)
    before = np.ones(x.shape[1:])
    if op.attrs["mode"] == "jvp":
        acc = np.zeros(x.shape[1:])
        for i in range(n):
            acc = t[i] if i == 0 else acc * x[i] + before * t[i]
            before = before * x[i]
            out[i] = acc
    else:
        acc = np.zeros(x.shape[1:])
        for i in reversed(range(n)):
            acc = t[i] + x[i + 1] * acc if i + 1 < n else t[i]
            out[i] = acc
        for i in range(n):
            out[i] = before * out[i]
            before = before * x[i]
    return np.moveaxis(out, 0, op.attrs["axis"]).copy()


def _put_along(it, op, ins):
    g, idx = ins
    out = np.zeros(np.shape(g))
    np.add.at(out, _along_index(idx, op.attrs["axis"]), g)
    return out


def _along_index(idx, axis):
    """The fancy index of out[.., idx[i], ..]: idx along ``axis``, the positions elsewhere."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return tuple(grids)


def _int_result(r):
    return r.astype(np.int64) if isinstance(r, np.ndarray) else int(r)


EVAL.update({
    "expand_dims": lambda it, op, ins: np.expand_dims(ins[0], op.attrs["axis"]),       # a view
    "cumsum": _cumsum,
    "cumprod": lambda it, op, ins: np.cumprod(np.asarray(ins[0], dtype=np.float64), axis=op.attrs["axis"]),
    "cumprod_grad": _cumprod_grad,
    "argmax": lambda it, op, ins: _int_result(np.argmax(ins[0], axis=op.attrs.get("axis"))),
    "argmin": lambda it, op, ins: _int_result(np.argmin(ins[0], axis=op.attrs.get("axis"))),
    "argsort": lambda it, op, ins: np.argsort(ins[0], axis=op.attrs["axis"], kind="stable").astype(np.int64),
    "take_along": lambda it, op, ins: np.take_along_axis(np.asarray(ins[0], dtype=np.float64), ins[1],
                                                         axis=op.attrs["axis"]),
    "put_along": _put_along,
    "float_floor": _numpy_math("floor"), "float_ceil": _numpy_math("ceil"),
    "float_trunc": _numpy_math("trunc"), "float_rint": _numpy_math("rint"),
})

EVAL.update(JOIN_EVAL)      # joining, splitting and building arrays (interpret_joins.py)

def clone(fn):
    """A deep copy of IR Function ``fn`` (fresh ops and values; attrs shared), made without
    recursion so that long functions copy too."""
    from .core import Block, Function, Op
    new = Function(fn.name, [(p.name, p.type) for p in fn.params], fn.loc)
    vmap = dict(zip(fn.params, new.params))

    def copy_block(block, into):
        for op in block.ops:
            regions = []
            for r in op.regions:
                nb = Block()
                for a in r.args:
                    nb.args.append(_fresh_like(a, vmap))
                copy_block(r, nb)
                regions.append(nb)
            nop = Op(op.prim, [vmap[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs),
                     regions, op.loc, names=[r.name for r in op.results])
            vmap.update(zip(op.results, nop.results))
            into.ops.append(nop)

    copy_block(fn.body, new.body)
    return new


def _fresh_like(v, vmap):
    from .core import Value
    vmap[v] = Value(v.type, v.name)
    return vmap[v]
