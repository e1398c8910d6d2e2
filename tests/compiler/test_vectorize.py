"""srcgrad.vectorize (issue 13, point 3): a function of numbers mapped over arrays with numpy's
broadcasting, in one compiled loop; its values against numpy.vectorize of the plain function,
its gradients (vectorize(grad(f))) against finite differences and torch, and its composition
with the other transformations."""
import math

import numpy as np
import pytest

import srcgrad
from tests.fuzz.validate import validate_vectorized

BACKENDS = ["llvm", "python"]


def bump(x, y):
    return math.sin(x) * math.exp(-y * y) + math.log1p(x * x)


def series(x, n):
    # exp(x) by its Taylor series, n terms: a loop and a branch per element
    term, total = 1.0, 1.0
    for k in range(1, n):
        term = term * x / k
        total += term
    if total < 0.0:
        total = 0.0
    return total


def polar(x, y):
    return math.hypot(x, y), math.atan2(y, x)


def sign(x):
    return 1 if x > 0.0 else -1


def pick(c, a, b):
    return a if c else b


def vector_valued(x):
    return np.ones(3) * x


SHAPES = [((5,), (5,)), ((3, 1), (4,)), ((2, 3, 4), (3, 1)), ((), (4,)), ((4,), ()), ((0,), (1,)),
          ((1, 1), (2, 3)), ((2, 3), (3,))]


def _points(shape, rng, low=-1.5, high=1.5):
    return float(rng.uniform(low, high)) if shape == () else rng.uniform(low, high, shape)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_broadcast_as_numpy_vectorize(backend, shapes):
    rng = np.random.default_rng(0)
    x, y = (_points(s, rng) for s in shapes)
    got = srcgrad.vectorize(bump, backend=backend)(x, y)
    expected = np.vectorize(bump, otypes=[np.float64])(x, y)
    assert got.shape == expected.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loops_branches_and_number_arguments(backend):
    x = np.linspace(-3.0, 2.0, 11).reshape(11, 1)
    n = np.array([1, 2, 5, 12])
    got = srcgrad.vectorize(series, backend=backend)(x, n)
    np.testing.assert_allclose(got, np.vectorize(series)(x, n), rtol=1e-14)
    # a number is passed to every call as it is
    np.testing.assert_allclose(srcgrad.vectorize(series, backend=backend)(x, 30), np.vectorize(series)(x, 30),
                               rtol=1e-14)
    np.testing.assert_allclose(srcgrad.vectorize(series, backend=backend)(x, 30), np.exp(x), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_several_results_int_results_and_bool_arguments(backend):
    x, y = np.array([1.0, -2.0, 0.5]), np.array([[0.0], [3.0]])
    r, theta = srcgrad.vectorize(polar, backend=backend)(x, y)
    np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-15)
    np.testing.assert_allclose(theta, np.arctan2(y, x), rtol=1e-15)
    s = srcgrad.vectorize(sign, backend=backend)(x)
    assert s.dtype == np.int64 and s.tolist() == [1, -1, 1]
    c = np.array([True, False, True])
    np.testing.assert_array_equal(srcgrad.vectorize(pick, backend=backend)(c, x, 7.0), np.where(c, x, 7.0))


def test_float32_in_float32_out():
    x32 = np.linspace(-1, 1, 7, dtype=np.float32)
    out = srcgrad.vectorize(bump)(x32, np.float32(0.5) * np.ones(7, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.vectorize(bump)(x32.astype(np.float64), 0.5), rtol=1e-6)
    assert srcgrad.vectorize(bump)(x32, np.ones(7)).dtype == np.float64         # float64 in: float64 out
    assert isinstance(srcgrad.vectorize(bump)(0.5, 0.25), float)                  # no array: a number


def _central(f, args, k, eps=1e-6):
    up = list(args)
    down = list(args)
    up[k], down[k] = args[k] + eps, args[k] - eps
    return (np.vectorize(f)(*up) - np.vectorize(f)(*down)) / (2 * eps)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vectorized_gradient_against_differences_and_torch(backend):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-2, 2, (4, 1)), rng.uniform(-2, 2, 6)
    dx, dy = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1), backend=backend), backend=backend)(x, y)
    assert dx.shape == dy.shape == (4, 6)
    np.testing.assert_allclose(dx, _central(bump, (x, y), 0), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(dy, _central(bump, (x, y), 1), rtol=1e-7, atol=1e-8)
    tx, ty = (torch.tensor(np.broadcast_to(a, (4, 6)).copy(), requires_grad=True) for a in (x, y))
    (torch.sin(tx) * torch.exp(-ty * ty) + torch.log1p(tx * tx)).sum().backward()
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dy, ty.grad.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vectorized_gradient_of_a_loop_and_second_derivative(backend):
    x = np.linspace(-1.0, 1.5, 9)
    d = srcgrad.vectorize(srcgrad.grad(series, backend=backend), backend=backend)(x, 15)
    np.testing.assert_allclose(d, _central(series, (x, 15), 0), rtol=1e-7)
    d2 = srcgrad.vectorize(srcgrad.grad(srcgrad.grad(bump)), backend=backend)(x, 0.3)
    np.testing.assert_allclose(d2, _central(srcgrad.vectorize(srcgrad.grad(bump)), (x, 0.3), 0), rtol=1e-6)
    h = srcgrad.vectorize(srcgrad.hessian(bump, wrt=(0, 1)), backend=backend)(x, 0.3)
    assert len(h) == 2 and len(h[0]) == 2
    np.testing.assert_allclose(h[0][0], d2, rtol=1e-13)
    np.testing.assert_allclose(h[0][1], h[1][0], rtol=1e-13)


def test_value_and_grad_gives_nested_results():
    x = np.array([0.1, 0.7])
    value, grads = srcgrad.vectorize(srcgrad.value_and_grad(bump, wrt=(0, 1)))(x, 0.5)
    np.testing.assert_allclose(value, np.vectorize(bump)(x, 0.5), rtol=1e-15)
    assert len(grads) == 2 and grads[0].shape == (2,) and grads[1].shape == (2,)


vectorized_bump = srcgrad.vectorize(bump)


vectorized_gradient = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))


