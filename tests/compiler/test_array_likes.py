"""Arguments the way numpy functions take them (issue 15): numpy scalars and 0-d arrays act as
numbers where Python wants one (math functions, float(), a gradient's result), an array of
another rank there is numpy's TypeError, and a list passed to a numpy function is refused
with the rewrite to use."""
import math

import numpy as np
import pytest

import srcgrad


def square(x):
    return x * x


def sine(x):
    return math.sin(x) + float(x) * 2.0


def as_int(x):
    return int(x) + x


def summed(v):
    return np.sum(v)


def via_asarray(v):
    a = np.asarray(v)
    return np.sum(a * a)


@pytest.mark.parametrize("backend", ["llvm", "python"])
def test_zero_d_arrays_are_numbers_to_math_and_gradients(backend):
    x = np.array(0.7)
    assert srcgrad.jit(sine, backend=backend)(x) == pytest.approx(sine(x), rel=1e-15)
    g = srcgrad.grad(sine, backend=backend)(x)
    assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == np.float64     # the argument's type
    assert float(g) == pytest.approx(math.cos(0.7) + 2.0, rel=1e-14)
    assert float(srcgrad.grad(square, backend=backend)(np.array(1.5))) == pytest.approx(3.0, rel=1e-15)
    value, dx = srcgrad.value_and_grad(square, backend=backend)(np.array(1.5))
    assert value == pytest.approx(2.25) and float(dx) == pytest.approx(3.0)
    assert srcgrad.jit(as_int, backend=backend)(np.array(2.5)) == as_int(np.array(2.5))


def test_the_gradient_of_a_zero_d_array_matches_finite_differences():
    eps = 1e-6
    for x0 in (-1.3, 0.2, 2.0):
        fd = (sine(np.array(x0 + eps)) - sine(np.array(x0 - eps))) / (2 * eps)
        assert float(srcgrad.grad(sine)(np.array(x0))) == pytest.approx(fd, rel=1e-8)


def test_numpy_scalars_are_numbers():
    assert srcgrad.grad(square)(np.float64(1.5)) == 3.0
    assert srcgrad.grad(square)(np.float32(1.5)) == 3.0
    assert srcgrad.jit(square)(np.int64(3)) == 9


def test_an_array_where_python_wants_a_number_is_numpys_type_error():
    with pytest.raises(TypeError, match="int\\(\\) of a 1-d float64 array: only 0-dimensional arrays can be "
                                        "converted to Python scalars"):
        srcgrad.jit(as_int)(np.ones(3))
    with pytest.raises(TypeError, match="only 0-dimensional arrays can be converted to Python scalars"):
        as_int(np.ones(3))                   # what Python says
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="math.sin on an array(.|\n)*use np.sin"):
        srcgrad.jit(sine)(np.ones(3))


def test_a_list_given_to_a_numpy_function_is_refused_with_the_rewrite():
    with pytest.raises(srcgrad.TypingError, match=r"v is a list of 2, where a number or an array is needed "
                                                  r"\(numpy would make an array of it here: write np.asarray\(v\)\)"):
        srcgrad.jit(summed)([1.0, 2.0])
    assert srcgrad.grad(via_asarray)([1.0, 2.0]) == [2.0, 4.0]
