"""``autograd.grad`` returns each gradient in its input's dtype (as PyTorch's engine, and as
``backward()`` accumulates it), and ``Tensor.erf`` (the polynomial of ops/_erf.py on large
arrays, math.erf on small ones) against the installed torch."""
import math

import numpy as np
import pytest

import srcgrad

torch = pytest.importorskip("torch")


def _grads(T):
    out = []
    f64 = T.tensor([2.0, -1.0], dtype=T.float64)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    out.append(T.autograd.grad((x * f64).sum(), x))                          # a float32 leaf
    z = x * 1
    out.append(T.autograd.grad((z * f64).sum(), z))                          # a float32 non-leaf
    y = x * f64
    out.append(T.autograd.grad(y, x, T.ones(2, dtype=T.float64)))            # float64 grad_outputs
    out.append(T.autograd.grad([(x * f64).sum(), (x * 3).sum()], [x, x]))   # one input twice
    h = T.tensor([1.0, 2.0], dtype=T.float16, requires_grad=True)
    out.append(T.autograd.grad((h.float() * 3).sum(), h))                    # float16 through float32
    (g,) = T.autograd.grad((x * x * f64).sum(), x, create_graph=True)
    out.append((g,))
    g.sum().backward()
    out.append((x.grad,))
    x.grad = None
    (x * f64).sum().backward()
    out.append((x.grad,))
    return [[(str(t.dtype), t.detach().tolist()) for t in gs] for gs in out]


def test_autograd_grad_casts_to_the_input_dtype():
    assert _grads(srcgrad) == _grads(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("n", [0, 1, 7, 600, 5000])
def test_erf_values_and_grads_match_torch(dtype, n):
    rng = np.random.default_rng(n)
    data = (rng.standard_normal(n) * 3).astype(dtype)
    if n >= 7:
        data[:7] = [0.0, -0.0, 2.5, -2.5, 6.5, np.inf, -np.inf]
    outs = []
    for T in (srcgrad, torch):
        x = T.tensor(data, requires_grad=True)
        y = x.erf()
        y.backward(T.ones_like(y))
        outs.append((y.detach().numpy(), x.grad.numpy(), str(y.dtype), y.grad_fn.name()))
    (ours, our_grad, our_dtype, our_name), (theirs, their_grad, their_dtype, their_name) = outs
    assert (our_dtype, our_name) == (their_dtype, their_name)
    tol = {"float64": 1e-14, "float32": 1e-6, "float16": 1e-3}[dtype]
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    np.testing.assert_allclose(our_grad, their_grad, rtol=tol * 10, atol=tol)
    assert np.signbit(ours).tolist() == np.signbit(theirs).tolist()


def test_erf_of_integers_and_nan():
    ours = srcgrad.erf(srcgrad.tensor([0, 1, -3])).numpy()
    theirs = torch.erf(torch.tensor([0, 1, -3])).numpy()
    assert ours.dtype == theirs.dtype and np.allclose(ours, theirs)
    big = np.full(1000, np.nan, dtype=np.float32)
    big[0] = 1.0
    r = srcgrad.tensor(big).erf().numpy()
    assert np.isnan(r[1:]).all() and abs(r[0] - math.erf(1.0)) < 1e-6
