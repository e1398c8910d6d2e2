"""``Adagrad`` (PyTorch's ``torch.optim.Adagrad``): per-coordinate step sizes that shrink with
the sum of the squared gradients seen so far.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Adagrad([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_flags, check_lr, count_step, effective_grad, new_step, scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011), as in PyTorch's documented algorithm. At step t, for each
    parameter p with gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                          (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    ``state[p]`` holds 'step' and 'sum' (s); like PyTorch it is made when the optimizer is.
    ``foreach`` and ``fused`` are accepted and change nothing; ``differentiable=True`` raises.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=1e-2, lr_decay=1e-4)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9830, -1.9829], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        check_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._state(p, group)

    _restored_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}

    def _state(self, p, group):
        # a parameter of a group added after construction gets its state on its first step
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["sum"] = wrap(np.full_like(p._data, group["initial_accumulator_value"]))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        lr_decay = scalar(group["lr_decay"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        maximize = group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p, group)
            t = count_step(state)
            w, g = p._data, p._grad._data
            s = state["sum"]._data
            d, a, b = self._buffers(w, 3)

            g = effective_grad(w, g, weight_decay, maximize, out=d)

            clr = lr / (1 + (t - 1) * lr_decay)
            np.multiply(g, g, out=a)
            s += a
            std = np.sqrt(s, out=a)
            std += eps
            np.multiply(g, -clr, out=b)
            b /= std
            w += b
            bump_version(p)         # as an in-place op: graphs that saved p refuse to backward
