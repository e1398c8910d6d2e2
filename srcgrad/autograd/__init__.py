"""``srcgrad.autograd``: PyTorch's ``torch.autograd`` names for the eager mode.

Example:
    >>> import srcgrad as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> torch.autograd.grad((x ** 3).sum(), x)
    (tensor([12.]),)
"""
from ..eager.autograd_api import backward, grad
from ..eager.function import Function, InplaceFunction, once_differentiable
from ..eager.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from ..eager.graph import Node
from .variable import Variable
from . import forward_ad, function, functional, graph, profiler  # noqa: F401

__all__ = ["backward", "grad", "Function", "Variable", "gradcheck", "gradgradcheck", "GradcheckError",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "Node", "once_differentiable"]
