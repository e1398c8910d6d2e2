"""The arithmetic and argument checks that srcgrad's optimizers share: PyTorch's checks in
its words, the gradient an update uses (weight decay, maximize), in-place moment updates in
PyTorch's order of rounding, and the ``step`` count kept as a 0-d tensor.

Updates work on numpy arrays in place; ``out`` arguments are scratch arrays of the
parameter's shape, so that a step allocates nothing.

Example:
    >>> import numpy as np
    >>> m = np.zeros(2)
    >>> lerp(m, np.array([1.0, 2.0]), 0.1, out=np.empty(2))
    array([0.1, 0.2])
"""
import numpy as np

from ..eager import dtypes
from ..eager.tensor import Tensor, wrap
from ..eager.versions import bump_version


def scalar(x):
    """A Python float for an option that may be given as a one-element tensor.

    Python floats keep numpy's arithmetic in the parameter's own dtype (a float32 array times a
    Python float stays float32), which is what PyTorch's kernels do with scalar arguments."""
    return float(x)


def check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_flags(foreach, fused, differentiable, capturable=False):
    """foreach and fused select PyTorch kernels that compute the same update; here there is one
    vectorised numpy implementation, so they are accepted and change nothing."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError("srcgrad.optim: differentiable=True is not supported: a step updates the "
                                  "parameters' arrays in place and records no graph")
    if capturable:
        raise NotImplementedError("srcgrad.optim: capturable=True is not supported (it is for CUDA graphs)")


def step_dtype():
    # PyTorch keeps 'step' as a 0-d tensor of the default float dtype (float64 only when that
    # is the default)
    return np.float64 if dtypes.get_default_dtype() is dtypes.float64 else np.float32


def new_step():
    return wrap(np.zeros((), step_dtype()))


def count_step(state):
    """Add one to ``state['step']`` in place and return the new count as a Python float."""
    st = state["step"]
    if not isinstance(st, Tensor):             # a state_dict saved with a plain number
        st = state["step"] = wrap(np.array(float(st), step_dtype()))
    st._data += 1
    return float(st._data)


def effective_grad(w, g, weight_decay, maximize, out):
    """The gradient an update uses: negated when maximizing, plus ``weight_decay * w`` (the L2
    penalty's gradient). It is written into ``out`` unless it is ``g`` itself."""
    if weight_decay != 0:
        np.multiply(w, weight_decay, out=out)
        if maximize:
            out -= g
        else:
            out += g
        return out
    if maximize:
        return np.negative(g, out=out)
    return g


def check_adam_args(lr, eps, betas, weight_decay):
    """The Adam family's argument checks (Adam, Adamax, NAdam, RAdam), in PyTorch's order and words."""
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def decayed_grad(p, g, lr, weight_decay, decoupled, maximize, out):
    """The gradient an Adam-family update uses. With ``decoupled`` weight decay (AdamW), the
    parameter itself shrinks first, ``w *= 1 - lr·weight_decay`` (a change its version counter
    counts); otherwise the decay is the L2 penalty's gradient, added as ``effective_grad`` does."""
    if not decoupled:
        return effective_grad(p._data, g, weight_decay, maximize, out=out)
    if weight_decay != 0:
        p._data *= 1 - lr * weight_decay
        bump_version(p)
    return effective_grad(p._data, g, 0, maximize, out=out)


def update_second_moment(v, g, beta2, scratch):
    """``v = beta2·v + (1 - beta2)·g²`` in place, in PyTorch's order of rounding."""
    v *= beta2
    np.multiply(g, 1 - beta2, out=scratch)
    scratch *= g
    v += scratch


def lerp(start, end, weight, out):
    """``start += weight * (end - start)`` in place (``torch.lerp_``), computed from the nearer end
    as PyTorch does: ``end - (1 - weight) * (end - start)`` when weight >= 0.5. ``out`` is scratch."""
    np.subtract(end, start, out=out)
    weight = start.dtype.type(weight)          # the weight in the arrays' dtype, as PyTorch's kernel
    if abs(weight) < 0.5:
        out *= weight
        start += out
    else:
        out *= weight - 1
        np.add(end, out, out=start)
    return start


def scalar_state(state, key):
    """``state[key]``, a 0-d tensor of the default float dtype (a state_dict may hold a number)."""
    value = state[key]
    if not isinstance(value, Tensor):
        value = state[key] = wrap(np.array(float(value), step_dtype()))
    return value
