"""``nn.Parameter``: a tensor that a ``Module`` registers as one of its parameters.

Example:
    >>> import srcgrad as torch
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> w
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
"""
from ..eager.tensor import Tensor, init_leaf
from ..eager.versions import version_counter


class Parameter(Tensor):
    """A leaf tensor that requires grad (unless told otherwise) and that, assigned to an
    attribute of a ``Module``, becomes one of its ``parameters()``. It shares ``data``'s memory.

    >>> import srcgrad as torch
    >>> p = Parameter(torch.ones(3))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        p = object.__new__(cls)
        init_leaf(p, data._data)
        p._vc = version_counter(data)
        p._rg = bool(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass        # __new__ made it

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor.__deepcopy__(self, {}), self._rg)
        if self._grad is not None:
            p._grad = self._grad.clone()
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__deepcopy__(self.detach(), {}), self._rg))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """``nn.Buffer(tensor, persistent=True)``: assigned to a ``Module`` attribute, the tensor
    becomes a buffer (saved in ``state_dict`` unless not ``persistent``, converted by ``.to``)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        b = object.__new__(cls)
        init_leaf(b, data._data)
        b._vc = version_counter(data)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


__all__ = ["Parameter", "Buffer"]
