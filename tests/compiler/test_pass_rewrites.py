"""The passes keep Python's semantics: algebraic rewrites only where they hold for every IEEE
double and 64-bit int, allocations never merged, in-place writes someone may see never
dropped, and dead forward work (and its tapes) removed to a fixpoint (issue 9, items 1-3, 12)."""
import math

import numpy as np
import pytest

import srcgrad
from srcgrad.ir.primitives import PRIMITIVES

BACKENDS = ("python", "llvm")
EDGES = [0.0, -0.0, 2.5, -2.5, 1.0, math.inf, -math.inf, math.nan, 2.0 ** 53, 5e-324]


def _same(a, b):
    """Equal as Python sees it, -0.0 and NaN included."""
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and type(a) is type(b) and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def _python(f, *args):
    try:
        return f(*args)
    except ArithmeticError as e:
        return type(e)


def _compiled(f, backend, *args):
    try:
        return srcgrad.jit(f, backend=backend)(*args)
    except ArithmeticError as e:
        return type(e)


def _ieee_division(f, x):
    """x / 0.0 on the llvm backend: IEEE inf/nan where Python raises (docs/compiler.md)."""
    with np.errstate(all="ignore"):
        return f(np.float64(x))


# each identity a pass might be tempted by, with a constant the folder sees
def x_plus_zero(x): return x + 0.0
def zero_plus_x(x): return 0.0 + x
def x_minus_zero(x): return x - 0.0
def x_times_one(x): return x * 1.0
def one_times_x(x): return 1.0 * x
def x_times_zero(x): return x * 0.0
def x_minus_x(x): return x - x
def x_over_x(x): return x / x
def x_floordiv_one(x): return x // 1.0
def x_floordiv_one_then_mul(x): return (x // 1.0) * x
def x_mod_one(x): return x % 1.0
def x_pow_zero(x): return x ** 0.0
def x_pow_one(x): return x ** 1.0
def x_pow_int_one(x): return x ** 1
def int_floordiv_one(x): return int(x) // 1 if abs(x) < 1e300 else 0
def int_plus_zero(x): return (int(x) if abs(x) < 1e300 else 0) + 0


IDENTITIES = [x_plus_zero, zero_plus_x, x_minus_zero, x_times_one, one_times_x, x_times_zero, x_minus_x, x_over_x,
              x_floordiv_one, x_floordiv_one_then_mul, x_mod_one, x_pow_zero, x_pow_one, x_pow_int_one,
              int_floordiv_one, int_plus_zero]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", IDENTITIES, ids=lambda f: f.__name__)
def test_rewrites_hold_for_every_double(f, backend):
    for x in EDGES:
        want = _python(f, x)
        got = _compiled(f, backend, x)
        if backend == "llvm" and want is ZeroDivisionError and f is x_over_x:
            want = float(_ieee_division(f, x))
        assert _same(got, want), f"{f.__name__}({x!r}): Python {want!r}, {backend} {got!r}"


def test_floor_division_by_one_is_floor_on_floats():
    assert srcgrad.jit(x_floordiv_one_then_mul)(2.5) == 5.0


def two_allocations_written(x):
    n = x.shape[0]
    c = np.empty(n)
    d = np.zeros_like(x)
    e = np.zeros(n)
    for i in range(n):
        c[i] = x[i]
    d[1] = 7.0
    e[2] = -1.0
    return c[1] + d[1] * 10 + e[1] * 100 + e[2] * 1000


def copies_written(x):
    a = x.copy()
    b = x.copy()
    a[0] = 5.0
    return a[0] + b[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [two_allocations_written, copies_written], ids=lambda f: f.__name__)
def test_allocations_are_never_merged(f, backend):
    x = np.array([0.5, 2.0, 3.0])
    assert srcgrad.jit(f, backend=backend)(x.copy()) == f(x.copy())
    np.testing.assert_allclose(srcgrad.grad(f, backend=backend)(x.copy()), _fd(f, x))


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def write_unread(x, v):
    v[0] = x
    return 1.0


def write_through_view(x, v):
    s = v[1:]
    s[0] = x * 2.0
    return 1.0


def write_in_loop(x, v):
    for i in range(v.shape[0]):
        v[i] = x + i
    return x


def write_in_branch(x, v):
    if x > 0.0:
        v[2] = x
    else:
        v[2] = -x
    return x * x


def write_through_alias(x, v):
    w = v
    w[1] = x
    return 0.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [write_unread, write_through_view, write_in_loop, write_in_branch, write_through_alias],
                         ids=lambda f: f.__name__)
