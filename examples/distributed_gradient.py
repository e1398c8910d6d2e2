"""A data-parallel gradient on a Dask cluster: logistic regression whose data is split into
shards, each shard's gradient computed by a compiled srcgrad gradient in a worker process,
the parts summed, checked against the gradient of the whole data in this process, then a few
steps of gradient descent. Needs dask[distributed] (pip install 'srcgrad[distributed]').

    python examples/distributed_gradient.py

The compiled gradient travels to the workers by value (its source and options; this file is
__main__, which the workers cannot import), and each worker compiles it once, at its first
task (docs/distributed.md).
"""
import time

import numpy as np
from dask.distributed import Client, LocalCluster

import srcgrad


def shard_loss(w, X, y):
    """The logistic loss of one shard of the data (the sum over its rows)."""
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z)))


def total_loss(w, X, y, lam):
    return shard_loss(w, X, y) + 0.5 * lam * np.dot(w, w)


def main():
    rng = np.random.default_rng(0)
    n, d, shards, lam = 40_000, 16, 4, 1e-2
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    w = np.zeros(d)

    shard_grad = srcgrad.grad(shard_loss)                # compiled where it is first called
    whole_grad = srcgrad.grad(total_loss)

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        parts = [client.scatter((X[k::shards], y[k::shards])) for k in range(shards)]   # the data stays there

        def distributed_gradient(w):
            futures = [client.submit(lambda p, w: shard_grad(w, *p), part, w, pure=False) for part in parts]
            return sum(client.gather(futures)) + lam * w

        t0 = time.perf_counter()
        g = distributed_gradient(w)
        first = time.perf_counter() - t0
        here = whole_grad(w, X, y, lam)
        print(f"{len(client.scheduler_info()['workers'])} workers, {shards} shards of {n // shards:,} rows x {d}")
        print(f"first distributed gradient (each worker compiles once): {first:.2f} s")
        print(f"max |distributed - single process| = {np.max(np.abs(g - here)):.2e}")
        assert np.allclose(g, here, rtol=1e-12, atol=1e-9)

        for step in range(5):
            t0 = time.perf_counter()
            g = distributed_gradient(w)
            w = w - 1e-4 * g
            print(f"step {step}: loss {total_loss(w, X, y, lam):.1f}  ({time.perf_counter() - t0:.3f} s)")


if __name__ == "__main__":
    main()
