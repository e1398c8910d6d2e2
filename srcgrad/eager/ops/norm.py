"""Normalisation layers, GELU and embedding, as ``torch.nn.functional`` computes them.

Each op is one node named as PyTorch names it (``NativeBatchNormBackward0``, ...). The
backward rules are written with the ``dual`` helpers, so an ordinary ``backward()`` runs them
on numpy arrays (reusing the normalised input saved by the forward pass) and
``create_graph=True`` runs them on Tensors, recomputing the statistics from the input so that
a second backward sees how they depend on it.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.norm import batch_norm
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 6.0]], requires_grad=True)
    >>> rm, rv = torch.zeros(2), torch.ones(2)
    >>> batch_norm(x, rm, rv, training=True)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
    >>> rm
    tensor([0.2000, 0.4000])
"""
import math

import numpy as np

from .. import grad_mode
from ..graph import Node, c_int, define_saved
from ..tensor import legacy_type_name, wrap
from ..versions import bump_version
from . import dual
from ._core import record
from ._erf import erf as _erf
from .inplace import type_word

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "embedding", "gelu"]


# ------------------------------------------------------------------------------ shared pieces


def _standardize(x, axes, n, eps):
    """(x - mean) / sqrt(var + eps) over ``axes`` (``n`` values each), with the biased variance.

    Returns (xhat, invstd, mean, var), the statistics kept with size-1 ``axes``. Works on
    arrays (the forward pass) and on Tensors (the backward of a backward)."""
    mean = dual.sum(x, axes, keepdim=True) / n
    xc = x - mean
    var = dual.sum(xc * xc, axes, keepdim=True) / n
    invstd = 1 / dual.sqrt(var + eps)
    return xc * invstd, invstd, mean, var


def _standardize_grad(gh, xhat, invstd, axes, n):
    """The gradient of x given ``gh`` = dL/dxhat, for xhat = _standardize(x)[0]:
    invstd * (gh - mean(gh) - xhat * mean(gh * xhat)), means over ``axes``."""
    return invstd * (gh - dual.sum(gh, axes, keepdim=True) / n
                     - xhat * (dual.sum(gh * xhat, axes, keepdim=True) / n))


def _affine(xhat, weight, bias, shape):
    """xhat * weight + bias, the parameters reshaped to ``shape``; a new array even without them
    (``xhat`` is saved for the backward and must not share memory with the result)."""
    out = xhat * weight._data.reshape(shape) if weight is not None else xhat.copy()
    if bias is not None:
        out += bias._data.reshape(shape)
    return out


def _check_float(x, kernel):
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_word(x)}\'')


def _check_same_dtype(x, params):
    for p in params:
        if p is not None and p._data.dtype != x._data.dtype:
            if x._data.dtype == np.float32:
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _not_differentiable(fn, **tensors):
    if grad_mode.state.enabled:
        for name, t in tensors.items():
            if t is not None and t._rg:
                raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                                   "This input cannot have requires_grad True.")


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


# --------------------------------------------------------------------------------- batch_norm


class NativeBatchNormBackward0(Node):
    """Gradients of batch_norm for (input, weight, bias)."""

    __slots__ = ("training", "axes", "shape", "count", "eps")

    def apply(self, g):
        x, w, rm, rv, _, invstd, xhat = self.saved()
        axes, shape, n = self.axes, self.shape, self.count
        need_x, need_w, need_b = self.needs_input_grad(0), self.needs_input_grad(1), self.needs_input_grad(2)
        if self.training:
            if dual.is_tensor(x):
                xhat, invstd = _standardize(x, axes, n, self.eps)[:2]
            else:
                invstd = invstd.reshape(shape)
        else:
            invstd = 1 / dual.sqrt(dual.reshape(rv, shape) + self.eps)
            xhat = (x - dual.reshape(rm, shape)) * invstd if need_w else None
        # with the batch statistics, x moves the mean and variance too: the two sums carry that
        sum_g = dual.sum(g, axes, keepdim=True) if need_b or (need_x and self.training) else None
        sum_gx = dual.sum(g * xhat, axes, keepdim=True) if need_w or (need_x and self.training) else None
        gx = None
        if need_x:
            scale = invstd if w is None else invstd * dual.reshape(w, shape)
            if self.training:
                gx = scale * (g - sum_g / n - xhat * (sum_gx / n))
            else:
                gx = g * scale
        channels = (shape[1],)
        return (gx,
                dual.reshape(sum_gx, channels) if need_w else None,
                dual.reshape(sum_g, channels) if need_b else None)


