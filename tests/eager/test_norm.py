"""batch_norm, layer_norm, group_norm, instance_norm, embedding and gelu (srcgrad/eager/ops/norm.py)
against PyTorch: values, gradients, grad_fn names, running statistics, error messages, and
second derivatives (gradgradcheck, and PyTorch's numbers)."""
import math

import numpy as np
import pytest

import srcgrad
from srcgrad.eager.ops import norm as N
from tests.oracles import assert_matches_reference

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _fn(T):
    """The functional module of the library ``T``."""
    return N if T is srcgrad else TF


def _rng():
    return np.random.default_rng(0)


def _idx():
    return np.array([[1, 2, 2], [4, 0, 2]])


# name -> (f(T, F, *tensors), shapes of the differentiable inputs); running stats made inside
CASES = {
    "batch_norm_train_3d": (lambda T, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                            [(3, 2, 3), (2,), (2,)]),
    "batch_norm_train_2d": (lambda T, F, x, w, b: F.batch_norm(x, None, None, w, b, True), [(4, 3), (3,), (3,)]),
    "batch_norm_train_4d": (lambda T, F, x: F.batch_norm(x, None, None, training=True), [(2, 2, 2, 3)]),
    "batch_norm_eval": (lambda T, F, x, w, b: F.batch_norm(x, T.linspace(-0.5, 0.5, 2, dtype=x.dtype),
                                                            T.linspace(0.5, 2, 2, dtype=x.dtype), w, b),
                        [(3, 2, 2), (2,), (2,)]),
    "layer_norm": (lambda T, F, x, w, b: F.layer_norm(x, (4,), w, b), [(2, 2, 4), (4,), (4,)]),
    "layer_norm_2dims": (lambda T, F, x, w: F.layer_norm(x, [2, 3], w), [(2, 2, 3), (2, 3)]),
    "layer_norm_all_dims": (lambda T, F, x: F.layer_norm(x, (2, 6)), [(2, 6)]),
    "group_norm": (lambda T, F, x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 2), (4,), (4,)]),
    "instance_norm": (lambda T, F, x, w, b: F.instance_norm(x, None, None, w, b), [(2, 2, 3), (2,), (2,)]),
    "gelu": (lambda T, F, x: F.gelu(x * 3), [(3, 4)]),
    "gelu_tanh": (lambda T, F, x: F.gelu(x * 3, approximate="tanh"), [(3, 4)]),
    "embedding": (lambda T, F, w: F.embedding(T.tensor(_idx()), w), [(5, 3)]),
    "embedding_padding_freq": (lambda T, F, w: F.embedding(T.tensor(_idx()), w, padding_idx=-3,
                                                           scale_grad_by_freq=True), [(5, 3)]),
}


def _run(T, name, dtype, create_graph=False):
    f, shapes = CASES[name]
    rng = _rng()
    xs = [T.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True) for s in shapes]
    out = f(T, _fn(T), *xs)
    g = T.tensor(np.linspace(-1.5, 1.0, out.numel()).reshape(tuple(out.shape)), dtype=dtype)
    return out, T.autograd.grad(out, xs, g, create_graph=create_graph), xs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name, dtype):
    ours, our_grads, _ = _run(srcgrad, name, getattr(srcgrad, dtype))
    theirs, their_grads, _ = _run(torch, name, getattr(torch, dtype))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert str(ours.dtype) == str(theirs.dtype)
    tol = 1e-5 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(our_grads, their_grads):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=10 * tol, atol=10 * tol)


