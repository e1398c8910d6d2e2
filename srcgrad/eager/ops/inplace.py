"""In-place ops (``add_``, ``mul_``, ``zero_``, ...): the result of the out-of-place op is written
back into the tensor, the version counter goes up, and the tensor takes the new grad_fn.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x * 1
    >>> y.add_(1).grad_fn
    <AddBackward0 object at 0x...>
"""
import numpy as np

from .. import grad_mode
from ..graph import Node
from ..tensor import Tensor
from ..versions import bump_version, check_inplace, check_view_graph


def _write_back(x, r):
    if r._data.dtype != x._data.dtype and not np.can_cast(r._data.dtype, x._data.dtype, "same_kind"):
        raise RuntimeError(f"result type {type_word(r)} can't be cast to the desired output type {type_word(x)}")
    try:
        np.copyto(x._data, r._data, casting="unsafe")
    except ValueError:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(x._data.shape, r._data.shape))}") from None
    bump_version(x)


def type_word(t):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool", "int32": "Int",
            "float16": "Half", "uint8": "Byte", "int8": "Char", "int16": "Short"}[t.dtype.name]


def inplace(op, ufunc=None):
    """Make ``op_`` from the out-of-place ``op``; with a numpy ``ufunc``, an update that records
    nothing (``w -= lr * w.grad`` under no_grad) writes straight into the tensor's memory."""
    def op_(x, *args, **kwargs):
        check_inplace(x)
        if ufunc is not None and len(args) == 1 and not kwargs and not _records(x, args[0]):
            other = args[0]
            od = other._data if isinstance(other, Tensor) else other
            if np.result_type(x._data, od) == x._data.dtype or isinstance(od, (int, float)):
                try:
                    ufunc(x._data, od, out=x._data)
                except ValueError:
                    pass            # shapes that do not broadcast: the general path words the error
                else:
                    bump_version(x)
                    return x
        return assign(x, op(x, *args, **kwargs))
    op_.__name__ = op.__name__ + "_"
    op_.__doc__ = f"In-place ``{op.__name__}``; returns the tensor itself."
    return op_


def assign(x, r):
    """Write ``r``, the result of an op on ``x``, into ``x``, which takes over r's history: the
    second half of every ``x.op_()`` (the caller checked ``check_inplace(x)`` before the op)."""
    _write_back(x, r)
    if r.grad_fn is not None:
        check_view_graph(x)
        x.grad_fn, x._rg, x._output_nr = r.grad_fn, True, 0
    return x


def _records(x, other):
    return grad_mode.state.enabled and (x._rg or (isinstance(other, Tensor) and other._rg))


class FillBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return g * 0.0


def fill_(x, value):
    check_inplace(x)
    x._data[...] = value._data if isinstance(value, Tensor) else value
    bump_version(x)
    if x.grad_fn is not None and grad_mode.state.enabled:
        check_view_graph(x)
        x.grad_fn, x._output_nr = FillBackward0((x,)), 0
    return x


def zero_(x):
    """Set every element to 0 in place (``w.grad.zero_()``)."""
    return fill_(x, 0)


def copy_(x, src, non_blocking=False):
    from .shape import expand
    check_inplace(x)
    r = expand(src.to(x.dtype), x.shape) if isinstance(src, Tensor) else None
    x._data[...] = r._data if r is not None else src
    bump_version(x)
    if r is not None and r._rg and grad_mode.state.enabled:
        check_view_graph(x)
        x.grad_fn, x._rg, x._output_nr = CopyBackwards((r,)), True, 0
    return x


class CopyBackwards(Node):
    __slots__ = ()

    def apply(self, g):
        return g
