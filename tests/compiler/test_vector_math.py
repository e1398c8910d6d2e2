"""Vectorised loops call glibc's libmvec for their math (backends/llvm/vector_math.py): the
renaming, and results within a few ulp of libm's (numpy's) on both sides of every branch of
those functions' argument reduction (large, tiny, negative, special values)."""
import math
import re

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm import vector_math


def many(x, y):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        a = x[i]
        out[i] = math.sin(a) + math.cos(a) * math.exp(-abs(a) * 0.01) + math.tanh(a) + \
            math.pow(abs(y[i]) + 0.5, 1.5) + math.log(abs(a) + 1e-300) + math.sinh(math.tanh(a) * 3.0) + math.atan(a)
    return out


def test_renames_only_what_libmvec_has():
    srcgrad.jit(many)(np.ones(4), np.ones(4))         # the first compile loads libmvec
    if not vector_math.enabled():
        pytest.skip("no libmvec on this machine (or SRCGRAD_VECTOR_MATH=0): nothing is renamed")
    text = "%y = call <4 x double> @llvm.sin.v4f64(<4 x double> %x)\n%z = call double @llvm.sin.f64(double %w)"
    renamed = vector_math.rename(text)
    assert "@_ZGVdN4v_sin(" in renamed and "@llvm.sin.f64(" in renamed        # a scalar call stays libm's
    assert vector_math.rename("@llvm.pow.v4f64(") == "@_ZGVdN4vv_pow("
    assert vector_math.rename("@llvm.floor.v4f64(") == "@llvm.floor.v4f64("       # not a libmvec function


def test_vectorised_math_is_within_a_few_ulp_of_numpy():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-10, 10, 4000), rng.uniform(-1e6, 1e6, 1000), rng.uniform(-1e-8, 1e-8, 1000),
                        [0.0, -0.0, 1e300, -1e300, 5e-324, np.pi, -np.pi / 2, 700.0, -745.0, 1e22]])
    y = rng.uniform(-3, 3, x.shape[0])
    f = srcgrad.jit(many)
    got = f(x, y)
    expected = many(x, y)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    if vector_math.enabled():
        # the width is LLVM's choice for this CPU: 4 lanes (AVX2, "d") on one, 8 (AVX-512, "e") on another
        for name in ("sin", "cos", "exp", "tanh", "pow", "log", "sinh", "atan"):
            v = "vv" if name in ("atan2", "pow") else "v"
            assert re.search(rf"@_ZGV(bN2|dN4|eN8){v}_{name}\(", f.llvm_ir), name


def test_gradients_of_vectorised_loops_against_the_python_backend():
    x = np.linspace(-3, 3, 101)
    y = np.linspace(0.5, 2, 101)
    g = srcgrad.vjp(many, x, y)[1](np.ones(101))
    p = srcgrad.vjp(many, x, y, backend="python")[1](np.ones(101))
    for a, b in zip(g, p):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
