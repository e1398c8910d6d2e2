# xy=1.4064673419707043,-0.5493363925228791
# jvp(grad(f)): the gradient rewinds the undo log in the else branch of an if whose then branch rewound it too (mutation.py's walk took the log as already rewound)
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
            return a, b, a * b, a - b, math.sin(a), math.tanh(b), a + 0.5, b * b, math.cos(a + b), 0.25 * a, a * a - b, b - 1.0
        a = math.tanh(a + b)
    return b - 1.0, a * a - b, 0.25 * a, math.cos(a + b), b * b, a + 0.5, math.tanh(b), math.sin(a), a - b, a * b, b, a


def f(x, y, v, scale=1.0):
    buf = np.zeros(3)
    w1 = 0
    w2 = 0
    w3 = 0
    for j4 in range(0):
        w3 = w2
        w2 = w1
        w1 = v[0]
    a = math.tanh(w1 + w2 + w3)
    w5 = 0
    w6 = 0
    for j7 in range(0):
        w6 = w5
        w5 = v[0]
    a = math.tanh(w5 + w6)
    if x != 0.0 and math.atan2(0.0 % -(1.0 + (v[0]) * (v[0])), -1.0) / x > 1.0:
        if max(0.25, a) > 0.3:
            return math.tanh(math.sqrt(((1.0 + 0.0 * (buf[1])) // 0.1) * ((1.0 + 0.0 * (buf[1])) // 0.1))) + x * y + buf[0] * v[1]
        v[0] *= math.tanh(y)
    out = (math.tanh((1.0 + 0.0 * (v[2])) // 0.1) + x * y + buf[0] * v[1]) * scale
    v[2] = math.tanh(out)
    return out
