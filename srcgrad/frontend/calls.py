"""The math functions, numpy's elementwise functions and array builders, and the builtins the
frontend compiles, as a table (``CORE_CALLS``, which call_table.py merges with the numpy
families' into ``CALLS``): the function object (found by identity, so ``from math import sin``
works as ``math.sin`` does) -> how a call to it lowers, how many arguments it takes, which
keywords it accepts.

A lowering function takes ``(lw, node, args, env)``: the context (context.py: the builder and
the error helpers), the ``ast.Call``, the argument values and the environment (for the few
that lower an argument themselves: a shape).

Example:
    >>> CORE_CALLS[math.sin].prim, CORE_CALLS[math.sin].arity, CORE_CALLS[np.zeros].keywords
    ('sin', 1, ('dtype',))
"""
import ast
import builtins
import math

import numpy as np

from ..ir.types import BOOL, F64, I64
from .callee import Callee
from .dtypes import dtype_of
from .numpy_linalg import matmul_any_rank
from .numpy_shapes import shape_sizes


# ---------------------------------------------------------------------- elementary functions
def _unary(fobj, prim):
    def lower(lw, node, args, env):
        (x,) = args
        if x.type.is_array and x.type.ndim == 0 and fobj.__module__ == "math":
            x = lw.number_of(node, x, f"math.{fobj.__name__}()")        # a 0-d array is a number to math
        if x.type.is_array:
            if fobj.__module__ == "math":
                lw.unsupported(node, f"math.{fobj.__name__} on an array", f"use np.{fobj.__name__}")
            return lw.emit(node, "abs" if prim == "fabs" else prim, lw.to_float_array_operands(node, x))
        if prim in ("abs", "fabs"):
            v = x if prim == "abs" else lw.b.convert(x, F64)
            return lw.emit(node, "abs", [lw.b.convert(v, I64) if v.type is BOOL else v])
        return lw.emit(node, prim, [lw.b.convert(x, F64)])
    return Callee(lower, arity=1, prim=prim)


def binary_function(lw, node, prim, args):
    """A call of a function of two numbers or arrays (``prim``: atan2, hypot, fpow, min, max)."""
    if args[0].type.is_array or args[1].type.is_array:
        return lw.emit(node, "pow" if prim == "fpow" else prim, lw.to_float_array_operands(node, *args))
    if prim == "fpow":
        return lw.emit(node, "pow", [lw.b.convert(a, F64) for a in args])
    if prim in ("min", "max"):
        # np.maximum/np.minimum of scalars: of equal values the second (-0.0, 0.0), a NaN
        # on either side wins; Python's max(b, a) keeps b unless a is larger
        a, c = lw.arithmetic_operands(node, *args)
        out = lw.emit(node, prim, [c, a])
        return out if a.type is not F64 else lw.emit(node, "select", [lw.emit(node, "ne", [a, a]), a, out])
    return lw.emit(node, prim, [lw.b.convert(a, F64) for a in args])


def _binary(prim):
    def lower(lw, node, args, env):
        return binary_function(lw, node, prim, args)
    return Callee(lower, arity=2, prim=prim)


_MATH_UNARY = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p",
               "log2", "log10", "sqrt", "erf", "fabs", "floor", "ceil")
_NUMPY_UNARY = {"sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
                "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "expm1": "expm1", "log": "log",
                "log1p": "log1p", "log2": "log2", "log10": "log10", "sqrt": "sqrt", "abs": "abs", "fabs": "fabs"}
_BINARY = {math.atan2: "atan2", np.arctan2: "atan2", math.hypot: "hypot", np.hypot: "hypot", math.pow: "fpow",
           np.power: "fpow", np.maximum: "max", np.minimum: "min"}


# numpy's arithmetic as functions: the operators' arithmetic (numpy's on arrays; on numbers
# Python's, as for the other np.* twins of math functions). numpy computes on bools logically
# (np.add(True, True) is True), so bools are refused rather than counted as ints.
def _no_bools(lw, node, name, args):
    for a in args:
        if (a.type.dtype if a.type.is_array else a.type) is BOOL:
            lw.typing_error(node, f"np.{name} of bools (numpy's result is a bool there, not a count); "
                                  "convert them first: float(b) or b * 1.0")


