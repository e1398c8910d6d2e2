"""The two programs of benchmarks/array_writes.py written for the other contenders: JAX
(functional updates, ``lax.fori_loop``/``lax.scan``, float64) and numpy by hand (forward
storing the states, then the adjoint loop backwards, vectorised per step).

Each ``*_cases`` function returns {name: zero-argument callable} giving the gradient as numpy
numbers and arrays (compiled by its first call), or {} when the tool is missing. Everything
runs on one thread, as benchmarks/contenders.py sets it.

Example:
    >>> du0, dk = numpy_heat_cases(np.linspace(0.0, 1.0, 100), 0.25, 100)["numpy"]()
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

from contenders import _jax  # noqa: E402  (jax with float64, or None)


def jax_heat_cases(u0, k, steps):
    """d/d(u0, k) of Σ u_T², the 1-D explicit heat stencil with fixed ends, as jit(grad)."""
    jax = _jax()
    if jax is None:
        return {}
    from jax import lax
    from jax import numpy as jnp

    def loss(u0, k):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + k * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        u = lax.fori_loop(0, steps, step, u0)
        return jnp.sum(u * u)
    gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
    u0j, kj = jnp.asarray(u0), jnp.asarray(k, dtype=jnp.float64)

    def run():
        du0, dk = gradient(u0j, kj)
        return np.asarray(du0), float(dk)
    return {"jax": run}


def numpy_heat_cases(u0, k, steps):
    """The heat stencil's gradient by hand: all T+1 states kept, the adjoint step backwards."""
    n = u0.shape[0]

    def run():
        states = np.empty((steps + 1, n))
        states[0] = u0
        for t in range(steps):
            u, un = states[t], states[t + 1]
            un[0], un[-1] = u[0], u[-1]
            np.add(u[:-2], u[2:], out=un[1:-1])
            un[1:-1] -= 2.0 * u[1:-1]
            un[1:-1] *= k
            un[1:-1] += u[1:-1]
        g = 2.0 * states[steps]
        dk = 0.0
        for t in range(steps - 1, -1, -1):
            u = states[t]
            inner = g[1:-1].copy()
            dk += inner @ (u[:-2] - 2.0 * u[1:-1] + u[2:])
            inner *= k
            g[1:-1] -= 2.0 * inner      # un[i] = u[i] + k (u[i-1] − 2 u[i] + u[i+1]); ends pass through
            g[:-2] += inner
            g[2:] += inner
        return g, float(dk)
    return {"numpy": run}


def jax_rnn_cases(W, U, b, xs, h0):
    """d/d(W, U, b) of Σ h_T², h_{t+1} = tanh(W h_t + U x_t + b), as jit(grad) over lax.scan."""
    jax = _jax()
    if jax is None:
        return {}
    from jax import lax
    from jax import numpy as jnp

    def loss(W, U, b, xs, h0):
        def step(h, x):
            return jnp.tanh(W @ h + U @ x + b), None
        h, _ = lax.scan(step, h0, xs)
        return jnp.sum(h * h)
    gradient = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    args = [jnp.asarray(a) for a in (W, U, b, xs, h0)]
    return {"jax": lambda: tuple(np.asarray(g) for g in gradient(*args))}


def numpy_rnn_cases(W, U, b, xs, h0):
    """Backpropagation through time by hand: the T+1 hidden states kept, one matrix-vector
    product and two outer products per step backwards."""
    steps, hidden = xs.shape[0], h0.shape[0]

    def run():
        h = np.empty((steps + 1, hidden))
        h[0] = h0
        for t in range(steps):
            np.tanh(W @ h[t] + U @ xs[t] + b, out=h[t + 1])
        dW, dU, db = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
        dh = 2.0 * h[steps]
        for t in range(steps - 1, -1, -1):
            da = dh * (1.0 - h[t + 1] * h[t + 1])
            dW += np.outer(da, h[t])
            dU += np.outer(da, xs[t])
            db += da
            dh = W.T @ da
        return dW, dU, db
    return {"numpy": run}
