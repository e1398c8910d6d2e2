"""Strided windows over the last two dims, shared by convolution (conv.py) and pooling
(pooling.py), and the small recording helpers the convolution, pooling and padding ops share.

Every kernel works on 4-D arrays (N, C, H, W) (pooling on (B, H, W)); a 1-D op runs as a 2-D one
with H = 1. A window walk is one strided view of the padded input, or one strided slice per
kernel offset: no Python loop over the batch or over pixels.

Example:
    >>> import numpy as np
    >>> xp = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> strided_windows(xp, (2, 2), (2, 2), (2, 2), (1, 1))[0, 0, :, :, 0, 1]
    array([[2., 3.],
           [6., 7.]])
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..tensor import Tensor, wrap
from ._core import record


def record_with(data, node_cls, inputs, saved=(), **attrs):
    """``record`` plus attributes set on the node (when one is made)."""
    out = record(data, node_cls, inputs, saved)
    if out.grad_fn is not None:
        for k, v in attrs.items():
            setattr(out.grad_fn, k, v)
    return out


def on_tensors(*xs):
    """True when a rule runs on Tensors (a backward recorded with ``create_graph``), not arrays."""
    return any(isinstance(x, Tensor) for x in xs)


def tensor_of(x):
    """``x`` as a Tensor (an array is wrapped)."""
    return x if isinstance(x, Tensor) else wrap(x)


def array_shape(x):
    """The shape of an array or a Tensor."""
    return x._data.shape if isinstance(x, Tensor) else x.shape


# ---------------------------------------------------------------------------------------------
# strided windows
#
# Every kernel works on 4-D arrays (N, C, H, W); a 1-D op runs as a 2-D one with H = 1.


def to4(a, nd):
    return a[:, :, None, :] if nd == 1 else a


def from4(a, nd):
    return a[:, :, 0, :] if nd == 1 else a


def pad_hw(x, lo, hi, fill=0):
    """``x`` padded by ``lo``/``hi`` pixels over its last two dims; a negative amount crops (the
    geometry of a transposed convolution whose output_padding exceeds its padding has one)."""
    if not (lo[0] or lo[1] or hi[0] or hi[1]):
        return x
    if min(lo + hi) < 0:
        h, w = x.shape[-2:]
        x = x[..., max(0, -lo[0]):h - max(0, -hi[0]), max(0, -lo[1]):w - max(0, -hi[1])]
        lo, hi = tuple(max(0, v) for v in lo), tuple(max(0, v) for v in hi)
    return np.pad(x, ((0, 0),) * (x.ndim - 2) + ((lo[0], hi[0]), (lo[1], hi[1])), constant_values=fill)


def strided_windows(xp, k_hw, out_hw, stride, dilation):
    """A read-only view (N, C, KH, KW, OH, OW) of the padded input ``xp``: entry
    [n, c, a, b, i, j] is the pixel that kernel offset (a, b) meets at output pixel (i, j)."""
    (kh, kw), (oh, ow) = k_hw, out_hw
    (sh, sw), (dh, dw) = stride, dilation
    s = xp.strides
    return as_strided(xp, xp.shape[:2] + (kh, kw, oh, ow),
                      (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw), writeable=False)


def offset_slice(a, b, out_hw, stride, dilation):
    """The index, in the padded plane, of the pixels kernel offset (a, b) meets: one per output pixel."""
    (oh, ow), (sh, sw), (dh, dw) = out_hw, stride, dilation
    return (Ellipsis, slice(a * dh, a * dh + (oh - 1) * sh + 1, sh), slice(b * dw, b * dw + (ow - 1) * sw + 1, sw))
