"""``SGD``: stochastic gradient descent, with optional momentum, dampening, Nesterov momentum,
weight decay and maximisation (PyTorch's ``torch.optim.SGD``).

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_flags, check_lr, effective_grad, scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as in PyTorch's documented algorithm. For each parameter p
    with gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        b = g                                   (first step)
        b = momentum * b + (1 - dampening) * g  (later steps)
        g = g + momentum * b   if nesterov   else   b
        p = p - lr * g

    The momentum buffer ``b`` is kept in ``state[p]['momentum_buffer']`` when momentum != 0.
    ``foreach`` and ``fused`` are accepted and change nothing; ``differentiable=True`` raises.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9, nesterov=True)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.2224, -0.4448], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)

    _restored_defaults = {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
                          "fused": None}

    def _update_group(self, group):
        lr = scalar(group["lr"])
        momentum = scalar(group["momentum"])
        dampening = scalar(group["dampening"])
        weight_decay = scalar(group["weight_decay"])
        nesterov, maximize = group["nesterov"], group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            w, g = p._data, p._grad._data
            d, n, u = self._buffers(w, 3)

            d = effective_grad(w, g, weight_decay, maximize, out=d)

            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = wrap(np.array(d, copy=True))
                else:
                    b = buf._data
                    b *= momentum
                    if dampening == 0:
                        b += d
                    else:
                        np.multiply(d, 1 - dampening, out=u)
                        b += u
                if nesterov:
                    np.multiply(buf._data, momentum, out=n)
                    n += d
                    d = n
                else:
                    d = buf._data

            np.multiply(d, -lr, out=u)
            w += u
            bump_version(p)         # as an in-place op: graphs that saved p refuse to backward
