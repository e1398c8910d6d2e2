"""Eager-mode overhead, srcgrad beside PyTorch (and hand-written numpy) in one run.

(a) a chain of 1,000 ops on shape-(4,) tensors: forward, and forward + backward, in µs per op;
(b) one SGD step of a 784-256-10 MLP on a batch of 64 with cross-entropy, in ms.

Everything runs on one thread (BLAS and PyTorch), so the figures compare the frameworks'
own overhead, not their thread pools. Run:

    python benchmarks/eager_overhead.py [--repeats N] [--record]

``--record`` records the table in benchmarks/RESULTS.md (its current table; the old one goes to History).
"""
import os

for _v in ("SRCGRAD_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from record import record  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:        # the comparison column is left empty
    torch = None

CHAIN = 1000


def interleaved(cases, repeats, number):
    """Median seconds per call of each case. The cases take turns call by call, so that a
    noisy neighbour on a shared machine slows all of them alike and their ratios hold."""
    for fn in cases.values():
        fn()
    times = {k: [] for k in cases}
    for _ in range(repeats):
        gc.collect()
        for _ in range(number):
            for k, fn in cases.items():
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def chain(T, x, w):
    y = x
    for i in range(CHAIN // 4):
        y = y * 1.0001
        y = y + 0.001
        y = y.sin()
        y = y * w
    return y


def chain_case(T):
    x = T.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
    w = T.tensor([1.0, 0.9, 1.1, 1.0], requires_grad=True)

    def forward():
        chain(T, x, w)

    def forward_backward():
        chain(T, x, w).sum().backward()
        x.grad = None
        w.grad = None

    return forward, forward_backward


def mlp_case(T):
    rng = np.random.default_rng(0)
    X = T.tensor(rng.standard_normal((64, 784)).astype(np.float32))
    y = T.tensor(rng.integers(0, 10, 64))
    W1 = T.tensor((rng.standard_normal((256, 784)) * 0.05).astype(np.float32), requires_grad=True)
    b1 = T.zeros(256, requires_grad=True)
    W2 = T.tensor((rng.standard_normal((10, 256)) * 0.05).astype(np.float32), requires_grad=True)
    b2 = T.zeros(10, requires_grad=True)
    params = [W1, b1, W2, b2]
    F = T.nn.functional

    def step():
        h = F.relu(F.linear(X, W1, b1))
        loss = F.cross_entropy(F.linear(h, W2, b2), y)
        loss.backward()
        with T.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    return step


def numpy_mlp_case():
    """The same SGD step written by hand in numpy: the floor for any framework on top of numpy."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    W1 = (rng.standard_normal((256, 784)) * 0.05).astype(np.float32)
    b1 = np.zeros(256, np.float32)
    W2 = (rng.standard_normal((10, 256)) * 0.05).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    rows = np.arange(64)

    def step():
        nonlocal W1, b1, W2, b2
        a = X @ W1.T + b1
        h = np.maximum(a, 0)
        z = h @ W2.T + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        dz = p
        dz[rows, y] -= 1
        dz /= 64
        dW2 = dz.T @ h
        db2 = dz.sum(0)
        dh = dz @ W2
        dh[a <= 0] = 0
        dW1 = dh.T @ X
        db1 = dh.sum(0)
        W1 -= 0.01 * dW1
        b1 -= 0.01 * db1
        W2 -= 0.01 * dW2
        b2 -= 0.01 * db2

    return step


def measure(repeats):
    frameworks = [("srcgrad", srcgrad)] + ([("torch", torch)] if torch is not None else [])
    chain_fwd, chain_fb, mlp = {}, {}, {}
    for name, T in frameworks:
        chain_fwd[name], chain_fb[name] = chain_case(T)
        mlp[name] = mlp_case(T)
    mlp["numpy"] = numpy_mlp_case()
    res = {}
    for key, t in interleaved(chain_fwd, repeats, 5).items():
        res[key, "chain_fwd"] = t / CHAIN * 1e6
    for key, t in interleaved(chain_fb, repeats, 5).items():
        res[key, "chain_fwd_bwd"] = t / CHAIN * 1e6
    for key, t in interleaved(mlp, repeats, 20).items():
        res[key, "mlp"] = t * 1e3
    get = res.get
    return [
        ("(a) 1,000-op chain, forward", "µs/op", get(("srcgrad", "chain_fwd")), get(("torch", "chain_fwd")), None),
        ("(a) 1,000-op chain, forward+backward", "µs/op", get(("srcgrad", "chain_fwd_bwd")),
         get(("torch", "chain_fwd_bwd")), None),
        ("(b) MLP 784-256-10 SGD step, batch 64", "ms", get(("srcgrad", "mlp")), get(("torch", "mlp")),
         get(("numpy", "mlp"))),
    ]


def table(rows):
    fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    lines = ["| benchmark | unit | srcgrad | PyTorch (1 thread) | numpy by hand | srcgrad / PyTorch |",
             "|---|---|---|---|---|---|"]
    for name, unit, ours, theirs, floor in rows:
        ratio = "–" if theirs is None else f"{ours / theirs:.2f}"
        extra = "" if floor is None else f" (srcgrad / numpy {ours / floor:.2f})"
        lines.append(f"| {name} | {unit} | {fmt(ours)} | {fmt(theirs)} | {fmt(floor)} | {ratio}{extra} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--record", action="store_true", help="record the table in benchmarks/RESULTS.md")
    args = ap.parse_args()
    text = table(measure(args.repeats))
    print(text)
    if args.record:
        record("eager_overhead", f"python benchmarks/eager_overhead.py --repeats {args.repeats} --record",
               "one thread everywhere", text)

if __name__ == "__main__":
    main()
