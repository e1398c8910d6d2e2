"""The reductions family (issue 11): keywords of np.sum/mean/prod/max/min (axis= an int,
negative, a tuple; keepdims=; dtype=), np.var/std/average, np.cumsum/cumprod/diff,
np.argmax/argmin, np.clip, np.sign, np.logaddexp(2), np.floor/ceil/trunc/rint/round,
np.isnan/isinf/isfinite. Values against numpy, gradients against PyTorch and finite
differences, forward mode against the gradient, on both backends (which agree to 1e-12);
the refusals name the call."""
import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
RNG = np.random.RandomState(11)
X = RNG.randn(5, 3)
Y = RNG.randn(5)
W53 = RNG.randn(5, 3)
W5 = RNG.randn(5)
W51 = W5.reshape(5, 1)
T = torch.float64


def check(fn, torch_fn, args, wrt=0, fd=True, rtol=1e-12):
    """Value (numpy), gradient wrt args[wrt] (torch, finite differences, the other backend)
    and jvp along a random direction, on both backends."""
    want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    targs = [torch.tensor(a, dtype=T, requires_grad=(k == wrt)) if isinstance(a, (np.ndarray, float)) else a
             for k, a in enumerate(args)]
    expected = torch.autograd.grad(torch_fn(*targs), targs[wrt])[0].numpy()
    direction = RNG.randn(*np.shape(args[wrt])) if isinstance(args[wrt], np.ndarray) else 0.7
    grads = {}
    for backend in BACKENDS:
        got = srcgrad.jit(fn, backend=backend)(*args)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        grads[backend] = g = srcgrad.grad(fn, wrt=wrt, backend=backend)(*args)
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=1e-13)
        tangents = [direction if k == wrt else (np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0)
                    for k, a in enumerate(args)]
        _, dot = srcgrad.jvp(fn, args, tangents, backend=backend)
        assert dot == pytest.approx(float(np.sum(expected * direction)), rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(grads["llvm"], grads["python"], rtol=1e-12, atol=1e-14)
    if fd:
        np.testing.assert_allclose(grads["python"], numeric_gradient(fn, args, wrt), rtol=1e-6, atol=1e-7)


def same(fn, args, exact=True):
    """The compiled values of ``fn`` (a tuple) on both backends are numpy's (types and dtypes too)."""
    for backend in BACKENDS:
        for got, want in zip(srcgrad.jit(fn, backend=backend)(*args), fn(*args)):
            _same(backend, got, want, exact)


def _same(backend, got, want, exact):
    assert np.shape(got) == np.shape(want), backend
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype, (backend, got.dtype, want.dtype)
        if exact:
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want)) if got.dtype.kind == "f" else True
        else:
            np.testing.assert_allclose(got, want, rtol=1e-13)
    else:
        assert got == want or (got != got and want != want), (backend, got, want)
        assert isinstance(got, (int, np.integer)) == isinstance(want, (int, np.integer)), backend


# ---------------------------------------------------------------------- keywords of the reductions
def sum_keepdims_rows(x): return np.sum(np.sum(x, axis=1, keepdims=True) * x * W53)
def sum_keepdims_cols(x): return np.sum(x.sum(axis=0, keepdims=True) * x * W53)
def sum_negative_axis(x): return np.sum(np.sum(x, axis=-1) * W5)
def sum_tuple_axis(x): return np.sum(x, axis=(0, 1)) * 2.0 + np.sum(x, axis=(1,))[0]
def sum_keepdims_all(x): return np.sum(np.sum(x, keepdims=True) * x * W53)
def sum_dtype(x): return np.sum(x, dtype=np.float64) + np.sum(x, axis=0, dtype=float)[1] + x.sum(dtype='float64')
def sum_positional_axis(x): return np.sum(np.sum(x, 1) * W5) + np.sum(x.sum(0) ** 2)
def mean_keepdims(x): return np.sum((x - np.mean(x, axis=-1, keepdims=True)) ** 2 * W53) + x.mean(axis=(0, 1))
def prod_keepdims(x): return np.sum(np.prod(x, axis=-1, keepdims=True) * W53) + np.prod(x, axis=0)[2]
def max_keepdims(x): return np.sum((x - np.max(x, axis=1, keepdims=True)) * W53) + np.amax(x, axis=-2)[1]
def min_keepdims(x): return np.sum(x.min(axis=0, keepdims=True) * W53) + np.amin(x, keepdims=True)[0, 0]


