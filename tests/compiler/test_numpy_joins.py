"""Joining, splitting and building arrays (np.concatenate, np.stack, np.hstack, np.vstack,
np.column_stack, np.split, np.array_split, np.hsplit, np.vsplit, np.diag, np.diagonal,
np.trace, np.eye, np.identity, np.tri, np.tril, np.triu, np.linspace, np.roll, np.tile,
np.repeat, np.kron, and the methods x.repeat, x.diagonal, x.trace): values as numpy's,
gradients against PyTorch and finite differences, jvp against the gradient, the two backends
against each other; numpy's errors for shapes that do not join; clear refusals."""
import re

import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
RNG = np.random.default_rng(11)
X = RNG.normal(size=(4, 3))
Y = RNG.normal(size=(4, 3))
V = RNG.normal(size=6)
W = RNG.normal(size=3)


# each program: (numpy function, the same in torch, arguments); every argument is differentiated
def concatenations(x, y, v, w):
    a = np.concatenate([x, y * 2.0, x[:1]])                 # (9, 3)
    b = np.concatenate((x, y), axis=1) + np.concatenate([y, x], -1)
    flat = np.concatenate([x, w, y.T], axis=None) * np.concatenate((v, y, w, v), axis=None)
    return np.sum(np.tanh(a)) + np.sum(b * b) + np.sum(np.concatenate([v], axis=None) ** 3) + np.sum(flat)


def concatenations_torch(x, y, v, w):
    a = torch.cat([x, y * 2.0, x[:1]])
    b = torch.cat((x, y), dim=1) + torch.cat([y, x], -1)
    flat = torch.cat([x.reshape(-1), w, y.T.reshape(-1)]) * torch.cat((v, y.reshape(-1), w, v))
    return torch.sum(torch.tanh(a)) + torch.sum(b * b) + torch.sum(v ** 3) + torch.sum(flat)


def stacks(x, v, w):
    c = np.stack([v, v * v], axis=1)                         # (6, 2)
    d = np.hstack([v, w]) * np.hstack((v[:3], w, v[3:]))
    e = np.vstack([x, w, w * 3.0]) @ w
    f = np.column_stack([v[:4], x, v[2:]]) * 0.5
    g = np.stack([w, w * 2.0, np.tanh(w)])                   # axis 0
    return (np.sum(c[:, 0] * c[:, 1]) + np.sum(d) + np.sum(np.sin(e)) + np.sum(f * f) + np.sum(g * np.cos(g)))


def stacks_torch(x, v, w):
    c = torch.stack([v, v * v], dim=1)
    d = torch.hstack([v, w]) * torch.hstack((v[:3], w, v[3:]))
    e = torch.vstack([x, w, w * 3.0]) @ w
    f = torch.column_stack([v[:4], x, v[2:]]) * 0.5
    g = torch.stack([w, w * 2.0, torch.tanh(w)])
    return (torch.sum(c[:, 0] * c[:, 1]) + torch.sum(d) + torch.sum(torch.sin(e)) + torch.sum(f * f)
            + torch.sum(g * torch.cos(g)))


def splits(x, v):
    a, b, c = np.split(v, 3)
    p, q = np.split(x, 2, axis=0)
    r, s = np.split(x, [1], axis=1)
    t, u, z = np.split(v, [2, 5])
    h, i, j, k = np.array_split(v, 4)
    m, n = np.array_split(x, 2, 1)
    o, o2 = np.hsplit(x, [2])
    e, f = np.vsplit(x, 2)
    extra = np.sum(o) * np.sum(o2 * o2) + np.sum(e * f)
    return extra + (np.sum(a * np.tanh(b) * c) + np.sum(p * q) + np.sum(r) * np.sum(s * s)
                    + np.sum(t) * np.sum(np.sin(u)) + np.sum(z ** 3) + np.sum(h * h) - np.sum(i) * np.sum(j * k)
                    + np.sum(m * m) * np.sum(np.cos(n)))


