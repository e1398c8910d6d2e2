"""Forward-mode AD (issue 16, point 4): srcgrad.autograd.forward_ad against
torch.autograd.forward_ad 2.13 — tangents of many ops, in-place writes, modules, custom
Functions with jvp, forward over reverse, and the errors."""
import numpy as np
import pytest

import srcgrad as st

torch = pytest.importorskip("torch")


def tangents(lib):
    fwAD = lib.autograd.forward_ad
    F = lib.nn.functional
    p = lib.tensor([0.3, -1.2, 0.8], dtype=lib.float64)
    t = lib.tensor([1.0, 0.5, -2.0], dtype=lib.float64)
    W = lib.tensor(np.arange(6.0).reshape(2, 3) / 7)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, t)
        outs = {
            "mul": x * x, "add": x + 2, "div": 1 / (x + 3), "pow": x ** 3, "sin": x.sin(), "exp": lib.exp(x),
            "tanh": lib.tanh(x), "relu": F.relu(x), "sum": x.sum(), "mean": x.mean(), "matmul": W @ x,
            "linear": F.linear(x, W), "softmax": F.softmax(x, 0), "view": x.view(3, 1), "T": x.view(3, 1).T,
            "getitem": x[1:], "cat": lib.cat([x, x * 2]), "max": x.max(), "norm": x.norm(), "sigmoid": x.sigmoid(),
            "log_softmax": F.log_softmax(x, dim=0), "gelu": F.gelu(x), "std": x.std(), "where": lib.where(x > 0, x, -x),
            "conv1d": F.conv1d(x.view(1, 1, 3), W[:1, :2].reshape(1, 1, 2)),
            "layer_norm": F.layer_norm(x, (3,)), "maximum": lib.maximum(x, x.flip(0)),
        }
        y = lib.zeros(3, dtype=lib.float64)
        y.add_(x)
        outs["add_"] = y
        z = lib.zeros(3, dtype=lib.float64)
        z[1] = x[0]
        outs["setitem"] = z
        with lib.no_grad():
            outs["no_grad"] = x.cos()
        got = {k: fwAD.unpack_dual(v).tangent.detach().numpy() for k, v in outs.items()}
        got["primal"] = fwAD.unpack_dual(x).primal.numpy()
        assert fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(x * 0 + W.sum()).tangent is not None
    assert fwAD.unpack_dual(x).tangent is None          # the level is over
    return got


def test_tangents_of_ops_match_torch():
    ours, theirs = tangents(st), tangents(torch)
    assert ours.keys() == theirs.keys()
    for k in ours:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-12, atol=1e-14, err_msg=k)


def forward_over_reverse(lib):
    fwAD = lib.autograd.forward_ad
    p = lib.tensor([0.3, -1.2, 0.8], dtype=lib.float64, requires_grad=True)
    W = lib.tensor(np.arange(6.0).reshape(2, 3) / 7, requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, lib.tensor([1.0, 0.5, -2.0], dtype=lib.float64))
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(W)
            lin.bias.fill_(0.25)
        y = (lib.tanh(W @ x) ** 2).sum() + lin(x).pow(2).sum()
        primal, tangent = fwAD.unpack_dual(y)
        tangent.backward()          # a Hessian-vector product, by forward over reverse
        return primal.item(), tangent.item(), p.grad.numpy().copy(), W.grad.numpy().copy(), \
            lin.weight.grad.numpy().copy(), x.grad_fn.name(), x.requires_grad


def test_forward_over_reverse_and_modules_match_torch():
    ours, theirs = forward_over_reverse(st), forward_over_reverse(torch)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray) or isinstance(a, float):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            assert a == b


def custom_jvp(lib):
    fwAD = lib.autograd.forward_ad

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    primal = lib.tensor([[0.1, 0.2], [0.3, -0.4]], dtype=lib.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(primal, lib.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=lib.float64))
        return fwAD.unpack_dual(Fn.apply(d)).tangent.detach().numpy()


def test_custom_function_jvp_and_errors_match_torch():
    np.testing.assert_allclose(custom_jvp(st), custom_jvp(torch), rtol=1e-14)
    messages = []
    for lib in (st, torch):
        fwAD = lib.autograd.forward_ad
        got = []
        for action in (lambda: fwAD.make_dual(lib.ones(2), lib.ones(2)),):
            with pytest.raises(RuntimeError) as e:
                action()
            got.append(str(e.value))
        with fwAD.dual_level():
            for action, exc in ((lambda: fwAD.make_dual(lib.ones(3), lib.ones(2)), RuntimeError),
                                (lambda: fwAD.make_dual(lib.arange(3), lib.ones(3)), ValueError),
                                (lambda: fwAD.enter_dual_level(), RuntimeError)):
                with pytest.raises(exc) as e:
                    action()
                got.append(str(e.value))
        messages.append(got)
    assert messages[0] == messages[1]


def test_outside_a_level_ops_are_the_plain_ones():
    before = st.Tensor.__mul__
    with st.autograd.forward_ad.dual_level():
        assert st.Tensor.__mul__ is not before
    assert st.Tensor.__mul__ is before and st.sin.__module__ == "srcgrad.eager.ops.pointwise"


def twice(lib):
    fwAD = lib.autograd.forward_ad
    p = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, lib.tensor([1.0, 2.0], dtype=lib.float64))
        y = x * x                      # the same dual tensor twice, its primal requiring grad
        z = lib.cat([x, x]).sum() + lib.maximum(x, x).sum()
        return fwAD.unpack_dual(y).tangent.detach().numpy(), fwAD.unpack_dual(z).tangent.item()


def test_a_dual_tensor_used_twice_counts_once_per_use():
    (a, b), (c, d) = twice(st), twice(torch)
    np.testing.assert_allclose(a, c, rtol=1e-14)
    assert b == pytest.approx(d, rel=1e-14)
