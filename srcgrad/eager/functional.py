"""``srcgrad.nn.functional``: losses and activations with PyTorch's grad_fn names.

Each loss is one node whose backward is the textbook formula, written with Tensor ops so
that it can itself be differentiated.

Example:
    >>> import srcgrad as torch
    >>> z = torch.zeros(3, requires_grad=True)
    >>> torch.nn.functional.binary_cross_entropy_with_logits(z, torch.ones(3))
    tensor(0.6931, grad_fn=<BinaryCrossEntropyWithLogitsBackward0>)
"""
import numpy as np

from . import dtypes
from .graph import Node, c_int, define_saved
from .ops import dual, linalg, pointwise
from .ops._core import record, zero_derivative
from .tensor import normalise_dim, wrap

relu = pointwise.relu
sigmoid = pointwise.sigmoid
tanh = pointwise.tanh


def reduction_arg(reduction, size_average=None, reduce=None):
    """A loss's ``reduction``, checked, or the one its legacy ``size_average``/``reduce`` say."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    """The elementwise ``loss`` reduced as ``reduction`` ("mean", "sum" or "none") says."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_same_size(input, target, name):
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")


def _not_differentiable(t, fn, arg):
    from . import grad_mode
    if t is not None and t._rg and grad_mode.state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This input "
                           "cannot have requires_grad True.")


def _softplus_neg(x):
    """log(1 + exp(-x)) without overflow."""
    return np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))


class BinaryCrossEntropyWithLogitsBackward0(Node):
    __slots__ = ("reduction", "has_weight", "has_pos_weight")

    def apply(self, g):
        x, t, w, pw = self.saved()
        g = _expand_reduced(g, x, self.reduction)
        gx = gt = None
        if self.needs_input_grad(0):
            if pw is not None:
                lw = (pw - 1) * t + 1
                gx = g * (lw * dual.sigmoid(x) - pw * t)
            else:
                gx = g * (dual.sigmoid(x) - t)
            if w is not None:
                gx = gx * w
        if self.needs_input_grad(1):
            if pw is None:
                gt = g * -x
            else:
                softplus_neg = dual.clamp_min(-x, 0) + dual.log1p(dual.exp(-dual.abs(x)))   # log(1+exp(-x))
                gt = g * ((pw - 1) * softplus_neg - x)
            if w is not None:
                gt = gt * w
        return gx, gt


def _expand_reduced(g, x, reduction):
    shape = dual.shape(x)
    if reduction == "mean":
        return dual.expand(g, shape) / int(np.prod(shape))
    if reduction == "sum":
        return dual.expand(g, shape)
    return g


def _loss_out(loss, reduction, dtype):
    if reduction == "mean":
        return np.asarray(loss.mean(), dtype=dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype=dtype)
    return loss.astype(dtype, copy=False)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid and binary cross-entropy in one numerically stable op.

    >>> import srcgrad as torch
    >>> binary_cross_entropy_with_logits(torch.zeros(2), torch.ones(2))
    tensor(0.6931)
    """
    reduction = reduction_arg(reduction, size_average, reduce)
    _check_same_size(input, target, "binary_cross_entropy_with_logits")
    _not_differentiable(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    _not_differentiable(weight, "binary_cross_entropy_with_logits", "weight")
    x, t = input._data, target._data.astype(input._data.dtype, copy=False)
    sp = _softplus_neg(x)
    if pos_weight is not None:
        lw = 1 + (pos_weight._data - 1) * t
        loss = (1 - t) * x + lw * sp
    else:
        loss = (1 - t) * x + sp
    if weight is not None:
        loss = loss * weight._data
    out = _loss_out(loss, reduction, x.dtype)
    r = record(out, BinaryCrossEntropyWithLogitsBackward0, (input, target),
               saved=(input, target, weight, pos_weight))
    if r.grad_fn is not None:
        r.grad_fn.reduction = reduction
    return r


class BinaryCrossEntropyBackward0(Node):
    __slots__ = ("reduction",)

    def apply(self, g):
        x, t, w = self.saved()
        g = _expand_reduced(g, x, self.reduction)
        gx = gt = None
        if self.needs_input_grad(0):
            gx = g * (x - t) / dual.clamp_min((1 - x) * x, 1e-12)
            if w is not None:
                gx = gx * w
        if self.needs_input_grad(1):
            gt = g * (dual.log(1 - x) - dual.log(x))
            if w is not None:
                gt = gt * w
        return gx, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities ``input`` in [0, 1]; logs are clamped at -100 as in PyTorch."""
    reduction = reduction_arg(reduction, size_average, reduce)
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    x, t = input._data, target._data
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight._data
    r = record(_loss_out(loss, reduction, x.dtype), BinaryCrossEntropyBackward0, (input, target),
               saved=(input, target, weight))
    if r.grad_fn is not None:
        r.grad_fn.reduction = reduction
    return r


