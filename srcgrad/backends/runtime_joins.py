"""Helpers the python backend's generated code calls for joining and building arrays (as
``_joins.<name>``), where numpy has no function of its own.

Example:
    >>> diag_embed(np.array([1.0, 2.0]), 2, 3, 1)
    array([[0., 1., 0.],
           [0., 0., 2.]])
"""
import numpy as np

SPLIT_MESSAGE = "array split does not result in an equal division"


def split_size(n, sections):
    """The length of each part of np.split(x, sections) along an axis of length ``n``."""
    if n % sections:
        raise ValueError(SPLIT_MESSAGE)
    return n // sections


def diag_embed(v, n, m, k):
    """An (n, m) matrix of zeros with ``v`` on diagonal ``k`` (as far as it fits)."""
    out = np.zeros((n, m), dtype=v.dtype)
    length = min(len(v), max(0, min(n + min(k, 0), m - max(k, 0))))
    start = max(0, -k)
    for i in range(length):
        out[start + i, start + i + k] = v[i]
    return out


def tile_sum(g, x, *reps):
    """The adjoint of np.tile(x, reps): g's tiles summed to x's shape (reps one per axis of g)."""
    shape = (1,) * (g.ndim - x.ndim) + x.shape
    split = [n for pair in zip(reps, shape) for n in pair]          # (r0, n0, r1, n1, ...)
    return np.asarray(g, dtype=np.float64).reshape(split).sum(axis=tuple(range(0, 2 * g.ndim, 2))).reshape(x.shape)


def repeat_sum(g, x, r, axis):
    """The adjoint of np.repeat(x, r, axis): each run of r elements of g summed."""
    g = np.asarray(g, dtype=np.float64)
    if axis is None:
        return g.reshape(x.size, r).sum(axis=1).reshape(x.shape)
    return g.reshape(x.shape[:axis] + (x.shape[axis], r) + x.shape[axis + 1:]).sum(axis=axis + 1)


def kron_grad(g, other, like, wrt):
    """The adjoint of np.kron(a, b) for a (wrt 0: ``other`` is b) or for b (wrt 1: ``other``
    is a): g seen as blocks g[i, k] (per axis, i over a, k over b) contracted with the other."""
    a_shape, b_shape = (like.shape, other.shape) if wrt == 0 else (other.shape, like.shape)
    blocks = np.asarray(g, dtype=np.float64).reshape([n for pair in zip(a_shape, b_shape) for n in pair])
    d = len(a_shape)
    letters = "abcdefgh"
    i, k = letters[:d], letters[d:2 * d]
    g_sub = "".join(x + y for x, y in zip(i, k))
    return np.einsum(f"{g_sub},{k if wrt == 0 else i}->{i if wrt == 0 else k}", blocks, other)


def repeat_each_sum(g, x, counts, axis):
    """The adjoint of np.repeat(x, counts, axis): the run of g repeating each element, summed."""
    out = np.zeros(x.shape)
    runs = out.reshape(-1) if axis is None else np.moveaxis(out, axis, 0)
    n = runs.shape[0]
    counts = np.broadcast_to(counts, (n,))
    ends = np.cumsum(counts)
    parts = g.reshape(-1) if axis is None else np.moveaxis(np.asarray(g, dtype=np.float64), axis, 0)
    for i in range(n):
        runs[i] = parts[ends[i] - counts[i]:ends[i]].sum(axis=0)
    return out