def uses_vectorized(x, y):
    return np.sum(vectorized_bump(x, y) ** 2)


def uses_vectorized_gradient(x, y):
    gx, gy = vectorized_gradient(x, y)
    return np.dot(vectorized_gradient(x, y)[0], x) + np.sum(gy)


@pytest.mark.parametrize("backend", BACKENDS)
def test_composes_with_jit_vjp_and_grad(backend):
    x, y = np.linspace(-1, 1, 5), np.array([[0.2], [1.1], [-0.4]])
    np.testing.assert_array_equal(srcgrad.jit(vectorized_bump, backend=backend)(x, y), vectorized_bump(x, y))
    out, pullback = srcgrad.vjp(vectorized_bump, x, y, backend=backend)
    dx, dy = pullback(np.ones_like(out))
    gx, gy = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))(x, y)
    np.testing.assert_allclose(dx, gx.sum(axis=0), rtol=1e-14, atol=1e-15)          # the broadcast x's adjoint sums
    np.testing.assert_allclose(dy, gy.sum(axis=1, keepdims=True), rtol=1e-14, atol=1e-15)
    # a compiled function calling a vectorized one compiles its loop in place
    g = srcgrad.grad(uses_vectorized, wrt=(0, 1), backend=backend)
    ux, uy = g(x, y)
    value = vectorized_bump(x, y)
    np.testing.assert_allclose(ux, (2 * value * gx).sum(axis=0), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(uy, (2 * value * gy).sum(axis=1, keepdims=True), rtol=1e-13, atol=1e-15)
    assert "for" in g.ir and "call" not in g.adjoint_source
    # a vectorized gradient returns a tuple of arrays inside compiled code too
    x2 = np.linspace(-1, 1, 3)
    got = srcgrad.jit(uses_vectorized_gradient, backend=backend)(x2, 0.5)
    gx2, gy2 = vectorized_gradient(x2, 0.5)
    assert got == pytest.approx(np.dot(gx2, x2) + np.sum(gy2), rel=1e-14)


def test_inspection():
    v = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))
    v(np.ones(3), np.ones((2, 1)))
    assert "func bump_grad_vectorized" in v.ir and "for %i0" in v.ir and "for %i1" in v.ir
    assert "def bump_grad_vectorized(x, y):" in v.adjoint_source
    assert "bump_grad_vectorized" in v.llvm_ir
    assert repr(v) == "<srcgrad.vectorize of bump>"


def test_errors():
    with pytest.raises(ValueError, match=r"cannot be broadcast together: x \(3,\), y \(4,\)"):
        vectorized_bump(np.ones(3), np.ones(4))
    with pytest.raises(srcgrad.TypingError, match=r"returns f64\[1\](.|\n)*line \d+(.|\n)*np.ones\(3\) \* x"):
        srcgrad.vectorize(vector_valued)(np.ones(2))
    with pytest.raises(srcgrad.TypingError, match="argument 'x' is a tuple of 2"):
        vectorized_bump((1.0, 2.0), 1.0)
    with pytest.raises(ValueError, match="target must be"):
        srcgrad.vectorize(bump, target="gpu")
    # inside compiled code the same mismatch is the loop's own check
    with pytest.raises(AssertionError, match="cannot be broadcast"):
        srcgrad.grad(uses_vectorized)(np.ones(3), np.ones(4))


@pytest.mark.parametrize("fn, args", [
    (bump, (np.linspace(-1, 1, 4), np.array([[0.5], [-0.25]]))),
    (series, (np.linspace(-3, 1, 5), np.array([3, 8, 1, 2, 9]))),
    (polar, (np.array([1.0, -2.0]), 0.5)),
    (sign, (np.array([[0.5, -1.0, 0.0]]),)),
])
def test_translation_validation(fn, args):
    validate_vectorized(fn, args)
