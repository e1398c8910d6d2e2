"""Second derivatives (issue 13) beside JAX, measured in one run, the contenders taking turns.

S1 Hessian-vector product of B1 (the scalar loop of compiled_loops.py, n = 100,000): srcgrad
   hvp(b1)(x, n, v) (forward over reverse, one compiled call) against srcgrad's own gradient
   of B1 and JAX jit(jvp(grad(f))) of the lax.fori_loop version.
S2 Hessian-vector product of B2 (logistic regression, X 100,000×64, in w), written with numpy
   calls: srcgrad hvp against its gradient and JAX jit(jvp(grad(f))).
S3 the full Hessian of a 100-dimensional Rosenbrock function written as a loop: srcgrad
   hessian (a loop over 100 basis vectors inside the compiled code) against jax.jit(jax.hessian)
   of the same loop as lax.fori_loop.

Targets (issue 13): HVP ≤ 3× the function's own gradient time and ≤ 0.5× JAX; Hessian ≤ JAX.
Results are checked against each other before timing.

    python benchmarks/second_order.py [--repeats N] [--record]
"""
import os

for _var in ("SRCGRAD_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from compiled_loops import timed  # noqa: E402
from contenders import _jax  # noqa: E402
from loop_programs import b1, b2_numpy, rosenbrock  # noqa: E402
from record import repeats_main  # noqa: E402


def jax_cases(x, n, X, y, w, v, r):
    """JAX's HVPs (jit(jvp(grad))) of B1 and B2 and jit(hessian) of the Rosenbrock loop."""
    jax = _jax()
    if jax is None:
        return {}
    from jax import lax
    from jax import numpy as jnp

    def f1(x, n):
        return lax.fori_loop(0, n, lambda i, s: s + jnp.sin(x * i) * jnp.exp(-1e-3 * i), 0.0) + x * x
    hvp1 = jax.jit(lambda x, v: jax.jvp(jax.grad(lambda t: f1(t, n)), (x,), (v,))[1])

    def f2(w, X, y):
        return jnp.sum(jnp.log1p(jnp.exp(-y * (X @ w)))) + 0.5 * 0.1 * jnp.dot(w, w)
    hvp2 = jax.jit(lambda w, v, X, y: jax.jvp(jax.grad(lambda t: f2(t, X, y)), (w,), (v,))[1])

    def f3(x):
        def step(i, s):
            return s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return lax.fori_loop(0, x.shape[0] - 1, step, 0.0)
    hess3 = jax.jit(jax.hessian(f3))
    Xj, yj, wj, vj, rj = (jnp.asarray(a) for a in (X, y, w, v, r))
    return {"jax_hvp1": lambda: float(hvp1(x, 1.0)),
            "jax_hvp2": lambda: np.asarray(hvp2(wj, vj, Xj, yj).block_until_ready()),
            "jax_hess3": lambda: np.asarray(hess3(rj).block_until_ready())}


def run(repeats):
    n = 100_000
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 64))
    y = np.sign(rng.standard_normal(100_000))
    w = rng.standard_normal(64) * 0.1
    v = rng.standard_normal(64)
    r = rng.standard_normal(100) * 0.5 + 1.0
    g1, h1 = srcgrad.grad(b1), srcgrad.hvp(b1)
    g2, h2 = srcgrad.grad(b2_numpy, wrt=2), srcgrad.hvp(b2_numpy, wrt=2)
    g3, hess3 = srcgrad.grad(rosenbrock), srcgrad.hessian(rosenbrock)
    cases = {"hvp1": lambda: h1(0.3, n, 1.0), "grad1": lambda: g1(0.3, n),
             "hvp2": lambda: h2(X, y, w, v), "grad2": lambda: g2(X, y, w),
             "hess3": lambda: hess3(r), "grad3": lambda: g3(r)}
    cases.update(jax_cases(0.3, n, X, y, w, v, r))
    notes = _agree(cases)
    t = timed(cases, repeats)
    rows = [("S1 HVP of B1, scalar loop, n = 100,000", "ms", t["hvp1"], t["grad1"], t.get("jax_hvp1")),
            ("S2 HVP of B2, logistic regression, X 100,000×64", "ms", t["hvp2"], t["grad2"], t.get("jax_hvp2")),
            ("S3 Hessian of a 100-dimensional Rosenbrock loop", "ms", t["hess3"], t["grad3"], t.get("jax_hess3"))]
    return rows, notes


def _agree(cases):
    """Each srcgrad result against JAX's (1e-10 relative), before anything is timed."""
    notes = []
    for ours, theirs in (("hvp1", "jax_hvp1"), ("hvp2", "jax_hvp2"), ("hess3", "jax_hess3")):
        if theirs in cases:
            a, b = np.asarray(cases[ours]()), np.asarray(cases[theirs]())
            err = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
            # B1's HVP sums terms up to 10⁴ times its value (i² sin(x i) e^(-i/1000)): a few ulp in
            # each sin (libmvec's in srcgrad's vectorised loop, XLA's own in JAX) move it by ~1e-10
            assert err < 1e-9, (ours, err)
            notes.append(f"{ours} vs JAX: max |a − b| / max |b| = {err:.1e}")
    return notes


def table(rows):
    fmt = lambda v: "–" if v is None else f"{v:,.3g}"  # noqa: E731
    out = ["| benchmark | unit | srcgrad | srcgrad gradient | JAX | ÷ gradient | ÷ JAX |", "|---|---|---|---|---|---|---|"]
    for name, unit, ours, grad, jax in rows:
        out.append(f"| {name} | {unit} | {fmt(ours * 1e3)} | {fmt(grad * 1e3)} | {fmt(jax * 1e3 if jax else None)} | "
                   f"{ours / grad:.2f} | {fmt(ours / jax) if jax else '–'} |")
    return "\n".join(out)


def report(repeats):
    rows, notes = run(repeats)
    return table(rows) + "\n\n" + "\n".join(f"- {n}" for n in notes + [
        f"Times are medians of {repeats} calls, the contenders taking turns; one thread everywhere."])


def main():
    repeats_main("second_order", __doc__, report)


if __name__ == "__main__":
    main()
