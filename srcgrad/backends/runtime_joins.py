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
