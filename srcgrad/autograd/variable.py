"""The deprecated ``Variable`` wrapper: ``Variable(t, requires_grad=True)`` is just a tensor now.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.autograd import Variable
    >>> Variable(torch.FloatTensor([3]), requires_grad=True)
    tensor([3.], requires_grad=True)
"""
from ..eager.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Returns a tensor sharing ``data``'s values, with ``requires_grad`` as given."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        t.requires_grad_(requires_grad)
        return t
