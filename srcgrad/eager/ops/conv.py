"""Convolution and transposed convolution with PyTorch's grad_fn names, error messages and
results, and the gradients of a convolution as functions (torch.nn.grad).

The forward passes are numpy. A convolution views every input window at once through one
strided view, copies the windows into columns (im2col) and multiplies them by the weights in
one matmul (batched over the batch and the groups); its input gradient goes back offset by
offset, one matmul and one strided add per kernel offset (the strided windows: windows.py).
No Python loop runs over the batch or over pixels, and float32 stays float32.

Each backward is itself an op that gets recorded when it is given Tensors (under
``create_graph=True``), and its own backward is again one of the ops here — the gradient of a
convolution is a transposed convolution, whose gradient is a convolution — so derivatives of
any order work. A transposed convolution is the input gradient of a convolution, run forwards:
it reuses the same kernels (its gradients are a convolution and a weight gradient).

Pooling is in pooling.py, padding in padding.py.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.conv import conv2d
    >>> x = torch.ones(1, 1, 4, 4, requires_grad=True)
    >>> y = conv2d(x, torch.ones(2, 1, 3, 3), padding=1)
    >>> y.shape, y.grad_fn
    (torch.Size([1, 2, 4, 4]), <ConvolutionBackward0 object at 0x...>)
"""
import warnings
from collections import namedtuple

import numpy as np

