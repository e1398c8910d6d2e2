"""What ``.adjoint_source`` calls: numpy (as ``np``), ``math``, and the functions below where
numpy has none of its own. Its first line imports them from here, so the printed source runs
when pasted into a file; the python backend runs the same functions.

Example:
    >>> sum_to(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
    >>> diag_embed(np.array([1.0, 2.0]), 2, 3, 1)
    array([[0., 1., 0.],
           [0., 0., 2.]])
    >>> gather_last(np.array([1.0, 2.0]), (np.array([1, 1]),))
    array([0., 2.])
"""
import math

import numpy as np

from .errors import NEGATIVE_INT_POWER
from .ir.interpret_joins import SPLIT_MESSAGE
from .ir.linalg_eval import cholesky_grad, einsum, svdvals_grad
from .ir.undo_eval import rewind

__all__ = ["np", "math", "sum_to", "broadcast_like", "reduce_grad", "int_power", "power", "cumsum_reverse",
           "cumprod_grad", "put_along", "gather_last", "split_size", "diag_embed", "tile_sum", "repeat_sum", "kron_grad",
           "repeat_each_sum", "einsum", "cholesky_grad", "svdvals_grad", "rewind"]


# ---------------------------------------------------------------------- broadcasting and powers
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


# ---------------------------------------------------------------------- reductions
def cumsum_reverse(x, axis):
    """The cumulative sum from the end along ``axis`` (cumsum's adjoint), in that order."""
    return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis).copy()


def cumprod_grad(t, x, axis, mode):
    """d cumprod without division (exact at zeros), P the running product (P[-1] = 1):
    vjp: grad[i] = P[i-1]·S[i], S[i] = t[i] + x[i+1]·S[i+1]; jvp: dP[i] = dP[i-1]·x[i] + P[i-1]·t[i]."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, 0)
    t = np.broadcast_to(np.moveaxis(np.asarray(t, dtype=np.float64), axis, 0), x.shape)
    out = np.empty(x.shape)
    before, acc = np.ones(x.shape[1:]), np.zeros(x.shape[1:])
    if mode == "jvp":
        for i in range(x.shape[0]):
            acc = t[i] if i == 0 else acc * x[i] + before * t[i]
            before = before * x[i]
            out[i] = acc
    else:
        for i in reversed(range(x.shape[0])):
            acc = t[i] + x[i + 1] * acc if i + 1 < x.shape[0] else t[i]
            out[i] = acc
        for i in range(x.shape[0]):
            out[i] = before * out[i]
            before = before * x[i]
    return np.ascontiguousarray(np.moveaxis(out, 0, axis))


def put_along(g, idx, axis):
    """out[.., idx[i], ..] += g[.., i, ..] into zeros: take_along's adjoint."""
    out = np.zeros(np.shape(g))
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    np.add.at(out, tuple(grids), g)
    return out


# ---------------------------------------------------------------------- indexing
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


# ---------------------------------------------------------------------- joins
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
