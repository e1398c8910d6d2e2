"""``Adadelta`` (PyTorch's ``torch.optim.Adadelta``): steps scaled by the ratio of running root
mean squares of past updates and of past gradients, so that no learning rate needs tuning.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Adadelta([w])
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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), as in PyTorch's documented algorithm. For each parameter p with
    gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    ``state[p]`` holds 'step', 'square_avg' (v) and 'acc_delta' (u). ``foreach`` is accepted and
    changes nothing; ``capturable=True`` and ``differentiable=True`` raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adadelta([w], lr=1.0, rho=0.9, eps=1e-6)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9936, -1.9936], requires_grad=True)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["square_avg"] = wrap(np.zeros_like(p._data))
            state["acc_delta"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        rho = scalar(group["rho"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        maximize = group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p)
            count_step(state)
            w, g = p._data, p._grad._data
            v, u = state["square_avg"]._data, state["acc_delta"]._data
            d, a, delta = self._buffers(w, 3)

            g = effective_grad(w, g, weight_decay, maximize, out=d)

            # v = rho v + (1 - rho) g^2
            v *= rho
            np.multiply(g, 1 - rho, out=a)
            a *= g
            v += a
            # delta = sqrt(u + eps) / sqrt(v + eps) * g
            std = np.add(v, eps, out=a)
            np.sqrt(std, out=std)
            np.add(u, eps, out=delta)
            np.sqrt(delta, out=delta)
            delta /= std
            delta *= g
            # u = rho u + (1 - rho) delta^2
            u *= rho
            np.multiply(delta, 1 - rho, out=a)
            a *= delta
            u += a

            delta *= -lr
            w += delta
            bump_version(p)         # as an in-place op: graphs that saved p refuse to backward
