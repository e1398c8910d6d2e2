"""Functions compiled for test_compiled_bridge.py (the compiler reads them from this file)."""
import math

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


def mixed(x, y, c):
    z = x * y
    z[0] = z[0] * c[0]
    return np.sum(np.exp(z) * c) + np.sum(y ** 3), np.tanh(x) * np.sum(y)


def branchy(x, y):
    if x > y:
        return math.sin(x) * y
    return x * y * y
