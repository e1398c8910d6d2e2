"""Array writes everywhere under differentiation (issue 12): element, row and slice writes
(``=``, ``+=``, ``-=``, ``*=``) inside ``if``/``elif``/``else``, in nested ``for``/``while``
loops, around ``break``/``continue``/early ``return``; reads of written arrays anywhere
(elements, rows, whole-array operations), writes into argument arrays. Gradients against
finite differences and PyTorch (functional twins), on both backends; value_and_grad, vjp and
jvp agree with them."""
import math

import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
R = np.random.default_rng(12)


def write_in_branches(x, c):
    y = np.zeros(4)
    y[3] = x[3]
    if x[0] > 0.0:
        y[0] = x[0] * c
        y[1] += y[0] * x[1]
    elif x[1] > 0.0:
        y[1] = x[1]
        y[0] -= y[1] * c
    else:
        y[2] = x[2] * x[2]
        y[2] *= c
    y[3] *= y[0] + y[1] + y[2]
    return np.sum(y * y) + y[3]


def loop_branch_writes(x, c):
    n = x.shape[0]
    y = np.zeros(n)
    acc = np.ones(2)
    for i in range(n):
        if x[i] > 0.0:
            y[i] = x[i] * c
            acc[0] *= 1.0 + y[i]
        elif i > 0:
            y[i] = y[i - 1] * x[i] + c
            acc[1] += y[i] * y[i]
        else:
            y[i] -= x[i]
        if y[i] > 1.0:
            y[i] = math.sqrt(y[i])
    return np.sum(y) + acc[0] * acc[1]


def nested_table(x):
    """Dynamic programming: a table filled element by element, reading the row above."""
    n = x.shape[0]
    t = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i == 0:
                t[i, j] = x[j]
            elif j == 0:
                t[i, j] = t[i - 1, j] * x[i]
            else:
                t[i, j] = max(t[i - 1, j], t[i, j - 1]) + x[i] * x[j]
    return np.sum(t[n - 1]) + t[n - 1, n - 1]


def while_break_continue(x, c):
    y = x.copy()
    k = 0
    s = 0.0
    while k < y.shape[0]:
        k += 1
        if y[k - 1] < -2.0:
            break
        if y[k - 1] < 0.0:
            y[k - 1] = -y[k - 1] * c
            continue
        j = 0
        while j < k:
            y[j] += 0.1 * y[k - 1] * c
            j += 1
        s += np.sum(y)
    return s + np.dot(y, x)


def early_return(x, c):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * c
        if y[i] > 5.0:
            return np.sum(y)
        y[i] = y[i] * y[i]
    return np.sum(y) * c


def rnn(W, x):
    T = x.shape[0]
    h = np.zeros((T + 1, W.shape[0]))
    for t in range(T):
        h[t + 1] = np.tanh(W @ h[t] + x[t])
    return np.sum(h[T] * h[T - 1])


def rnn_t(W, x):
    h = torch.zeros(W.shape[0], dtype=torch.float64)
    hs = [h]
    for t in range(x.shape[0]):
        hs.append(torch.tanh(W @ hs[-1] + x[t]))
    return torch.sum(hs[-1] * hs[-2])


def heat(u0, k):
    """An explicit stencil in a time loop: a fresh array each step."""
    u = u0.copy()
    n = u.shape[0]
    for step in range(6):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = un
    return np.sum(u * u)


def heat_t(u0, k):
    u = u0
    for step in range(6):
        u = torch.cat([u[:1], u[1:-1] + k * (u[:-2] - 2.0 * u[1:-1] + u[2:]), u[-1:]])
    return torch.sum(u * u)


def whole_array_reads(x, v):
    buf = np.zeros(3)
    a = 0.0
    for i in range(3):
        buf[i] = math.tanh(v[i] * x)
        a = a + np.dot(v, buf) * np.sum(buf)
        buf[0] = buf[0] * 0.5 + a * 0.1
    return a


def reads_written_array_in_if(x):
    a = np.zeros(2)
    a[0] = x
    if x > 0:
        b = a[0] * 2.0
    else:
        b = x
    a[0] = 0.0
    return b + a[1]


def whole_array_read_in_loop_of_array_written_before(x, v):
    buf = np.zeros(3)
    buf[0] = math.tanh(v[0] * x)
    s = 0.0
    for i in range(2):
        s += np.dot(v, buf) * x
    buf[1] = s
    return s + np.sum(buf * buf)


def rows_and_slices(M, v):
    A = M.copy()
    for i in range(A.shape[0]):
        A[i, 1:] += A[i - 1, :-1] * v[i]
        if A[i, 0] > 0.0:
            A[i] *= 0.5
        A[i, :2] = np.tanh(A[i, :2]) - v[i]
    return np.sum(A.T @ v) + np.sum(A * A)


def writes_argument(x, c):
    x[0] = x[0] * c
    for i in range(1, x.shape[0]):
        x[i] = x[i] * x[i - 1]
    return np.sum(x * x)