def _arithmetic(name, op):
    """np.add, np.subtract, np.multiply, np.divide / np.true_divide: a + b, a - b, a * b, a / b."""
    def lower(lw, node, args, env):
        _no_bools(lw, node, name, args)
        return lw.binop(node, op, *args)
    return Callee(lower, arity=2, prim=op)


def _square(lw, node, args, env):
    """np.square(x): x * x."""
    _no_bools(lw, node, "square", args)
    return lw.binop(node, "mul", args[0], args[0])


def _negative(lw, node, args, env):
    """np.negative(x): -x."""
    _no_bools(lw, node, "negative", args)
    return lw.negate(node, args[0])


def _reciprocal(lw, node, args, env):
    """np.reciprocal(x): 1.0 / x of floats (numpy's reciprocal of ints is an integer division)."""
    (x,) = args
    if (x.type.dtype if x.type.is_array else x.type) is not F64:
        lw.typing_error(node, f"np.reciprocal of {x.type} (numpy gives integer results for ints); "
                              "write 1.0 / x")
    return lw.binop(node, "div", lw.b.const(1.0), x)


def _exp2(lw, node, args, env):
    """np.exp2(x): 2.0 ** x."""
    return lw.emit(node, "pow", lw.to_float_array_operands(node, lw.b.const(2.0), *args))


_NUMPY_ARITHMETIC = {np.add: _arithmetic("add", "add"), np.subtract: _arithmetic("subtract", "sub"),
                     np.multiply: _arithmetic("multiply", "mul"), np.divide: _arithmetic("divide", "div"),
                     np.square: Callee(_square, arity=1), np.negative: Callee(_negative, arity=1),
                     np.reciprocal: Callee(_reciprocal, arity=1), np.exp2: Callee(_exp2, arity=1)}


# ---------------------------------------------------------------------- numpy array functions
def axis_keyword(lw, node, x):
    """The ``axis=k`` of a reduction (None without one), counted from the front."""
    axis = None
    for kw in node.keywords:
        if kw.arg != "axis" or not isinstance(kw.value, ast.Constant) or not isinstance(kw.value.value, int):
            lw.unsupported(node, f"the keyword {kw.arg}= here", "np.sum(x) and np.sum(x, axis=k) work")
        axis = kw.value.value + x.type.ndim if kw.value.value < 0 else kw.value.value
    return axis


def _one_array(lw, node, what, args):
    if len(args) != 1 or not args[0].type.is_array:
        lw.typing_error(node, f"np.{what} takes one array here")
    (x,) = lw.to_float_array_operands(node, *args)
    return x


def _outer(lw, node, args, env):
    """np.outer(a, b): numpy flattens arrays of other ranks (C order) first."""
    if not all(a.type.is_array for a in args):
        lw.typing_error(node, f"np.outer takes two arrays here, got {args[0].type} and {args[1].type}")
    a, b = (x if x.type.ndim == 1 else lw.emit(node, "reshape", [x, lw.emit(node, "size", [x])]) for x in args)
    a, b = lw.to_float_array_operands(node, a, b)
    return lw.emit(node, "outer", [a, b])


def _arange(lw, node, args, env):
    if not 1 <= len(args) <= 3 or any(a.type.is_array for a in args):
        lw.typing_error(node, "np.arange takes 1 to 3 numbers")
    if len(args) == 1:
        args = [lw.b.const(0), args[0]]
    if len(args) == 2:
        args = args + [lw.b.const(1)]
    return lw.emit(node, "arange", args)


def _dot(lw, node, args, env):
    if len(args) != 2:
        lw.typing_error(node, "np.dot takes two arrays")
    if not (args[0].type.is_array and args[1].type.is_array):
        return lw.binop(node, "mul", *args)             # numpy: a product with a number
    if max(a.type.ndim for a in args) > 2:
        return matmul_any_rank(lw, node, *args, dot=True)
    return lw.emit(node, "matmul", lw.to_float_array_operands(node, *args))


def _where(lw, node, args, env):
    if len(args) != 3:
        lw.typing_error(node, "np.where takes (condition, a, b)")
    c, a, b = args
    a, b = lw.to_float_array_operands(node, a, b)
    return lw.emit(node, "select", [c, a, b])


def _dtype_keyword(lw, node, env, default):
    """The element type of ``dtype=`` (np.float64, float, np.int64, bool, 'float32', x.dtype), else ``default``."""
    for kw in node.keywords:
        if kw.arg == "dtype":
            return dtype_of(lw, kw.value, env)
    return default


