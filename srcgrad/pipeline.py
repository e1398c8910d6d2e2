"""The one way a transformation's IR reaches a backend: verified, optimised, verified again.

Example:
    >>> import math
    >>> from srcgrad.frontend.lower import lower
    >>> from srcgrad.ir.types import F64
    >>> def f(x):
    ...     return math.sin(x) + 0.0 * x
    >>> print(pipeline(lower(f, [F64])).body.ops[0].prim)
    sin
"""
from .ir.passes import optimize
from .ir.verifier import verify


def pipeline(fn, keep_errors=True):
    """``fn`` checked, optimised (ir/passes.py) and checked again; ``keep_errors=False`` lets
    dead-code removal drop unused ops that could only raise (for derivative code)."""
    return verify(optimize(verify(fn), keep_errors=keep_errors))


__all__ = ["pipeline"]
