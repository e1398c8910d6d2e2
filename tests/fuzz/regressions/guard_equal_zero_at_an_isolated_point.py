# xy=0.32006606272537264,0.0
# (y == 0.0 or ...) picks a branch at the isolated point y = 0.0 that finite differences never see: the check
# skips it there, as it does (b != 0.0 else ...); found once programs with writes in nested loops were differentiated
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
            return a, b, a * b, a - b, math.sin(a), math.tanh(b), a + 0.5, b * b, math.cos(a + b), 0.25 * a
        a = math.tanh(a + b)
    return 0.25 * a, math.cos(a + b), b * b, a + 0.5, math.tanh(b), math.sin(a), a - b, a * b, b, a


def f(x, y, v):
    buf = np.zeros(3)
    y = math.atan2(((buf[0]) if (y) == 0.0 or (buf[0]) / (y) < -0.5 else (y) * 0.5), 1.0 + ((v[0]) + (v[0])) * ((v[0]) + (v[0])))
    k1 = 0
    while k1 < 3 and tanh(x) < 1.5:
        k1 += 1
        if y > -0.2:
            return math.tanh((np.max(np.tanh(v + (buf[1])))) * (np.max(np.tanh(v + (buf[1]))))) + x * y + buf[0] * v[1]
        k2 = 0
        while k2 < 3 and v[k2] < 1.5:
            k2 += 1
            buf[0] += math.tanh(abs((v[1]) / (1.0 + (buf[0]) * (buf[0]))) ** 2.0)
    if scaled((((x) != 0.0 and (x) / (x)) or 0.5), b=-0.7) > 0.0:
        return math.tanh(buf[1]) + x * y + buf[0] * v[1]
    out = (math.tanh(math.sqrt((np.mean(np.maximum(v, y))) * (np.mean(np.maximum(v, y))))) + x * y + buf[0] * v[1])
    v[2] = math.tanh(out)
    return out
