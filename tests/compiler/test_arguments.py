"""Arguments bind as in Python (issue 9, item 11): defaults, keywords and keyword-only
parameters, for the compiled function and for the functions it calls; wrong calls raise
Python's TypeError."""
import numpy as np
import pytest

import srcgrad


def helper(a, b=0.5, *, c=2.0):
    return a * b + c


def f(x, y=3.0, *, scale=2.0):
    return helper(x, c=y) * scale + helper(y, b=x)


def many(a, b, c, d, e, f=1.0, g=2.0):
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g


def with_array_default(x, w=np.array([1.0, 2.0])):
    return x * np.sum(w)


BACKENDS = ("python", "llvm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args, kwargs", [((1.5,), {}), ((1.5, 0.25), {}), ((1.5,), {"scale": -1.0}),
                                          ((), {"x": 0.7, "y": 2.0}), ((0.7,), {"scale": 3, "y": -1.0})])
def test_defaults_and_keywords_of_the_compiled_function(backend, args, kwargs):
    assert srcgrad.jit(f, backend=backend)(*args, **kwargs) == pytest.approx(f(*args, **kwargs), rel=1e-15)
    dx, dy = srcgrad.grad(f, wrt=(0, 1), backend=backend)(*args, **kwargs)
    bound = {"x": 0.7, "y": 3.0, "scale": 2.0}
    bound.update(zip(("x", "y"), args))
    bound.update(kwargs)
    x, y, scale = bound["x"], bound["y"], float(bound["scale"])
    assert dx == pytest.approx(0.5 * scale + y) and dy == pytest.approx(scale + x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_seven_parameters_five_given(backend):
    assert srcgrad.jit(many, backend=backend)(1., 1., 1., 1., 1.) == many(1., 1., 1., 1., 1.)
    assert srcgrad.jit(many, backend=backend)(1., 1., 1., 1., e=2.0, g=0.5) == many(1., 1., 1., 1., e=2.0, g=0.5)
    assert srcgrad.grad(many, wrt="g", backend=backend)(1., 1., 1., 1., 1.) == 7.0


def test_a_default_array_is_read_at_compile_time_like_a_global():
    assert srcgrad.jit(with_array_default)(2.0) == 6.0
    assert srcgrad.jit(with_array_default)(2.0, np.ones(2)) == 4.0


def test_wrong_calls_raise_pythons_type_error():
    with pytest.raises(TypeError, match=r"f\(\): got an unexpected keyword argument 'z'"):
        srcgrad.jit(f)(1.5, z=3.0)
    with pytest.raises(TypeError, match=r"many\(\): missing a required argument: 'e'"):
        srcgrad.jit(many)(1.0, 2.0, 3.0, 4.0)
    with pytest.raises(TypeError, match="multiple values"):
        srcgrad.grad(f)(1.0, x=2.0)


def calls_with_a_wrong_keyword(x):
    return helper(x, d=3.0)


def test_a_called_function_with_a_wrong_keyword_names_the_call():
    with pytest.raises(srcgrad.TypingError, match=r"helper\(\): got an unexpected keyword argument 'd'") as e:
        srcgrad.jit(calls_with_a_wrong_keyword)(1.0)
    assert "return helper(x, d=3.0)" in str(e.value)


def star_args(x, *rest, scale=1.0, **named):
    return x * scale + sum(v * v for v in rest) + sum(named.values())


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_star_args_and_kwargs_of_the_compiled_function(backend):
    assert srcgrad.jit(star_args, backend=backend)(1.0) == 1.0
    assert srcgrad.jit(star_args, backend=backend)(1.0, 2.0, 3.0, scale=2.0, a=4.0) == 19.0
    g = srcgrad.grad(star_args, wrt=(0, 1, 3), backend=backend)(1.0, 2.0, 3.0, scale=2.0, a=4.0)
    assert g == (2.0, (4.0, 6.0), {"a": 1.0})
    assert srcgrad.grad(star_args, wrt="rest", backend=backend)(1.0, 2.0, 3.0) == (4.0, 6.0)


def test_vjp_and_jvp_fill_in_defaults():
    y, pullback = srcgrad.vjp(f, 1.5)
    assert y == f(1.5)
    (dx,) = pullback(1.0)
    assert dx == pytest.approx(0.5 * 2.0 + 3.0)
    y, ydot = srcgrad.jvp(f, (1.5,), (1.0,))
    assert (y, ydot) == (f(1.5), pytest.approx(0.5 * 2.0 + 3.0))