def t_sum_keepdims_rows(x): return torch.sum(torch.sum(x, 1, keepdim=True) * x * torch.tensor(W53))
def t_sum_keepdims_cols(x): return torch.sum(x.sum(0, keepdim=True) * x * torch.tensor(W53))
def t_sum_negative_axis(x): return torch.sum(torch.sum(x, -1) * torch.tensor(W5))
def t_sum_tuple_axis(x): return torch.sum(x) * 2.0 + torch.sum(x, 1)[0]
def t_sum_keepdims_all(x): return torch.sum(torch.sum(x).reshape(1, 1) * x * torch.tensor(W53))
def t_sum_dtype(x): return torch.sum(x) + torch.sum(x, 0)[1] + x.sum()
def t_sum_positional_axis(x): return torch.sum(torch.sum(x, 1) * torch.tensor(W5)) + torch.sum(x.sum(0) ** 2)
def t_mean_keepdims(x): return torch.sum((x - x.mean(-1, keepdim=True)) ** 2 * torch.tensor(W53)) + x.mean()
def t_prod_keepdims(x): return torch.sum(torch.prod(x, -1, keepdim=True) * torch.tensor(W53)) + torch.prod(x, 0)[2]
def t_max_keepdims(x): return torch.sum((x - torch.amax(x, 1, keepdim=True)) * torch.tensor(W53)) + torch.amax(x, -2)[1]
def t_min_keepdims(x): return torch.sum(torch.amin(x, 0, keepdim=True) * torch.tensor(W53)) + torch.amin(x)


@pytest.mark.parametrize("fn,tfn", [
    (sum_keepdims_rows, t_sum_keepdims_rows), (sum_keepdims_cols, t_sum_keepdims_cols),
    (sum_negative_axis, t_sum_negative_axis), (sum_tuple_axis, t_sum_tuple_axis),
    (sum_keepdims_all, t_sum_keepdims_all), (sum_dtype, t_sum_dtype), (sum_positional_axis, t_sum_positional_axis),
    (mean_keepdims, t_mean_keepdims), (prod_keepdims, t_prod_keepdims), (max_keepdims, t_max_keepdims),
    (min_keepdims, t_min_keepdims)], ids=lambda f: getattr(f, "__name__", ""))
def test_reduction_keywords(fn, tfn):
    check(fn, tfn, (X.copy(),))


def keepdims_shapes(x):
    return np.sum(x, axis=1, keepdims=True), np.max(x, axis=0, keepdims=True), np.mean(x, keepdims=True), \
        np.prod(x, axis=(0, 1), keepdims=True), np.sum(x, axis=()), np.mean(x, axis=()), np.var(x, axis=()), \
        np.max(x, axis=(), keepdims=True), np.sum(x[0], axis=0, keepdims=True), np.mean(x, axis=None), \
        np.sum(x, None), np.cumsum(x[0], None), np.argmax(x, None)


def test_keepdims_gives_numpy_shapes():
    want = keepdims_shapes(X)
    for backend in BACKENDS:
        got = srcgrad.jit(keepdims_shapes, backend=backend)(X)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-14)


def logsumexp(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum((m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))) * W51)


def t_logsumexp(x):
    return torch.sum(torch.logsumexp(x, 1, keepdim=True) * torch.tensor(W5.reshape(5, 1)))


def test_logsumexp_composition_against_torch():
    check(logsumexp, t_logsumexp, (X * 30.0,))
    check(logsumexp, t_logsumexp, (np.array([[1.0, 1.0, 0.5], [2.0, -1.0, 2.0], [0.0, 0.0, 0.0],
                                             [1e3, 1e3 - 1.0, -1e3], [3.0, 2.0, 1.0]]),), fd=False)


# ---------------------------------------------------------------------- var, std, average
def var_all(x): return np.var(x) + np.std(x) * 2.0
def var_axis(x): return np.sum(np.var(x, axis=0) * W53[0]) + np.sum(np.std(x, axis=1, ddof=1) * W5)
def var_keepdims(x): return np.sum(np.std(x, axis=-1, keepdims=True, ddof=1) * W53) + x.var(ddof=2) + x.std(axis=0)[1]


