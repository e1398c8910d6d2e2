"""dtypes in compiled code: the element type a dtype argument names (``dtype_of``: np.float32,
float, 'int64', ``y.dtype``, a variable holding one), a dtype as a value (``DType``: ``t =
x.dtype``, ``np.dtype('float32')``) and comparisons of dtypes (``x.dtype == np.float32``), all
known while compiling, as dtypes are part of the types.

Below the numpy families that read ``dtype=`` (numpy_shapes.py, numpy_literals.py, calls.py,
keywords.py) and the expressions, which all import it.

Example:
    >>> import numpy as np
    >>> dtype_value(np.float32), dtype_value(np.dtype("int64")), dtype_value(complex)
    (dtype(f32), dtype(i64), None)
"""
import ast
import builtins

import numpy as np

from ..ir.types import BOOL, F32, F64, I64

_DTYPES = {np.dtype(np.float64): F64, np.dtype(np.float32): F32, np.dtype(np.int64): I64, np.dtype(np.bool_): BOOL}
_DTYPE_WORDS = "np.float64, np.float32, float, np.int64, int or bool"


class DType:
    """A dtype as a value of the compiled function (``t = x.dtype``, ``np.dtype('float32')``):
    known when compiling, as dtypes are part of the types. One object per element type, so
    that ``is`` compares them."""

    def __init__(self, t):
        self.t = t

    def __repr__(self):
        return f"dtype({self.t})"


DTYPE_VALUES = {t: DType(t) for t in (F64, F32, I64, BOOL)}


def dtype_value(obj):
    """The DType of a numpy dtype or scalar type (np.dtype('float32'), np.float64), else None."""
    if isinstance(obj, type) and issubclass(obj, np.generic):
        obj = np.dtype(obj)
    return DTYPE_VALUES.get(_DTYPES.get(obj)) if isinstance(obj, np.dtype) else None


def dtype_of(lw, node, env):
    """The element type a dtype argument names: np.float64, float, np.int64, int, bool,
    np.float32, 'float64', ``y.dtype`` (the dtype of an array is part of its type), or a
    variable holding one of these (``t = y.dtype``).

    Example::

        dtype_of(lw, ast.parse("np.float32", mode="eval").body, env)      # f32
    """
    if not (isinstance(node, ast.Constant) or lw.is_global_name(node) or lw.global_object(node) is not None):
        v = lw.expr_any(node, env)
        if isinstance(v, DType):
            return v.t
        obj = getattr(v, "obj", None)           # a local bound to np.float64 (called or not)
        if obj is None:
            lw.typing_error(node, f"{ast.unparse(node)} is not a dtype (use {_DTYPE_WORDS}, or y.dtype)")
    else:
        obj = node.value if isinstance(node, ast.Constant) else lw.global_object(node)
    try:
        dt = _DTYPES.get(np.dtype(obj)) if obj is not None else None
    except TypeError:
        dt = None
    if dt is None or obj is builtins.int and np.dtype(int) != np.dtype(np.int64):
        lw.unsupported(node, f"the dtype {ast.unparse(node)}", f"use {_DTYPE_WORDS}")
    return dt


def _is_dtype_expr(lw, node, env):
    """Whether ``node`` is ``y.dtype`` of a local array or a local variable holding a dtype."""
    if isinstance(node, ast.Attribute) and node.attr == "dtype" and not lw.is_global_name(node.value):
        return lw.global_object(node) is None
    return isinstance(node, ast.Name) and node.id in lw.locals and isinstance(env.get(node.id), DType)


def dtype_comparison(lw, node, env):
    """``x.dtype == np.float32`` (or ``!=``, or a variable holding a dtype) as the constant it
    is (dtypes are part of the types); None for a comparison without a dtype value.

    Example::

        dtype_comparison(lw, ast.parse("x.dtype == float", mode="eval").body, env)     # const True
    """
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return None
    sides = [node.left, node.comparators[0]]
    if not any(_is_dtype_expr(lw, s, env) for s in sides):
        return None
    same = dtype_of(lw, sides[0], env) is dtype_of(lw, sides[1], env)
    return lw.b.const(same if isinstance(node.ops[0], ast.Eq) else not same)
