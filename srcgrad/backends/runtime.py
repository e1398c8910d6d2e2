"""Small helpers the generated Python code calls (kept out of line to keep that code short).

Example:
    >>> sum_to(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
"""
import numpy as np

from ..errors import NEGATIVE_INT_POWER


def sum_to(g, like):
    """``g`` summed over the dimensions numpy broadcasting added, to ``like``'s shape."""
    shape = np.shape(like)
    g = np.asarray(g)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def broadcast_like(g, like, axis=None):
    """A fresh array shaped like ``like`` holding ``g`` repeated along the reduced ``axis``."""
    if axis is not None:
        g = np.expand_dims(g, axis)
    return np.array(np.broadcast_to(g, np.shape(like)), dtype=np.float64)


def reduce_grad(g, x, out, of, axis=None):
    """The gradient of ``np.prod`` (``of`` is "prod"), exact where elements are zero, along
    ``axis`` or over everything: g times the product of all the other elements."""
    x = np.asarray(x, dtype=np.float64)
    g = np.broadcast_to(np.asarray(g, dtype=np.float64), np.shape(out))
    if axis is not None:
        g = np.expand_dims(g, axis)
    moved = np.moveaxis(x, axis, -1) if axis is not None else x.reshape(1, -1)
    left = np.cumprod(np.concatenate([np.ones(moved.shape[:-1] + (1,)), moved[..., :-1]], axis=-1), axis=-1)
    right = np.flip(np.cumprod(np.flip(np.concatenate([moved[..., 1:], np.ones(moved.shape[:-1] + (1,))],
                                                      axis=-1), -1), axis=-1), -1)
    others = left * right          # the product of all the other elements
    others = np.moveaxis(others, -1, axis) if axis is not None else others.reshape(x.shape)
    return g * others


def int_power(x, y):
    """``x ** y`` of ints whose exponent is a variable: an int, as Python gives for ``y >= 0``."""
    if y < 0:
        raise ValueError(NEGATIVE_INT_POWER)
    return x ** y


def power(x, y):
    """``x ** y`` of floats, as Python computes it, except that a complex result (a negative
    ``x``, a fractional ``y``) is an error: compiled code computes with real floats."""
    out = x ** y
    if isinstance(out, complex):
        raise ValueError(f"math domain error: {x!r} ** {y!r} is a complex number in Python; compiled code "
                         "computes with real floats (the llvm backend gives nan, as np.power does)")
    return out
