"""One process's timings of B1's gradient, B2's loop-version gradient, an eager op chain, and
the first gradient of a 30-line and a 300-line function (each in a fresh process, imports
excluded), to compare two checkouts side by side (a refactoring must not change them):

    for d in OLD NEW; do (cd $d && PYTHONPATH=$d python benchmarks/before_after.py); done

run a few times alternately; the tables of run_all.py measure each tool against others.
"""
import math
import os
import subprocess
import sys
import tempfile
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from compile_time import PROGRAM  # noqa: E402
from loop_programs import b1, b2_loops  # noqa: E402


def long_program(blocks=12):
    """PROGRAM's 30-line model written ``blocks`` times over (its names suffixed by the block,
    each block fed by the one before): a 300-line function with 12 loops, branches and whiles."""
    head, body = PROGRAM.split("def model(x, w, n):\n")
    body, tail = body.split("\ng = model")
    lines = [ln for ln in body.splitlines() if ln.strip()]
    out = ["def model(x, w, n):", "    acc = 0.0"]
    names = ("s", "prev", "t", "u", "k", "y", "a", "b", "c", "d", "e")
    for j in range(blocks):
        for ln in lines:
            if ln.strip().startswith("return"):
                ln = f"    acc = acc + ({ln.strip()[len('return '):]}) * 0.1\n    x = x + 0.01 * acc"
            for name in names:
                ln = __import__("re").sub(rf"\b{name}\b", f"{name}_{j}", ln)
            out.append(ln)
    out.append("    return acc")
    return head + "\n".join(out) + "\ng = model" + tail


def first_gradient(source):
    """Seconds from decoration to the first gradient, the minimum of 3 fresh processes."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.py")     # a real file: the compiler reads its source
        with open(path, "w") as f:
            f.write(source.replace("BACKEND", repr("llvm")))
        times = []
        for _ in range(3):
            done = subprocess.run([sys.executable, path], capture_output=True, text=True, check=True)
            times.append(float(done.stdout.strip().splitlines()[-1]))
    return min(times)


g = srcgrad.grad(b1)
n = 100_000
g(0.5, n)
t = min(timeit.repeat(lambda: g(0.5, n), number=10, repeat=7)) / 10 / n * 1e9
rng = np.random.default_rng(0)
X, y, w = rng.standard_normal((500, 20)), np.sign(rng.standard_normal(500)), rng.standard_normal(20)
g2 = srcgrad.grad(b2_loops, wrt=2)
g2(X, y, w)
t2 = min(timeit.repeat(lambda: g2(X, y, w), number=200, repeat=7)) / 200 * 1e6
torch = srcgrad


def chain():
    x = torch.tensor(np.ones(10), requires_grad=True)
    h = x
    for _ in range(1000):
        h = h * 1.0001
    h.sum().backward()


chain()
t3 = min(timeit.repeat(chain, number=3, repeat=7)) / 3 / 1000 * 1e6
c30 = first_gradient(PROGRAM)
c300 = first_gradient(long_program())
print(f"B1 grad {t:.2f} ns/iter   B2 loops grad {t2:.1f} us   eager chain fwd+bwd {t3:.2f} us/op   "
      f"first gradient (llvm): 30 lines {c30 * 1e3:.0f} ms, 300 lines {c300 * 1e3:.0f} ms")
