"""Resident memory over many calls: compiled gradients (numbers and arrays out) and eager
forward/backward steps. Flat figures mean nothing is kept from one call to the next.

    python benchmarks/memory.py [--calls N] [--steps N] [--record]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from loop_programs import b1  # noqa: E402
from record import record  # noqa: E402


def resident_mib():
    """This process's resident memory now (Linux /proc), in MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def array_gradient(x, w):
    return np.sum(np.tanh(x * w) * x)


def element_writes(x):
    """A recurrence written element by element: its gradient keeps an undo log that grows."""
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + np.sin(x[i])
    return np.sum(y * y)


def eager_step(torch, W, x):
    loss = ((x @ W).tanh() ** 2).sum()
    loss.backward()
    with torch.no_grad():
        W -= 0.01 * W.grad
    W.grad = None


def growth(run, count, warmup):
    """(resident MiB after warm-up, growth in MiB over ``count`` more calls, growth of the
    block cache in MiB over them)."""
    for _ in range(warmup):
        run()
    before, cached = resident_mib(), srcgrad.memory_cached()
    for _ in range(count):
        run()
    return before, resident_mib() - before, (srcgrad.memory_cached() - cached) / 2**20


def measure(calls, steps):
    g1 = srcgrad.grad(b1)
    g2 = srcgrad.grad(array_gradient, wrt=(0, 1))
    g3 = srcgrad.grad(element_writes)
    x4 = np.linspace(-1, 1, 10_000)
    x, w = np.linspace(-1, 1, 1000), np.full(1000, 0.3)
    torch = srcgrad
    W = torch.randn(64, 32, dtype=torch.float64, requires_grad=True)
    xb = torch.randn(16, 64, dtype=torch.float64)
    rows = [("compiled gradient, number out (B1, n=10)", calls, *growth(lambda: g1(0.3, 10), calls, 1000)),
            ("compiled gradient, two 1,000-element arrays out", calls, *growth(lambda: g2(x, w), calls, 1000)),
            ("compiled gradient with element writes in a loop, n=10,000", calls // 20,
             *growth(lambda: g3(x4), calls // 20, 100)),
            ("eager forward+backward+update step", steps, *growth(lambda: eager_step(torch, W, xb), steps, 200))]
    return rows


def table(rows):
    out = ["| what | calls | resident after warm-up (MiB) | growth over the calls (MiB) | block cache growth (MiB) |",
           "|---|---|---|---|---|"]
    out += [f"| {name} | {n:,} | {before:.1f} | {grown:+.1f} | {cached:+.1f} |" for name, n, before, grown, cached in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    text = table(measure(args.calls, args.steps))
    print(text)
    if args.record:
        record("memory", f"python benchmarks/memory.py --calls {args.calls} --steps {args.steps} --record",
               "resident memory from /proc/self/statm", text)


if __name__ == "__main__":
    main()
