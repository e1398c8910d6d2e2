"""Derivatives at kinks, poles and ties: the conventions written beside each rule in
ad/rules.py, checked against PyTorch (float64 autograd) on both backends, in reverse (grad)
and forward (jvp) mode; and no rule may raise where the function itself is fine (the python
backend's floats raise ZeroDivisionError/OverflowError where IEEE gives inf)."""
import math
import warnings

import numpy as np
import pytest
import torch

import srcgrad
from tests.oracles import assert_matches_reference

# the functions themselves warn where numpy does (np.log(0.0)); grads_of checks the rules do not add any
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
BACKENDS = ("python", "llvm")
INF, NAN = math.inf, math.nan


def f_abs(x):
    return 3.0 * np.abs(x)


def f_pow(x, y):
    return x ** y


def f_pow_zero(x):
    return np.power(x, 0.0)


def f_square(x):
    return x ** 2


def f_root(x):
    return x ** 0.5


def f_inverse(x):
    return x ** -1.0


def f_zero_base(y):
    return 0.0 ** y


def f_sqrt(x):
    return np.sqrt(x)


def f_atan2(y, x):
    return math.atan2(y, x)


def f_hypot(x, y):
    return math.hypot(x, y)


def f_max(x, y):
    return max(x, y)


def f_min(x, y):
    return min(x, y)


def f_np_max(x, y):
    return np.maximum(x, y)


def f_where(x, y):
    return np.where(x > y, x, y)


def f_log(x):
    return np.log(x)


def f_log1p(x):
    return np.log1p(x)


def f_log2(x):
    return np.log2(x)


def f_log10(x):
    return np.log10(x)


def f_asin(x):
    return np.arcsin(x)


def f_acos(x):
    return np.arccos(x)


def f_mod(x, y):
    return x % y


def f_div(x, y):
    return x / y


# name: (compiled function, torch function, points)
POW_POINTS = [(x, y) for x in (0.0, 2.0, -2.0, 0.5, 1e-300, 1.5e-160) for y in (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.5)]
CASES = {
    "abs": (f_abs, lambda x: 3.0 * torch.abs(x), [(0.0,), (-0.0,), (2.0,), (-2.0,)]),
    "pow": (f_pow, lambda x, y: x ** y, POW_POINTS),
    "pow_zero_exponent": (f_pow_zero, lambda x: torch.pow(x, 0.0), [(0.0,), (-3.0,), (2.0,)]),
    "square": (f_square, lambda x: x ** 2, [(0.0,), (-3.0,), (1e200,)]),
    "root": (f_root, lambda x: x ** 0.5, [(0.0,), (4.0,), (1e-300,)]),
    "inverse": (f_inverse, lambda x: x ** -1.0, [(1e-300,), (2.0,), (-4.0,)]),
    "zero_base": (f_zero_base, lambda y: torch.pow(0.0, y), [(0.0,), (2.0,), (0.5,)]),
    "sqrt": (f_sqrt, torch.sqrt, [(0.0,), (4.0,)]),
    "atan2": (f_atan2, torch.atan2, [(0.0, 0.0), (1.0, 2.0), (-1.0, 0.0), (0.0, -2.0)]),
    "max": (f_max, torch.maximum, [(1.0, 1.0), (-0.0, 0.0), (1.0, 2.0), (2.0, 1.0)]),
    "min": (f_min, torch.minimum, [(1.0, 1.0), (0.0, -0.0), (1.0, 2.0), (2.0, 1.0)]),
    "np_maximum": (f_np_max, torch.maximum, [(3.0, 3.0), (3.0, 4.0)]),
    "where": (f_where, lambda x, y: torch.where(x > y, x, y), [(1.0, 1.0), (2.0, 1.0)]),
    "log": (f_log, torch.log, [(0.0,), (2.0,)]),
    "log1p": (f_log1p, torch.log1p, [(-1.0,), (1.0,)]),
    "log2": (f_log2, torch.log2, [(0.0,), (3.0,)]),
    "log10": (f_log10, torch.log10, [(0.0,), (3.0,)]),
    "asin": (f_asin, torch.asin, [(1.0,), (-1.0,), (0.5,)]),
    "acos": (f_acos, torch.acos, [(1.0,), (-1.0,), (0.5,)]),
    "mod": (f_mod, torch.remainder, [(6.0, 3.0), (5.0, 3.0), (-1.0, 3.0), (1.0, -3.0)]),
    "div": (f_div, lambda x, y: x / y, [(1.0, 4.0), (0.0, 3.0)]),
}


def torch_grad(fn, point):
    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in point]
    out = fn(*ts)
    return [g.item() if g is not None else 0.0 for g in torch.autograd.grad(out, ts, allow_unused=True)]


