"""custom_vjp: the hand-written derivative is used, on its own and inside compiled code."""
import math

import pytest

import srcgrad

calls = []


@srcgrad.custom_vjp
def softplus(x):
    return math.log1p(math.exp(x))


@softplus.defvjp
def softplus_vjp(x, y, gy):
    calls.append((x, y, gy))
    return (gy / (1.0 + math.exp(-x)),)


@srcgrad.custom_vjp
def clipped_identity(x, lo):
    return x


@clipped_identity.defvjp
def clipped_identity_vjp(x, lo, y, gy):
    return (max(min(gy, 1.0), -1.0), None)      # gradient clipping: a derivative that is not the math one


def model(x, w):
    s = 0.0
    for i in range(3):
        s += softplus(x * w + i)
    return clipped_identity(s, 0.0) * 10.0


def test_grad_of_custom_function_uses_its_vjp():
    calls.clear()
    assert srcgrad.grad(softplus)(0.0) == pytest.approx(0.5)
    assert calls and calls[0][2] == 1.0


def test_custom_calls_inside_compiled_code():
    gx, gw = srcgrad.grad(model, wrt=(0, 1))(0.3, 0.5)
    # the cotangent 10.0 is clipped to 1.0 before it flows into the softplus derivatives
    sig = [1 / (1 + math.exp(-(0.3 * 0.5 + i))) for i in range(3)]
    assert gx == pytest.approx(sum(sig) * 0.5) and gw == pytest.approx(sum(sig) * 0.3)
    assert srcgrad.jit(model)(0.3, 0.5) == pytest.approx(model(0.3, 0.5))
    df = srcgrad.grad(model)
    df(0.3, 0.5)
    assert "softplus_vjp(" in df.adjoint_source


def test_jvp_through_custom_vjp_is_refused():
    with pytest.raises(srcgrad.TypingError, match="custom_vjp function has a reverse-mode derivative only"):
        srcgrad.jvp(model, (0.3, 0.5), (1.0, 0.0))


def test_vjp_undefined_is_a_clear_error():
    @srcgrad.custom_vjp
    def f(x):
        return x

    def g(x):
        return f(x) * 2.0

    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="before its vjp is defined"):
        srcgrad.grad(g)(1.0)
