"""For every construct: the compiled gradient equals central finite differences (float64,
tight tolerance), value_and_grad's value and jit's result equal plain Python."""
import numpy as np
import pytest

import srcgrad

from .programs import CASES


def _indices(fn, wrt):
    import inspect
    names = list(inspect.signature(fn).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w for w in items]


def numeric_gradient(fn, args, i, eps=1e-6):
    args = list(args)
    x = args[i]
    if isinstance(x, np.ndarray):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[k] += eps
            down[k] -= eps
            g[k] = (fn(*args[:i], up, *args[i + 1:]) - fn(*args[:i], down, *args[i + 1:])) / (2 * eps)
        return g
    return (fn(*args[:i], x + eps, *args[i + 1:]) - fn(*args[:i], x - eps, *args[i + 1:])) / (2 * eps)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    fn, args, wrt = CASES[name]
    grads = srcgrad.grad(fn, wrt=wrt)(*args)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    for i, g in zip(_indices(fn, wrt), grads):
        expected = numeric_gradient(fn, args, i)
        assert type(g) is type(args[i]) or (isinstance(args[i], float) and isinstance(g, float))
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_jit_match_python(name):
    fn, args, wrt = CASES[name]
    value, _ = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert srcgrad.jit(fn)(*args) == pytest.approx(fn(*args), rel=1e-12)


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("name", sorted(CASES))
def test_llvm_backend_agrees_with_python_backend(name):
    """Native code computes the same numbers as the python backend (relative 1e-12)."""
    fn, args, wrt = CASES[name]
    native = srcgrad.value_and_grad(fn, wrt=wrt, backend="llvm")
    try:
        value, grads = native(*_fresh(args))
    except NotImplementedError as e:
        assert "whole-array operation" in str(e)
        pytest.skip("whole-array operations: the llvm backend's next step")
    ref_value, ref_grads = srcgrad.value_and_grad(fn, wrt=wrt, backend="python")(*_fresh(args))
    assert value == pytest.approx(ref_value, rel=1e-12, abs=1e-300)
    for a, b in zip(grads if isinstance(grads, tuple) else (grads,),
                    ref_grads if isinstance(ref_grads, tuple) else (ref_grads,)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        assert type(a) is type(b)
    assert srcgrad.jit(fn, backend="llvm")(*_fresh(args)) == pytest.approx(fn(*_fresh(args)), rel=1e-12)
    assert "define" in native.llvm_ir


def test_llvm_backend_raises_python_errors():
    def f(a, b):
        assert a > -100, "a must be above -100"
        return a // b
    native = srcgrad.jit(f, backend="llvm")
    assert native(7, 2) == 3 and native(-7, 2) == -4
    with pytest.raises(ZeroDivisionError):
        native(7, 0)
    with pytest.raises(AssertionError, match="a must be above -100"):
        native(-101, 2)


def _read(x, i):
    return x[i] * 2.0


def _strided_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s += x[i, j] * (i + 1) - x[-1, -1]
    return s


def test_llvm_backend_bounds_checks_and_negative_indices():
    f = srcgrad.jit(_read, backend="llvm")
    x = np.array([1.0, 2.0, 3.0])
    assert f(x, -1) == 6.0 and f(x, 0) == 2.0
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 0 of 'x' with size 3 \(.*test_gradients"):
        f(x, 5)
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        f(x, -4)


def test_llvm_backend_reads_non_contiguous_arrays_without_copying():
    base = np.arange(24.0).reshape(4, 6)
    view = base[::2, 1::2]                 # strided in both dimensions
    assert not view.flags.c_contiguous
    assert srcgrad.jit(_strided_sum, backend="llvm")(view) == pytest.approx(_strided_sum(view), rel=1e-15)
    g = srcgrad.grad(_strided_sum, backend="llvm")(view)
    np.testing.assert_allclose(g, srcgrad.grad(_strided_sum)(view.copy()), rtol=1e-12)
    assert g.shape == view.shape


def test_boundscheck_false_trusts_indices():
    f = srcgrad.jit(_read, backend="llvm", boundscheck=False)
    x = np.array([1.0, 2.0, 3.0])
    assert f(x, 1) == 4.0 and f(x, -1) == 6.0
    assert "index.error" not in f.llvm_ir
    g = srcgrad.grad(_strided_sum, boundscheck=False)
    view = np.arange(24.0).reshape(4, 6)[::2, 1::2]
    np.testing.assert_allclose(g(view), srcgrad.grad(_strided_sum, backend="python")(view.copy()), rtol=1e-12)
