"""srcgrad's compiler on a small function: the gradient, checked against finite differences,
and the generated source you can read.  Run:  python examples/compiler_demo.py"""
import math

import numpy as np

import srcgrad


def model(x, w):
    """A loop with a branch: the kind of code tracing frameworks find awkward."""
    s = 0.0
    for i in range(x.shape[0]):
        t = x[i] * w
        if t > 0.0:
            s += math.tanh(t)
        else:
            s += 0.1 * t
    return s * s


x = np.array([0.5, -1.0, 2.0, 0.3])
w = 0.7
dx, dw = srcgrad.grad(model, wrt=(0, 1))(x, w)
eps = 1e-6
fd_w = (model(x, w + eps) - model(x, w - eps)) / (2 * eps)
print("d model / d w  =", dw, "  (finite differences:", fd_w, ")")
print("d model / d x  =", dx)

g = srcgrad.grad(model, wrt=(0, 1))
g(x, w)
print("\nThe generated gradient:\n")
print(g.adjoint_source)
