"""The reductions family of numpy calls (issue 11): the keywords of np.sum/mean/prod/max/min
(``axis=`` an int, negative or a tuple; ``keepdims=``; ``dtype=``), np.var/std/average,
np.cumsum/cumprod/diff, np.argmax/argmin, np.clip, np.sign, np.logaddexp(2), the float
rounding functions np.floor/ceil/trunc/rint/round, and np.isnan/isinf/isfinite.

Most are compositions of the IR's primitives (so both backends, reverse and forward mode
come with them); the scans, argmax/argmin, keepdims' new axis and the rounding functions
are primitives of their own. ``REDUCTION_CALLS`` is merged into call_table.CALLS.

Example:
    >>> def logsumexp(x):
    ...     m = np.max(x, axis=1, keepdims=True)
    ...     return m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))
"""
import ast
import math

import numpy as np

from ..ir.types import BOOL, F64, I64
from .callee import Callee
from .calls import binary_function
from .keywords import axes, flag, literal, options, reduction_dtype, to_dtype

# ---------------------------------------------------------------------- helpers


def _array(lw, node, called, x):
    if x is None or not x.type.is_array:
        lw.typing_error(node, f"{called} takes an array here, got {x.type}")
    (x,) = lw.to_float_array_operands(node, x)
    return x


def _floats(lw, node, *vals):
    """Arrays as float64 arrays, numbers as floats."""
    if any(v.type.is_array for v in vals):
        return lw.to_float_array_operands(node, *vals)
    return [lw.b.convert(v, F64) for v in vals]


def _const(lw, value):
    return lw.b.const(value)


def _count(lw, node, x, over):
    """How many elements a reduction over axes ``over`` (None: all) combines, as an int."""
    if over is None:
        return lw.emit(node, "size", [x])
    n = None
    for a in over:
        k = lw.emit(node, "shape", [x], {"axis": a})
        n = k if n is None else lw.emit(node, "mul", [n, k])
    return _const(lw, 1) if n is None else n        # axis=(): nothing combined


def reduce_over(lw, node, prim, x, over, called):
    """``prim`` (sum, prod, amax, amin) of array ``x`` over axes ``over`` (None: all): some of
    several axes one at a time from the last, for sum and prod (numpy's one pass over them may
    round a sum differently, as its pairwise sums do anyway)."""
    ndim = x.type.ndim
    if over is not None and len(over) == 0:
        return lw.emit(node, "copy", [x])
    if over is None or len(over) == ndim:
        return lw.emit(node, prim, [x], {"axis": None})
    if len(over) > 1 and prim in ("amax", "amin"):
        lw.unsupported(node, f"{called} over {len(over)} of the {ndim} axes (yet)",
                       f"reduce one axis at a time, {called}({called}(x, axis=2), axis=1), or all of them")
    for a in reversed(over):
        x = lw.emit(node, prim, [x], {"axis": a})
    return x


def keep_dims(lw, node, out, ndim, over):
    """The reduced axes put back with size 1 (``keepdims=True``)."""
    if not out.type.is_array:       # everything reduced: a (1, ..., 1) array
        ones = lw.emit(node, "full", [_const(lw, 1)] * ndim, {"value": 1.0, "dtype": F64})
        return lw.emit(node, "mul", [ones, lw.b.convert(out, F64)])
    for a in over:
        out = lw.emit(node, "expand_dims", [out], {"axis": a})
    return out


# ---------------------------------------------------------------------- reductions
def _reduction(name, prim):
    """np.sum, np.mean, np.prod, np.max/amax, np.min/amin with axis=, keepdims=, dtype=."""
    has_dtype = prim in ("sum", "prod")

    def lower(lw, node, args, env):
        called = f"np.{name}"
        opts = options(lw, node, args, called, ("axis",))
        if args[0] is not None and not args[0].type.is_array and not opts:
            # of a number, numpy gives the number (np.sum(3.0) is 3.0; a bool's sum is an int)
            x = args[0]
            return lw.b.convert(x, F64) if name == "mean" else lw.b.convert(x, I64) if x.type is BOOL else x
        x = _array(lw, node, called, args[0])
        over = axes(lw, node, x, opts.get("axis"), called)
        dt = reduction_dtype(lw, node, opts.get("dtype"), called, env) if has_dtype else None
        out = reduce_over(lw, node, prim, x, over, called)
        if name == "mean":
            out = lw.emit(node, "div", [out, lw.b.convert(_count(lw, node, x, over), F64)])
        if flag(lw, node, opts.get("keepdims"), "keepdims"):
            out = keep_dims(lw, node, out, x.type.ndim, over if over is not None else range(x.type.ndim))
        return to_dtype(lw, node, out, dt)
    return Callee(lower, keywords=("axis", "keepdims") + (("dtype",) if has_dtype else ()), takes_none=True)


