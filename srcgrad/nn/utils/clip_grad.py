"""``clip_grad_norm_`` and ``clip_grad_value_``: scale or clamp the ``.grad`` of parameters in
place, between ``backward()`` and the optimizer's ``step()``.

Example:
    >>> import srcgrad as torch
    >>> model = torch.nn.Linear(3, 1)
    >>> with torch.no_grad():
    ...     _ = model.weight.fill_(1.0), model.bias.fill_(0.0)
    >>> model(torch.ones(1, 3)).sum().backward()          # grads: weight [[1, 1, 1]], bias [1]
    >>> total = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    >>> total, model.bias.grad           # the norm before clipping; the grads scaled to norm 1
    (tensor(2.), tensor([0.5000]))
"""
import numpy as np

from ...eager.tensor import Tensor, wrap
from ...eager.versions import bump_version


def _with_grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients by max_norm / (total norm + 1e-6) where that is below 1; the total
    norm is the norm of the vector of every gradient's norm. Returns the total norm."""
    params = _with_grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not params:
        return wrap(np.asarray(0.0, dtype=np.float32))
    grads = [p.grad._data for p in params]
    if norm_type == np.inf:
        norms = [np.max(np.abs(g)) if g.size else np.zeros((), g.dtype) for g in grads]
        total = np.max(np.stack([np.asarray(n, dtype=grads[0].dtype) for n in norms]))
    else:
        norms = [np.sum(np.abs(g.astype(np.float64)) ** norm_type) ** (1.0 / norm_type) for g in grads]
        total = np.sum(np.asarray(norms) ** norm_type) ** (1.0 / norm_type)
    total = np.asarray(total, dtype=grads[0].dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    coef = min(max_norm / (float(total) + 1e-6), 1.0)
    for p in params:
        p.grad._data *= np.asarray(coef, dtype=p.grad._data.dtype)
        bump_version(p.grad)
    return wrap(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _with_grads(parameters):
        np.clip(p.grad._data, -clip_value, clip_value, out=p.grad._data)
        bump_version(p.grad)
