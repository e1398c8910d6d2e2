# xy=0.7,0.8
# found by the fuzzer: the statements after an `if` whose nested `if` continues ran on every path
import math

import numpy as np


def f(x, y, v):
    buf = np.zeros(3)
    s = 0.0
    for i in range(3):
        if x > 0.5:
            if y > 0.5:
                continue
        s += math.sin(x * y + i) * v[i]
    buf[1] = s
    return s + buf[1]
