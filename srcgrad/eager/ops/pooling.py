"""Max and average pooling (1-D and 2-D), plain and adaptive, with PyTorch's grad_fn names,
error messages and results.

The forward passes are numpy: pooling walks the kh*kw kernel offsets, each offset one strided
slice of the whole batch (windows.py), so no Python loop runs over the batch or over pixels,
and float32 stays float32. Each backward is itself an op that gets recorded when it is given
Tensors (under ``create_graph=True``): a max-pool gradient is a scatter whose gradient is a
gather, an average-pool gradient is a spread whose gradient is the average pool again.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.pooling import avg_pool2d, max_pool2d
    >>> x = torch.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    >>> y = max_pool2d(x, 2)
    >>> y, y.grad_fn
    (tensor([[[[ 5.,  7.],
              [13., 15.]]]], grad_fn=<MaxPool2DWithIndicesBackward0>), <MaxPool2DWithIndicesBackward0 object at 0x...>)
    >>> avg_pool2d(x, 2).grad_fn
    <AvgPool2DBackward0 object at 0x...>
"""
from collections import namedtuple

import numpy as np

from ..graph import Node, define_saved
from ..tensor import Tensor, wrap
from . import dual
from ._core import needs_grad
from .inplace import type_word
from .windows import array_shape, offset_slice, pad_hw, record_with

__all__ = ["max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d"]


# ---------------------------------------------------------------------------------------------
# pooling: arguments and PyTorch's checks
#
# The kernels work on (B, H, W): the batch and channel dims folded into one.

# args: the arguments as given (kernel_size, stride, padding, dilation[, count_include_pad, divisor_override]),
# for grad_fn._saved_kernel_size...
_Pool = namedtuple("_Pool", "kernel stride padding dilation ceil_mode out_hw args")


def _pool_pair(v, what, fn, default=None):
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        if default is not None:
            return default
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{fn}: {what}")
    return v


def _pool_out_size(n, k, s, p, d, ceil_mode):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1          # the last window must start inside the input or its left padding
    return out


def _pool_args(fn, x, kernel_size, stride, padding, dilation, ceil_mode, extra=()):
    k = _pool_pair(kernel_size, "kernel_size must either be a single int, or a tuple of two ints", fn)
    s = _pool_pair(stride, "stride must either be omitted, a single int, or a tuple of two ints", fn, default=k)
    p = _pool_pair(padding, "padding must either be a single int, or a tuple of two ints", fn)
    d = _pool_pair(dilation, "dilation must be either a single int, or a tuple of two ints", fn)
    if s[0] == 0 or s[1] == 0:
        raise RuntimeError("stride should not be zero")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p[0] if p[0] < 0 else p[1]}")
    shape = x._data.shape
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f'"{fn}" not implemented for \'Bool\'')
    if fn == "avg_pool2d" and x.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got -3)")
    if fn == "max_pool2d" and x.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if x.dim() not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(shape)}")
    for i in (0, 1):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    out_hw = tuple(_pool_out_size(shape[-2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in (0, 1))
    if out_hw[0] < 1 or out_hw[1] < 1:
        c, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out_hw[0]}x{out_hw[1]}). "
                           "Output size is too small")
    return _Pool(k, s, p, d, bool(ceil_mode), out_hw, (kernel_size, stride, padding, dilation) + extra)


def _pool_padded(x3, pool, fill):
    """``x3`` padded with ``fill`` so that every window (ceil_mode's last one too) lies inside."""
    lo = pool.padding
    hi = tuple(max(0, (o - 1) * s + d * (k - 1) + 1 - n - p)
               for o, s, d, k, n, p in zip(pool.out_hw, pool.stride, pool.dilation, pool.kernel, x3.shape[1:], lo))
    return pad_hw(x3, lo, hi, fill)


def _as3(x):
    """(B, H, W): the leading dims of an (N, C, H, W) or (C, H, W) array folded together."""
    return x.reshape((-1,) + x.shape[-2:])


