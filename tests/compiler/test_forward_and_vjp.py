"""Forward mode (jvp) and vjp: for every program, ⟨vjp(u), v⟩ = ⟨u, jvp(v)⟩ (the dot-product
test), jvp agrees with the gradient, and tuple results work."""
import math

import numpy as np
import pytest

import srcgrad

from .programs import CASES


def _tangent(a, seed):
    rng = np.random.default_rng(seed)
    if isinstance(a, np.ndarray):
        return rng.standard_normal(a.shape)
    return float(rng.standard_normal())


@pytest.mark.parametrize("name", sorted(CASES))
def test_dot_product(name):
    fn, args, _ = CASES[name]
    v = tuple(_tangent(a, k) for k, a in enumerate(args))
    y, ydot = srcgrad.jvp(fn, args, v)
    assert y == pytest.approx(fn(*args), rel=1e-12)
    u = 0.7
    y2, pullback = srcgrad.vjp(fn, *args)
    assert y2 == pytest.approx(y, rel=1e-12)     # sums may be reassociated differently (DESIGN.md)
    grads = pullback(u)
    lhs = sum(float(np.sum(g * t)) for g, t, a in zip(grads, v, args) if g is not None)
    assert lhs == pytest.approx(u * ydot, rel=1e-9, abs=1e-12)
    for g, a in zip(grads, args):
        if isinstance(a, (int, bool)) and not isinstance(a, float):
            assert g is None


def two_outputs(x, y):
    return math.sin(x) * y, x + y * y


def test_tuple_results():
    (a, b), (da, db) = srcgrad.jvp(two_outputs, (0.5, 2.0), (1.0, 0.0))
    assert da == pytest.approx(math.cos(0.5) * 2.0) and db == pytest.approx(1.0)
    (a2, b2), pullback = srcgrad.vjp(two_outputs, 0.5, 2.0)
    gx, gy = pullback(1.0, 0.0)
    assert gx == pytest.approx(math.cos(0.5) * 2.0) and gy == pytest.approx(math.sin(0.5))
    gx, gy = pullback((0.0, 1.0))
    assert gx == pytest.approx(1.0) and gy == pytest.approx(4.0)
    assert "def two_outputs_vjp(" in pullback.adjoint_source


def test_jvp_argument_count_mismatch():
    with pytest.raises(TypeError, match="2 primals but 1 tangents"):
        srcgrad.jvp(two_outputs, (0.5, 2.0), (1.0,))


def scale_array(x, w):
    y = x * w
    y[0] = y[0] + 1.0
    return y


def test_vjp_of_an_array_result_leaves_the_cotangent_alone():
    x = np.array([1.0, 2.0, 3.0])
    y, pullback = srcgrad.vjp(scale_array, x.copy(), 2.0)
    ct = np.array([1.0, 10.0, 100.0])
    keep = ct.copy()
    gx, gw = pullback(ct)
    np.testing.assert_array_equal(ct, keep)
    np.testing.assert_allclose(gx, ct * 2.0)
    assert gw == pytest.approx(float(np.dot(ct, x)))
    (y2, ydot) = srcgrad.jvp(scale_array, (x.copy(), 2.0), (np.ones(3), 0.5))
    np.testing.assert_allclose(ydot, 2.0 + 0.5 * x)


def writes_its_argument(x, v):
    v[0] = x * 2.0
    return v[0] * x + v[1]


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_jvp_leaves_the_callers_tangent_alone(backend):
    v, t = np.ones(3), np.full(3, 0.5)
    y, ydot = srcgrad.jvp(writes_its_argument, (1.5, v), (1.0, t), backend=backend)
    assert (y, ydot) == (5.5, 4 * 1.5 + 0.5)
    np.testing.assert_array_equal(v, [3.0, 1.0, 1.0])      # the primal is written, as in Python
    np.testing.assert_array_equal(t, [0.5, 0.5, 0.5])      # the tangent is the caller's, untouched


def test_jvp_leaves_the_callers_tangent_alone():
    from .programs import write_into_a_copy
    x, t = np.array([1.0, 2.0, 3.0]), np.ones(3)
    for backend in ("python", "llvm"):
        _, dy = srcgrad.jvp(write_into_a_copy, (x,), (t,), backend=backend)
        assert dy == 2 * 2 + 2 * 3 + 2 * (1 + 2 + 3)
        np.testing.assert_array_equal(t, np.ones(3))


def minus_from_a_constant_matrix(v):
    t = np.ones((2, 3)) - v
    return np.sum(t)


def constant_minus_number(c):
    return np.sum(np.ones(3) - c)


@pytest.mark.parametrize("backend", ["llvm", "python"])
def test_tangent_broadcast_to_the_shape_an_operand_without_tangent_gives(backend):
    # the result's shape comes from np.ones: the tangent of v (3,) or c () is broadcast to it
    # (it was left unbroadcast: -3 instead of -6, and a crash for a number)
    assert srcgrad.jvp(minus_from_a_constant_matrix, (np.ones(3),), (np.ones(3),), backend=backend)[1] == -6.0
    assert srcgrad.jvp(constant_minus_number, (0.5,), (1.0,), backend=backend)[1] == -3.0
