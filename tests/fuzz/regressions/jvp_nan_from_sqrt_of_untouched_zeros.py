# xy=-0.3,-0.3
# sqrt(buf[2] * buf[2]) of an element np.zeros left 0: jvp meets inf * 0 (NaN), reverse mode sends the NaN
# into the adjoint of np.zeros (finite gradient), as PyTorch's two modes do; the check accepts the NaN
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
    buf[0] = math.tanh(v[0])
    m1, m2 = many(v[0], v[0])
    a = 0.5 * m1 + -0.25 * m2
    v[0] = math.tanh(v[0])
    return (math.tanh(math.sin(math.sqrt((buf[2]) * (buf[2])))) + x * y + buf[0] * v[1])
