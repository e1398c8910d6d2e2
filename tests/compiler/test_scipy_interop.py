"""srcgrad's derivatives used by scipy.optimize (issue 15, point 4): jac=grad, jac=True with
value_and_grad, hessp=hvp for Newton-CG, hess=hessian; checked against scipy's own
Rosenbrock derivatives (rosen_der, rosen_hess_prod, rosen_hess: an independent tool)."""
import numpy as np
import pytest

import srcgrad

scipy_optimize = pytest.importorskip("scipy.optimize")


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


X0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2, 0.9])


def test_the_derivatives_are_scipys():
    p = np.linspace(-1.0, 2.0, 6)
    np.testing.assert_allclose(srcgrad.grad(rosenbrock)(X0), scipy_optimize.rosen_der(X0), rtol=1e-13)
    value, g = srcgrad.value_and_grad(rosenbrock)(X0)
    assert value == pytest.approx(scipy_optimize.rosen(X0), rel=1e-14)
    np.testing.assert_allclose(srcgrad.hvp(rosenbrock)(X0, p), scipy_optimize.rosen_hess_prod(X0, p), rtol=1e-13)
    np.testing.assert_allclose(srcgrad.hessian(rosenbrock)(X0), scipy_optimize.rosen_hess(X0), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("method, extra", [
    ("BFGS", {}),
    ("L-BFGS-B", {"value_and_grad": True}),
    ("Newton-CG", {"hessp": True}),
    ("trust-exact", {"hess": True}),
])
def test_minimize_reaches_the_minimum(method, extra):
    kw = {"method": method, "jac": srcgrad.grad(rosenbrock)}
    fun = rosenbrock
    if extra.get("value_and_grad"):
        fun, kw["jac"] = srcgrad.value_and_grad(rosenbrock), True
    if extra.get("hessp"):
        kw["hessp"] = srcgrad.hvp(rosenbrock)
    if extra.get("hess"):
        kw["hess"] = srcgrad.hessian(rosenbrock)
    r = scipy_optimize.minimize(fun, X0, **kw)
    assert r.success, r.message
    np.testing.assert_allclose(r.x, np.ones(6), atol=1e-3)
