"""custom_vjp: the hand-written derivative is used, on its own and inside compiled code."""
import math
import threading

import numpy as np
import pytest

import srcgrad

calls = []


@srcgrad.custom_vjp
def softplus(x):
    return math.log1p(math.exp(x))


@softplus.defvjp
def softplus_vjp(x, y, gy):
    calls.append((x, y, gy))
    return (gy / (1.0 + math.exp(-x)),)


@srcgrad.custom_vjp
def clipped_identity(x, lo):
    return x


@clipped_identity.defvjp
def clipped_identity_vjp(x, lo, y, gy):
    return (max(min(gy, 1.0), -1.0), None)      # gradient clipping: a derivative that is not the math one


def model(x, w):
    s = 0.0
    for i in range(3):
        s += softplus(x * w + i)
    return clipped_identity(s, 0.0) * 10.0


@srcgrad.custom_vjp
def row_norms(X):
    return np.sqrt(np.sum(X * X, axis=1))


@row_norms.defvjp
def row_norms_vjp(X, r, gr):
    return (X * (gr / r)[:, None],)


def total_norm(X, scale):
    n = row_norms(X * scale)
    return np.sum(n * n) + np.sum(n)


@srcgrad.custom_vjp
def fragile(x):
    return math.sqrt(x)                  # runs as Python: ValueError for x < 0


@fragile.defvjp
def fragile_vjp(x, y, gy):
    return (None,)                       # wrong: x needs a gradient


def uses_fragile(x):
    return fragile(x) * 2.0


def test_grad_of_custom_function_uses_its_vjp():
    calls.clear()
    assert srcgrad.grad(softplus)(0.0) == pytest.approx(0.5)
    assert calls and calls[0][2] == 1.0


def test_custom_calls_inside_compiled_code():
    gx, gw = srcgrad.grad(model, wrt=(0, 1))(0.3, 0.5)
    # the cotangent 10.0 is clipped to 1.0 before it flows into the softplus derivatives
    sig = [1 / (1 + math.exp(-(0.3 * 0.5 + i))) for i in range(3)]
    assert gx == pytest.approx(sum(sig) * 0.5) and gw == pytest.approx(sum(sig) * 0.3)
    assert srcgrad.jit(model)(0.3, 0.5) == pytest.approx(model(0.3, 0.5))
    df = srcgrad.grad(model)
    df(0.3, 0.5)
    assert "softplus_vjp(" in df.adjoint_source


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_custom_functions_run_on_both_backends(backend):
    gx, gw = srcgrad.grad(model, wrt=(0, 1), backend=backend)(0.3, 0.5)
    sig = [1 / (1 + math.exp(-(0.3 * 0.5 + i))) for i in range(3)]
    assert gx == pytest.approx(sum(sig) * 0.5) and gw == pytest.approx(sum(sig) * 0.3)
    X = np.arange(1.0, 7.0).reshape(3, 2)
    g = srcgrad.grad(total_norm, backend=backend)(X, 0.5)
    n = 0.5 * np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(g, (2 * n + 1)[:, None] * 0.5 * (0.5 * X) / n[:, None], rtol=1e-12)


def test_the_llvm_backend_calls_python_for_custom_functions_and_passes_their_errors_on():
    f = srcgrad.jit(uses_fragile, backend="llvm")
    assert f(0.25) == 1.0
    with pytest.raises(ValueError, match="math domain error"):
        f(-2.0)
    with pytest.raises(srcgrad.TypingError, match="returned None for argument 0, whose gradient is needed"):
        srcgrad.grad(uses_fragile, backend="llvm")(0.5)


def test_custom_calls_from_threads_at_once():
    g = srcgrad.grad(model, wrt=(0, 1), backend="llvm")
    expected = g(0.3, 0.5)
    results = []

    def work():
        for _ in range(50):
            results.append(g(0.3, 0.5))
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 400 and all(r == expected for r in results)


def test_jvp_through_custom_vjp_is_refused():
    with pytest.raises(srcgrad.TypingError, match="custom_vjp function has a reverse-mode derivative only"):
        srcgrad.jvp(model, (0.3, 0.5), (1.0, 0.0))


def test_vjp_undefined_is_a_clear_error():
    @srcgrad.custom_vjp
    def f(x):
        return x

    def g(x):
        return f(x) * 2.0

    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="before its vjp is defined"):
        srcgrad.grad(g)(1.0)