def splits_torch(x, v):
    a, b, c = torch.tensor_split(v, 3)
    p, q = torch.tensor_split(x, 2, dim=0)
    r, s = torch.tensor_split(x, [1], dim=1)
    t, u, z = torch.tensor_split(v, [2, 5])
    h, i, j, k = torch.tensor_split(v, 4)
    m, n = torch.tensor_split(x, 2, 1)
    o, o2 = torch.tensor_split(x, [2], 1)
    e, f = torch.tensor_split(x, 2, 0)
    extra = torch.sum(o) * torch.sum(o2 * o2) + torch.sum(e * f)
    return extra + (torch.sum(a * torch.tanh(b) * c) + torch.sum(p * q) + torch.sum(r) * torch.sum(s * s)
            + torch.sum(t) * torch.sum(torch.sin(u)) + torch.sum(z ** 3) + torch.sum(h * h)
            - torch.sum(i) * torch.sum(j * k) + torch.sum(m * m) * torch.sum(torch.cos(n)))


def diagonals(x, v, w):
    sq = x[:3, :] * 2.0
    a = np.sum(np.diag(v) @ v) + np.sum(np.diag(w, 1) @ np.tanh(v[:4])) * np.sum(np.diag(w, -2) @ v[:5])
    b = np.diag(x) * np.diagonal(x, -1) + np.sum(np.diagonal(x, 1) ** 2)
    c = np.trace(sq) + np.trace(x, -2) * np.trace(sq, offset=1) + np.trace(x, 5)
    e = np.eye(3) @ w + np.eye(4, 3, k=1)[:3] @ w + np.identity(3) @ (w * w) + np.eye(3, M=4, k=-1) @ v[:4]
    t = np.tril(x) * np.triu(y_of(x), 1) + np.tril(x, -1) ** 2 + np.triu(x, k=-1) * 3.0
    return np.sin(a) + np.sum(b) + c + np.sum(e * e) + np.sum(np.tanh(t))


def y_of(x):
    return x * x + 0.5


def diagonals_torch(x, v, w):
    sq = x[:3, :] * 2.0
    a = torch.sum(torch.diag(v) @ v) + torch.sum(torch.diag(w, 1) @ torch.tanh(v[:4])) * torch.sum(
        torch.diag(w, -2) @ v[:5])
    b = torch.diag(x) * torch.diagonal(x, -1) + torch.sum(torch.diagonal(x, 1) ** 2)
    c = (torch.diagonal(sq).sum() + torch.diagonal(x, -2).sum() * torch.diagonal(sq, 1).sum()
         + torch.diagonal(x, 5).sum())
    e = (torch.eye(3, dtype=torch.float64) @ w + _eye_k(4, 3, 1)[:3] @ w + torch.eye(3, dtype=torch.float64) @ (w * w)
         + _eye_k(3, 4, -1) @ v[:4])
    t = torch.tril(x) * torch.triu(x * x + 0.5, 1) + torch.tril(x, -1) ** 2 + torch.triu(x, -1) * 3.0
    return torch.sum(torch.sin(a)) + torch.sum(b) + c + torch.sum(e * e) + torch.sum(torch.tanh(t))


def _eye_k(n, m, k):
    return torch.tensor(np.eye(n, m, k))


def spaced(start, stop, v):
    a = np.linspace(start, stop, 6) * v
    b = np.linspace(stop, 2.0 * start, num=5, endpoint=False) ** 2
    c = np.linspace(start, stop, 1) + np.linspace(0.0, stop, 2) @ v[:2] + np.sum(np.linspace(start, 1.0, 0))
    return np.sum(np.sin(a)) + np.sum(b) + np.sum(c) + np.sum(np.linspace(-1, 1) * start)


def _linspace_torch(start, stop, num, endpoint=True):
    """start·(1 - t) + stop·t, t = i / div: the meaning of np.linspace (numpy's last point is stop)."""
    div = (num - 1 if endpoint else num) or 1
    t = torch.arange(num, dtype=torch.float64) / div
    return start * (1.0 - t) + stop * t