def same(a, b):
    """Equal to 1e-12 (relative), NaN equal to NaN, infinities of the same sign."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return a == pytest.approx(b, rel=1e-12, abs=1e-300)


def python_value(fn, point):
    """f(point) in plain Python, or None where Python raises or leaves the floats."""
    try:
        out = fn(*point)
    except ArithmeticError:
        return None
    return out if isinstance(out, (float, np.floating)) else None


def grads_of(fn, point, backend):
    wrt = tuple(range(len(point)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*point)
    with warnings.catch_warnings():
        if not caught:
            warnings.simplefilter("error")     # a rule must not even warn where the function does not
        g = srcgrad.grad(fn, wrt=wrt, backend=backend)(*point)
    return list(g)


def jvp_column(fn, point, k, backend):
    tangents = [0.0] * len(point)
    tangents[k] = 1.0
    return srcgrad.jvp(fn, point, tangents, backend=backend)[1]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_derivative_matches_torch(name, backend):
    fn, tfn, points = CASES[name]
    for point in points:
        if python_value(fn, point) is None:
            continue        # a pole where Python raises: no derivative to compare
        expected = torch_grad(tfn, point)
        got = grads_of(fn, point, backend)
        assert all(same(g, e) for g, e in zip(got, expected)), (name, point, got, expected)
        # forward mode: jvp(t) is <grad, t> in IEEE arithmetic (an infinite partial times a zero
        # tangent is NaN, in reverse mode and PyTorch alike)
        for k in range(len(point)):
            along = sum(g * (1.0 if j == k else 0.0) for j, g in enumerate(got))
            assert same(jvp_column(fn, point, k, backend), along), (name, point, k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_derivatives_follow_the_conventions(backend):
    """The numbers written in the pow rule's comment, whatever PyTorch may do in the future."""
    g = srcgrad.grad(f_pow, wrt=(0, 1), backend=backend)
    assert g(0.0, 0.0) == (0.0, 0.0)            # x**0 is constant; 0**y is constant for y >= 0
    assert g(0.0, 2.0) == (0.0, 0.0)
    assert g(0.0, 1.0) == (1.0, 0.0)
    assert g(0.0, 0.5) == (INF, 0.0)
    assert g(-2.0, 3.0)[0] == 12.0 and math.isnan(g(-2.0, 3.0)[1])      # log of a negative base
    assert g(1e-300, -1.0)[0] == -INF           # a ** (b - 1) overflows where a ** b does not
    assert srcgrad.grad(f_pow_zero, backend=backend)(0.0) == 0.0
    assert srcgrad.grad(f_zero_base, backend=backend)(2.0) == 0.0


