"""Convolution, transposed convolution, pooling and padding (srcgrad/eager/ops/conv.py, pooling.py,
padding.py) and torch.nn.grad's functions against PyTorch: values, gradients of every input, grad_fn
names, dtypes, error messages, and second derivatives (gradgradcheck)."""
import types
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad.eager.ops import conv as C
from srcgrad.eager.ops import padding as Pad
from srcgrad.eager.ops import pooling as P

torch = pytest.importorskip("torch")
F = torch.nn.functional
# srcgrad's convolution, pooling and padding ops under one name, as torch.nn.functional has them
OPS = types.SimpleNamespace(**{name: getattr(m, name) for m in (C, P, Pad) for name in m.__all__})


def _compare(ours_fn, torch_fn, shapes, dtype="float64", tol=1e-10, seed=0):
    """Run both on the same random inputs; compare results, grad_fn names and all gradients."""
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s) for s in shapes]
    xs = [srcgrad.tensor(v, dtype=getattr(srcgrad, dtype), requires_grad=True) for v in values]
    ts = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True) for v in values]
    a, b = ours_fn(*xs), torch_fn(*ts)
    assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(b.shape))
    ours = srcgrad.autograd.grad(a, xs, srcgrad.tensor(g, dtype=a.dtype))
    theirs = torch.autograd.grad(b, ts, torch.tensor(g, dtype=b.dtype))
    for u, v in zip(ours, theirs):
        assert str(u.dtype) == str(v.dtype)
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=tol, atol=tol)


CONV2D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(2, 0), dilation=(1, 2)),
    dict(padding="same", dilation=2),
    dict(padding="valid"),
    dict(groups=2, padding=1),
    dict(groups=4, stride=2),         # depthwise
]


@pytest.mark.parametrize("kw", CONV2D, ids=str)
def test_conv2d_matches_pytorch(kw):
    cg = 4 // kw.get("groups", 1)
    _compare(lambda x, w, b: C.conv2d(x, w, b, **kw), lambda x, w, b: F.conv2d(x, w, b, **kw),
             [(2, 4, 7, 6), (4, cg, 3, 2), (4,)])


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2), dict(padding="same"),
                                dict(groups=2)], ids=str)
def test_conv1d_matches_pytorch(kw):
    cg = 4 // kw.get("groups", 1)
    _compare(lambda x, w, b: C.conv1d(x, w, b, **kw), lambda x, w, b: F.conv1d(x, w, b, **kw),
             [(2, 4, 9), (6, cg, 3), (6,)])


def test_conv_without_bias_unbatched_and_even_same_padding():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # both warn about the even kernel's asymmetric 'same' padding
        _compare(lambda x, w: C.conv2d(x, w, padding="same"), lambda x, w: F.conv2d(x, w, padding="same"),
                 [(2, 3, 6, 5), (2, 3, 2, 4)])
    _compare(lambda x, w: C.conv2d(x, w, padding=1), lambda x, w: F.conv2d(x, w, padding=1),
             [(3, 5, 6), (2, 3, 3, 3)])      # (C, H, W): SqueezeBackward1 over the convolution
    _compare(lambda x, w, b: C.conv1d(x, w, b), lambda x, w, b: F.conv1d(x, w, b), [(3, 6), (2, 3, 2), (2,)])


def test_conv_same_padding_even_kernel_warns():
    x, w = srcgrad.ones(1, 1, 4, 4), srcgrad.ones(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        C.conv2d(x, w, padding="same")


def test_conv_float32_stays_float32():
    _compare(lambda x, w, b: C.conv2d(x, w, b, padding=1), lambda x, w, b: F.conv2d(x, w, b, padding=1),
             [(2, 3, 6, 6), (5, 3, 3, 3), (5,)], dtype="float32", tol=1e-5)


def test_conv_integer_input():
    x, w = np.arange(2 * 9 * 9).reshape(2, 1, 9, 9) % 7, np.arange(18).reshape(2, 1, 3, 3) - 9
    ours = C.conv2d(srcgrad.tensor(x), srcgrad.tensor(w), stride=2)
    theirs = F.conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.int64"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_conv_no_grad_records_nothing():
    x = srcgrad.ones(1, 1, 4, 4, requires_grad=True)
    with srcgrad.no_grad():
        y = C.conv2d(x, srcgrad.ones(1, 1, 3, 3))
    assert y.grad_fn is None and not y.requires_grad


CONV_TRANSPOSE2D = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(2, 1)),
    dict(output_padding=(2, 0), dilation=(3, 1)),             # output_padding > padding: the last rows read nothing
    dict(stride=2, padding=(0, 1), output_padding=(3, 1), dilation=(4, 1)),
    dict(groups=4, stride=2),
]


