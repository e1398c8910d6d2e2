# xy=0.5,0.5
# jvp(grad(f)) through np.linalg.norm(A, 2) was silently wrong: svdvals_grad's tangent was taken as 0 (as if piecewise constant); now a clear TypingError
import numpy as np


def f(X, y, w, c):
    t1_de = np.zeros((5, 3))
    for t1_di in range(3):
        t1_de[t1_di, t1_di] = 3.0 - t1_di
    t1_d = np.tanh(np.where(np.isfinite(X), X, 0.0)) * 0.1 + t1_de
    t1 = X * np.linalg.norm(t1_d, 2, keepdims=True)
    t4 = X @ w
    return np.sum(t4) + np.sum(t1) + c
