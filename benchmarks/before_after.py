"""One process's timings of B1's gradient, B2's loop-version gradient and an eager op chain,
to compare two checkouts side by side (a refactoring must not change them):

    for d in OLD NEW; do (cd $d && PYTHONPATH=$d python benchmarks/before_after.py); done

run a few times alternately; the tables of run_all.py measure each tool against others.
"""
import sys, time, math, timeit
import numpy as np
import srcgrad
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from loop_programs import b1, b2_loops
g = srcgrad.grad(b1)
n = 100_000
g(0.5, n)
t = min(timeit.repeat(lambda: g(0.5, n), number=10, repeat=7)) / 10 / n * 1e9
rng = np.random.default_rng(0)
X, y, w = rng.standard_normal((500, 20)), np.sign(rng.standard_normal(500)), rng.standard_normal(20)
g2 = srcgrad.grad(b2_loops, wrt=2); g2(X, y, w)
t2 = min(timeit.repeat(lambda: g2(X, y, w), number=200, repeat=7)) / 200 * 1e6
import srcgrad as torch
def chain():
    x = torch.tensor(np.ones(10), requires_grad=True)
    h = x
    for _ in range(1000):
        h = h * 1.0001
    h.sum().backward()
chain()
t3 = min(timeit.repeat(chain, number=3, repeat=7)) / 3 / 1000 * 1e6
print(f"B1 grad {t:.2f} ns/iter   B2 loops grad {t2:.1f} us   eager chain fwd+bwd {t3:.2f} us/op")
