"""The expression table: how each pure primitive is written as a Python expression.

``EXPR[prim](em, op, ins)`` returns the ``ast`` expression of ``op`` given the expressions
``ins`` of its operands (names, constants, or folded sub-expressions). Small constructors
fill the table, one line a primitive, as in the llvm backend's tables; ops that make
statements (writes, tapes, regions, calls) are in ``emit.STMT``.

Example:
    EXPR["add"](None, op, [ast_name("a"), ast_name("b")])     # a + b
"""
import ast
import math

import numpy as np

from ...ir.linalg_eval import spec_text
from ...ir.types import BOOL, F32, F64, I64
from .join_exprs import JOIN_EXPR
from .reduction_exprs import REDUCTION_EXPR
from .shape_exprs import SHAPE_EXPR
from .syntax import ast_attr, ast_call, ast_name, np_call


def constant(c):
    """A number as the user writes it: ``-2.0`` as a negation, infinities as ``float('inf')``."""
    if isinstance(c, float) and not math.isfinite(c):
        return ast_call(ast_name("float"), [ast.Constant(repr(c))])
    if isinstance(c, (int, float)) and not isinstance(c, bool) and c < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-c))
    return ast.Constant(c)


def const_value(v):
    """The value of ``v`` when a ``const`` op defines it, else None."""
    op = v.owner
    return op.attrs["value"] if op is not None and op.prim == "const" else None


def is_const(v, value):
    c = const_value(v)
    return c is not None and not isinstance(c, np.ndarray) and c == value


def _integral(v):
    """Whether ``v`` is a constant whole number (then ``x ** v`` is real for every float x)."""
    c = const_value(v)
    return c is not None and float(c).is_integer()


def _axis_keyword(op):
    axis = op.attrs.get("axis")
    return [] if axis is None else [ast.keyword(arg="axis", value=ast.Constant(axis))]


# ------------------------------------------------------------------ constructors


def binop(kind):
    return lambda em, op, ins: ast.BinOp(left=ins[0], op=kind(), right=ins[1])


def compare(kind):
    return lambda em, op, ins: ast.Compare(left=ins[0], ops=[kind()], comparators=[ins[1]])


def unary(kind):
    return lambda em, op, ins: ast.UnaryOp(op=kind(), operand=ins[0])


def boolop(kind):
    return lambda em, op, ins: ast.BoolOp(op=kind(), values=list(ins))


def module_call(module, fname):
    return lambda em, op, ins: ast_call(ast_attr(module, fname), ins)


def builtin(fname):
    return lambda em, op, ins: ast_call(ast_name(fname), ins)


def helper(fname):
    """A function of srcgrad/runtime.py, called by its name there."""
    return lambda em, op, ins: ast_call(ast_name(fname), ins)


def attribute(attr):
    return lambda em, op, ins: ast_attr(ins[0], attr)


def method(name):
    return lambda em, op, ins: ast_call(ast_attr(ins[0], name), [])


def scalar_or_array(scalar, array):
    """One rule for numbers, another (numpy's) for arrays."""
    return lambda em, op, ins: (array if op.results and op.results[0].type.is_array else scalar)(em, op, ins)


def reduction(fname):
    return lambda em, op, ins: ast_call(ast_attr("np", fname), ins, _axis_keyword(op))


# ------------------------------------------------------------------ rules needing a few lines


def _pow(em, op, ins):
    t = op.results[0].type
    if t is F64 and not _integral(op.operands[1]):
        return ast_call(ast_name("power"), ins)           # a negative base would give a complex number
    if t is I64 and not _integral(op.operands[1]):
        return ast_call(ast_name("int_power"), ins)       # a negative exponent would give a float
    return ast.BinOp(left=ins[0], op=ast.Pow(), right=ins[1])


def _select(em, op, ins):
    if op.results[0].type.is_array:
        return ast_call(ast_attr("np", "where"), ins)
    return ast.IfExp(test=ins[0], body=ins[1], orelse=ins[2])


def _to_f64(em, op, ins):
    if op.results[0].type.is_array:
        return ast_call(ast_attr(ins[0], "astype"), [ast_attr("np", "float64")])
    return ast_call(ast_name("float"), ins)