@pytest.mark.parametrize("kw", CONV_TRANSPOSE2D, ids=str)
def test_conv_transpose2d_matches_pytorch(kw):
    g = kw.get("groups", 1)
    c_out = 4 if g == 4 else 6
    _compare(lambda x, w, b: C.conv_transpose2d(x, w, b, **kw), lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
             [(2, 4, 5, 6), (4, c_out // g, 3, 2), (c_out,)])


@pytest.mark.parametrize("kw", [dict(), dict(stride=3, padding=2, output_padding=1, dilation=2), dict(groups=2)],
                         ids=str)
def test_conv_transpose1d_matches_pytorch(kw):
    _compare(lambda x, w, b: C.conv_transpose1d(x, w, b, **kw), lambda x, w, b: F.conv_transpose1d(x, w, b, **kw),
             [(2, 4, 7), (4, 3, 3), (3 * kw.get("groups", 1),)])


def test_conv_transpose_unbatched_no_bias_float32_and_integers():
    _compare(lambda x, w: C.conv_transpose2d(x, w, stride=2), lambda x, w: F.conv_transpose2d(x, w, stride=2),
             [(4, 5, 6), (4, 3, 3, 3)])      # (C, H, W): SqueezeBackward1 over the convolution
    _compare(lambda x, w: C.conv_transpose1d(x, w), lambda x, w: F.conv_transpose1d(x, w), [(4, 7), (4, 1, 3)])
    _compare(lambda x, w, b: C.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
             lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
             [(2, 3, 5, 5), (3, 4, 3, 3), (4,)], dtype="float32", tol=1e-5)
    x, w = np.arange(2 * 5 * 5).reshape(1, 2, 5, 5) % 7, np.arange(18).reshape(2, 1, 3, 3) - 9
    ours = C.conv_transpose2d(srcgrad.tensor(x), srcgrad.tensor(w), stride=2)
    theirs = F.conv_transpose2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.int64"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_conv_transpose_is_the_input_gradient_of_conv():
    """conv_transpose2d(g, w) is the gradient of conv2d(x, w) with respect to x; output_padding
    gives the sizes a strided convolution maps onto the same output size."""
    rng = np.random.default_rng(2)
    w = srcgrad.tensor(rng.standard_normal((3, 2, 3, 3)))
    for size, output_padding in ((9, 0), (10, 1)):
        x = srcgrad.tensor(rng.standard_normal((1, 2, size, size)), requires_grad=True)
        y = C.conv2d(x, w, stride=2, padding=1)
        g = srcgrad.tensor(rng.standard_normal(tuple(y.shape)))
        (gx,) = srcgrad.autograd.grad(y, x, g)
        np.testing.assert_allclose(C.conv_transpose2d(g, w, stride=2, padding=1, output_padding=output_padding).numpy(),
                                   gx.numpy(), rtol=1e-12, atol=1e-12)


def test_conv_transpose_saved_values_match_pytorch():
    results = []
    for T, f in ((srcgrad, C), (torch, F)):
        x, w, b = T.ones(1, 4, 3, 3, requires_grad=True), T.ones(4, 2, 2, 2, requires_grad=True), T.ones(4)
        node = f.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2)).grad_fn
        plain = f.conv1d(T.ones(1, 2, 4, requires_grad=True), T.ones(3, 2, 2)).grad_fn
        results.append([type(node).__name__, node._saved_transposed, node._saved_output_padding, node._saved_stride,
                        node._saved_padding, node._saved_dilation, node._saved_groups, node._saved_bias_sym_sizes_opt,
                        node._saved_input.shape, node._saved_weight.shape, plain._saved_transposed,
                        plain._saved_output_padding])
    assert results[0] == results[1]


def _grad_input_or_weight(T, name, kw):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 2))
    g = rng.standard_normal(tuple(F.conv2d(torch.tensor(x), torch.tensor(w), **kw).shape))
    if name == "conv2d_input":
        return T.nn.grad.conv2d_input(x.shape, T.tensor(w, requires_grad=True), T.tensor(g, requires_grad=True), **kw)
    if name == "conv2d_weight":
        return T.nn.grad.conv2d_weight(T.tensor(x, requires_grad=True), w.shape, T.tensor(g), **kw)
    if name == "conv1d_input":
        return T.nn.grad.conv1d_input(x.shape[:3], T.tensor(w[..., 0]), T.tensor(g[:, :, :, 0]), **kw)
    return T.nn.functional.grad.conv1d_weight(T.tensor(x[:, :, :, 0]), w.shape[:3], T.tensor(g[:, :, :, 0]), **kw)


