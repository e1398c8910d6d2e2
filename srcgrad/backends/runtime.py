"""Small helpers the generated Python code calls (kept out of line to keep that code short).

Example:
    >>> sum_to(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
"""
import numpy as np


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
