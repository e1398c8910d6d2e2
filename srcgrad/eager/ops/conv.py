"""Convolution, pooling and padding with PyTorch's grad_fn names, error messages and results.

The forward passes are numpy. A convolution views every input window at once through one
strided view, copies the windows into columns (im2col) and multiplies them by the weights in
one matmul (batched over the batch and the groups); its input gradient goes back offset by
offset, one matmul and one strided add per kernel offset. Pooling walks the kh*kw kernel
offsets, each offset one strided slice of the whole batch. No Python loop runs over the batch
or over pixels, and float32 stays float32.

Each backward is itself an op that gets recorded when it is given Tensors (under
``create_graph=True``), and its own backward is again one of the ops here — the gradient of a
convolution is a transposed convolution, whose gradient is a convolution — so derivatives of
any order work. A transposed convolution is the input gradient of a convolution, run forwards:
it reuses the same kernels (its gradients are a convolution and a weight gradient).

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.conv import conv2d, max_pool2d
    >>> x = torch.ones(1, 1, 4, 4, requires_grad=True)
    >>> y = conv2d(x, torch.ones(2, 1, 3, 3), padding=1)
    >>> y.shape, y.grad_fn
    (torch.Size([1, 2, 4, 4]), <ConvolutionBackward0 object at 0x...>)
    >>> max_pool2d(y, 2).grad_fn
    <MaxPool2DWithIndicesBackward0 object at 0x...>
"""
import warnings
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..graph import Node, c_int, define_saved
from ..tensor import Tensor, _wrap, legacy_type_name
from . import dual
from ._core import needs_grad, record

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
           "avg_pool2d", "pad"]


def _record(data, node_cls, inputs, saved=(), **attrs):
    """``record`` plus attributes set on the node (when one is made)."""
    out = record(data, node_cls, inputs, saved)
    if out.grad_fn is not None:
        for k, v in attrs.items():
            setattr(out.grad_fn, k, v)
    return out


def _tensor_path(*xs):
    return any(isinstance(x, Tensor) for x in xs)


def _t(x):
    return x if isinstance(x, Tensor) else _wrap(x)


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else x.shape


# ---------------------------------------------------------------------------------------------
# strided windows, shared by convolution and pooling
#
# Every kernel works on 4-D arrays (N, C, H, W); a 1-D op runs as a 2-D one with H = 1.


def _to4(a, nd):
    return a[:, :, None, :] if nd == 1 else a


def _from4(a, nd):
    return a[:, :, 0, :] if nd == 1 else a


def _pad_hw(x, lo, hi, fill=0):
    """``x`` padded by ``lo``/``hi`` pixels over its last two dims; a negative amount crops (the
    geometry of a transposed convolution whose output_padding exceeds its padding has one)."""
    if not (lo[0] or lo[1] or hi[0] or hi[1]):
        return x
    if min(lo + hi) < 0:
        h, w = x.shape[-2:]
        x = x[..., max(0, -lo[0]):h - max(0, -hi[0]), max(0, -lo[1]):w - max(0, -hi[1])]
        lo, hi = tuple(max(0, v) for v in lo), tuple(max(0, v) for v in hi)
    return np.pad(x, ((0, 0),) * (x.ndim - 2) + ((lo[0], hi[0]), (lo[1], hi[1])), constant_values=fill)


def _windows(xp, k_hw, out_hw, stride, dilation):
    """A read-only view (N, C, KH, KW, OH, OW) of the padded input ``xp``: entry
    [n, c, a, b, i, j] is the pixel that kernel offset (a, b) meets at output pixel (i, j)."""
    (kh, kw), (oh, ow) = k_hw, out_hw
    (sh, sw), (dh, dw) = stride, dilation
    s = xp.strides
    return as_strided(xp, xp.shape[:2] + (kh, kw, oh, ow),
                      (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw), writeable=False)


def _offset_slice(a, b, out_hw, stride, dilation):
    """The index, in the padded plane, of the pixels kernel offset (a, b) meets: one per output pixel."""
    (oh, ow), (sh, sw), (dh, dw) = out_hw, stride, dilation
    return (Ellipsis, slice(a * dh, a * dh + (oh - 1) * sh + 1, sh), slice(b * dw, b * dw + (ow - 1) * sw + 1, sw))


