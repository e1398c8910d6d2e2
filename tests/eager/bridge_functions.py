"""Functions compiled for test_compiled_bridge.py (the compiler reads them from this file)."""
import numpy as np


def energy(x, w):
    return np.sum(np.sin(x) * w) + np.sum(x * x)


def two_results(x):
    return np.sin(x) * 2.0, np.sum(x * x)


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.tanh(x * i))
    return s