def t_var_all(x): return torch.var(x, correction=0) + torch.std(x, correction=0) * 2.0


def t_var_axis(x):
    return torch.sum(torch.var(x, 0, correction=0) * torch.tensor(W53[0])) + \
        torch.sum(torch.std(x, 1, correction=1) * torch.tensor(W5))


def t_var_keepdims(x):
    return torch.sum(torch.std(x, -1, keepdim=True, correction=1) * torch.tensor(W53)) + torch.var(x, correction=2) \
        + torch.std(x, 0, correction=0)[1]


@pytest.mark.parametrize("fn,tfn", [(var_all, t_var_all), (var_axis, t_var_axis), (var_keepdims, t_var_keepdims)],
                         ids=lambda f: getattr(f, "__name__", ""))
def test_var_std(fn, tfn):
    check(fn, tfn, (X.copy(),))


def std_of_constant_rows(x): return np.sum(np.std(x, axis=1) * W5) + np.std(x[0])


def t_std_of_constant_rows(x):
    return torch.sum(torch.std(x, 1, correction=0) * torch.tensor(W5)) + torch.std(x[0], correction=0)


def test_std_gradient_at_zero_variance_is_zero_as_torch():
    x = X.copy()
    x[0] = 0.5
    x[3] = -2.0
    check(std_of_constant_rows, t_std_of_constant_rows, (x,), fd=False)


def average_plain(x): return np.average(x) + np.sum(np.average(x, axis=0) * W53[0])
def average_weights(x, w): return np.sum(np.average(x, axis=1, weights=w) * W5) + np.average(x, weights=w)
def average_vector_weights(x, v):
    return np.sum(np.average(x, axis=0, weights=v) * W53[0]) + np.average(x[0], weights=v[:3])


def t_average_plain(x): return x.mean() + torch.sum(x.mean(0) * torch.tensor(W53[0]))


def t_average_weights(x, w):
    return torch.sum((x * w).sum(1) / w.sum(1) * torch.tensor(W5)) + (x * w).sum() / w.sum()


def t_average_vector_weights(x, v):
    return torch.sum((x * v[:, None]).sum(0) / v.sum() * torch.tensor(W53[0])) + (x[0] * v[:3]).sum() / v[:3].sum()


def test_average():
    w, v = RNG.rand(5, 3) + 0.5, RNG.rand(5) + 0.5
    check(average_plain, t_average_plain, (X.copy(),))
    for k in (0, 1):
        check(average_weights, t_average_weights, (X.copy(), w), wrt=k)
        check(average_vector_weights, t_average_vector_weights, (X.copy(), v), wrt=k)


# ---------------------------------------------------------------------- scans and differences
def cumsum_vector(y): return np.sum(np.cumsum(y) * W5) + np.sum(y.cumsum(axis=0) ** 2)
def cumsum_axes(x): return np.sum(np.cumsum(x, axis=0) * W53) + np.sum(np.cumsum(x, axis=-1) ** 2 * W53)
def cumprod_vector(y): return np.sum(np.cumprod(y) * W5) + y.cumprod()[2]
def cumprod_axes(x): return np.sum(np.cumprod(x, axis=0) * W53) + np.sum(np.cumprod(x, axis=1) * W53 * W53)


def t_cumsum_vector(y): return torch.sum(torch.cumsum(y, 0) * torch.tensor(W5)) + torch.sum(torch.cumsum(y, 0) ** 2)


def t_cumsum_axes(x):
    return torch.sum(torch.cumsum(x, 0) * torch.tensor(W53)) + torch.sum(torch.cumsum(x, -1) ** 2 * torch.tensor(W53))


def t_cumprod_vector(y): return torch.sum(torch.cumprod(y, 0) * torch.tensor(W5)) + torch.cumprod(y, 0)[2]


def t_cumprod_axes(x):
    w = torch.tensor(W53)
    return torch.sum(torch.cumprod(x, 0) * w) + torch.sum(torch.cumprod(x, 1) * w * w)


def test_cumsum():
    check(cumsum_vector, t_cumsum_vector, (Y.copy(),))
    check(cumsum_axes, t_cumsum_axes, (X.copy(),))


