"""srcgrad's derivatives in scipy.optimize: the gradient (jac=), value and gradient together
(jac=True), Hessian-vector products for Newton-CG (hessp=) and the Hessian (hess=), each one
compiled call. Needs scipy (pip install scipy).

    python examples/scipy_optimize.py
"""
import numpy as np
import scipy.optimize

import srcgrad


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def main():
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2, 0.9])          # scipy.optimize's own Rosenbrock example
    runs = {
        "BFGS, jac=grad": dict(fun=rosenbrock, jac=srcgrad.grad(rosenbrock), method="BFGS"),
        "L-BFGS-B, jac=True": dict(fun=srcgrad.value_and_grad(rosenbrock), jac=True, method="L-BFGS-B"),
        "Newton-CG, hessp=hvp": dict(fun=rosenbrock, jac=srcgrad.grad(rosenbrock), hessp=srcgrad.hvp(rosenbrock),
                                     method="Newton-CG"),
        "trust-exact, hess=hessian": dict(fun=rosenbrock, jac=srcgrad.grad(rosenbrock),
                                          hess=srcgrad.hessian(rosenbrock), method="trust-exact"),
    }
    for name, kw in runs.items():
        r = scipy.optimize.minimize(x0=x0, **kw)
        print(f"{name:28s} converged={r.success}  iterations={r.nit:3d}  f={r.fun:.3g}  x={np.round(r.x, 4)}")


if __name__ == "__main__":
    main()
