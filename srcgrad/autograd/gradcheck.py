"""``srcgrad.autograd.gradcheck``: the module behind ``torch.autograd.gradcheck``.

As in PyTorch, ``srcgrad.autograd.gradcheck`` is the function and this module is reached by
import:

    >>> from srcgrad.autograd.gradcheck import gradcheck, gradgradcheck
    >>> import srcgrad as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> gradcheck(torch.sin, (x,))
    True
"""
import sys
import types

from ..eager.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class _CallableModule(types.ModuleType):
    """Importing this module makes Python set it as the package's ``gradcheck`` attribute, in
    place of the function (unless the package imported it first, as torch.autograd does): calling
    the module then still calls the function."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
