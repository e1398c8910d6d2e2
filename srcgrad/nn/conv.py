"""``Conv1d``, ``Conv2d``, ``ConvTranspose1d`` and ``ConvTranspose2d``, initialised as PyTorch
does (kaiming_uniform_ with a = sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in computed from
the weight: in_channels / groups × kernel size for a convolution, out_channels / groups × kernel
size for a transposed one, whose weight is (in_channels, out_channels / groups, kernel...)).

Example:
    >>> import srcgrad as torch
    >>> torch.nn.Conv2d(1, 32, 3)
    Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))
"""
import math

from ..eager import creation
from . import functional as F
from . import init
from .module import Module, factory_kwargs
from .parameter import Parameter


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                    padding_mode, device, dtype)

    def _setup(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
               groups, bias, padding_mode, device, dtype):
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, self._n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode != "zeros":
            if padding_mode not in ("reflect", "replicate", "circular"):
                raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], "
                                 f"but got padding_mode='{padding_mode}'")
            if padding_mode == "circular":
                raise NotImplementedError("srcgrad: padding_mode='circular' is not supported yet")
        n = self._n
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation, self.groups, self.padding_mode = _tuple(dilation, n), groups, padding_mode
        self.transposed, self.output_padding = transposed, _tuple(output_padding, n)
        kw = factory_kwargs(dtype, device)
        # a transposed convolution's weight is that of the convolution it is the gradient of
        channels = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(creation.empty(*channels, *self.kernel_size, **kw))
        self.register_parameter("bias", Parameter(creation.empty(out_channels, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias):
        conv = F.conv1d if self._n == 1 else F.conv2d
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._pads(), mode=self.padding_mode), weight, bias, self.stride, 0,
                        self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def _pads(self):
        """F.pad's list (last dimension first) for a padding_mode other than zeros: 'same' puts
        the odd element of the total dilation·(k-1) on the right, as PyTorch does."""
        return [p for pair in reversed(self._padding_tuple()) for p in pair]

    def _padding_tuple(self):
        if self.padding == "valid":
            return [(0, 0)] * self._n
        if self.padding == "same":
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            return [(t // 2, t - t // 2) for t in totals]
        return [(p, p) for p in self.padding]

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) inputs (or (C_in, L))."""
    _n = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) inputs (or (C_in, H, W))."""
    _n = 2


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution: the gradient of a convolution with respect to its input, as a
    layer; the weight is (in_channels, out_channels / groups, kernel...)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        Module.__init__(self)
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding, groups,
                    bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (spatial dims, or all dims)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{lead + n} elements (got {len(output_size)})")
        spatial = input.shape[input.dim() - n:]
        smallest = [(spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                    + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(n)]
        largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
        if any(not lo <= o <= hi for o, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                             f"to {largest} (for an input of {spatial})")
        return tuple(o - m for o, m in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        conv = F.conv_transpose1d if self._n == 1 else F.conv_transpose2d
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) inputs (or (C_in, L)).

    >>> import srcgrad as torch
    >>> torch.nn.ConvTranspose1d(4, 2, 3, stride=2)(torch.ones(1, 4, 5)).shape
    torch.Size([1, 2, 11])
    """
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) inputs (or (C_in, H, W)); ``forward``'s
    ``output_size`` picks the output size among those a stride allows.

    >>> import srcgrad as torch
    >>> up = torch.nn.ConvTranspose2d(16, 33, 3, stride=2, padding=1)
    >>> up
    ConvTranspose2d(16, 33, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
    >>> up(torch.ones(1, 16, 6, 6), output_size=[12, 12]).shape
    torch.Size([1, 33, 12, 12])
    """
    _n = 2


__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
