"""What every eager op shares: turning operands into arrays, recording a node, broadcasting back.

Example (what ``exp`` does inside):
    >>> import srcgrad as torch
    >>> from srcgrad.eager.ops.pointwise import ExpBackward0
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> out = record(np.exp(x._data), ExpBackward0, (x,), saved=(OUT,))
    >>> out
    tensor([1.0000, 2.7183], grad_fn=<ExpBackward0>)
"""
import numpy as np

from .. import dtypes, grad_mode
from ..graph import OUT, Node  # noqa: F401  (OUT is re-exported for the ops)
from ..tensor import Tensor, wrap
from .dual import sum_to  # noqa: F401  (re-exported for the ops)

_state = grad_mode.state


def record(data, node_cls, inputs, saved=()):
    """Wrap ``data`` as the result of an op; when grad mode is on and an input requires grad,
    attach a ``node_cls`` node saving ``saved`` (``OUT`` saves the result itself)."""
    out = wrap(data)
    if _state.enabled:
        for t in inputs:
            if t is not None and t._rg:
                break
        else:
            return out
        out.grad_fn = node_cls(inputs, saved, out)
        out._rg = True
    return out


class ZeroDerivativeBackward0(Node):
    """Links a gradient to tensors it depends on with derivative zero (see ``zero_derivative``)."""

    __slots__ = ()

    def apply(self, g):
        return tuple(g * 0.0 if n is not None else None for n, _ in self.next_functions)


def zero_derivative(grad, *tensors):
    """Under create_graph, make ``grad`` depend (with derivative 0) on ``tensors``.

    PyTorch's formulas such as relu's ``g * (y > 0)`` are differentiable in ``y`` with a
    zero derivative, so a second backward through them gives zeros instead of an error.
    """
    if not isinstance(grad, Tensor) or not _state.enabled or grad._rg:
        return grad
    deps = tuple(t for t in tensors if t is not None and t._rg)
    return record(grad._data, ZeroDerivativeBackward0, deps) if deps else grad


def needs_grad(*inputs):
    if not _state.enabled:
        return False
    for t in inputs:
        if t is not None and t._rg:
            return True
    return False


def as_tensor(x, like=None):
    """``x`` as a Tensor (Python scalars take ``like``'s dtype when it is a float tensor)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        d = dtypes.result_type((like,), (x,))
        return wrap(np.asarray(x, dtype=d.np))
    from ..creation import tensor
    return tensor(x)


def operands(a, b):
    """The numpy operands of a binary op, cast to PyTorch's result dtype."""
    ad = a._data
    if isinstance(b, Tensor):
        bd = b._data
        if ad.dtype is bd.dtype:
            return ad, bd, None
        d = dtypes.result_type((a, b))
        return ad.astype(d.np, copy=False), bd.astype(d.np, copy=False), d
    if type(b) is float and ad.dtype.kind == "f":
        return ad, _scalar(b, ad.dtype), None
    if isinstance(b, (int, float, bool, np.generic)):
        d = dtypes.result_type((a,), (b,))
        return ad.astype(d.np, copy=False), np.asarray(b, dtype=d.np), d
    return NotImplemented, None, None


_scalars = {}


def _scalar(value, dtype):
    """``value`` as a read-only 0-d array of ``dtype``, cached.

    numpy converts a Python float operand on every call, which costs as much as the
    arithmetic on a small array; a 0-d array of the array's own dtype gives the same result
    (the float is rounded to that dtype either way) at half the price.
    """
    key = (value, dtype)
    a = _scalars.get(key)
    if a is None:
        a = np.array(value, dtype=dtype)
        if value == 0.0 or value != value:
            return a          # keep -0.0 apart from 0.0, and NaN out of the cache
        a.flags.writeable = False
        if len(_scalars) > 512:
            _scalars.clear()
        _scalars[key] = a
    return a


def broadcast_error(a_shape, b_shape):
    """PyTorch's message for shapes that do not broadcast."""
    na, nb = len(a_shape), len(b_shape)
    n = max(na, nb)
    for i in range(1, n + 1):
        da = a_shape[-i] if i <= na else 1
        db = b_shape[-i] if i <= nb else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                                f"non-singleton dimension {n - i}")
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast together")


def shape_of(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def float_dtype_of(x):
    """The dtype a floating-point op on ``x`` computes in (ints and bools become the default)."""
    d = x.dtype
    return d if d.is_floating_point else dtypes.get_default_dtype()


def to_float(x):
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(dtypes.get_default_dtype().np)