@pytest.mark.parametrize("name", ["conv2d_input", "conv2d_weight", "conv1d_input", "conv1d_weight"])
@pytest.mark.parametrize("kw", [dict(groups=2), dict(stride=2, padding=1, dilation=2, groups=2)], ids=str)
def test_nn_grad_functions_match_pytorch(name, kw):
    ours, theirs = _grad_input_or_weight(srcgrad, name, kw), _grad_input_or_weight(torch, name, kw)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_nn_grad_conv2d_input_picks_the_input_size_and_is_differentiable():
    rng = np.random.default_rng(4)
    w, g = _t64(rng, 3, 2, 3, 3), _t64(rng, 1, 3, 3, 3)
    for size in (7, 8):
        ours = srcgrad.nn.grad.conv2d_input((1, 2, size, size), w, g, stride=2)
        theirs = torch.nn.grad.conv2d_input((1, 2, size, size), torch.tensor(w.detach().numpy()),
                                            torch.tensor(g.detach().numpy()), stride=2)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert srcgrad.autograd.gradgradcheck(lambda w, g: srcgrad.nn.grad.conv2d_input((1, 2, 8, 8), w, g, stride=2),
                                          (w, g))


POOL2D = [
    dict(kernel_size=2),
    dict(kernel_size=2, stride=1),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True),
]


@pytest.mark.parametrize("kw", POOL2D + [dict(kernel_size=2, stride=1, padding=1, dilation=(2, 1))], ids=str)
def test_max_pool2d_matches_pytorch(kw):
    _compare(lambda x: P.max_pool2d(x, **kw), lambda x: F.max_pool2d(x, **kw), [(2, 3, 7, 6)])


@pytest.mark.parametrize("kw", POOL2D + [dict(kernel_size=3, stride=2, padding=1, divisor_override=5)], ids=str)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_matches_pytorch(kw, count_include_pad):
    _compare(lambda x: P.avg_pool2d(x, count_include_pad=count_include_pad, **kw),
             lambda x: F.avg_pool2d(x, count_include_pad=count_include_pad, **kw), [(2, 3, 7, 6)])


def test_pool_unbatched_1d_and_float32():
    _compare(lambda x: P.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2), [(3, 5, 4)])
    _compare(lambda x: P.avg_pool2d(x, 2), lambda x: F.avg_pool2d(x, 2), [(3, 5, 4)])
    _compare(lambda x: P.max_pool1d(x, 3, 2, 1, ceil_mode=True), lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True),
             [(2, 3, 8)])
    _compare(lambda x: P.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
             lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [(3, 8)])
    _compare(lambda x: P.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2), [(2, 3, 6, 6)], dtype="float32", tol=1e-6)
    _compare(lambda x: P.avg_pool2d(x, 3, 1, 1), lambda x: F.avg_pool2d(x, 3, 1, 1), [(2, 3, 6, 6)],
             dtype="float32", tol=1e-6)


def test_max_pool_return_indices():
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 6))
    for kw in (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), dict(kernel_size=2, dilation=2)):
        out, ind = P.max_pool2d(srcgrad.tensor(x), return_indices=True, **kw)
        tout, tind = F.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(out.numpy(), tout.numpy())
        np.testing.assert_array_equal(ind.numpy(), tind.numpy())
        assert str(ind.dtype) == "torch.int64"
    out, ind = P.max_pool1d(srcgrad.tensor(x[0]), 2, return_indices=True)
    np.testing.assert_array_equal(ind.numpy(), F.max_pool1d(torch.tensor(x[0]), 2, return_indices=True)[1].numpy())


