"""The frontend stage: name resolution (locals, globals and closures read at compile time,
math/numpy recognised by identity), SSA construction with Python's int/float unification,
and the eager mode agreeing with the compiled gradient where both can run a program."""
import math as m
import numpy as numpy_renamed

import pytest

import srcgrad
from srcgrad.frontend.lower import lower
from srcgrad.ir.types import F64, I64

SCALE = 3.0


def uses_global_and_renamed_modules(x):
    return m.sin(x) * SCALE + numpy_renamed.tanh(x)


def test_modules_by_identity_and_globals_at_compile_time():
    g = srcgrad.grad(uses_global_and_renamed_modules)
    assert g(0.4) == pytest.approx(m.cos(0.4) * 3.0 + 1 - m.tanh(0.4) ** 2)
    assert "sin" in g.ir and "tanh" in g.ir


def test_closure_values_are_read_at_compile_time():
    k = 2.5

    def f(x):
        return x * k

    assert srcgrad.grad(f)(1.0) == 2.5


def test_int_then_float_is_float_throughout():
    def f(x, n):
        s = 0
        for i in range(n):
            s += x
        return s

    ir = lower(f, [F64, I64])
    loop = next(op for op in ir.body.ops if op.prim == "for")
    assert [r.type for r in loop.results] == [F64]
    assert srcgrad.jit(f)(0.5, 3) == 1.5


def test_python_integer_semantics():
    def f(a, b):
        return a // b + a % b * 10 + int(-7 / 2) * 100

    for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2)]:
        assert srcgrad.jit(f)(a, b) == f(a, b)


def test_ssa_names_follow_the_users_variables():
    def f(x):
        total = x * 2.0
        total = total + 1.0
        return total

    text = str(lower(f, [F64]))
    assert "%total = " in text and "%total.1 = " in text


def test_eager_mode_agrees_with_the_compiled_gradient():
    def f(x, w):
        y = x * w + w * w
        if y > 1.0:
            y = y * y
        for i in range(3):
            y = y * 0.5 + x
        return y

    x, w = 0.8, 1.3
    gx, gw = srcgrad.grad(f, wrt=(0, 1))(x, w)
    tx = srcgrad.tensor(x, dtype=srcgrad.float64, requires_grad=True)
    tw = srcgrad.tensor(w, dtype=srcgrad.float64, requires_grad=True)
    f(tx, tw).backward()
    assert tx.grad.item() == pytest.approx(gx, rel=1e-12)
    assert tw.grad.item() == pytest.approx(gw, rel=1e-12)


def returns_nine_from_a_loop(x):
    for i in range(3):
        if x > 0:
            return x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, x + 8
    return x, x, x, x, x, x, x, x, x


def returns_twelve_from_nested_loops(x, n):
    k = 0
    while k < n:
        for i in range(n):
            if x * i > 1.0:
                return (x, x * i, x + i, x - i, x * 2, x * 3, x * 4, x * 5, x * 6, x * 7, x * 8, x * 9)
        k += 1
    return (x, x, x, x, x, x, x, x, x, x, x, x)


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_return_of_many_values_from_inside_a_loop(backend):
    f = srcgrad.jit(returns_nine_from_a_loop, backend=backend)
    assert f(1.0) == returns_nine_from_a_loop(1.0)
    assert f(-1.0) == returns_nine_from_a_loop(-1.0)
    g = srcgrad.jit(returns_twelve_from_nested_loops, backend=backend)
    for x, n in ((0.7, 3), (0.1, 3), (0.7, 0)):
        assert g(x, n) == returns_twelve_from_nested_loops(x, n)


def chain_of_widenings_for(x):
    a = b = c = d = e = f = g = h = i = j = k = m = 0
    for t in range(13):
        m = k
        k = j
        j = i
        i = h
        h = g
        g = f
        f = e
        e = d
        d = c
        c = b
        b = a
        a = x
    return a + b + c + d + e + f + g + h + i + j + k + m


def chain_of_widenings_while(x):
    a = b = c = d = e = f = g = h = i = j = k = m = False
    t = 0
    while t < 13:
        m = k
        k = j
        j = i
        i = h
        h = g
        g = f
        f = e
        e = d
        d = c
        c = b
        b = a
        a = x * t if t % 2 else t
        t += 1
    return a + b + c + d + e + f + g + h + i + j + k + m


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_types_widen_to_a_fixpoint_through_a_chain_of_loop_variables(backend):
    # each round of widening int -> float (bool -> int -> float in the while loop) reaches
    # one more variable of the chain; a fixed number of rounds left the loop without a yield
    for fn in (chain_of_widenings_for, chain_of_widenings_while):
        assert srcgrad.jit(fn, backend=backend)(1.5) == fn(1.5)
        assert srcgrad.grad(fn, backend=backend)(1.5) == pytest.approx((fn(1.5 + 1e-6) - fn(1.5 - 1e-6)) / 2e-6)
    ir = lower(chain_of_widenings_for, [F64])
    loop = next(op for op in ir.body.ops if op.prim == "for")
    assert [r.type for r in loop.results] == [F64] * 12


def returns_an_int_from_a_loop(x, n):
    for i in range(n):
        if i * x > 2.0:
            return i
    return -1


def returns_an_array_from_a_loop(x):
    for i in range(3):
        if x[i] > 0.0:
            return x * x
    return x


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_a_return_inside_a_loop_keeps_the_type_of_what_it_returns(backend):
    # the returned values were stored in made-up variables that started as 0.0: an int came back
    # as a float, an array was an error about '<retval0>'
    f = srcgrad.jit(returns_an_int_from_a_loop, backend=backend)
    for args in ((1.0, 5), (0.1, 5), (1.0, 0)):
        got = f(*args)
        assert got == returns_an_int_from_a_loop(*args) and isinstance(got, (int, numpy_renamed.integer))
    x = numpy_renamed.array([-1.0, 2.0, 3.0])
    assert (srcgrad.jit(returns_an_array_from_a_loop, backend=backend)(x) == x * x).all()
    assert (srcgrad.jit(returns_an_array_from_a_loop, backend=backend)(-abs(x)) == -abs(x)).all()
    _, pullback = srcgrad.vjp(returns_an_array_from_a_loop, x, backend=backend)
    assert numpy_renamed.allclose(pullback(numpy_renamed.ones(3)), 2 * x)
