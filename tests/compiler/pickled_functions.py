"""Functions for test_pickling.py, in a module the worker processes import."""
import math

import numpy as np

import srcgrad


@srcgrad.grad
def decorated(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + math.sin(x[i]) * (i + 1)
    return s


def loss(w, X, y):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z))) + 0.5 * np.dot(w, w)


def bump(x, y):
    return math.sin(x) * math.exp(-y * y)


grad_loss = srcgrad.grad(loss)


def shard_gradient(args):
    """The gradient of loss on one shard (what a worker computes)."""
    g, w, X, y = args
    return g(w, X, y)
