"""``custom_vjp``: a function whose gradient the user writes by hand.

Example:
    >>> import math, srcgrad
    >>> @srcgrad.custom_vjp
    ... def softplus(x):
    ...     return math.log1p(math.exp(x))
    >>> @softplus.defvjp
    ... def softplus_vjp(x, y, gy):       # primal args, primal result, result cotangent
    ...     return (gy / (1.0 + math.exp(-x)),)
    >>> srcgrad.grad(softplus)(0.0)
    0.5
"""
import functools


class custom_vjp:
    """Wraps ``fun``; ``@f.defvjp`` registers ``vjp(*args, result, cotangent) -> tuple`` (one
    cotangent per argument, None for arguments without one). Compiled code calls ``fun`` for
    the value and ``vjp`` for the gradient, inside other compiled functions too."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vjp = None

    def defvjp(self, vjp):
        self.vjp = vjp
        return vjp

    def __call__(self, *args):
        return self.fun(*args)