def _broadcast_like(em, op, ins):
    g, like = op.operands[:2]
    c, axis = const_value(g), op.attrs.get("axis")
    if axis is None and c == 1.0 and like.type.is_array and not isinstance(c, np.ndarray):
        # numpy has the function: a fresh C-ordered float64 array, as the helper makes
        if like.type.ndim == 1 and like.type.dtype is F64:
            return ast_call(ast_attr("np", "ones_like"), [ins[1]])
        return ast_call(ast_attr("np", "ones"), [ast_attr(ins[1], "shape")])
    args = ins + ([ast.Constant(axis)] if axis is not None else [])
    return ast_call(ast_name("broadcast_like"), args)


def _reduce_grad(em, op, ins):
    return ast_call(ast_name("reduce_grad"), ins + [ast.Constant(op.attrs["of"]), ast.Constant(op.attrs.get("axis"))])


def _slice(em, op, ins):
    return em.site(ast.Subscript(value=ins[0], slice=em.slice_key(op, ins[1:]), ctx=ast.Load()), op)


def _index(em, op, ins):
    key = ins[1] if len(ins) == 2 else ast.Tuple(elts=ins[1:], ctx=ast.Load())
    element = em.site(ast.Subscript(value=ins[0], slice=key, ctx=ast.Load()), op)
    if op.operands[0].type.dtype is F32:      # compiled code computes in float64
        return ast_call(ast_name("float"), [element])
    return element


def _shape(em, op, ins):
    return ast.Subscript(value=ast_attr(ins[0], "shape"), slice=ast.Constant(op.attrs["axis"]), ctx=ast.Load())


def _full(em, op, ins):
    shape = ins[0] if len(ins) == 1 else ast.Tuple(elts=ins, ctx=ast.Load())
    value = op.attrs["value"]
    dtype = op.results[0].type.dtype
    # np.zeros(n) is float64; another dtype (np.zeros_like of an int array) is said
    kw = [] if dtype is F64 else [ast.keyword(arg="dtype", value=ast_attr("np", _NUMPY_DTYPES[dtype]))]
    if value == 0:
        call = ast_call(ast_attr("np", "zeros"), [shape])
    elif value == 1:
        call = ast_call(ast_attr("np", "ones"), [shape])
    else:
        call = ast_call(ast_attr("np", "full"), [shape, ast.Constant(value)])
    call.keywords = kw
    return call


def _empty(em, op, ins):
    shape = ins[0] if len(ins) == 1 else ast.Tuple(elts=ins, ctx=ast.Load())
    call = ast_call(ast_attr("np", "empty"), [shape])
    dtype = op.results[0].type.dtype
    call.keywords = [] if dtype is F64 else [ast.keyword(arg="dtype", value=ast_attr("np", _NUMPY_DTYPES[dtype]))]
    return call


_NUMPY_DTYPES = {F32: "float32", I64: "int64", BOOL: "bool_"}


def _range_len(em, op, ins):
    """``len(range(n))``: the shortest ``range`` that counts the same (the count itself when
    the bounds are constants)."""
    bounds = [const_value(v) for v in op.operands]
    if all(isinstance(c, int) for c in bounds) and bounds[2] != 0:
        return constant(len(range(*bounds)))
    return ast_call(ast_name("len"), [ast_call(ast_name("range"), range_args(op.operands, ins))])


def range_args(bounds, ins):
    """The arguments of ``range`` for bounds ``(start, stop, step)``: ``n`` for ``0, n, 1``."""
    start, _, step = bounds
    if is_const(step, 1):
        return ins[1:2] if is_const(start, 0) else ins[:2]
    return list(ins)


def _svdvals(em, op, ins):
    """``np.linalg.svd(a, compute_uv=False)`` (its operand is a float64 array)."""
    return ast_call(ast_attr(ast_attr("np", "linalg"), "svd"), ins,
                    [ast.keyword(arg="compute_uv", value=ast.Constant(False))])


