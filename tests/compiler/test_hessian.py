"""srcgrad.hessian and srcgrad.hvp (issue 13, point 2): shapes, values against torch (an
independent tool) and against differences of the gradient, symmetry, one compiled call."""
import math

import numpy as np
import pytest

import srcgrad

BACKENDS = ["llvm", "python"]


def quadratic(x, A):
    return x @ A @ x


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def mixed(x, w):
    h = np.tanh(x * w)
    for i in range(x.shape[0]):
        h = h * np.cos(h) + x[i] * w
    return np.sum(h * h) + math.sin(w) * np.dot(x, x)


def on_matrix(X):
    return np.sum(np.tanh(X) ** 2) + X[0, 1] * X[1, 0] * X[1, 2]


def _difference_hessian(g, x, eps=1e-6):
    """Row k: the central difference of the gradient along e_k (a flat x)."""
    rows = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        rows.append((np.asarray(g(x + e)) - np.asarray(g(x - e))).ravel() / (2 * eps))
    return np.array(rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_quadratic_form(backend):
    rng = np.random.default_rng(0)
    x, A = rng.standard_normal(5), rng.standard_normal((5, 5))
    H = srcgrad.hessian(quadratic, backend=backend)(x, A)
    assert H.shape == (5, 5) and H.dtype == np.float64
    np.testing.assert_allclose(H, A + A.T, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_loop_against_torch(backend):
    torch = pytest.importorskip("torch")
    x = np.array([0.3, -1.2, 0.8, 1.1, -0.4])
    H = srcgrad.hessian(rosenbrock, backend=backend)(x)

    def twin(t):
        return sum(100.0 * (t[i + 1] - t[i] ** 2) ** 2 + (1.0 - t[i]) ** 2 for i in range(t.shape[0] - 1))
    want = torch.autograd.functional.hessian(twin, torch.tensor(x)).numpy()
    np.testing.assert_allclose(H, want, rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(H, H.T)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_blocks_of_two_arguments(backend):
    torch = pytest.importorskip("torch")
    x, w = np.array([0.3, -0.5, 0.9]), 0.4
    (hxx, hxw), (hwx, hww) = srcgrad.hessian(mixed, wrt=(0, 1), backend=backend)(x, w)
    assert hxx.shape == (3, 3) and hxw.shape == (3,) and hwx.shape == (3,) and isinstance(hww, float)

    def twin(tx, tw):
        h = torch.tanh(tx * tw)
        for i in range(tx.shape[0]):
            h = h * torch.cos(h) + tx[i] * tw
        return torch.sum(h * h) + torch.sin(tw) * torch.dot(tx, tx)
    (txx, txw), (twx, tww) = torch.autograd.functional.hessian(twin, (torch.tensor(x), torch.tensor(w, dtype=torch.float64)))
    for got, want in ((hxx, txx), (hxw, txw), (hwx, twx), (hww, tww)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-13)
    assert srcgrad.hessian(mixed, wrt=1, backend=backend)(x, w) == pytest.approx(hww, rel=1e-14)


def test_hessian_of_a_matrix_argument_has_shape_x_shape_twice():
    X = np.array([[0.3, -0.5, 0.9], [1.2, 0.1, -0.7]])
    H = srcgrad.hessian(on_matrix)(X)
    assert H.shape == (2, 3, 2, 3)
    want = _difference_hessian(srcgrad.grad(on_matrix), X).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(H, want, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(H, H.transpose(2, 3, 0, 1), rtol=1e-14, atol=1e-15)


def test_hessian_of_a_float_is_a_float():
    def cube_sin(x):
        return math.sin(x) * x ** 3
    # d²/dx² (x³ sin x) = 6x sin x + 6x² cos x - x³ sin x
    h = srcgrad.hessian(cube_sin)(0.7)
    assert isinstance(h, float)
    assert h == pytest.approx(6 * 0.7 * math.sin(0.7) + 6 * 0.49 * math.cos(0.7) - 0.343 * math.sin(0.7), rel=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hvp_is_the_hessian_times_v(backend):
    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(6), rng.standard_normal(6)
    hv = srcgrad.hvp(rosenbrock, backend=backend)(x, v)
    np.testing.assert_allclose(hv, srcgrad.hessian(rosenbrock)(x) @ v, rtol=1e-12, atol=1e-11)
    (hx, hw) = srcgrad.hvp(mixed, wrt=(0, 1), backend=backend)(x[:3], 0.4, (v[:3], 0.5))
    (hxx, hxw), (hwx, hww) = srcgrad.hessian(mixed, wrt=(0, 1))(x[:3], 0.4)
    np.testing.assert_allclose(hx, hxx @ v[:3] + hxw * 0.5, rtol=1e-12, atol=1e-13)
    assert hw == pytest.approx(hwx @ v[:3] + hww * 0.5, rel=1e-12)


def test_hessian_is_one_compiled_loop_over_basis_vectors():
    h = srcgrad.hessian(rosenbrock)
    h(np.ones(4))
    source = h.adjoint_source
    assert "def rosenbrock_hessian(x):" in source and "for k in range(" in source
    assert "rosenbrock_hessian" in h.llvm_ir
    assert "func rosenbrock_hessian(" in h.ir


def test_hvp_and_hessian_errors():
    with pytest.raises(TypeError, match="then the direction v"):
        srcgrad.hvp(rosenbrock)(np.ones(3))
    with pytest.raises(TypeError, match="2 directions"):
        srcgrad.hvp(mixed, wrt=(0, 1))(np.ones(3), 0.4, (np.ones(3),))

    def with_prod(x):
        return np.prod(x)
    with pytest.raises(srcgrad.TypingError, match="np.prod"):
        srcgrad.hessian(with_prod)(np.ones(3))


def writes_its_argument(x, c):
    x[0] += np.tanh(c + np.sum(x))
    return np.sum(np.sin(x) * x) * c


def test_matrices_are_taken_at_the_arguments_on_entry():
    # each run of the HVP (or jvp, vjp) in the loop starts from x as it was on entry; the caller's
    # x is left as one call of the function leaves it
    x0 = np.array([0.3, -0.5, 0.9])
    g = srcgrad.grad(writes_its_argument)
    want = _difference_hessian(lambda x: g(x.copy(), 0.7), x0)
    for build in (srcgrad.hessian, lambda f: srcgrad.jacobian(srcgrad.grad(f))):
        x = x0.copy()
        H = build(writes_its_argument)(x, 0.7)
        np.testing.assert_allclose(H, want, rtol=1e-7, atol=1e-7)
        left = x0.copy()
        writes_its_argument(left, 0.7)
        np.testing.assert_allclose(x, left, rtol=1e-15)


def spectral(X, w):
    return w * w * np.linalg.norm(X, 2)


def chol_logdet(A, w):
    return w * np.sum(np.log(np.diag(np.linalg.cholesky(A))))


def test_second_derivatives_in_a_matrix_through_its_factorisations_are_a_clear_error():
    # the gradient of the singular values and of a Cholesky factor recompute the factorisation;
    # its derivative in the matrix is not built: a clear error naming the line (once a silent 0)
    X = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.0, 0.4, 1.0], [0.2, 0.1, 0.3]])
    with pytest.raises(srcgrad.TypingError, match=r"singular values(.|\n)*line \d+(.|\n)*np.linalg.norm\(X, 2\)"):
        srcgrad.hessian(spectral)(X, 0.7)
    A = X.T @ X + np.eye(3)
    with pytest.raises(srcgrad.TypingError, match=r"np.linalg.cholesky with respect to the matrix"):
        srcgrad.hvp(chol_logdet)(A, 0.7, np.ones((3, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_second_derivatives_through_factorisations_in_the_other_argument(backend):
    # d/dw of the gradient in X: the factorisation's gradient is linear in what flows into it
    X = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.0, 0.4, 1.0], [0.2, 0.1, 0.3]])
    g = srcgrad.grad(spectral, wrt=0, backend=backend)
    mixed = srcgrad.jacobian(g, wrt=1, mode="fwd", backend=backend)(X, 0.7)
    np.testing.assert_allclose(mixed, (g(X, 0.7 + 1e-6) - g(X, 0.7 - 1e-6)) / 2e-6, rtol=1e-7, atol=1e-9)
    A = X.T @ X + np.eye(3)
    gc = srcgrad.grad(chol_logdet, wrt=0, backend=backend)
    mixed = srcgrad.jacobian(gc, wrt=1, mode="fwd", backend=backend)(A, 0.7)
    np.testing.assert_allclose(mixed, (gc(A, 0.7 + 1e-6) - gc(A, 0.7 - 1e-6)) / 2e-6, rtol=1e-7, atol=1e-9)
