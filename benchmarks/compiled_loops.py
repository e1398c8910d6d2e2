"""Compiled gradients beside hand-written C, numpy and PyTorch, measured in one run.

B1 scalar loop: f(x, n) = Σ_{i<n} sin(x·i)·exp(-1e-3·i) + x², gradient in x, n = 100,000 (ns per iteration).
B2 logistic regression: Σ log(1+exp(−y·(Xw))) + ½λ‖w‖², X of 100,000×64, gradient in w, written with
explicit loops and with numpy calls (ms per gradient), beside a hand-written fused C gradient (one
pass over X, as Numba with hand-written loops) and numpy by hand.

    python benchmarks/compiled_loops.py [--repeats N] [--record]

Numba and JAX columns are filled when they are installed (`pip install numba jax`; not
dependencies of srcgrad): benchmarks/contenders.py. Everything runs on one thread.
"""
import ctypes
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from loop_programs import b1, b2_loops, b2_numpy  # noqa: E402
from contenders import jax_b1_cases, jax_b2_cases, numba_b1_cases, numba_b2_cases  # noqa: E402
from record import repeats_main  # noqa: E402

C_SOURCE = r"""
#include <math.h>
double b1_forward(double x, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) s += sin(x * i) * exp(-1e-3 * i);
    return s + x * x;
}
double b1_gradient(double x, long n) {
    double d = 0.0;
    for (long i = 0; i < n; i++) d += cos(x * i) * i * exp(-1e-3 * i);
    return d + 2.0 * x;
}
/* B2 by hand, one pass over X (what Numba with hand-written fused loops does) */
void b2_gradient(const double *X, const double *y, const double *w, double *g, long n, long m) {
    for (long j = 0; j < m; j++) g[j] = 0.1 * w[j];
    for (long i = 0; i < n; i++) {
        const double *row = X + i * m;
        double z = 0.0;
        for (long j = 0; j < m; j++) z += row[j] * w[j];
        double s = -y[i] / (1.0 + exp(y[i] * z));
        for (long j = 0; j < m; j++) g[j] += s * row[j];
    }
}
"""


def c_library():
    folder = tempfile.mkdtemp()
    src, lib = os.path.join(folder, "b1.c"), os.path.join(folder, "b1.so")
    with open(src, "w") as f:
        f.write(C_SOURCE)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", lib, src, "-lm"], check=True)
    dll = ctypes.CDLL(lib)
    for name in ("b1_forward", "b1_gradient"):
        getattr(dll, name).restype = ctypes.c_double
        getattr(dll, name).argtypes = [ctypes.c_double, ctypes.c_long]
    dll.b2_gradient.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long] * 2
    return dll


def timed(cases, repeats):
    """Median seconds per call; the cases take turns so machine noise hits them alike."""
    for fn in cases.values():
        fn()
    times = {k: [] for k in cases}
    for _ in range(repeats):
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def torch_b1(n):
    import torch
    torch.set_num_threads(1)
    x = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    s = torch.zeros((), dtype=torch.float64)
    for i in range(n):
        s = s + torch.sin(x * i) * math.exp(-1e-3 * i)
    (s + x * x).backward()
    return x.grad.item()


