# xy=0.4239212997717141,0.4239212997717141
# jvp(grad(f)) on the python backend: the float tangent of an 'and' value computed in an if took the name of the tangent array dv (read in the if), which the restore after the undo log read again (numpy.float64 item assignment)
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
            return a, b, a * b, a - b, math.sin(a)
        a = math.tanh(a + b)
    return math.sin(a), a - b, a * b, b, a


def f(x, y, v, scale=1.0):
    buf = np.zeros(3)
    v[1] = math.tanh(v[1])
    return (math.tanh((((squash(1.5)) != 0.0 and (np.min(v - (buf[1]))) / (squash(1.5))) or 0.5)) + x * y + buf[0] * v[1]) * scale
