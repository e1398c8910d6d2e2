"""``ASGD`` (PyTorch's ``torch.optim.ASGD``): averaged stochastic gradient descent, which keeps a
running average of the iterates alongside decaying SGD steps.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.ASGD([w], lr=1e-2, t0=2)
    >>> for _ in range(5):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> average = opt.state[w]["ax"]
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_flags, check_lr, count_step, effective_grad, new_step, scalar, scalar_state, step_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), as in PyTorch's documented algorithm. At step t,
    for each parameter p with gradient g (negated when ``maximize``)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta)
        p = p - eta * g
        ax = ax + mu * (p - ax)                 (ax = p while mu is 1)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    ``state[p]`` holds 'step', 'eta' and 'mu' (0-d tensors of the default float dtype: their
    values are rounded to it, as in PyTorch) and 'ax', the averaged parameters.
    ``foreach`` is accepted and changes nothing; ``capturable=True`` and ``differentiable=True``
    raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ASGD([w], lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9604, -1.9208], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["eta"] = wrap(np.array(scalar(group["lr"]), step_dtype()))
            state["mu"] = wrap(np.ones((), step_dtype()))
            state["ax"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        lambd = scalar(group["lambd"])
        alpha = scalar(group["alpha"])
        t0 = scalar(group["t0"])
        weight_decay = scalar(group["weight_decay"])
        maximize = group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p, group)
            t = count_step(state)
            w, g = p._data, p._grad._data
            ax = state["ax"]._data
            eta_t, mu_t = scalar_state(state, "eta")._data, scalar_state(state, "mu")._data
            d, a = self._buffers(w, 2)

            g = effective_grad(w, g, weight_decay, maximize, out=d)

            eta = float(eta_t)
            w *= 1 - lambd * eta                # decay
            bump_version(p)
            np.multiply(g, -eta, out=a)         # the SGD step
            w += a
            bump_version(p)

            # the running average of the iterates
            mu = float(mu_t)
            if mu != 1:
                np.subtract(w, ax, out=a)
                a *= mu
                ax += a
            else:
                ax[...] = w

            # the next step size and averaging weight, stored in place after rounding to the
            # default float dtype (even where a loaded state holds them in float64), as PyTorch does
            eta_t[...] = step_dtype()(lr / ((1 + lambd * lr * t) ** alpha))
            mu_t[...] = step_dtype()(1 / max(1, t - t0))