SECOND_ORDER = ["batch_norm_train_3d", "batch_norm_eval", "layer_norm", "group_norm", "instance_norm", "gelu",
                "gelu_tanh"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_matches_pytorch(name):
    results = []
    for T in (srcgrad, torch):
        _, grads, xs = _run(T, name, T.float64, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        # a bias's gradient does not depend on the inputs: unused (None), or zeros
        results.append([0.0 if h is None else h.detach().numpy()
                        for h in T.autograd.grad(total, xs, allow_unused=True)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", SECOND_ORDER + ["embedding"])
def test_gradgradcheck(name):
    f, shapes = CASES[name]
    rng = _rng()
    xs = tuple(srcgrad.tensor(rng.standard_normal(s), dtype=srcgrad.float64, requires_grad=True) for s in shapes)
    fn = lambda *a: f(srcgrad, N, *a)  # noqa: E731
    assert srcgrad.autograd.gradcheck(fn, xs)
    assert srcgrad.autograd.gradgradcheck(fn, xs)


# ---------------------------------------------------------------------------- running stats


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_updates_running_stats_like_pytorch(dtype):
    x = _rng().standard_normal((6, 3, 4))
    stats = []
    for T in (srcgrad, torch):
        d = getattr(T, dtype)
        rm, rv = T.tensor([0.5, -1.0, 2.0], dtype=d), T.tensor([1.0, 2.0, 0.5], dtype=d)
        F = _fn(T)
        for momentum in (0.1, 0.3):
            F.batch_norm(T.tensor(x, dtype=d), rm, rv, training=True, momentum=momentum)
        out = F.batch_norm(T.tensor(x, dtype=d), rm, rv, training=False)   # eval: normalised by them
        stats.append((rm.numpy(), rv.numpy(), out.numpy(), rm._version))
    (rm, rv, out, version), (trm, trv, tout, tversion) = stats
    assert rm.dtype == trm.dtype and out.dtype == tout.dtype
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(rm, trm, rtol=tol, atol=tol)
    np.testing.assert_allclose(rv, trv, rtol=tol, atol=tol)   # unbiased variance, as PyTorch
    np.testing.assert_allclose(out, tout, rtol=10 * tol, atol=10 * tol)
    assert version == tversion


def test_instance_norm_updates_running_stats_like_pytorch():
    x = _rng().standard_normal((2, 3, 4)).astype(np.float32)
    res = []
    for T in (srcgrad, torch):
        rm, rv = T.zeros(3), T.ones(3)
        out = _fn(T).instance_norm(T.tensor(x), rm, rv, momentum=0.2)
        res.append((out.numpy(), rm.numpy(), rv.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_batch_norm_empty_batch_leaves_running_stats():
    rm, rv = srcgrad.zeros(3), srcgrad.ones(3)
    out = N.batch_norm(srcgrad.zeros(0, 3), rm, rv, training=True)
    assert out.shape == (0, 3)
    assert rm.tolist() == [0.0, 0.0, 0.0] and rv.tolist() == [1.0, 1.0, 1.0]


def test_saved_tensors_are_checked_like_pytorch():
    """eval mode saves the running stats, every mode the weight; training mode never reads the
    running stats again (PyTorch lets a second forward update them before the first backward)."""
    for T in (srcgrad, torch):
        F = _fn(T)
        x = T.ones(4, 3, requires_grad=True) * T.arange(4.0).reshape(4, 1)
        rm, rv, w = T.zeros(3), T.ones(3), T.ones(3, requires_grad=True)
        y1 = F.batch_norm(x, rm, rv, w, training=True)
        F.batch_norm(x, rm, rv, w, training=True)
        y1.sum().backward()
        y2 = F.batch_norm(x, rm, rv, training=False)
        rm.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y2.pow(2).sum().backward()
        y3 = F.layer_norm(x, (3,), w)
        with T.no_grad():
            w.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y3.pow(2).sum().backward()


# -------------------------------------------------------------------------------- embedding


def test_embedding_max_norm_renormalises_weight_in_place():
    w0 = _rng().standard_normal((5, 3)) * 3
    res = []
    for T in (srcgrad, torch):
        w = T.tensor(w0, requires_grad=True)
        y = _fn(T).embedding(T.tensor(_idx()), w, max_norm=1.0, norm_type=1.0)
        y.backward(T.ones_like(y))
        res.append((w.detach().numpy(), y.detach().numpy(), w.grad.numpy(), w._version))
    (w, y, g, v), (tw, ty, tg, tv) = res
    np.testing.assert_allclose(w, tw, rtol=1e-12)
    np.testing.assert_allclose(y, ty, rtol=1e-12)
    np.testing.assert_allclose(g, tg)
    assert v == tv == 1


def test_embedding_gradient_under_create_graph_matches_pytorch():
    """padding_idx and scale_grad_by_freq are not derivatives (gradcheck cannot check them):
    the recorded gradient, and its gradient with respect to the incoming one, against PyTorch's."""
    res = []
    for T in (srcgrad, torch):
        _, (gw,), _ = _run(T, "embedding_padding_freq", T.float64, create_graph=False)
        w = T.ones(5, 3, dtype=T.float64, requires_grad=True)
        y = _fn(T).embedding(T.tensor(_idx()), w, padding_idx=2, scale_grad_by_freq=True)
        g = T.linspace(-1, 1, y.numel(), dtype=T.float64).reshape(tuple(y.shape)).requires_grad_()
        (gw2,) = T.autograd.grad(y, w, g, create_graph=True)
        (gg,) = T.autograd.grad((gw2 * gw2).sum(), g)
        res.append((gw.numpy(), gw2.detach().numpy(), gg.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_embedding_shapes():
    w = srcgrad.randn(5, 3, requires_grad=True)
    assert N.embedding(srcgrad.tensor(2), w).shape == (3,)
    assert N.embedding(srcgrad.zeros(2, 0, dtype=srcgrad.int64), w).shape == (2, 0, 3)
    assert N.embedding(srcgrad.tensor([1, 4], dtype=srcgrad.int32), w).dtype is srcgrad.float32
    y = N.embedding(srcgrad.tensor([[0, 0], [0, 3]]), w)
    y.sum().backward()
    assert w.grad.tolist()[0] == [3.0, 3.0, 3.0] and w.grad.tolist()[3] == [1.0, 1.0, 1.0]


def test_embedding_sparse_is_refused():
    with pytest.raises(NotImplementedError, match="sparse=True"):
        N.embedding(srcgrad.tensor([1]), srcgrad.randn(5, 3), sparse=True)


# ------------------------------------------------------------------------------------- gelu


def test_erf_is_accurate():
    xs = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-30, 1, 200)])
    xs = xs[xs != 0]
    ref = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(N._erf(xs), ref, rtol=2e-14, atol=0)
    r32 = N._erf(xs.astype(np.float32))
    assert r32.dtype == np.float32
    np.testing.assert_allclose(r32, [math.erf(v) for v in xs.astype(np.float32).tolist()], rtol=5e-7, atol=0)
    special = N._erf(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0]))
    assert special[:2].tolist() == [1.0, -1.0] and np.isnan(special[2]) and np.signbit(special[4])


def gelu_by_formula(v, approximate):
    """gelu in float64 by its definition (the right value where PyTorch's kernels differ)."""
    x = np.asarray(v, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if approximate == "tanh":
            return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def test_gelu_extremes_match_pytorch():
    """At inf PyTorch's float32 gelu is inf on some CPUs and nan on others (issue 27): srcgrad
    gives the formula's value, and either is accepted there (tests/oracles.py)."""
    v = [-1e4, -40.0, -8.0, -1e-3, 0.0, 1e-3, 8.0, 40.0, 1e4, float("inf"), float("-inf")]
    for approximate in ("none", "tanh"):
        right = gelu_by_formula(v, approximate)
        for dt in ("float32", "float64"):
            a = N.gelu(srcgrad.tensor(v, dtype=getattr(srcgrad, dt)), approximate)
            b = TF.gelu(torch.tensor(v, dtype=getattr(torch, dt)), approximate=approximate)
            assert_matches_reference(a.numpy(), b.numpy(), right, rtol=1e-6, atol=0)
            np.testing.assert_array_equal(a.numpy()[-2:], right[-2:].astype(dt))     # inf, and nan at -inf


def test_gelu_of_a_scalar():
    for approximate in ("none", "tanh"):
        ours, theirs = srcgrad.tensor(-0.7, requires_grad=True), torch.tensor(-0.7, requires_grad=True)
        N.gelu(ours, approximate).backward()
        TF.gelu(theirs, approximate=approximate).backward()
        # gelu'(-0.7) = cdf + x pdf cancels terms of 0.24 down to 0.024: float32 rounding of the
        # terms is ~1e-6 of the result, and PyTorch's scalar and vector kernels differ by that
        assert ours.grad.item() == pytest.approx(theirs.grad.item(), rel=1e-5)


def test_layer_norm_takes_a_size():
    x = srcgrad.randn(2, 3)
    assert N.layer_norm(x, x.shape[1:]).shape == (2, 3)


def test_double_backward_is_recorded():
    x = srcgrad.randn(4, 3, dtype=srcgrad.float64, requires_grad=True)
    for f in (lambda x: N.batch_norm(x, None, None, training=True), lambda x: N.layer_norm(x, (3,)), N.gelu):
        (g,) = srcgrad.autograd.grad(f(x).pow(3).sum(), x, create_graph=True)
        assert g.grad_fn is not None


# --------------------------------------------------------------------------- error messages

ERRORS = {
    "bn_one_value": lambda T, F: F.batch_norm(T.ones(1, 3), T.zeros(3), T.ones(3), training=True),
    "bn_one_value_3d": lambda T, F: F.batch_norm(T.ones(1, 3, 1), None, None, training=True),
    "bn_running_mean_size": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(4), T.ones(3), training=True),
    "bn_running_var_size": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(3), T.ones(4)),
    "bn_weight_size": lambda T, F: F.batch_norm(T.ones(4, 3), None, None, T.ones(4), training=True),
    "bn_bias_size": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(3), T.ones(3), None, T.ones(2)),
    "bn_eval_no_stats": lambda T, F: F.batch_norm(T.ones(4, 3), None, None),
    "bn_one_stat": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(3), None, training=True),
    "bn_eps": lambda T, F: F.batch_norm(T.ones(4, 3), None, None, training=True, eps=0.0),
    "bn_long": lambda T, F: F.batch_norm(T.ones(4, 3, dtype=T.int64), None, None, training=True),
    "bn_mixed_float": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(3, dtype=T.float64), T.ones(3)),
    "bn_mixed_double": lambda T, F: F.batch_norm(T.ones(4, 3, dtype=T.float64), None, None, T.ones(3),
                                                 training=True),
    "bn_stats_require_grad": lambda T, F: F.batch_norm(T.ones(4, 3), T.zeros(3, requires_grad=True), T.ones(3),
                                                       training=True),
    "ln_input_shape": lambda T, F: F.layer_norm(T.ones(4, 3), (4,)),
    "ln_input_shape_2": lambda T, F: F.layer_norm(T.ones(4, 3), [2, 3]),
    "ln_weight_shape": lambda T, F: F.layer_norm(T.ones(4, 3), [3], T.ones(4)),
    "ln_bias_shape": lambda T, F: F.layer_norm(T.ones(4, 3), [3], None, T.ones(3, 1)),
    "ln_empty_shape": lambda T, F: F.layer_norm(T.ones(4, 3), ()),
    "ln_int_shape": lambda T, F: F.layer_norm(T.ones(4, 3), 3),
    "ln_long": lambda T, F: F.layer_norm(T.ones(4, 3, dtype=T.int64), [3]),
    "ln_mixed": lambda T, F: F.layer_norm(T.ones(4, 3), [3], T.ones(3, dtype=T.float64)),
    "gn_groups": lambda T, F: F.group_norm(T.ones(4, 3, 2), 2),
    "gn_weight": lambda T, F: F.group_norm(T.ones(4, 4, 2), 2, T.ones(3)),
    "gn_1d": lambda T, F: F.group_norm(T.ones(4), 2),
    "gn_one_value": lambda T, F: F.group_norm(T.ones(1, 4), 4),
    "in_one_spatial": lambda T, F: F.instance_norm(T.ones(2, 3, 1)),
    "in_no_stats": lambda T, F: F.instance_norm(T.ones(2, 3, 2), use_input_stats=False),
    "in_weight_size": lambda T, F: F.instance_norm(T.ones(2, 3, 2), None, None, T.ones(4)),
    "in_running_mean_size": lambda T, F: F.instance_norm(T.ones(2, 3, 2), T.zeros(4), T.ones(3)),
    "emb_out_of_range": lambda T, F: F.embedding(T.tensor([5]), T.ones(5, 3)),
    "emb_negative": lambda T, F: F.embedding(T.tensor([[0, -1]]), T.ones(5, 3)),
    "emb_float_index": lambda T, F: F.embedding(T.tensor([1.0]), T.ones(5, 3)),
    "emb_weight_1d": lambda T, F: F.embedding(T.tensor([1]), T.ones(5)),
    "emb_padding": lambda T, F: F.embedding(T.tensor([1]), T.ones(5, 3), padding_idx=5),
    "emb_padding_negative": lambda T, F: F.embedding(T.tensor([1]), T.ones(5, 3), padding_idx=-6),
    "gelu_approximate": lambda T, F: F.gelu(T.ones(2), approximate="fast"),
    "gelu_long": lambda T, F: F.gelu(T.ones(2, dtype=T.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_messages_match_pytorch(name):
    raised = []
    for T in (torch, srcgrad):
        with pytest.raises(Exception) as info:
            ERRORS[name](T, _fn(T))
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[1] == raised[0]