def test_cumprod_gradient_is_exact_at_zeros():
    check(cumprod_vector, t_cumprod_vector, (Y.copy(),))
    check(cumprod_axes, t_cumprod_axes, (X.copy(),))
    y = Y.copy()
    y[1] = 0.0
    check(cumprod_vector, t_cumprod_vector, (y,))
    y[3] = 0.0
    check(cumprod_vector, t_cumprod_vector, (y,))
    x = X.copy()
    x[1, 1] = x[3, 0] = x[4, 0] = 0.0
    check(cumprod_axes, t_cumprod_axes, (x,))


def diff_vector(y): return np.sum(np.diff(y) * W5[:4]) + np.sum(np.diff(y, n=2) ** 2) + np.sum(np.diff(y, 0))
def diff_axes(x): return np.sum(np.diff(x, axis=0) * W53[:4]) + np.sum(np.diff(x) ** 2) + np.sum(np.diff(x, 2, axis=-1))


def t_diff_vector(y):
    return torch.sum(torch.diff(y) * torch.tensor(W5[:4])) + torch.sum(torch.diff(y, n=2) ** 2) + torch.sum(y)


def t_diff_axes(x):
    return torch.sum(torch.diff(x, dim=0) * torch.tensor(W53[:4])) + torch.sum(torch.diff(x) ** 2) \
        + torch.sum(torch.diff(x, 2, dim=-1))


def test_diff():
    check(diff_vector, t_diff_vector, (Y.copy(),))
    check(diff_axes, t_diff_axes, (X.copy(),))


def shapes_of_scans(x):
    return np.cumsum(x, axis=1), np.cumprod(x[0]), np.diff(x, axis=0), np.diff(x[:, 0], n=3)


def test_scans_give_numpy_values():
    for backend in BACKENDS:
        got = srcgrad.jit(shapes_of_scans, backend=backend)(X)
        for g, w in zip(got, shapes_of_scans(X)):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)       # numpy's order of accumulation: exact


# ---------------------------------------------------------------------- argmax, argmin
def arg_extrema(x):
    return np.argmax(x), np.argmin(x), np.argmax(x, axis=0), np.argmin(x, axis=1), x.argmax(axis=-1), x[0].argmin()


def pick_largest(y): return y[np.argmax(y)] * 2.0 + y[y.argmin()]


@pytest.mark.parametrize("x", [X, np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]),
                               np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, np.nan]]),
                               np.array([[-np.inf, -np.inf], [np.inf, np.inf]])])
def test_argmax_argmin_as_numpy(x):
    want = arg_extrema(x)
    for backend in BACKENDS:
        got = srcgrad.jit(arg_extrema, backend=backend)(x)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w) and np.array_equal(g, w), (backend, g, w)
            assert isinstance(g, int) or g.dtype == np.int64


def test_argmax_picks_an_element_with_its_gradient():
    check(pick_largest, lambda y: y[torch.argmax(y)] * 2.0 + y[torch.argmin(y)], (Y.copy(),))


def argmax_of_empty(x): return np.argmax(x[:0])


def test_argmax_of_an_empty_array_raises_as_numpy():
    for backend in BACKENDS:
        with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
            srcgrad.jit(argmax_of_empty, backend=backend)(Y)


# ---------------------------------------------------------------------- sort, argsort
def sorting(x, y):
    return np.sort(x), np.sort(x, axis=0), np.sort(x, axis=-1, kind="stable"), np.argsort(x), \
        np.argsort(x, axis=0), x.argsort(axis=1), np.sort(y), np.argsort(y), y.argsort(), np.sort(y, axis=None)


def test_sort_and_argsort_as_numpy_stable():
    x, y = X.copy(), np.array([3.0, np.nan, 1.0, 1.0, -2.0, np.nan, 0.5, -np.inf, 1.0])
    x[1, 1] = x[2, 1] = x[2, 2]
    x[0, 0] = np.nan
    want = sorting(x, y)
    for backend in BACKENDS:
        for k, (g, w) in enumerate(zip(srcgrad.jit(sorting, backend=backend)(x, y), want)):
            w = np.argsort(*{3: (x,), 4: (x, 0), 5: (x, 1), 7: (y,), 8: (y,)}[k], kind="stable") \
                if k in (3, 4, 5, 7, 8) else w
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype


