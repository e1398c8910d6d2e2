"""The passes about in-place writes in derivative code (srcgrad/ir/write_passes.py, issue 29
point 4): the adjoint of ``du[1:] = v`` loses its copy and its zeroing where ``du``'s adjoint is
then read only at elements the write left alone, and a copy whose source nobody touches again
becomes its source; where a later op may read what the zeroing wrote (a run-time index, the
whole array, a later iteration, the caller's memory) everything stays. Gradients are checked
against PyTorch's autograd (an independent tool) and central differences, on both backends."""
import numpy as np
import pytest
import torch

import srcgrad
from srcgrad.ir.memory import Buffers

BACKENDS = ("python", "llvm")


def rhs(u, k):
    du = np.zeros_like(u)
    du[0] = -k[0] * u[0]
    du[1:] = k[:-1] * u[:-1] - k[1:] * u[1:]
    return du


def step(u, k):
    a = rhs(u, k)
    b = rhs(u + 0.05 * a, k)
    return np.sum(b * b)


def integrate(u, k):
    for _ in range(3):
        u = u + 0.05 * rhs(u, k)
    return np.sum(u * u)


def last_left_alone(u, k):
    du = np.zeros_like(u)
    du[:-1] = k[:-1] * u[:-1]
    du[-1] = u[-1] * u[0]
    return np.sum(du * du) + du[-1]


def read_at_runtime_index(u, k, i):
    du = np.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    return np.sum(du * du) + 3.0 * du[i]


def read_whole_after(u, k):
    du = np.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    s = np.sum(du * k)
    du[0] = s
    return np.sum(du * du)


def sides_differ(u, k):
    du = np.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    return np.sum(du * du) + 2.0 * du[-1]       # -1 is inside [1:]: the zeroing stays


def copy_of_argument(u, k):
    v = u.copy()
    v[0] = k[0] * u[1]
    return np.sum(v * u)


def _t_rhs(u, k):
    du = torch.zeros_like(u)
    du[0] = -k[0] * u[0]
    du[1:] = k[:-1] * u[:-1] - k[1:] * u[1:]
    return du


def _t_step(u, k):
    b = _t_rhs(u + 0.05 * _t_rhs(u, k), k)
    return torch.sum(b * b)


def _t_integrate(u, k):
    for _ in range(3):
        u = u + 0.05 * _t_rhs(u, k)
    return torch.sum(u * u)


def _t_last(u, k):
    du = torch.zeros_like(u)
    du[:-1] = k[:-1] * u[:-1]
    du[-1] = u[-1] * u[0]
    return torch.sum(du * du) + du[-1]


def _t_runtime(u, k, i):
    du = torch.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    return torch.sum(du * du) + 3.0 * du[i]


def _t_whole(u, k):
    du = torch.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    s = torch.sum(du * k)
    du = du.clone()
    du[0] = s
    return torch.sum(du * du)


def _t_sides(u, k):
    du = torch.zeros_like(u)
    du[1:] = k[1:] * u[1:]
    return torch.sum(du * du) + 2.0 * du[-1]


def _t_copy(u, k):
    v = u.clone()
    v[0] = k[0] * u[1]
    return torch.sum(v * u)


CASES = [(step, _t_step, ()), (integrate, _t_integrate, ()), (last_left_alone, _t_last, ()),
         (read_at_runtime_index, _t_runtime, (2,)), (read_whole_after, _t_whole, ()), (sides_differ, _t_sides, ()),
         (copy_of_argument, _t_copy, ())]


def _inputs(n=6):
    rng = np.random.default_rng(3)
    return rng.standard_normal(n), 0.5 + rng.random(n)


def _central(f, args, j, h=1e-6):
    out = []
    for k in (0, 1):
        g = np.zeros_like(args[k])
        for e in range(args[k].size):
            moved = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            moved[k][e] += h
            up = f(*moved)
            moved[k][e] -= 2 * h
            g[e] = (up - f(*moved)) / (2 * h)
        out.append(g)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, tf, extra", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_gradients_match_autograd_and_differences(f, tf, extra, backend):
    u, k = _inputs()
    ours = srcgrad.grad(f, wrt=(0, 1), backend=backend)(u, k, *extra)
    tu, tk = (torch.tensor(a, requires_grad=True) for a in (u, k))
    theirs = torch.autograd.grad(tf(tu, tk, *extra), [tu, tk])
    for a, b, c in zip(ours, theirs, _central(f, (u, k) + extra, 0)):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-8)


def _adjoint(f, *extra):
    df = srcgrad.grad(f, wrt=(0, 1), backend="python")
    df(*_inputs(), *extra)
    return df.adjoint_source


def test_the_zeroing_and_its_copies_go_where_only_untouched_elements_are_read():
    for f in (step, integrate):
        src = _adjoint(f)
        assert ".copy()" not in src and "[1:] = 0.0" not in src and "[:-1] = 0.0" not in src, src
    src = _adjoint(last_left_alone)
    # the one zero left: dk[-1:], where the accumulation into dk leaves it (not the adjoint's
    # clearing of g[-1:] before g[:-1] is read)
    assert ".copy()" not in src and src.count("[-1:] = 0.0") == 1, src


def test_zeros_go_where_the_first_write_covers_them():
    """``du = np.zeros_like(u); du[0] = a; du[1:] = b`` fills nothing with zeros; the adjoint's
    ``g = zeros; g[1:] += v`` writes ``v`` and one zero."""
    src = _adjoint(step)
    assert "np.zeros" not in src, src
    assert "[:1] = 0.0" in src, src


def test_the_zeroing_stays_where_a_later_read_may_see_it():
    assert "] = 0.0" in _adjoint(read_at_runtime_index, 2)      # du[i]: i known only at run time
    assert "] = 0.0" in _adjoint(sides_differ)                   # du[-1] after du[1:] = v


def test_a_copy_of_the_callers_array_stays():
    src = _adjoint(copy_of_argument)
    assert ".copy()" in src, src


def test_read_later_counts_only_reads_after_the_write():
    from srcgrad.frontend.lower import lower
    from srcgrad.ir.types import ArrayType, F64

    def f(x):
        y = x * 2.0
        s = np.sum(y)
        y[1:] = 0.0
        t = y[0]
        return s + t
    fn = lower(f, [ArrayType(F64, 1)])
    write = next(op for op in fn.body.ops if op.prim == "setslice")
    buffers = Buffers(fn)
    assert buffers.observable(write)            # np.sum(y) read it, before the write
    assert not buffers.read_later(write)        # y[0] is outside [1:]