def spaced_torch(start, stop, v):
    a = _linspace_torch(start, stop, 6) * v
    b = _linspace_torch(stop, 2.0 * start, 5, endpoint=False) ** 2
    c = _linspace_torch(start, stop, 1) + _linspace_torch(0.0, stop, 2) @ v[:2]
    return (torch.sum(torch.sin(a)) + torch.sum(b) + torch.sum(c)
            + torch.sum(_linspace_torch(-1.0, 1.0, 50) * start))


def rolled(x, v):
    a = np.roll(v, 2) * np.tanh(v) + np.roll(v, -7) + np.roll(v, 0) * 0.5
    b = np.roll(x, 1, axis=0) * x + np.roll(x, -1, 1) * np.roll(x, 4) + np.roll(x, 5, axis=-1)
    c = np.roll(x, (1, 2), axis=(0, 1)) * np.roll(x, (2, -1)) + np.roll(x, 1, axis=(0, 1))
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(c * np.tri(4, 3, -1))


def rolled_torch(x, v):
    a = torch.roll(v, 2) * torch.tanh(v) + torch.roll(v, -7) + torch.roll(v, 0) * 0.5
    b = torch.roll(x, 1, 0) * x + torch.roll(x, -1, 1) * torch.roll(x, 4) + torch.roll(x, 5, -1)
    c = torch.roll(x, (1, 2), (0, 1)) * torch.roll(x, 1) + torch.roll(x, (1, 1), (0, 1))
    return torch.sum(a * a) + torch.sum(torch.sin(b)) + torch.sum(c * torch.tril(torch.ones(4, 3), -1))


def copies(x, v):
    a = np.tile(v, 3) * np.sum(np.tile(v, (2, 1)))
    b = np.tile(x, 2)[:, 2:5] + np.tile(x, (2, 1))[1:5, :]
    c = np.tile(v[:2], (3, 2))
    d = np.repeat(v, 2) * np.repeat(x, 3)[:12]
    e = np.repeat(x, 2, axis=0)[::2] * np.repeat(x, 3, axis=-1)[:, ::3]
    return np.sum(np.sin(a)) + np.sum(b * b) + np.sum(np.tanh(c)) + np.sum(d ** 3) + np.sum(e * np.cos(e))


COUNTS = np.array([2, 0, 1, 3])
COUNTS6 = np.array([1, 2, 0, 0, 1, 3])


def counted(x, v):
    a = np.repeat(x, COUNTS, axis=0) * np.repeat(x, COUNTS[1:], axis=1)[:1, :3]
    b = np.repeat(v, COUNTS6) ** 2 + np.repeat(v[:2], COUNTS[:1])[:1]
    return np.sum(np.sin(a)) + np.sum(b) + np.sum(np.repeat(x, np.arange(12)) ** 3)


def counted_torch(x, v):
    counts = torch.tensor(COUNTS)
    a = torch.repeat_interleave(x, counts, 0) * torch.repeat_interleave(x, counts[1:], 1)[:1, :3]
    b = torch.repeat_interleave(v, torch.tensor(COUNTS6)) ** 2 + torch.repeat_interleave(v[:2], 2)[:1]
    return (torch.sum(torch.sin(a)) + torch.sum(b)
            + torch.sum(torch.repeat_interleave(x.reshape(-1), torch.arange(12)) ** 3))


def copies_torch(x, v):
    a = torch.tile(v, (3,)) * torch.sum(torch.tile(v, (2, 1)))
    b = torch.tile(x, (2,))[:, 2:5] + torch.tile(x, (2, 1))[1:5, :]
    c = torch.tile(v[:2], (3, 2))
    d = torch.repeat_interleave(v, 2) * torch.repeat_interleave(x, 3)[:12]
    e = torch.repeat_interleave(x, 2, dim=0)[::2] * torch.repeat_interleave(x, 3, dim=1)[:, ::3]
    return (torch.sum(torch.sin(a)) + torch.sum(b * b) + torch.sum(torch.tanh(c)) + torch.sum(d ** 3)
            + torch.sum(e * torch.cos(e)))