def _variance(name):
    """np.var / np.std (axis=, ddof=, keepdims=, dtype=), as numpy computes them: the mean
    (kept dims), the squared deviations summed, divided by max(N - ddof, 0)."""
    def lower(lw, node, args, env):
        called = f"np.{name}"
        opts = options(lw, node, args, called, ("axis",))
        x = _array(lw, node, called, args[0])
        over = axes(lw, node, x, opts.get("axis"), called)
        dt = reduction_dtype(lw, node, opts.get("dtype"), called, env)
        ddof = 0 if opts.get("ddof") is None else literal(lw, node, opts["ddof"], "ddof", (int, float))
        count = _count(lw, node, x, over)
        mean = lw.emit(node, "div", [reduce_over(lw, node, "sum", x, over, called), lw.b.convert(count, F64)])
        if mean.type.is_array:
            mean = keep_dims(lw, node, mean, x.type.ndim, over)
        dev = lw.emit(node, "sub", [x, mean])
        total = reduce_over(lw, node, "sum", lw.emit(node, "mul", [dev, dev]), over, called)
        left = lw.emit(node, "sub", [lw.b.convert(count, F64), _const(lw, float(ddof))])
        left = lw.emit(node, "max", [left, _const(lw, 0.0)])
        out = lw.emit(node, "div", [total, left])
        if name == "std":
            # d sqrt(v) at v = 0 is 0 here, as torch.std's gradient at zero variance (not inf·0)
            zero = lw.emit(node, "eq", [out, _const(lw, 0.0)])
            root = lw.emit(node, "sqrt", [lw.emit(node, "select", [zero, _const(lw, 1.0), out])])
            out = lw.emit(node, "select", [zero, out, root])
        if flag(lw, node, opts.get("keepdims"), "keepdims"):
            out = keep_dims(lw, node, out, x.type.ndim, over if over is not None else range(x.type.ndim))
        return to_dtype(lw, node, out, dt)
    return Callee(lower, keywords=("axis", "dtype", "ddof", "keepdims"), takes_none=True)


def _average(lw, node, args, env):
    """np.average(x, axis=None, weights=None): the mean, or sum(x * w) / sum(w) as numpy, with
    weights of x's shape or (with an int axis) a vector along that axis."""
    called = "np.average"
    opts = options(lw, node, args, called, ("axis", "weights"))
    x = _array(lw, node, called, args[0])
    over = axes(lw, node, x, opts.get("axis"), called)
    w = opts.get("weights")
    if w is None or (isinstance(w, ast.Constant) and w.value is None):
        out = reduce_over(lw, node, "sum", x, over, called)
        return lw.emit(node, "div", [out, lw.b.convert(_count(lw, node, x, over), F64)])
    w = _array(lw, node, "the weights of np.average", lw.expr(w, env))
    scale = reduce_over(lw, node, "sum", w, over if w.type.ndim == x.type.ndim else None, called)
    if w.type.ndim != x.type.ndim:
        if w.type.ndim != 1 or over is None or len(over) != 1:
            lw.typing_error(node, f"np.average: weights of {w.type.ndim} dimensions for an array of "
                                  f"{x.type.ndim} need the same shape, or a vector and an int axis=")
        for _ in range(x.type.ndim - 1 - over[0]):       # the vector along axis, broadcast over the rest
            w = lw.emit(node, "expand_dims", [w], {"axis": w.type.ndim})
    out = reduce_over(lw, node, "sum", lw.emit(node, "mul", [x, w]), over, called)
    return lw.emit(node, "div", [out, scale])


