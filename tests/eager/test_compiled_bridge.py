"""Compiled functions called on eager tensors (issue 15, point 1; API.md §2): one node,
CompiledFunctionBackward, whose backward is the compiled vjp; checked against PyTorch."""
import numpy as np
import pytest

import srcgrad
import srcgrad as st

from .bridge_functions import energy, looped, two_results

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
    with pytest.raises(RuntimeError, match="create_graph=True through a srcgrad.jit function"):
        st.autograd.grad(f(x, 1.0), x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"srcgrad.grad\(energy\) was called on tensors that require grad"):
        srcgrad.grad(energy)(x, 1.0)
    g = srcgrad.grad(energy)(x.detach(), 1.0)          # on detached tensors: tensors back
    np.testing.assert_allclose(g.numpy(), np.cos(x.detach().numpy()) + 2 * x.detach().numpy(), rtol=1e-14)
