"""The interpreter's semantics (ir/interpret.py's ``EVAL``) of the primitives that join,
split and build arrays: numpy's own functions, with numpy's errors.

Example:
    JOIN_EVAL["split_size"](None, op, [6])      # 3 for np.split(x, 2)
"""
import numpy as np

from .types import NUMPY_DTYPES

SPLIT_MESSAGE = "array split does not result in an equal division"
STACK_MESSAGE = "all input arrays must have the same shape"


def _concat(it, op, ins):
    axis, expand = op.attrs["axis"], op.attrs["expand"]
    if op.attrs.get("fn") == "stack" and len({x.shape for x in ins}) > 1:
        raise ValueError(STACK_MESSAGE)
    parts = [np.expand_dims(x, axis) if e else x for x, e in zip(ins, expand)]
    return np.concatenate(parts, axis=axis).astype(NUMPY_DTYPES[op.results[0].type.dtype], copy=False)


def _split_size(it, op, ins):
    (n,), sections = ins, op.attrs["sections"]
    if n % sections:
        raise ValueError(SPLIT_MESSAGE)
    return n // sections


def _diag_embed(it, op, ins):
    v, n, m, k = ins
    out = np.zeros((n, m), dtype=v.dtype)
    rows = np.arange(min(len(v), len(np.diagonal(out, k)))) + max(0, -k)
    out[rows, rows + k] = v[:len(rows)]
    return out


def _linspace(it, op, ins):
    start, stop, num = ins
    return np.linspace(float(start), float(stop), num, endpoint=op.attrs["endpoint"])


def _tile_sum(it, op, ins):
    """dx[i] += g[j] for every j whose element is a copy of x[i] (j mod x's shape)."""
    g, x, *reps = ins
    out = np.zeros(x.shape)
    idx = np.indices(g.shape)
    lead = g.ndim - x.ndim
    np.add.at(out, tuple(idx[lead + a] % n for a, n in enumerate(x.shape)), g)
    return out


def _repeat_sum(it, op, ins):
    """dx[i] += g[j] for the r elements j repeating x[i]."""
    g, x, r = ins
    axis = op.attrs.get("axis")
    out = np.zeros(x.shape)
    idx = np.indices(g.shape)
    if axis is None:
        np.add.at(out.reshape(-1), idx[0] // r if r else idx[0], g)
    else:
        np.add.at(out, tuple(i // r if a == axis else i for a, i in enumerate(idx)), g)
    return out


def _kron_grad(it, op, ins):
    """da[i] = sum_k g[i·p + k]·b[k], db[k] = sum_i g[i·p + k]·a[i] (per axis; p: b's shape)."""
    g, other, like = ins
    wrt = op.attrs["wrt"]
    p = np.array(other.shape if wrt == 0 else like.shape).reshape((-1,) + (1,) * g.ndim)
    idx = np.indices(g.shape)
    outer, inner = tuple(idx // p), tuple(idx % p)
    out = np.zeros(like.shape)
    np.add.at(out, outer if wrt == 0 else inner, g * other[inner if wrt == 0 else outer])
    return out


def _repeat_each_sum(it, op, ins):
    """dx[i] += g[j] for the counts[i] positions j repeating x[i] along the axis."""
    g, x, counts = ins
    axis = op.attrs.get("axis")
    out = np.zeros(x.shape)
    flat = out.reshape(-1) if axis is None else np.moveaxis(out, axis, 0)
    n = flat.shape[0]
    source = np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))
    np.add.at(flat, source, g if axis is None else np.moveaxis(g, axis, 0))
    return out


JOIN_EVAL = {
    "concat": _concat,
    "split_size": _split_size,
    "diagonal": lambda it, op, ins: np.diagonal(*ins).copy(),
    "diag_embed": _diag_embed,
    "tri": lambda it, op, ins: np.tri(*ins, dtype=bool),
    "linspace": _linspace,
    "roll": lambda it, op, ins: np.roll(ins[0], ins[1], axis=op.attrs.get("axis")),
    "tile": lambda it, op, ins: np.tile(ins[0], tuple(ins[1:])),
    "tile_sum": _tile_sum,
    "repeat": lambda it, op, ins: np.repeat(ins[0], ins[1], axis=op.attrs.get("axis")),
    "repeat_sum": _repeat_sum,
    "kron": lambda it, op, ins: np.kron(*ins),
    "kron_grad": _kron_grad,
    "repeat_each": lambda it, op, ins: np.repeat(ins[0], ins[1], axis=op.attrs.get("axis")),
    "repeat_each_sum": _repeat_each_sum,
}