# ---------------------------------------------------------------------- scans
def _scan(name):
    """np.cumsum / np.cumprod along one axis (a vector's by default)."""
    def lower(lw, node, args, env):
        called = f"np.{name}"
        opts = options(lw, node, args, called, ("axis", "dtype"))
        x = _array(lw, node, called, args[0])
        dt = reduction_dtype(lw, node, opts.get("dtype"), called, env)
        over = axes(lw, node, x, opts.get("axis"), called)
        if over is None and x.type.ndim > 1:
            lw.unsupported(node, f"{called} of a {x.type.ndim}-d array without axis= (numpy flattens it) (yet)",
                           f"give the axis: {called}(x, axis=0)")
        if over is not None and len(over) != 1:
            lw.typing_error(node, f"{called} takes one axis")
        return to_dtype(lw, node, lw.emit(node, name, [x], {"axis": 0 if over is None else over[0]}), dt)
    return Callee(lower, keywords=("axis", "dtype"), takes_none=True)


def _diff(lw, node, args, env):
    """np.diff(x, n=1, axis=-1): x[1:] - x[:-1] along the axis, n times (views, then sub)."""
    called = "np.diff"
    opts = options(lw, node, args, called, ("n", "axis"))
    x = args[0]
    if x.type.is_array and x.type.dtype is BOOL:
        lw.typing_error(node, "np.diff of bools (numpy's result is a bool: x[1:] != x[:-1]); write that, "
                              "or convert first: np.diff(x * 1.0)")
    x = _array(lw, node, called, x)
    n = 1 if opts.get("n") is None else literal(lw, node, opts["n"], "n", (int,))
    if n < 0:
        lw.typing_error(node, f"np.diff: order must be non-negative, got n={n}")
    axis = axes(lw, node, x, opts.get("axis"), called) if opts.get("axis") is not None else (x.type.ndim - 1,)
    if axis is None or len(axis) != 1:
        lw.typing_error(node, "np.diff takes one axis")
    whole = [("s", False, False, False)] * axis[0]
    for _ in range(n):
        later = lw.emit(node, "slice", [x, _const(lw, 1)], {"spec": tuple(whole + [("s", True, False, False)])})
        earlier = lw.emit(node, "slice", [x, _const(lw, -1)], {"spec": tuple(whole + [("s", False, True, False)])})
        x = lw.emit(node, "sub", [later, earlier])
    return x


def _arg_extremum(prim):
    """np.argmax / np.argmin: ints (the first of ties; the first NaN, as numpy)."""
    def lower(lw, node, args, env):
        called = f"np.{prim}"
        opts = options(lw, node, args, called, ("axis",))
        x = _array(lw, node, called, args[0])
        over = axes(lw, node, x, opts.get("axis"), called)
        if over is not None and len(over) != 1:
            lw.typing_error(node, f"{called} takes one axis (an int)")
        return lw.emit(node, prim, [x], {"axis": None if over is None or x.type.ndim == 1 else over[0]})
    return Callee(lower, keywords=("axis",), takes_none=True)


_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sorting(name):
    """np.sort (x taken along its stable argsort: the gradient goes back through that
    permutation; tied elements are equal, so their order changes no value) and np.argsort
    (ints: the stable order, kind="stable"; numpy's default kind may order ties otherwise)."""
    def lower(lw, node, args, env):
        called = f"np.{name}"
        opts = options(lw, node, args, called, ("axis", "kind"))
        x = _array(lw, node, called, args[0])
        if opts.get("kind") is not None and literal(lw, node, opts["kind"], "kind", (str,)) not in _SORT_KINDS:
            lw.typing_error(node, f"{called}: kind must be one of {', '.join(k for k in _SORT_KINDS if k)}")
        if "axis" in opts and isinstance(opts["axis"], ast.Constant) and opts["axis"].value is None:
            if x.type.ndim > 1:
                lw.unsupported(node, f"{called}(x, axis=None) of a {x.type.ndim}-d array (numpy flattens it) (yet)",
                               f"sort along an axis: {called}(x, axis=-1)")
            over = (0,)
        else:
            over = axes(lw, node, x, opts.get("axis"), called) if opts.get("axis") is not None else (x.type.ndim - 1,)
        if len(over) != 1:
            lw.typing_error(node, f"{called} takes one axis")
        order = lw.emit(node, "argsort", [x], {"axis": over[0]})
        return order if name == "argsort" else lw.emit(node, "take_along", [x, order], {"axis": over[0]})
    return Callee(lower, keywords=("axis", "kind"), takes_none=True)


