"""np.array of a list literal: ``np.array([a, b, c])`` and ``np.array([[a, b], [c, d]])`` of
numbers (any expressions) make a 1-D / 2-D array (``pack``), ``np.array([x, y])`` of
equal-shaped arrays stacks them one rank up (``stack``); ``np.array(x)`` of an array copies it.
The list is read from the source here: the frontend has no list values of its own.

dtype as numpy's: float64 when any element is a float, else int64 when any is an int, else
bool; ``dtype=`` may ask for float64, float32, int64 or bool (an int or bool dtype of float
elements is refused: write int(a) for each).

Example:
    >>> srcgrad.grad(lambda a: np.sum(np.array([a, a * 2.0, 1.0]) ** 2))(0.5)
    2.5
"""
import ast

from ..ir.types import BOOL, F32, F64, I64
from .numpy_shapes import dtype_of


def _dtype_of_items(types):
    for t in (F64, F32, I64, BOOL):
        if t in types:
            return F64 if t is F32 and len(set(types)) > 1 else t
    return F64


def _items(lw, node, elts, env):
    values = [lw.expr(e, env) for e in elts]
    for e, v in zip(elts, values):
        if v.type.is_array:
            lw.typing_error(e, "np.array([[...], ...]) takes numbers in its rows here, not arrays")
    return values


def _numbers(lw, node, lit, env):
    """(values, shape) of a literal of numbers, 1-D or 2-D (rows of equal length)."""
    rows = lit.elts
    if rows and all(isinstance(r, (ast.List, ast.Tuple)) for r in rows):
        lengths = {len(r.elts) for r in rows}
        if len(lengths) != 1:
            lw.typing_error(node, "np.array of rows of different lengths (numpy refuses such inhomogeneous "
                                  "lists)")
        values = [v for r in rows for v in _items(lw, node, r.elts, env)]
        return values, (len(rows), lengths.pop())
    if any(isinstance(r, (ast.List, ast.Tuple)) for r in rows):
        lw.typing_error(node, "np.array of a list mixing numbers and lists")
    return None, None


def array_literal(lw, node, kws, env):
    """np.array(literal or array[, dtype=...])."""
    if len(node.args) != 1:
        lw.typing_error(node, "np.array takes one list (or array)")
    lit = node.args[0]
    dt = dtype_of(lw, kws["dtype"], env) if "dtype" in kws else None
    if not isinstance(lit, (ast.List, ast.Tuple)):
        x = lw.expr(lit, env)
        if not x.type.is_array:
            lw.unsupported(node, "np.array of a number (a 0-d array: srcgrad has no 0-d arrays)",
                           "use the number itself, or np.array([x]) for an array of one element")
        return lw.emit(node, "copy" if dt in (None, x.type.dtype) else "astype", [x],
                       None if dt in (None, x.type.dtype) else {"dtype": dt})
    values, shape = _numbers(lw, node, lit, env)
    if values is None:
        values = [lw.expr(e, env) for e in lit.elts]
        arrays = [v for v in values if v.type.is_array]
        if arrays and len(arrays) != len(values):
            lw.typing_error(node, "np.array of a list mixing numbers and arrays (numpy refuses such inhomogeneous "
                                  "lists)")
        if arrays:
            dtype = dt or _dtype_of_items([v.type.dtype for v in arrays])
            return lw.emit(node, "stack", arrays, {"dtype": dtype})
        shape = (len(values),)
    dtype = dt or _dtype_of_items([v.type for v in values])
    if dtype in (I64, BOOL) and any(v.type is F64 for v in values):
        lw.typing_error(node, f"np.array of floats with dtype={ast.unparse(kws['dtype'])}: convert each element "
                              "(int(a)) so the rounding is explicit")
    return lw.emit(node, "pack", values, {"shape": shape, "dtype": dtype})
