"""Pooling layers: ``MaxPool1d``/``MaxPool2d``, ``AvgPool1d``/``AvgPool2d`` (stride defaults
to the kernel size) and the adaptive ones, ``AdaptiveAvgPool1d``/``AdaptiveAvgPool2d`` and
``AdaptiveMaxPool1d``/``AdaptiveMaxPool2d`` (given the output size instead of a kernel).

Example:
    >>> import srcgrad as torch
    >>> torch.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> torch.nn.AdaptiveAvgPool2d((1, 1))
    AdaptiveAvgPool2d(output_size=(1, 1))
"""
from . import functional as F
from .module import Module


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = (kernel_size,) if not isinstance(kernel_size, tuple) else kernel_size
        stride = stride if stride is not None else kernel_size
        self.stride = (stride,) if not isinstance(stride, tuple) else stride
        self.padding = (padding,) if not isinstance(padding, tuple) else padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over each of ``output_size`` windows splitting L as evenly as they can.

    >>> import srcgrad as torch
    >>> torch.nn.AdaptiveAvgPool1d(5)(torch.randn(1, 64, 8)).shape
    torch.Size([1, 64, 5])
    """

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over each of the windows splitting H x W into ``output_size`` (an int, or a
    pair whose None entries keep that input size) as evenly as they can.

    >>> import srcgrad as torch
    >>> torch.nn.AdaptiveAvgPool2d((5, None))(torch.randn(1, 64, 8, 9)).shape
    torch.Size([1, 64, 5, 9])
    """

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The max over each of ``output_size`` windows splitting L as evenly as they can (with
    ``return_indices``, also where each max was).

    >>> import srcgrad as torch
    >>> torch.nn.AdaptiveMaxPool1d(5)(torch.randn(1, 64, 8)).shape
    torch.Size([1, 64, 5])
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """The max over each of the windows splitting H x W into ``output_size`` as evenly as they
    can (with ``return_indices``, also each max's flat index into its H x W plane).

    >>> import srcgrad as torch
    >>> torch.nn.AdaptiveMaxPool2d(7)(torch.randn(1, 64, 10, 9)).shape
    torch.Size([1, 64, 7, 7])
    """

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]
