"""Functions inside compiled code (issue 11, item 2): lambdas and nested `def` (closures over
the compiled function's variables, compiled in place), default values and keyword arguments,
`*args`/`**kwargs` of fixed length, functions passed as values, and recursion bounded by
constant arguments. Values against plain Python, gradients against finite differences and
PyTorch, on both backends."""
import math

import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")


def apply(g, v):
    return g(v)


cube = lambda t, k=1.0: k * t ** 3      # noqa: E731 (a module-level lambda)


def closures(x, k):
    square = lambda z: z * z                          # noqa: E731 (what users write)
    scale = lambda v, p=2.0: k * v ** p               # noqa: E731

    def both(*vs, extra=0.0, **named):
        return sum(scale(v) for v in vs) + extra + named["bias"]

    a = 2.0

    def late(z):
        return a * z                                  # reads a as it is at the call

    a = 3.0
    fs = [lambda v: v * 2.0, square]
    return (square(x) + apply(square, 2.0 * x) + both(x, 2.0 * x, extra=x, bias=k) + late(x)
            + sum(f(x) for f in fs) + apply(np.tanh, x) + apply(math.sin, k * x) + cube(x, k=2.0))


def closures_torch(x, k):
    return (x * x + (2 * x) ** 2 + (k * x ** 2 + k * (2 * x) ** 2 + x + k) + 3.0 * x + (2 * x + x * x)
            + torch.tanh(x) + torch.sin(k * x) + 2.0 * x ** 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lambdas_and_nested_functions(backend):
    x, k = 0.7, 1.3
    assert srcgrad.jit(closures, backend=backend)(x, k) == pytest.approx(closures(x, k), rel=1e-14)
    gx, gk = srcgrad.grad(closures, wrt=(0, 1), backend=backend)(x, k)
    tx, tk = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, k))
    ex, ek = torch.autograd.grad(closures_torch(tx, tk), (tx, tk))
    assert closures_torch(tx, tk).item() == pytest.approx(closures(x, k), rel=1e-14)     # the oracle is right
    assert (gx, gk) == pytest.approx((ex.item(), ek.item()), rel=1e-12)
    assert gx == pytest.approx(numeric_gradient(closures, (x, k), 0), rel=1e-6)


def nested_over_arrays(w, X):
    def predict(row):
        return np.tanh(np.dot(row, w))

    def loss(rows, target=0.5):
        total = 0.0
        for r in rows:
            total += (predict(r) - target) ** 2
        return total
    return loss(X) + loss(X, target=-0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_functions_on_arrays(backend):
    rng = np.random.default_rng(3)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    assert srcgrad.jit(nested_over_arrays, backend=backend)(w, X) == pytest.approx(nested_over_arrays(w, X))
    g = srcgrad.grad(nested_over_arrays, backend=backend)(w, X)
    np.testing.assert_allclose(g, numeric_gradient(nested_over_arrays, (w, X), 0), rtol=1e-6)


def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


def power(x, n):
    if n == 0:
        return 1.0
    half = power(x, n // 2)
    return half * half * (x if n % 2 == 1 else 1.0)


def bounded_recursion(x):
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
    return factorial(5) * x + power(x, 7) + fib(8) * x * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_recursion_bounded_by_constant_arguments(backend):
    x = 1.1
    assert srcgrad.jit(bounded_recursion, backend=backend)(x) == pytest.approx(bounded_recursion(x), rel=1e-14)
    assert srcgrad.grad(bounded_recursion, backend=backend)(x) == pytest.approx(120 + 7 * x ** 6 + 2 * 21 * x,
                                                                                rel=1e-12)


def unbounded_recursion(x, n):
    return factorial(n) * x


def function_defined_in_a_branch(x):
    if x > 0.0:
        def g(v):
            return v
    else:
        def g(v):
            return -v
    return g(x)


def function_rebound_in_a_loop(x, n):
    g = np.sin
    for i in range(n):       # compiled, this once kept np.sin silently (a wrong value)
        g = np.cos
    return g(x)


def same_function_rebound_in_a_loop(x, n):
    g = np.sin
    for i in range(n):
        g = np.sin
        x = g(x)
    return x


def calls_a_number(x):
    k = 2.0
    return k(x)


def function_as_a_value(x):
    g = lambda v: v          # noqa: E731
    return g + x


def wrong_arguments(x):
    g = lambda a, b=1.0: a * b      # noqa: E731
    return g(x, 2.0, 3.0)


@pytest.mark.parametrize("fn,args,error,message", [
    (unbounded_recursion, (1.0, 3), srcgrad.UnsupportedSyntaxError, "recursion deeper than 32 calls"),
    (function_defined_in_a_branch, (1.0,), srcgrad.UnsupportedSyntaxError, "a function 'g' that an `if` defines"),
    (function_rebound_in_a_loop, (1.0, 2), srcgrad.UnsupportedSyntaxError, "a function 'g' that a loop rebinds"),
    (calls_a_number, (1.0,), srcgrad.TypingError, "'k' is a float, not a function"),
    (function_as_a_value, (1.0,), srcgrad.TypingError, "g is a function, where a number or an array is needed"),
    (wrong_arguments, (1.0,), srcgrad.TypingError, "too many positional arguments"),
])
def test_refusals_name_the_line(fn, args, error, message):
    with pytest.raises(error, match=message) as info:
        srcgrad.grad(fn)(*args)
    assert "test_functions.py" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_may_bind_the_same_function_again(backend):
    assert srcgrad.jit(same_function_rebound_in_a_loop, backend=backend)(0.5, 3) == np.sin(np.sin(np.sin(0.5)))


def same_function_in_both_branches(x):
    if x > 0.0:
        g = np.sin
        d = np.float64
    else:
        g = np.sin
        d = np.float64
    return g(x) + np.sum(np.ones(2, dtype=d))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_if_may_bind_the_same_function_or_dtype_in_both_branches(backend):
    """Bound to one function (or dtype) on both paths, the name keeps it after the `if` (it was
    reported as maybe unbound)."""
    assert srcgrad.jit(same_function_in_both_branches, backend=backend)(0.5) == np.sin(0.5) + 2.0
