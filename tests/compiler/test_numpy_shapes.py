"""numpy's shapes and views: reshape, ravel, flatten, copy, squeeze, expand_dims, transpose,
swapaxes, moveaxis, flip/fliplr/flipud, astype, asarray, np.array([...]) and x.shape as a
shape argument. Values as numpy's (views where numpy's are views), gradients against PyTorch
and finite differences, forward mode against the gradient, on both backends; the refusals."""
import re

import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
W = np.array([0.3, -1.2, 2.0])
X = np.array([[0.5, -1.0, 0.25], [2.0, 0.3, -0.6]])        # (2, 3)
R = np.random.default_rng(11)


# ---------------------------------------------------------------------- programs and their torch twins
def reshapes(x, n, m):
    a = x.reshape(2, 3) * W
    b = np.reshape(x, (-1, 2)) @ np.array([1.5, -0.5])
    c = x.reshape(n, m).T.reshape((6,))         # a copy: the transpose is not contiguous
    d = np.reshape(a, a.size)[::2]
    return np.sum(a ** 2) + np.sum(b * b) + np.sum(c * np.arange(6.0)) + np.sum(np.sin(d)) + np.sum(x.reshape(a.shape))


def reshapes_t(x, n, m):
    w = torch.tensor(W)
    a = x.reshape(2, 3) * w
    b = torch.reshape(x, (-1, 2)) @ torch.tensor([1.5, -0.5], dtype=torch.float64)
    c = x.reshape(n, m).T.reshape(6)
    d = a.reshape(6)[::2]
    return torch.sum(a ** 2) + torch.sum(b * b) + torch.sum(c * torch.arange(6.0, dtype=torch.float64)) \
        + torch.sum(torch.sin(d)) + torch.sum(x)


def flat(M):
    a = M.ravel() * np.arange(6.0)
    b = np.ravel(M.T)[1:4]
    c = M.flatten()
    c[0] = 10.0          # flatten copies: M is not changed
    d = np.copy(M[:, 1])
    return np.sum(a * a) + np.sum(np.exp(b)) + np.sum(c * M.ravel()) + np.sum(d) * M[0, 1]


def flat_t(M):
    a = M.reshape(-1) * torch.arange(6.0, dtype=torch.float64)
    b = M.T.reshape(-1)[1:4]
    c = torch.cat([torch.tensor([10.0], dtype=torch.float64), M.reshape(-1)[1:]])
    d = M[:, 1]
    return torch.sum(a * a) + torch.sum(torch.exp(b)) + torch.sum(c * M.reshape(-1)) + torch.sum(d) * M[0, 1]


def axes(M, v):
    a = np.expand_dims(v, 0) * M                  # (1, 3) * (2, 3)
    b = np.expand_dims(v, axis=(0, 2))            # (1, 3, 1)
    c = np.squeeze(b, axis=(0, 2)) * v
    d = np.expand_dims(M, -1).squeeze(-1)
    e = np.squeeze(np.expand_dims(v, 1), 1)
    return np.sum(a ** 3) + np.sum(c) + np.sum(b * 2.0) + np.sum(d * M) + np.sum(e * e * e)


def axes_t(M, v):
    a = v.unsqueeze(0) * M
    b = v.unsqueeze(0).unsqueeze(2)
    c = b.squeeze(2).squeeze(0) * v
    d = M.unsqueeze(-1).squeeze(-1)
    e = v.unsqueeze(1).squeeze(1)
    return torch.sum(a ** 3) + torch.sum(c) + torch.sum(b * 2.0) + torch.sum(d * M) + torch.sum(e * e * e)


