# xy=0.5,0.5
# checkpoint=k against the taped gradient on llvm: 1 ulp apart, as the recomputed loop met libmvec's tanh where the taped one met libm's (the checker now allows rounding where libmvec is called)
import numpy as np


def f(X, y, w, c):
    t0 = np.sin(y)
    t1_e = np.zeros((3, 3))
    for t1_i in range(3):
        t1_e[t1_i, t1_i] = 1.0
    t1_g = np.tanh(X).T @ np.tanh(X) * 0.5 + t1_e
    t1 = np.linalg.solve(t1_g, w)
    t2 = np.cumsum(X, axis=1)
    t3 = t0 * 1.0
    for i3 in range(2):
        t3[1:3] = np.tanh(t3[2:4] + c)
        for j3 in range(2):
            t3[j3] += 0.1 * np.tanh(t3[j3 + 1] * c)
        t3[i3 % 5] = np.tanh(t3[(i3 + 1) % 5] * c + np.sum(t3) * 0.1)
    return np.sum(t3) + np.sum(t1) + np.sum(t2) + c