def test_pow_at_a_pole_on_llvm():
    """0 ** -1 raises in Python (and the python backend); llvm follows IEEE there: the value is
    inf and the derivatives are -inf, as PyTorch's."""
    g = srcgrad.grad(f_pow, wrt=(0, 1), backend="llvm")(0.0, -1.0)
    assert g == tuple(torch_grad(lambda x, y: x ** y, (0.0, -1.0))) == (-INF, -INF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_atan2_near_the_origin_does_not_underflow(backend):
    """x / (x² + y²) at x = y = 1e-200 is 5e199; PyTorch's formula underflows to 0 there."""
    dy, dx = grads_of(f_atan2, (1e-200, 1e-200), backend)
    assert dy == pytest.approx(5e199, rel=1e-15) and dx == pytest.approx(-5e199, rel=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hypot_at_the_origin_is_zero(backend):
    """hypot(x, 0) is |x|: its derivative at 0 is 0 as abs's (and torch.linalg.norm's at a zero
    vector); torch.hypot itself gives NaN there."""
    assert grads_of(f_hypot, (0.0, 0.0), backend) == [0.0, 0.0]
    assert same(grads_of(f_hypot, (3.0, 4.0), backend)[0], 0.6)
    assert jvp_column(f_hypot, (0.0, 0.0), 0, backend) == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_max_with_nan_follow_pythons_order(backend):
    """min(nan, 1.0) is nan and min(1.0, nan) is 1.0 (Python keeps the first unless the second
    is smaller): in both the gradient goes to the first operand, the one returned."""
    for fn in (f_min, f_max):
        for point in ((NAN, 1.0), (1.0, NAN)):
            out = srcgrad.jit(fn, backend=backend)(*point)
            assert out is not None and (math.isnan(out) if math.isnan(fn(*point)) else out == fn(*point))
            assert grads_of(fn, point, backend) == [1.0, 0.0]


def f_reduce_max(x):
    return np.max(x)


def f_reduce_min_axis(x):
    return np.sum(np.min(x, axis=1))


def f_prod(x):
    return np.prod(x)


def f_maximum_arrays(x, y):
    return np.sum(np.maximum(x, y) * np.arange(1.0, 4.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_share_ties_and_are_exact_at_zeros(backend):
    cases = [(f_reduce_max, torch.amax, np.array([1.0, 3.0, 3.0])),
             (f_reduce_min_axis, lambda t: torch.amin(t, 1).sum(), np.array([[1.0, 1.0, 2.0], [0.0, 5.0, 0.0]])),
             (f_prod, torch.prod, np.array([0.0, 3.0, 2.0])),
             (f_prod, torch.prod, np.array([0.0, 3.0, 0.0]))]
    for fn, tfn, x in cases:
        t = torch.tensor(x, requires_grad=True)
        expected = torch.autograd.grad(tfn(t), t)[0].numpy()
        np.testing.assert_allclose(srcgrad.grad(fn, backend=backend)(x), expected, rtol=1e-12)
        jvp = [srcgrad.jvp(fn, (x,), (np.eye(x.size)[k].reshape(x.shape),), backend=backend)[1] for k in range(x.size)]
        np.testing.assert_allclose(np.array(jvp).reshape(x.shape), expected, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_of_an_array_holding_nan_has_nan_gradient(backend):
    """No element equals a NaN maximum: the shares are 0/0, NaN everywhere, as torch.amax (the
    llvm backend gave zeros before the gradient was built from eq, sum and division). A NaN
    input is where PyTorch's kernels may part (issue 27): its value or the NaNs are accepted."""
    x = np.array([1.0, math.nan, 3.0, -2.0])
    t = torch.tensor(x, requires_grad=True)
    expected = torch.autograd.grad(torch.amax(t), t)[0].numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = srcgrad.grad(f_reduce_max, backend=backend)(x)
    assert_matches_reference(got, expected, right=np.full(4, math.nan))
    assert np.isnan(got).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_maximum_ties_on_arrays(backend):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (x, y))
    expected = torch.autograd.grad((torch.maximum(tx, ty) * torch.arange(1.0, 4.0, dtype=torch.float64)).sum(),
                                   (tx, ty))
    got = srcgrad.grad(f_maximum_arrays, wrt=(0, 1), backend=backend)(x, y)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-12)


def f_sqrt_array(x):
    return np.sum(np.sqrt(x) + np.arcsin(x / 8.0) + np.abs(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_rules_at_zero(backend):
    """Where one element sits at the edge, it gets inf and the others their plain derivative
    (arrays divide as IEEE on both backends; numpy warns "divide by zero" there)."""
    x = np.array([0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = srcgrad.grad(f_sqrt_array, backend=backend)(x)
    np.testing.assert_allclose(g, [INF, 0.25 + 0.125 / math.sqrt(0.75) + 1.0], rtol=1e-12)


def f_smooth(x, y):
    return x ** y + math.atan2(y, x) + math.hypot(x, y) + math.sqrt(x) + math.log(y) + max(x, y) * abs(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rules_agree_with_finite_differences_away_from_edges(backend):
    for point in ((1.3, 0.7), (0.4, 2.5), (2.0, -0.0 + 1.5)):
        got = grads_of(f_smooth, point, backend)
        for k in range(2):
            eps = 1e-6
            up, down = list(point), list(point)
            up[k] += eps
            down[k] -= eps
            assert got[k] == pytest.approx((f_smooth(*up) - f_smooth(*down)) / (2 * eps), rel=1e-6)


def f_pow_array(x, y):
    return np.sum(x ** y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_pow_at_zero_base_and_exponent_does_not_warn(backend):
    """x ** 0 on arrays: the rule masks b = 0 before its product (0 · inf would warn and be NaN)."""
    x = np.array([0.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dx, dy = srcgrad.grad(f_pow_array, wrt=(0, 1), backend=backend)(x, 0.0)
        _, tangent = srcgrad.jvp(f_pow_array, (x, 0.0), (np.ones(3), 0.0), backend=backend)
    assert list(dx) == [0.0, 0.0, 0.0] and dy == pytest.approx(math.log(2.0), rel=1e-15)
    assert tangent == 0.0


def writes_an_infinite_slope(x, v):
    v[0] = math.sqrt(x - x)             # the result never reads it
    return x * 2.0


def asserts_an_infinite_slope(x):
    s = math.sqrt(x - x)
    assert s >= 0.0
    return x * 2.0


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_values_no_result_depends_on_get_no_adjoint(backend):
    # their adjoint would be 0, and 0 times sqrt's infinite slope at 0 is NaN
    assert srcgrad.grad(writes_an_infinite_slope, backend=backend)(0.5, np.ones(3)) == 2.0
    assert srcgrad.grad(asserts_an_infinite_slope, backend=backend)(0.5) == 2.0


def branch_not_taken_divides_by_sqrt_of_zero(x):
    s = math.sqrt((x - x) ** 2.0)
    return math.tanh((x % s) if s != 0.0 else x)


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_a_branch_not_taken_sends_no_nan_through_an_infinite_slope(backend):
    # the untaken branch's zero adjoint reaches sqrt at 0 (infinite slope): 0, as PyTorch, which
    # never records the branch; both modes agree
    want = 1.0 - math.tanh(-0.3) ** 2
    assert srcgrad.grad(branch_not_taken_divides_by_sqrt_of_zero, backend=backend)(-0.3) == pytest.approx(want)
    _, ydot = srcgrad.jvp(branch_not_taken_divides_by_sqrt_of_zero, (-0.3,), (1.0,), backend=backend)
    assert ydot == pytest.approx(want)
