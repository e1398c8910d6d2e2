"""Compiled functions called on eager tensors (issue 15, point 1; API.md §2): one node,
CompiledFunctionBackward, whose backward is the compiled vjp, and with create_graph=True
CompiledVjpBackward, whose backward is forward mode over it; checked against PyTorch."""
import numpy as np
import pytest

import srcgrad
import srcgrad as st

from .bridge_functions import branchy, energy, looped, mixed, two_results

torch = pytest.importorskip("torch")


def test_one_node_whose_backward_is_the_compiled_vjp_against_torch():
    f = srcgrad.jit(energy)
    data = np.array([0.1, -0.7, 1.3, 0.4])
    x = st.tensor(data, requires_grad=True)
    y = f(x, 2.5)
    assert type(y.grad_fn).__name__ == "CompiledFunctionBackward"
    (y * y).backward()
    tx = torch.tensor(data, requires_grad=True)
    ty = torch.sum(torch.sin(tx) * 2.5) + torch.sum(tx * tx)
    (ty * ty).backward()
    assert y.item() == pytest.approx(ty.item(), rel=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)


def test_several_results_loops_and_float32():
    data = np.array([0.3, -0.2, 0.9])
    x = st.tensor(data, requires_grad=True)
    a, b = srcgrad.jit(two_results)(x)
    (a.sum() * b).backward()
    tx = torch.tensor(data, requires_grad=True)
    ta, tb = torch.sin(tx) * 2.0, torch.sum(tx * tx)
    (ta.sum() * tb).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)
    x32 = st.tensor(data.astype(np.float32), requires_grad=True)
    s = srcgrad.jit(looped)(x32, 4)
    s.backward()
    assert s.dtype == st.float32 and x32.grad.dtype == st.float32
    t32 = torch.tensor(data.astype(np.float32), requires_grad=True)
    sum(torch.sum(torch.tanh(t32 * i)) for i in range(4)).backward()
    np.testing.assert_allclose(x32.grad.numpy(), t32.grad.numpy(), rtol=1e-5)


def test_gradcheck_passes():
    f = srcgrad.jit(energy)
    x = st.tensor([0.2, -0.4, 0.8], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda t: f(t, 1.5), (x,))


def test_no_node_without_grad_and_clear_errors():
    f = srcgrad.jit(energy)
    x = st.tensor([0.2, -0.4], dtype=st.float64, requires_grad=True)
    with st.no_grad():
        assert f(x, 1.0).grad_fn is None
    assert f(x.detach(), 1.0).grad_fn is None
    # a saved input changed in place before backward: PyTorch's error
    y = f(x, 1.0)
    with st.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"srcgrad.grad\(energy\) was called on tensors that require grad"):
        srcgrad.grad(energy)(x, 1.0)
    g = srcgrad.grad(energy)(x.detach(), 1.0)          # on detached tensors: tensors back
    np.testing.assert_allclose(g.numpy(), np.cos(x.detach().numpy()) + 2 * x.detach().numpy(), rtol=1e-14)


def _torch_mixed(tx, ty, c):
    tc = torch.tensor(c, dtype=tx.dtype)
    z = tx * ty
    z = torch.cat([z[:1] * tc[0], z[1:]])
    return torch.sum(torch.exp(z) * tc) + torch.sum(ty ** 3), torch.tanh(tx) * torch.sum(ty)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_create_graph_gives_second_derivatives_against_torch(dtype):
    rng = np.random.default_rng(1)
    xd, yd, c = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    x, y = (st.tensor(d, dtype=getattr(st, dtype), requires_grad=True) for d in (xd, yd))
    tx, ty = (torch.tensor(d, dtype=getattr(torch, dtype), requires_grad=True) for d in (xd, yd))
    results = []
    for lib, (u, v), run in ((st, (x, y), srcgrad.jit(mixed)), (torch, (tx, ty), _torch_mixed)):
        a, b = run(u, v, c)
        gx, gy = lib.autograd.grad(a + b.sum(), (u, v), create_graph=True)
        # a gradient penalty: needs the Hessian of f times the gradient
        (gx.sum() * gy.sum() + (gx * gx).sum()).backward()
        results.append((gx, gy, u.grad, v.grad))
    assert type(results[0][0].grad_fn).__name__ == "CompiledVjpBackward"
    rtol = 1e-12 if dtype == "float64" else 2e-5
    for ours, theirs in zip(*results):
        assert ours.dtype == getattr(st, dtype)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=rtol)


def test_gradgradcheck_passes():
    c = np.array([0.5, -1.5, 2.0])
    x, y = (st.tensor(d, dtype=st.float64, requires_grad=True) for d in ([0.2, -0.4, 0.8], [0.3, 0.1, -0.6]))
    assert st.autograd.gradgradcheck(lambda t: srcgrad.jit(energy)(t, 1.5), (x,))
    assert st.autograd.gradgradcheck(lambda t: srcgrad.jit(two_results)(t), (x,))
    assert st.autograd.gradgradcheck(lambda t: srcgrad.jit(looped)(t, 3), (x,))
    assert st.autograd.gradgradcheck(lambda s, t: srcgrad.jit(mixed)(s, t, c), (x, y))


def test_scalar_tensors_are_numbers_to_compiled_code():
    f = srcgrad.jit(branchy)            # a condition on scalar tensors
    for a, b in ((0.5, 0.2), (0.1, 0.7)):
        x = st.tensor(a, dtype=st.float64, requires_grad=True)
        y = st.tensor(b, dtype=st.float32, requires_grad=True)
        gx, gy = st.autograd.grad(f(x, y), (x, y), create_graph=True)
        assert gx.dtype == st.float64 and gy.dtype == st.float32 and gx.shape == ()
        (gx * gy).backward()
        tx = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        ty = torch.tensor(b, dtype=torch.float32, requires_grad=True)
        tz = torch.sin(tx) * ty if a > b else tx * ty * ty
        tgx, tgy = torch.autograd.grad(tz, (tx, ty), create_graph=True)
        (tgx * tgy).backward()
        for ours, theirs in ((gx, tgx), (gy, tgy), (x.grad, tx.grad), (y.grad, ty.grad)):
            assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)


def test_third_derivative_and_changed_inputs_are_clear_errors():
    f = srcgrad.jit(energy)
    x = st.tensor([0.2, -0.4], dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(f(x, 1.0), x, create_graph=True)
    (h,) = st.autograd.grad(g.sum(), x, create_graph=True)     # right numbers: cos' is -sin, x*x's 2
    np.testing.assert_allclose(h.detach().numpy(), -np.sin([0.2, -0.4]) + 2.0, rtol=1e-14)
    with pytest.raises(RuntimeError, match=r"a third derivative through a srcgrad.jit function \(energy\)"):
        h.sum().backward()
    (g,) = st.autograd.grad(f(x, 1.0), x, create_graph=True)
    with st.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        g.sum().backward()
