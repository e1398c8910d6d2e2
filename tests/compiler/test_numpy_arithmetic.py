"""numpy's arithmetic as functions (np.add, np.subtract, np.multiply, np.divide/true_divide,
np.square, np.negative, np.reciprocal, np.exp2): values as numpy's, gradients against
PyTorch and finite differences, on both backends; bools and integer reciprocals refused."""
import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
W = np.array([0.3, -1.2, 2.0])


def arithmetic(x, c):
    a = np.add(x, c) * np.subtract(W, x) + np.multiply(x, W)
    b = np.divide(a, 1.0 + np.square(x)) + np.negative(x) * np.reciprocal(2.0 + np.square(W))
    return np.sum(b * np.exp2(x)) + np.square(c) + np.exp2(c) + np.true_divide(c, 3.0) + np.negative(c)


def arithmetic_torch(x, c):
    w = torch.tensor(W)
    a = torch.add(x, c) * torch.subtract(w, x) + torch.multiply(x, w)
    b = torch.divide(a, 1.0 + torch.square(x)) + torch.negative(x) * torch.reciprocal(2.0 + torch.square(w))
    return torch.sum(b * torch.exp2(x)) + torch.square(c) + torch.exp2(c) + torch.true_divide(c, 3.0) \
        + torch.negative(c)


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_and_gradients(backend):
    x, c = np.array([0.5, -0.25, 1.5]), 0.7
    assert srcgrad.jit(arithmetic, backend=backend)(x, c) == pytest.approx(arithmetic(x, c), rel=1e-14)
    gx, gc = srcgrad.grad(arithmetic, wrt=(0, 1), backend=backend)(x, c)
    tx, tc = torch.tensor(x, requires_grad=True), torch.tensor(c, dtype=torch.float64, requires_grad=True)
    ex, ec = torch.autograd.grad(arithmetic_torch(tx, tc), (tx, tc))
    np.testing.assert_allclose(gx, ex.numpy(), rtol=1e-12)
    assert gc == pytest.approx(ec.item(), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_gradient(arithmetic, (x, c), 0), rtol=1e-6)
    _, dot = srcgrad.jvp(arithmetic, (x, c), (np.ones(3), 0.0), backend=backend)
    assert dot == pytest.approx(float(np.sum(ex.numpy())), rel=1e-12)


def int_arithmetic(n, m):
    return np.add(n, m) * np.multiply(n, 3) - np.subtract(m, n) + np.square(n) + np.negative(m)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ints_stay_ints(backend):
    got = srcgrad.jit(int_arithmetic, backend=backend)(4, 7)
    assert got == int_arithmetic(4, 7) and isinstance(got, int)


def adds_bools(a, x):
    return np.add(a > 0.0, x > 0.0) * 1.0


def reciprocal_of_int(n):
    return np.reciprocal(n) * 1.0


@pytest.mark.parametrize("fn,args,message", [
    (adds_bools, (1.0, 2.0), "np.add of bools"),
    (reciprocal_of_int, (3,), "np.reciprocal of i64"),
])
def test_refusals_name_the_call(fn, args, message):
    with pytest.raises(srcgrad.TypingError, match=message) as info:
        srcgrad.jit(fn)(*args)
    assert "test_numpy_arithmetic.py" in str(info.value)
