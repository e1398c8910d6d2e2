"""np.array of a list: ``np.array([a, b, c])`` and ``np.array([[a, b], [c, d]])`` of numbers
(any expressions) make a 1-D / 2-D array (``pack``), ``np.array([x, y])`` of equal-shaped
arrays stacks them one rank up (``stack``); ``np.array(x)`` of an array copies it. The list
may be a literal, a comprehension over a range known when compiling, or a local list or tuple
(the frontend's containers: their leaves are the elements).

dtype as numpy's: float64 when any element is a float, else int64 when any is an int, else
bool; ``dtype=`` may ask for float64, float32, int64 or bool (an int or bool dtype of float
elements is refused: write int(a) for each).

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> def f(a):
    ...     return np.sum(np.array([a, a * 2.0, 1.0]) ** 2)
    >>> srcgrad.grad(f)(0.5)
    5.0
"""
import ast

from ..ir.types import BOOL, F32, F64, I64
from ..trees import Tree
from .dtypes import dtype_of


def _dtype_of_items(types):
    for t in (F64, F32, I64, BOOL):
        if t in types:
            return F64 if t is F32 and len(set(types)) > 1 else t
    return F64


def _row(lw, node, row):
    """The numbers of one row of a 2-D literal."""
    if not isinstance(row, Tree) or row.kind is dict:
        lw.typing_error(node, "np.array of a list mixing numbers and lists")
    for v in row.items:
        if isinstance(v, Tree) or v.type.is_array:
            lw.typing_error(node, "np.array([[...], ...]) takes numbers in its rows here, not arrays or lists")
    return list(row.items)


def _numbers(lw, node, items):
    """(values, shape) of a list of numbers or of rows of numbers (of equal lengths)."""
    if not any(isinstance(v, Tree) for v in items):
        return list(items), (len(items),)
    rows = [_row(lw, node, r) for r in items]
    if len({len(r) for r in rows}) != 1:
        lw.typing_error(node, "np.array of rows of different lengths (numpy refuses such inhomogeneous lists)")
    return [v for r in rows for v in r], (len(rows), len(rows[0]))


def array_literal(lw, node, kws, env, tree=None):
    """np.array(list or array[, dtype=...]) (see the module doc).

    Example::

        array_literal(lw, ast.parse("np.array([a, 1.0])", mode="eval").body, {}, env)     # a pack op
    """
    if len(node.args) != 1:
        lw.typing_error(node, "np.array takes one list (or array)")
    dt = dtype_of(lw, kws["dtype"], env) if "dtype" in kws else None
    if tree is None:
        tree = lw.expr_any(node.args[0], env)       # a list literal, a comprehension, a local list or tuple
    if not isinstance(tree, Tree):
        x = tree
        if not x.type.is_array:
            lw.unsupported(node, "np.array of a number (a 0-d array: srcgrad has no 0-d arrays)",
                           "use the number itself, or np.array([x]) for an array of one element")
        return lw.emit(node, "copy" if dt in (None, x.type.dtype) else "astype", [x],
                       None if dt in (None, x.type.dtype) else {"dtype": dt})
    if tree.kind is dict:
        lw.typing_error(node, "np.array of a dict")
    values, shape = list(tree.items), None
    arrays = [v for v in values if not isinstance(v, Tree) and v.type.is_array]
    if arrays and len(arrays) != len(values):
        lw.typing_error(node, "np.array of a list mixing numbers and arrays (numpy refuses such inhomogeneous lists)")
    if arrays:
        return lw.emit(node, "stack", arrays, {"dtype": dt or _dtype_of_items([v.type.dtype for v in arrays])})
    values, shape = _numbers(lw, node, values)
    dtype = dt or _dtype_of_items([v.type for v in values])
    if dtype in (I64, BOOL) and any(v.type is F64 for v in values):
        lw.typing_error(node, f"np.array of floats with dtype={ast.unparse(kws['dtype'])}: convert each element "
                              "(int(a)) so the rounding is explicit")
    return lw.emit(node, "pack", values, {"shape": shape, "dtype": dtype})