# ---------------------------------------------------------------------------------------------
# convolution: numpy kernels
#
# conv:  y[n, o, i, j] = sum over c, a, b of  xpad[n, c, i*sh + a*dh, j*sw + b*dw] * w[o, c, a, b]
# Its two adjoints give the gradients:
#   input grad   <h, conv(x, w)> = <conv_input_grad(h, w), x>    (a transposed convolution)
#   weight grad  <h, conv(x, w)> = <conv_weight_grad(x, h), w>

_Geom = namedtuple("_Geom", "nd stride pad_lo pad_hi dilation groups")   # 2-tuples over (H, W)


def _out_hw(in_hw, k_hw, geom):
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, lo, hi, d in zip(in_hw, k_hw, geom.stride, geom.pad_lo, geom.pad_hi, geom.dilation))


def _im2col(x4, k_hw, out_hw, geom):
    """The input windows as columns (N, groups, C/groups * KH * KW, OH * OW): one copy."""
    n, c = x4.shape[:2]
    win = _windows(_pad_hw(x4, geom.pad_lo, geom.pad_hi), k_hw, out_hw, geom.stride, geom.dilation)
    return win.reshape(n, geom.groups, c // geom.groups * k_hw[0] * k_hw[1], out_hw[0] * out_hw[1])


def _conv_np(x, w, geom):
    x4, w4 = _to4(x, geom.nd), _to4(w, geom.nd)
    n, o, g = x4.shape[0], w4.shape[0], geom.groups
    out_hw = _out_hw(x4.shape[2:], w4.shape[2:], geom)
    cols = _im2col(x4, w4.shape[2:], out_hw, geom)
    out = np.matmul(w4.reshape(g, o // g, -1), cols)          # (N, groups, O/groups, OH*OW)
    return _from4(out.reshape((n, o) + out_hw), geom.nd)


def _conv_weight_grad_np(x, gy, w_shape, geom):
    """d/dw of <gy, conv(x, w)>: each weight meets, over the batch and the output pixels, the
    input pixel under it times the output gradient there."""
    x4, g4 = _to4(x, geom.nd), _to4(gy, geom.nd)
    k_hw = tuple(w_shape[2:]) if geom.nd == 2 else (1, w_shape[2])
    n, o, g = g4.shape[0], g4.shape[1], geom.groups
    cols = _im2col(x4, k_hw, g4.shape[2:], geom)
    gw = np.matmul(g4.reshape(n, g, o // g, cols.shape[-1]), cols.transpose(0, 1, 3, 2)).sum(0)
    return gw.reshape(w_shape)


def _conv_input_grad_np(gy, w, x_shape, geom):
    """d/dx of <gy, conv(x, w)>: every output gradient flows back through the kernel onto the
    input pixels its window read. Per kernel offset (a, b) that is w[:, :, a, b].T @ gy, added
    into the input pixels the offset met (col2im, one offset at a time: the columns stay small)."""
    g4, w4 = _to4(gy, geom.nd), _to4(w, geom.nd)
    n, o, oh, ow = g4.shape
    _, cg, kh, kw = w4.shape
    g, c = geom.groups, cg * geom.groups
    gy_groups = g4.reshape(n, g, o // g, oh * ow)
    w_offsets = np.ascontiguousarray(w4.reshape(g, o // g, cg, kh, kw).transpose(3, 4, 0, 2, 1))  # (kh, kw, g, cg, o/g)
    h, wd = (x_shape[2:] if geom.nd == 2 else (1, x_shape[2]))
    (lh, lw), (hh, hw) = geom.pad_lo, geom.pad_hi
    # (a negative pad_hi, see _pad_hw, leaves pixels no window reads: they stay zero)
    gxp = np.zeros((n, c, h + lh + max(hh, 0), wd + lw + max(hw, 0)), dtype=np.result_type(g4, w4))
    for a in range(kh):
        for b in range(kw):
            part = np.matmul(w_offsets[a, b], gy_groups).reshape(n, c, oh, ow)
            gxp[_offset_slice(a, b, (oh, ow), geom.stride, geom.dilation)] += part
    if lh or lw or hh or hw:
        gxp = np.ascontiguousarray(gxp[:, :, lh:lh + h, lw:lw + wd])
    return _from4(gxp, geom.nd)


# ---------------------------------------------------------------------------------------------
# convolution: the recorded ops and their nodes
#
# A transposed convolution with input x is conv_input_grad(x, w) for the convolution whose output
# has x's shape (``geom`` below is that convolution's geometry, see _conv_transpose). Its gradients
# are then the two other maps of the triple: d/dx is conv(g, w), d/dw is conv_weight_grad(g, x).


class ConvolutionBackward0(Node):
    """The gradient of a convolution, or of a transposed one (``transposed``), as in PyTorch."""

    __slots__ = ("geom", "x_shape", "w_shape", "b_shape", "transposed", "output_padding")

    def apply(self, g):
        x, w = self.saved()
        gx = gw = gb = None
        if self.transposed:
            if self.needs_input_grad(0):
                gx = _tconv_input_grad(g, w, self.x_shape, self.geom, x)
            if self.needs_input_grad(1):
                gw = _tconv_weight_grad(x, g, self.w_shape, self.geom, w)
        else:
            if self.needs_input_grad(0):
                gx = _conv_input_grad(g, w, self.x_shape, self.geom, x)
            if self.needs_input_grad(1):
                gw = _conv_weight_grad(x, g, self.w_shape, self.geom, w)
        if self.needs_input_grad(2):
            gb = _conv_bias_grad(g, self.geom, x, w, self.x_shape, self.w_shape)
        return gx, gw, gb


class ConvolutionBackwardBackward0(Node):
    """A convolution's gradient computed under create_graph=True; inputs (gy, x, w) as in PyTorch.

    ``kind == "input"``:  the op was gx = conv_input_grad(gy, w), which does not depend on x;
    ``kind == "weight"``: the op was gw = conv_weight_grad(x, gy), which does not depend on w.
    Both are bilinear and adjoint to conv, so their gradients are conv and the other adjoint.
    ``kind == "bias"``: the op was gb = gy summed over all dims but the channels.
    For a transposed convolution (x in the convolution's output space, gy in its input space):
    ``kind == "t_input"``:  gx = conv(gy, w);
    ``kind == "t_weight"``: gw = conv_weight_grad(gy, x), the convolution's input being gy.
    """

    __slots__ = ("geom", "kind", "shapes")

    def apply(self, h):
        geom, need = self.geom, self.needs_input_grad
        if self.kind == "bias":      # each gy entry adds into its channel's bias gradient
            shape = self.shapes[0]
            return (dual.expand(dual.reshape(h, (1, shape[1]) + (1,) * geom.nd), shape) if need(0) else None,
                    dual.zeros(self.shapes[1], h) if need(1) else None,
                    dual.zeros(self.shapes[2], h) if need(2) else None)
        gy, x, w = self.saved()
        if self.kind == "input":     # <h, conv_input_grad(gy, w)> = <conv(h, w), gy>
            return (_conv(h, w, geom) if need(0) else None,
                    dual.zeros(self.shapes[1], h) if need(1) else None,
                    _conv_weight_grad(h, gy, self.shapes[2], geom) if need(2) else None)
        if self.kind == "weight":    # <h, conv_weight_grad(x, gy)> = <conv(x, h), gy>
            return (_conv(x, h, geom) if need(0) else None,
                    _conv_input_grad(gy, h, self.shapes[1], geom) if need(1) else None,
                    dual.zeros(self.shapes[2], h) if need(2) else None)
        if self.kind == "t_input":   # <h, conv(gy, w)> = <conv_input_grad(h, w), gy>
            return (_conv_input_grad(h, w, self.shapes[0], geom) if need(0) else None,
                    dual.zeros(self.shapes[1], h) if need(1) else None,
                    _conv_weight_grad(gy, h, self.shapes[2], geom) if need(2) else None)
        # "t_weight": <h, conv_weight_grad(gy, x)> = <conv(gy, h), x> = <conv_input_grad(x, h), gy>
        return (_conv_input_grad(x, h, self.shapes[0], geom) if need(0) else None,
                _conv(gy, h, geom) if need(1) else None,
                dual.zeros(self.shapes[2], h) if need(2) else None)


def _conv(x, w, geom):
    """conv(x, w) without bias, on arrays or (recorded) on Tensors."""
    if _tensor_path(x, w):
        return _conv_recorded(_t(x), _t(w), None, geom)
    return _conv_np(x, w, geom)


def _conv_input_grad(gy, w, x_shape, geom, x=None):
    """The input gradient (a transposed convolution of ``gy``). On Tensors it is recorded, with the
    convolution's input ``x`` joining the graph as in PyTorch (its derivative is zero)."""
    if not _tensor_path(gy, w):
        return _conv_input_grad_np(gy, w, x_shape, geom)
    gy, w = _t(gy), _t(w)
    return _record(_conv_input_grad_np(gy._data, w._data, x_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(w) else None, None, w if needs_grad(gy) else None),
                   geom=geom, kind="input", shapes=(gy._data.shape, x_shape, w._data.shape))


def _conv_weight_grad(x, gy, w_shape, geom, w=None):
    """The weight gradient (a correlation of ``x`` with ``gy``); recorded on Tensors, with the
    weight ``w`` joining the graph as in PyTorch (its derivative is zero)."""
    if not _tensor_path(x, gy):
        return _conv_weight_grad_np(x, gy, w_shape, geom)
    x, gy = _t(x), _t(gy)
    return _record(_conv_weight_grad_np(x._data, gy._data, w_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(x) else None, x if needs_grad(gy) else None, None),
                   geom=geom, kind="weight", shapes=(gy._data.shape, x._data.shape, w_shape))


def _tconv_input_grad(gy, w, x_shape, geom, x=None):
    """A transposed convolution's input gradient: ``gy`` convolved with the same weight; recorded
    on Tensors with the transposed convolution's input ``x`` in the graph (derivative zero)."""
    if not _tensor_path(gy, w):
        return _conv_np(gy, w, geom)
    gy, w = _t(gy), _t(w)
    return _record(_conv_np(gy._data, w._data, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(w) else None, None, w if needs_grad(gy) else None),
                   geom=geom, kind="t_input", shapes=(gy._data.shape, x_shape, w._data.shape))


def _tconv_weight_grad(x, gy, w_shape, geom, w=None):
    """A transposed convolution's weight gradient: the weight gradient of the convolution whose
    input is ``gy`` and whose output gradient is ``x``; recorded on Tensors."""
    if not _tensor_path(x, gy):
        return _conv_weight_grad_np(gy, x, w_shape, geom)
    x, gy = _t(x), _t(gy)
    return _record(_conv_weight_grad_np(gy._data, x._data, w_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(x) else None, x if needs_grad(gy) else None, None),
                   geom=geom, kind="t_weight", shapes=(gy._data.shape, x._data.shape, w_shape))


def _conv_bias_grad(gy, geom, x, w, x_shape, w_shape):
    dims = (0,) + tuple(range(2, 2 + geom.nd))
    if not isinstance(gy, Tensor):
        return gy.sum(axis=dims)
    return _record(gy._data.sum(axis=dims), ConvolutionBackwardBackward0, (gy, x, w), geom=geom, kind="bias",
                   shapes=(gy._data.shape, x_shape, w_shape))


def _conv_recorded(x, w, b, geom):
    out = _conv_np(x._data, w._data, geom)
    if b is not None:
        out += b._data.reshape((-1,) + (1,) * geom.nd)
    # both are kept, whichever needs a gradient, as in PyTorch (the gradient's graph links x too: see above)
    return _record(out, ConvolutionBackward0, (x, w, b), (x, w), geom=geom, x_shape=x._data.shape,
                   w_shape=w._data.shape, b_shape=b._data.shape if b is not None else None,
                   transposed=False, output_padding=(0,) * geom.nd)


def _conv_transpose_recorded(x, w, b, geom, out_shape, output_padding):
    """The transposed convolution of ``x``: the input gradient of the convolution ``geom`` whose
    input has ``out_shape``, plus the bias."""
    out = _conv_input_grad_np(x._data, w._data, out_shape, geom)
    if b is not None:
        out += b._data.reshape((-1,) + (1,) * geom.nd)
    return _record(out, ConvolutionBackward0, (x, w, b), (x, w), geom=geom, x_shape=x._data.shape,
                   w_shape=w._data.shape, b_shape=b._data.shape if b is not None else None,
                   transposed=True, output_padding=output_padding)


# ---------------------------------------------------------------------------------------------
# convolution: arguments and PyTorch's checks

_C_NAMES = {"float32": "float", "float64": "double", "float16": "half", "bfloat16": "bfloat16",
            "int64": "long", "int32": "int", "int16": "short", "int8": "char", "uint8": "byte", "bool": "bool"}


def _c_name(t):
    """The C type name PyTorch's messages use for a tensor's dtype ("float", "double", ...)."""
    return _C_NAMES.get(t.dtype.name, t.dtype.name)


def _conv_param(v, nd, k, name):
    """A stride/padding/dilation as a tuple of ``k`` ints (``k`` = the weight's spatial dims)."""
    v = (int(v),) * nd if isinstance(v, (int, np.integer)) else tuple(int(i) for i in v)
    if len(v) == 1:
        v = v * k
    if len(v) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return v


def _convnd(nd, input, weight, bias, stride, padding, dilation, groups):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, but got "
                           f"input of size: {list(input.shape)}")
    if input.dim() == nd + 1:
        return _convolution(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    return _convolution(input, weight, bias, stride, padding, dilation, groups)


def _check_groups(xs, ws, groups):
    if len(xs) != len(ws):
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight {list(ws)}, but "
                           f"got {len(xs)}-dimensional input of size {list(xs)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(ws)}] instead")


def _geom(k, stride, lo, hi, dilation, groups):
    """The geometry over (H, W) of a ``k``-D convolution (a 1-D one runs with H = 1)."""
    if k == 1:
        return _Geom(1, (1,) + tuple(stride), (0,) + tuple(lo), (0,) + tuple(hi), (1,) + tuple(dilation), groups)
    return _Geom(2, tuple(stride), tuple(lo), tuple(hi), tuple(dilation), groups)


def _conv_geom(xs, ws, b, stride, padding, dilation, groups):
    """Check a convolution of an input of shape ``xs`` with a weight of shape ``ws`` (and bias
    ``b``) as PyTorch does, and return its geometry."""
    if len(ws) < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = len(ws) - 2
    nd = len(xs) - 2
    stride = _conv_param(stride, nd, k, "stride")
    same = isinstance(padding, str) and padding == "same"
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if same and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        padding = 0
    padding = _conv_param(padding, nd, k, "padding")
    dilation = _conv_param(dilation, nd, k, "dilation")
    groups = int(groups)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _check_groups(xs, ws, groups)
    if xs[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
    if b is not None and (b.dim() != 1 or b._data.shape[0] != ws[0]):
        raise RuntimeError(f"Given weight of size {list(ws)}, expected bias to be 1-dimensional with {ws[0]} "
                           f"elements, but got bias of size {list(b._data.shape)} instead")
    if same:
        total = [d * (kk - 1) for d, kk in zip(dilation, ws[2:])]
        if any(t % 2 for t in total):
            # (stacklevel: the caller of conv2d/conv1d)
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                          "zero-padded copy of the input be created", UserWarning, stacklevel=5)
        lo = tuple(t // 2 for t in total)
        hi = tuple(t - t // 2 for t in total)     # the odd pixel goes after, as in PyTorch
    else:
        lo = hi = padding
    padded = [n + a + c for n, a, c in zip(xs[2:], lo, hi)]
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, ws[2:])]
    if any(e > p for e, p in zip(eff, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    return _geom(k, stride, lo, hi, dilation, groups)


def _check_dtypes(x, w):
    """The input and weight dtypes as PyTorch accepts them (the same, and not both bool)."""
    if x._data.dtype == np.bool_ and w._data.dtype == np.bool_:
        raise NotImplementedError('"slow_conv2d_cpu" not implemented for \'Bool\'')
    if x.dtype is not w.dtype:
        if x.dtype.itemsize > w.dtype.itemsize or not x.dtype.is_floating_point:
            raise RuntimeError(f"expected scalar type {_c_name(x).capitalize()} but found {_c_name(w).capitalize()}")
        raise RuntimeError(f"Input type ({legacy_type_name(x._data)}) and weight type ({legacy_type_name(w._data)}) "
                           "should be the same or input should be a MKLDNN tensor and weight is a dense tensor")


def _convolution(x, w, b, stride, padding, dilation, groups):
    geom = _conv_geom(x._data.shape, w._data.shape, b, stride, padding, dilation, groups)
    _check_dtypes(x, w)
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({_c_name(x)}) and bias type ({_c_name(b)}) should be the same")
    return _conv_recorded(x, w, b, geom)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of ``input`` (N, C, L) or (C, L) with ``weight``
    (O, C/groups, K); ``padding`` is an int, a 1-tuple, 'valid' or 'same'.

    >>> import srcgrad as torch
    >>> conv1d(torch.ones(1, 2, 5), torch.ones(3, 2, 2)).shape
    torch.Size([1, 3, 4])
    """
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of ``input`` (N, C, H, W) or (C, H, W) with ``weight``
    (O, C/groups, KH, KW); ``padding`` is an int, a pair, 'valid' or 'same'.

    >>> import srcgrad as torch
    >>> conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 2, 2])
    """
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------------------------------
# transposed convolution: arguments and PyTorch's checks
#
# conv_transpose(x, w) with stride s, padding p, output_padding op, dilation d is the input
# gradient of the convolution conv(·, w) (weight (C_in, C_out/groups, K...): the convolution maps
# C_out channels to C_in) whose input has the transposed output's size
#     n_out = (n - 1)·s - 2p + d·(k - 1) + op + 1.
# That convolution is given padding p before and p - op after, so that it maps n_out pixels back
# to exactly n and its own gradients have the shapes of x and w (p - op < 0 crops the last pixels,
# which no window of the stride-s grid reaches: see _pad_hw).


def _int_args(fn, **args):
    """PyTorch's argument parser: the size arguments are ints or sequences of ints, groups an int."""
    for name, v in args.items():
        if name == "groups":
            if not isinstance(v, (int, np.integer)):
                raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(v).__name__}")
        elif not isinstance(v, (int, np.integer)) and not (
                isinstance(v, (tuple, list)) and all(isinstance(i, (int, np.integer)) for i in v)):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _conv_transposend(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    fn = f"conv_transpose{nd}d"
    _int_args(fn, stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got "
                           f"input of size: {list(input.shape)}")
    args = (weight, bias, stride, padding, output_padding, groups, dilation)
    if input.dim() == nd + 1:
        return _conv_transpose(input.unsqueeze(0), *args).squeeze(0)
    return _conv_transpose(input, *args)


def _conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    xs, ws = x._data.shape, w._data.shape
    if len(ws) < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = len(ws) - 2
    nd = len(xs) - 2
    stride = _conv_param(stride, nd, k, "stride")
    padding = _conv_param(padding, nd, k, "padding")
    dilation = _conv_param(dilation, nd, k, "dilation")
    output_padding = _conv_param(output_padding, nd, k, "output_padding")
    groups = int(groups)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _check_groups(xs, ws, groups)
    if xs[1] != ws[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[0]} channels, but got {xs[1]} channels instead")
    c_out = ws[1] * groups
    if b is not None and (b.dim() != 1 or b._data.shape[0] != c_out):
        raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected bias to be 1-dimensional with "
                           f"{c_out} elements, but got bias of size {list(b._data.shape)} instead")
    if 0 in xs[2:]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: {list(xs)}")
    # PyTorch runs a 1-D transposed convolution as a 2-D one with H = 1, and says so in its messages
    geom = _geom(k, stride, padding, [p - o for p, o in zip(padding, output_padding)], dilation, groups)
    (sh, sw), (dh, dw) = geom.stride, geom.dilation
    (oph, opw) = (0,) * (2 - k) + tuple(output_padding)
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dh}, "
                           f"dilation_width: {dw}")
    if (oph >= sh and oph >= dh) or (opw >= sw and opw >= dw):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {oph} output_padding_width: {opw} stride_height: {sh} "
                           f"stride_width: {sw} dilation_height: {dh} dilation_width: {dw}")
    in_hw = (1,) * (2 - k) + tuple(xs[2:])
    k_hw = (1,) * (2 - k) + tuple(ws[2:])
    out_hw = tuple((n - 1) * s - 2 * p + d * (kk - 1) + o + 1
                   for n, s, p, d, kk, o in zip(in_hw, geom.stride, geom.pad_lo, geom.dilation, k_hw, (oph, opw)))
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size per channel: ({in_hw[0]} x {in_hw[1]}). Calculated output size per "
                           f"channel: ({out_hw[0]} x {out_hw[1]}). Output size is too small")
    if x._data.dtype == np.bool_ and w._data.dtype == np.bool_:
        raise NotImplementedError('"slow_conv_transpose2d_out_cpu" not implemented for \'Bool\'')
    _check_dtypes(x, w)
    if b is not None and b.dtype is not x.dtype:
        # PyTorch's float32 kernel refuses a bias of another dtype; its other kernels add the bias
        # into the output, whose dtype must hold it
        if x.dtype.name == "float32":
            raise RuntimeError(f"Input type ({legacy_type_name(x._data)}) and bias type ({legacy_type_name(b._data)}) "
                               "should be the same or input should be a MKLDNN tensor and bias is a dense tensor")
        if b.dtype.is_floating_point and not x.dtype.is_floating_point:
            raise RuntimeError(f"result type {_c_name(b).capitalize()} can't be cast to the desired output type "
                               f"{_c_name(x).capitalize()}")
    out_shape = (xs[0], c_out) + out_hw[2 - k:]
    return _conv_transpose_recorded(x, w, b, geom, out_shape, tuple(output_padding))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution of ``input`` (N, C_in, L) or (C_in, L) with ``weight``
    (C_in, C_out/groups, K): the gradient of conv1d with respect to its input. The output has
    length (L - 1)·stride - 2·padding + dilation·(K - 1) + output_padding + 1.

    >>> import srcgrad as torch
    >>> conv_transpose1d(torch.ones(1, 2, 4), torch.ones(2, 3, 3), stride=2).shape
    torch.Size([1, 3, 9])
    """
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_in, C_out/groups, KH, KW): the gradient of conv2d with respect to its input, so that
    conv_transpose2d(y, w) has the shape of x where y = conv2d(x, w) (``output_padding`` picks
    among the sizes a strided convolution maps to the same output size).

    >>> import srcgrad as torch
    >>> conv_transpose2d(torch.ones(1, 4, 5, 5), torch.ones(4, 2, 3, 3), stride=2, padding=1,
    ...                  output_padding=1).shape
    torch.Size([1, 2, 10, 10])
    """
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---------------------------------------------------------------------------------------------
# the gradients of a convolution as functions (torch.nn.grad)


def _check_grad_output(gy, expected, geom):
    """``gy`` of the shape the convolution's output has, with PyTorch's messages (its dilated
    kernel words them differently; both count a 1-D convolution's dims as 2-D ones, H = 1)."""
    if gy.dim() != len(expected):
        raise RuntimeError(f"Expected input and grad_output to have the same number of dimensions, but got: "
                           f"{len(expected)} and {gy.dim()}")
    got = tuple(gy._data.shape)
    if len(expected) == 3:
        expected, got = expected[:2] + (1,) + expected[2:], got[:2] + (1,) + got[2:]
    if got[0] != expected[0]:       # (PyTorch's undilated kernel does not check this one)
        raise RuntimeError(f"grad_output.size(0)={got[0]} must be input.size(0)={expected[0]}")
    if any(d > 1 for d in geom.dilation):
        if got[1] != expected[1]:
            raise RuntimeError(f"grad_output.size(1)={got[1]} must be weight.size(0)={expected[1]}")
        if got[2:] != expected[2:]:
            raise RuntimeError(f"grad_output[2:] shape{list(got[2:])} must be equal to output size "
                               f"{expected[2]} {expected[3]}")
    for i in (1, 2, 3):
        if got[i] != expected[i]:
            raise RuntimeError(f"Expected a tensor of dimension 4 and tensor.size[{i}] == {expected[i]} but got: "
                               f"dimension 4 and tensor.size[{i}] = {got[i]}")


def conv_input_grad(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d/conv2d with respect to an input of size ``input_size``, given the
    output gradient ``grad_output``: torch.nn.grad.conv{1,2}d_input."""
    xs, ws = tuple(int(i) for i in input_size), weight._data.shape
    geom = _conv_geom(xs, ws, None, stride, padding, dilation, groups)
    out_hw = _out_hw((1,) * (4 - len(xs)) + xs[2:], (1,) * (4 - len(ws)) + ws[2:], geom)
    _check_grad_output(grad_output, (xs[0], ws[0]) + out_hw[2 - geom.nd:], geom)
    _check_dtypes(grad_output, weight)
    return _conv_input_grad(grad_output, weight, xs, geom)


def conv_weight_grad(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d/conv2d with respect to a weight of size ``weight_size``, given the
    input and the output gradient: torch.nn.grad.conv{1,2}d_weight."""
    ws = tuple(int(i) for i in weight_size)
    xs = input._data.shape
    geom = _conv_geom(xs, ws, None, stride, padding, dilation, groups)
    k_hw = (1,) * (4 - len(ws)) + ws[2:]
    out_hw = _out_hw((1,) * (4 - len(xs)) + xs[2:], k_hw, geom)
    _check_grad_output(grad_output, (xs[0], ws[0]) + out_hw[2 - geom.nd:], geom)
    _check_dtypes(input, grad_output)
    return _conv_weight_grad(input, grad_output, ws, geom)


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
    return _pad_hw(x3, lo, hi, fill)


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
    offsets = [xp[_offset_slice(k // kw, k % kw, pool.out_hw, pool.stride, pool.dilation)] for k in range(kh * kw)]
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
        sl = _offset_slice(k // kw, k % kw, pool.out_hw, pool.stride, pool.dilation)
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
        return _max_pool_scatter(g, self.arg, self.pool, _shape(x), x)


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
        return _record(_max_pool_scatter_np(g._data, arg, pool, x_shape), MaxPool2DWithIndicesBackwardBackward0,
                       (g, x), arg=arg, pool=pool, x_shape=x_shape)
    return _max_pool_scatter_np(g, arg, pool, x_shape)


def _gather(h, arg, pool):
    if isinstance(h, Tensor):
        return _record(_gather_np(h._data, arg, pool), GatherBackward0, (h,), arg=arg, pool=pool,
                       x_shape=h._data.shape)
    return _gather_np(h, arg, pool)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The max over each window of ``input`` (N, C, H, W) or (C, H, W); with ``return_indices``
    also each max's flat index into its H*W plane. Padding never wins (it is -inf)."""
    pool = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    grad = needs_grad(input)
    out, arg = _max_pool_np(input._data, pool, grad or return_indices)
    r = _record(out, MaxPool2DWithIndicesBackward0, (input,), (input,), arg=arg, pool=pool)
    if return_indices:
        return r, _wrap(_flat_index(arg, pool, input._data.shape))
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
            acc += xp[_offset_slice(a, b, pool.out_hw, pool.stride, pool.dilation)]
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
            gxp[_offset_slice(a, b, pool.out_hw, pool.stride, pool.dilation)] += g3
    return _crop(gxp, pool, x_shape)


class AvgPool2DBackward0(Node):
    __slots__ = ("pool", "div")

    def apply(self, g):
        (x,) = self.saved()
        return _avg_pool_adjoint(g, self.pool, self.div, _shape(x), x)


class AvgPool2DBackwardBackward0(Node):
    """avg_pool2d's gradient recorded under create_graph, inputs (g, x): linear in g (its adjoint
    is avg_pool2d) and independent of x."""

    __slots__ = ("pool", "div", "x_shape")

    def apply(self, h):
        return (_avg_pool(h, self.pool, self.div) if self.needs_input_grad(0) else None,
                dual.zeros(self.x_shape, h) if self.needs_input_grad(1) else None)


def _avg_pool(x, pool, div):
    if isinstance(x, Tensor):
        return _record(_avg_pool_np(x._data, pool, div), AvgPool2DBackward0, (x,), (x,), pool=pool, div=div)
    return _avg_pool_np(x, pool, div)


def _avg_pool_adjoint(g, pool, div, x_shape, x=None):
    if isinstance(g, Tensor):
        return _record(_avg_pool_adjoint_np(g._data, pool, div, x_shape), AvgPool2DBackwardBackward0, (g, x),
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
    return _record(_constant_pad_np(x._data, pads, value), ConstantPadNdBackward0, (x,), pads=pads)


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
        return _index_pad_adjoint(g, self.idx, _shape(x), self.adjoint_cls, type(self), self.pads, x)


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
    return _record(_index_pad_np(x._data, idx), pad_cls, (x,), (x,), idx=idx, adjoint_cls=adjoint_cls, pads=pads)


def _index_pad_adjoint(g, idx, x_shape, adjoint_cls, pad_cls, pads, x=None):
    if isinstance(g, Tensor):
        return _record(_index_pad_adjoint_np(g._data, idx, x_shape), adjoint_cls, (g, x), idx=idx, pad_cls=pad_cls,
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


def _spatial(n, pairs):
    """A (H, W) pair of the geometry for the op's own dims (a 1-D op runs with H = 1)."""
    return pairs[2 - n.geom.nd:]


define_saved(ConvolutionBackward0, input=0, weight=1,
             stride=lambda n: _spatial(n, n.geom.stride),
             padding=lambda n: _spatial(n, n.geom.pad_lo),
             dilation=lambda n: _spatial(n, n.geom.dilation),
             groups=lambda n: n.geom.groups,
             transposed=lambda n: n.transposed,
             output_padding=lambda n: n.output_padding,
             # (PyTorch shows (0,) without a bias)
             bias_sym_sizes_opt=lambda n: n.b_shape if n.b_shape is not None else (0,))


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
    return _wrap(_flat_index(n.arg, n.pool, x._data.shape))


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
define_saved(ConstantPadNdBackward0, pad=lambda n: c_int(n.pads))
for _cls in (ReflectionPad1DBackward0, ReflectionPad2DBackward0, ReplicationPad1DBackward0, ReplicationPad2DBackward0):
    define_saved(_cls, self=0, padding=lambda n: c_int(n.pads))
