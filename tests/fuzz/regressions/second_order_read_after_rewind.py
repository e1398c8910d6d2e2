# xy=-0.3,-0.3
# jvp(grad(f)): the gradient reads the argument array through its entry name after the undo log restored it
import math
import numpy as np

def f(x, y, v):
    buf = np.zeros(3)
    a = v[0]
    out = (math.tanh(np.sum(v * (v[0]))) + x * y + buf[0] * v[1])
    v[0] = math.tanh(out)
    return out
