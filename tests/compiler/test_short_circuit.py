"""`and`, `or`, chained comparisons and `a if c else b` evaluate as Python does: the right
operand (an index, a division, a call) runs only when the left one does not decide, in
conditions, loop tests and returned values alike; the value is the deciding operand.
Gradients through them are checked against finite differences."""
import math

import numpy as np
import pytest

import srcgrad

BACKENDS = ("python", "llvm")


def scan_while_small(x):
    i = 0
    while i < len(x) and x[i] < 2.0:
        i += 1
    return i


def ratio_test(x, d):
    return d != 0.0 and x / d > 1.0


def ratio_test_or(x, d):
    return d == 0.0 or x / d > 1.0


def first_positive(x):
    i = 0
    found = -1
    for k in range(len(x) + 2):
        if k < len(x) and x[k] > 0.0:
            found = k
    return found + i


def chained(d):
    return 0.0 < d < 1.0 / d


def safe_ratio(x, d):
    return x / d if d != 0.0 else x * 3.0


def values_and(a, b):
    return a and b


def values_or(a, b):
    return a or b


def three_way(a, b, c):
    return a or b and c


def flag_and_value(x):
    return x > 0.0 and x * x


def sum_while_positive(x):
    s = 0.0
    i = 0
    while i < len(x) and x[i] > 0.0:
        s += x[i] * x[i]
        i += 1
    return s


def index_in_condition(x, i):
    return x[i] if i < len(x) else -1.0


def cheap_both(a, b):
    return a > 0.0 and b > 0.0


def pick(a, b, c):
    return a if c > 0.0 else b


def fd(f, args, k, h=1e-6):
    up, down = list(args), list(args)
    up[k] += h
    down[k] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_right_operand_runs_only_when_needed(backend):
    jit = lambda f: srcgrad.jit(f, backend=backend)  # noqa: E731
    assert jit(scan_while_small)(np.ones(3)) == 3
    assert jit(scan_while_small)(np.array([1.0, 3.0, 1.0])) == 1
    for d in (0.0, 0.5, 2.0):
        assert jit(ratio_test)(1.0, d) == ratio_test(1.0, d)
        assert jit(ratio_test_or)(1.0, d) == ratio_test_or(1.0, d)
        assert jit(chained)(d) == chained(d)
    out = jit(ratio_test)(1.0, 0.0)
    assert out is False or (isinstance(out, np.bool_) and not out)
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    assert jit(first_positive)(x) == first_positive(x) == 3
    assert jit(index_in_condition)(x, 7) == -1.0
    assert jit(index_in_condition)(x, 1) == 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_conditional_expression_runs_one_branch(backend):
    f = srcgrad.jit(safe_ratio, backend=backend)
    assert f(2.0, 0.0) == 6.0
    assert f(2.0, 4.0) == 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_are_the_deciding_operand(backend):
    for fn in (values_and, values_or):
        f = srcgrad.jit(fn, backend=backend)
        for a, b in ((0.0, 2.5), (1.5, 2.5), (1.5, 0.0), (0.0, 0.0)):
            assert f(a, b) == fn(a, b)
        for a, b in ((0, 3), (2, 3), (2, 0)):
            got = f(a, b)
            assert got == fn(a, b) and isinstance(got, (int, np.integer))
        for a, b in ((True, False), (False, True), (True, True)):
            assert f(a, b) == fn(a, b)
    f = srcgrad.jit(three_way, backend=backend)
    for args in ((0.0, 2.0, 3.0), (1.0, 2.0, 3.0), (0.0, 0.0, 3.0), (0.0, 2.0, 0.0)):
        assert f(*args) == three_way(*args)
    f = srcgrad.jit(flag_and_value, backend=backend)
    assert f(3.0) == 9.0 and f(-3.0) == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_short_circuits_match_finite_differences(backend):
    for fn, args, k in ((safe_ratio, (2.0, 0.0), 0), (safe_ratio, (2.0, 4.0), 0), (safe_ratio, (2.0, 4.0), 1),
                        (flag_and_value, (1.5,), 0), (flag_and_value, (-1.5,), 0),
                        (pick, (1.5, 2.5, 1.0), 0), (pick, (1.5, 2.5, -1.0), 1)):
        g = srcgrad.grad(fn, wrt=k, backend=backend)(*args)
        assert g == pytest.approx(fd(fn, args, k), rel=1e-6, abs=1e-8), (fn.__name__, args, k)
        tangents = [0.0] * len(args)
        tangents[k] = 1.0
        _, t = srcgrad.jvp(fn, args, tangents, backend=backend)
        assert t == pytest.approx(g, rel=1e-12)
    x = np.array([1.0, 2.0, -1.0, 5.0])
    g = srcgrad.grad(sum_while_positive, backend=backend)(x)
    assert np.allclose(g, [2.0, 4.0, 0.0, 0.0])
    assert srcgrad.grad(sum_while_positive, backend=backend)(np.ones(3)) == pytest.approx(2 * np.ones(3))


def test_backends_agree():
    x = np.array([0.5, 1.5, 2.5])
    for fn, args in ((scan_while_small, (x,)), (safe_ratio, (1.5, 0.25)), (three_way, (0.0, 2.0, 3.0))):
        a = srcgrad.jit(fn, backend="python")(*args)
        b = srcgrad.jit(fn, backend="llvm")(*args)
        assert a == pytest.approx(b, rel=1e-12)


def test_cheap_right_operands_stay_branch_free():
    """A right operand that cannot raise and has no effect is computed on every path: the IR
    keeps the plain `and` (no region to branch over); one that may raise gets an `if`."""
    f = srcgrad.jit(cheap_both)
    f(1.0, 2.0)
    assert " and " in f.ir and " if " not in f.ir
    g = srcgrad.jit(ratio_test)
    g(1.0, 2.0)
    assert " if " in g.ir


def test_arrays_have_no_truth_value():
    def f(x, y):
        return np.sum(x) if x and y else 0.0
    with pytest.raises(srcgrad.TypingError, match="no single truth value") as info:
        srcgrad.jit(f)(np.ones(2), np.ones(2))
    assert "x and y" in str(info.value) and "^" in str(info.value)


def test_math_call_on_the_right_runs_only_when_needed():
    def f(x):
        return x > 0.0 and math.log(x) > 1.0
    for backend in BACKENDS:
        h = srcgrad.jit(f, backend=backend)
        assert h(-1.0) == f(-1.0) and h(10.0) == f(10.0) and h(2.0) == f(2.0)


def bool_arithmetic(a, b):
    t = a < b
    return (t + t) * 10 + (-t) * 100 + abs(t) * 1000 + (+t) * 10000 + max(t, a > b) * 100000 + (t // t)


def bool_order(a, b):
    return ((a > b) < (a < b)) + 2 * ((a < b) <= (a > b)) + 4 * (not (a < b) > (a > b))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bools_compute_and_compare_as_ints(backend):
    # found by a random program of and/or/if-else mixing bools and ints: the llvm backend
    # added and compared i1 values (True read signed is -1)
    for fn in (bool_arithmetic, bool_order):
        f = srcgrad.jit(fn, backend=backend)
        for a, b in ((1.0, 2.0), (2.0, 1.0)):
            if fn is bool_arithmetic and not a < b:
                continue        # t // t with t False divides by zero
            assert f(a, b) == fn(a, b)
