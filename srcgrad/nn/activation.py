"""Activation layers: each calls its ``nn.functional`` twin and prints its options as PyTorch does.

Example:
    >>> import srcgrad as torch
    >>> torch.nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
"""
from . import functional as F
from .module import Module


class _Inplace(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """max(0, x)."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class ReLU6(_Inplace):
    """min(max(0, x), 6)."""

    def forward(self, input):
        return F.hardtanh(input, 0.0, 6.0, self.inplace)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class SiLU(_Inplace):
    """x · sigmoid(x)."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class GELU(Module):
    """x · Φ(x) (``approximate='tanh'``: the tanh approximation)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x for x ≥ 0, negative_slope · x below."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class _Dim(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_Dim):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_Dim):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


__all__ = ["ReLU", "ReLU6", "Tanh", "Sigmoid", "SiLU", "Softplus", "GELU", "LeakyReLU", "Softmax", "LogSoftmax"]
