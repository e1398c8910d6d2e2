"""``srcgrad.nn.functional``: the functions behind the layers, for eager tensors — losses,
activations, linear maps, and (from eager/ops/conv.py, pooling.py, padding.py and norm.py)
convolutions, pooling, padding, normalisations and embeddings.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.nn.functional as F
    >>> F.mse_loss(torch.ones(2), torch.zeros(2))
    tensor(1.)
"""
from ..eager import functional as _ef
from ..eager.functional import (binary_cross_entropy, binary_cross_entropy_with_logits, log_softmax,  # noqa: F401
                                l1_loss, linear, mse_loss, nll_loss, one_hot, sigmoid, softmax, softplus, tanh)
from ..eager.ops import pointwise as _pw

# conv.py, pooling.py, padding.py and norm.py: loaded on first use (PEP 562), so that `import srcgrad`
# stays quick
_CONV = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d")
_POOLING = ("max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
            "adaptive_max_pool1d", "adaptive_max_pool2d")
_PADDING = ("pad",)
_NORM = ("batch_norm", "layer_norm", "embedding", "gelu", "group_norm", "instance_norm")


def __getattr__(name):
    if name in _CONV:
        from ..eager.ops import conv
        return getattr(conv, name)
    if name in _POOLING:
        from ..eager.ops import pooling
        return getattr(pooling, name)
    if name in _PADDING:
        from ..eager.ops import padding
        return getattr(padding, name)
    if name in _NORM:
        from ..eager.ops import norm
        return getattr(norm, name)
    if name == "grad":          # F.grad is torch.nn.grad, as in PyTorch
        from . import grad
        return grad
    raise AttributeError(f"module 'srcgrad.nn.functional' has no attribute '{name}'")


def _inplace(input, out, inplace):
    """``out`` written into ``input`` where ``inplace`` (PyTorch's ``relu_``...), else ``out``."""
    if not inplace:
        return out
    from ..eager.ops.inplace import assign
    from ..eager.versions import check_inplace
    check_inplace(input)
    return assign(input, out)


def relu(input, inplace=False):
    """max(0, x)."""
    return _inplace(input, _pw.relu(input), inplace)


def relu_(input):
    return relu(input, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]."""
    return _inplace(input, _pw.clamp(input, min_val, max_val), inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def silu(input, inplace=False):
    """x · sigmoid(x)."""
    return _inplace(input, input * _pw.sigmoid(input), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, negative_slope · x otherwise."""
    return _inplace(input, _ef.leaky_relu(input, negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha · (exp(x) - 1) otherwise."""
    return _inplace(input, _pw.where(input > 0, input, alpha * (input.exp() - 1)), inplace)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p in training, scaling the rest by 1/(1-p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if training and p == 1.0:
        return _inplace(input, input * 0.0, inplace)
    return _inplace(input, _ef.dropout(input, p, training), inplace and training and p > 0)


def bilinear(input1, input2, weight, bias=None):
    """y[..., k] = input1 · weight[k] · input2 (+ bias[k])."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    # (o, n, j) = x1 (n, i) @ W (o, i, j), then summed against x2 over j
    out = (x1.unsqueeze(0) @ weight * x2.unsqueeze(0)).sum(-1).t()
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, weight.shape[0])


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax then nll_loss; with ``label_smoothing`` ε the target is (1-ε)·one-hot + ε/C."""
    if not label_smoothing:
        return _ef.cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    reduction = _ef.reduction_arg(reduction, size_average, reduce)
    dim = 1 if input.dim() > 1 else 0
    n_classes = input.shape[dim]
    lsm = log_softmax(input, dim)
    if target.dtype.is_floating_point:
        smoothed = target * (1 - label_smoothing) + label_smoothing / n_classes
        w = 1.0 if weight is None else weight.reshape(-1, *([1] * (input.dim() - 2))) if dim == 1 else weight
        return _ef.reduce_loss(-(lsm * smoothed * w).sum(dim), reduction)
    nll = nll_loss(lsm, target, weight, None, ignore_index, None, reduction)
    w = 1.0 if weight is None else weight.reshape(-1, *([1] * (input.dim() - 2))) if dim == 1 else weight
    keep = (target != ignore_index).to(lsm.dtype)
    smooth = -(lsm * w).sum(dim) * keep
    if reduction == "none":
        smooth_loss = smooth
    elif reduction == "sum":
        smooth_loss = smooth.sum()
    else:
        # mean: over the kept targets' weights, as nll_loss divides
        denom = keep.sum() if weight is None else (weight[target.clamp(0, n_classes - 1)] * keep).sum()
        smooth_loss = smooth.sum() / denom
    return nll * (1 - label_smoothing) + smooth_loss * (label_smoothing / n_classes)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, _stacklevel, dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    norm = input.norm(p, dim, keepdim=True).clamp_min(eps)
    return input / norm.expand_as(input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return (x1 * x2).sum(dim) / ((x1 * x1).sum(dim) * (x2 * x2).sum(dim)).clamp_min(eps * eps).sqrt()


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d²/β where |d| < β, |d| - β/2 elsewhere."""
    d = (input - target).abs()
    loss = _pw.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta) if beta > 0 else d
    return _ef.reduce_loss(loss, _ef.reduction_arg(reduction, size_average, reduce))


def huber_loss(input, target, reduction="mean", delta=1.0):
    d = (input - target).abs()
    return _ef.reduce_loss(_pw.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)