_NO_STATS = {}


def _no_stats(dtype):
    """The empty array batch_norm saves in evaluation mode where the batch statistics would be
    (PyTorch's _saved_result1 is then an empty tensor); one per dtype, read-only."""
    a = _NO_STATS.get(dtype)
    if a is None:
        a = _NO_STATS[dtype] = np.empty(0, dtype=dtype)
        a.flags.writeable = False
    return a


def _verify_batch_size(shape, shown):
    if shape[0] * _numel(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shown}")


def _check_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """batch_norm's arguments checked as PyTorch checks them, in its order; returns the number
    of channels (the size of dim 1)."""
    x = input._data
    if training:
        _verify_batch_size(x.shape, f"torch.Size({list(x.shape)})")
        if not eps > 0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if (running_mean is None) != (running_var is None):
        if training:
            raise ValueError("running_mean and running_var must either both be None or neither be None")
        raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined in "
                           "evaluation mode")
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not NoneType")
    channels = x.shape[1] if x.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t._data.size}")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if x.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    _check_float(input, "batch_norm")
    _check_same_dtype(input, (weight, bias, running_mean, running_var))
    _not_differentiable("native_batch_norm", running_mean=running_mean, running_var=running_var)
    return channels


def _update_running_stats(running_mean, running_var, mean, var, momentum, count):
    """Move the running statistics towards the batch's mean and unbiased variance by
    ``momentum``, in place (``count`` values per channel)."""
    # PyTorch writes the running statistics without counting a new version
    rm, rv = running_mean._data, running_var._data
    rm *= 1 - momentum
    rm += momentum * mean.reshape(rm.shape)
    rv *= 1 - momentum
    rv += (momentum * count / max(count - 1, 1)) * var.reshape(rv.shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    """Normalise each channel (dim 1) of ``input`` over the batch and the spatial dims.

    In training mode the batch's mean and biased variance normalise, and ``running_mean`` /
    ``running_var`` (when given) move towards the batch mean and the *unbiased* variance by
    ``momentum``, in place. In evaluation mode the running statistics normalise.

    >>> import srcgrad as torch
    >>> batch_norm(torch.tensor([[1.0], [3.0]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    x = input._data
    channels = _check_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, channels) + (1,) * (x.ndim - 2)
    count = x.size // channels if channels else 0
    if training:
        xhat, invstd, mean, var = _standardize(x, axes, max(count, 1), eps)
        out = _affine(xhat, weight, bias, shape)
        if running_mean is not None and count > 0:
            _update_running_stats(running_mean, running_var, mean, var, momentum, count)
        # as PyTorch: the batch mean and invstd per channel (result1, result2), and the running statistics
        # even though the backward does not use them; xhat is ours, to spare recomputing it
        saved = (input, weight, running_mean, running_var, mean.reshape(channels), invstd.reshape(channels), xhat)
    else:
        invstd = 1 / np.sqrt(running_var._data.reshape(shape) + eps)
        scale = invstd if weight is None else invstd * weight._data.reshape(shape)
        out = x * scale
        out -= running_mean._data.reshape(shape) * scale
        if bias is not None:
            out += bias._data.reshape(shape)
        empty = _no_stats(x.dtype)
        saved = (input, weight, running_mean, running_var, empty, empty, None)
    t = record(out, NativeBatchNormBackward0, (input, weight, bias), saved=saved)
    if t.grad_fn is not None:
        node = t.grad_fn
        node.training, node.axes, node.shape, node.count, node.eps = training, axes, shape, max(count, 1), eps
    return t


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """Normalise each (sample, channel) slice of ``input`` (N, C, *) over its spatial dims.

    Recorded as PyTorch records it: a batch_norm of the input viewed as (1, N*C, *), so the
    result's grad_fn is ``ViewBackward0``. The running statistics, when given, are updated
    with the average over the samples.
    """
    shape = tuple(input.shape)
    if use_input_stats and _numel(shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(shape)})")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n = shape[0]

    def repeated(t):
        if t is None:
            return None
        return t.reshape(1, -1).expand(n, t._data.size).reshape(-1)

    rm = wrap(np.tile(running_mean._data, n)) if running_mean is not None else None
    rv = wrap(np.tile(running_var._data, n)) if running_var is not None else None
    x = input.reshape((1, -1) + shape[2:])
    out = batch_norm(x, rm, rv, repeated(weight), repeated(bias), use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        running_mean._data[...] = rm._data.reshape(n, -1).mean(0)
        running_var._data[...] = rv._data.reshape(n, -1).mean(0)
        bump_version(running_mean)
        bump_version(running_var)
    return out.view(shape)


# --------------------------------------------------------------------------------- layer_norm


class NativeLayerNormBackward0(Node):
    """Gradients of layer_norm for (input, weight, bias)."""

    __slots__ = ("axes", "lead", "count", "eps", "normalized_shape")

    def apply(self, g):
        x, w, _, _, invstd, xhat = self.saved()
        axes, lead, n = self.axes, self.lead, self.count
        if dual.is_tensor(x):
            xhat, invstd = _standardize(x, axes, n, self.eps)[:2]
        gx = gw = gb = None
        if self.needs_input_grad(0):
            gx = _standardize_grad(g if w is None else g * w, xhat, invstd, axes, n)
        if self.needs_input_grad(1):
            gw = dual.sum(g * xhat, lead) if lead else g * xhat
        if self.needs_input_grad(2):
            gb = dual.sum(g, lead) if lead else g
        return gx, gw, gb


def _shape_arg(normalized_shape):
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    for i, s in enumerate(normalized_shape):
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, but "
                            f"found element of type {type(s).__name__} at pos {i}")
    return tuple(int(s) for s in normalized_shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise ``input`` over its last ``len(normalized_shape)`` dims, then scale by ``weight``
    and shift by ``bias`` (both of shape ``normalized_shape``).

    >>> import srcgrad as torch
    >>> layer_norm(torch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    ns = _shape_arg(normalized_shape)
    x = input._data
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.shape != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t._data.shape)} and normalized_shape = {list(ns)}")
    if x.ndim < k or x.shape[x.ndim - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(x.shape)}")
    _check_same_dtype(input, (weight, bias))
    _check_float(input, "LayerNormKernelImpl")
    axes = tuple(range(x.ndim - k, x.ndim))
    count = max(_numel(ns), 1)
    xhat, invstd, mean, _ = _standardize(x, axes, count, eps)
    # bias, mean and invstd are saved as PyTorch saves them (result1, result2); xhat is ours
    t = record(_affine(xhat, weight, bias, ns), NativeLayerNormBackward0, (input, weight, bias),
               saved=(input, weight, bias, mean, invstd, xhat))
    if t.grad_fn is not None:
        node = t.grad_fn
        node.axes, node.lead, node.count, node.eps = axes, tuple(range(x.ndim - k)), count, eps
        node.normalized_shape = ns
    return t


# --------------------------------------------------------------------------------- group_norm


class NativeGroupNormBackward0(Node):
    """Gradients of group_norm for (input, weight, bias)."""

    __slots__ = ("groups", "caxes", "cshape", "count", "eps")

    def apply(self, g):
        x, w, _, invstd, xhat = self.saved()
        groups, caxes, cshape, n = self.groups, self.caxes, self.cshape, self.count
        xshape = dual.shape(x)
        if dual.is_tensor(x):
            xhat, invstd = _standardize(dual.reshape(x, groups), (2,), n, self.eps)[:2]
        else:
            invstd = invstd[:, :, None]
        gx = gw = gb = None
        if self.needs_input_grad(0):
            gh = dual.reshape(g if w is None else g * dual.reshape(w, cshape), groups)
            gx = dual.reshape(_standardize_grad(gh, xhat, invstd, (2,), n), xshape)
        channels = (cshape[1],)
        if self.needs_input_grad(1):
            gw = dual.reshape(dual.sum(g * dual.reshape(xhat, xshape), caxes, keepdim=True), channels)
        if self.needs_input_grad(2):
            gb = dual.reshape(dual.sum(g, caxes, keepdim=True), channels)
        return gx, gw, gb


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise ``input`` (N, C, *) over each group of ``C // num_groups`` channels and the
    spatial dims, then scale and shift per channel."""
    x = input._data
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    n, c = x.shape[:2]
    grouped = [n * c // num_groups, num_groups] + list(x.shape[2:])
    _verify_batch_size(grouped, grouped)
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(x.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t._data.shape)} and input of shape {list(x.shape)}")
    _check_same_dtype(input, (weight, bias))
    _check_float(input, "GroupNormKernelImpl")
    per_group = _numel(x.shape[1:]) // num_groups
    groups = (n, num_groups, per_group)
    count = max(per_group, 1)
    xhat, invstd, mean, _ = _standardize(x.reshape(groups), (2,), count, eps)
    cshape = (1, c) + (1,) * (x.ndim - 2)
    # mean and invstd per (sample, group) are saved as PyTorch saves them (result1, result2); xhat is ours
    t = record(_affine(xhat.reshape(x.shape), weight, bias, cshape), NativeGroupNormBackward0,
               (input, weight, bias), saved=(input, weight, mean[:, :, 0], invstd[:, :, 0], xhat))
    if t.grad_fn is not None:
        node = t.grad_fn
        node.groups, node.caxes, node.cshape = groups, (0,) + tuple(range(2, x.ndim)), cshape
        node.count, node.eps = count, eps
    return t


# ---------------------------------------------------------------------------------- embedding


class EmbeddingBackward0(Node):
    """The gradient of the weight: each looked-up row receives the sum of its rows of ``g``."""

    __slots__ = ("num_weights", "scale", "padding_idx", "scale_grad_by_freq")

    def apply(self, g):
        idx = self.saved(False)[0].reshape(-1)      # the indices, saved as PyTorch saves them
        rows = dual.reshape(g, (idx.size, dual.shape(g)[-1]))
        if self.scale is not None:       # padding rows (0) and scale_grad_by_freq (1 / count)
            rows = rows * dual.constant(self.scale, rows)
        shape = (self.num_weights, dual.shape(rows)[1])
        if dual.is_tensor(rows):
            return dual.embed(shape, idx, rows, accumulate=True)
        return _sum_rows_by_index(rows, idx, shape)


def _sum_rows_by_index(rows, idx, shape):
    """zeros(shape) with rows[i] added into row idx[i]: one sort and one ``add.reduceat``, several
    times faster than ``np.add.at`` on repeated indices."""
    out = np.zeros(shape, dtype=rows.dtype)
    if idx.size == 0:
        return out
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    out[ordered[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out


def _renorm_rows(w, idx, max_norm, norm_type):
    """Scale the looked-up rows of ``w`` whose ``norm_type``-norm exceeds ``max_norm`` down to it."""
    rows = np.unique(idx)
    sel = w[rows]
    a = np.abs(sel)
    if norm_type == math.inf:
        norms = a.max(1) if sel.shape[1] else np.zeros(len(rows), dtype=w.dtype)
    elif norm_type == 2:
        norms = np.sqrt((a * a).sum(1))
    else:
        norms = (a ** norm_type).sum(1) ** (1.0 / norm_type)
    big = norms > max_norm
    if big.any():
        w[rows[big]] = sel[big] * (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
        return True
    return False


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` (num_embeddings, dim) picked by the integer tensor ``input``.

    ``padding_idx``'s row gets no gradient; ``max_norm`` first rescales, in place, the looked-up
    rows whose norm exceeds it; ``scale_grad_by_freq`` divides each row's gradient by how often
    its index occurs in ``input``. Sparse gradients are not supported.

    >>> import srcgrad as torch
    >>> embedding(torch.tensor([2, 0]), torch.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    tensor([[4., 5.],
            [0., 1.]])
    """
    w = weight._data
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= w.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -w.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += w.shape[0]
    if sparse:
        raise NotImplementedError("srcgrad: embedding(sparse=True) is not supported (srcgrad has no sparse "
                                  "tensors); use sparse=False for a dense gradient")
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        name = "CPUBoolType" if idx.dtype == np.bool_ else legacy_type_name(idx)
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {name} instead (while checking arguments for embedding)")
    if idx.size:
        if w.shape[0] == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if idx.min() < 0 or idx.max() >= w.shape[0]:
            raise IndexError("index out of range in self")
    if max_norm is not None and idx.size and _renorm_rows(w, idx, max_norm, norm_type):
        bump_version(weight)
    t = record(np.take(w, idx, axis=0), EmbeddingBackward0, (weight,), saved=(input,))
    if t.grad_fn is not None:
        node = t.grad_fn
        node.num_weights, node.scale = w.shape[0], None
        node.padding_idx, node.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        flat = idx.reshape(-1)
        scale = None
        if scale_grad_by_freq:
            scale = 1.0 / np.bincount(flat, minlength=w.shape[0])[flat]
        if padding_idx is not None and (flat == padding_idx).any():
            scale = (flat != padding_idx) * (1.0 if scale is None else scale)
        if scale is not None:
            node.scale = scale.astype(w.dtype)[:, None]
    return t


# --------------------------------------------------------------------------------------- gelu

_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)        # gelu's tanh approximation: tanh(K (x + C x³))
_TANH_C = 0.044715


def _normal_cdf(x):
    """Φ(x), the standard normal CDF; on a Tensor through ``erf`` so that it is recorded."""
    if dual.is_tensor(x):
        return (x * _SQRT1_2).erf() * 0.5 + 0.5
    return 0.5 + 0.5 * _erf(x * _SQRT1_2)


def _tanh_gate(x):
    """0.5 (1 + tanh(K (x + C x³))); tanh, not the equal sigmoid(2u), so that the gate is exactly
    0 where tanh rounds to -1, as in PyTorch."""
    u = x * (1 + _TANH_C * (x * x)) * _TANH_K
    return (u.tanh() if dual.is_tensor(u) else np.tanh(u)) * 0.5 + 0.5


class GeluBackward0(Node):
    """d gelu / dx: Φ(x) + x φ(x) (exact), or the derivative of x * gate(x) (tanh)."""

    __slots__ = ("approximate",)

    def apply(self, g):
        x, gate = self.saved()
        if dual.is_tensor(x):           # recompute the gate from x so that it is differentiated too
            gate = _tanh_gate(x) if self.approximate == "tanh" else _normal_cdf(x)
        if self.approximate == "tanh":
            # gate = (1 + tanh u) / 2, u = K (x + C x³): gate' = (1 - tanh² u) / 2 u' = 2 gate (1 - gate) u'
            dgate = gate * (1 - gate) * ((1 + (3 * _TANH_C) * (x * x)) * (2 * _TANH_K))
        else:
            dgate = dual.exp(x * x * -0.5) * _INV_SQRT_2PI      # φ(x)
        return g * (gate + x * dgate)


def gelu(input, approximate="none"):
    """x * Φ(x), Φ the standard normal CDF; ``approximate='tanh'`` uses
    0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))).

    >>> import srcgrad as torch
    >>> gelu(torch.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.1587,  0.0000,  0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check_float(input, "GeluKernelImpl")
    x = input._data
    xc = x.astype(np.float32) if x.dtype == np.float16 else x   # numpy's half arithmetic is slow
    with np.errstate(over="ignore", invalid="ignore"):     # inf gives inf or nan, as in PyTorch
        gate = _tanh_gate(xc) if approximate == "tanh" else _normal_cdf(xc)
        out = (xc * gate).astype(x.dtype, copy=False)
    t = record(out, GeluBackward0, (input,), saved=(input, gate.astype(x.dtype, copy=False)))
    if t.grad_fn is not None:
        t.grad_fn.approximate = approximate
    return t


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_input, ...: see graph.define_saved; pack_order: the inputs by name, then the outputs;
# arrays: the statistics kept as arrays, which PyTorch saves as tensors)

define_saved(NativeBatchNormBackward0, pack_order=(0, 2, 3, 1, 4, 5, 6), arrays=(4, 5),
             input=0, weight=1, running_mean=2, running_var=3, result1=4, result2=5,
             training=lambda n: bool(n.training), eps=lambda n: n.eps)
define_saved(NativeLayerNormBackward0, pack_order=(2, 0, 1, 3, 4, 5), arrays=(3, 4),
             input=0, weight=1, bias=2, result1=3, result2=4,
             normalized_shape=lambda n: n.normalized_shape)
define_saved(NativeGroupNormBackward0, arrays=(2, 3), input=0, weight=1, result1=2, result2=3,
             N=lambda n: n.groups[0], C=lambda n: n.cshape[1], group=lambda n: n.groups[1],
             HxW=lambda n: n.groups[1] * n.groups[2] // n.cshape[1] if n.cshape[1] else 0,
             eps=lambda n: n.eps)
define_saved(EmbeddingBackward0, indices=0,
             padding_idx=lambda n: c_int(-1 if n.padding_idx is None else n.padding_idx),
             scale_grad_by_freq=lambda n: bool(n.scale_grad_by_freq), sparse=lambda n: False,
             weight_sym_argsize_0=lambda n: n.num_weights)
define_saved(GeluBackward0, self=0, approximate=lambda n: n.approximate)
