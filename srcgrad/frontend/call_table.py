"""The table of the calls the frontend compiles, gathered: ``CALLS`` (function object -> its
``Callee``) from calls.py's ``CORE_CALLS`` and each numpy family's table, and ``ARRAY_METHODS``
(``x.sum()``, ``x.cumsum()``, ...: the numpy function of that name with ``x`` first), with the
lookups and the checks made before a call's arguments are lowered.

The families (calls.py, numpy_linalg.py, numpy_joins.py, numpy_reductions.py) make their
entries without importing this module; it imports them all, once, in no meaningful order
(keys do not overlap but the later one would win).

Example:
    >>> import math
    >>> CALLS[math.sin].prim, CALLS[math.sin].arity, CALLS[np.sum].keywords
    ('sin', 1, ('axis', 'keepdims', 'dtype'))
"""
import ast
import builtins
import inspect
import os
import sysconfig

import numpy as np

from ..custom import custom_vjp
from .calls import CORE_CALLS
from .numpy_joins import JOIN_CALLS, JOIN_METHODS
from .numpy_linalg import LINALG_CALLS
from .numpy_reductions import REDUCTION_CALLS, REDUCTION_METHODS

CALLS = {**CORE_CALLS, **LINALG_CALLS, **JOIN_CALLS, **REDUCTION_CALLS}

# x.sum(), x.dot(y), ...: the numpy function of the same name with x as its first argument
ARRAY_METHODS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min, "dot": np.dot,
                 **JOIN_METHODS, **REDUCTION_METHODS}


def array_method(func, fobj):
    """The numpy function a call ``x.name(...)`` stands for when ``name`` is an array method the
    table knows (``fobj``: what ``func`` is as a global, a bound method of a global array, or
    None for a local); else None. The caller checks that ``x`` is an array."""
    if not isinstance(func, ast.Attribute) or func.attr not in ARRAY_METHODS:
        return None
    if fobj is None or isinstance(getattr(fobj, "__self__", None), np.ndarray):
        return ARRAY_METHODS[func.attr]
    return None


def callee(fobj):
    """The table's entry for ``fobj``, or None (also for objects that cannot be looked up)."""
    try:
        return CALLS.get(fobj)
    except TypeError:           # unhashable
        return None


_STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")


def known_callable(fobj):
    """Whether the frontend compiles calls to ``fobj``: the table's functions, custom_vjp
    functions, and plain Python functions (not numpy's own or the standard library's, whose
    source it cannot compile)."""
    if isinstance(fobj, custom_vjp) or callee(fobj) is not None:
        return True
    if not inspect.isfunction(fobj):
        return False
    file = fobj.__code__.co_filename
    in_stdlib = file.startswith(_STDLIB) and "site-packages" not in file
    return (getattr(fobj, "__module__", None) or "").split(".")[0] != "numpy" and not in_stdlib


WHAT_CALLS_WORK = ("the math functions, the numpy functions of docs/compiler.md's tables, the builtins abs, min, "
                   "max, sum, len, float, int, bool, round, range, enumerate, zip, and Python functions (module-level, "
                   "nested or lambdas) work")


def check_callee(lw, node, fobj, called):
    """Refuse a call the frontend cannot compile, before its arguments are lowered, so that
    the message names the call (eval("x * x"), not its string)."""
    if fobj in (builtins.eval, builtins.exec):
        lw.unsupported(node, f"calling {called}", "write the code itself in the function")
    if fobj is builtins.sum:
        lw.unsupported(node, "the builtin sum", "for an array write np.sum(x); for a generator or a list, "
                                                "write the loop out: s = 0.0, then for i in range(n): s += ...")
    if not known_callable(fobj):
        lw.unsupported(node, f"calling {called} (yet)", WHAT_CALLS_WORK)
    _check_arity(lw, node, fobj, called)


def _check_arity(lw, node, fobj, called):
    """A known function called with the wrong number of arguments says how many it takes."""
    n = len(node.args)
    if fobj in (builtins.min, builtins.max):
        if n < 2:
            lw.typing_error(node, f"{called}() takes two or more numbers here ({n} given); for the "
                                  f"{'smallest' if fobj is builtins.min else 'largest'} element of an array "
                                  f"write np.{fobj.__name__}(x)")
        return
    entry = callee(fobj)
    if entry is None or entry.arity is None or n == entry.arity:
        return
    message = f"{called} takes {('one argument', 'two arguments')[entry.arity - 1]} ({n} given)"
    if entry.prim == "atan" and n == 2:
        two = called[:called.rfind(".") + 1] + ("arctan2" if fobj is np.arctan else "atan2")
        message += f"; for the angle of the point (x, y) write {two}(y, x)"
    lw.typing_error(node, message)
