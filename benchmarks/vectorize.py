"""vectorize(grad(f)) (issue 13) beside JAX and Numba, measured in one run, the contenders taking turns.

V1 the derivative in x of f(x, y) = sin(x) exp(-y²) + log1p(x²) at 10⁶ points (x, y: float64
   arrays of 10⁶): srcgrad vectorize(grad(f)) (one compiled loop around the inlined gradient)
   against jax.jit(jax.vmap(jax.grad(f))) and Numba @vectorize of the derivative written by
   hand, cos(x) exp(-y²) + 2x / (1 + x²).
V2 both partial derivatives: vectorize(grad(f, wrt=(0, 1))) (one loop, two output arrays)
   against jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1)))) and two Numba @vectorize functions
   written by hand (the second one is -2y sin(x) exp(-y²)).

Target (issue 13): vectorize within 1.2× Numba's hand-written derivative. The results are
checked against each other before timing.

    python benchmarks/vectorize.py [--repeats N] [--record]
"""
import os

for _var in ("SRCGRAD_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import math  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from compiled_loops import timed  # noqa: E402
from contenders import _jax  # noqa: E402
from loop_programs import bump  # noqa: E402
from record import repeats_main  # noqa: E402


def numba_cases(x, y):
    """The derivatives written by hand, each a Numba @vectorize ufunc."""
    try:
        import numba
    except ImportError:
        return {}

    @numba.vectorize(["float64(float64, float64)"])
    def dx(x, y):
        return math.cos(x) * math.exp(-y * y) + 2.0 * x / (1.0 + x * x)

    @numba.vectorize(["float64(float64, float64)"])
    def dy(x, y):
        return -2.0 * y * math.sin(x) * math.exp(-y * y)

    return {"numba1": lambda: dx(x, y), "numba2": lambda: (dx(x, y), dy(x, y))}


def jax_cases(x, y):
    jax = _jax()
    if jax is None:
        return {}
    from jax import numpy as jnp

    def f(x, y):
        return jnp.sin(x) * jnp.exp(-y * y) + jnp.log1p(x * x)
    d1 = jax.jit(jax.vmap(jax.grad(f)))
    d2 = jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1))))
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    return {"jax1": lambda: np.asarray(d1(xj, yj).block_until_ready()),
            "jax2": lambda: tuple(np.asarray(a) for a in jax.block_until_ready(d2(xj, yj)))}


def run(repeats, n=1_000_000):
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-3.0, 3.0, n), rng.uniform(-2.0, 2.0, n)
    v1 = srcgrad.vectorize(srcgrad.grad(bump))
    v2 = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))
    cases = {"ours1": lambda: v1(x, y), "ours2": lambda: v2(x, y)}
    cases.update(numba_cases(x, y))
    cases.update(jax_cases(x, y))
    notes = _agree(cases)
    t = timed(cases, repeats)
    rows = [(f"V1 vectorize(grad(f)), d/dx at {n:,} points", t["ours1"], t.get("numba1"), t.get("jax1")),
            (f"V2 vectorize(grad(f, wrt=(0, 1))), both at {n:,} points", t["ours2"], t.get("numba2"), t.get("jax2"))]
    return rows, notes


def _agree(cases):
    """Each contender's derivatives against srcgrad's (1e-12 relative), before anything is timed."""
    notes = []
    for k in ("1", "2"):
        ours = np.array(cases["ours" + k]())
        for who in ("numba", "jax"):
            if who + k in cases:
                theirs = np.array(cases[who + k]())
                err = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
                assert err < 1e-12, (who + k, err)
                notes.append(f"V{k}: srcgrad vs {who}: max |a − b| / max |b| = {err:.1e}")
    return notes


def table(rows):
    fmt = lambda v: "–" if v is None else f"{v * 1e3:,.3g}"  # noqa: E731
    out = ["| benchmark | unit | srcgrad | Numba @vectorize by hand | JAX vmap(grad) | ÷ Numba | ÷ JAX |",
           "|---|---|---|---|---|---|---|"]
    for name, ours, numba, jax in rows:
        out.append(f"| {name} | ms | {fmt(ours)} | {fmt(numba)} | {fmt(jax)} | "
                   f"{f'{ours / numba:.2f}' if numba else '–'} | {f'{ours / jax:.2f}' if jax else '–'} |")
    return "\n".join(out)


def report(repeats):
    rows, notes = run(repeats)
    return table(rows) + "\n\n" + "\n".join(f"- {n}" for n in notes + [
        f"Times are medians of {repeats} calls, the contenders taking turns; one thread everywhere.",
        "srcgrad's loop is vectorised by LLVM, its sin, cos and exp glibc's libmvec (four doubles a call, "
        "backends/llvm/vector_math.py); Numba's ufuncs call libm per element (Numba uses Intel's SVML only "
        "where icc_rt is installed, not here); XLA has its own vectorised exp and sin."])


def main():
    repeats_main("vectorize", __doc__, report)


if __name__ == "__main__":
    main()