# ---------------------------------------------------------------------- element-wise
def _value_options(lw, node, args, env, called, positional, aliases):
    """Options that are values (np.clip's bounds), by position or keyword; ``aliases`` maps a
    keyword to its name (numpy 2's min= for a_min=). None where absent or written None."""
    found = options(lw, node, args, called, positional)
    given = dict(zip(positional, args[1:]))      # lowered already (None where written None)
    out = {}
    for k, v in found.items():
        name = aliases.get(k, k)
        if name in out:
            lw.typing_error(node, f"{called} got {name} twice")
        out[name] = None if isinstance(v, ast.Constant) and v.value is None else v
    return {k: given[k] if k in given else (lw.expr(v, env) if v is not None else None) for k, v in out.items()}


def _clip(lw, node, args, env):
    """np.clip(x, a_min, a_max), either bound None: min(max(x, lo), hi) as numpy (a NaN bound
    gives NaN). Gradient as torch.clamp: to x where lo <= x <= hi (inclusive), else to the bound."""
    called = "np.clip"
    b = _value_options(lw, node, args, env, called, ("a_min", "a_max"), {"min": "a_min", "max": "a_max"})
    lo, hi = b.get("a_min"), b.get("a_max")
    if lo is None and hi is None:
        lw.typing_error(node, "np.clip needs a_min or a_max (numpy raises ValueError: one of max or min must be given)")
    x = args[0]
    vals = [x] + [v for v in (lo, hi) if v is not None]
    if any(v.type.is_array for v in vals):
        vals = lw.to_float_array_operands(node, *vals)
    else:
        vals = [lw.b.convert(v, F64) for v in vals] if any(v.type is F64 for v in vals) else \
            [lw.b.convert(v, I64) for v in vals]
    y, bounds = vals[0], iter(vals[1:])
    for bound, cmp in ((lo, "lt"), (hi, "gt")):
        if bound is None:
            continue
        v = next(bounds)
        y = lw.emit(node, "select", [lw.emit(node, cmp, [y, v]), v, y])
        if (v.type.dtype if v.type.is_array else v.type) is F64 and not _number(v):
            y = lw.emit(node, "select", [lw.emit(node, "ne", [v, v]), v, y])    # numpy: a NaN bound wins
    return y


def _number(v):
    """Whether ``v`` is a constant number that is not NaN."""
    c = v.owner.attrs.get("value") if v.owner is not None and v.owner.prim == "const" else None
    return isinstance(c, (int, float)) and c == c


def _logaddexp(base2):
    """np.logaddexp(a, b) = log(e**a + e**b) computed as max + log1p(exp(-|a - b|)) (numpy's
    formula); at a tie (equal infinities too) a + log(2): the gradient there is 1/2 each, the
    softmax weights elsewhere. np.logaddexp2 the same in base 2."""
    def lower(lw, node, args, env):
        a, c = _floats(lw, node, *args)
        m = binary_function(lw, node, "max", [a, c])      # np.maximum(a, c)
        tie = lw.emit(node, "eq", [a, c])
        gap = lw.emit(node, "abs", [lw.emit(node, "select", [tie, _const(lw, 0.0), lw.emit(node, "sub", [a, c])])])
        if base2:   # log2(1 + 2**-gap) = log1p(exp(-gap·ln 2)) / ln 2
            gap = lw.emit(node, "mul", [gap, _const(lw, math.log(2.0))])
        tail = lw.emit(node, "log1p", [lw.emit(node, "exp", [lw.emit(node, "neg", [gap])])])
        if base2:
            tail = lw.emit(node, "div", [tail, _const(lw, math.log(2.0))])
        a2, c2 = (lw.emit(node, "mul", [v, _const(lw, 0.5)]) for v in (a, c))     # a/2 + b/2: no overflow
        half = lw.emit(node, "add", [a2, c2])
        at_tie = lw.emit(node, "add", [half, _const(lw, 1.0 if base2 else math.log(2.0))])
        return lw.emit(node, "select", [tie, at_tie, lw.emit(node, "add", [m, tail])])
    return Callee(lower, arity=2)


