"""The helper the python backend's generated code calls for the adjoint of ``x[idx] = v``
(numpy has no such function).

Example:
    >>> gather_last(np.array([1.0, 2.0]), (np.array([1, 1]),))
    array([0., 2.])
"""
import numpy as np


def gather_last(g, key):
    """``g[key]`` where only the last entry naming each place of ``g`` reads it, the others 0:
    the gradient of the values of ``x[key] = v``, whose last write to a place is the one kept."""
    out = np.array(g[key], dtype=np.float64)
    lead = g.shape[:len(key)]
    idx = [np.where(i < 0, i + n, i) for i, n in zip(np.broadcast_arrays(*key), lead)]
    flat = np.ravel_multi_index(idx, lead).reshape(-1)
    rows = out.reshape((flat.size,) + g.shape[len(key):])
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.size, dtype=bool)
    keep[flat.size - 1 - first_from_end] = True
    rows[~keep] = 0.0
    return out


NAMES = {"_gather_last": gather_last}