def test_max_pool_ties_nan_and_infinity_like_pytorch():
    nan, inf = float("nan"), float("inf")
    cases = [np.array([[[[nan, 1.0], [nan, 2.0]]]]), np.full((1, 1, 3, 3), -inf), np.ones((1, 1, 2, 2)),
             np.array([[[[1.0, nan, 3.0], [nan, 2.0, 5.0], [0.0, 1.0, nan]]]])]
    for a in cases:
        for kw in (dict(kernel_size=2), dict(kernel_size=2, stride=1, padding=1)):
            out, ind = P.max_pool2d(srcgrad.tensor(a), return_indices=True, **kw)
            tout, tind = F.max_pool2d(torch.tensor(a), return_indices=True, **kw)
            np.testing.assert_array_equal(out.numpy(), tout.numpy())
            np.testing.assert_array_equal(ind.numpy(), tind.numpy())
            x, t = srcgrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            P.max_pool2d(x, **kw).sum().backward()
            F.max_pool2d(t, **kw).sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_pool_integer_input():
    a = (np.arange(2 * 5 * 6).reshape(1, 2, 5, 6) * 7 % 23) - 11
    for ours, theirs in ((P.max_pool2d(srcgrad.tensor(a), 2, 1, 1), F.max_pool2d(torch.tensor(a), 2, 1, 1)),
                         (P.avg_pool2d(srcgrad.tensor(a), 3, 2, 1), F.avg_pool2d(torch.tensor(a), 3, 2, 1))):
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("pads", [(1, 2), (1, 2, 0, 3), (-1, 2, 1, -2), (1, 1, 1, 1, 1, 1), ()], ids=str)
def test_constant_pad_matches_pytorch(pads):
    _compare(lambda x: Pad.pad(x, pads, value=0.5), lambda x: F.pad(x, pads, value=0.5), [(2, 3, 4, 5)])


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("pads, shape", [((1, 2), (3, 5)), ((2, 1), (2, 3, 5)), ((1, 2, 3, 0), (2, 4, 5)),
                                         ((2, -1, 1, 3), (2, 3, 4, 5))], ids=str)
def test_reflect_replicate_pad_matches_pytorch(mode, pads, shape):
    _compare(lambda x: Pad.pad(x, pads, mode=mode), lambda x: F.pad(x, pads, mode=mode), [shape])


def test_pad_value_is_cast_to_the_dtype():
    for a, v in ((np.array([1, 2]), 2.7), (np.array([True]), 2.7)):
        np.testing.assert_array_equal(Pad.pad(srcgrad.tensor(a), (1, 1), value=v).numpy(),
                                      F.pad(torch.tensor(a), (1, 1), value=v).numpy())


# ---------------------------------------------------------------------------------------------
# error messages: the same exception type and text as PyTorch 2.13

def _x(T, *shape):
    return T.ones(*shape)