from ..graph import Node, define_saved
from ..tensor import Tensor, legacy_type_name
from . import dual
from ._core import needs_grad
from .windows import from4, offset_slice, on_tensors, pad_hw, record_with, strided_windows, tensor_of, to4

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]


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
    win = strided_windows(pad_hw(x4, geom.pad_lo, geom.pad_hi), k_hw, out_hw, geom.stride, geom.dilation)
    return win.reshape(n, geom.groups, c // geom.groups * k_hw[0] * k_hw[1], out_hw[0] * out_hw[1])


def _conv_np(x, w, geom):
    x4, w4 = to4(x, geom.nd), to4(w, geom.nd)
    n, o, g = x4.shape[0], w4.shape[0], geom.groups
    out_hw = _out_hw(x4.shape[2:], w4.shape[2:], geom)
    cols = _im2col(x4, w4.shape[2:], out_hw, geom)
    out = np.matmul(w4.reshape(g, o // g, -1), cols)          # (N, groups, O/groups, OH*OW)
    return from4(out.reshape((n, o) + out_hw), geom.nd)


def _conv_weight_grad_np(x, gy, w_shape, geom):
    """d/dw of <gy, conv(x, w)>: each weight meets, over the batch and the output pixels, the
    input pixel under it times the output gradient there."""
    x4, g4 = to4(x, geom.nd), to4(gy, geom.nd)
    k_hw = tuple(w_shape[2:]) if geom.nd == 2 else (1, w_shape[2])
    n, o, g = g4.shape[0], g4.shape[1], geom.groups
    cols = _im2col(x4, k_hw, g4.shape[2:], geom)
    gw = np.matmul(g4.reshape(n, g, o // g, cols.shape[-1]), cols.transpose(0, 1, 3, 2)).sum(0)
    return gw.reshape(w_shape)


def _conv_input_grad_np(gy, w, x_shape, geom):
    """d/dx of <gy, conv(x, w)>: every output gradient flows back through the kernel onto the
    input pixels its window read. Per kernel offset (a, b) that is w[:, :, a, b].T @ gy, added
    into the input pixels the offset met (col2im, one offset at a time: the columns stay small)."""
    g4, w4 = to4(gy, geom.nd), to4(w, geom.nd)
    n, o, oh, ow = g4.shape
    _, cg, kh, kw = w4.shape
    g, c = geom.groups, cg * geom.groups
    gy_groups = g4.reshape(n, g, o // g, oh * ow)
    w_offsets = np.ascontiguousarray(w4.reshape(g, o // g, cg, kh, kw).transpose(3, 4, 0, 2, 1))  # (kh, kw, g, cg, o/g)
    h, wd = (x_shape[2:] if geom.nd == 2 else (1, x_shape[2]))
    (lh, lw), (hh, hw) = geom.pad_lo, geom.pad_hi
    # (a negative pad_hi, see pad_hw, leaves pixels no window reads: they stay zero)
    gxp = np.zeros((n, c, h + lh + max(hh, 0), wd + lw + max(hw, 0)), dtype=np.result_type(g4, w4))
    for a in range(kh):
        for b in range(kw):
            part = np.matmul(w_offsets[a, b], gy_groups).reshape(n, c, oh, ow)
            gxp[offset_slice(a, b, (oh, ow), geom.stride, geom.dilation)] += part
    if lh or lw or hh or hw:
        gxp = np.ascontiguousarray(gxp[:, :, lh:lh + h, lw:lw + wd])
    return from4(gxp, geom.nd)


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
    if on_tensors(x, w):
        return _conv_recorded(tensor_of(x), tensor_of(w), None, geom)
    return _conv_np(x, w, geom)


def _conv_input_grad(gy, w, x_shape, geom, x=None):
    """The input gradient (a transposed convolution of ``gy``). On Tensors it is recorded, with the
    convolution's input ``x`` joining the graph as in PyTorch (its derivative is zero)."""
    if not on_tensors(gy, w):
        return _conv_input_grad_np(gy, w, x_shape, geom)
    gy, w = tensor_of(gy), tensor_of(w)
    return record_with(_conv_input_grad_np(gy._data, w._data, x_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(w) else None, None, w if needs_grad(gy) else None),
                   geom=geom, kind="input", shapes=(gy._data.shape, x_shape, w._data.shape))


def _conv_weight_grad(x, gy, w_shape, geom, w=None):
    """The weight gradient (a correlation of ``x`` with ``gy``); recorded on Tensors, with the
    weight ``w`` joining the graph as in PyTorch (its derivative is zero)."""
    if not on_tensors(x, gy):
        return _conv_weight_grad_np(x, gy, w_shape, geom)
    x, gy = tensor_of(x), tensor_of(gy)
    return record_with(_conv_weight_grad_np(x._data, gy._data, w_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(x) else None, x if needs_grad(gy) else None, None),
                   geom=geom, kind="weight", shapes=(gy._data.shape, x._data.shape, w_shape))


def _tconv_input_grad(gy, w, x_shape, geom, x=None):
    """A transposed convolution's input gradient: ``gy`` convolved with the same weight; recorded
    on Tensors with the transposed convolution's input ``x`` in the graph (derivative zero)."""
    if not on_tensors(gy, w):
        return _conv_np(gy, w, geom)
    gy, w = tensor_of(gy), tensor_of(w)
    return record_with(_conv_np(gy._data, w._data, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(w) else None, None, w if needs_grad(gy) else None),
                   geom=geom, kind="t_input", shapes=(gy._data.shape, x_shape, w._data.shape))


def _tconv_weight_grad(x, gy, w_shape, geom, w=None):
    """A transposed convolution's weight gradient: the weight gradient of the convolution whose
    input is ``gy`` and whose output gradient is ``x``; recorded on Tensors."""
    if not on_tensors(x, gy):
        return _conv_weight_grad_np(gy, x, w_shape, geom)
    x, gy = tensor_of(x), tensor_of(gy)
    return record_with(_conv_weight_grad_np(gy._data, x._data, w_shape, geom), ConvolutionBackwardBackward0,
                   (gy, x, w), (gy if needs_grad(x) else None, x if needs_grad(gy) else None, None),
                   geom=geom, kind="t_weight", shapes=(gy._data.shape, x._data.shape, w_shape))


def _conv_bias_grad(gy, geom, x, w, x_shape, w_shape):
    dims = (0,) + tuple(range(2, 2 + geom.nd))
    if not isinstance(gy, Tensor):
        return gy.sum(axis=dims)
    return record_with(gy._data.sum(axis=dims), ConvolutionBackwardBackward0, (gy, x, w), geom=geom, kind="bias",
                   shapes=(gy._data.shape, x_shape, w_shape))


def _conv_recorded(x, w, b, geom):
    out = _conv_np(x._data, w._data, geom)
    if b is not None:
        out += b._data.reshape((-1,) + (1,) * geom.nd)
    # both are kept, whichever needs a gradient, as in PyTorch (the gradient's graph links x too: see above)
    return record_with(out, ConvolutionBackward0, (x, w, b), (x, w), geom=geom, x_shape=x._data.shape,
                   w_shape=w._data.shape, b_shape=b._data.shape if b is not None else None,
                   transposed=False, output_padding=(0,) * geom.nd)


def _conv_transpose_recorded(x, w, b, geom, out_shape, output_padding):
    """The transposed convolution of ``x``: the input gradient of the convolution ``geom`` whose
    input has ``out_shape``, plus the bias."""
    out = _conv_input_grad_np(x._data, w._data, out_shape, geom)
    if b is not None:
        out += b._data.reshape((-1,) + (1,) * geom.nd)
    return record_with(out, ConvolutionBackward0, (x, w, b), (x, w), geom=geom, x_shape=x._data.shape,
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
# which no window of the stride-s grid reaches: see pad_hw).


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


def _conv_transpose_geom(xs, ws, b, stride, padding, output_padding, groups, dilation):
    """Check a transposed convolution of an input of shape ``xs`` with a weight of shape ``ws``
    (and bias ``b``) as PyTorch does; returns its geometry (that of the convolution whose input
    gradient it is), the output's shape and the output padding as a tuple."""
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
    return geom, (xs[0], c_out) + out_hw[2 - k:], tuple(output_padding)


def _conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    geom, out_shape, output_padding = _conv_transpose_geom(x._data.shape, w._data.shape, b, stride, padding,
                                                           output_padding, groups, dilation)
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
    return _conv_transpose_recorded(x, w, b, geom, out_shape, output_padding)


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
