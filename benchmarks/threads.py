"""vectorize on the machine's cores (issue 29 point 6): the same call on one thread and on every
core, in one run, with the results compared bit for bit.

T1 vectorize(grad(f)), f(x, y) = sin(x) exp(-y²) + log1p(x²), d/dx at 10⁷ points (memory-bound:
   two arrays read, one written, a few ns an element)
T2 the same with both partial derivatives (two arrays written)
T3 vectorize(grad(g)) at 10⁶ points, g a loop of 8 steps with a branch (compute-bound)

Each is also timed as one call of the whole loop (the threshold raised: no blocks), to show
what cutting it into blocks costs on one thread. Target (issue 29): T1 on 2 cores ≥ 1.8× its
1-core speed, results identical.

    python benchmarks/threads.py [--repeats N] [--record]
"""
import math
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from compiled_loops import timed  # noqa: E402
from loop_programs import bump  # noqa: E402
from record import repeats_main  # noqa: E402
from srcgrad import threads  # noqa: E402


def stepped(x, y):
    s = 0.0
    for i in range(8):
        if s < x:
            s = s + math.sin(x * i + y)
        else:
            s = s * 0.5 - math.exp(-y * s)
    return s


WHOLE, PARALLEL = 1 << 62, threads.PARALLEL_MIN


def _at(n, threshold, f, args):
    """f(*args) on ``n`` threads, in blocks from ``threshold`` elements (WHOLE: one call)."""
    srcgrad.set_num_threads(n)
    threads.PARALLEL_MIN = threshold
    return f(*args)


def _same(a, b):
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return all(np.array_equal(p, q, equal_nan=True) for p, q in zip(a, b))


def run(repeats):
    cores = len(os.sched_getaffinity(0))
    rng = np.random.default_rng(0)
    big = (rng.uniform(-2, 2, 10**7), rng.uniform(-2, 2, 10**7))
    small = (big[0][:10**6].copy(), big[1][:10**6].copy())
    cases = [("T1 vectorize(grad(f)), 10⁷ points", srcgrad.vectorize(srcgrad.grad(bump)), big),
             ("T2 vectorize(grad(f, wrt=(0, 1))), 10⁷ points", srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1))), big),
             ("T3 vectorize(grad(g)), a loop with a branch, 10⁶ points", srcgrad.vectorize(srcgrad.grad(stepped)),
              small)]
    rows = []
    for name, f, args in cases:
        results = {n: _at(n, PARALLEL, f, args) for n in (1, cores)}
        times = timed({"whole": lambda: _at(1, WHOLE, f, args), "one": lambda: _at(1, PARALLEL, f, args),
                       "many": lambda: _at(cores, PARALLEL, f, args)}, repeats)
        rows.append((name, times["whole"], times["one"], times["many"], _same(results[1], results[cores])))
    _at(cores, PARALLEL, lambda: None, ())
    return rows, cores


def table(rows, cores):
    out = [f"| benchmark | one call, 1 thread (ms) | blocks, 1 thread (ms) | blocks, {cores} threads (ms) | "
           f"speed-up on {cores} (÷ blocks on 1) | ÷ one call | identical |", "|---|---|---|---|---|---|---|"]
    for name, whole, one, many, same in rows:
        out.append(f"| {name} | {whole * 1e3:.1f} | {one * 1e3:.1f} | {many * 1e3:.1f} | {one / many:.2f} | "
                   f"{whole / many:.2f} | {'yes' if same else 'NO'} |")
    return "\n".join(out)


def report(repeats):
    rows, cores = run(repeats)
    return table(rows, cores) + "\n\n" + "\n".join([
        f"- Medians of {repeats} calls, the three taking turns. Blocks of {threads.BLOCK:,} elements from {threads.PARALLEL_MIN:,} "
        "(srcgrad/threads.py), the same blocks at every thread count; \"identical\": the results on 1 and "
        f"on {cores} threads compared bit for bit.",
        "- One call, 1 thread: the whole loop in one compiled call (below the threshold every call runs so)."])


def main():
    repeats_main("threads", __doc__, report)


if __name__ == "__main__":
    main()
