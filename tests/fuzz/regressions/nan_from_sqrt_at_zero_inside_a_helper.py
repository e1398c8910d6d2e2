# xy=-0.6322587596368556,0.8029249846888646
# m2 = sqrt((v[0] - v[0]) ** 2.0) flows into the result: its derivative is inf * 0 = NaN, as in PyTorch
# (the finite-difference check accepts NaN for such programs)
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
            return a, b, a * b, a - b, math.sin(a)
        a = math.tanh(a + b)
    return math.sin(a), a - b, a * b, b, a


def f(x, y, v, scale=1.0):
    buf = np.zeros(3)
    x += math.tanh(math.sin(v[0]))
    m1, m2, m3, m4, m5 = many(v[0], math.sqrt(((v[0]) - (v[0])) ** 2.0))
    a = 0.5 * m1 + -0.25 * m2 + 1.0 * m3 + 0.75 * m4 + 0.5 * m5
    x += math.tanh(((v[0]) % -0.7) + (v[0]))
    return (math.tanh((math.sin(v[0])) * (scaled(0.25, b=a))) + x * y + buf[0] * v[1]) * scale
