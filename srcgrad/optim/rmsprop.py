"""``RMSprop`` (PyTorch's ``torch.optim.RMSprop``): divide the gradient by a running root mean
square of recent gradients; optionally centered and with momentum.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.RMSprop([w], lr=1e-2, momentum=0.9)
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes; centered version from Graves, 2013), as in PyTorch's
    documented algorithm. For each parameter p with gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v) + eps
        avg = sqrt(v - ga * ga) + eps   with ga = ga + (1 - alpha) (g - ga),   if centered
        b = momentum * b + g / avg;  p = p - lr * b     if momentum > 0
        p = p - lr * g / avg                            otherwise

    ``state[p]`` holds 'step', 'square_avg' (v), and 'momentum_buffer' (b) and 'grad_avg' (ga)
    when used. ``foreach`` is accepted and changes nothing; ``capturable=True`` and
    ``differentiable=True`` raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=1e-2, alpha=0.99, centered=True)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.8318, -1.8298], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                          "differentiable": False, "capturable": False}

    def _state(self, p, momentum, centered):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["square_avg"] = wrap(np.zeros_like(p._data))
            if momentum > 0:
                state["momentum_buffer"] = wrap(np.zeros_like(p._data))
            if centered:
                state["grad_avg"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        alpha = scalar(group["alpha"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        momentum = scalar(group["momentum"])
        centered, maximize = group["centered"], group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p, momentum, centered)
            count_step(state)
            w, g = p._data, p._grad._data
            v = state["square_avg"]._data
            d, a, b = self._buffers(w, 3)

            g = effective_grad(w, g, weight_decay, maximize, out=d)

            v *= alpha
            np.multiply(g, 1 - alpha, out=a)
            a *= g
            v += a
            if centered:
                ga = state["grad_avg"]._data
                np.subtract(g, ga, out=a)
                a *= 1 - alpha
                ga += a
                np.multiply(ga, ga, out=a)
                np.subtract(v, a, out=a)
                avg = np.sqrt(a, out=a)
            else:
                avg = np.sqrt(v, out=a)
            avg += eps

            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                np.divide(g, avg, out=b)
                buf += b
                np.multiply(buf, -lr, out=b)
            else:
                np.multiply(g, -lr, out=b)
                b /= avg
            w += b
            bump_version(p)         # as an in-place op: graphs that saved p refuse to backward
