"""The functions benchmarks/compiled_loops.py differentiates (in a file: the compiler reads source)."""
import math

import numpy as np


def b1(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i) * math.exp(-1e-3 * i)
    return s + x * x


def b2_loops(X, y, w):
    loss = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        loss += math.log1p(math.exp(-y[i] * z))
    reg = 0.0
    for j in range(w.shape[0]):
        reg += w[j] * w[j]
    return loss + 0.5 * 0.1 * reg


def b2_numpy(X, y, w):
    return np.sum(np.log1p(np.exp(-y * (X @ w)))) + 0.5 * 0.1 * np.dot(w, w)


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def bump(x, y):
    """V1/V2 (benchmarks/vectorize.py): a function of two numbers, mapped over 10⁶ points."""
    return math.sin(x) * math.exp(-y * y) + math.log1p(x * x)