def products(x, y, v, w):
    return (np.sum(np.sin(np.kron(x, y))) + np.sum(np.kron(v, w) ** 2) + np.sum(np.kron(x, x[:1, :2]) * 0.5)
            + np.sum(np.kron(w, w[:2])))


def products_torch(x, y, v, w):
    return (torch.sum(torch.sin(torch.kron(x, y))) + torch.sum(torch.kron(v, w) ** 2)
            + torch.sum(torch.kron(x, x[:1, :2].contiguous()) * 0.5) + torch.sum(torch.kron(w, w[:2].contiguous())))


def methods(x, v):
    return (np.sum(x.repeat(2) * np.sin(x.repeat(2))) + x.trace() + x.trace(1) * x.trace(offset=-1)
            + np.sum(x.diagonal(1) ** 2) + np.sum(v.repeat(3, axis=0)[::2] ** 3) + np.sum(x.repeat(2, 1) ** 2))


def methods_torch(x, v):
    r = torch.repeat_interleave(x, 2)
    return (torch.sum(r * torch.sin(r)) + torch.diagonal(x).sum() + torch.diagonal(x, 1).sum() * torch.diagonal(
        x, -1).sum() + torch.sum(torch.diagonal(x, 1) ** 2) + torch.sum(torch.repeat_interleave(v, 3)[::2] ** 3)
        + torch.sum(torch.repeat_interleave(x, 2, 1) ** 2))


PROGRAMS = {
    "methods": (methods, methods_torch, (X, V)),
    "products": (products, products_torch, (X, Y.T, V, W)),
    "copies": (copies, copies_torch, (X, V)),
    "counted": (counted, counted_torch, (X, V)),
    "concatenations": (concatenations, concatenations_torch, (X, Y, V, W)),
    "stacks": (stacks, stacks_torch, (X, V, W)),
    "splits": (splits, splits_torch, (X, V)),
    "diagonals": (diagonals, diagonals_torch, (X, V, W)),
    "spaced": (spaced, spaced_torch, (0.3, 1.7, V)),
    "rolled": (rolled, rolled_torch, (X, V)),
}