def _filled(what):
    """np.zeros, np.ones, np.empty (as zeros), np.full with a constant: ``args[0]`` is the shape;
    ``dtype=`` as numpy's (float64 by default)."""
    def lower(lw, node, args, env):
        if not args or len(args) > (2 if what == "full" else 1):
            lw.unsupported(node, f"np.{what} with these arguments", f"np.{what}(n) or np.{what}((n, m))")
        value = {"zeros": 0.0, "ones": 1.0}.get(what)
        if what == "full":
            c = args[1].owner
            if c is None or c.prim != "const":
                lw.unsupported(node, "np.full with a value that is not a constant", "np.zeros then a loop")
            value = float(c.attrs["value"])
        dtype = _dtype_keyword(lw, node, env, F64)
        sizes = shape_sizes(lw, node.args[0], env)      # n, (n, m) or x.shape
        return lw.emit(node, "full", sizes, {"value": dtype.py(value), "dtype": dtype})
    return Callee(lower, shape_first=True, keywords=("dtype",))


def _like(what, value):
    """np.zeros_like, np.ones_like: the shape and dtype of an array (or ``dtype=``)."""
    def lower(lw, node, args, env):
        (x,) = args
        if not x.type.is_array:
            lw.typing_error(node, f"np.{what} needs an array, got {x.type}")
        dtype = _dtype_keyword(lw, node, env, x.type.dtype)
        sizes = [lw.emit(node, "shape", [x], {"axis": k}) for k in range(x.type.ndim)]
        return lw.emit(node, "full", sizes, {"value": dtype.py(value), "dtype": dtype})
    return Callee(lower, keywords=("dtype",))


# ---------------------------------------------------------------------- builtins
def _abs(lw, node, args, env):
    return lw.emit(node, "abs", [lw.b.convert(args[0], I64) if args[0].type is BOOL else args[0]])


def _min_max(prim):
    def lower(lw, node, args, env):
        out = args[0]
        for a in args[1:]:
            out = lw.emit(node, prim, lw.arithmetic_operands(node, out, a))
        return out
    return Callee(lower)


def _int(lw, node, args, env):
    x = lw.number_of(node, args[0], "int()")
    return lw.emit(node, "to_i64", [x]) if x.type is not I64 else x


def _round(lw, node, args, env):
    if len(args) != 1:
        lw.unsupported(node, "round(x, ndigits) (yet)", "round(x) gives an int; keep the "
                       "rounding to digits outside the compiled function")
    if args[0].type.is_array:
        lw.unsupported(node, "round() of an array", "round the elements one by one in a loop")
    if args[0].type is I64:
        return args[0]
    return lw.emit(node, "round", [lw.b.convert(args[0], F64)])


def _len(lw, node, args, env):
    if not args[0].type.is_array:
        lw.typing_error(node, f"len() needs an array, got {args[0].type}")
    return lw.emit(node, "shape", args, {"axis": 0})


CORE_CALLS = {
    **{getattr(math, n): _unary(getattr(math, n), n) for n in _MATH_UNARY},
    **{getattr(np, n): _unary(getattr(np, n), prim) for n, prim in _NUMPY_UNARY.items()},
    **{f: _binary(prim) for f, prim in _BINARY.items()},
    **_NUMPY_ARITHMETIC,
    np.outer: Callee(_outer), np.arange: Callee(_arange), np.dot: Callee(_dot), np.where: Callee(_where),
    np.zeros: _filled("zeros"), np.ones: _filled("ones"), np.empty: _filled("zeros"), np.full: _filled("full"),
    np.zeros_like: _like("zeros_like", 0.0), np.ones_like: _like("ones_like", 1.0),
    builtins.abs: Callee(_abs, arity=1), builtins.min: _min_max("min"), builtins.max: _min_max("max"),
    builtins.float: Callee(lambda lw, node, args, env: lw.b.convert(lw.number_of(node, args[0], "float()"), F64),
                           arity=1),
    builtins.int: Callee(_int, arity=1),
    builtins.bool: Callee(lambda lw, node, args, env: lw.b.convert(lw.number_of(node, args[0], "bool()"), BOOL),
                          arity=1),
    builtins.round: Callee(_round), builtins.len: Callee(_len, arity=1),
}