def _linalg(fname, part=None):
    """``np.linalg.<fname>(...)``; a number (``float(...)``, ``float(...[part])``) for det and slogdet."""
    def rule(em, op, ins):
        out = ast_call(ast_attr(ast_attr("np", "linalg"), fname), ins)
        if part is not None:
            out = ast.Subscript(value=out, slice=ast.Constant(part), ctx=ast.Load())
        return ast_call(ast_name("float"), [out]) if not op.results[0].type.is_array else out
    return rule


def _einsum(em, op, ins):
    return ast_call(ast_name("einsum"), [ast.Constant(spec_text(op.attrs["spec"]))] + list(ins))


EXPR = {
    # arithmetic (Python's operators: / is true division, // and % floor toward -inf)
    "add": binop(ast.Add), "sub": binop(ast.Sub), "mul": binop(ast.Mult), "div": binop(ast.Div),
    "floordiv": binop(ast.FloorDiv), "mod": binop(ast.Mod), "pow": _pow, "matmul": binop(ast.MatMult),
    "neg": unary(ast.USub), "not": unary(ast.Not), "and": boolop(ast.And), "or": boolop(ast.Or),
    "lt": compare(ast.Lt), "le": compare(ast.LtE), "gt": compare(ast.Gt), "ge": compare(ast.GtE),
    "eq": compare(ast.Eq), "ne": compare(ast.NotEq),
    "abs": scalar_or_array(builtin("abs"), np_call("abs")),
    "min": scalar_or_array(builtin("min"), np_call("minimum")),
    "max": scalar_or_array(builtin("max"), np_call("maximum")),
    "select": _select,
    # elementary functions: numpy's, so NaN and infinities propagate as in numpy; erf only in math
    "sin": np_call("sin"), "cos": np_call("cos"), "tan": np_call("tan"), "asin": np_call("arcsin"),
    "acos": np_call("arccos"), "atan": np_call("arctan"), "sinh": np_call("sinh"), "cosh": np_call("cosh"),
    "tanh": np_call("tanh"), "exp": np_call("exp"), "expm1": np_call("expm1"), "log": np_call("log"),
    "log1p": np_call("log1p"), "log2": np_call("log2"), "log10": np_call("log10"), "sqrt": np_call("sqrt"),
    "atan2": np_call("arctan2"), "hypot": np_call("hypot"), "erf": module_call("math", "erf"),
    "floor": module_call("math", "floor"), "ceil": module_call("math", "ceil"), "round": builtin("round"),
    # conversions
    "to_f64": _to_f64, "to_i64": builtin("int"), "to_bool": builtin("bool"),
    # arrays
    "index": _index, "slice": _slice, "shape": _shape, "size": attribute("size"), "transpose": attribute("T"),
    "copy": method("copy"), "outer": np_call("outer"), "arange": np_call("arange"), "full": _full, "empty": _empty,
    "zeros_like": np_call("zeros_like"), "sum": reduction("sum"), "prod": reduction("prod"),
    "amax": reduction("max"), "amin": reduction("min"),
    # adjoint helpers (srcgrad/runtime.py where numpy has no such function)
    "sum_to": helper("sum_to"), "broadcast_like": _broadcast_like, "reduce_grad": _reduce_grad,
    "range_len": _range_len,
    # linear algebra (the helpers are linalg_eval.py's, in srcgrad/runtime.py)
    "einsum": _einsum, "norm_sqrt": np_call("sqrt"), "det": _linalg("det"), "slogdet_sign": _linalg("slogdet", 0),
    "slogdet_log": _linalg("slogdet", 1), "inv": _linalg("inv"), "solve": _linalg("solve"),
    "cholesky": _linalg("cholesky"), "cholesky_grad": helper("cholesky_grad"), "svdvals": _svdvals,
    "svdvals_grad": lambda em, op, ins: ast_call(ast_name("svdvals_grad"), ins + [ast.Constant(op.attrs["mode"])]),
}

EXPR.update(REDUCTION_EXPR)     # the reductions family (reduction_exprs.py)
EXPR.update(JOIN_EXPR)          # joining and building arrays (join_exprs.py)
EXPR.update(SHAPE_EXPR)      # reshape, restride, astype, pack, stack (shape_exprs.py)
