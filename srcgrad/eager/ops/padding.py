"""Padding (``pad``: constant, reflect and replicate) with PyTorch's grad_fn names, error
messages and results.

Constant padding is one numpy copy into a filled array (a negative pad crops); its gradient is
the opposite crop. Reflection and replication padding take the input positions each output
position copies (one ``np.take`` per padded dim); their gradient adds each output gradient back
onto its source. Each backward is recorded when given Tensors, so derivatives of any order work.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.padding import pad
    >>> y = pad(torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True), (2, 1), mode="reflect")
    >>> y
    tensor([[3., 2., 1., 2., 3., 2.]], grad_fn=<ReflectionPad1DBackward0>)
    >>> pad(torch.ones(1, 2, requires_grad=True), (1, 0)).grad_fn
    <ConstantPadNdBackward0 object at 0x...>
"""
import numpy as np

from ..graph import Node, c_int, define_saved
from ..tensor import Tensor
from . import dual
from .windows import array_shape, record_with

__all__ = ["pad"]


# ---------------------------------------------------------------------------------------------
# padding


def _constant_pad_np(x, pads, value):
    """``x`` with ``pads`` = (last dim before, after, second-last before, after, ...) added in
    ``value``; a negative pad crops."""
    shape = list(x.shape)
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    for i in range(len(pads) // 2):
        lo, hi = pads[2 * i], pads[2 * i + 1]
        dim = x.ndim - 1 - i
        n = shape[dim]
        if n + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        keep = max(0, n - max(0, -lo) - max(0, -hi))
        src[dim] = slice(max(0, -lo), max(0, -lo) + keep)
        dst[dim] = slice(max(0, lo), max(0, lo) + keep)
        shape[dim] = n + lo + hi
    if value:
        out = np.full(shape, value, dtype=x.dtype)
    else:
        out = np.zeros(shape, dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


class ConstantPadNdBackward0(Node):
    __slots__ = ("pads",)

    def apply(self, g):
        # the gradient of padding is cropping, which is padding by the negated amounts
        neg = tuple(-p for p in self.pads)
        if isinstance(g, Tensor):
            return _constant_pad(g, neg, 0)
        return _constant_pad_np(g, neg, 0)


def _constant_pad(x, pads, value):
    return record_with(_constant_pad_np(x._data, pads, value), ConstantPadNdBackward0, (x,), pads=pads)


def _pad_index(n, lo, hi, mode):
    """For each output position along one dim, the input position it copies."""
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j > n - 1, 2 * (n - 1) - j, j)
    return np.clip(j, 0, n - 1)


def _index_pad_np(x, idx):
    for axis, ix in idx:
        x = np.take(x, ix, axis=axis)
    return x


def _index_pad_adjoint_np(g, idx, x_shape):
    """Each output gradient added back onto the input position it was copied from."""
    for axis, ix in reversed(idx):
        shape = list(g.shape)
        shape[axis] = x_shape[axis]
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(np.moveaxis(out, axis, 0), ix, np.moveaxis(g, axis, 0))
        g = out
    return g


class _IndexPadBackward(Node):
    """Reflection and replication padding copy input positions given by ``idx``: the gradient
    adds each output gradient back onto its source."""

    __slots__ = ("idx", "adjoint_cls", "pads")

    def apply(self, g):
        (x,) = self.saved()
        return _index_pad_adjoint(g, self.idx, array_shape(x), self.adjoint_cls, type(self), self.pads, x)


class _IndexPadBackwardBackward(Node):
    """The gradient of a reflection/replication pad recorded under create_graph, inputs (g, x):
    linear in g (its adjoint is the pad again) and independent of x."""

    __slots__ = ("idx", "pad_cls", "x_shape", "pads")

    def apply(self, h):
        return (_index_pad(h, self.idx, self.pad_cls, type(self), self.pads) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


class ReflectionPad1DBackward0(_IndexPadBackward):
    __slots__ = ()


class ReflectionPad2DBackward0(_IndexPadBackward):
    __slots__ = ()


class ReplicationPad1DBackward0(_IndexPadBackward):
    __slots__ = ()


class ReplicationPad2DBackward0(_IndexPadBackward):
    __slots__ = ()


class ReflectionPad1DBackwardBackward0(_IndexPadBackwardBackward):
    __slots__ = ()


class ReflectionPad2DBackwardBackward0(_IndexPadBackwardBackward):
    __slots__ = ()


class ReplicationPad1DBackwardBackward0(_IndexPadBackwardBackward):
    __slots__ = ()


class ReplicationPad2DBackwardBackward0(_IndexPadBackwardBackward):
    __slots__ = ()


def _index_pad(x, idx, pad_cls, adjoint_cls, pads):
    if not isinstance(x, Tensor):
        return _index_pad_np(x, idx)
    return record_with(_index_pad_np(x._data, idx), pad_cls, (x,), (x,), idx=idx, adjoint_cls=adjoint_cls, pads=pads)


def _index_pad_adjoint(g, idx, x_shape, adjoint_cls, pad_cls, pads, x=None):
    if isinstance(g, Tensor):
        return record_with(_index_pad_adjoint_np(g._data, idx, x_shape), adjoint_cls, (g, x), idx=idx, pad_cls=pad_cls,
                       x_shape=x_shape, pads=pads)
    return _index_pad_adjoint_np(g, idx, x_shape)


_INDEX_PAD_NODES = {
    ("reflect", 1): (ReflectionPad1DBackward0, ReflectionPad1DBackwardBackward0),
    ("reflect", 2): (ReflectionPad2DBackward0, ReflectionPad2DBackwardBackward0),
    ("replicate", 1): (ReplicationPad1DBackward0, ReplicationPad1DBackwardBackward0),
    ("replicate", 2): (ReplicationPad2DBackward0, ReplicationPad2DBackwardBackward0),
}

_NON_CONSTANT_COMBOS = ("Supported combinations for non-constant padding:\n"
                        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims of ``input``; ``pad`` lists (before, after) pairs from
    the last dim backwards. Modes: 'constant' (any dims; negative pads crop), and 'reflect' and
    'replicate' for the last 1 or 2 dims.

    >>> import srcgrad as torch
    >>> pad(torch.ones(1, 2), (1, 0), value=5.0)
    tensor([[5., 1., 1.]])
    """
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    pads = tuple(int(p) for p in pad)
    ndim = input.dim()
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pads)} and input of dimension {ndim}")
    if mode == "constant":
        return _constant_pad(input, pads, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pads) // 2
    if not (k in (1, 2, 3) and ndim in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pads)} is not supported for {ndim}D input tensor.\n"
                                  + _NON_CONSTANT_COMBOS)
    if mode == "circular" or k == 3:
        raise NotImplementedError(f"srcgrad: pad(mode='{mode}') over {k} dims is not supported; only 'reflect' "
                                  "and 'replicate' over the last 1 or 2 dims")
    shape = input._data.shape
    idx = []
    for i in range(k):
        lo, hi = pads[2 * i], pads[2 * i + 1]
        dim = ndim - 1 - i
        n = shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input {list(shape)}")
        if n + lo + hi < (1 if k == 1 else 0):
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {n + lo + hi}" if k == 1 else
                               f"input (H: {shape[-2]}, W: {shape[-1]}) is too small. Calculated output H: "
                               f"{shape[-2] + pads[2] + pads[3]} W: {shape[-1] + pads[0] + pads[1]}")
        idx.append((dim, _pad_index(n, lo, hi, mode)))
    pad_cls, adjoint_cls = _INDEX_PAD_NODES[(mode, k)]
    return _index_pad(input, tuple(idx), pad_cls, adjoint_cls, pads)


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_input, ...: see graph.define_saved)

define_saved(ConstantPadNdBackward0, pad=lambda n: c_int(n.pads))
for _cls in (ReflectionPad1DBackward0, ReflectionPad2DBackward0, ReplicationPad1DBackward0, ReplicationPad2DBackward0):
    define_saved(_cls, self=0, padding=lambda n: c_int(n.pads))