def permutes(M, v):
    T3 = np.expand_dims(M, 0) * np.expand_dims(np.expand_dims(v[:2], 1), 2)     # (2, 2, 3)
    a = np.transpose(M) @ v[:2]
    b = np.transpose(T3, (2, 0, 1)) * np.arange(3.0).reshape(3, 1, 1)
    c = T3.transpose(1, 2, 0)[:, :, 0]
    d = T3.transpose((0, 2, 1))[1] @ v[:2]
    e = np.swapaxes(T3, 0, 2) - M.T.reshape(3, 2, 1)
    f = np.moveaxis(T3, 0, -1) + T3.transpose(1, 2, 0)
    g = np.moveaxis(T3, (0, 1), (2, 0))
    return np.sum(a * a) + np.sum(b ** 2) + np.sum(np.cos(c)) + np.sum(d) + np.sum(e * e) + np.sum(f * f) \
        + np.sum(g * np.arange(3.0).reshape(1, 3, 1))


def permutes_t(M, v):
    T3 = M.unsqueeze(0) * v[:2].unsqueeze(1).unsqueeze(2)
    a = M.T @ v[:2]
    b = T3.permute(2, 0, 1) * torch.arange(3.0, dtype=torch.float64).reshape(3, 1, 1)
    c = T3.permute(1, 2, 0)[:, :, 0]
    d = T3.permute(0, 2, 1)[1] @ v[:2]
    e = torch.swapaxes(T3, 0, 2) - M.T.reshape(3, 2, 1)
    f = torch.movedim(T3, 0, -1) + T3.permute(1, 2, 0)
    g = torch.movedim(T3, (0, 1), (2, 0))
    return torch.sum(a * a) + torch.sum(b ** 2) + torch.sum(torch.cos(c)) + torch.sum(d) + torch.sum(e * e) \
        + torch.sum(f * f) + torch.sum(g * torch.arange(3.0, dtype=torch.float64).reshape(1, 3, 1))


def flips(M, v):
    a = np.flip(v) * np.arange(3.0)
    b = np.flip(M) * M
    c = np.flip(M, 1) @ v
    d = np.flip(M, axis=(0, 1))[0] * np.fliplr(M)[1]
    e = np.flipud(M)[0] * np.flip(M, axis=0)[1]
    return np.sum(a ** 2) + np.sum(b) + np.sum(c * c) + np.sum(d) + np.sum(e * v)


def flips_t(M, v):
    a = torch.flip(v, (0,)) * torch.arange(3.0, dtype=torch.float64)
    b = torch.flip(M, (0, 1)) * M
    c = torch.flip(M, (1,)) @ v
    d = torch.flip(M, (0, 1))[0] * torch.fliplr(M)[1]
    e = torch.flipud(M)[0] * torch.flip(M, (0,))[1]
    return torch.sum(a ** 2) + torch.sum(b) + torch.sum(c * c) + torch.sum(d) + torch.sum(e * v)


def literals(a, b, v):
    p = np.array([a, b * 2.0, 1.0, a * b])
    q = np.array([[a, 2.0], [b, a * a]])
    r = np.array([v, v * a, np.flip(v)])                   # (3, 3): a stack of arrays
    s = np.array((a, b), dtype=np.float64)
    return np.sum(p * p) + np.sum(q @ np.array([1.0, -2.0])) + np.sum(r @ v) + np.sum(np.sin(s)) \
        + np.sum(np.array([1, 2, 3]) * a) + np.sum(np.asarray(v) * b)


def literals_t(a, b, v):
    f = lambda *xs: torch.stack([torch.as_tensor(x, dtype=torch.float64) for x in xs])  # noqa: E731
    p = f(a, b * 2.0, 1.0, a * b)
    q = torch.stack([f(a, 2.0), f(b, a * a)])
    r = torch.stack([v, v * a, torch.flip(v, (0,))])
    s = f(a, b)
    return torch.sum(p * p) + torch.sum(q @ f(1.0, -2.0)) + torch.sum(r @ v) + torch.sum(torch.sin(s)) \
        + torch.sum(f(1, 2, 3) * a) + torch.sum(v * b)


