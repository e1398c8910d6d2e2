"""srcgrad.autograd.functional and srcgrad.func against torch.autograd.functional and
torch.func 2.13 (issue 16, point 3): the same functions, written once for either library,
give the same numbers, the same result structures (tuples, nested tuples, dicts) and the
same errors; the transforms compose (grad(grad(f)), jacfwd(jacrev(f)), vmap(grad(f)))."""
import math

import numpy as np
import pytest

import srcgrad as st
import srcgrad.autograd.functional as AF
import srcgrad.func as SF
from srcgrad.eager.tensor import Tensor

torch = pytest.importorskip("torch")
TF = torch.autograd.functional
TFN = torch.func

# torch.func's first use imports torch._dynamo, which warns about torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RNG = np.random.default_rng(0)


def arr(*shape):
    """Random float64 numbers (the same arrays go to both libraries)."""
    return RNG.standard_normal(shape)


def same(ours, theirs, rtol=1e-7, atol=1e-9, requires_grad=True):
    """Same structure (containers, keys, lengths), same shapes, dtypes, values and
    (unless told not to) requires_grad, all the way down."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype)
        assert not requires_grad or ours.requires_grad == theirs.requires_grad
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            same(ours[k], theirs[k], rtol, atol, requires_grad)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (type(ours), type(theirs))
        for a, b in zip(ours, theirs):
            same(a, b, rtol, atol, requires_grad)
    else:
        assert ours == theirs


def both(call, *arrays, requires_grad=True):
    """``call(lib, *tensors)`` with srcgrad and with torch on the same arrays; results compared."""
    ours = call(st, *[st.tensor(np.array(a)) for a in arrays])
    theirs = call(torch, *[torch.tensor(np.array(a)) for a in arrays])
    same(ours, theirs, requires_grad=requires_grad)
    return ours


def same_error(call, *arrays):
    """``call`` raises the same exception type and message with both libraries."""
    with pytest.raises(Exception) as theirs:
        call(torch, *[torch.tensor(np.array(a)) for a in arrays])
    with pytest.raises(Exception) as ours:
        call(st, *[st.tensor(np.array(a)) for a in arrays])
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value)


def lib_af(lib):
    return AF if lib is st else TF


def lib_fn(lib):
    return SF if lib is st else TFN


# functions written once for both libraries
def f_elem(lib):
    return lambda x: lib.sin(x) * x ** 2


def f_two(lib):
    return lambda x, y: (lib.matmul(x, y).tanh(), (x.exp() * 2).sum())


def f_scalar(lib):
    return lambda x: (lib.sin(x) * x.exp()).sum() + (x ** 3).prod()


def f_scalar2(lib):
    return lambda x, y: (lib.matmul(x, y) ** 2).sum() + (x * x).sum() * y.sum()


X3, Y3, A23, B34 = arr(3), arr(3), arr(2, 3), arr(3, 4)


# ---------------------------------------------------------------------------- autograd.functional


def test_af_vjp_and_jvp():
    both(lambda lib, x, v: lib_af(lib).vjp(f_elem(lib), x, v), X3, Y3)
    both(lambda lib, x, y, v, w: lib_af(lib).vjp(f_two(lib), (x, y), (v, w)), A23, B34, arr(2, 4), 1.5)
    both(lambda lib, x: lib_af(lib).vjp(f_scalar(lib), x), X3)
    both(lambda lib, x, v: lib_af(lib).jvp(f_elem(lib), x, v), X3, Y3)
    both(lambda lib, x, y, v, w: lib_af(lib).jvp(f_two(lib), (x, y), (v, w)), A23, B34, arr(2, 3), arr(3, 4))
    both(lambda lib, x: lib_af(lib).jvp(lambda x: x.exp() * 3, x), [0.5])
    # an input the function ignores gets zeros; outputs that need no grad are fine
    both(lambda lib, x, y, v: lib_af(lib).vjp(lambda x, y: x * 2, (x, y), v), X3, Y3, Y3)
    both(lambda lib, x, y, v: lib_af(lib).jvp(lambda x, y: (x * 2, y.detach()), (x, y), (v, v)), X3, Y3, Y3)


def test_af_create_graph_is_differentiable():
    def call(lib, x, v):
        x = x.requires_grad_()
        _, g = lib_af(lib).vjp(f_elem(lib), x, v, create_graph=True)
        _, t = lib_af(lib).jvp(f_elem(lib), x, v, create_graph=True)
        return g, t, lib.autograd.grad((g * t).sum(), x)
    both(call, X3, Y3)


def test_af_jacobian():
    both(lambda lib, x: lib_af(lib).jacobian(f_elem(lib), x), X3)
    jac = both(lambda lib, x, y: lib_af(lib).jacobian(f_two(lib), (x, y)), A23, B34)
    assert [tuple(b.shape) for row in jac for b in row] == [(2, 4, 2, 3), (2, 4, 3, 4), (2, 3), (3, 4)]
    both(lambda lib, x, y: lib_af(lib).jacobian(f_two(lib), (x, y), vectorize=True), A23, B34)
    both(lambda lib, x, y: lib_af(lib).jacobian(f_two(lib), (x, y), vectorize=True, strategy="forward-mode"),
         A23, B34)
    both(lambda lib, x: lib_af(lib).jacobian(lambda x: (x * 2, x.sum()), x, vectorize=True,
                                             strategy="forward-mode"), X3)
    both(lambda lib, x, y: lib_af(lib).jacobian(lambda x, y: x * 2, (x, y)), X3, A23)   # zeros for y
    both(lambda lib, x: lib_af(lib).jacobian(f_elem(lib), x.requires_grad_(), create_graph=True), X3)


def test_af_hessian_vhp_hvp():
    both(lambda lib, x: lib_af(lib).hessian(f_scalar(lib), x), X3)
    hess = both(lambda lib, x, y: lib_af(lib).hessian(f_scalar2(lib), (x, y)), A23, B34)
    assert [tuple(b.shape) for row in hess for b in row] == [(2, 3, 2, 3), (2, 3, 3, 4), (3, 4, 2, 3), (3, 4, 3, 4)]
    # torch leaves this one attached to a graph (and sets requires_grad on the caller's input); srcgrad detaches
    both(lambda lib, x: lib_af(lib).hessian(f_scalar(lib), x, vectorize=True, outer_jacobian_strategy="forward-mode"),
         X3, requires_grad=False)
    both(lambda lib, x, v: lib_af(lib).vhp(f_scalar(lib), x, v), X3, Y3)
    both(lambda lib, x, v: lib_af(lib).hvp(f_scalar(lib), x, v), X3, Y3)
    both(lambda lib, x, y, v, w: lib_af(lib).vhp(f_scalar2(lib), (x, y), (v, w)), A23, B34, arr(2, 3), arr(3, 4))
    both(lambda lib, x, y, v, w: lib_af(lib).hvp(f_scalar2(lib), (x, y), (v, w)), A23, B34, arr(2, 3), arr(3, 4))
    both(lambda lib, x: lib_af(lib).hvp(lambda x: (x ** 4).sum(), x), [0.7])


def test_af_errors():
    ind = lambda x, y: x * 2    # noqa: E731  (independent of y)
    cases = [
        lambda lib, x, y: lib_af(lib).vjp(ind, (x, y), x, strict=True),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: x.detach(), x, x, strict=True),
        lambda lib, x, y: lib_af(lib).jacobian(ind, (x, y), strict=True),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x * 2, x, create_graph=True, strict=True),
        lambda lib, x, y: lib_af(lib).jvp(ind, (x, y), (x, y), strict=True),
        lambda lib, x, y: lib_af(lib).hessian(lambda x: (x * 2).sum(), x, strict=True),
        lambda lib, x, y: lib_af(lib).vhp(lambda x: (x * 2).sum(), x, x, strict=True),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: x * 2, x),
        lambda lib, x, y: lib_af(lib).jvp(lambda x: x * 2, x),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: x * 2, x, y[:2]),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: (x, x), x, (x,)),
        lambda lib, x, y: lib_af(lib).jvp(lambda x, y: x, (x, y), (x, y[:1])),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: x, [x], x),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: x, (x, 2.0), x),
        lambda lib, x, y: lib_af(lib).vjp(lambda x: 2.0, x, x),
        lambda lib, x, y: lib_af(lib).hessian(lambda x: x * 2, x),
        lambda lib, x, y: lib_af(lib).hessian(lambda x: (x.sum(), x.sum()), x),
        lambda lib, x, y: lib_af(lib).hvp(lambda x: x, x, x),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x, x, strategy="sideways"),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x, x, strategy="forward-mode"),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x, x, strategy="forward-mode", create_graph=True),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x, x, strategy="forward-mode", strict=True),
        lambda lib, x, y: lib_af(lib).jacobian(lambda x: x, x, vectorize=True, strict=True),
    ]
    for call in cases:
        same_error(call, X3, Y3)


# ---------------------------------------------------------------------------- func: grad


def test_func_grad():
    both(lambda lib, x: lib_fn(lib).grad(f_scalar(lib))(x), X3)
    both(lambda lib, x, y: lib_fn(lib).grad(f_scalar2(lib), argnums=(0, 1))(x, y), A23, B34)
    both(lambda lib, x, y: lib_fn(lib).grad(f_scalar2(lib), argnums=-1)(x, y), A23, B34)
    # pytrees of parameters, non-tensor and keyword arguments, aux
    both(lambda lib, w, b, x: lib_fn(lib).grad(lambda p, x, scale, *, shift: ((x @ p["w"] + p["b"]) * scale).tanh()
                                                .sum() + shift)({"w": w, "b": b}, x, 0.5, shift=1.0),
         arr(3, 2), arr(2), A23)
    both(lambda lib, x: lib_fn(lib).grad(lambda x: (x.sin().sum(), {"sq": x * x}), has_aux=True)(x), X3)
    both(lambda lib, x: lib_fn(lib).grad_and_value(f_scalar(lib))(x), X3)
    both(lambda lib, x: lib_fn(lib).grad_and_value(lambda x: (x.sum() * 2, (x.exp(),)), has_aux=True)(x), X3)
    both(lambda lib, x, y: lib_fn(lib).grad(lambda x, y: (y ** 2).sum())(x, y), X3, Y3)   # zeros


def test_func_grad_composes():
    x = 0.7
    g2 = both(lambda lib, x: lib_fn(lib).grad(lib_fn(lib).grad(lambda x: lib.sin(x) * x ** 3))(x), x)
    analytic = -math.sin(x) * x ** 3 + 6 * math.cos(x) * x ** 2 + 6 * math.sin(x) * x
    assert abs(g2.item() - analytic) < 1e-12
    g3 = both(lambda lib, x: lib_fn(lib).grad(lib_fn(lib).grad(lib_fn(lib).grad(lambda x: x.exp() * x)))(x), x)
    assert abs(g3.item() - (3 + x) * math.exp(x)) < 1e-12
    # the inner grad closes over the outer argument: only the partial through y counts there
    both(lambda lib, x: lib_fn(lib).grad(lambda x: x * lib_fn(lib).grad(lambda y: x * y ** 2)(x))(x), 1.5)
    both(lambda lib, x: lib_fn(lib).grad(lambda x: (x * lib_fn(lib).grad(lambda y: (x + y).sum())(x)).sum())(x),
         X3)
    # forward over reverse, reverse over forward (with a tangent that depends on x), reverse over vjp
    both(lambda lib, x, v: lib_fn(lib).jvp(lib_fn(lib).grad(f_scalar(lib)), (x,), (v,)), X3, Y3)
    both(lambda lib, x: lib_fn(lib).grad(lambda x: lib_fn(lib).jvp(lambda y: y.sin() * x, (x,), (x * 2,))[1].sum())(x),
         X3)
    both(lambda lib, x: lib_fn(lib).grad(lambda x: lib_fn(lib).vjp(lambda y: y.sin() * x, x)[1](x)[0].sum())(x), X3)
    # transforms inside ordinary autograd: the result stays differentiable w.r.t. a captured leaf
    def through_autograd(lib, x, w):
        w.requires_grad_()
        g = lib_fn(lib).grad(lambda x: (w * x.sin()).sum())(x)
        return g, lib.autograd.grad(g.sum(), w)
    both(through_autograd, X3, Y3)


def test_func_grad_errors():
    cases = [
        lambda lib, x: lib_fn(lib).grad(lambda x: x * 2)(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: 2.0)(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum(), argnums=1)(x),
        lambda lib, x: lib_fn(lib).grad(lambda x, y: x.sum(), argnums=(0, 0))(x, x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum(), argnums=())(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum(), argnums=[0])(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum(), argnums=(0.5,))(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum(), has_aux=True)(x),
        lambda lib, x: lib_fn(lib).grad(lambda x: (x.sum(), 1.0), has_aux=True)(x),
        lambda lib, x: lib_fn(lib).grad(lambda x, y: x * y)(2.0, x),
        lambda lib, x: lib_fn(lib).grad(lambda x: x.sum())(x.long()),
    ]
    for call in cases:
        same_error(call, X3)


# ---------------------------------------------------------------------------- func: vjp, jvp


def test_func_vjp():
    def call(lib, x, y, v, w):
        out, fn = lib_fn(lib).vjp(lambda x, y: {"a": lib.matmul(x, y).tanh(), "b": x.exp().sum()}, x, y)
        return out, fn({"a": v, "b": w})
    both(call, A23, B34, arr(2, 4), 0.3)

    def call_aux(lib, x, v):
        out, fn, aux = lib_fn(lib).vjp(lambda x: (x.sin(), [x.cos()]), x, has_aux=True)
        return out, fn(v), aux
    both(call_aux, X3, Y3)

    def call_create_graph(lib, x, v):
        x.requires_grad_()
        _, fn = lib_fn(lib).vjp(f_elem(lib), x)
        (g,) = fn(v, create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)
    both(call_create_graph, X3, Y3)
    cases = [
        lambda lib, x: lib_fn(lib).vjp(lambda x: x, x)[1]((x,)),
        lambda lib, x: lib_fn(lib).vjp(lambda x: (x, x), x)[1]([x, x]),
        lambda lib, x: lib_fn(lib).vjp(lambda x: {"p": x}, x)[1]({"q": x}),
        lambda lib, x: lib_fn(lib).vjp(lambda x: x, x)[1](x[:2]),
        lambda lib, x: lib_fn(lib).vjp(lambda x: x, x, has_aux=True),
        lambda lib, x: lib_fn(lib).vjp(lambda x: x.argmax(), x),
        lambda lib, x: lib_fn(lib).vjp(lambda x: 1.0, x),
        lambda lib, x: lib_fn(lib).vjp(lambda x: None, x),
        lambda lib, x: lib_fn(lib).vjp(lambda x: x, 1.0),
    ]
    for c in cases:
        same_error(c, X3)


def test_func_jvp():
    both(lambda lib, x, v: lib_fn(lib).jvp(f_elem(lib), (x,), (v,)), X3, Y3)
    both(lambda lib, x, y, v, w: lib_fn(lib).jvp(f_two(lib), (x, y), (v, w)), A23, B34, arr(2, 3), arr(3, 4))
    both(lambda lib, x, v: lib_fn(lib).jvp(lambda x: (x.exp(), x.sum()), (x,), (v,), has_aux=True), X3, Y3)
    both(lambda lib, x, y, v: lib_fn(lib).jvp(lambda p: p["x"] * p["y"], ({"x": x, "y": y},), ({"x": v, "y": v},)),
         X3, Y3, Y3)
    both(lambda lib, x, y, v: lib_fn(lib).jvp(lambda x, y: y * 2, (x, y), (v, v)), X3, Y3, Y3)
    cases = [
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, x, x),
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, (x,), x),
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, (x,), (x[:2],)),
        lambda lib, x: lib_fn(lib).jvp(lambda x: lib.ones(3), (x,), (x,), strict=True),
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, (), ()),
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, (1.0,), (1.0,)),
        lambda lib, x: lib_fn(lib).jvp(lambda x: 1.0, (x,), (x,)),
        lambda lib, x: lib_fn(lib).jvp(lambda x: x, (x,), (x,), has_aux=True),
    ]
    for c in cases:
        same_error(c, X3)


# ---------------------------------------------------------------------------- func: jacobians


def test_func_jacrev_jacfwd():
    for name in ("jacrev", "jacfwd"):
        def tr(lib, *a, **k):
            return getattr(lib_fn(lib), name)(*a, **k)
        both(lambda lib, x: tr(lib, f_elem(lib))(x), X3)
        jac = both(lambda lib, x, y: tr(lib, f_two(lib), argnums=(0, 1))(x, y), A23, B34)
        assert [tuple(b.shape) for row in jac for b in row] == [(2, 4, 2, 3), (2, 4, 3, 4), (2, 3), (3, 4)]
        both(lambda lib, x, y: tr(lib, f_two(lib), argnums=1)(x, y), A23, B34)
        both(lambda lib, w, b: tr(lib, lambda p: {"out": (p["w"] * p["b"]).tanh()})({"w": w, "b": b}), X3, Y3)
        both(lambda lib, x: tr(lib, lambda x: (x.sin(), x.cos()), has_aux=True)(x), X3)
        both(lambda lib, x, y: tr(lib, lambda x, y: y.exp())(x, y), X3, A23)           # zeros
        both(lambda lib, x: tr(lib, lambda x: x.sum() * 2)(x), X3)                       # 0-d output
    same_error(lambda lib, x: lib_fn(lib).jacrev(lambda x: x, chunk_size=0)(x), X3)
    same_error(lambda lib, x: lib_fn(lib).jacrev(lambda x: x.argmax())(x), X3)
    same_error(lambda lib, x: lib_fn(lib).jacfwd(lambda x: x, randomness="x")(x), X3)
    same_error(lambda lib, x: lib_fn(lib).jacfwd(lambda x: x + lib.rand(3, dtype=lib.float64))(x), X3)


def test_func_hessian_and_nesting():
    both(lambda lib, x: lib_fn(lib).hessian(f_scalar(lib))(x), X3)
    hess = both(lambda lib, x, y: lib_fn(lib).hessian(f_scalar2(lib), argnums=(0, 1))(x, y), arr(2, 2), arr(2, 3))
    assert [tuple(b.shape) for row in hess for b in row] == [(2, 2, 2, 2), (2, 2, 2, 3), (2, 3, 2, 2), (2, 3, 2, 3)]
    both(lambda lib, x: lib_fn(lib).jacrev(lib_fn(lib).jacfwd(f_elem(lib)))(x), X3)
    both(lambda lib, x: lib_fn(lib).jacrev(lib_fn(lib).jacrev(f_elem(lib)))(x), X3)
    both(lambda lib, x: lib_fn(lib).jacfwd(lib_fn(lib).grad(f_scalar(lib)))(x), X3)


# ---------------------------------------------------------------------------- func: vmap


def test_vmap():
    both(lambda lib, x, w: lib_fn(lib).vmap(lib.dot, in_dims=(0, None))(x, w), A23, X3)
    both(lambda lib, x: lib_fn(lib).vmap(lambda r: r.sum(), in_dims=1)(x), A23)
    both(lambda lib, x: lib_fn(lib).vmap(lambda r: r * 2, in_dims=-1, out_dims=1)(x), arr(2, 3, 4))
    both(lambda lib, x: lib_fn(lib).vmap(lambda r: (r, r.sum()), out_dims=(1, 0))(x), arr(4, 2, 3))
    both(lambda lib, x, y: lib_fn(lib).vmap(lambda d, s: d["a"] * d["b"] + s, in_dims=({"a": 0, "b": None}, None))(
        {"a": x, "b": y}, 1.0), A23, X3)
    both(lambda lib, x, y: lib_fn(lib).vmap(lambda p: p[0] @ p[1], in_dims=((0, 1),))((x, y)), arr(4, 2, 3),
         arr(3, 4))
    both(lambda lib, x, y: lib_fn(lib).vmap(lambda a, b: (a * b, b), out_dims=(0, None), in_dims=(0, None))(x, y),
         A23, X3)
    both(lambda lib, x: lib_fn(lib).vmap(lambda a, *, k: a * k)(x, k=3.0), X3)
    both(lambda lib, x, y: lib_fn(lib).vmap(lib_fn(lib).vmap(lambda a, b: a * b), in_dims=(0, None))(x, y),
         arr(4, 2, 3), arr(2, 3))
    both(lambda lib, x: lib_fn(lib).vmap(lambda a: a + lib.rand(()), randomness="same")(x)[0] * 0, A23)


def test_vmap_composes():
    both(lambda lib, x: lib_fn(lib).vmap(lib_fn(lib).grad(f_scalar(lib)))(x), arr(4, 3))
    both(lambda lib, x: lib_fn(lib).vmap(lib_fn(lib).jacrev(f_elem(lib)))(x), arr(4, 3))
    both(lambda lib, x, w: lib_fn(lib).vmap(lib_fn(lib).grad(lambda w, x: (w @ x).tanh()), in_dims=(None, 0))(w, x),
         arr(5, 3), X3)
    both(lambda lib, x: lib_fn(lib).grad(lambda x: lib_fn(lib).vmap(f_scalar(lib))(x).sum())(x), arr(4, 3))
    both(lambda lib, x: lib_fn(lib).jacrev(lib_fn(lib).vmap(lambda r: r.sin() * r.sum()))(x), A23)


def test_vmap_errors():
    def vm(lib, *a, **k):
        return lib_fn(lib).vmap(*a, **k)
    cases = [
        lambda lib, x, y: vm(lib, lambda a, b: a + b)(x, y),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=1)(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=(0, 0))(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=[0])(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=None)(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=(0.5,))(x),
        lambda lib, x, y: vm(lib, lambda a, b: a)(x, 1.0),
        lambda lib, x, y: vm(lib, lambda a: (a, 1.0))(x),
        lambda lib, x, y: vm(lib, lambda a: (a, a), out_dims=(0, None))(x),
        lambda lib, x, y: vm(lib, lambda a: a, out_dims=(0, 1))(x),
        lambda lib, x, y: vm(lib, lambda a: a, out_dims=2.0)(x),
        lambda lib, x, y: vm(lib, lambda a: a.sum(), out_dims=1)(x),
        lambda lib, x, y: vm(lib, lambda a: a)(),
        lambda lib, x, y: vm(lib, lambda a: a, randomness="x")(x),
        lambda lib, x, y: vm(lib, lambda a: a, chunk_size=0)(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=None)(x),
        lambda lib, x, y: vm(lib, lambda d: d["a"], in_dims=({"a": 0},))({"a": x, "b": x}),
        lambda lib, x, y: vm(lib, lambda a: a + lib.rand(()))(x),
        lambda lib, x, y: vm(lib, lambda a: a, in_dims=(None,))(x),
    ]
    for c in cases:
        same_error(c, X3, arr(4))


# ---------------------------------------------------------------------------- func: functional_call


class TinyModule:
    """The part of nn.Module's interface functional_call uses, on plain srcgrad tensors: a
    linear map with a bias parameter and a scale buffer, and a child of the same kind."""

    def __init__(self, w, b, child=None):
        self._parameters = {"weight": w, "bias": b}
        self._buffers = {"scale": st.tensor(2.0, dtype=st.float64)}
        self._modules = {"child": child} if child is not None else {}

    def __getattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, {}):
                return self.__dict__[table][name]
        raise AttributeError(name)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from ((prefix + k, v) for k, v in self._parameters.items())
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".")

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from ((prefix + k, v) for k, v in self._buffers.items())
        for name, m in self._modules.items():
            yield from m.named_buffers(prefix + name + ".")

    def get_submodule(self, target):
        m = self
        for part in target.split("."):
            m = m._modules[part]
        return m

    def __call__(self, x):
        y = (x @ self.weight + self.bias) * self.scale
        return self.child(y) if self._modules else y


def test_functional_call_on_plain_tensors():
    w, b = (st.tensor(arr(3, 3)) for _ in range(2))
    inner = TinyModule(st.tensor(arr(3, 2)), st.tensor(arr(2)))
    m = TinyModule(w, b[0], inner)
    x = st.tensor(arr(4, 3))
    new = {"weight": st.ones(3, 3, dtype=st.float64), "child.bias": st.zeros(2, dtype=st.float64),
           "child.scale": st.tensor(1.0, dtype=st.float64)}
    out = SF.functional_call(m, new, (x,))
    expect = ((x @ new["weight"] + b[0]) * 2.0) @ inner.weight
    np.testing.assert_allclose(out.numpy(), expect.numpy())
    assert m.weight is w and inner.bias is not new["child.bias"] and inner.scale.item() == 2.0
    with pytest.raises(RuntimeError):     # a shape mismatch in the call: the originals still come back
        SF.functional_call(m, {"weight": st.ones(3, 3, dtype=st.float64)}, (st.ones(4, 5, dtype=st.float64),))
    assert m.weight is w
    # gradients with respect to the substituted parameters
    g = SF.grad(lambda p: SF.functional_call(m, p, x).sum())({"weight": w, "child.weight": inner.weight})
    assert set(g) == {"weight", "child.weight"} and tuple(g["weight"].shape) == (3, 3)
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for TinyModule:\n\tUnexpected key\(s\): "
                                           r"'nope'\.\n\tMissing key\(s\): 'bias'"):
        SF.functional_call(m, {"nope": w}, x, strict=True)


def test_functional_call_nn_linear():
    nn = pytest.importorskip("srcgrad.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("srcgrad.nn.Linear not available")
    tlin = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    slin = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    slin.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in tlin.state_dict().items()})
    x = arr(5, 3)
    params = {k: arr(*v.shape) for k, v in tlin.named_parameters()}

    def call(lib, x, *ps):
        mod = slin if lib is st else tlin
        p = dict(zip(params, ps))
        loss = lambda p, x: (lib_fn(lib).functional_call(mod, p, (x,)) ** 2).mean()    # noqa: E731
        return lib_fn(lib).functional_call(mod, p, x), lib_fn(lib).grad(loss)(p, x), \
            lib_fn(lib).vmap(lib_fn(lib).grad(loss), in_dims=(None, 0))(p, x)
    both(call, x, *params.values())
    assert all(p is q for p, q in zip(slin.parameters(), [slin[0].weight, slin[0].bias, slin[2].weight,
                                                              slin[2].bias]))
    same_error(lambda lib, w: lib_fn(lib).functional_call(slin if lib is st else tlin, [{"0.weight": w},
                                                                                         {"0.weight": w}], w),
               arr(4, 3))
    same_error(lambda lib, w: lib_fn(lib).functional_call(slin if lib is st else tlin, 3, w), arr(4, 3))