def run(repeats):
    """Rows: (benchmark, unit, {column: seconds or ns}) for the table."""
    n = 100_000
    dll = c_library()
    fwd = srcgrad.jit(b1)
    grad = srcgrad.grad(b1)
    vg = srcgrad.value_and_grad(b1)
    jvp = lambda: srcgrad.jvp(b1, (0.3, n), (1.0, 0))  # noqa: E731
    checks = [grad(0.3, n), dll.b1_gradient(0.3, n)]
    assert abs(checks[0] - checks[1]) < 1e-9 * abs(checks[1]), checks
    cases = {"c_fwd": lambda: dll.b1_forward(0.3, n), "c_grad": lambda: dll.b1_gradient(0.3, n),
             "sg_fwd": lambda: fwd(0.3, n), "sg_grad": lambda: grad(0.3, n), "sg_jvp": jvp,
             "sg_vg": lambda: vg(0.3, n)}
    cases.update(numba_b1_cases(0.3, n))
    cases.update(jax_b1_cases(0.3, n))
    if "jax_grad" in cases:
        assert abs(cases["jax_grad"]() - checks[1]) < 1e-7 * abs(checks[1])
    t = {k: v / n * 1e9 for k, v in timed(cases, repeats).items()}
    rows = [("B1 scalar loop, forward", "ns/iter",
             {"srcgrad": t["sg_fwd"], "C": t["c_fwd"], "Numba": t.get("numba_fwd"), "JAX": t.get("jax_fwd")}),
            ("B1 scalar loop, gradient (reverse mode)", "ns/iter",
             {"srcgrad": t["sg_grad"], "C": t["c_grad"], "JAX": t.get("jax_grad")}),
            ("B1 scalar loop, derivative by jvp (forward mode)", "ns/iter", {"srcgrad": t["sg_jvp"], "C": t["c_grad"]}),
            ("B1 scalar loop, value and gradient (C: forward + gradient)", "ns/iter",
             {"srcgrad": t["sg_vg"], "C": t["c_fwd"] + t["c_grad"]})]
    try:
        torch_b1(10)                       # imports torch outside the timing
        t0 = time.perf_counter()
        torch_b1(2000)
        rows[1][2]["PyTorch or numpy"] = (time.perf_counter() - t0) / 2000 * 1e9
    except ImportError:
        pass

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 64))
    y = np.sign(rng.standard_normal(100_000))
    w = rng.standard_normal(64) * 0.1
    g_loops = srcgrad.grad(b2_loops, wrt=2)
    g_loops_unchecked = srcgrad.grad(b2_loops, wrt=2, boundscheck=False)
    g_numpy = srcgrad.grad(b2_numpy, wrt=2)

    def by_hand():
        z = X @ w
        s = -y / (1.0 + np.exp(y * z))
        return X.T @ s + 0.1 * w

    def c_fused():
        g = np.empty(64)
        dll.b2_gradient(X.ctypes.data, y.ctypes.data, w.ctypes.data, g.ctypes.data, *X.shape)
        return g
    cases = {"loops": lambda: g_loops(X, y, w), "unchecked": lambda: g_loops_unchecked(X, y, w),
             "numpy": lambda: g_numpy(X, y, w), "hand": by_hand, "c": c_fused}
    cases.update(numba_b2_cases(X, y, w))
    cases.update(jax_b2_cases(X, y, w))
    ref = by_hand()
    for k, fn in cases.items():
        assert np.allclose(fn(), ref), k
    t2 = {k: v * 1e3 for k, v in timed(cases, max(5, repeats)).items()}
    others = {"C": t2["c"], "Numba": t2.get("numba"), "JAX": t2.get("jax"), "PyTorch or numpy": t2["hand"]}
    for name, key in (("loop version", "loops"), ("loop version, boundscheck=False", "unchecked"),
                      ("numpy version", "numpy")):
        rows.append((f"B2 logistic regression, {name}", "ms", {"srcgrad": t2[key], **others}))
    return rows


COLUMNS = ["srcgrad", "C", "Numba", "JAX", "PyTorch or numpy"]


def table(rows):
    """Figures, then srcgrad's time over each other tool's (below 1: srcgrad is faster)."""
    fmt = lambda v: "–" if v is None else f"{v:,.2f}"  # noqa: E731
    head = ["benchmark", "unit", "srcgrad (llvm)", "C gcc -O2", "Numba", "JAX", "PyTorch (B1) / numpy by hand (B2)",
            "÷ C", "÷ Numba", "÷ JAX", "÷ numpy"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, unit, cols in rows:
        ours = cols.get("srcgrad")
        ratios = [fmt(ours / cols[c]) if ours and cols.get(c) else "–" for c in ("C", "Numba", "JAX")]
        ratios.append(fmt(ours / cols["PyTorch or numpy"]) if ours and unit == "ms" and cols.get("PyTorch or numpy")
                      else "–")
        out.append("| " + " | ".join([name, unit] + [fmt(cols.get(c)) for c in COLUMNS] + ratios) + " |")
    return "\n".join(out)


def main():
    repeats_main("compiled_loops", __doc__, lambda repeats: table(run(repeats)), "C compiled with gcc -O2")


if __name__ == "__main__":
    main()
