# xy=0.015625,0.015625
# found by the CI fuzz run: max(x, y) at x == y is a kink; the gradient is one one-sided derivative
import math

import numpy as np


def f(x, y, v):
    buf = np.zeros(3)
    a = ((v[0]) * (x)) / (1.0 + (max(x, y)) * (max(x, y)))
    return math.tanh((v[0]) + ((v[0]) + (a))) + x * y + buf[0] * v[1]