def sort_pair(y): return np.argsort(y), np.sort(y)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 17, 100])
def test_stable_order_of_every_length_with_ties_and_nans(n):
    rng = np.random.RandomState(n)
    for y in (rng.randint(0, 4, size=n) * 1.0, np.where(rng.rand(n) < 0.3, np.nan, rng.randint(0, 3, size=n) * 1.0),
              rng.randn(n)):
        for backend in BACKENDS:
            order, values = srcgrad.jit(sort_pair, backend=backend)(y)
            np.testing.assert_array_equal(order, np.argsort(y, kind="stable"))
            np.testing.assert_array_equal(values, np.sort(y))


def sort_weighted(x): return np.sum(np.sort(x, axis=0) * W53) + np.sum(np.sort(x) ** 2 * W53)
def sort_vector(y): return np.sum(np.sort(y) * W5) + y[np.argsort(y)[2]]


def t_sort_weighted(x):
    w = torch.tensor(W53)
    return torch.sum(torch.sort(x, dim=0, stable=True)[0] * w) + torch.sum(torch.sort(x, stable=True)[0] ** 2 * w)


def t_sort_vector(y):
    return torch.sum(torch.sort(y, stable=True)[0] * torch.tensor(W5)) + y[torch.argsort(y, stable=True)[2]]


def test_sort_gradient_goes_through_the_permutation():
    check(sort_weighted, t_sort_weighted, (X.copy(),))
    check(sort_vector, t_sort_vector, (Y.copy(),))
    y = np.array([0.5, -1.0, 0.5, 2.0, 0.5])      # ties: each takes the gradient of its slot in the stable order
    check(sort_vector, t_sort_vector, (y,), fd=False)


# ---------------------------------------------------------------------- clip
def clip_both(y): return np.sum(np.clip(y, -0.5, 0.5) * W5)
def clip_keywords(y): return np.sum(np.clip(y, a_min=-0.3, a_max=None) * W5) + np.sum(np.clip(y, None, 0.2) ** 2)
def clip_numpy2(y): return np.sum(np.clip(y, min=-0.3, max=0.7) * W5) + np.sum(y.clip(-0.1, 0.1) * W5)
def clip_array_bounds(y, lo): return np.sum(np.clip(y, lo, lo + 1.0) * W5)
def clip_scalar(c): return np.clip(c, 0.0, 1.0) * 3.0 + np.clip(c * 2.0, a_max=0.5, a_min=-1.0)


def t_clip_both(y): return torch.sum(torch.clamp(y, -0.5, 0.5) * torch.tensor(W5))
def t_clip_keywords(y):
    return torch.sum(torch.clamp(y, min=-0.3) * torch.tensor(W5)) + torch.sum(torch.clamp(y, max=0.2) ** 2)
def t_clip_numpy2(y):
    return torch.sum(torch.clamp(y, -0.3, 0.7) * torch.tensor(W5)) + torch.sum(y.clamp(-0.1, 0.1) * torch.tensor(W5))
def t_clip_array_bounds(y, lo): return torch.sum(torch.clamp(y, lo, lo + 1.0) * torch.tensor(W5))
def t_clip_scalar(c): return torch.clamp(c, 0.0, 1.0) * 3.0 + torch.clamp(c * 2.0, -1.0, 0.5)


def test_clip_gradients_as_torch_clamp():
    ys = [Y.copy(), np.array([-0.5, 0.5, 0.2, -0.3, 0.7])]          # on the bounds: passes (inclusive)
    for y in ys:
        fd = y is ys[0]
        check(clip_both, t_clip_both, (y,), fd=fd)
        check(clip_keywords, t_clip_keywords, (y,), fd=fd)
        check(clip_numpy2, t_clip_numpy2, (y,), fd=fd)
    lo = RNG.randn(5) * 0.5
    check(clip_array_bounds, t_clip_array_bounds, (Y.copy(), lo), wrt=0)
    check(clip_array_bounds, t_clip_array_bounds, (Y.copy(), lo), wrt=1)
    for c in (-0.7, 0.3, 1.5):
        check(clip_scalar, t_clip_scalar, (c,))


def clip_values(y, lo, hi, n): return np.clip(y, lo, hi), np.clip(y, hi, lo), np.clip(n, 0, 3), np.clip(y, np.nan, hi)


def test_clip_values_as_numpy():
    y = np.array([-1.0, np.nan, 0.5, 2.0, -0.0])
    same(clip_values, (y, -0.5, 1.0, 7))


