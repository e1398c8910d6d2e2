"""Compiled matrix products and factorisations against numpy and JAX, one thread each (issue 29, point 2).

Three tables:
- the crossover: ``a @ b`` of n×n matrices (and ``A @ x``) compiled with the loop nests and
  with BLAS forced, beside numpy, for n from 2 to 256: where BLAS starts to pay sets
  ``GEMM_MIN``/``GEMV_MIN`` in srcgrad/backends/llvm/blas.py;
- the same for ``np.linalg.solve`` and ``np.linalg.cholesky`` with LAPACK: ``SOLVE_MIN`` and
  ``CHOLESKY_MIN`` in srcgrad/backends/llvm/linalg.py;
- the issue's example, ``np.sum(np.tanh(A @ B))`` with A, B 512×512: ``jit`` against numpy,
  ``grad`` against ``jax.jit(jax.grad)``, as srcgrad compiles it by default.

    python benchmarks/matmul.py [--repeats 7] [--record]
"""
import argparse
import os
import sys
import timeit

os.environ.setdefault("SRCGRAD_NUM_THREADS", "OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from srcgrad.backends.llvm import blas  # noqa: E402


def product(a, b):
    return a @ b


def tanh_sum(a, b):
    return np.sum(np.tanh(a @ b))


def best(fn, repeats, budget=0.05):
    """The fastest of ``repeats`` timings, each of as many calls as fill ``budget`` seconds."""
    fn()
    once = min(timeit.repeat(fn, number=1, repeat=3))
    number = max(1, int(budget / max(once, 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number


def compiled_with(threshold, fun, args, kind="jit"):
    """``fun`` compiled for the llvm backend on ``args`` with BLAS's thresholds set to
    ``threshold`` (1: always BLAS; None: never), restored afterwards (the threshold is read
    while lowering, at the first call)."""
    saved = blas.GEMM_MIN, blas.GEMV_MIN
    blas.GEMM_MIN = blas.GEMV_MIN = threshold if threshold is not None else 1 << 62
    try:
        f = srcgrad.jit(fun, backend="llvm") if kind == "jit" else srcgrad.grad(fun, wrt=(0, 1), backend="llvm")
        f(*args)
        return f
    finally:
        blas.GEMM_MIN, blas.GEMV_MIN = saved


def crossover(repeats):
    rng = np.random.default_rng(0)
    rows = []
    for n in (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256):
        a, b, x = rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal(n)
        for what, (p, q) in (("A @ B", (a, b)), ("A @ x", (a, x))):
            loops, forced = compiled_with(None, product, (p, q)), compiled_with(1, product, (p, q))
            t_loops = best(lambda: loops(p, q), repeats)
            t_blas = best(lambda: forced(p, q), repeats)
            t_np = best(lambda: p @ q, repeats)
            rows.append((what, n, n ** 3 if what == "A @ B" else n * n, t_loops, t_blas, t_np))
    lines = ["| product | n | multiply-adds | loop nests (µs) | BLAS (µs) | numpy (µs) | loops ÷ BLAS |",
             "|---|---|---|---|---|---|---|"]
    for what, n, work, t_loops, t_blas, t_np in rows:
        lines.append(f"| {what} | {n} | {work} | {t_loops * 1e6:.2f} | {t_blas * 1e6:.2f} | {t_np * 1e6:.2f} | "
                     f"{t_loops / t_blas:.2f} |")
    return lines


def solve(a, b):
    return np.linalg.solve(a, b)


def cholesky(a):
    return np.linalg.cholesky(a)


def linalg_crossover(repeats):
    """solve and cholesky compiled with srcgrad's loops and with LAPACK forced, beside numpy."""
    from srcgrad.backends.llvm import linalg
    rng = np.random.default_rng(2)

    def compiled(threshold, fun, args):
        saved = linalg.SOLVE_MIN, linalg.CHOLESKY_MIN
        linalg.SOLVE_MIN = linalg.CHOLESKY_MIN = threshold
        try:
            f = srcgrad.jit(fun, backend="llvm")
            f(*args)
            return f
        finally:
            linalg.SOLVE_MIN, linalg.CHOLESKY_MIN = saved
    lines = ["| routine | n | loops (µs) | LAPACK (µs) | numpy (µs) | loops ÷ LAPACK |", "|---|---|---|---|---|---|"]
    for n in (8, 32, 48, 64, 80, 96, 128, 256):
        a = rng.standard_normal((n, n)) + n * np.eye(n)
        for fun, args in ((solve, (a, rng.standard_normal(n))), (cholesky, (a @ a.T,))):
            loops, forced = compiled(1 << 40, fun, args), compiled(1, fun, args)
            t = [best(lambda g=g: g(*args), repeats) for g in (loops, forced, fun)]
            lines.append(f"| {fun.__name__} | {n} | {t[0] * 1e6:.1f} | {t[1] * 1e6:.1f} | {t[2] * 1e6:.1f} | "
                         f"{t[0] / t[1]:.2f} |")
    return lines


def example(repeats):
    rng = np.random.default_rng(1)
    n = 512
    a, b = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal((n, n)) / np.sqrt(n)
    jit, grad = srcgrad.jit(tanh_sum, backend="llvm"), srcgrad.grad(tanh_sum, wrt=(0, 1), backend="llvm")
    loops_jit, loops_grad = compiled_with(None, tanh_sum, (a, b)), compiled_with(None, tanh_sum, (a, b), "grad")
    cases = {"srcgrad jit": lambda: jit(a, b), "srcgrad jit, loop nests": lambda: loops_jit(a, b),
             "numpy": lambda: tanh_sum(a, b), "srcgrad grad": lambda: grad(a, b),
             "srcgrad grad, loop nests": lambda: loops_grad(a, b)}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        jf = jax.jit(lambda p, q: jnp.sum(jnp.tanh(p @ q)))
        jg = jax.jit(jax.grad(lambda p, q: jnp.sum(jnp.tanh(p @ q)), argnums=(0, 1)))
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        cases["JAX jit"] = lambda: jf(ja, jb).block_until_ready()
        cases["JAX grad"] = lambda: [g.block_until_ready() for g in jg(ja, jb)]
        ref = [np.asarray(g) for g in jg(ja, jb)]
        err = max(np.abs(x - y).max() / np.abs(y).max() for x, y in zip(grad(a, b), ref))
    except ImportError:
        err = None
    for fn in cases.values():
        fn()
    times = {k: [] for k in cases}
    for _ in range(repeats):            # the contenders take turns, call by call
        for k, fn in cases.items():
            times[k].append(best(fn, 1, budget=0.2))
    t = {k: float(np.median(v)) for k, v in times.items()}
    lines = ["| case | ms | ratio |", "|---|---|---|"]
    for k, v in t.items():
        base = "numpy" if "jit" in k or k == "numpy" else "JAX grad"
        ratio = f"{v / t[base]:.2f} × {base}" if base in t and k != base else ""
        lines.append(f"| {k} | {v * 1e3:.2f} | {ratio} |")
    note = f"- the gradient agrees with JAX's to {err:.1e} (max relative)." if err is not None else ""
    return lines, note


def _linalg():
    from srcgrad.backends.llvm import linalg
    return linalg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    source = blas.load().source if blas.load() else "none"
    table = crossover(args.repeats)
    lapack = linalg_crossover(args.repeats)
    ex, note = example(args.repeats)
    text = "\n".join(["Crossover, `a @ b` compiled (jit, llvm) with the loop nests and with BLAS forced:", "",
                      *table, "", "Crossover, `np.linalg.solve(A, b)` and `np.linalg.cholesky(A)` compiled with "
                      "srcgrad's loops and with LAPACK forced:", "", *lapack, "",
                      f"`np.sum(np.tanh(A @ B))`, A and B 512×512, medians of {args.repeats} turns:",
                      "", *ex, "", f"- BLAS: {source}; one thread (OPENBLAS_NUM_THREADS=1, XLA one thread).",
                      f"- thresholds now: GEMM_MIN = {blas.GEMM_MIN}, GEMV_MIN = {blas.GEMV_MIN} multiply-adds; "
                      f"SOLVE_MIN = {_linalg().SOLVE_MIN}, CHOLESKY_MIN = {_linalg().CHOLESKY_MIN} (n).",
                      note])
    print(text)
    if args.record:
        from record import record
        record("matmul", f"python benchmarks/matmul.py --repeats {args.repeats} --record", "one thread", text)


if __name__ == "__main__":
    main()
