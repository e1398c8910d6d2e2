"""``gradcheck``: analytic gradients against central finite differences, as in PyTorch.

Example:
    >>> import srcgrad as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True
"""
import warnings

import numpy as np

from .autograd_api import grad as autograd_grad
from .tensor import Tensor, wrap


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when the analytic and numerical Jacobians differ."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _outputs(fn, inputs):
    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor)]


def numerical_jacobian(fn, inputs, eps=1e-6):
    """For each differentiable input, the Jacobian d(out)/d(in) by central differences:
    a list (per input) of lists (per output) of arrays of shape (in.numel(), out.numel())."""
    result = []
    # not under no_grad: the function may itself differentiate (gradgradcheck)
    for x in inputs:
        if not (isinstance(x, Tensor) and x._rg):
            continue
        data = x._data
        per_out = None
        for k in range(data.size):
            # x's own memory, whatever its layout (a reshape of a non-contiguous array would copy)
            at = np.unravel_index(k, data.shape)
            orig = data[at]
            try:
                data[at] = orig + eps
                plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
                data[at] = orig - eps
                minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
            finally:
                data[at] = orig     # the input comes back unchanged even when fn raises
            if per_out is None:
                per_out = [np.zeros((data.size, p.size)) for p in plus]
            for j, (p, m) in enumerate(zip(plus, minus)):
                per_out[j][k] = (p - m) / (2 * eps)
        result.append(per_out or [])
    return result


def analytical_jacobian(fn, inputs):
    """The same Jacobians from backward passes, one per output element."""
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x._rg]
    outs = _outputs(fn, inputs)
    jac = [[np.zeros((x._data.size, o._data.size)) for o in outs] for x in diff_inputs]
    for j, o in enumerate(outs):
        if not o._rg:
            continue
        for k in range(o._data.size):
            g = np.zeros(o._data.size, dtype=o._data.dtype)
            g[k] = 1
            grads = autograd_grad([o], diff_inputs, [wrap(g.reshape(o._data.shape))], retain_graph=True,
                                  allow_unused=True)
            for i, gi in enumerate(grads):
                if gi is not None:
                    jac[i][j][:, k] = gi._data.astype(np.float64).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when ``func``'s gradients at ``inputs`` match finite differences.

    Pass float64 tensors with ``requires_grad=True``; float32 is too coarse for the default
    tolerances (a warning says so, as in PyTorch).
    """
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x._rg and x._data.dtype != np.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ", UserWarning, stacklevel=2)
    if not any(isinstance(x, Tensor) and x._rg for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    numerical = numerical_jacobian(func, inputs, eps)
    analytical = analytical_jacobian(func, inputs)
    for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(num_i, ana_i)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                     f"numerical:{wrap(n)}\nanalytical:{wrap(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **kwargs):
    """Check second derivatives: gradcheck of the function's vector-Jacobian product."""
    inputs = _as_tuple(inputs)
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        grad_outputs = tuple(wrap(rng.standard_normal(o._data.shape)).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def vjp(*args):
        xs, gs = args[:n], args[n:]
        diff = [x for x in xs if isinstance(x, Tensor) and x._rg]
        os = _outputs(func, xs)
        gr = autograd_grad(os, diff, list(gs), create_graph=True, allow_unused=True)
        return tuple(g for g in gr if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