# ---------------------------------------------------------------------- element-wise
def rounding(y, c):
    return (np.floor(y), np.ceil(y), np.trunc(y), np.rint(y), np.round(y), np.around(y), y.round(),
            np.floor(c), np.ceil(c), np.round(c), np.rint(c), np.sign(y), np.sign(c), np.round(y, 2),
            np.round(y * 100.0, decimals=-1))


def test_rounding_and_sign_give_numpy_floats():
    y = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 2.675, -np.inf, np.nan, 1e300, -0.4])
    for c in (2.5, -0.5, 3.7, -0.0):
        want = rounding(y, c)
        for backend in BACKENDS:
            got = srcgrad.jit(rounding, backend=backend)(y, c)
            for g, w in zip(got, want):
                assert isinstance(g, float) == isinstance(w, (float, np.floating))
                np.testing.assert_array_equal(g, w)
                assert np.array_equal(np.signbit(g), np.signbit(w)), (backend, g, w)


def int_rounding(n, v): return np.floor(n), np.round(v), np.sign(n), np.sign(-n), np.rint(v)


def test_rounding_ints_as_numpy():
    same(int_rounding, (7, np.array([3, -2, 0])))


def steps(y): return np.sum((np.floor(y) + np.ceil(y) + np.round(y) + np.sign(y) + np.trunc(y) + 1.0) * y)


def test_rounding_and_sign_have_zero_derivative():
    check(steps, lambda y: torch.sum((torch.floor(y) + torch.ceil(y) + torch.round(y) + torch.sign(y)
                                      + torch.trunc(y) + 1.0) * y), (Y.copy(),))


def classify(y, c):
    return (np.isnan(y), np.isinf(y), np.isfinite(y), np.isnan(c), np.isinf(c), np.isfinite(c),
            np.where(np.isfinite(y), y, 0.0))


def test_isnan_isinf_isfinite():
    y = np.array([1.0, np.nan, np.inf, -np.inf, -0.0])
    for c in (1.0, np.nan, -np.inf):
        want = classify(y, c)
        for backend in BACKENDS:
            got = srcgrad.jit(classify, backend=backend)(y, c)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert np.asarray(g).dtype == np.asarray(w).dtype


def nan_safe_sum(y): return np.sum(np.where(np.isnan(y), 0.0, y) * W5)


def test_masking_nans_keeps_the_gradient():
    y = Y.copy()
    y[2] = np.nan
    for backend in BACKENDS:
        g = srcgrad.grad(nan_safe_sum, backend=backend)(y)
        np.testing.assert_array_equal(g, np.where(np.isnan(y), 0.0, W5))


def lae(a, b): return np.sum(np.logaddexp(a, b) * W5) + np.logaddexp(a[0], 0.3)
def lae2(a, b): return np.sum(np.logaddexp2(a, b) * W5) + np.logaddexp2(a[1], -0.3)


def t_lae(a, b):
    return torch.sum(torch.logaddexp(a, b) * torch.tensor(W5)) + torch.logaddexp(a[0], torch.tensor(0.3, dtype=T))
def t_lae2(a, b):
    return torch.sum(torch.logaddexp2(a, b) * torch.tensor(W5)) + torch.logaddexp2(a[1], torch.tensor(-0.3, dtype=T))


def test_logaddexp_gradient_is_the_softmax_weights():
    b = RNG.randn(5)
    for fn, tfn in ((lae, t_lae), (lae2, t_lae2)):
        for k in (0, 1):
            check(fn, tfn, (Y.copy(), b), wrt=k)
            check(fn, tfn, (Y * 800.0, b * 800.0), wrt=k, fd=False)


def lae_values(a, b): return np.logaddexp(a, b), np.logaddexp2(a, b), np.logaddexp(a[0], b[0])


