# xy=0.5,0.5
# np.squeeze(y) without axis= was refused after y[0] = ..., as if y were computed in the function: a write keeps the argument's shape
import numpy as np


def f(X, y, w, c):
    y[0] = w[0] * c
    t1 = np.squeeze(y) * (y + 0.0)
    t2 = X @ w
    return np.sum(t1) + np.sum(t2 * y)
