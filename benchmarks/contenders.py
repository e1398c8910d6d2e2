"""B1 and B2 written for the other tools, when they are installed: Numba and JAX.

Each ``*_cases`` function returns {name: zero-argument callable} ready to time (compiled
and warmed up by the caller's first call), or {} when the tool is missing. Both run on one
thread, as srcgrad does.

Example:
    >>> cases = numba_b1_cases(0.3, 100_000)
"""
import math
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("SRCGRAD_NUM_THREADS", "1")      # one thread each (benchmarks/threads.py times more)

import numpy as np  # noqa: E402


def numba_b1_cases(x, n):
    try:
        import numba
    except ImportError:
        return {}

    @numba.njit
    def forward(x, n):
        s = 0.0
        for i in range(n):
            s += math.sin(x * i) * math.exp(-1e-3 * i)
        return s + x * x
    return {"numba_fwd": lambda: forward(x, n)}


def numba_b2_cases(X, y, w):
    """Numba with hand-written fused loops: one pass over X."""
    try:
        import numba
    except ImportError:
        return {}

    @numba.njit
    def gradient(X, y, w):
        n, m = X.shape
        g = 0.1 * w
        for i in range(n):
            z = 0.0
            for j in range(m):
                z += X[i, j] * w[j]
            s = -y[i] / (1.0 + math.exp(y[i] * z))
            for j in range(m):
                g[j] += s * X[i, j]
        return g
    return {"numba": lambda: gradient(X, y, w)}


def _jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_b1_cases(x, n):
    jax = _jax()
    if jax is None:
        return {}
    from jax import lax
    from jax import numpy as jnp

    def f(x, n):
        return lax.fori_loop(0, n, lambda i, s: s + jnp.sin(x * i) * jnp.exp(-1e-3 * i), 0.0) + x * x
    forward = jax.jit(f, static_argnums=1)
    gradient = jax.jit(jax.grad(f), static_argnums=1)
    return {"jax_fwd": lambda: float(forward(x, n)), "jax_grad": lambda: float(gradient(x, n))}


def jax_b2_cases(X, y, w):
    jax = _jax()
    if jax is None:
        return {}
    from jax import numpy as jnp

    def loss(w, X, y):
        return jnp.sum(jnp.log1p(jnp.exp(-y * (X @ w)))) + 0.5 * 0.1 * jnp.dot(w, w)
    gradient = jax.jit(jax.grad(loss))
    Xj, yj, wj = (jnp.asarray(a) for a in (X, y, w))
    return {"jax": lambda: np.asarray(gradient(wj, Xj, yj).block_until_ready())}