def shape_arguments(M, v):
    a = np.zeros(M.shape) + M
    b = np.ones(M.shape[0]) * M[:, 0]
    c = np.full(v.shape, 2.0) * v
    d = M.reshape(np.zeros((3, 2)).shape)
    e = np.zeros([2, 3]) + M
    return np.sum(a * a) + np.sum(b) + np.sum(c * c) + np.sum(d[2] * d[0]) + np.sum(e)


def shape_arguments_t(M, v):
    d = M.reshape(3, 2)
    return torch.sum(M * M) + torch.sum(M[:, 0]) + torch.sum(4.0 * v * v) + torch.sum(d[2] * d[0]) + torch.sum(M)


def casts(M, v):
    a = M.astype(np.float32)                 # rounds to float32; the gradient passes through
    b = (M * 4.0).astype(int)                # truncates toward 0: no gradient
    c = (v > 0.0).astype(float) * v
    d = a.astype(M.dtype) * M
    e = np.asarray(M, dtype=np.float32) * M      # float32 * float64: float64, as compiled code computes
    return np.sum(a * M) + np.sum(b * M) + np.sum(c) + np.sum(d) + np.sum(e) + np.sum(v.astype(bool) * v)


def casts_t(M, v):
    a = M.to(torch.float32).to(torch.float64)
    b = torch.trunc(M.detach() * 4.0)
    c = (v > 0.0).to(torch.float64) * v
    d = a * M
    return torch.sum(a * M) + torch.sum(b * M) + torch.sum(c) + torch.sum(d) + torch.sum(a * M) \
        + torch.sum((v != 0).to(torch.float64) * v)


def _torch_args(args):
    return [torch.tensor(a, dtype=torch.float64, requires_grad=True) if isinstance(a, (np.ndarray, float)) else a
            for a in args]


CASES = {
    "reshape": (reshapes, reshapes_t, (np.arange(6.0) / 7 - 0.3, 3, 2)),
    "ravel_flatten_copy": (flat, flat_t, (X.copy(),)),
    "squeeze_expand_dims": (axes, axes_t, (X.copy(), W.copy())),
    "transpose_swapaxes_moveaxis": (permutes, permutes_t, (X.copy(), W.copy())),
    "flip": (flips, flips_t, (X.copy(), W.copy())),
    "array_literals": (literals, literals_t, (0.7, -1.3, W.copy())),
    "shape_arguments": (shape_arguments, shape_arguments_t, (X.copy(), W.copy())),
    "astype": (casts, casts_t, (X.copy(), W.copy())),
}


def _float_positions(args):
    return tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_gradients_and_tangents(name):
    fn, tfn, args = CASES[name]
    wrt = _float_positions(args)
    targs = _torch_args(args)
    expected = torch.autograd.grad(tfn(*targs), [targs[k] for k in wrt])
    rtol = 1e-6 if name == "astype" else 1e-12       # float32 rounding: torch's and numpy's agree to that
    grads = {}
    for backend in BACKENDS:
        assert srcgrad.jit(fn, backend=backend)(*args) == pytest.approx(fn(*args), rel=1e-13)
        got = srcgrad.grad(fn, wrt=wrt, backend=backend)(*args)
        got = got if isinstance(got, tuple) else (got,)
        grads[backend] = got
        for k, g, e in zip(wrt, got, expected):
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol, atol=1e-12, err_msg=f"{backend} argument {k}")
            if name != "astype":        # finite differences cannot see through the float32 rounding
                np.testing.assert_allclose(g, numeric_gradient(fn, args, k), rtol=1e-6, atol=1e-7)
        tangents = [R.normal(size=np.shape(args[k])) if isinstance(args[k], np.ndarray) else R.normal()
                    for k in wrt]
        full = list(args)
        tangent_args = [np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 if isinstance(a, float) else a
                        for a in args]
        for k, t in zip(wrt, tangents):
            tangent_args[k] = t
        value, dot = srcgrad.jvp(fn, tuple(full), tuple(tangent_args), backend=backend)
        assert value == pytest.approx(fn(*args), rel=1e-13)
        assert dot == pytest.approx(sum(float(np.sum(g * t)) for g, t in zip(got, tangents)), rel=1e-10, abs=1e-12)
    for gp, gl in zip(grads["python"], grads["llvm"]):
        np.testing.assert_allclose(gp, gl, rtol=1e-12, atol=1e-14)


