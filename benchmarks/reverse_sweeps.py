"""Lean reverse sweeps (issue 29 point 4): each program's gradient time over its own forward time,
srcgrad and JAX side by side, in one run, one thread each. Target: srcgrad's ratio <= 3.

R1 an RK4 integrator written as a user would: ``du = np.zeros_like(u); du[0] = ...;
   du[1:] = ...`` per stage, 10 steps, ``np.sum(u * u)``; at 10^4 and 10^5 points
R2 ADBench's GMM objective (benchmarks/real/gmm.py), its gradient in alphas, means, icf
R3 ADBench's BA objective as a loss: 0.5 * the squared residuals summed over observations (a
   compiled loop calling the per-observation residual of benchmarks/real/ba.py)
R4 ADBench's hand-tracking objective as a loss: 0.5 * its squared residuals
R5 ADBench's LSTM objective (benchmarks/real/lstm.py), its gradient in the parameters

The forward is ``srcgrad.jit(f)``, the gradient ``srcgrad.grad(f)`` (``jax.jit(f)`` and
``jax.jit(jax.grad(f))`` for R1, x64). Times are medians of calls after a warm-up, the programs
taking turns (benchmarks/real/common.timed); every gradient is checked against central finite
differences on a few coordinates before it is timed.

    python benchmarks/reverse_sweeps.py [--repeats N] [--record]
"""
import os
import sys

os.environ.setdefault("SRCGRAD_NUM_THREADS", "1")
os.environ["SRCGRAD_TIERS"] = "off"            # steady state: O3's code, not the quick tier's

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import srcgrad  # noqa: E402
from real import ba, common, gmm, hand, lstm  # noqa: E402
from record import repeats_main  # noqa: E402

STEPS, DT = 10, 0.01


def rhs(u, k):
    du = np.zeros_like(u)
    du[0] = -k[0] * u[0]
    du[1:] = k[:-1] * u[:-1] - k[1:] * u[1:]
    return du


def rk4(u, k):
    for _ in range(STEPS):
        a = rhs(u, k)
        b = rhs(u + 0.5 * DT * a, k)
        c = rhs(u + 0.5 * DT * b, k)
        d = rhs(u + DT * c, k)
        u = u + DT / 6.0 * (a + 2.0 * b + 2.0 * c + d)
    return np.sum(u * u)


