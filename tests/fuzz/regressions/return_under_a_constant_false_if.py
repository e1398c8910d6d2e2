# xy=-0.3,-0.3
# TypeError: 'NoneType' object is not callable
# Failing test case: scalar(
#     source='import math\n\nimport numpy as np\n\n\ndef helper(a, b):\n    return math.tanh(a) * b + 0.5 * a\n\n\ndef squash(a):\n    if a > 0.0:\n        return a / (1.0 + a)\n    return math.tanh(a)\n\n\ndef scaled(a, b=0.5):\n    return a * b + math.sin(a)\n\n\ndef exp(a):\n    return np.exp(0.5 * np.tanh(a))\n\n\ndef tanh(a):\n    return np.tanh(a) * 0.9\n\n\ndef many(a, b):\n    for i in range(3):\n        if a * i > 0.5:\n            return a, b\n        a = math.tanh(a + b)\n    return b, a\n\n\ndef f(x, y, v):\n    buf = np.zeros(3)\n    for i1 in range(0):\n        if -0.7 > 0.0:\n            return math.tanh(v[0]) + x * y + buf[0] * v[1]\n    return (math.tanh(v[0]) + x * y + buf[0] * v[1])\n',
#     x=-0.3,
#     y=-0.3,  # or any other generated value
# )
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
    for i1 in range(0):
        if -0.7 > 0.0:
            return math.tanh(v[0]) + x * y + buf[0] * v[1]
    return (math.tanh(v[0]) + x * y + buf[0] * v[1])
