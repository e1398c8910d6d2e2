"""Random programs (straight-line code, branches, for and while loops): the compiled gradient
matches finite differences and jit matches plain Python. hypothesis shrinks a failure to a
small program; add it to programs.py as a regression case."""
import os
import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import srcgrad

from .random_programs import program

_count = itertools.count()


def _load(source, tmp_path_factory):
    folder = tmp_path_factory.mktemp("programs")
    path = folder / f"prog_{next(_count)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def _shifted(f, x, y, v, i, d):
    if i == 0:
        return f(x + d, y, v.copy())
    if i == 1:
        return f(x, y + d, v.copy())
    w = v.copy()
    w[i - 2] += d
    return f(x, y, w)


# exact zeros sit on many generated branch boundaries (sin(0) > 0.0), where differences lie
_points = st.floats(-1.5, 1.5).filter(lambda v: abs(v) > 1e-2)


@settings(max_examples=int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "80")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program(), _points, _points)
def test_random_program_gradient(tmp_path_factory, source, x, y):
    f = _load(source, tmp_path_factory)
    v = np.array([0.4, -0.9, 1.3])
    value = f(x, y, v.copy())
    assert srcgrad.jit(f)(x, y, v.copy()) == pytest.approx(value, rel=1e-12, abs=1e-12)
    try:
        gx, gy, gv = srcgrad.grad(f, wrt=(0, 1, 2))(x, y, v.copy())
    except srcgrad.UnsupportedSyntaxError as e:
        assume("cannot differentiate this yet" not in str(e))      # a documented limitation
        raise
    # the two backends compute the same numbers
    px, py, pv = srcgrad.grad(f, wrt=(0, 1, 2), backend="python")(x, y, v.copy())
    assert (gx, gy) == (pytest.approx(px, rel=1e-12, abs=1e-13), pytest.approx(py, rel=1e-12, abs=1e-13)), source
    np.testing.assert_allclose(gv, pv, rtol=1e-12, atol=1e-13)
    eps = 1e-6
    for i, g in enumerate([gx, gy] + list(gv)):
        right = (_shifted(f, x, y, v, i, eps) - value) / eps
        left = (value - _shifted(f, x, y, v, i, -eps)) / eps
        assume(abs(right - left) < 1e-4 * (1 + abs(right)))      # not at a branch boundary or big kink
        # at a small kink (max(x, y) with x == y) the gradient is one of the one-sided derivatives
        assert any(g == pytest.approx(d, rel=1e-4, abs=1e-5) for d in ((right + left) / 2, right, left)), source
    # forward and reverse mode agree: <vjp(1), t> = jvp(t)
    t = np.array([0.2, 0.1, -0.5])
    _, ydot = srcgrad.jvp(f, (x, y, v.copy()), (0.3, -1.1, t))
    assert ydot == pytest.approx(0.3 * gx - 1.1 * gy + float(np.dot(gv, t)), rel=1e-9, abs=1e-12), source
