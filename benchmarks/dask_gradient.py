"""D1: a data-parallel gradient on two Dask worker processes against one process.

The logistic loss of examples/distributed_gradient.py over X of 1,000,000 x 64 (512 MB) and
y; its gradient in w by srcgrad.grad, either in this process over the whole data, or on a
dask.distributed LocalCluster of 2 worker processes (one thread each) holding half the rows
each (scattered once, not timed), the two parts summed here. Also: the one-time cost in each
worker of unpickling the compiled gradient and compiling it (its first call there, less a warm
call), and the time to scatter the data.

    python benchmarks/dask_gradient.py [--rows N] [--repeats N] [--record]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from record import record  # noqa: E402


def shard_loss(w, X, y):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z)))


def first_and_warm(g, w, X, y):
    """In a worker: (seconds of its first call of g, which unpickled it and compiles, seconds of the next)."""
    t0 = time.perf_counter()
    g(w, X, y)
    t1 = time.perf_counter()
    g(w, X, y)
    return t1 - t0, time.perf_counter() - t1


def run(rows, cols, repeats):
    from dask.distributed import Client, LocalCluster
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, cols))
    y = np.sign(X @ rng.standard_normal(cols) + 0.3 * rng.standard_normal(rows))
    w = 0.01 * rng.standard_normal(cols)
    g = srcgrad.grad(shard_loss)
    expected = g(w, X, y)
    one = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        g(w, X, y)
        one.append(time.perf_counter() - t0)

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        workers = list(client.scheduler_info()["workers"])
        t0 = time.perf_counter()
        parts = [client.scatter((X[k::2], y[k::2]), workers=[workers[k]]) for k in range(2)]
        scatter = time.perf_counter() - t0
        start = [client.submit(lambda p, w: first_and_warm(g, w, *p), part, w, workers=[workers[k]], pure=False)
                 for k, part in enumerate(parts)]
        once = [first - warm for first, warm in client.gather(start)]

        def distributed():
            futures = [client.submit(lambda p, w: g(w, *p), part, w, workers=[workers[k]], pure=False)
                       for k, part in enumerate(parts)]
            return sum(client.gather(futures))
        got = distributed()
        assert np.allclose(got, expected, rtol=1e-10, atol=1e-8), np.max(np.abs(got - expected))
        two = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            distributed()
            two.append(time.perf_counter() - t0)
    return {"one": float(np.median(one)), "two": float(np.median(two)), "once": once, "scatter": scatter,
            "agree": float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))}


def table(r, rows, cols, repeats):
    return "\n".join([
        "| benchmark | unit | one process | 2 Dask workers | ÷ one process |", "|---|---|---|---|---|",
        f"| D1 logistic-loss gradient, X {rows:,} x {cols} | ms | {r['one'] * 1e3:.1f} | {r['two'] * 1e3:.1f} | "
        f"{r['two'] / r['one']:.2f} |", "",
        f"- Medians of {repeats} calls; the distributed time includes sending w and the function to both workers "
        "and gathering their parts (the data was scattered once before).",
        "- One-time cost in each worker (unpickling the gradient and compiling it: its first call less a warm "
        "one): " + ", ".join(f"{t:.2f} s" for t in r["once"]) + f"; scattering the data: {r['scatter']:.2f} s.",
        f"- The distributed gradient agrees with the single process's: max |a - b| / max |b| = {r['agree']:.1e}.",
    ])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    text = table(run(a.rows, a.cols, a.repeats), a.rows, a.cols, a.repeats)
    print(text)
    if a.record:
        record("dask_gradient", f"python benchmarks/dask_gradient.py --rows {a.rows} --repeats {a.repeats} --record",
               "", text)


if __name__ == "__main__":
    main()
