"""The shape-class passes (srcgrad/ir/shape_passes.py, issue 28 point 3): the generated
gradient loses the no-op ``sum_to``s, the broadcasts of a number and the arrays built only for
their shape, and keeps every ``sum_to`` that may sum (arrays that broadcast). Gradients are
checked against PyTorch's autograd, an independent tool, on shapes that broadcast and that do not."""
import numpy as np
import pytest
import torch

import srcgrad
from srcgrad.ir.shape_passes import class_of, shape_classes

BACKENDS = ("python", "llvm")


def squares(x):
    return np.sum(x * x)


def mean_square(x):
    return np.mean((x * 2.0 - 1.0) ** 2)


def weighted(x, w):
    return np.sum(w * np.tanh(x))


def scaled(x, c):
    return np.sum(c * x)


def _grads(f, args, wrt, backend):
    got = srcgrad.grad(f, wrt=wrt, backend=backend)(*args)
    return got if isinstance(got, tuple) else (got,)


def _autograd(f, args, wrt):
    tf = {"squares": lambda x: torch.sum(x * x), "mean_square": lambda x: torch.mean((x * 2.0 - 1.0) ** 2),
          "weighted": lambda x, w: torch.sum(w * torch.tanh(x)), "scaled": lambda x, c: torch.sum(c * x)}[f.__name__]
    wrt = (wrt,) if isinstance(wrt, int) else wrt
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    grads = torch.autograd.grad(tf(*ts), [ts[k] for k in wrt])
    return tuple(g.numpy() if np.ndim(args[k]) else float(g) for g, k in zip(grads, wrt))


CASES = [
    (squares, (np.linspace(-1.0, 2.0, 5),), 0),
    (mean_square, (np.linspace(-1.0, 2.0, 6).reshape(2, 3),), 0),
    (weighted, (np.linspace(-1.0, 2.0, 6).reshape(2, 3), np.array([0.5, -2.0, 3.0])), (0, 1)),   # w broadcasts
    (weighted, (np.linspace(-1.0, 2.0, 3), np.linspace(0.5, 1.5, 3)), (0, 1)),
    (weighted, (np.linspace(-1.0, 2.0, 3), np.array([2.0])), (0, 1)),           # a size-1 axis sums
    (weighted, (np.array([0.3]), np.linspace(0.5, 1.5, 4)), (0, 1)),           # x broadcasts
    (scaled, (np.linspace(-1.0, 2.0, 4), 3.0), (0, 1)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_gradients_match_autograd(f, args, wrt, backend):
    for ours, theirs in zip(_grads(f, args, wrt, backend), _autograd(f, args, wrt)):
        assert np.shape(ours) == np.shape(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_no_op_sums_and_shape_only_arrays_go():
    df = srcgrad.grad(squares, backend="python")
    df(np.ones(3))
    assert "sum_to" not in df.adjoint_source and "ones_like" not in df.adjoint_source, df.adjoint_source
    dm = srcgrad.grad(mean_square, backend="python")
    dm(np.ones((2, 2)))
    assert "sum_to" not in dm.adjoint_source and ".size" in dm.adjoint_source
    assert "** 2.0).size" not in dm.adjoint_source, dm.adjoint_source       # the size of x, not of a square


def test_a_sum_that_may_sum_stays():
    """``w`` may broadcast against ``x``: its adjoint is summed back to its shape."""
    dw = srcgrad.grad(weighted, wrt=1, backend="python")
    dw(np.ones((2, 3)), np.ones(3))
    assert "sum_to(" in dw.adjoint_source, dw.adjoint_source


def _dot(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_is_never_an_argument_nor_another_gradient(backend):
    """``sum(x * y)``'s gradient for x is y's values in an array of its own: the rewrite of
    ``1.0 * y`` to ``y`` would hand the caller its own argument."""
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    dx, dy = srcgrad.grad(_dot, wrt=(0, 1), backend=backend)(x, y)
    assert not np.shares_memory(dx, y) and not np.shares_memory(dy, x) and not np.shares_memory(dx, dy)
    dx[0] = 100.0
    assert y[0] == 3.0


def test_shape_classes_follow_broadcasting():
    from srcgrad.ir.core import Builder, Function
    from srcgrad.ir.types import ArrayType, F64
    fn = Function("f", [("a", ArrayType(F64, 1)), ("b", ArrayType(F64, 2))])
    a, b = fn.params
    with Builder(fn.body) as bld:
        ab = bld.emit("mul", [a, b])
        aba = bld.emit("add", [ab, a])
        e = bld.emit("exp", [a])
        s = bld.emit("sum_to", [aba, b])
        c = bld.emit("cumsum", [b], {"axis": 0})
        bld.emit("return", [s])
    classes = shape_classes(fn)
    assert class_of(aba, classes) == class_of(ab, classes) == frozenset({a, b})
    assert class_of(e, classes) == frozenset({a})
    assert class_of(s, classes) == class_of(b, classes) == class_of(c, classes) == frozenset({b})


def _ones_times(y_of):
    """IR of ``return broadcast_like(1.0, p) * y`` with ``y = y_of(builder, p)``."""
    from srcgrad.ir.core import Builder, Function
    from srcgrad.ir.types import ArrayType, F64
    fn = Function("f", [("p", ArrayType(F64, 1))])
    (p,) = fn.params
    with Builder(fn.body) as bld:
        y = y_of(bld, p)
        ones = bld.emit("broadcast_like", [bld.const(1.0, F64), p])
        out = bld.emit("mul", [ones, y])
        bld.emit("return", [out, y] if y is not p else [out])
    return fn, out, y


def test_one_times_an_array_is_the_array_only_where_nobody_sees_both():
    from srcgrad.ir.shape_passes import simplify_broadcasts
    fn, out, y = _ones_times(lambda bld, p: bld.emit("exp", [p]))
    fn.body.ops[-1].operands = [out]                        # exp(p) is not returned: 1.0 * it is it
    simplify_broadcasts(fn)
    assert fn.body.yielded == [y]
    fn, out, p = _ones_times(lambda bld, p: p)              # the caller's own argument: a copy stays
    simplify_broadcasts(fn)
    assert fn.body.yielded == [out] and out.owner.prim == "mul" and out.owner.operands[0].owner.prim == "const"
    fn, out, y = _ones_times(lambda bld, p: bld.emit("exp", [p]))     # both returned: two buffers
    simplify_broadcasts(fn)
    assert fn.body.yielded == [out, y] and out.owner.prim == "mul"