class MseLossBackward0(Node):
    __slots__ = ("reduction",)

    def apply(self, g):
        x, t = self.saved()
        diff = x - t
        gd = _expand_reduced(g, diff, self.reduction) * 2 * diff
        return (dual.sum_to(gd, dual.shape(x)) if self.needs_input_grad(0) else None,
                dual.sum_to(-gd, dual.shape(t)) if self.needs_input_grad(1) else None)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean squared error."""
    import warnings
    reduction = reduction_arg(reduction, size_average, reduce)
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=2)
    d = input._data - target._data
    r = record(_loss_out(d * d, reduction, np.result_type(input._data, target._data)), MseLossBackward0,
               (input, target), saved=(input, target))
    if r.grad_fn is not None:
        r.grad_fn.reduction = reduction
    return r


class LogSoftmaxBackward0(Node):
    __slots__ = ("dim", "dim_arg")

    def apply(self, g):
        (y,) = self.saved()
        return g - dual.exp(y) * dual.sum(g, self.dim, keepdim=True)


class SoftmaxBackward0(Node):
    __slots__ = ("dim", "dim_arg")

    def apply(self, g):
        (y,) = self.saved()
        return y * (g - dual.sum(g * y, self.dim, keepdim=True))


def _softmax_dim(x, dim):
    """The dim as given (PyTorch shows it so in ``_saved_dim``; None picks one), and normalised."""
    if dim is None:
        import warnings
        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include "
                      "dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if x._data.ndim in (0, 1, 3) else 1
    return dim, normalise_dim(dim, x._data.ndim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) computed stably along ``dim``."""
    x = input.to(dtype) if dtype is not None else input
    dim, dm = _softmax_dim(x, dim)
    d = x._data if x._data.dtype.kind == "f" else x._data.astype(dtypes.get_default_dtype().np)
    s = d - d.max(axis=dm, keepdims=True) if d.ndim else d - d
    out = s - np.log(np.exp(s).sum(axis=dm, keepdims=True))
    from .ops._core import OUT
    r = record(out.astype(d.dtype, copy=False), LogSoftmaxBackward0, (x,), saved=(OUT,))
    if r.grad_fn is not None:
        r.grad_fn.dim, r.grad_fn.dim_arg = dm, dim
    return r


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    x = input.to(dtype) if dtype is not None else input
    dim, dm = _softmax_dim(x, dim)
    d = x._data if x._data.dtype.kind == "f" else x._data.astype(dtypes.get_default_dtype().np)
    e = np.exp(d - (d.max(axis=dm, keepdims=True) if d.ndim else d))
    out = e / e.sum(axis=dm, keepdims=True)
    from .ops._core import OUT
    r = record(out.astype(d.dtype, copy=False), SoftmaxBackward0, (x,), saved=(OUT,))
    if r.grad_fn is not None:
        r.grad_fn.dim, r.grad_fn.dim_arg = dm, dim
    return r