def ba_loss(cams, X, w, obs, feats):
    total = 0.0
    for i in range(obs.shape[0]):
        r = ba.reproj_err(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        e = ba.w_err(w[i])
        total += 0.5 * np.sum(r * r) + 0.5 * e * e
    return total


def hand_loss(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights, points,
              correspondences):
    r = hand.hand_objective(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
                            points, correspondences)
    return 0.5 * np.sum(r * r)


def _rk4_jax():
    import jax
    import jax.numpy as jnp

    def jrhs(u, k):
        du = jnp.zeros_like(u)
        du = du.at[0].set(-k[0] * u[0])
        return du.at[1:].set(k[:-1] * u[:-1] - k[1:] * u[1:])

    def jrk4(u, k):
        for _ in range(STEPS):
            a = jrhs(u, k)
            b = jrhs(u + 0.5 * DT * a, k)
            c = jrhs(u + 0.5 * DT * b, k)
            d = jrhs(u + DT * c, k)
            u = u + DT / 6.0 * (a + 2.0 * b + 2.0 * c + d)
        return jnp.sum(u * u)
    return jax.jit(jrk4), jax.jit(jax.grad(jrk4))


def programs():
    """(name, size, f, args, wrt, jax pair or None) for every row."""
    rng = np.random.default_rng(0)
    rows = []
    for n in (10_000, 100_000):
        u, k = rng.random(n), 0.5 + rng.random(n)
        rows.append(("R1 RK4, 10 steps", f"n={n:,}", rk4, (u, k), (0,), "rk4"))
    for label, size in gmm.SIZES.items():
        rows.append(("R2 GMM", label, gmm.gmm_objective, gmm.objective_args(gmm.inputs(**size)), (0, 1, 2), None))
    for label, size in ba.SIZES.items():
        inp = ba.inputs(**size)
        rows.append(("R3 BA loss", label, ba_loss, tuple(inp[k] for k in ("cams", "X", "w", "obs", "feats")),
                     (0, 1, 2), None))
    for label, size in hand.SIZES.items():
        inp = hand.inputs(**size)
        rows.append(("R4 hand loss", label, hand_loss, (inp["theta"],) + tuple(inp[k] for k in hand.ARGS), (0,),
                     None))
    for label, size in lstm.SIZES.items():
        inp = lstm.inputs(**size)
        rows.append(("R5 LSTM", label, lstm.lstm_objective,
                     tuple(inp[k] for k in ("main_params", "extra_params", "state", "sequence")), (0, 1), None))
    return rows


def fd_error(f, args, wrt, grads, step=1e-6):
    """max over the first and last coordinate of each differentiated argument of |central
    difference - gradient|, over max |gradient|."""
    grads = grads if isinstance(grads, tuple) else (grads,)
    scale = max(float(np.max(np.abs(g))) for g in grads) or 1.0
    worst = 0.0
    for g, i in zip(grads, wrt):
        for j in sorted({0, np.size(args[i]) - 1}):
            moved = []
            for sign in (1.0, -1.0):
                a = [np.array(x, copy=True) if n == i else x for n, x in enumerate(args)]
                flat = a[i].reshape(-1)
                h = step * max(1.0, abs(flat[j]))
                flat[j] += sign * h
                moved.append(f(*a))
            worst = max(worst, abs((moved[0] - moved[1]) / (2 * h) - np.ravel(g)[j]) / scale)
    return worst


def run(repeats):
    rows = []
    for name, size, f, args, wrt, jax_name in programs():
        forward, gradient = srcgrad.jit(f), srcgrad.grad(f, wrt=wrt)
        cases = {"fwd": lambda: forward(*args), "grad": lambda: gradient(*args)}
        value, grads = forward(*args), gradient(*args)
        err = fd_error(forward, args, wrt, grads)
        if jax_name:
            common.setup("jax")
            jf, jg = _rk4_jax()
            jargs = [np.asarray(a) for a in args]
            cases["jax fwd"] = lambda: jf(*jargs).block_until_ready()
            cases["jax grad"] = lambda: jg(*jargs).block_until_ready()
            cases["jax fwd"](), cases["jax grad"]()
        times, _ = common.timed(cases, repeats, budget=5.0)
        rows.append((name, size, times, err))
    return rows


def table(rows):
    out = ["| program | size | forward (ms) | gradient (ms) | gradient ÷ forward | JAX forward (ms) | "
           "JAX gradient (ms) | JAX ÷ | finite diff. |", "|---|---|---|---|---|---|---|---|---|"]
    for name, size, t, err in rows:
        jax = (f"{t['jax fwd'] * 1e3:.3g} | {t['jax grad'] * 1e3:.3g} | {t['jax grad'] / t['jax fwd']:.2f}"
               if "jax fwd" in t else "– | – | –")
        out.append(f"| {name} | {size} | {t['fwd'] * 1e3:.3g} | {t['grad'] * 1e3:.3g} | "
                   f"{t['grad'] / t['fwd']:.2f} | {jax} | {err:.1e} |")
    return "\n".join(out)


def report(repeats):
    return table(run(repeats)) + "\n\n" + (
        f"Medians of up to {repeats} calls (turns, 5 s budget each), one thread, SRCGRAD_TIERS=off. "
        "Finite differences: central, relative to the gradient's largest entry.")


def main():
    repeats_main("reverse_sweeps", __doc__, report)


if __name__ == "__main__":
    main()