PROGRAMS = [
    (write_in_branches, (np.array([0.6, -0.4, 0.3, 1.1]), 1.5)),
    (write_in_branches, (np.array([-0.6, 0.4, 0.3, 1.1]), 1.5)),
    (write_in_branches, (np.array([-0.6, -0.4, 0.3, 1.1]), 1.5)),
    (loop_branch_writes, (np.array([0.8, -0.3, 0.5, -0.7, 2.1]), 0.9)),
    (nested_table, (np.array([0.5, -0.2, 0.9, 0.3]),)),
    (while_break_continue, (np.array([0.5, -0.2, 0.9, 0.3]), 0.7)),
    (while_break_continue, (np.array([0.5, -2.5, 0.9, 0.3]), 0.7)),
    (early_return, (np.array([0.5, 1.5, -0.9]), 1.1)),
    (early_return, (np.array([0.5, 5.5, -0.9]), 1.1)),
    (rnn, (R.standard_normal((3, 3)) * 0.5, R.standard_normal((5, 3)))),
    (heat, (R.standard_normal(7), 0.2)),
    (whole_array_reads, (0.7, np.array([0.4, -0.9, 1.3]))),
    (reads_written_array_in_if, (0.7,)),
    (reads_written_array_in_if, (-0.7,)),
    (whole_array_read_in_loop_of_array_written_before, (0.5, np.array([0.4, -0.9, 1.3]))),
    (rows_and_slices, (R.standard_normal((4, 3)), np.array([0.5, -0.3, 0.8, 1.2]))),
    (writes_argument, (np.array([0.5, -1.2, 0.8]), 1.3)),
]


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_against_finite_differences(fn, args, backend):
    wrt = tuple(range(len(args)))
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt, backend=backend)(*_copies(args))
    assert value == pytest.approx(fn(*_copies(args)), rel=1e-13)
    for k, g in enumerate(grads):
        want = numeric_gradient(lambda *a: fn(*_copies(a)), args, k)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn,twin,args", [
    (rnn, rnn_t, (R.standard_normal((4, 4)) * 0.5, R.standard_normal((6, 4)))),
    (heat, heat_t, (R.standard_normal(9), 0.15)),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_against_pytorch(fn, twin, args, backend):
    targs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    want = torch.autograd.grad(twin(*targs), targs)
    got = srcgrad.grad(fn, wrt=(0, 1), backend=backend)(*_copies(args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_argument_written_in_place_holds_what_python_leaves(backend):
    """The gradient is with respect to the values on entry; afterwards the argument holds what
    the plain function leaves in it."""
    x = np.array([0.5, -1.2, 0.8])
    expected = x.copy()
    value = writes_argument(expected, 1.3)
    got_value, g = srcgrad.value_and_grad(writes_argument, backend=backend)(x, 1.3)
    assert got_value == pytest.approx(value, rel=1e-15)
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_allclose(g, numeric_gradient(lambda *a: writes_argument(*_copies(a)), (np.array(
        [0.5, -1.2, 0.8]), 1.3), 0), rtol=1e-7)


def stencil_rows(M, c):
    out = np.zeros(M.shape)
    for i in range(M.shape[0]):
        out[i] = M[i] * c
        if i > 0:
            out[i] += out[i - 1] * 0.5
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_and_jvp_of_writes(backend):
    M, c = R.standard_normal((4, 3)), 0.8
    cot = R.standard_normal((4, 3))
    out, vjp_fn = srcgrad.vjp(stencil_rows, M.copy(), c, backend=backend)
    np.testing.assert_allclose(out, stencil_rows(M, c), rtol=1e-15)
    gM, gc = vjp_fn(cot)
    tM, tc = R.standard_normal((4, 3)), 0.3
    _, dout = srcgrad.jvp(stencil_rows, (M.copy(), c), (tM, tc), backend=backend)
    # <cot, J t> computed both ways, and against finite differences
    assert np.sum(cot * dout) == pytest.approx(np.sum(gM * tM) + gc * tc, rel=1e-12)
    eps = 1e-6
    fd = (stencil_rows(M + eps * tM, c + eps * tc) - stencil_rows(M - eps * tM, c - eps * tc)) / (2 * eps)
    np.testing.assert_allclose(dout, fd, rtol=1e-6, atol=1e-8)


def trading_places(u0, k):
    u = u0.copy()
    un = u0.copy()
    for step in range(3):
        for i in range(1, u.shape[0] - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, un = un, u
    return np.sum(u * u)


def test_arrays_trading_places_are_refused_with_a_rewrite():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="trade places in a loop") as info:
        srcgrad.grad(trading_places)(np.ones(5), 0.1)
    assert "un = u.copy()" in str(info.value) and "test_array_writes.py" in str(info.value)
    assert srcgrad.jit(trading_places)(np.arange(5.0), 0.1) == pytest.approx(trading_places(np.arange(5.0), 0.1))



def float32_written_under_if(x):
    f = np.zeros(2, dtype=np.float32)
    s = 0.0
    for i in range(2):
        if x[i] > 0.0:
            f[i] = x[i] * x[i]
        s += f[i]
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_array_written_under_if(backend):
    """The adjoint of a float32 array is float64: the `if` of its reverse sweep yields that
    (it made ill-typed IR)."""
    g = srcgrad.grad(float32_written_under_if, backend=backend)(np.array([0.5, -0.3]))
    np.testing.assert_array_equal(g, [1.0, 0.0])
