"""``Adamax`` (PyTorch's ``torch.optim.Adamax``): Adam with the second moment replaced by an
exponentially weighted infinity norm of the gradients.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Adamax([w], lr=2e-3)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_adam_args, check_flags, count_step, effective_grad, lerp, new_step, scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2014, section 7), as in PyTorch's documented algorithm. At step t, for
    each parameter p with gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        m = m + (1 - beta1) * (g - m)
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    ``state[p]`` holds 'step', 'exp_avg' (m) and 'exp_inf' (u). ``foreach`` is accepted and
    changes nothing; ``capturable=True`` and ``differentiable=True`` raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adamax([w], lr=2e-3, betas=(0.9, 0.999))
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9960, -1.9960], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_inf"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        maximize = group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p)
            t = count_step(state)
            w, g = p._data, p._grad._data
            m, u = state["exp_avg"]._data, state["exp_inf"]._data
            d, a = self._buffers(w, 2)

            g = effective_grad(w, g, weight_decay, maximize, out=d)

            lerp(m, g, 1 - beta1, out=a)
            # the infinity norm: u = max(beta2 * u, |g| + eps)
            u *= beta2
            np.abs(g, out=a)
            a += eps
            np.maximum(u, a, out=u)

            clr = lr / (1 - beta1 ** t)
            np.multiply(m, -clr, out=a)
            a /= u
            w += a
            bump_version(p)         # as an in-place op: graphs that saved p refuse to backward
