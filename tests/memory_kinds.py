"""Every kind of compiled function with arguments to call it on, for test_memory.py; in a module
of its own so that worker processes import the same functions (pickled by reference).

``KINDS[name]`` is (what makes the compiled object, its arguments); ``growth(name)`` calls it
a few thousand times after a warm-up and measures what the block cache and the process kept."""
import gc
import math
import os
import pickle

import numpy as np

import srcgrad
from tests.compiler.primitive_cases import softclip

N = 1000                   # 8 kB arrays: above the cache's smallest class, and a leak shows


def recurrence(x):
    """Element writes in a loop: the undo log grows while the loop runs (issue 27)."""
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + np.sin(x[i])
    return np.sum(y * y)


def decay(x, w):
    a = x.copy()
    for _ in range(20):
        a = np.tanh(a * w + x)          # tapes an array an iteration
    return np.sum(a * a)


def scalar_loop(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.tanh(x[i] * w) * x[i]
    return s


def vector_out(x):
    return np.sin(x) * np.cumsum(x)


def params_loss(p, X):
    z = np.tanh(X @ p["W"] + p["b"])
    return np.sum(z * z)


def small(x):
    return np.sum(np.exp(-x * x)) + np.dot(x, x)


def bump(x, y):
    return math.sin(x) * math.exp(-y * y)


def softclip_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += softclip(x[i])          # a custom_vjp function (primitive_cases.py)
    return s


def _x(n=N):
    return np.linspace(-1.0, 1.0, n)


def _pulled_back(x, ct):
    y, pullback = srcgrad.vjp(vector_out, x)
    return pullback(ct)


def _pushed_forward(x, t):
    return srcgrad.jvp(vector_out, (x,), (t,))


def _bridged(compiled):
    """A call of ``compiled`` on tensors that require grad, and its backward (one graph node)."""
    def step(x, w):
        t = srcgrad.tensor(x, requires_grad=True)
        compiled(t, w).backward()
        return t.grad
    return step


PARAMS = ({"W": np.full((20, 30), 0.1), "b": np.zeros(30)}, np.ones((50, 20)))

# name: (what makes the compiled object, the arguments of its call)
KINDS = {
    "grad of a scalar loop": (lambda: srcgrad.grad(scalar_loop, wrt=(0, 1)), (_x(), 0.3)),
    "grad of array code": (lambda: srcgrad.grad(decay, wrt=(0, 1)), (_x(), 0.9)),
    "grad with element writes": (lambda: srcgrad.grad(recurrence), (_x(),)),
    "grad with checkpointing": (lambda: srcgrad.grad(decay, checkpoint=4), (_x(), 0.9)),
    "grad with element writes, checkpointed": (lambda: srcgrad.grad(recurrence, checkpoint=16), (_x(),)),
    "value_and_grad": (lambda: srcgrad.value_and_grad(decay), (_x(), 0.9)),
    "jit": (lambda: srcgrad.jit(vector_out), (_x(),)),
    "jit with element writes": (lambda: srcgrad.jit(recurrence), (_x(),)),
    "vjp and its pullback": (lambda: _pulled_back, (_x(), np.ones(N))),
    "jvp": (lambda: _pushed_forward, (_x(), np.ones(N))),
    "jacobian (reverse)": (lambda: srcgrad.jacrev(vector_out), (_x(40),)),
    "jacobian (forward)": (lambda: srcgrad.jacfwd(vector_out), (_x(40),)),
    "hessian": (lambda: srcgrad.hessian(small), (_x(40),)),
    "hvp": (lambda: srcgrad.hvp(small), (_x(), np.ones(N))),
    "grad of a container": (lambda: srcgrad.grad(params_loss), PARAMS),
    "grad through custom_vjp": (lambda: srcgrad.grad(softclip_sum), (_x(20),)),     # the python backend's
    "jit on tensors, backward (the eager bridge)": (lambda: _bridged(srcgrad.jit(decay)), (_x(), 0.9)),
    "vectorize of a grad": (lambda: srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1))), (_x(), _x())),
}

# the kinds a worker process rebuilds from a pickle
PICKLED_KINDS = ("grad with element writes", "grad of array code", "grad of a container", "jit with element writes")


def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def growth(name, count=3000, warmup=200, pickled=None):
    """(bytes the block cache gained, MiB of resident memory the process gained) over
    ``count`` calls of kind ``name`` after ``warmup`` calls; with ``pickled``, the compiled
    object is rebuilt from those bytes (as in a worker process)."""
    make, args = KINDS[name]
    compiled = make() if pickled is None else pickle.loads(pickled)
    return kept(lambda: compiled(*args), count, warmup)


def kept(run, count, warmup):
    """(bytes the block cache gained, MiB of resident memory the process gained) over
    ``count`` calls of ``run`` after ``warmup`` calls."""
    for _ in range(warmup):
        run()
    gc.collect()
    cached, resident = srcgrad.memory_cached(), resident_mib()
    for _ in range(count):
        run()
    gc.collect()
    return srcgrad.memory_cached() - cached, resident_mib() - resident