class NllLossBackward0(Node):
    __slots__ = ("x_meta", "idx", "coef", "reduction", "ignore_index")

    def apply(self, g):
        # d loss / d x is -weight (over the total weight for "mean") at each picked entry, 0 elsewhere
        shape, dtype = self.x_meta
        coef = np.zeros(shape, dtype=dtype)
        coef[self.idx] = self.coef
        if self.reduction == "none" and len(shape) > 1:
            g = dual.unsqueeze(g, 1)
        x = self.saved()[0]
        return zero_derivative(g * dual.constant(coef, g), x)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C) at class indices ``target`` (N,)."""
    reduction = reduction_arg(reduction, size_average, reduce)
    _not_differentiable(weight, "nll_loss_forward", "weight")
    x = input._data
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    if x.ndim not in (1, 2):
        raise NotImplementedError("srcgrad: nll_loss supports input of shape (N, C) or (C,); reshape K-dim "
                                  "input to (N*d1*..., C) first")
    if x.ndim == 2 and x.shape[0] != t.shape[0]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0]}).")
    c = x.shape[-1]
    valid = None                         # None: every target counts (the common case, checked cheaply)
    if t.size and (t.min() < 0 or t.max() >= c or (0 <= ignore_index < c and (t == ignore_index).any())):
        valid = t != ignore_index
        t = np.where(valid, t, 0)
        bad = (t < 0) | (t >= c)
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    idx = (np.arange(x.shape[0]), t) if x.ndim == 2 else t
    picked = x[idx]
    if weight is None and valid is None:
        wt, total = None, float(t.size)
        losses = -picked
    else:
        wt = weight._data[t] if weight is not None else np.ones(t.shape, dtype=x.dtype)
        if valid is not None:
            wt = wt * valid
        total = float(wt.sum())
        losses = -picked * wt
    if reduction == "mean":
        out = np.asarray(losses.sum() / total if total else np.nan, dtype=x.dtype)
    elif reduction == "sum":
        out = np.asarray(losses.sum(), dtype=x.dtype)
    else:
        out = losses.astype(x.dtype, copy=False)
    # target, weight and total weight (0 unreduced: PyTorch does not sum it then) are saved as in
    # PyTorch, for _saved_target... and the hooks; the backward itself uses idx and coef below
    total_weight = np.asarray(total if reduction != "none" else 0.0, dtype=x.dtype)
    r = record(out, NllLossBackward0, (input,), saved=(input, target, weight, total_weight))
    if r.grad_fn is not None:
        node = r.grad_fn
        scale = (1.0 / total if total else 0.0) if reduction == "mean" else 1.0
        node.x_meta, node.idx, node.reduction, node.ignore_index = (x.shape, x.dtype), idx, reduction, ignore_index
        node.coef = -scale if wt is None else -scale * wt
    return r


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax then nll_loss, as PyTorch records it."""
    if label_smoothing:
        raise NotImplementedError("srcgrad: cross_entropy(label_smoothing=...) is not supported yet")
    if target.dtype.is_floating_point:
        # class probabilities instead of indices
        lsm = log_softmax(input, 1 if input.dim() > 1 else 0)
        return reduce_loss(-(lsm * target).sum(1 if input.dim() > 1 else 0), reduction)
    return nll_loss(log_softmax(input, 1 if input.dim() > 1 else 0), target, weight, None, ignore_index, None,
                    reduction_arg(reduction, size_average, reduce))


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: addmm for a 2-D input, as PyTorch records it."""
    if input.dim() == 2 and bias is not None:
        return linalg.addmm(bias, input, weight.t())
    if input.dim() == 1 and bias is not None:
        return linalg.addmm(bias, input.view(1, -1), weight.t()).view(-1)
    out = linalg.matmul(input, weight.t())
    return out + bias if bias is not None else out


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return pointwise.where(input > 0, input, input * negative_slope)


def softplus(input, beta=1.0, threshold=20.0):
    return pointwise.where(input * beta > threshold, input, (1 + (input * beta).exp()).log() / beta)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return reduce_loss((input - target).abs(), reduction_arg(reduction, size_average, reduce))


def one_hot(tensor, num_classes=-1):
    t = tensor._data
    n = int(t.max()) + 1 if num_classes == -1 else num_classes
    return wrap(np.eye(n, dtype=np.int64)[t])


def dropout(input, p=0.5, training=True, inplace=False):
    if not training or p == 0:
        return input
    from .creation import numpy_rng
    mask = (numpy_rng().random(input.shape) >= p).astype(input._data.dtype) / (1 - p)
    return input * wrap(mask)


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_self, ...: see graph.define_saved; pack_order: the inputs by name, then the outputs)

_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}     # at::Reduction, as _saved_reduction shows it


def _reduction(n):
    return _REDUCTION_ENUM[n.reduction]


define_saved(SoftmaxBackward0, dim=lambda n: c_int(n.dim_arg), result=0)
define_saved(LogSoftmaxBackward0, dim=lambda n: c_int(n.dim_arg), result=0)
define_saved(MseLossBackward0, self=0, target=1, reduction=_reduction)
define_saved(BinaryCrossEntropyBackward0, self=0, target=1, weight=2, reduction=_reduction)
define_saved(BinaryCrossEntropyWithLogitsBackward0, pack_order=(3, 0, 1, 2), self=0, target=1, weight=2,
             pos_weight=3, reduction=_reduction)
define_saved(NllLossBackward0, arrays=(3,), self=0, target=1, weight=2, total_weight=3, reduction=_reduction,
             ignore_index=lambda n: c_int(n.ignore_index))
