"""``NAdam`` (PyTorch's ``torch.optim.NAdam``): Adam with Nesterov momentum, with a momentum
schedule and optional decoupled weight decay.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.NAdam([w], lr=2e-3)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_adam_args, check_flags, count_step, decayed_grad, lerp, new_step, scalar, scalar_state, step_dtype, update_second_moment

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat, 2016), as in PyTorch's documented algorithm. At step t, for each parameter p
    with gradient g (negated when ``maximize``)::

        p = p * (1 - lr * weight_decay)        if decoupled_weight_decay (NAdamW)
        g = g + weight_decay * p               otherwise
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_{t+1} = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        P = mu_1 * ... * mu_t                  (the 'mu_product')
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P) * g / denom
        p = p - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / denom

    ``state[p]`` holds 'step', 'mu_product' (P, a 0-d tensor of the default float dtype, so in
    float32 it is rounded to float32 as in PyTorch), 'exp_avg' (m) and 'exp_avg_sq' (v).
    ``foreach`` is accepted and changes nothing; ``capturable=True`` and ``differentiable=True``
    raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = NAdam([w], lr=2e-3, momentum_decay=4e-3, decoupled_weight_decay=True)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9963, -1.9963], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        check_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                          "decoupled_weight_decay": False}

    def _state(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["mu_product"] = wrap(np.ones((), step_dtype()))
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        momentum_decay = scalar(group["momentum_decay"])
        decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p)
            t = count_step(state)
            w, g = p._data, p._grad._data
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            d, a, denom = self._buffers(w, 3)

            g = decayed_grad(p, g, lr, weight_decay, decoupled, maximize, out=d)

            # the momentum schedule, and the product of its values so far (kept in the state's dtype)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
            mu_product = scalar_state(state, "mu_product")._data
            mu_product *= mu
            mu_product = float(mu_product)
            mu_product_next = mu_product * mu_next

            lerp(m, g, 1 - beta1, out=a)
            update_second_moment(v, g, beta2, scratch=a)

            bias_correction2 = 1 - beta2 ** t
            np.divide(v, bias_correction2, out=denom)
            np.sqrt(denom, out=denom)
            denom += eps

            # the Nesterov step: a part along the gradient, a part along the momentum
            np.multiply(g, -lr * (1.0 - mu) / (1.0 - mu_product), out=a)
            a /= denom
            w += a
            bump_version(p)
            np.multiply(m, (-lr * mu_next) / (1.0 - mu_product_next), out=a)
            a /= denom
            w += a
            bump_version(p)