def _torch_grads(tfn, args):
    ts = [torch.tensor(np.ascontiguousarray(a), dtype=torch.float64, requires_grad=True) for a in args]
    return [g.numpy() for g in torch.autograd.grad(tfn(*ts), ts)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_gradients_and_tangents(name):
    fn, tfn, args = PROGRAMS[name]
    want = fn(*args)
    expected = _torch_grads(tfn, args)
    wrt = tuple(range(len(args)))
    got = {}
    for backend in BACKENDS:
        assert srcgrad.jit(fn, backend=backend)(*args) == pytest.approx(want, rel=1e-12), backend
        got[backend] = srcgrad.grad(fn, wrt=wrt, backend=backend)(*args)
        for k, (g, e) in enumerate(zip(got[backend], expected)):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"{backend} d/d{k}")
        tangents = tuple(RNG.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else 0.7 for a in args)
        value, dot = srcgrad.jvp(fn, args, tangents, backend=backend)
        assert value == pytest.approx(want, rel=1e-12)
        assert dot == pytest.approx(sum(float(np.sum(e * t)) for e, t in zip(expected, tangents)), rel=1e-10)
    for k, (gp, gn) in enumerate(zip(got["python"], got["llvm"])):
        np.testing.assert_allclose(gn, gp, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gp, numeric_gradient(fn, args, k), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- numpy's errors and dtypes
def concatenate2(a, b): return np.concatenate([a, b])
def concatenate_rows(a, b): return np.concatenate((a, b), axis=1)
def concatenate_flat(a, b): return np.concatenate([a, b], axis=None)
def stack2(a, b): return np.stack([a, b])
def vstack2(a, b): return np.vstack([a, b])
def hstack2(a, b): return np.hstack([a, b])
def column_stack2(a, b): return np.column_stack([a, b])
def _first_of_two(a):
    p, q = np.split(a, 2)
    return p
def linspace_n(n): return np.linspace(0.0, 1.0, n)
def eye_n(n): return np.eye(n)
def roll_by(a, k): return np.roll(a, k)
def roll_rows(a, k): return np.roll(a, k, axis=1)
def diag_k(a, k): return np.diag(a, k)
def tril_k(a, k): return np.tril(a, k)
def triu_k(a, k): return np.triu(a, k)
def trace_k(a, k): return np.trace(a, k)
def tile_k(a, k): return np.tile(a, (2, k))
def repeat_k(a, k): return np.repeat(a, k)
def repeat_rows(a, k): return np.repeat(a, k, axis=0)
def kron2(a, b): return np.kron(a, b)
def repeat_each(a, c): return np.repeat(a, c)
def repeat_each_rows(a, c): return np.repeat(a, c, axis=1)


F32 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
I64 = np.arange(6).reshape(3, 2)
BOOLS = np.array([True, False, True])


@pytest.mark.parametrize("fn,args", [
    (concatenate2, (np.ones((2, 3)), np.ones((2, 4)))),
    (concatenate_rows, (np.ones((2, 3)), np.ones((3, 3)))),
    (stack2, (np.ones(3), np.ones(4))),
    (stack2, (np.ones((2, 3)), np.ones((3, 2)))),
    (vstack2, (np.ones(3), np.ones(4))),
    (vstack2, (np.ones((2, 3)), np.ones(4))),
    (hstack2, (np.ones((2, 3)), np.ones((3, 3)))),
    (column_stack2, (np.ones(3), np.ones(4))),
    (_first_of_two, (np.ones(5),)),
    (linspace_n, (-1,)),
    (eye_n, (-2,)),
    (tile_k, (np.ones(3), -1)),
    (repeat_k, (np.ones(3), -2)),
    (repeat_each, (np.ones(3), np.array([1, -1, 2]))),
    (repeat_each, (np.ones(3), np.array([1, 2]))),
    (repeat_each_rows, (np.ones((2, 3)), np.array([1, 2]))),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_errors(fn, args, backend):
    with pytest.raises(ValueError) as expected:
        fn(*args)
    with pytest.raises(ValueError) as got:
        srcgrad.jit(fn, backend=backend)(*args)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fn,args", [
    (concatenate2, (F32, F32)), (concatenate2, (F32, I64.T)), (concatenate2, (I64, np.zeros((1, 2), dtype=bool))),
    (concatenate2, (BOOLS, BOOLS)), (concatenate_flat, (I64, BOOLS)), (concatenate_flat, (F32, F32.T)),
    (stack2, (F32[0], F32[1])), (vstack2, (I64, I64[0])), (hstack2, (BOOLS, BOOLS)),
    (column_stack2, (F32[0], F32.T)), (roll_by, (F32, 7)), (roll_by, (I64, -3)), (roll_by, (np.ones((0, 3)), 2)),
    (roll_rows, (BOOLS[None, :].repeat(2, 0), 1)), (diag_k, (F32, 1)), (diag_k, (I64[0], -1)), (diag_k, (F32, 5)),
    (tril_k, (I64, 0)), (triu_k, (F32, -1)), (tril_k, (np.ones((3, 4), dtype=bool), 1)), (trace_k, (I64, -1)),
    (trace_k, (F32, 0)), (linspace_n, (1,)), (linspace_n, (0,)), (linspace_n, (7,)), (eye_n, (0,)),
    (_first_of_two, (I64.T,)),
    (tile_k, (F32, 2)), (tile_k, (BOOLS, 0)), (tile_k, (I64[0], 3)), (repeat_k, (F32, 2)), (repeat_k, (I64, 0)),
    (repeat_rows, (BOOLS[None, :], 3)), (repeat_rows, (F32, 1)), (kron2, (I64, I64.T)), (kron2, (I64[0], W)),
    (repeat_each, (F32, np.array([3]))), (repeat_each_rows, (BOOLS[None, :], np.array([0, 2, 1]))),
    (repeat_each_rows, (I64, np.array([2, 0]))),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_values_and_dtypes_as_numpy(fn, args, backend):
    """numpy's dtype where it keeps one (float32, ints, bools); tril/triu/trace of float32
    compute in float64, as srcgrad's whole-array arithmetic does (same values)."""
    want = fn(*args)
    got = srcgrad.jit(fn, backend=backend)(*args)
    np.testing.assert_array_equal(got, want)
    if fn is trace_k and args[0] is I64:
        assert isinstance(got, float)      # summed as floats, as np.sum of an int array (docs/compiler.md)
    elif fn not in (tril_k, triu_k, trace_k) or F32 is not args[0]:
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_float32_gradients():
    def f(a, b):
        return np.sum(np.concatenate([a, b * 2.0]) ** 2) + np.sum(np.roll(a, 1) * np.diag(a))
    a = np.array([0.5, -1.5], dtype=np.float32)
    b = np.array([2.0, 0.25, 1.0], dtype=np.float32)
    want = srcgrad.grad(f, wrt=(0, 1), backend="python")(a.astype(np.float64), b.astype(np.float64))
    for backend in BACKENDS:
        for g, e in zip(srcgrad.grad(f, wrt=(0, 1), backend=backend)(a, b), want):
            np.testing.assert_allclose(g, e, rtol=1e-6)
        # whole-array arithmetic widens float32 to float64 (to_f64): its adjoint passes through
        # (it was dropped, and such gradients were zeros)
        k = srcgrad.grad(lambda_free_sum, backend=backend)(a)
        np.testing.assert_allclose(k, 2.0 * a.astype(np.float64) * 3.0, rtol=1e-6)


def lambda_free_sum(a):
    return np.sum(a * a * 3.0)


# ---------------------------------------------------------------------- refusals
def with_out(a, b): return np.concatenate([a, b], out=a)
def of_an_array(a, b): return np.concatenate(a)
def variable_axis(a, b): return np.concatenate([a, b], axis=int(b[0]))
def with_a_number(a, b): return np.concatenate([a, 1.0])
def mixed_ranks(a, b): return np.concatenate([a, np.outer(a, b)])
def stack_mixed_ranks(a, b): return np.stack([a, np.outer(a, b)])
def variable_sections(a, b):
    p, q = np.split(a, len(b) - 1)
    return p
def diag_of_3d(a, b): return np.diag(a)
def roll_lengths(a, b): return np.roll(np.outer(a, b), (1, 2, 3), axis=(0, 1))
def vsplit_vector(a, b): return np.vsplit(a, 2)[0]
def variable_endpoint(a, b): return np.linspace(0.0, 1.0, 5, endpoint=b[0] > 0)
def axis_out_of_range(a, b): return np.stack([a, b], axis=3)
def eye_dtype(a, b): return np.eye(3, dtype=int)
def split_zero(a, b): return np.array_split(a, 0)
def trace_of_vector(a, b): return np.trace(a)
def kron_mixed_ranks(a, b): return np.kron(a, np.outer(a, b))


TWO = (np.ones(2), np.ones(2))


@pytest.mark.parametrize("fn,args,error,words", [
    (with_out, TWO, srcgrad.UnsupportedSyntaxError, "np.concatenate(..., out=...)"),
    (of_an_array, TWO, srcgrad.UnsupportedSyntaxError, "np.concatenate of something other than a list"),
    (variable_axis, TWO, srcgrad.UnsupportedSyntaxError, "the axis that is not a literal integer"),
    (with_a_number, TWO, srcgrad.TypingError, "the element at index 1 is a f64"),
    (mixed_ranks, TWO, srcgrad.TypingError, "must have same number of dimensions, but the array at index 0 has 1"),
    (stack_mixed_ranks, TWO, srcgrad.TypingError, "all input arrays must have the same shape"),
    (variable_sections, TWO, srcgrad.UnsupportedSyntaxError, "the number of sections of np.split that is not a"),
    (diag_of_3d, (np.ones((2, 2, 2)), 1.0), srcgrad.TypingError, "Input must be 1- or 2-d."),
    (roll_lengths, TWO, srcgrad.TypingError, "np.roll's shift and axis must have the same length"),
    (vsplit_vector, TWO, srcgrad.TypingError, "vsplit only works on arrays of 2 or more dimensions"),
    (variable_endpoint, TWO, srcgrad.UnsupportedSyntaxError, "endpoint that is not True or False"),
    (axis_out_of_range, TWO, srcgrad.TypingError, "axis 3 is out of bounds for array of dimension 2"),
    (eye_dtype, TWO, srcgrad.UnsupportedSyntaxError, "the keyword dtype= of np.eye"),
    (split_zero, TWO, srcgrad.TypingError, "number sections must be larger than 0."),
    (trace_of_vector, TWO, srcgrad.TypingError, "np.trace takes a matrix here"),
    (kron_mixed_ranks, TWO, srcgrad.TypingError, "np.kron takes two vectors or two matrices here"),
])
def test_refusals_name_the_call(fn, args, error, words):
    with pytest.raises(error) as info:
        srcgrad.jit(fn)(*args)
    assert words in str(info.value)
    assert "test_numpy_joins.py" in str(info.value)


# ---------------------------------------------------------------------- edges
def empty_parts(x): return np.concatenate([x[:0], x, x[5:]])
def split_out_of_range(x):
    a, b, c = np.split(x, [-2, 10])
    return np.sum(a) + np.sum(b) * 2.0 + np.sum(c) * 3.0
def split_backwards(x):
    a, b, c = np.split(x, [3, 1])
    return np.sum(a) + np.sum(b) * 2.0 + np.sum(c * c)
def roll_empty(x): return np.roll(x[:0], 3)
def linspace_edges(x):
    return np.linspace(1.0, 1.0, 5) + np.linspace(0.0, 5e-324, 3)[1] + np.linspace(-2, 3, 4, endpoint=False)[2]
def tile_none(x): return np.tile(x, 0)
def repeat_none(x): return np.repeat(x, 0)
def split_views(x):
    a, b = np.split(x, 2)
    a[0] = 7.0          # numpy's parts are views: x sees the write
    return x
def diag_far_off(x): return np.diag(np.outer(x, x), -9)
def eye_off(x): return np.eye(3, 5, 7) + np.eye(4, 5, -2)[:3]
def linspace_to_inf(x): return np.linspace(0.0, np.inf, 3)
def roll_flat_far(x): return np.roll(np.outer(x, x[:2]), -13)
def tril_of_nan(x): return np.tril(np.outer(x, x) / 0.0 * 0.0, 1)
def linspace_n_of(x, n): return np.linspace(x[0], x[1], n)


@pytest.mark.parametrize("fn,args", [
    (empty_parts, ()), (split_out_of_range, ()), (split_backwards, ()), (roll_empty, ()), (linspace_edges, ()),
    (tile_none, ()), (repeat_none, ()), (split_views, ()), (diag_far_off, ()), (eye_off, ()), (linspace_to_inf, ()),
    (roll_flat_far, ()), (tril_of_nan, ()), (linspace_n_of, (7,)), (linspace_n_of, (1,)),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_edges_as_numpy(fn, args, backend):
    with np.errstate(all="ignore"):
        want = fn(V.copy(), *args)
        got = srcgrad.jit(fn, backend=backend)(V.copy(), *args)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_parts_gradients(backend):
    for fn in (split_out_of_range, split_backwards):
        np.testing.assert_allclose(srcgrad.grad(fn, backend=backend)(V), numeric_gradient(fn, (V,), 0), rtol=1e-6)


# ---------------------------------------------------------------------- in loops (tapes)
def joined_in_a_for(x):
    s = 0.0
    y = x
    for i in range(3):
        t = np.concatenate([y * float(i), x])
        a, b = np.split(t, 2)
        y = np.roll(a, 1) * b + np.tanh(np.diag(np.outer(a, b)))
        s += np.sum(np.tanh(t)) + np.trace(np.tril(np.outer(y, x)))
    return s


def built_in_a_while(x, n):
    s = 0.0
    k = 0
    while k < n:
        s += np.sum(np.linspace(s, x[0], 4) * np.repeat(x[:2], 2)) + np.sum(np.kron(x, x)[::3] * np.tile(x, 2)[1:4])
        k += 1
    return s


@pytest.mark.parametrize("fn,args", [(joined_in_a_for, (W,)), (built_in_a_while, (W, 3))])
@pytest.mark.parametrize("backend", BACKENDS)
def test_in_loops(fn, args, backend):
    assert srcgrad.jit(fn, backend=backend)(*args) == pytest.approx(fn(*args), rel=1e-12)
    expected = numeric_gradient(fn, args, 0)
    np.testing.assert_allclose(srcgrad.grad(fn, wrt=0, backend=backend)(*args), expected, rtol=1e-6, atol=1e-8)
    t = np.array([0.2, 0.5, -0.3])
    _, dot = srcgrad.jvp(fn, args, (t,) + (0,) * (len(args) - 1), backend=backend)
    assert dot == pytest.approx(float(np.dot(expected, t)), rel=1e-6)


def linspace_of(a, b, n): return np.linspace(a, b, n)
def linspace_open(a, b, n): return np.linspace(a, b, n, endpoint=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_linspace_bits_as_numpy(backend):
    """numpy's formula, to the bit: i·step + start (i / div · delta where step is 0), stop last."""
    rng = np.random.default_rng(3)
    for fn in (linspace_of, linspace_open):
        compiled = srcgrad.jit(fn, backend=backend)
        for _ in range(40):
            a, b = (rng.normal() * 10.0 ** rng.integers(-5, 5) for _ in range(2))
            n = int(rng.integers(0, 60))
            np.testing.assert_array_equal(compiled(a, b, n), fn(a, b, n))


# ---------------------------------------------------------------------- random shapes
def r_cat0(a, b, c, k): return np.concatenate([a, b, a], axis=0)
def r_cat1(a, b, c, k): return np.concatenate([a, c], axis=1)
def r_stack(a, b, c, k): return np.stack([a, b], axis=2)
def r_rolls(a, b, c, k): return np.roll(a, k) + np.roll(a, k, axis=0) * 2.0 + np.roll(a, -k, axis=1) * 3.0
def r_tiles(a, b, c, k): return np.tile(a, (2, 1, abs(k)))
def r_repeats(a, b, c, k): return np.repeat(a, abs(k), axis=1)
def r_flat_repeats(a, b, c, k): return np.repeat(a, abs(k))
def r_counts(a, b, c, k): return np.repeat(a, np.arange(a.shape[1]), axis=1)
def r_flat_counts(a, b, c, k): return np.repeat(a, np.arange(k, k + 1))
def r_kron(a, b, c, k): return np.kron(a, b)
def r_diagonals(a, b, c, k): return np.diagonal(a, k)
def r_masks(a, b, c, k): return np.eye(a.shape[0], a.shape[1], k) + np.tri(a.shape[0], a.shape[1], k) * np.tril(a, k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_shapes_as_numpy(backend):
    """Values (exactly) and errors as numpy's for shapes with zero, one and more elements per
    axis, offsets and shifts beyond the sizes."""
    rng = np.random.default_rng(5)
    fns = (r_cat0, r_cat1, r_stack, r_rolls, r_tiles, r_repeats, r_flat_repeats, r_counts, r_flat_counts, r_kron,
           r_diagonals, r_masks)
    compiled = {fn: srcgrad.jit(fn, backend=backend) for fn in fns}
    for _ in range(12):
        n, m, p = (int(rng.integers(0, 4)) for _ in range(3))
        args = (rng.normal(size=(n, m)), rng.normal(size=(p, m)), rng.normal(size=(n, p)), int(rng.integers(-6, 6)))
        for fn in fns:
            try:
                want = fn(*args)
            except ValueError as e:
                with pytest.raises(ValueError, match=re.escape(str(e))):
                    compiled[fn](*args)
                continue
            got = compiled[fn](*args)
            assert np.shape(got) == np.shape(want), fn.__name__
            np.testing.assert_array_equal(got, want, err_msg=fn.__name__)
