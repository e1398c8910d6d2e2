"""Training steps with ``nn`` and ``optim``, srcgrad beside PyTorch in one run (issue 16).

N1: an MLP 784-256-128-10 (``nn.Sequential`` of Linear and ReLU) trained with ``optim.Adam``
    on batches of 64, cross-entropy loss.
N2: a small CNN — Conv2d(1, 32, 3), ReLU, Conv2d(32, 64, 3), ReLU, MaxPool2d(2), Flatten,
    Linear(9216, 10) — trained with ``optim.SGD`` (momentum 0.9) on batches of 64 images 28×28.

The same code runs on both libraries (``lib.nn``, ``lib.optim``), float32, from the same
initial weights; one step is zero_grad, forward, loss, backward, step. Everything runs on
one thread (BLAS and PyTorch). The steps take turns (eager_overhead.interleaved), so a noisy
neighbour slows both alike. For N2 the table also says where srcgrad's time goes: the
convolutions' forward and backward, the pooling, the rest.

    python benchmarks/nn_training.py [--repeats N] [--record]
"""
import os

for _v in ("SRCGRAD_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import time  # noqa: E402

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from eager_overhead import interleaved  # noqa: E402
from record import repeats_main  # noqa: E402

import torch  # noqa: E402

torch.set_num_threads(1)


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(9216, 10))


def same_start(ours, theirs):
    ours.load_state_dict({k: srcgrad.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours


def trainer(lib, model, make_opt, x, y):
    opt = make_opt(lib, model.parameters())
    loss_fn = lib.nn.CrossEntropyLoss()
    x, y = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def data(shape, rng):
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 10, shape[0])


def case(build, make_opt, shape, repeats, number):
    rng = np.random.default_rng(0)
    x, y = data(shape, rng)
    theirs = build(torch)
    ours = same_start(build(srcgrad), theirs)
    steps = {"srcgrad": trainer(srcgrad, ours, make_opt, x, y), "torch": trainer(torch, theirs, make_opt, x, y)}
    # both learn the same: the losses of the first steps agree
    a, b = [float(steps["srcgrad"]().item()) for _ in range(3)], [float(steps["torch"]().item()) for _ in range(3)]
    assert np.allclose(a, b, rtol=1e-3), (a, b)
    return interleaved(steps, repeats, number)


def where_cnn_time_goes(repeats):
    """Seconds of srcgrad's CNN step parts: each conv's forward + backward, the pool's, the rest."""
    F = srcgrad.nn.functional
    rng = np.random.default_rng(1)
    x = srcgrad.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    h = srcgrad.tensor(rng.standard_normal((64, 32, 26, 26)).astype(np.float32), requires_grad=True)
    p = srcgrad.tensor(rng.standard_normal((64, 64, 24, 24)).astype(np.float32), requires_grad=True)
    w1 = srcgrad.randn(32, 1, 3, 3, requires_grad=True)
    w2 = srcgrad.randn(64, 32, 3, 3, requires_grad=True)

    def timed(fn):
        best = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best.append(time.perf_counter() - t0)
        return float(np.median(best))
    return {"conv1": timed(lambda: F.conv2d(x, w1).sum().backward()),
            "conv2": timed(lambda: F.conv2d(h, w2).sum().backward()),
            "pool": timed(lambda: F.max_pool2d(p, 2).sum().backward())}


def run(repeats):
    adam = lambda lib, params: lib.optim.Adam(params, lr=1e-3)                          # noqa: E731
    sgd = lambda lib, params: lib.optim.SGD(params, lr=0.01, momentum=0.9)               # noqa: E731
    n1 = case(mlp, adam, (64, 784), repeats, 20)
    n2 = case(cnn, sgd, (64, 1, 28, 28), repeats, 3)
    parts = where_cnn_time_goes(max(3, repeats // 2))
    return n1, n2, parts


def table(results, repeats):
    n1, n2, parts = results
    rows = ["| benchmark | unit | srcgrad | PyTorch (1 thread) | srcgrad / PyTorch |", "|---|---|---|---|---|"]
    for name, r in (("N1 MLP 784-256-128-10, Adam, batch 64", n1),
                    ("N2 CNN 2 conv + pool + linear, SGD momentum, batch 64×1×28×28", n2)):
        rows.append(f"| {name} | ms/step | {r['srcgrad'] * 1e3:.2f} | {r['torch'] * 1e3:.2f} | "
                    f"{r['srcgrad'] / r['torch']:.2f} |")
    rest = n2["srcgrad"] - sum(parts.values())
    rows += ["", f"- Medians of {repeats} rounds of interleaved steps (N1 20 steps a round, N2 3).",
             "- Where srcgrad's N2 step goes (forward + backward of each part alone, ms): "
             f"conv1 (1→32) {parts['conv1'] * 1e3:.1f}, conv2 (32→64) {parts['conv2'] * 1e3:.1f}, "
             f"max-pool {parts['pool'] * 1e3:.1f}; the rest (ReLU, linear, loss, SGD) about {rest * 1e3:.1f}."]
    return "\n".join(rows)


if __name__ == "__main__":
    repeats_main("nn_training", __doc__, lambda repeats: table(run(repeats), repeats),
                 note="one thread everywhere")
