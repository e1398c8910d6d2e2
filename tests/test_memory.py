"""Memory stays flat (issue 5): 40,000 calls of a compiled gradient and 10,000 eager steps
keep nothing from one call to the next (benchmarks/memory.py prints the figures)."""
import gc
import multiprocessing
import os
import pickle
import weakref

import numpy as np
import pytest

import srcgrad
from tests import memory_kinds

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")


def _growth(run, count, warmup):
    """MiB of resident memory kept over ``count`` calls of ``run`` after ``warmup``."""
    return memory_kinds.kept(run, count, warmup)[1]


def scaled_sum(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.tanh(x[i] * w[i]) * x[i]
    return s


def test_compiled_gradients_keep_nothing_between_calls():
    g = srcgrad.grad(scaled_sum, wrt=(0, 1))
    x, w = np.linspace(-1, 1, 200), np.full(200, 0.3)          # two 1.6 kB arrays out per call
    assert _growth(lambda: g(x, w), 40_000, 2_000) < 20           # MiB; 120 MiB if results leaked


def test_eager_steps_keep_nothing_and_free_their_graph():
    torch = srcgrad
    W = torch.randn(64, 32, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 64, dtype=torch.float64)

    def step():
        loss = ((x @ W).tanh() ** 2).sum()
        loss.backward()
        with torch.no_grad():
            W.sub_(0.01 * W.grad)
        W.grad = None
    assert _growth(step, 10_000, 200) < 20
    loss = ((x @ W).tanh() ** 2).sum()
    node = weakref.ref(loss.grad_fn)
    loss.backward()
    del loss
    gc.collect()
    assert node() is None


# --------------------------------------------------------------------------- every kind (issue 27)

@pytest.mark.parametrize("name", sorted(memory_kinds.KINDS))
def test_every_kind_of_compiled_function_keeps_nothing_between_calls(name):
    srcgrad.empty_cache()             # what earlier tests left must not hide a growing cache
    cached, resident = memory_kinds.growth(name)
    assert cached <= 0, f"{name}: the block cache grew by {cached} bytes over 3,000 calls"
    assert resident < 8, f"{name}: resident memory grew by {resident:.1f} MiB over 3,000 calls"


@pytest.mark.parametrize("name", memory_kinds.PICKLED_KINDS)
def test_pickled_functions_rebuilt_in_a_worker_keep_nothing_between_calls(name):
    data = pickle.dumps(memory_kinds.KINDS[name][0]())
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        cached, resident = pool.apply(memory_kinds.growth, (name, 3000, 200, data))
    assert cached <= 0 and resident < 8, (name, cached, resident)