def test_logaddexp_values_at_ties_and_infinities():
    a = np.array([1.0, np.inf, -np.inf, np.inf, -np.inf, np.nan, 1e308, 3.0, -745.0])
    b = np.array([1.0, np.inf, -np.inf, -np.inf, 2.0, 1.0, 1e308, -2.0, -745.0])
    want = lae_values(a, b)
    for backend in BACKENDS:
        for g, w in zip(srcgrad.jit(lae_values, backend=backend)(a, b), want):
            np.testing.assert_allclose(g, w, rtol=1e-15)
        g = srcgrad.grad(lambda_sum_lae, wrt=(0, 1), backend=backend)(a[:5].copy(), b[:5].copy())
        np.testing.assert_array_equal(g[0], [0.5, 0.5, 0.5, 1.0, 0.0])      # ties share evenly
        np.testing.assert_array_equal(g[1], [0.5, 0.5, 0.5, 0.0, 1.0])


def lambda_sum_lae(a, b): return np.sum(np.logaddexp(a, b))


def existing(y, b):
    return np.sum((np.power(np.abs(y) + 0.5, b) + np.absolute(y) * np.fabs(b) + np.maximum(y, b) * np.minimum(y, 0.1)
                   + np.log2(np.abs(b) + 1.0) + np.log10(y * y + 1.0)) * W5)


def t_existing(y, b):
    return torch.sum((torch.pow(torch.abs(y) + 0.5, b) + torch.abs(y) * torch.abs(b) + torch.maximum(y, b)
                      * torch.minimum(y, torch.tensor(0.1, dtype=T)) + torch.log2(torch.abs(b) + 1.0)
                      + torch.log10(y * y + 1.0)) * torch.tensor(W5))


def test_the_elementwise_functions_that_existed_work_on_arrays():
    b = RNG.randn(5)
    check(existing, t_existing, (Y.copy(), b), wrt=0)
    check(existing, t_existing, (Y.copy(), b), wrt=1)


def test_float32_input():
    x = X.astype(np.float32)
    for fn in (sum_keepdims_rows, var_keepdims, cumsum_axes, clip_both, logsumexp):
        arg = x if fn is not clip_both else x[:, 0].copy()
        for backend in BACKENDS:
            got = srcgrad.jit(fn, backend=backend)(arg)
            assert got == pytest.approx(float(fn(arg.astype(np.float64))), rel=1e-12)
            g = srcgrad.grad(fn, backend=backend)(arg)
            # the gradient of a float32 argument is float32 (rounded from the float64 one)
            np.testing.assert_allclose(g, srcgrad.grad(fn, backend="python")(arg.astype(np.float64)), rtol=1e-6)


def float32_results(x):
    return (np.sum(x, dtype=np.float32), np.sum(x, axis=0, dtype=np.float32), x.mean(dtype=np.float32),
            np.std(x, axis=1, dtype=np.float32), np.cumsum(x, axis=1, dtype=np.float32), np.prod(x, 0, dtype=x.dtype))


def float32_loss(x):
    return np.sum(np.sin(x) * 2.0, dtype=np.float32) + np.sum(np.mean(x * x, axis=0, dtype=np.float32))


def float32_loss_t(x):
    return torch.sum(torch.sin(x) * 2.0, dtype=torch.float32) + torch.sum(torch.mean(x * x, 0, dtype=torch.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_dtype_rounds_the_result(backend):
    """dtype=np.float32: the float64 result rounded once to float32 (numpy accumulates in
    float32, so it may differ in float32's last bits); arrays become float32 arrays."""
    x = X.astype(np.float32)
    got = srcgrad.jit(float32_results, backend=backend)(x)
    want = float32_results(x)
    w64 = x.astype(np.float64)          # the float64 results, before rounding:
    wide = (np.sum(w64), np.sum(w64, axis=0), w64.mean(), np.std(w64, axis=1), np.cumsum(w64, axis=1), np.prod(w64, 0))
    for g, w, e in zip(got, want, wide):
        if isinstance(w, np.ndarray):
            assert g.dtype == np.float32 and g.shape == w.shape
            np.testing.assert_array_equal(g, np.asarray(e, dtype=np.float32))
        else:
            assert type(g) is float and g == float(np.float32(e))
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), w, rtol=1e-6, atol=1e-6)
    tx = torch.tensor(X, requires_grad=True)
    (want_g,) = torch.autograd.grad(float32_loss_t(tx), tx)
    # the rounding's derivative is 1 (PyTorch's casts: torch rounds the mean's 1/5 to float32 too)
    g = srcgrad.grad(float32_loss, backend=backend)(X)
    np.testing.assert_allclose(g, want_g.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g, 2.0 * np.cos(X) + 2.0 * X / X.shape[0], rtol=1e-14)


