"""The four ways every generated program is checked, used by the CI tests and by the long
run (``python -m tests.fuzz``): the llvm backend against the python backend (1e-12), the
gradient against finite differences, forward mode against reverse mode (the dot-product
test ⟨vjp(1), t⟩ = jvp(t)), and the compiled gradient against the eager one where the
program runs on eager tensors."""
import importlib.util
import itertools
import re

import numpy as np
import pytest
from hypothesis import assume

import srcgrad

_count = itertools.count()
V = np.array([0.4, -0.9, 1.3])


def load(source, folder, eager=False):
    """The ``f`` of a program's source, written to a file (the compiler reads source files).
    With ``eager``, ``math`` and ``np`` are the eager shim's."""
    if eager:
        source = source.replace("import math\n\nimport numpy as np\n", "from tests.fuzz.eager_shim import math, np\n")
        # x += e on a tensor changes it in place (and every name bound to it); on a float it
        # binds a new number: write what Python does to numbers
        source = re.sub(r"(?m)^(\s*)([a-z]\w*) ([-+*])= (.*)$", r"\1\2 = \2 \3 (\4)", source)
    path = folder / f"prog_{next(_count)}{'_eager' if eager else ''}.py"
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


def eager_gradient(source, folder, x, y):
    """The eager mode's gradient of the program at (x, y, V), or None where the program does
    not run on eager tensors (a documented eager limitation, say in-place changes of views)."""
    import srcgrad as torch
    try:
        f = load(source, folder, eager=True)
        tx, ty = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, y))
        tv = torch.tensor(V, dtype=torch.float64, requires_grad=True)
        out = f(tx, ty, tv)
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            return None
        out.backward()
    except (RuntimeError, NotImplementedError, TypeError, AttributeError):
        return None
    return [0.0 if t.grad is None else float(t.grad) for t in (tx, ty)] + \
        (list(tv.grad.numpy()) if tv.grad is not None else [0.0] * 3)


def check_program(source, folder, x, y, fuzzing=True):
    """All four checks of one scalar program at (x, y, V); returns whether the eager check ran.
    While ``fuzzing``, a point unfit for finite differences makes hypothesis draw another;
    otherwise (a regression program at its point) that coordinate's difference is skipped."""
    f = load(source, folder)
    v = V.copy()
    value = f(x, y, v.copy())
    for backend in ("llvm", "python"):
        assert srcgrad.jit(f, backend=backend)(x, y, v.copy()) == pytest.approx(value, rel=1e-12, abs=1e-12), source
    try:
        gx, gy, gv = srcgrad.grad(f, wrt=(0, 1, 2))(x, y, v.copy())
    except srcgrad.UnsupportedSyntaxError as e:
        assume("cannot differentiate this yet" not in str(e))      # a documented limitation
        raise
    # 1. the two backends compute the same numbers
    px, py, pv = srcgrad.grad(f, wrt=(0, 1, 2), backend="python")(x, y, v.copy())
    assert (gx, gy) == (pytest.approx(px, rel=1e-12, abs=1e-13), pytest.approx(py, rel=1e-12, abs=1e-13)), source
    np.testing.assert_allclose(gv, pv, rtol=1e-12, atol=1e-13, err_msg=source)
    # 2. finite differences
    eps = 1e-6
    for i, g in enumerate([gx, gy] + list(gv)):
        right = (_shifted(f, x, y, v, i, eps) - value) / eps
        left = (value - _shifted(f, x, y, v, i, -eps)) / eps
        if not abs(right - left) < 1e-4 * (1 + abs(right)):      # at a branch boundary or a big kink
            if fuzzing:
                assume(False)
            continue
        # at a small kink (max(x, y) with x == y) the gradient is one of the one-sided derivatives
        assert any(g == pytest.approx(d, rel=1e-4, abs=1e-5) for d in ((right + left) / 2, right, left)), source
    # 3. forward and reverse mode agree: <vjp(1), t> = jvp(t)
    t = np.array([0.2, 0.1, -0.5])
    _, ydot = srcgrad.jvp(f, (x, y, v.copy()), (0.3, -1.1, t))
    assert ydot == pytest.approx(0.3 * gx - 1.1 * gy + float(np.dot(gv, t)), rel=1e-9, abs=1e-12), source
    # 4. the eager mode, where the program runs on tensors
    eager = eager_gradient(source, folder, x, y)
    if eager is not None:
        np.testing.assert_allclose(eager, [gx, gy] + list(gv), rtol=1e-9, atol=1e-12, err_msg=source)
    return eager is not None


def check_array_program(source, folder):
    """A whole-array program: llvm against python, values and gradients."""
    f = load(source, folder)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(5) * 0.5, rng.standard_normal(3) * 0.5, 0.7)
    expected = f(*args)
    assert srcgrad.jit(f, backend="llvm")(*args) == pytest.approx(expected, rel=1e-11), source
    native = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="llvm")(*args)
    python = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="python")(*args)
    for a, b in zip(native, python):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=source)
