"""Compiled objects pickle (issue 15, point 2) and run in worker processes: multiprocessing
with spawn and fork, concurrent.futures; by reference where the module holds the object, by
value otherwise (the function, its options and its source text; never code or pointers)."""
import concurrent.futures
import multiprocessing
import pickle

import numpy as np
import pytest

import srcgrad

from . import pickled_functions as pf

RNG = np.random.default_rng(0)
W, X, Y = RNG.standard_normal(4), RNG.standard_normal((40, 4)), np.sign(RNG.standard_normal(40))


def _every_kind():
    return {
        "grad": srcgrad.grad(pf.loss), "value_and_grad": srcgrad.value_and_grad(pf.loss, wrt=(0, 1)),
        "jit": srcgrad.jit(pf.loss, backend="python"), "hessian": srcgrad.hessian(pf.loss),
        "jacobian": srcgrad.jacobian(srcgrad.grad(pf.loss), mode="rev"), "hvp": srcgrad.hvp(pf.loss),
        "checkpointed": srcgrad.grad(pf.decorated.fun, checkpoint=2),
        "vectorize": srcgrad.vectorize(srcgrad.grad(pf.bump, wrt=(0, 1))),
    }


def _call(kind, f):
    if kind == "hvp":
        return f(W, X, Y, np.ones(4))
    if kind in ("checkpointed",):
        return f(W)
    if kind == "vectorize":
        return f(W, X[0])
    return f(W, X, Y)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", list(_every_kind()))
def test_every_kind_pickles_by_value_and_computes_the_same(kind):
    f = _every_kind()[kind]
    expected = _call(kind, f)                       # compiled here first: no code goes into the pickle
    data = pickle.dumps(f)
    assert b"ctypes" not in data and len(data) < 20_000
    g = pickle.loads(data)
    assert g is not f and g.kind == f.kind and g.requested_backend == f.requested_backend
    _same(_call(kind, g), expected)


def test_module_level_objects_pickle_by_reference():
    assert pickle.loads(pickle.dumps(pf.decorated)) is pf.decorated
    assert pickle.loads(pickle.dumps(pf.grad_loss)) is pf.grad_loss
    assert len(pickle.dumps(pf.decorated)) < 200


def test_the_source_travels_with_a_function_pickled_by_value():
    from srcgrad.frontend import source as source_module
    data = pickle.dumps(srcgrad.grad(pf.loss))
    assert b"np.log1p(np.exp(-y * z))" in data        # a worker without the file compiles from it
    assert source_module.source_of(pf.loss)[0].startswith("def loss(w, X, y):")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_data_parallel_gradient_in_worker_processes(method):
    shards = [(srcgrad.grad(pf.loss), W, X[k::4], Y[k::4]) for k in range(4)]
    with multiprocessing.get_context(method).Pool(2) as pool:
        parts = pool.map(pf.shard_gradient, shards)
    # the shards' data terms add up to the whole one's (the regulariser is counted once per shard)
    whole = pf.grad_loss(W, X, Y)
    np.testing.assert_allclose(sum(parts) - 3 * W, whole, rtol=1e-12, atol=1e-13)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(method)) as ex:
        got = list(ex.map(pf.shard_gradient, [(pf.grad_loss, W, X, Y)]))
    np.testing.assert_allclose(got[0], whole, rtol=1e-12)


def test_closures_pickle_by_value_under_cloudpickle():
    cloudpickle = pytest.importorskip("cloudpickle")
    scale = 3.0

    def local(x):
        return scale * np.sum(np.sin(x) ** 2)
    g = srcgrad.grad(local)
    x = np.linspace(0, 1, 5)
    expected = g(x)
    h = pickle.loads(cloudpickle.dumps(g))
    np.testing.assert_array_equal(h(x), expected)


def test_a_cuda_kernel_pickles_with_its_target_and_makes_the_same_ptx():
    from srcgrad.backends.cuda.host_device import HostDevice
    from srcgrad.backends.cuda.launch import use_device
    f = srcgrad.vectorize(srcgrad.grad(pf.bump, wrt=(0, 1)), target="cuda")
    with use_device(HostDevice()):
        expected = f(W, X[0])
        g = pickle.loads(pickle.dumps(f))
        assert g.target == "cuda"
        _same(g(W, X[0]), expected)
    assert g.ptx == f.ptx


def test_unpickling_the_same_object_again_reuses_what_was_compiled():
    """A Dask task carries the function each time: the worker must not compile it each time."""
    f = srcgrad.grad(pf.loss)
    data = pickle.dumps(f)
    g = pickle.loads(data)
    g(W, X, Y)
    assert pickle.loads(data) is g and pickle.loads(pickle.dumps(f)) is g      # one token per object
    assert len(g._cache) == 1
    assert srcgrad.grad(pf.loss) is f               # asked again: the same object (srcgrad/reuse.py)
    other = pickle.loads(pickle.dumps(srcgrad.grad(pf.loss, boundscheck=False)))   # another object: its own
    assert other is not g
    assert pickle.loads(pickle.dumps(g)) is g                                 # pickled again where it was rebuilt
