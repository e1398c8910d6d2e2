"""``RAdam`` (PyTorch's ``torch.optim.RAdam``): Adam whose adaptive step is switched on, and
rectified, only once the variance of the adaptive learning rate is tractable.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.RAdam([w], lr=1e-3)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_adam_args, check_flags, count_step, decayed_grad, lerp, new_step, scalar, update_second_moment

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al., 2019), as in PyTorch's documented algorithm. At step t, for each
    parameter p with gradient g (negated when ``maximize``)::

        p = p * (1 - lr * weight_decay)        if decoupled_weight_decay (RAdamW)
        g = g + weight_decay * p               otherwise
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        if rho_t > 5:
            l = sqrt(1 - beta2**t) / (sqrt(v) + eps)
            r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
            p = p - lr * m_hat * l * r
        else:
            p = p - lr * m_hat

    ``state[p]`` holds 'step', 'exp_avg' (m) and 'exp_avg_sq' (v). ``foreach`` is accepted and
    changes nothing; ``capturable=True`` and ``differentiable=True`` raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RAdam([w], lr=1e-3, weight_decay=1e-2, decoupled_weight_decay=True)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9960, -1.9920], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False,
                          "decoupled_weight_decay": False}

    def _state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p)
            t = count_step(state)
            w, g = p._data, p._grad._data
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            d, a, step = self._buffers(w, 3)

            g = decayed_grad(p, g, lr, weight_decay, decoupled, maximize, out=d)

            lerp(m, g, 1 - beta1, out=a)
            update_second_moment(v, g, beta2, scratch=a)

            bias_correction1 = 1 - beta1 ** t
            bias_correction2 = 1 - beta2 ** t
            # the bias-corrected first moment, times lr
            np.divide(m, bias_correction1, out=step)
            step *= lr

            # the length of the approximated simple moving average, and its limit
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * t * (beta2 ** t) / bias_correction2
            if rho_t > 5.0:
                # the adaptive learning rate sqrt(bias_correction2) / (sqrt(v) + eps) ...
                adaptive = np.sqrt(v, out=a)
                adaptive += eps
                np.reciprocal(adaptive, out=adaptive)
                adaptive *= bias_correction2 ** 0.5
                # ... and the variance rectification term
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                step *= adaptive
                step *= rect
            w -= step
            bump_version(p)
