# xy=1.0,-0.3
# sqrt((x - x) ** 2) at 0: each gradient entry NaN in the eager mode (as PyTorch) or in compiled code; the checker's NaN filter left nothing to compare and failed unpacking
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
        if a * i > 0.5:
            return a, b
        a = math.tanh(a + b)
    return b, a


def f(x, y, v):
    buf = np.zeros(3)
    x += math.tanh(v[0])
    x += math.tanh(helper(math.sin(y), np.sum(v * (v[0]))))
    return (math.tanh(math.sqrt(((x) - (x)) ** 2.0)) + x * y + buf[0] * v[1])
