"""``srcgrad.nn.grad``: the gradients of a convolution as functions, as ``torch.nn.grad`` has
them — the gradient with respect to the input given the input's size, and with respect to the
weight given the weight's size. They are the kernels conv1d/conv2d's backward uses
(eager/ops/conv.py), so they are differentiable again (grad_fn ``ConvolutionBackwardBackward0``).

Example:
    >>> import srcgrad as torch
    >>> x = torch.randn(1, 1, 3, 3, requires_grad=True)
    >>> w = torch.randn(1, 1, 1, 2)
    >>> g = torch.randn(1, 1, 3, 2)
    >>> torch.nn.grad.conv2d_input(x.shape, w, g).shape
    torch.Size([1, 1, 3, 3])
"""
__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight"]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d(input, weight, ...)`` with respect to an input of size
    ``input_size`` (N, C_in, L), given ``grad_output`` (N, C_out, L_out).

    >>> import srcgrad as torch
    >>> conv1d_input((1, 2, 5), torch.ones(3, 2, 2), torch.ones(1, 3, 4)).shape
    torch.Size([1, 2, 5])
    """
    from ..eager.ops import conv      # (loaded on first use, as nn.functional loads it)
    return conv.conv_input_grad(input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d(input, weight, ...)`` with respect to a weight of size
    ``weight_size`` (C_out, C_in/groups, K), given ``grad_output`` (N, C_out, L_out).

    >>> import srcgrad as torch
    >>> conv1d_weight(torch.ones(1, 2, 5), (3, 2, 2), torch.ones(1, 3, 4)).shape
    torch.Size([3, 2, 2])
    """
    from ..eager.ops import conv
    return conv.conv_weight_grad(input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d(input, weight, ...)`` with respect to an input of size
    ``input_size`` (N, C_in, H, W), given ``grad_output`` (N, C_out, H_out, W_out). With a
    stride, ``input_size`` picks among the input sizes that give the same output size.

    >>> import srcgrad as torch
    >>> conv2d_input((1, 2, 6, 6), torch.ones(3, 2, 3, 3), torch.ones(1, 3, 2, 2), stride=2).shape
    torch.Size([1, 2, 6, 6])
    """
    from ..eager.ops import conv
    return conv.conv_input_grad(input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d(input, weight, ...)`` with respect to a weight of size
    ``weight_size`` (C_out, C_in/groups, KH, KW), given ``grad_output``.

    >>> import srcgrad as torch
    >>> conv2d_weight(torch.ones(1, 2, 4, 4), (3, 2, 3, 3), torch.ones(1, 3, 2, 2)).shape
    torch.Size([3, 2, 3, 3])
    """
    from ..eager.ops import conv
    return conv.conv_weight_grad(input, weight_size, grad_output, stride, padding, dilation, groups)