def test_float32_arrays_get_their_gradient():
    def f(x):
        return np.sum(x.reshape(2, 2).T @ np.array([1.0, 2.0]) * np.flip(x)[:2])
    x = np.array([0.5, -1.5, 2.0, 0.25], dtype=np.float32)
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    (e,) = torch.autograd.grad(torch.sum(tx.reshape(2, 2).T @ torch.tensor([1.0, 2.0], dtype=torch.float64)
                                         * torch.flip(tx, (0,))[:2]), [tx])
    for backend in BACKENDS:
        g = srcgrad.grad(f, backend=backend)(x)
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-6)
        _, dot = srcgrad.jvp(f, (x,), (np.ones(4, dtype=np.float32),), backend=backend)
        assert dot == pytest.approx(float(np.sum(e.numpy())), rel=1e-6)


# ---------------------------------------------------------------------- arrays as results
def returns_views(M):
    return np.flip(M.T, 0)      # M.T of float32: the general permutation


def returns_reshape(M):
    return M.reshape(3, -1)


def returns_expanded(v):
    return np.expand_dims(v, (0, 2))


def returns_moved(M):
    return np.moveaxis(np.expand_dims(M, 1), 0, 2)


def returns_casts(M):
    return (M * 3.0).astype(np.int64)


def returns_float32(M):
    return M.astype(np.float32)


def returns_bools(M):
    return M.astype(bool)


def returns_int_literal(n):
    return np.array([n, 2, n * n])


def returns_bool_literal(n):
    return np.array([[n > 1, True], [False, n < 1]])


def returns_float32_literal(a):
    return np.array([a, 1.0 / 3.0], dtype=np.float32)


def returns_stack(v, w):
    return np.array([v, w, v])


def returns_ravel_of_strided(M):
    return np.ravel(M[:, ::2])


def returns_float32_of_ints(n):
    return n.astype(np.float32)


def returns_reshape_any_negative(x):
    return x.reshape(-2, 3)           # numpy takes any negative size as the one to compute


BIG = np.array([2 ** 60 + 2 ** 36 + 1, -(2 ** 62) - 2 ** 38 - 1, 3, 16777217])