ERRORS = {
    "conv rank mismatch": lambda T, f: f.conv1d(_x(T, 2, 3, 5), _x(T, 4, 3, 3, 3)),
    "conv2d weight rank": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3)),
    "conv weight dims": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3)),
    "conv input dims": lambda T, f: f.conv2d(_x(T, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv1d input dims": lambda T, f: f.conv1d(_x(T, 1, 2, 3, 5), _x(T, 4, 3, 3)),
    "conv channels": lambda T, f: f.conv2d(_x(T, 2, 1, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv channels unbatched": lambda T, f: f.conv2d(_x(T, 1, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv channels groups": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), groups=2),
    "conv groups divide": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 1, 3, 3), groups=3),
    "conv kernel too big": lambda T, f: f.conv2d(_x(T, 2, 3, 2, 2), _x(T, 4, 3, 3, 3)),
    "conv dilated kernel too big": lambda T, f: f.conv2d(_x(T, 2, 3, 4, 4), _x(T, 4, 3, 3, 3), dilation=2),
    "conv bias": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), _x(T, 5)),
    "conv stride": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), stride=0),
    "conv padding": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), padding=-1),
    "conv padding len": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), padding=(1, 1, 1)),
    "conv same strided": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), padding="same", stride=2),
    "conv bad padding string": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), padding="full"),
    "conv dtypes": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5).double(), _x(T, 4, 3, 3, 3)),
    "conv dtypes 2": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3).double()),
    "conv bias dtype": lambda T, f: f.conv2d(_x(T, 2, 3, 5, 5), _x(T, 4, 3, 3, 3), _x(T, 4).double()),
    "conv_transpose output padding": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3), stride=2,
                                                                    output_padding=2),
    "conv_transpose1d output padding": lambda T, f: f.conv_transpose1d(_x(T, 2, 4, 5), _x(T, 4, 3, 3),
                                                                       output_padding=1),
    "conv_transpose channels": lambda T, f: f.conv_transpose2d(_x(T, 2, 2, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv_transpose channels unbatched": lambda T, f: f.conv_transpose2d(_x(T, 2, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv_transpose input dims": lambda T, f: f.conv_transpose2d(_x(T, 5, 5), _x(T, 4, 3, 3, 3)),
    "conv_transpose1d input dims": lambda T, f: f.conv_transpose1d(_x(T, 1, 2, 4, 5), _x(T, 4, 3, 3)),
    "conv_transpose bias": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3), _x(T, 4)),
    "conv_transpose groups": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3), groups=3),
    "conv_transpose negative output padding": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3),
                                                                             output_padding=-1),
    "conv_transpose output padding len": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3),
                                                                        output_padding=(1, 1, 1)),
    "conv_transpose dilation": lambda T, f: f.conv_transpose1d(_x(T, 2, 4, 5).double(), _x(T, 4, 3, 3).double(),
                                                               dilation=0),
    "conv_transpose output too small": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 1, 1).double(),
                                                                       _x(T, 4, 3, 3, 3).double(), padding=(1, 2)),
    "conv_transpose padding string": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3),
                                                                     padding="same"),
    "conv_transpose float stride": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3), stride=1.5),
    "conv_transpose bias dtype": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5), _x(T, 4, 3, 3, 3),
                                                                 _x(T, 3).double()),
    "conv_transpose bool": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 5, 5).bool(), _x(T, 4, 3, 3, 3).bool()),
    "conv_transpose empty input": lambda T, f: f.conv_transpose2d(_x(T, 2, 4, 0, 1), _x(T, 4, 3, 3, 3)),
    "nn.grad grad_output size": lambda T, f: T.nn.grad.conv2d_input((2, 3, 6, 6), _x(T, 4, 3, 3, 3).double(),
                                                                    _x(T, 2, 4, 3, 3).double(), stride=2),
    "nn.grad grad_output channels": lambda T, f: T.nn.grad.conv2d_weight(_x(T, 2, 3, 5, 5).double(), (4, 3, 3, 3),
                                                                         _x(T, 2, 5, 3, 3).double()),
    "nn.grad dilated grad_output": lambda T, f: T.nn.grad.conv1d_input((2, 3, 9), _x(T, 4, 3, 3).double(),
                                                                       _x(T, 2, 4, 4).double(), dilation=2),
    "nn.grad grad_output dims": lambda T, f: T.nn.grad.conv2d_weight(_x(T, 2, 3, 9, 9).double(), (4, 3, 3, 3),
                                                                     _x(T, 2, 4, 5).double()),
    "max_pool output too small": lambda T, f: f.max_pool2d(_x(T, 2, 3, 5, 5), 6),
    "avg_pool output too small": lambda T, f: f.avg_pool2d(_x(T, 2, 3, 5, 5), (6, 1)),
    "max_pool pad": lambda T, f: f.max_pool2d(_x(T, 2, 3, 5, 5), 3, padding=2),
    "max_pool kernel tuple": lambda T, f: f.max_pool2d(_x(T, 2, 3, 5, 5), (2, 2, 2)),
    "max_pool input dims": lambda T, f: f.max_pool2d(_x(T, 5, 5), 2),
    "avg_pool input dims": lambda T, f: f.avg_pool2d(_x(T, 1, 2, 3, 5, 5), 2),
    "max_pool stride zero": lambda T, f: f.max_pool2d(_x(T, 2, 3, 5, 5), 2, stride=0),
    "max_pool1d output": lambda T, f: f.max_pool1d(_x(T, 2, 3, 5), 6),
    "avg_pool1d dims": lambda T, f: f.avg_pool1d(_x(T, 2, 3, 5, 5), 2),
    "avg_pool divisor": lambda T, f: f.avg_pool2d(_x(T, 2, 3, 5, 5), 2, divisor_override=0),
    "pad odd": lambda T, f: f.pad(_x(T, 2, 3), (1,)),
    "pad too long": lambda T, f: f.pad(_x(T, 2, 3), (1, 1) * 3),
    "pad crop too much": lambda T, f: f.pad(_x(T, 2, 3), (-2, -2)),
    "reflect pad too big": lambda T, f: f.pad(_x(T, 2, 3, 5, 5), (5, 1, 1, 1), mode="reflect"),
    "reflect pad size": lambda T, f: f.pad(_x(T, 2, 3, 5, 5), (1, 1), mode="reflect"),
    "reflect pad value": lambda T, f: f.pad(_x(T, 2, 3, 5), (1, 1), mode="reflect", value=1.0),
    "pad mode": lambda T, f: f.pad(_x(T, 2, 3, 5), (1, 1), mode="wrap"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_messages_match_pytorch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(torch, F)
    with pytest.raises(type(theirs.value)) as ours:
        fn(srcgrad, OPS)
    assert str(ours.value) == str(theirs.value)


def test_unsupported_modes_say_so():
    with pytest.raises(NotImplementedError, match="circular"):
        Pad.pad(srcgrad.ones(1, 2, 3), (1, 1), mode="circular")
    with pytest.raises(NotImplementedError, match="reflect"):
        Pad.pad(srcgrad.ones(1, 2, 3, 3, 3), (1, 1, 1, 1, 1, 1), mode="reflect")


# ---------------------------------------------------------------------------------------------
# second derivatives


def _t64(rng, *shape):
    return srcgrad.tensor(rng.standard_normal(shape), dtype=srcgrad.float64, requires_grad=True)


GRADGRAD = {
    "conv2d": (lambda x, w, b: C.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
               [(2, 4, 5, 5), (4, 2, 2, 2), (4,)]),
    "conv1d same": (lambda x, w: C.conv1d(x, w, padding="same"), [(1, 2, 5), (2, 2, 3)]),
    "conv_transpose2d": (lambda x, w, b: C.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=(1, 0),
                                                            groups=2, dilation=(1, 2)),
                         [(1, 4, 3, 3), (4, 1, 2, 3), (2,)]),
    "conv_transpose1d output_padding > padding": (lambda x, w: C.conv_transpose1d(x, w, output_padding=2, dilation=3),
                                                  [(1, 2, 3), (2, 2, 2)]),
    "max_pool2d overlapping": (lambda x: P.max_pool2d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 5)]),
    "max_pool2d": (lambda x: P.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda x: P.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [(1, 2, 5, 5)]),
    "pad constant": (lambda x: Pad.pad(x, (1, -1, 2, 0)), [(1, 2, 3, 3)]),
    "pad reflect": (lambda x: Pad.pad(x, (1, 2, 2, 0), mode="reflect"), [(1, 2, 3, 3)]),
    "pad replicate": (lambda x: Pad.pad(x, (1, 2), mode="replicate"), [(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADGRAD))
def test_gradgradcheck(name):
    fn, shapes = GRADGRAD[name]
    rng = np.random.default_rng(0)
    assert srcgrad.autograd.gradgradcheck(fn, tuple(_t64(rng, *s) for s in shapes))


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d", "max_pool2d overlapping", "avg_pool2d",
                                  "pad reflect"])
def test_second_order_matches_pytorch(name):
    """The gradient's grad_fn and the derivative of |grad|^2 (create_graph=True) equal PyTorch's."""
    fn, shapes = GRADGRAD[name]
    tfn = {"conv2d": lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
           "conv_transpose2d": lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=(1, 0),
                                                                  groups=2, dilation=(1, 2)),
           "max_pool2d overlapping": lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
           "avg_pool2d": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
           "pad reflect": lambda x: F.pad(x, (1, 2, 2, 0), mode="reflect")}[name]
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in shapes]
    results = []
    for T, f in ((srcgrad, fn), (torch, tfn)):
        xs = [T.tensor(v, dtype=T.float64, requires_grad=True) for v in values]
        out = f(*xs)
        g = T.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=T.float64)
        grads = T.autograd.grad(out, xs, g, create_graph=True)
        total = sum((gr * gr).sum() for gr in grads)
        second = T.autograd.grad(total, xs, allow_unused=True)
        results.append(([type(gr.grad_fn).__name__ for gr in grads],
                        [np.zeros(v.shape) if s is None else s.detach().numpy() for v, s in zip(values, second)]))
    (names, ours), (tnames, theirs) = results
    assert names == tnames
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
