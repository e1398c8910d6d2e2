"""``Identity``, ``Linear`` and ``Bilinear``, initialised as PyTorch does: weights and biases
from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with a = sqrt(5) for the weight).

Example:
    >>> import srcgrad as torch
    >>> layer = torch.nn.Linear(20, 30)
    >>> layer(torch.randn(128, 20)).size()
    torch.Size([128, 30])
"""
import math

from ..eager import creation
from . import functional as F
from . import init
from .module import Module, factory_kwargs
from .parameter import Parameter


class Identity(Module):
    """Returns its input (arguments to the constructor are accepted and ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b, W of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        kw = factory_kwargs(dtype, device)
        self.weight = Parameter(creation.empty(out_features, in_features, **kw))
        self.register_parameter("bias", Parameter(creation.empty(out_features, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y_k = x1ᵀ W_k x2 + b_k, W of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        kw = factory_kwargs(dtype, device)
        self.weight = Parameter(creation.empty(out_features, in1_features, in2_features, **kw))
        self.register_parameter("bias", Parameter(creation.empty(out_features, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["Identity", "Linear", "Bilinear"]
