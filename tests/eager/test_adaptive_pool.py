"""Adaptive average and max pooling (srcgrad/eager/ops/pooling.py, nn/pooling.py) against PyTorch:
values, gradients, grad_fn names, indices (ties, NaN, -inf), dtypes, error messages, second
derivatives and the modules' reprs."""
import numpy as np
import pytest

import srcgrad
import srcgrad.nn.functional as SF

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """torch's thread pool on these tiny problems only contends with other work; one thread
    keeps the reference quick."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)

CASES = [  # (input shape, output_size): regular windows, irregular ones, upsampling, None, unbatched
    ((2, 3, 8, 6), (4, 3)),
    ((2, 3, 7, 5), (3, 2)),
    ((1, 2, 13, 11), (5, 4)),
    ((2, 2, 7, 5), (None, 2)),
    ((3, 7, 5), (10, 3)),
    ((3, 7, 5), 4),
    ((2, 3, 7, 5), (7, 5)),
    ((2, 3, 7, 5), 1),
    ((2, 3, 7, 5), (1, 3)),
    ((0, 2, 4, 4), (2, 3)),
]
CASES_1D = [((2, 3, 12), 4), ((2, 3, 7), 3), ((3, 7), (10,)), ((2, 3, 7), 1)]


def _compare(name, shape, *args, dtype="float64", tol=1e-12, **kw):
    """Both libraries on the same input: values, grad_fn names, indices and input gradients."""
    x = np.random.default_rng(0).standard_normal(shape)
    a = srcgrad.tensor(x, dtype=getattr(srcgrad, dtype), requires_grad=True)
    b = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ours, theirs = getattr(SF, name)(a, *args, **kw), getattr(F, name)(b, *args, **kw)
    if isinstance(theirs, tuple):
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
        assert str(ours[1].dtype) == "torch.int64"
        ours, theirs = ours[0], theirs[0]
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    if theirs.numel():          # (PyTorch's backward refuses an empty output)
        g = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
        ga, = srcgrad.autograd.grad(ours, [a], srcgrad.tensor(g, dtype=ours.dtype))
        gb, = torch.autograd.grad(theirs, [b], torch.tensor(g, dtype=theirs.dtype))
        assert str(ga.dtype) == str(gb.dtype)
        np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,size", CASES, ids=str)
@pytest.mark.parametrize("name", ["adaptive_avg_pool2d", "adaptive_max_pool2d"])
def test_adaptive_pool2d_matches_pytorch(name, shape, size):
    _compare(name, shape, size)


@pytest.mark.parametrize("shape,size", CASES_1D, ids=str)
@pytest.mark.parametrize("name", ["adaptive_avg_pool1d", "adaptive_max_pool1d"])
def test_adaptive_pool1d_matches_pytorch(name, shape, size):
    _compare(name, shape, size)


def test_indices_float32_and_no_grad():
    for name, shape, size in (("adaptive_max_pool2d", (2, 3, 7, 5), (3, 2)), ("adaptive_max_pool2d", (3, 9, 4), 5),
                              ("adaptive_max_pool1d", (2, 3, 7), 3), ("adaptive_max_pool1d", (3, 8), 4)):
        _compare(name, shape, size, return_indices=True)
    _compare("adaptive_avg_pool2d", (2, 3, 7, 5), (3, 2), dtype="float32", tol=1e-6)
    _compare("adaptive_max_pool2d", (2, 3, 7, 5), (3, 2), dtype="float32", tol=0)
    with srcgrad.no_grad():
        x = srcgrad.randn(1, 2, 5, 5, requires_grad=True)
        assert SF.adaptive_avg_pool2d(x, 3).grad_fn is None and SF.adaptive_max_pool2d(x, 3).grad_fn is None


def test_max_ties_nan_and_infinity_like_pytorch():
    nan, inf = float("nan"), float("inf")
    cases = [np.array([[[[1.0, nan], [2.0, nan]]]]), np.full((1, 1, 3, 3), -inf), np.ones((1, 1, 3, 4)),
             np.array([[[[1.0, nan, 3.0], [nan, 2.0, 5.0], [0.0, 1.0, nan]]]]),
             np.array([[[[1.0, 5.0, 5.0], [5.0, 2.0, 5.0], [5.0, 1.0, 0.0]]]])]
    for a in cases:
        for size in (1, 2, (2, 3)):
            out, ind = SF.adaptive_max_pool2d(srcgrad.tensor(a), size, return_indices=True)
            tout, tind = F.adaptive_max_pool2d(torch.tensor(a), size, return_indices=True)
            np.testing.assert_array_equal(out.numpy(), tout.numpy())
            np.testing.assert_array_equal(ind.numpy(), tind.numpy())
            x, t = srcgrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            SF.adaptive_max_pool2d(x, size).sum().backward()
            F.adaptive_max_pool2d(t, size).sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_saved_values_match_pytorch():
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 5))
    ours = SF.adaptive_max_pool2d(srcgrad.tensor(x, requires_grad=True), (3, 2))
    theirs = F.adaptive_max_pool2d(torch.tensor(x, requires_grad=True), (3, 2))
    np.testing.assert_array_equal(ours.grad_fn._saved_result1.numpy(), theirs.grad_fn._saved_result1.numpy())
    np.testing.assert_array_equal(ours.grad_fn._saved_self.detach().numpy(), x)
    avg = SF.adaptive_avg_pool2d(srcgrad.tensor(x, requires_grad=True), (3, 2))
    np.testing.assert_array_equal(avg.grad_fn._saved_self.detach().numpy(), x)


def _x(T, *shape):
    return T.ones(*shape)


ERRORS = {
    "avg output_size length": lambda T, f: f.adaptive_avg_pool2d(_x(T, 2, 3, 5, 5), (1, 2, 3)),
    "max output_size length": lambda T, f: f.adaptive_max_pool2d(_x(T, 2, 3, 5, 5), [3]),
    "avg 2-D input": lambda T, f: f.adaptive_avg_pool2d(_x(T, 5, 5), 2),
    "max 5-D input": lambda T, f: f.adaptive_max_pool2d(_x(T, 1, 2, 3, 5, 5), 2),
    "avg pair on 2-D input": lambda T, f: f.adaptive_avg_pool2d(_x(T, 5, 5), (1, 2)),
    "avg negative": lambda T, f: f.adaptive_avg_pool2d(_x(T, 2, 3, 5, 5), (1, -1)),
    "max negative": lambda T, f: f.adaptive_max_pool2d(_x(T, 2, 3, 5, 5), -1),
    "avg empty input": lambda T, f: f.adaptive_avg_pool2d(_x(T, 2, 3, 0, 3), 2),
    "max empty unbatched input": lambda T, f: f.adaptive_max_pool2d(_x(T, 3, 0, 3), 2),
    "avg integer input": lambda T, f: f.adaptive_avg_pool2d(T.ones(1, 4, 4, dtype=T.int64), 2),
    "max integer input": lambda T, f: f.adaptive_max_pool2d(T.ones(1, 4, 4, dtype=T.int32), 2),
    "avg float size": lambda T, f: f.adaptive_avg_pool2d(_x(T, 2, 3, 5, 5), (2.5, 3)),
    "avg1d dims": lambda T, f: f.adaptive_avg_pool1d(_x(T, 5), 2),
    "max1d dims": lambda T, f: f.adaptive_max_pool1d(_x(T, 1, 2, 3, 5), 2),
    "avg1d two sizes": lambda T, f: f.adaptive_avg_pool1d(_x(T, 2, 3, 5), (2, 3)),
    "max1d None": lambda T, f: f.adaptive_max_pool1d(_x(T, 2, 3, 5), None),
    "avg1d negative": lambda T, f: f.adaptive_avg_pool1d(_x(T, 2, 3, 5), -1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_messages_match_pytorch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch, F)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](srcgrad, SF)
    assert str(ours.value) == str(theirs.value)


def test_second_order_matches_pytorch_and_gradgradcheck():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 7, 5))
    for name, size in (("adaptive_avg_pool2d", (3, 2)), ("adaptive_max_pool2d", (3, 2)),
                       ("adaptive_avg_pool2d", (4, 5)), ("adaptive_max_pool2d", (7, 1))):
        results = []
        for T, f in ((srcgrad, SF), (torch, F)):
            a = T.tensor(x, dtype=T.float64, requires_grad=True)
            out = getattr(f, name)(a, size)
            g = T.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), requires_grad=True)
            gx, = T.autograd.grad(out, [a], g, create_graph=True)
            h = T.tensor(np.cos(np.arange(gx.numel())).reshape(tuple(gx.shape)))
            gg, = T.autograd.grad(gx, [g], h, create_graph=True)
            results.append((type(gx.grad_fn).__name__, type(gg.grad_fn).__name__, gg.detach().numpy()))
        assert results[0][:2] == results[1][:2]
        np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12, atol=1e-12)
        a = srcgrad.tensor(rng.standard_normal((1, 2, 7, 5)), requires_grad=True)
        assert srcgrad.autograd.gradgradcheck(lambda t: getattr(SF, name)(t, size), (a,))


@pytest.mark.parametrize("build,shape", [
    (lambda lib: lib.nn.AdaptiveAvgPool2d((1, 1)), (2, 3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveAvgPool2d(3), (2, 3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveAvgPool2d((None, 2)), (3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveMaxPool2d([2, 3]), (2, 3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveMaxPool2d(2, return_indices=True), (2, 3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveAvgPool1d(4), (2, 3, 7)),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(3, return_indices=True), (3, 7)),
])
def test_modules_against_torch(build, shape):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    ours, theirs = build(srcgrad), build(torch)
    assert repr(ours) == repr(theirs)
    out, tout = ours(srcgrad.tensor(x)), theirs(torch.tensor(x))
    if isinstance(tout, tuple):
        np.testing.assert_array_equal(out[1].numpy(), tout[1].numpy())
        out, tout = out[0], tout[0]
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-6, atol=1e-6)