def _sign(lw, node, args, env):
    """np.sign: -1, 0 or 1 (0.0 also for -0.0, NaN for NaN), as numpy; gradient 0 (torch.sign)."""
    (x,) = args
    if x.type.is_array and x.type.dtype is not F64 or x.type is BOOL:
        lw.typing_error(node, f"np.sign of {x.type} (numpy's result is an int or a bool there); "
                              "convert first: np.sign(x * 1.0)")
    if x.type is I64:
        inner = lw.emit(node, "select", [lw.emit(node, "lt", [x, _const(lw, 0)]), _const(lw, -1), _const(lw, 0)])
        return lw.emit(node, "select", [lw.emit(node, "gt", [x, _const(lw, 0)]), _const(lw, 1), inner])
    (x,) = _floats(lw, node, x)
    nan = lw.emit(node, "mul", [x, _const(lw, 0.0)])     # NaN where x is NaN, with a zero derivative
    zero = lw.emit(node, "select", [lw.emit(node, "eq", [x, x]), _const(lw, 0.0), nan])
    inner = lw.emit(node, "select", [lw.emit(node, "lt", [x, _const(lw, 0.0)]), _const(lw, -1.0), zero])
    return lw.emit(node, "select", [lw.emit(node, "gt", [x, _const(lw, 0.0)]), _const(lw, 1.0), inner])


def _rounding(name, prim):
    """np.floor, np.ceil, np.trunc, np.rint, np.round/np.around (decimals=k: rint(x·10**k)/10**k,
    numpy's way): float results of floats; ints unchanged (numpy 2), except rint's floats."""
    def lower(lw, node, args, env):
        called = f"np.{name}"
        opts = options(lw, node, args, called, ("decimals",) if name in ("round", "around") else ())
        (x,) = args[:1]
        elem = x.type.dtype if x.type.is_array else x.type
        if elem is BOOL:
            lw.typing_error(node, f"{called} of bools; convert first: {called}(x * 1.0)")
        if elem is I64 and name != "rint":
            return lw.emit(node, "copy", [x]) if x.type.is_array else x
        (x,) = _floats(lw, node, x)
        decimals = 0 if opts.get("decimals") is None else literal(lw, node, opts["decimals"], "decimals", (int,))
        if decimals == 0:
            return lw.emit(node, prim, [x])
        scale = _const(lw, float(10.0 ** abs(decimals)))
        if decimals > 0:
            return lw.emit(node, "div", [lw.emit(node, prim, [lw.emit(node, "mul", [x, scale])]), scale])
        return lw.emit(node, "mul", [lw.emit(node, prim, [lw.emit(node, "div", [x, scale])]), scale])
    return Callee(lower, keywords=("decimals",) if name in ("round", "around") else ())


def _classify(name):
    """np.isnan, np.isinf, np.isfinite: bools (arrays of bools), usable in np.where."""
    def lower(lw, node, args, env):
        (x,) = _floats(lw, node, *args)
        if name == "isnan":
            return lw.emit(node, "ne", [x, x])
        size = lw.emit(node, "abs", [x])
        return lw.emit(node, "eq" if name == "isinf" else "lt", [size, _const(lw, math.inf)])
    return Callee(lower, arity=1)


REDUCTION_CALLS = {
    np.sum: _reduction("sum", "sum"), np.mean: _reduction("mean", "sum"), np.prod: _reduction("prod", "prod"),
    np.max: _reduction("max", "amax"), np.amax: _reduction("amax", "amax"),
    np.min: _reduction("min", "amin"), np.amin: _reduction("amin", "amin"),
    np.var: _variance("var"), np.std: _variance("std"),
    np.average: Callee(_average, keywords=("axis", "weights"), takes_none=True),
    np.cumsum: _scan("cumsum"), np.cumprod: _scan("cumprod"), np.diff: Callee(_diff, keywords=("n", "axis")),
    np.sort: _sorting("sort"), np.argsort: _sorting("argsort"),
    np.argmax: _arg_extremum("argmax"), np.argmin: _arg_extremum("argmin"),
    np.clip: Callee(_clip, keywords=("a_min", "a_max", "min", "max"), takes_none=True),
    np.logaddexp: _logaddexp(False), np.logaddexp2: _logaddexp(True),
    np.sign: Callee(_sign, arity=1),
    np.floor: _rounding("floor", "float_floor"), np.ceil: _rounding("ceil", "float_ceil"),
    np.trunc: _rounding("trunc", "float_trunc"), np.rint: _rounding("rint", "float_rint"),
    np.round: _rounding("round", "float_rint"), np.around: _rounding("around", "float_rint"),
    np.isnan: _classify("isnan"), np.isinf: _classify("isinf"), np.isfinite: _classify("isfinite"),
}

# x.var(), x.clip(lo, hi), ...: as the numpy functions (x.sort() is in place in numpy: not here)
REDUCTION_METHODS = {"var": np.var, "std": np.std, "cumsum": np.cumsum, "cumprod": np.cumprod,
                     "argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort, "clip": np.clip,
                     "round": np.round}