@pytest.mark.parametrize("fn,args", [
    (returns_views, (X,)), (returns_reshape, (X,)), (returns_expanded, (W,)), (returns_moved, (X,)),
    (returns_casts, (np.array([[-1.7, 0.2, np.nan], [np.inf, 2.9, -0.0]]),)), (returns_float32, (X,)),
    (returns_bools, (np.array([[0.0, np.nan, -0.0], [1.0, -2.0, 0.0]]),)), (returns_int_literal, (3,)),
    (returns_bool_literal, (3,)), (returns_float32_literal, (0.1,)), (returns_stack, (W, -W)),
    (returns_ravel_of_strided, (X,)), (returns_float32_of_ints, (BIG,)), (returns_reshape_any_negative, (W.repeat(2),)),
    (returns_int_literal, (2 ** 31 + 1,)),
    # float32 stays float32 where numpy keeps it
    (returns_views, (X.astype(np.float32),)), (returns_reshape, (X.astype(np.float32),)),
    (returns_moved, (X.astype(np.float32),)), (returns_stack, (W.astype(np.float32), -W.astype(np.float32))),
    (returns_stack, (W.astype(np.float32), W)), (returns_casts, (X.astype(np.float32),)),
    (returns_ravel_of_strided, (X.astype(np.float32),)),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_array_results_are_numpy_s(fn, args, backend):
    with np.errstate(invalid="ignore"):
        want = fn(*args)
        got = srcgrad.jit(fn, backend=backend)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------- views: writes show through
def writes_through_views(x):
    t = np.zeros((2, 3))
    v = t.T                    # a view, as numpy's
    v[1, 0] = x
    f = np.flip(t, 1)
    f[0, 0] = 2.0 * x          # t[0, 2]
    e = np.expand_dims(t, 0)
    e[0, 1, 1] = 3.0
    r = np.zeros(6).reshape(2, 3)      # a reshape of a new array is a view of it
    r[1, 2] = x * x
    return np.sum(t * np.arange(6.0).reshape(2, 3)) + np.sum(r)


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_through_views_show_in_the_array(backend):
    assert srcgrad.jit(writes_through_views, backend=backend)(0.7) == pytest.approx(writes_through_views(0.7))


def writes_into_reshape_of_argument(x):
    y = x.reshape(2, 3)
    y[0, 0] = 1.0
    return np.sum(x)


def writes_before_reshape_and_flatten(x):
    t = x * 2.0
    t[0] = 1.0                          # before the reshape: a view or a copy reads the same
    y = t.flatten()                     # a copy, whatever t's layout
    t[1] = -1.0
    return np.sum(t.reshape(2, 3)[0] * y[:3])


def writes_into_reshape_in_loop(x, n):
    s = 0.0
    for i in range(n):
        y = x.reshape(2, 3)
        s += np.sum(y)
        x[0] = s                        # after the reshape of the next iteration's view or copy
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_where_view_or_copy_cannot_show_compile(backend):
    x = np.arange(6.0) / 5
    assert srcgrad.jit(writes_before_reshape_and_flatten, backend=backend)(x) == \
        pytest.approx(writes_before_reshape_and_flatten(x), rel=1e-14)


def reshape_of_strided_then_summed(M, n):
    return np.sum(M[:, ::2].reshape(n) * np.arange(4.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reshape_of_a_non_contiguous_array_copies(backend):
    M = np.arange(12.0).reshape(3, 4)
    assert srcgrad.jit(reshape_of_strided_then_summed, backend=backend)(M[:2], 4) == \
        reshape_of_strided_then_summed(M[:2], 4)
    g = srcgrad.grad(reshape_of_strided_then_summed, backend=backend)(M[:2], 4)
    np.testing.assert_array_equal(g, [[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 3.0, 0.0]])


# ---------------------------------------------------------------------- errors at run time
def reshape_to(x, n):
    return np.sum(x.reshape(n, -1))


def reshape_exactly(x, n):
    return np.sum(np.reshape(x, (n,)))


def squeeze_axis_0(M):
    return np.sum(np.squeeze(M, 0))


def stack_two(v, w):
    return np.sum(np.array([v, w]))


@pytest.mark.parametrize("fn,args", [
    (reshape_exactly, (np.ones(6), 4)), (reshape_to, (np.ones(6), 4)), (reshape_to, (np.ones(0), 0)),
    (squeeze_axis_0, (np.ones((2, 3)),)), (stack_two, (np.ones(2), np.ones(3))),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_errors_are_numpy_s(fn, args, backend):
    with pytest.raises(ValueError) as want:
        fn(*args)
    with pytest.raises(ValueError) as got:
        srcgrad.jit(fn, backend=backend)(*args)
    assert str(want.value) in str(got.value)


# ---------------------------------------------------------------------- refusals
def order_f(x):
    return np.sum(x.reshape(2, 3, order="F"))


def squeeze_without_axis(M):
    return np.sum(np.exp(M).squeeze())


def asarray_of_number(a):
    return np.sum(np.asarray(a))


def array_of_number(a):
    return np.sum(np.array(a * 2.0))


def unknown_keyword(x):
    return np.sum(np.flip(x, axes=0))


def axis_not_constant(M, k):
    return np.sum(np.flip(M, k))


def astype_complex(x):
    return np.sum(x.astype(np.complex128))


def ragged_rows(a):
    return np.sum(np.array([[a, 1.0], [2.0]]))


def mixed_literal(a, v):
    return np.sum(np.array([a, v]))


def axis_out_of_range(M):
    return np.sum(np.expand_dims(M, 3))


def bad_permutation(M):
    return np.sum(np.transpose(M, (0, 0)))


def float_literal_as_ints(a):
    return np.sum(np.array([a, 1.5], dtype=int))


def squeeze_everything(v):
    return np.squeeze(np.expand_dims(v, 0)[:, :1], axis=(0, 1))


@pytest.mark.parametrize("fn,args,error,says", [
    (order_f, (np.ones(6),), srcgrad.UnsupportedSyntaxError, "order='F'"),
    (squeeze_without_axis, (np.ones((2, 1)),), srcgrad.UnsupportedSyntaxError, "without axis= of an array computed"),
    (asarray_of_number, (1.0,), srcgrad.UnsupportedSyntaxError, "np.asarray of a number"),
    (array_of_number, (1.0,), srcgrad.UnsupportedSyntaxError, "np.array of a number"),
    (unknown_keyword, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "the keyword axes= of np.flip"),
    (axis_not_constant, (np.ones((2, 2)), 1), srcgrad.UnsupportedSyntaxError, "not a constant integer"),
    (astype_complex, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "the dtype np.complex128"),
    (ragged_rows, (1.0,), srcgrad.TypingError, "rows of different lengths"),
    (mixed_literal, (1.0, np.ones(2)), srcgrad.TypingError, "mixing numbers and arrays"),
    (axis_out_of_range, (np.ones((2, 2)),), srcgrad.TypingError, "axis 3 is out of bounds"),
    (bad_permutation, (np.ones((2, 2)),), srcgrad.TypingError, "repeated axis"),
    (float_literal_as_ints, (1.0,), srcgrad.TypingError, "convert each element"),
    (squeeze_everything, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "0-d array"),
    (writes_into_reshape_of_argument, (np.ones(6),), srcgrad.UnsupportedSyntaxError, "view for some layouts"),
    (writes_into_reshape_in_loop, (np.ones(6), 2), srcgrad.UnsupportedSyntaxError, "view for some layouts"),
])
def test_refusals_name_the_construct_and_the_line(fn, args, error, says):
    with pytest.raises(error, match=says.replace("(", r"\(").replace(")", r"\)")) as info:
        srcgrad.jit(fn)(*args)
    assert "test_numpy_shapes.py" in str(info.value)


# ---------------------------------------------------------------------- x.dtype
def by_dtype(x, n):
    scale = 2.0 if x.dtype == np.float32 else 1.0
    other = 10.0 if n.dtype != x.dtype else 0.0
    return np.sum(n.astype(x.dtype) * scale * x) + other + (100.0 if x.dtype == float else 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_known_when_compiling(backend, dtype):
    x, n = np.array([0.5, -1.0], dtype=dtype), np.array([1, 2])
    assert srcgrad.jit(by_dtype, backend=backend)(x, n) == pytest.approx(by_dtype(x, n), rel=1e-7)
    np.testing.assert_allclose(srcgrad.grad(by_dtype, backend=backend)(x, n),
                               [2.0 if dtype is np.float32 else 1.0, 4.0 if dtype is np.float32 else 2.0])


# ---------------------------------------------------------------------- squeeze() of arguments
def squeezes(x, p):
    y = x.squeeze()

    def inner(a):
        return np.squeeze(a)
    z = inner(p["w"])
    return np.sum(y * np.sin(y)) + np.sum(z * np.arange(z.shape[0])), y.ndim


@pytest.mark.parametrize("backend", BACKENDS)
def test_squeeze_without_axis_of_arguments(backend):
    """The rank of x.squeeze() depends on which axes have size 1: for an argument, the function
    is specialised on them (compiled again for another pattern)."""
    f = srcgrad.grad(squeezes_loss, wrt=(0, 1), backend=backend)
    for x, w in [(R.standard_normal((3, 1)), R.standard_normal((1, 4))),
                 (R.standard_normal((1, 3, 1)), R.standard_normal((4, 1))),
                 (R.standard_normal((2, 3)), R.standard_normal(4))]:
        p = {"w": w}
        assert srcgrad.jit(squeezes, backend=backend)(x, p) == pytest.approx(squeezes(x, p), rel=1e-13)
        gx, gw = f(x, w)
        np.testing.assert_allclose(gx, numeric_gradient(squeezes_loss, (x, w), 0), rtol=1e-7)
        np.testing.assert_allclose(gw, np.arange(4.0).reshape(w.shape))
    assert len(f._cache) == 3


def test_squeeze_of_an_argument_under_translation_validation():
    """The fuzzer's validation lowers functions itself: with the arguments' axes of size 1."""
    from tests.fuzz.validate import validate
    validate(squeezes_loss, (R.standard_normal((3, 1)), R.standard_normal((1, 4))), wrt=(0, 1))


def squeezes_loss(x, w):
    return squeezes(x, {"w": w})[0]


D32 = np.dtype("float32")       # a global dtype object


def dtype_values(x, y):
    t = x.dtype                                   # a dtype as a value: known when compiling
    z = y.astype(t)
    w = np.zeros(3, dtype=t) + 1.0
    u = np.asarray(y, dtype=np.dtype("float32"))
    same = 1.0 if t == np.float32 else 0.0
    also = 1.0 if D32 == t else 0.0
    f64 = np.float64

    def cast(a, d=t):
        return a.astype(d)
    return np.sum(z * y) + np.sum(w) + np.sum(u * u) + same + also, z, cast(y), np.ones(2, dtype=D32), y.astype(f64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_as_a_value(backend, dtype):
    x, y = np.ones(3, dtype=dtype), np.array([0.5, -1.0 / 3.0, 2.0])
    got, want = srcgrad.jit(dtype_values, backend=backend)(x, y), dtype_values(x, y)
    assert got[0] == pytest.approx(float(want[0]), rel=1e-7)
    for a, b in zip(got[1:], want[1:]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    g = srcgrad.grad(dtype_values_sum, wrt=1, backend=backend)(x, y)
    z, u = y.astype(dtype).astype(float), y.astype(np.float32).astype(float)     # casts pass gradients through
    np.testing.assert_allclose(g, z + y + 2 * u, rtol=1e-15)


def dtype_values_sum(x, y):
    return dtype_values(x, y)[0]


def dtype_rebound_in_loop(x, n):
    t = x.dtype
    while n > 0:
        t = np.float64
        n -= 1
    return np.sum(x.astype(t))


def dtype_rebound_in_if(x, c):
    t = x.dtype
    if c > 0:
        t = np.float64
    return np.sum(x.astype(t))


def dtype_as_number(x):
    t = x.dtype
    return t + 1.0


def dtype_attribute(x):
    return x.dtype.itemsize * 1.0


def not_a_dtype(x):
    t = x.size
    return np.sum(x.astype(t))


@pytest.mark.parametrize("fn,error,says", [
    (dtype_rebound_in_loop, srcgrad.UnsupportedSyntaxError, "a dtype 't' that a loop rebinds"),
    (dtype_rebound_in_if, srcgrad.UnsupportedSyntaxError, "a dtype 't' that an `if` defines or rebinds"),
    (dtype_as_number, srcgrad.TypingError, "t is a dtype, where a number or an array is needed"),
    (dtype_attribute, srcgrad.UnsupportedSyntaxError, "the attribute `.itemsize` of x.dtype"),
    (not_a_dtype, srcgrad.TypingError, "t is not a dtype"),
])
def test_dtype_values_refused_where_they_change_at_run_time(fn, error, says):
    args = (np.ones(2, dtype=np.float32),) + ((2,) if fn in (dtype_rebound_in_loop, dtype_rebound_in_if) else ())
    with pytest.raises(error, match=re.escape(says)) as info:
        srcgrad.jit(fn)(*args)
    assert "test_numpy_shapes.py" in str(info.value)


# ---------------------------------------------------------------------- containers as lists and shapes
def from_containers(v, M):
    s = M.shape
    rows = [v * float(i) for i in range(2)]
    pair = (v[0], v[1] * v[2])
    a = np.array([v[i] * v[i] for i in range(3)])         # a comprehension over a known range
    b = np.array(rows)                                     # a local list of arrays
    c = np.array(pair) * 2.0 + np.asarray([v[2], v[0]])  # a local tuple of numbers; asarray of a list
    d = np.zeros(s) + M.reshape(s)
    return np.sum(a) + np.sum(b @ v) + np.sum(c * c) + np.sum(d * d)


@pytest.mark.parametrize("backend", BACKENDS)
def test_np_array_and_shapes_of_containers(backend):
    v, M = W.copy(), X.copy()
    assert srcgrad.jit(from_containers, backend=backend)(v, M) == pytest.approx(from_containers(v, M), rel=1e-13)
    gv, gM = srcgrad.grad(from_containers, wrt=(0, 1), backend=backend)(v, M)
    np.testing.assert_allclose(gv, numeric_gradient(from_containers, (v, M), 0), rtol=1e-7)
    np.testing.assert_allclose(gM, numeric_gradient(from_containers, (v, M), 1), rtol=1e-7)


# ---------------------------------------------------------------------- float32 gradients (were zero through to_f64)
def f32_slices(x):
    return np.sum(x[1:] * x[:-1]) + x[0] * 3.0


def f32_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s + np.sum(np.sin(x))


def f32_views(x):
    return np.sum(np.array([x, np.flip(x)]) @ np.ones(4)) + np.sum(x.reshape(2, 2)[0] ** 2) + np.max(x)


def f32_matrix(M):
    return np.sum(M.T @ np.ones(2)) + np.sum(np.moveaxis(M, 0, 1) ** 2) + np.sum(M.astype(np.float64) * M)


@pytest.mark.parametrize("fn", [f32_slices, f32_loop, f32_views, f32_matrix])
@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_gradients_are_the_float64_ones(fn, backend):
    a = np.array([0.5, -1.5, 2.0, 0.25], dtype=np.float32)
    a = a.reshape(2, 2) if fn is f32_matrix else a
    want = srcgrad.grad(fn, backend="python")(a.astype(np.float64))
    g = srcgrad.grad(fn, backend=backend)(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-6)
    t = np.linspace(-1.0, 1.0, a.size).reshape(a.shape)
    _, dot = srcgrad.jvp(fn, (a,), (t.astype(np.float32),), backend=backend)
    assert dot == pytest.approx(float(np.sum(want * t)), rel=1e-6)


def float32_literals(a, v):
    return np.sum(np.array([a, a * a], dtype=np.float32) * 3.0) + np.sum(np.array([v, v * a], dtype=np.float32) @ v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_literals_differentiate_as_float64(backend):
    a, v, ta, tv = 0.3, np.array([0.1, 0.2]), 1.0, np.array([0.5, -0.25])
    ga, gv = srcgrad.grad(float32_literals, wrt=(0, 1), backend=backend)(a, v)
    assert ga == pytest.approx(3.0 + 6.0 * a + float(np.sum(v * v)), rel=1e-7)      # float32 rounding
    np.testing.assert_allclose(gv, 2.0 * v + 2.0 * a * v, rtol=1e-7)
    _, dot = srcgrad.jvp(float32_literals, (a, v), (ta, tv), backend=backend)
    assert dot == pytest.approx(ga * ta + float(np.sum(gv * tv)), rel=1e-12)
