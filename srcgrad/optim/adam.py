"""``Adam`` and ``AdamW`` (PyTorch's ``torch.optim.Adam`` / ``AdamW``): adaptive moment estimation,
with L2 or decoupled weight decay, AMSGrad and maximisation.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.AdamW([w], lr=1e-2)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
"""
import numpy as np

from ..eager.tensor import Tensor, wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_adam_args, check_flags, count_step, decayed_grad, new_step, scalar, update_second_moment

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2014), as in PyTorch's documented algorithm. At step t, for each
    parameter p with gradient g (negated when ``maximize``)::

        p = p * (1 - lr * weight_decay)        if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p               otherwise
        m = m + (1 - beta1) * (g - m)          (= beta1 * m + (1 - beta1) * g)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                  if amsgrad, which then uses v_max for v below
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    ``state[p]`` holds 'step' (a 0-d tensor), 'exp_avg' (m), 'exp_avg_sq' (v) and, with amsgrad,
    'max_exp_avg_sq'. ``foreach`` and ``fused`` are accepted and change nothing;
    ``capturable=True`` and ``differentiable=True`` raise.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adam([w], lr=1e-3, betas=(0.9, 0.999), amsgrad=True)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9980, -1.9980], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_adam_args(lr, eps, betas, weight_decay)
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)
                or isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        check_flags(foreach, fused, differentiable, capturable)
        super().__init__(params, defaults)

    _restored_defaults = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                          "differentiable": False, "fused": None, "decoupled_weight_decay": False}

    def _state(self, p, amsgrad):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
            if amsgrad:
                state["max_exp_avg_sq"] = wrap(np.zeros_like(p._data))
        return state

    def _update_group(self, group):
        lr = scalar(group["lr"])
        beta1, beta2 = (scalar(b) for b in group["betas"])
        eps = scalar(group["eps"])
        weight_decay = scalar(group["weight_decay"])
        amsgrad, maximize = group["amsgrad"], group["maximize"]
        decoupled = group["decoupled_weight_decay"]
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self._state(p, amsgrad)
            t = count_step(state)
            w, g = p._data, p._grad._data
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            d, a, b = self._buffers(w, 3)

            g = decayed_grad(p, g, lr, weight_decay, decoupled, maximize, out=d)

            # first moment: the lerp m + (1 - beta1) (g - m)
            np.subtract(g, m, out=a)
            a *= 1 - beta1
            m += a
            # second moment
            update_second_moment(v, g, beta2, scratch=a)
            if amsgrad:
                vmax = state["max_exp_avg_sq"]._data
                np.maximum(vmax, v, out=vmax)
                v = vmax

            # p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), computed as the Adam paper's
            # "more efficient order" (section 2): one pass over the arrays fewer
            bias_correction1 = 1 - beta1 ** t
            bias_correction2_sqrt = (1 - beta2 ** t) ** 0.5
            step_size = lr * bias_correction2_sqrt / bias_correction1
            denom = np.sqrt(v, out=a)
            denom += eps * bias_correction2_sqrt
            np.divide(m, denom, out=b)
            b *= -step_size
            w += b
            bump_version(p)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks the
    parameters, ``p = p * (1 - lr * weight_decay)``, instead of adding ``weight_decay * p`` to the
    gradient. Same as ``Adam(..., decoupled_weight_decay=True)``; the default weight_decay is 1e-2.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = AdamW([w], lr=1e-3, weight_decay=1e-2)
    >>> for step in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.9980, -1.9980], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
