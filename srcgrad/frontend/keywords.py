"""Keyword arguments of the numpy functions the frontend compiles: the one check that every
call of the table passes (each ``Callee`` declares the keywords it accepts; ``out=`` and
``where=`` are refused everywhere with a rewrite), and the readers of the literal options
(``axis=``, ``keepdims=``, ``dtype=``, ``ddof=``) that the lowerings share.

Example:
    check_keywords(lw, node, CALLS[np.sum], "np.sum")      # np.sum(x, out=y) refused
"""
import ast

import numpy as np

from ..ir.types import F32, F64
from .dtypes import dtype_of

_NOT_LITERAL = object()


def check_keywords(lw, node, entry, called):
    """Refuse, before anything is lowered, a keyword that ``entry`` (a Callee, or None for a
    callable that takes none) does not accept; ``out=`` and ``where=`` with their rewrites."""
    accepted = entry.keywords if entry is not None else ()
    for kw in node.keywords:
        if kw.arg is None:
            lw.unsupported(node, f"**kwargs in the call of {called}", "pass the keywords one by one")
        if kw.arg in accepted:
            continue
        if kw.arg == "out":
            lw.unsupported(node, f"{called}(..., out=...)", f"assign the result instead: y = {called}(...)")
        if kw.arg == "where":
            lw.unsupported(node, f"{called}(..., where=...)",
                           "mask the operand first, e.g. np.where(mask, x, 0.0), and reduce that")
        if entry is None:
            lw.unsupported(node, f"keyword arguments in calls of {called} (yet)")
        lw.unsupported(node, f"the keyword {kw.arg}= of {called}",
                       f"{called} accepts " + ", ".join(k + "=" for k in accepted) if accepted
                       else f"{called} takes its arguments by position here")


def options(lw, node, args, called, positional=(), names=()):
    """The options of a call as ast nodes, by name: the arguments after the first (``args``:
    the lowered arguments, the array first, also for a method ``x.sum(1)``) named by
    ``positional`` in numpy's order, then the keywords. ``names``: accepted keywords too."""
    extra = node.args[len(node.args) - (len(args) - 1):] if len(args) > 1 else []
    if len(extra) > len(positional):
        lw.typing_error(node, f"{called} takes at most {len(positional) + 1} arguments by position here "
                              f"({len(extra) + 1} given)")
    found = dict(zip(positional, extra))
    for kw in node.keywords:
        if kw.arg in found:
            lw.typing_error(node, f"{called} got {kw.arg} twice (by position and as {kw.arg}=)")
        found[kw.arg] = kw.value
    return found


def literal(lw, node, value, what, kinds):
    """The constant an option is written as (``axis=-1``, ``axis=(0, 1)``, ``ddof=1``): refused
    unless of one of ``kinds``."""
    got = _literal(lw, value)
    names = " or ".join({"NoneType": "None", "tuple": "a tuple of ints"}.get(k.__name__, k.__name__) for k in kinds)
    if got is _NOT_LITERAL:
        lw.unsupported(node, f"{what}={ast.unparse(value)}", f"write {what}= as a constant ({names}): "
                       "the compiled code depends on it")
    if not _of_kinds(got, kinds):
        lw.typing_error(node, f"{what}={ast.unparse(value)}: {what} must be {names}")
    return got


def _literal(lw, value):
    try:
        return ast.literal_eval(value)
    except ValueError:
        pass
    obj = lw.global_object(value)       # a module-level constant: AXIS = 1
    if isinstance(obj, (bool, int, float, tuple, np.integer)):
        return obj.item() if isinstance(obj, np.generic) else obj
    return _NOT_LITERAL


def _of_kinds(v, kinds):
    if isinstance(v, tuple):
        return tuple in kinds and all(isinstance(e, int) and not isinstance(e, bool) for e in v)
    if isinstance(v, bool):
        return bool in kinds
    return isinstance(v, kinds) or v is None and type(None) in kinds


def axes(lw, node, x, value, called):
    """The axes ``axis=`` names (an int, negative counting from the end, or a tuple), sorted
    and counted from the front; None for all (no axis=, or axis=None)."""
    if value is None:
        return None
    got = literal(lw, node, value, "axis", (int, tuple, type(None)))
    if got is None:
        return None
    ndim = x.type.ndim
    out = []
    for a in got if isinstance(got, tuple) else (got,):
        if not -ndim <= a < ndim:
            lw.typing_error(node, f"{called}: axis {a} is out of range for an array of {ndim} dimensions")
        out.append(a + ndim if a < 0 else a)
    if len(set(out)) != len(out):
        lw.typing_error(node, f"{called}: an axis is repeated in axis={ast.unparse(value)}")
    return tuple(sorted(out))


def flag(lw, node, value, what):
    """A True/False option (``keepdims=True``), False when not given."""
    return False if value is None else literal(lw, node, value, what, (bool,))


def reduction_dtype(lw, node, value, called, env):
    """``dtype=`` of a reduction or a scan: None when not given, F64, or F32: the result is
    then rounded to float32 (``to_dtype``); anything else is refused (ints: numpy would wrap)."""
    if value is None:
        return None
    dt = dtype_of(lw, value, env)
    if dt not in (F64, F32):
        lw.unsupported(node, f"{called}(..., dtype={ast.unparse(value)})",
                       "compiled array code computes in floats: dtype=np.float64 (or float) and np.float32 "
                       "compile; leave dtype= out and convert the result outside the compiled function")
    return dt


def to_dtype(lw, node, out, dt):
    """The result of a reduction with ``dtype=np.float32``: computed in float64 and rounded once
    to float32 (numpy accumulates in float32, so its last bit may differ); an array becomes a
    float32 array, a number a float of float32's precision. float64 or None: ``out`` itself."""
    if dt is not F32:
        return out
    if out.type.is_array:
        return lw.emit(node, "astype", [out], {"dtype": F32})
    one = lw.emit(node, "pack", [out], {"shape": (1,), "dtype": F32})
    return lw.emit(node, "index", [one, lw.b.const(0)])
