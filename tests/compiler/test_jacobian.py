"""srcgrad.jacobian, jacfwd and jacrev (issue 13, point 2): shapes out.shape + x.shape, values
against torch (an independent tool), the three modes agreeing, one compiled call."""
import math

import numpy as np
import pytest

import srcgrad

MODES = ["fwd", "rev", "auto"]


def scan(x, w):
    y = np.zeros(6)
    for i in range(6):
        y[i] = math.sin(x[i % x.shape[0]] * w) + x[0] * i
    return y * w


def matrix_valued(X):
    return np.tanh(X) @ X.T


def cube_sum(x):
    return np.sum(x ** 3)


@pytest.mark.parametrize("backend", ["llvm", "python"])
@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_a_loop_against_torch(mode, backend):
    torch = pytest.importorskip("torch")
    x, w = np.array([0.3, -1.2, 0.8]), 0.7
    jx, jw = srcgrad.jacobian(scan, wrt=(0, 1), mode=mode, backend=backend)(x, w)
    assert jx.shape == (6, 3) and jw.shape == (6,)

    def twin(tx, tw):
        return torch.stack([torch.sin(tx[i % tx.shape[0]] * tw) + tx[0] * i for i in range(6)]) * tw
    tx, tw = torch.autograd.functional.jacobian(twin, (torch.tensor(x), torch.tensor(w, dtype=torch.float64)))
    np.testing.assert_allclose(jx, tx.numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jw, tw.numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(srcgrad.jacobian(scan, mode=mode, backend=backend)(x, w), jx)


@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_a_matrix_function_has_shape_out_shape_plus_x_shape(mode):
    torch = pytest.importorskip("torch")
    X = np.array([[0.3, -0.5, 0.9], [1.2, 0.1, -0.7]])
    J = srcgrad.jacobian(matrix_valued, mode=mode)(X)
    assert J.shape == (2, 2, 2, 3)
    want = torch.autograd.functional.jacobian(lambda t: torch.tanh(t) @ t.T, torch.tensor(X)).numpy()
    np.testing.assert_allclose(J, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_a_scalar_function_is_its_gradient(mode):
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(srcgrad.jacobian(cube_sum, mode=mode)(x), 3 * x ** 2, rtol=1e-15)


def test_jacfwd_and_jacrev_are_the_modes():
    x, w = np.array([0.3, -1.2, 0.8]), 0.7
    np.testing.assert_array_equal(srcgrad.jacfwd(scan)(x, w), srcgrad.jacobian(scan, mode="fwd")(x, w))
    np.testing.assert_array_equal(srcgrad.jacrev(scan)(x, w), srcgrad.jacobian(scan, mode="rev")(x, w))


def test_auto_picks_the_mode_by_sizes_and_compiles_only_that_one():
    j = srcgrad.jacobian(scan)
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(j(x, 0.5), srcgrad.jacobian(scan, mode="rev")(x, 0.5), rtol=1e-14)
    assert j.chosen_modes == {((3,), float): "fwd"}          # 3 inputs <= 6 outputs: columns
    assert set(j._modes) == {"jit", "fwd"}                   # the function itself (for the sizes), forward mode
    assert "def scan_jacobian(x, w):" in j.adjoint_source and "if forward:" not in j.adjoint_source
    wide = np.linspace(0.1, 0.9, 8)                          # 8 inputs > 6 outputs: rows
    np.testing.assert_allclose(j(wide, 0.5), srcgrad.jacobian(scan, mode="fwd")(wide, 0.5), rtol=1e-14)
    assert j.chosen_modes[((8,), float)] == "rev" and set(j._modes) == {"jit", "fwd", "rev"}
    j(x, 0.7)                                                # known shapes: no run of the function
    assert len(j.chosen_modes) == 2


SCAN_JACOBIAN = srcgrad.jacobian(scan)


def jacobian_inside(x, w):
    return SCAN_JACOBIAN(x, w) * 2.0


def test_auto_compiled_into_other_code_decides_at_run_time():
    inside = srcgrad.jit(jacobian_inside)
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(inside(x, 0.5), 2.0 * srcgrad.jacobian(scan, mode="rev")(x, 0.5), rtol=1e-14)
    assert "if forward:" in inside.adjoint_source


def test_jacobian_errors():
    def two_results(x):
        return x * 2.0, np.sum(x)
    with pytest.raises(srcgrad.TypingError, match="returning one float or float array"):
        srcgrad.jacobian(two_results)(np.ones(3))
    with pytest.raises(ValueError, match="mode must be"):
        srcgrad.jacobian(scan, mode="forward")


@pytest.mark.parametrize("mode", MODES)
def test_jacobian_columns_are_jvps(mode):
    x, w = np.array([0.3, -1.2, 0.8]), 0.7
    jx = srcgrad.jacobian(scan, mode=mode)(x, w)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        _, column = srcgrad.jvp(scan, (x, w), (e, 0.0))
        np.testing.assert_allclose(jx[:, k], column, rtol=1e-15, atol=1e-15)
