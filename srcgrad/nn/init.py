"""``nn.init``: fill a tensor in place with PyTorch's initialisation schemes (no history is
recorded). Random numbers come from srcgrad's generator (``srcgrad.manual_seed``): the
distributions are PyTorch's, the draws are not.

Example:
    >>> import srcgrad as torch
    >>> w = torch.empty(3, 5)
    >>> torch.nn.init.xavier_uniform_(w, gain=torch.nn.init.calculate_gain("relu")) is w     # in place
    True
    >>> bound = torch.nn.init.calculate_gain("relu") * (6 / (3 + 5)) ** 0.5
    >>> bool(w.abs().max() <= bound)
    True
"""
import math

import numpy as np

from ..eager import grad_mode

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear layers and sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope²)) for leaky_relu (slope 0.01 by default), 3/4 for selu."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = input features × receptive field, fan_out = output features × receptive field
    (dimension 1 is the input, 0 the output, the rest the kernel)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """U(a, b)."""
    with grad_mode.no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """N(mean, std²)."""
    with grad_mode.no_grad():
        return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std²) redrawn where outside [a, b]."""
    from ..eager.creation import numpy_rng
    with grad_mode.no_grad():
        out = np.empty(tuple(tensor.shape))
        bad = np.ones(out.shape, dtype=bool)
        while bad.any():
            out[bad] = numpy_rng().normal(mean, std, int(bad.sum()))
            bad = (out < a) | (out > b)
        return _fill(tensor, out)


def constant_(tensor, val):
    with grad_mode.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with grad_mode.no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix (a 2-D tensor)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with grad_mode.no_grad():
        return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """The identity convolution: a 1 at each kernel's centre for matching channels."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    arr = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            arr[(g * out_per_group + d, d) + centre] = 1.0
    with grad_mode.no_grad():
        return _fill(tensor, arr)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain · sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std²) with std = gain · sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain · sqrt(3 / fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std²) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times ``gain``."""
    from ..eager.creation import numpy_rng
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = numpy_rng().standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))         # the sign convention that makes the draw uniform
    if rows < cols:
        q = q.T
    with grad_mode.no_grad():
        return _fill(tensor, gain * q.reshape(tensor.shape))


def _fill(tensor, values):
    from ..eager.tensor import wrap
    return tensor.copy_(wrap(np.asarray(values, dtype=tensor._data.dtype)))


__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_"]
