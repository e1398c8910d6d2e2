# xy=-0.3,0.0
# x += tanh(sin(sqrt((v0 - v0) ** 2.0))) with y = 0: the adjoint of x is 0, so compiled reverse mode gives v0
# its true derivative, where the eager mode (as PyTorch) and jvp give NaN (0 times sqrt's infinite slope)
import math

import numpy as np


def helper(a, b):
    return math.tanh(a) * b + 0.5 * a


def squash(a):
    if a > 0.0:
        return a / (1.0 + a)
    return math.tanh(a)


def scaled(a, b=0.5):
    return a * b + math.sin(a)


def exp(a):
    return np.exp(0.5 * np.tanh(a))


def tanh(a):
    return np.tanh(a) * 0.9


def many(a, b):
    for i in range(3):
        if a * i > 0.5:
            return a, b
        a = math.tanh(a + b)
    return b, a


def f(x, y, v):
    buf = np.zeros(3)
    x += math.tanh(math.sin(math.sqrt(((v[0]) - (v[0])) ** 2.0)))
    t1 = buf[1:]
    return (math.tanh(v[0]) + x * y + buf[0] * v[1])