def test_writes_into_arguments_are_kept(f, backend):
    want_v = np.ones(3)
    want = f(1.5, want_v)
    for kind in (srcgrad.jit, srcgrad.grad):
        v = np.ones(3)
        got = kind(f, backend=backend)(1.5, v)
        if kind is srcgrad.jit:
            assert got == want
        np.testing.assert_array_equal(v, want_v, err_msg=f"{kind.__name__}: the caller's array")


def nested_loops(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            s += x[i] * x[j]
    return s


def test_grad_keeps_no_unread_tape_nor_dead_forward_loops():
    g = srcgrad.grad(nested_loops)
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(g(x), _fd(nested_loops, x), rtol=1e-7)
    grad_ir = g.ir.split("func nested_loops_grad")[1]
    for prim in ("tape_new", "tape_put", "tape_get"):
        assert prim not in grad_ir, grad_ir
    assert grad_ir.count("for %") == 2, "only the reverse sweep's two loops are left"


def test_pure_ops_are_still_merged():
    def f(x):
        return np.sin(x * 2.0) + np.sin(x * 2.0)
    g = srcgrad.jit(f)
    g(0.3)
    assert g.ir.count("sin") == 1


def log1p_of_square(x):
    return math.log1p(x * x)


def test_a_select_on_a_constant_is_its_branch():
    # log1p's rule guards 1 / (1 + u) at u = -1 with a select that is decided when the
    # derivative code is made: it reads as the branch taken, and computes the same
    g = srcgrad.grad(log1p_of_square)
    assert g(0.5) == pytest.approx(2 * 0.5 / 1.25, rel=1e-15)
    assert "if False" not in g.adjoint_source and "if True" not in g.adjoint_source, g.adjoint_source


def test_every_primitive_record_states_its_facts():
    for name, p in PRIMITIVES.items():
        assert p.writes in (None, 0), name
        if p.allocates:
            assert not p.view and p.writes is None, name
        if p.writes is not None:
            assert p.view and p.may_raise, f"{name}: an in-place write is a view of what it writes, and checks bounds"


def unused_values_that_raise(x, v):
    t = v[10]
    u = 1 // int(x)
    return x * 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_keeps_errors_of_unused_values(backend):
    with pytest.raises(IndexError, match="'v'"):
        srcgrad.jit(unused_values_that_raise, backend=backend)(0.5, np.ones(3))
    with pytest.raises(ZeroDivisionError):
        srcgrad.jit(unused_values_that_raise, backend=backend)(0.5, np.ones(11))
    # derivative code computes only what the gradient needs (docs/compiler.md)
    assert srcgrad.grad(unused_values_that_raise, backend=backend)(0.5, np.ones(3)) == 2.0


def unread_write_out_of_bounds(x):
    y = np.zeros(2)
    y[5] = x
    return x * 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_out_of_bounds_raises_in_derivative_code_too(backend):
    for transform in (srcgrad.jit, srcgrad.grad):
        with pytest.raises(IndexError, match="'y'"):
            transform(unread_write_out_of_bounds, backend=backend)(0.5)


def _two_accumulators(x, n):
    s, t = 0.0, 1.0
    for i in range(n):
        s = s + math.sin(x * i)
        t = t * math.cos(x)          # t is never read after the loop
    return s


def _index_in_dead_accumulator(v, n):
    s, t = 0.0, 0.0
    for i in range(n):
        s = s + v[0] * i
        t = t + v[i]                 # may raise IndexError: kept in the primal
    return s


def _dead_value_feeds_the_live_one(x, n):
    s, t = 0.0, 1.0
    for i in range(n):
        t = t * 0.5
        s = s + t * x                # t is read by s: it stays
    return s


def test_a_carried_value_nothing_reads_goes():
    j = srcgrad.jit(_two_accumulators)
    assert j(0.3, 5) == pytest.approx(_two_accumulators(0.3, 5), rel=1e-15)
    assert "cos" not in j.ir
    # the gradient beside a Hessian-vector product (only the tangents are returned)
    h = srcgrad.hvp(_two_accumulators)
    h(0.3, 5, 1.0)
    assert "cos" not in h.adjoint_source


def test_a_carried_value_stays_where_it_may_raise_or_is_read():
    with pytest.raises(IndexError):
        srcgrad.jit(_index_in_dead_accumulator)(np.ones(2), 3)
    j = srcgrad.jit(_dead_value_feeds_the_live_one)
    assert j(0.3, 5) == _dead_value_feeds_the_live_one(0.3, 5)
