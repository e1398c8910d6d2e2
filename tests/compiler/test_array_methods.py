"""Array methods that are numpy functions with the array first: x.sum(), x.mean(), x.prod(),
x.max(), x.min() (each with axis=), x.dot(y), on local and global arrays: values as numpy's,
gradients against PyTorch, both backends; a method of a number is refused naming the call."""
import numpy as np
import pytest
import torch

import srcgrad

BACKENDS = ("python", "llvm")
G = np.array([[1.0, 2.0], [3.0, -1.0]])


def methods(x, M):
    return x.sum() + x.max() * x.min() + (x * x).mean() + x.prod() + x.dot(x) + M.sum(axis=0).dot(x) \
        + G.sum() + M.max(axis=1).sum() + M.mean(axis=1).dot(x)


def methods_torch(x, M):
    g = torch.tensor(G)
    return x.sum() + x.max() * x.min() + (x * x).mean() + x.prod() + x.dot(x) + M.sum(dim=0).dot(x) \
        + g.sum() + M.amax(dim=1).sum() + M.mean(dim=1).dot(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_methods_compute_and_differentiate_as_the_functions(backend):
    x, M = np.array([1.5, -0.5]), np.array([[0.2, 0.4], [1.0, -2.0]])
    assert srcgrad.jit(methods, backend=backend)(x, M) == pytest.approx(methods(x, M), rel=1e-14)
    gx, gm = srcgrad.grad(methods, wrt=(0, 1), backend=backend)(x, M)
    tx, tm = torch.tensor(x, requires_grad=True), torch.tensor(M, requires_grad=True)
    ex, em = torch.autograd.grad(methods_torch(tx, tm), (tx, tm))
    np.testing.assert_allclose(gx, ex.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gm, em.numpy(), rtol=1e-12)


def method_of_a_number(c):
    return c.sum()


def test_a_method_of_a_number_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="calling c.sum") as info:
        srcgrad.jit(method_of_a_number)(1.0)
    assert "x.sum()" in str(info.value)


def shapes(M, x):
    n, m = M.shape
    (k,) = x.shape
    return np.sum(M) * n / m + x.ndim + M.ndim * k + x.size


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_unpacks_and_ndim_is_the_rank(backend):
    M, x = np.ones((2, 3)), np.arange(4.0)
    assert srcgrad.jit(shapes, backend=backend)(M, x) == shapes(M, x)
    np.testing.assert_allclose(srcgrad.grad(shapes, backend=backend)(M, x), np.full((2, 3), 2.0 / 3.0))


def shape_as_one_value(M):
    s = M.shape
    rows, *rest = s
    return s[0] * 1.0 + len(s) + s[-1] * rows + len(rest)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_is_a_tuple_value(backend):
    M = np.ones((2, 3))
    assert srcgrad.jit(shape_as_one_value, backend=backend)(M) == shape_as_one_value(M)
