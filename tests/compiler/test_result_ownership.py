"""Which memory a compiled function's array results use (backends/marshal.py, llvm/arena.py):
a new array owns the block the call allocated, whether the call allocated a few blocks (looked
up in a set) or many (in numpy arrays); an argument comes back as itself, a view of one as a
view; and nothing the call allocated outlives its results."""
import gc

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm.arena import _SMALL


def new_and_views(x, n):
    acc = np.zeros(3)
    for i in range(n):
        acc = acc + np.tanh(x[:3] * i)       # a new array each round: the arena grows by n blocks
    return acc, x, x[1:], x.T, acc * 2.0


@pytest.mark.parametrize("n", [1, _SMALL + 10])
def test_results_own_new_blocks_and_view_arguments(n):
    f = srcgrad.jit(new_and_views, backend="llvm")
    x = np.linspace(0.0, 1.0, 5)
    acc, same, tail, tr, twice = f(x, n)
    want = sum(np.tanh(x[:3] * i) for i in range(n))
    np.testing.assert_allclose(acc, want, rtol=1e-13)
    np.testing.assert_allclose(twice, 2 * want, rtol=1e-13)
    assert same is x
    assert np.shares_memory(tail, x) and np.shares_memory(tr, x)
    assert not np.shares_memory(acc, x) and not np.shares_memory(acc, twice)
    x[1] = 7.0
    assert tail[0] == 7.0 and tr[1] == 7.0          # views, not copies
    del acc, twice
    gc.collect()
    again = f(x, n)[0]                              # the freed blocks are reused safely
    np.testing.assert_allclose(again, sum(np.tanh(x[:3] * i) for i in range(n)), rtol=1e-13)


@pytest.mark.parametrize("n", [2, _SMALL + 10])
def test_a_gradient_of_many_taped_arrays_owns_its_result(n):
    def f(x):
        s = x
        for i in range(n):
            s = np.sin(s) * 1.01
        return np.sum(s)
    g = srcgrad.grad(f, backend="llvm")
    x = np.linspace(0.1, 0.9, 4)
    dx = g(x)
    ref = srcgrad.grad(f, backend="python")(x)
    np.testing.assert_allclose(dx, ref, rtol=1e-12)
    dx2 = g(x)
    assert not np.shares_memory(dx, dx2)
    np.testing.assert_array_equal(dx, dx2)
