# xy=0.9453098040770049,0.9453098040770049
# grad(grad(f)) against jvp(grad(f)): the first derivative's undo log rewound buf (saved while zeros) under buf * y, which the second reverse sweep read: a wrong d/dy; now a clear error
import math

import numpy as np

import srcgrad


def helper(a, b):
    return math.tanh(a) * b + 0.5 * a


def squash(a):
    if a > 0.0:
        return a / (1.0 + a)
    return math.tanh(a)



@srcgrad.jit
def jitted(a, b):
    return math.sin(a) * b + 0.5 * a


dsquash = srcgrad.grad(squash)


def looped(a, b):
    s = 0.0
    for i in range(3):
        s = math.tanh(s * a + b * i)
    return s


dlooped = srcgrad.grad(looped, wrt=1)
dhelper = srcgrad.grad(helper, wrt=(0, 1))
vsquash = srcgrad.vectorize(squash)
vdhelper = srcgrad.vectorize(dhelper)


def scaled(a, b=0.5):
    return a * b + math.sin(a)


def exp(a):
    return np.exp(0.5 * np.tanh(a))


def tanh(a):
    return np.tanh(a) * 0.9


def many(a, b):
    for i in range(3):
        if a * i > 1.2:
            return a, b, a * b, a - b, math.sin(a), math.tanh(b), a + 0.5, b * b, math.cos(a + b), 0.25 * a
        a = math.tanh(a + b)
    return 0.25 * a, math.cos(a + b), b * b, a + 0.5, math.tanh(b), math.sin(a), a - b, a * b, b, a


def log1p(x, y, v):
    buf = np.zeros(3)
    buf[0] += math.tanh(math.atan(math.sin(x)))
    w1 = 0
    w2 = 0
    for j3 in range(2):
        w2 = w1
        w1 = np.sum(np.sin(buf * (0.25) + v))
    b = math.tanh(w1 + w2)
    return (math.tanh(math.sin(np.sum(np.sin(buf * (y) + v)))) + x * y + buf[0] * v[1])