# ---------------------------------------------------------------------- refusals
def with_out(x): return np.sum(x, out=x)
def with_where(x): return np.sum(x, where=x > 0.0)
def mean_out(x): return x.mean(axis=0, out=x)
def exp_out(x): return np.sum(np.exp(x, out=x))
def wrong_keyword(x): return np.sum(x, initial=1.0)
def int_dtype(x): return np.sum(x, dtype=int)
def int64_dtype(x): return np.sum(x, dtype=np.int64)
def axis_not_literal(x, k): return np.sum(x, axis=k)
def axis_too_big(x): return np.sum(x, axis=2)
def axis_float(x): return np.sum(x, axis=1.5)
def repeated_axis(x): return np.sum(x, axis=(1, -1))
def cumsum_no_axis(x): return np.sum(np.cumsum(x))
def clip_no_bounds(y): return np.sum(np.clip(y, None, None))
def round_variable_decimals(y, k): return np.sum(np.round(y, k))
def sign_of_ints(v): return np.sign(v)
def diff_of_bools(y): return np.diff(y > 0.0)
def zeros_dtype(n): return np.zeros(n, dtype=complex)


@pytest.mark.parametrize("fn,args,error,message", [
    (with_out, (X,), srcgrad.UnsupportedSyntaxError, r"np\.sum\(\.\.\., out=\.\.\.\).*assign the result instead"),
    (with_where, (X,), srcgrad.UnsupportedSyntaxError, r"np\.sum\(\.\.\., where=\.\.\.\)"),
    (mean_out, (X,), srcgrad.UnsupportedSyntaxError, r"x\.mean\(\.\.\., out=\.\.\.\)"),
    (exp_out, (X,), srcgrad.UnsupportedSyntaxError, r"np\.exp\(\.\.\., out=\.\.\.\)"),
    (wrong_keyword, (X,), srcgrad.UnsupportedSyntaxError, r"the keyword initial= of np\.sum.*accepts axis="),
    (int_dtype, (X,), srcgrad.UnsupportedSyntaxError, r"np\.sum\(\.\.\., dtype=int\)"),
    (int64_dtype, (X,), srcgrad.UnsupportedSyntaxError, r"dtype=np\.int64.*computes in floats"),
    (axis_not_literal, (X, 1), srcgrad.UnsupportedSyntaxError, r"axis=k"),
    (axis_too_big, (X,), srcgrad.TypingError, r"axis 2 is out of range for an array of 2 dimensions"),
    (axis_float, (X,), srcgrad.TypingError, r"axis=1\.5: axis must be int or a tuple of ints or None"),
    (repeated_axis, (X,), srcgrad.TypingError, r"repeated"),
    (cumsum_no_axis, (X,), srcgrad.UnsupportedSyntaxError, r"np\.cumsum of a 2-d array without axis="),
    (clip_no_bounds, (Y,), srcgrad.TypingError, r"np\.clip needs a_min or a_max"),
    (round_variable_decimals, (Y, 2), srcgrad.UnsupportedSyntaxError, r"decimals=k"),
    (sign_of_ints, (np.array([1, -2]),), srcgrad.TypingError, r"np\.sign of"),
    (diff_of_bools, (Y,), srcgrad.TypingError, r"np\.diff of bools"),
    (zeros_dtype, (3,), srcgrad.UnsupportedSyntaxError, r"the dtype complex"),
], ids=lambda v: getattr(v, "__name__", None))
def test_refusals_name_the_call(fn, args, error, message):
    with pytest.raises(error, match="(?s)" + message) as info:
        srcgrad.jit(fn)(*args)
    assert "test_numpy_reductions.py" in str(info.value)


def reductions_of_numbers(x, b):
    return np.sum(x) * np.mean(x) + np.max(x) + np.prod(x) + np.min(b) + np.sum(b)


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_reductions_of_a_number_give_the_number(backend):
    """np.sum(3.0) is 3.0 in numpy (a number is a 0-d array to it): so in compiled code."""
    assert srcgrad.jit(reductions_of_numbers, backend=backend)(2.0, True) == reductions_of_numbers(2.0, True)
    assert srcgrad.grad(reductions_of_numbers, backend=backend)(2.0, True) == pytest.approx(2 * 2.0 + 1.0 + 1.0)