# ---------------------------------------------------------------------------------------------
# max pooling


def _max_pool_np(x, pool, with_arg):
    """The max of each window and (``with_arg``) where it was: the kernel offset a * kw + b,
    per window (B, OH, OW). As in PyTorch the first maximum wins and a NaN wins over numbers
    (the last NaN, for the offset)."""
    x3 = _as3(x)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (pool.kernel, pool.stride, pool.padding,
                                                        pool.dilation, pool.out_hw)
    floating = x3.dtype.kind == "f"
    low = -np.inf if floating else np.iinfo(x3.dtype).min
    xp = _pool_padded(x3, pool, low)
    nan = with_arg and floating and bool(np.isnan(x3).any())
    offsets = [xp[offset_slice(k // kw, k % kw, pool.out_hw, pool.stride, pool.dilation)] for k in range(kh * kw)]
    best = offsets[0].copy()
    arg = None
    if with_arg:
        small = np.int8 if kh * kw <= 127 else np.int32
        if ph == 0 and pw == 0:     # offset 0 is inside every window
            arg = np.zeros(best.shape, dtype=small)
        else:
            # a window of padding only (all -inf) points at its first pixel inside the input
            a0 = np.maximum(0, -((np.arange(oh) * sh - ph) // dh))
            b0 = np.maximum(0, -((np.arange(ow) * sw - pw) // dw))
            arg = np.broadcast_to((a0[:, None] * kw + b0).astype(small), best.shape).copy()
            best.fill(low)
    for k in range(1 if arg is None or not (ph or pw) else 0, kh * kw):
        v = offsets[k]
        if arg is not None:
            take = v > best
            if nan:
                take |= np.isnan(v)
            # k grows with the loop, so the max of arg and k where taken is "k where taken, else arg"
            np.maximum(arg, take.view(np.int8).astype(arg.dtype, copy=False) * arg.dtype.type(k), out=arg)
        np.maximum(best, v, out=best)   # np.maximum propagates NaN, like PyTorch's max
    return best.reshape(x.shape[:-2] + pool.out_hw), arg


def _flat_index(arg, pool, x_shape):
    """PyTorch's max-pool indices: the flat position (h * W + w) in its input plane of each max."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (pool.kernel, pool.stride, pool.padding,
                                                        pool.dilation, pool.out_hw)
    w = x_shape[-1]
    k = np.arange(kh * kw)
    offset = (k // kw) * dh * w + (k % kw) * dw
    base = (np.arange(oh)[:, None] * sh - ph) * w + (np.arange(ow) * sw - pw)
    return (base + np.take(offset, arg)).reshape(x_shape[:-2] + pool.out_hw)


def _padded_plane(x_hw, pool):
    """(H, W) of the plane the windows walk: the input with its padding, long enough for every window."""
    return tuple(max(p + n, (o - 1) * s + d * (k - 1) + 1)
                 for n, p, o, s, d, k in zip(x_hw, pool.padding, pool.out_hw, pool.stride, pool.dilation, pool.kernel))


def _crop(gxp, pool, x_shape):
    (ph, pw), (h, w) = pool.padding, x_shape[-2:]
    if gxp.shape[1:] != (h, w):
        gxp = np.ascontiguousarray(gxp[:, ph:ph + h, pw:pw + w])
    return gxp.reshape(x_shape)


def _max_pool_scatter_np(g, arg, pool, x_shape):
    """The adjoint of picking the maxima: each output gradient goes to the input pixel that was its max."""
    g3 = _as3(g)
    kh, kw = pool.kernel
    gxp = np.zeros((g3.shape[0],) + _padded_plane(x_shape[-2:], pool), dtype=g3.dtype)
    overlap = any(s < d * (k - 1) + 1 for s, d, k in zip(pool.stride, pool.dilation, pool.kernel))
    zero = g3.dtype.type(0)
    for k in range(kh * kw):
        part = np.where(arg == k, g3, zero)
        sl = offset_slice(k // kw, k % kw, pool.out_hw, pool.stride, pool.dilation)
        if overlap:     # a pixel may be the max of several windows
            gxp[sl] += part
        else:
            gxp[sl] = part
    return _crop(gxp, pool, x_shape)


def _gather_np(h, arg, pool):
    h3 = _as3(h)
    ind = _flat_index(arg, pool, h3.shape)
    b, (oh, ow) = h3.shape[0], pool.out_hw
    picked = np.take_along_axis(h3.reshape(b, h3.shape[1] * h3.shape[2]), ind.reshape(b, oh * ow), axis=1)
    return picked.reshape(h.shape[:-2] + pool.out_hw)


class MaxPool2DWithIndicesBackward0(Node):
    __slots__ = ("arg", "pool")

    def apply(self, g):
        (x,) = self.saved()
        return _max_pool_scatter(g, self.arg, self.pool, array_shape(x), x)


class MaxPool2DWithIndicesBackwardBackward0(Node):
    """The scatter of a max-pool gradient recorded under create_graph, inputs (g, x); it is
    linear in g (its adjoint is a gather) and does not depend on x."""

    __slots__ = ("arg", "pool", "x_shape")

    def apply(self, h):
        return (_gather(h, self.arg, self.pool) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


class GatherBackward0(Node):
    """Picks each window's max out of ``h`` (the adjoint of the scatter above)."""

    __slots__ = ("arg", "pool", "x_shape")

    def apply(self, k):
        return _max_pool_scatter(k, self.arg, self.pool, self.x_shape)


def _max_pool_scatter(g, arg, pool, x_shape, x=None):
    """On Tensors, recorded with the pooled input ``x`` in the graph, as PyTorch does."""
    if isinstance(g, Tensor):
        return record_with(_max_pool_scatter_np(g._data, arg, pool, x_shape), MaxPool2DWithIndicesBackwardBackward0,
                       (g, x), arg=arg, pool=pool, x_shape=x_shape)
    return _max_pool_scatter_np(g, arg, pool, x_shape)


def _gather(h, arg, pool):
    if isinstance(h, Tensor):
        return record_with(_gather_np(h._data, arg, pool), GatherBackward0, (h,), arg=arg, pool=pool,
                       x_shape=h._data.shape)
    return _gather_np(h, arg, pool)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each window of ``input`` (N, C, H, W) or (C, H, W); with ``return_indices``
    also each max's flat index into its H*W plane. Padding never wins (it is -inf)."""
    pool = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    grad = needs_grad(input)
    out, arg = _max_pool_np(input._data, pool, grad or return_indices)
    r = record_with(out, MaxPool2DWithIndicesBackward0, (input,), (input,), arg=arg, pool=pool)
    if return_indices:
        return r, wrap(_flat_index(arg, pool, input._data.shape))
    return r


_MAX_POOL1D_ARG = {"kernel_size": "kernel_size must be an int, list of ints or tuple of ints of size 1",
                   "stride": "stride must be None, an int, list of ints, or tuple of ints of size 1",
                   "padding": "padding must be an int, list of ints, or tuple of ints of size 1",
                   "dilation": "dilation must be an int, list of ints or tuple of ints of size 1"}


def _one_int(v, fn, what):
    """A 1-D pooling argument as an int (None and () stay None: the stride defaults to the kernel)."""
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = tuple(v)
    if what == "stride" and not v:
        return None
    if len(v) != 1:
        if fn == "avg_pool1d":
            raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int (got {len(v)})")
        raise RuntimeError(f"max_pool1d() {_MAX_POOL1D_ARG[what]} but got size {len(v)}")
    return int(v[0])


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each window of ``input`` (N, C, L) or (C, L); run as max_pool2d over H = 1."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k = _one_int(kernel_size, "max_pool1d", "kernel_size")
    s = _one_int(stride, "max_pool1d", "stride")
    s = k if s is None else s
    p = _one_int(padding, "max_pool1d", "padding")
    d = _one_int(dilation, "max_pool1d", "dilation")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    out = _pool_out_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    r = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


# ---------------------------------------------------------------------------------------------
# average pooling


def _avg_divisor(x_hw, pool, count_include_pad, divisor_override, dtype):
    """Each window's divisor (OH, OW): its size clipped to the padded input (PyTorch's rule),
    or only the real pixels with ``count_include_pad=False``."""
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)
    counts = []
    for n, o, k, s, p in zip(x_hw, pool.out_hw, pool.kernel, pool.stride, pool.padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        counts.append(end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0))
    return (counts[0][:, None] * counts[1]).astype(dtype)


def _avg_pool_np(x, pool, div):
    x3 = _as3(x)
    xp = _pool_padded(x3, pool, 0)
    floating = x3.dtype.kind == "f"
    acc = np.zeros((x3.shape[0],) + pool.out_hw, dtype=x3.dtype if floating else np.int64)
    kh, kw = pool.kernel
    for a in range(kh):
        for b in range(kw):
            acc += xp[offset_slice(a, b, pool.out_hw, pool.stride, pool.dilation)]
    if floating:
        out = acc / div
    else:   # integer division truncating toward zero, as in C
        out = (np.sign(acc) * (np.abs(acc) // div.astype(np.int64))).astype(x3.dtype)
    return out.reshape(x.shape[:-2] + pool.out_hw)


def _avg_pool_adjoint_np(g, pool, div, x_shape):
    """Each output gradient spread evenly (over its divisor) back onto its window."""
    g3 = _as3(g) / div
    gxp = np.zeros((g3.shape[0],) + _padded_plane(x_shape[-2:], pool), dtype=g3.dtype)
    for a in range(pool.kernel[0]):
        for b in range(pool.kernel[1]):
            gxp[offset_slice(a, b, pool.out_hw, pool.stride, pool.dilation)] += g3
    return _crop(gxp, pool, x_shape)


class AvgPool2DBackward0(Node):
    __slots__ = ("pool", "div")

    def apply(self, g):
        (x,) = self.saved()
        return _avg_pool_adjoint(g, self.pool, self.div, array_shape(x), x)


class AvgPool2DBackwardBackward0(Node):
    """avg_pool2d's gradient recorded under create_graph, inputs (g, x): linear in g (its adjoint
    is avg_pool2d) and independent of x."""

    __slots__ = ("pool", "div", "x_shape")

    def apply(self, h):
        return (_avg_pool(h, self.pool, self.div) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


def _avg_pool(x, pool, div):
    if isinstance(x, Tensor):
        return record_with(_avg_pool_np(x._data, pool, div), AvgPool2DBackward0, (x,), (x,), pool=pool, div=div)
    return _avg_pool_np(x, pool, div)


def _avg_pool_adjoint(g, pool, div, x_shape, x=None):
    if isinstance(g, Tensor):
        return record_with(_avg_pool_adjoint_np(g._data, pool, div, x_shape), AvgPool2DBackwardBackward0, (g, x),
                       pool=pool, div=div, x_shape=x_shape)
    return _avg_pool_adjoint_np(g, pool, div, x_shape)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean over each window of ``input`` (N, C, H, W) or (C, H, W); zero padding counts in
    the mean unless ``count_include_pad=False``; ``divisor_override`` replaces the divisor."""
    pool = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode,
                      (count_include_pad, divisor_override))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    dtype = input._data.dtype if input._data.dtype.kind == "f" else np.int64
    div = _avg_divisor(input._data.shape[-2:], pool, count_include_pad, divisor_override, dtype)
    return _avg_pool(input, pool, div)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The mean over each window of ``input`` (N, C, L) or (C, L); run as avg_pool2d over H = 1."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    k = _one_int(kernel_size, "avg_pool1d", "kernel_size")
    s = _one_int(stride, "avg_pool1d", "stride")
    p = _one_int(padding, "avg_pool1d", "padding")
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, k if s is None else s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_input, ...: see graph.define_saved)

def _given(v):
    """A pooling size as PyTorch's argument parser keeps it: an int twice, a sequence as it is,
    None (the default stride) as ()."""
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    return tuple(int(i) for i in v)


def _max_pool_indices(n):
    x = n._saved_self       # raises once backward freed it, as PyTorch's _saved_result1 does
    return wrap(_flat_index(n.arg, n.pool, x._data.shape))


define_saved(MaxPool2DWithIndicesBackward0, self=0,
             result1=_max_pool_indices,         # computed from the window offsets kept for the backward
             kernel_size=lambda n: _given(n.pool.args[0]),
             stride=lambda n: _given(n.pool.args[1]),
             padding=lambda n: _given(n.pool.args[2]),
             dilation=lambda n: _given(n.pool.args[3]),
             ceil_mode=lambda n: n.pool.ceil_mode)
define_saved(AvgPool2DBackward0, self=0,
             kernel_size=lambda n: _given(n.pool.args[0]),
             stride=lambda n: _given(n.pool.args[1]),
             padding=lambda n: _given(n.pool.args[2]),
             ceil_mode=lambda n: n.pool.ceil_mode,
             count_include_pad=lambda n: bool(n.pool.args[4]),
             divisor_override=lambda n: n.pool.args[5])


# ---------------------------------------------------------------------------------------------
# adaptive pooling
#
# Output cell i of an axis of n inputs pools the inputs [floor(i*n/o), ceil((i+1)*n/o)): the
# windows cover the axis, neighbours overlapping by at most one input when o does not divide n.
# A 2-D window is a product of a row range and a column range. The average is separable: the
# 1-D average over rows, then over columns; along an axis that o divides it is a reshape and a
# mean, along any other a product with an (o, n) averaging matrix. The max looks at every
# window at once through one (B, OH, KH, OW, KW) array: a reshape along an axis that o divides,
# a gather along the others (a short window repeating its last input). No Python loop runs over
# windows or pixels.


def _adaptive_bounds(n, o):
    """The first and one-past-last input of each of the ``o`` windows over ``n`` inputs."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _avg_matrix(n, o, dtype):
    """A (o, n): row i averages window i (A @ v pools a vector v)."""
    start, end = _adaptive_bounds(n, o)
    j = np.arange(n)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_avg_axis(a, o, axis):
    """The adaptive average of ``a`` along ``axis`` (-1 or -2) down to ``o`` cells."""
    n = a.shape[axis]
    if o == 0:
        return np.zeros(a.shape[:axis] + (0,) + (a.shape[-1:] if axis == -2 else ()), dtype=a.dtype)
    if n % o == 0:
        k = n // o
        if axis == -1:
            return a.reshape(a.shape[:-1] + (o, k)).mean(-1)
        return a.reshape(a.shape[:-2] + (o, k, a.shape[-1])).mean(-2)
    m = _avg_matrix(n, o, a.dtype)
    return a @ m.T if axis == -1 else m @ a


def _adaptive_avg_axis_adjoint(g, n, axis):
    """The adjoint of ``_adaptive_avg_axis``: each cell's gradient spread evenly over its window."""
    o = g.shape[axis]
    if o == 0:
        return np.zeros(g.shape[:axis] + (n,) + (g.shape[-1:] if axis == -2 else ()), dtype=g.dtype)
    if n % o == 0:
        k = n // o
        return np.repeat(g / g.dtype.type(k), k, axis=axis)
    m = _avg_matrix(n, o, g.dtype)
    return g @ m if axis == -1 else m.T @ g


def _planes(a):
    """(B, H, W): the leading dims folded together (stated, as H or W may be 0)."""
    return a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)),) + a.shape[-2:])


def _adaptive_avg_np(x, out_hw):
    x3 = _planes(x)
    # rows first: a reduction over contiguous rows is the fast one, and it shrinks the second
    out = _adaptive_avg_axis(_adaptive_avg_axis(x3, out_hw[0], -2), out_hw[1], -1)
    return out.reshape(x.shape[:-2] + tuple(out_hw))


def _adaptive_avg_adjoint_np(g, x_shape):
    g3 = _planes(g)
    gx = _adaptive_avg_axis_adjoint(_adaptive_avg_axis_adjoint(g3, x_shape[-2], -2), x_shape[-1], -1)
    return np.ascontiguousarray(gx).reshape(x_shape)


class AdaptiveAvgPool2DBackward0(Node):
    __slots__ = ("out_hw",)

    def apply(self, g):
        (x,) = self.saved()
        return _adaptive_avg_adjoint(g, array_shape(x), x)


class AdaptiveAvgPool2DBackwardBackward0(Node):
    """adaptive_avg_pool2d's gradient recorded under create_graph, inputs (g, x): linear in g
    (its adjoint is adaptive_avg_pool2d again) and independent of x."""

    __slots__ = ("out_hw", "x_shape")

    def apply(self, h):
        return (_adaptive_avg(h, self.out_hw) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


def _adaptive_avg(x, out_hw):
    if isinstance(x, Tensor):
        return record_with(_adaptive_avg_np(x._data, out_hw), AdaptiveAvgPool2DBackward0, (x,), (x,), out_hw=out_hw)
    return _adaptive_avg_np(x, out_hw)


def _adaptive_avg_adjoint(g, x_shape, x=None):
    if isinstance(g, Tensor):
        return record_with(_adaptive_avg_adjoint_np(g._data, x_shape), AdaptiveAvgPool2DBackwardBackward0, (g, x),
                       out_hw=tuple(g._data.shape[-2:]), x_shape=x_shape)
    return _adaptive_avg_adjoint_np(g, x_shape)


def _window_index(n, o):
    """(o, k): the inputs of each of the ``o`` windows over ``n``, k the longest window; a
    shorter window repeats its last input (a repeat changes no max)."""
    start, end = _adaptive_bounds(n, o)
    return np.minimum(start[:, None] + np.arange(int((end - start).max())), end[:, None] - 1)


def _adaptive_windows(x3, out_hw):
    """(B, OH, KH, OW, KW): every window of the planes ``x3`` (B, H, W) at once, entry
    [:, i, a, j, b] the pixel at row offset a and column offset b of window (i, j) — a view
    (a reshape) along an axis whose size the output divides, a gather along the others."""
    b, h, w = x3.shape
    oh, ow = out_hw
    rows = x3.reshape(b, oh, h // oh, w) if h % oh == 0 else np.take(x3, _window_index(h, oh), axis=1)
    if w % ow == 0:
        return rows.reshape(rows.shape[:3] + (ow, w // ow))
    return np.take(rows, _window_index(w, ow), axis=3)


def _adaptive_max_np(x, out_hw, with_arg):
    """The maxima (..., OH, OW) and (``with_arg``) the flat index h * W + w of each in its plane:
    PyTorch scans a window in row-major order and keeps the first maximum, or the last NaN."""
    x3 = _planes(x)
    (h, w), (oh, ow) = x3.shape[1:], out_hw
    out_shape = x.shape[:-2] + tuple(out_hw)
    if oh == 0 or ow == 0:
        return np.zeros(out_shape, dtype=x.dtype), np.zeros(out_shape, dtype=np.int64)
    win = _adaptive_windows(x3, out_hw)
    best = win.max(2).max(-1)       # (two reductions: much faster than one over both axes)
    if not with_arg:
        return best.reshape(out_shape), None
    kh, kw = win.shape[2], win.shape[4]

    def row_major(mask):    # (B, OH, OW, KH * KW): each window's flags in scan order
        return mask.transpose(0, 1, 3, 2, 4).reshape(win.shape[0], oh, ow, kh * kw)

    offset = row_major(win == best[:, :, None, :, None]).argmax(-1)    # the first maximum
    if x3.dtype.kind == "f" and np.isnan(best).any():
        last_nan = kh * kw - 1 - row_major(np.isnan(win))[..., ::-1].argmax(-1)
        offset = np.where(np.isnan(best), last_nan, offset)
    a, b = np.divmod(offset, kw)
    (r0, r1), (c0, c1) = _adaptive_bounds(h, oh), _adaptive_bounds(w, ow)
    row = np.minimum(r0[:, None] + a, r1[:, None] - 1)     # a repeated last row/column is itself
    col = np.minimum(c0 + b, c1 - 1)
    return best.reshape(out_shape), (row * w + col).reshape(out_shape)


def _adaptive_max_scatter_np(g, flat, x_shape):
    """Each output gradient added to the input pixel that was its max."""
    (h, w), (oh, ow) = x_shape[-2:], g.shape[-2:]
    planes = int(np.prod(x_shape[:-2], dtype=np.int64))
    gx = np.zeros((planes, h * w), dtype=g.dtype)
    where, g2 = flat.reshape(planes, oh * ow), g.reshape(planes, oh * ow)
    if oh and ow and h % oh == 0 and w % ow == 0:    # disjoint windows: each pixel gets at most one
        np.put_along_axis(gx, where, g2, axis=1)
    else:                                           # overlapping windows may share their max
        np.add.at(gx, (np.arange(planes)[:, None], where), g2)
    return gx.reshape(x_shape)


def _adaptive_max_gather(h, flat):
    """The adjoint of the scatter: each output picks its max's pixel out of ``h``."""
    shape = flat.shape
    plane = h.shape[-2] * h.shape[-1]
    idx = flat.reshape(-1, int(np.prod(shape[-2:], dtype=np.int64)))
    if isinstance(h, Tensor):       # recorded with eager ops, so it differentiates again
        return h.reshape(-1, plane).gather(1, wrap(idx)).view(shape)
    return np.take_along_axis(h.reshape(-1, plane), idx, axis=1).reshape(shape)


class AdaptiveMaxPool2DBackward0(Node):
    __slots__ = ("flat",)

    def apply(self, g):
        (x,) = self.saved()
        return _adaptive_max_scatter(g, self.flat, array_shape(x), x)


class AdaptiveMaxPool2DBackwardBackward0(Node):
    """The scatter of an adaptive max-pool gradient recorded under create_graph, inputs (g, x):
    linear in g (its adjoint is a gather) and independent of x."""

    __slots__ = ("flat", "x_shape")

    def apply(self, h):
        return (_adaptive_max_gather(h, self.flat) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


def _adaptive_max_scatter(g, flat, x_shape, x=None):
    if isinstance(g, Tensor):
        return record_with(_adaptive_max_scatter_np(g._data, flat, x_shape), AdaptiveMaxPool2DBackwardBackward0, (g, x),
                       flat=flat, x_shape=x_shape)
    return _adaptive_max_scatter_np(g, flat, x_shape)


def _adaptive_output_size(fn, x, output_size):
    """``output_size`` (an int, or two ints or Nones: None keeps that input size) as a pair,
    after PyTorch's checks of the input and the size."""
    if isinstance(output_size, (int, np.integer)):
        out = (int(output_size), int(output_size))
    else:
        if output_size is None:
            raise TypeError("object of type 'NoneType' has no len()")
        output_size = tuple(output_size)
        if x.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        out = tuple(x.shape[x.dim() - len(output_size) + i] if v is None else v for i, v in enumerate(output_size))
        for i, v in enumerate(out):
            if not isinstance(v, (int, np.integer)):
                raise TypeError(f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, but found "
                                f"element of type {type(v).__name__} at pos {i}")
        if len(out) != 2:
            raise RuntimeError(f"{fn}: output_size must be 2" if fn == "adaptive_avg_pool2d" else
                               f"{fn}(): internal error: output_size.size() must be 2")
        out = tuple(int(v) for v in out)
    shape = list(x.shape)
    if x.dim() not in (3, 4):
        sep = ":" if fn == "adaptive_max_pool2d" else ""
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got{sep} {shape}")
    for d in range(x.dim() - 3 + 1, x.dim()):
        if shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {shape} with dimension {d} being empty")
    if min(out) < 0:
        if fn == "adaptive_avg_pool2d":
            raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                               f"{{{out[0]}, {out[1]}}}")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(v for v in out if v < 0)}: "
                           f"{shape[:-2] + list(out)}")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{fn}" not implemented for \'{type_word(x)}\'')
    return out


def adaptive_avg_pool2d(input, output_size):
    """The mean over each of the OH x OW windows that split ``input`` (N, C, H, W) or (C, H, W)
    as evenly as they can (window i of n rows: [floor(i*n/OH), ceil((i+1)*n/OH))).
    ``output_size``: an int, or a pair whose None entries keep that input size.

    >>> import srcgrad as torch
    >>> adaptive_avg_pool2d(torch.arange(16.0).reshape(1, 4, 4), (2, 1))
    tensor([[[ 3.5000],
             [11.5000]]])
    """
    out_hw = _adaptive_output_size("adaptive_avg_pool2d", input, output_size)
    if out_hw == (1, 1):        # PyTorch takes the mean here (grad_fn MeanBackward1)
        return input.mean((-1, -2), keepdim=True)
    return _adaptive_avg(input, out_hw)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over each adaptive window (as in ``adaptive_avg_pool2d``); with ``return_indices``
    also each max's flat index h * W + w into its plane.

    >>> import srcgrad as torch
    >>> adaptive_max_pool2d(torch.arange(16.0).reshape(1, 4, 4), 1, return_indices=True)
    (tensor([[[15.]]]), tensor([[[15]]]))
    """
    out_hw = _adaptive_output_size("adaptive_max_pool2d", input, output_size)
    out, flat = _adaptive_max_np(input._data, out_hw, needs_grad(input) or return_indices)
    r = record_with(out, AdaptiveMaxPool2DBackward0, (input,), (input,), flat=flat)
    if return_indices:
        return r, wrap(flat)
    return r


def _adaptive_1d_size(fn, input, output_size):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")
    if isinstance(output_size, (int, np.integer)):
        return int(output_size)
    if output_size is None:
        raise TypeError(f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not NoneType")
    output_size = tuple(output_size)
    for i, v in enumerate(output_size):
        if not isinstance(v, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(v).__name__} at pos {i}")
    if len(output_size) != 1:
        raise RuntimeError(f"{fn}() argument 'output_size' should contain one int (got {len(output_size)})")
    return int(output_size[0])


def adaptive_avg_pool1d(input, output_size):
    """``adaptive_avg_pool2d`` over (N, C, L) or (C, L), as a pool over H = 1.

    >>> import srcgrad as torch
    >>> adaptive_avg_pool1d(torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2)   # windows [0, 3) and [2, 5)
    tensor([[2., 4.]])
    """
    o = _adaptive_1d_size("adaptive_avg_pool1d", input, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` over (N, C, L) or (C, L); indices are positions along L.

    >>> import srcgrad as torch
    >>> adaptive_max_pool1d(torch.tensor([[1.0, 5.0, 3.0, 4.0, 2.0]]), 2)
    tensor([[5., 4.]])
    """
    o = _adaptive_1d_size("adaptive_max_pool1d", input, output_size)
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, o), return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def _adaptive_max_indices(n):
    _ = n._saved_self   # raises once backward freed it, as PyTorch's _saved_result1 does
    return wrap(n.flat)


define_saved(AdaptiveAvgPool2DBackward0, self=0)
define_saved(AdaptiveMaxPool2DBackward0, self=0, result1=_adaptive_max_indices)
