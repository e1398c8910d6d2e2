"""One function per math primitive, for the CUDA target's tests (each is one kernel)."""
import math

import numpy as np


def sin(x):
    return math.sin(x)


def cos(x):
    return math.cos(x)


def tan(x):
    return math.tan(x)


def asin(x):
    return math.asin(x)


def acos(x):
    return math.acos(x)


def atan(x):
    return math.atan(x)


def sinh(x):
    return math.sinh(x)


def cosh(x):
    return math.cosh(x)


def tanh(x):
    return math.tanh(x)


def exp(x):
    return math.exp(x)


def expm1(x):
    return math.expm1(x)


def log(x):
    return math.log(x)


def log1p(x):
    return math.log1p(x)


def log2(x):
    return math.log2(x)


def log10(x):
    return math.log10(x)


def sqrt(x):
    return math.sqrt(x)


def erf(x):
    return math.erf(x)


def atan2(x, y):
    return math.atan2(x, y)


def hypot(x, y):
    return math.hypot(x, y)


def pow(x, y):
    return x ** y


def rounding(x, y):
    return math.floor(x * 7.0) + math.ceil(y * 3.0) + abs(x - y) + np.trunc(x * 5.0) + round(y * 9.0) + x % y


def integer_ops(x, n):
    return x * (n // 3) + (n % 4) + n ** 2


def float32_friendly(x, y):
    return x * y + np.maximum(x, y) - np.minimum(x, y)


def checked(x, n):
    assert x < 0.75, "x must stay below 0.75"
    return x * (7 // n)


def several(x, y):
    return x * y, x > y, int(x * 10.0)


UNARY = [sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, expm1, log, log1p, log2, log10, sqrt, erf]
BINARY = [atan2, hypot, pow, rounding, float32_friendly]
