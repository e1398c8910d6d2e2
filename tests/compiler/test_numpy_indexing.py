"""numpy's indexing beyond ints and slices: ``None``/``np.newaxis``, ``...``, integer index
arrays (gather), boolean masks, the writes ``x[idx] = v``, ``x[idx] += v``, ``x[mask] = v``
and ``np.add.at``: values as numpy's, gradients against PyTorch and finite differences on
both backends (and each other, to 1e-12), forward mode against the gradient, float32 input,
numpy's errors, and the clear refusals."""
import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
IDX = np.array([0, 2, 2, 4, 1])          # a place named twice
PAIRS_I = np.array([[0, 4], [4, -1]])    # 2-D, negative: wraps
PAIRS_J = np.array([1, 2])               # broadcast against PAIRS_I
WRITE_AT = np.array([3, 0, -1])
DISTINCT_I = np.array([[0, 4], [3, 1]])  # with PAIRS_J: four distinct places (PyTorch's gradient of a
                                         # write to a place named twice counts every write)
Y = np.array([0.5, -1.0, 2.0, 0.3, -0.7])
X = np.array([[0.2, -0.4, 1.1], [0.7, 0.3, -1.5], [-0.9, 0.6, 0.4], [1.3, -0.2, 0.8], [0.1, 0.9, -0.6]])
W = np.array([0.3, -1.2, 2.0])


def t(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def check(fn, torch_fn, args, oracle=None, rtol=1e-12):
    """fn's value, gradient (all float arguments) and jvp on both backends, against numpy,
    PyTorch (or ``oracle``: the expected gradients), finite differences and each other (to
    1e-12; ``rtol``: against PyTorch, whose float64 gradient a float32 one is rounded from)."""
    wrt = tuple(range(len(args)))
    f64 = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
    expected_value = fn(*f64)
    if oracle is None:
        targs = [t(a) for a in f64]
        expected = [g.numpy() for g in torch.autograd.grad(torch_fn(*targs), targs)]
    else:
        expected = oracle
    for k in wrt:
        np.testing.assert_allclose(numeric_gradient(fn, f64, k), expected[k], rtol=1e-6, atol=1e-8)
    direction = [np.linspace(0.3, -0.7, np.size(a)).reshape(np.shape(a)) for a in f64]
    direction = [d if isinstance(a, np.ndarray) else float(d) for d, a in zip(direction, f64)]
    got = {}
    for backend in BACKENDS:
        value = srcgrad.jit(fn, backend=backend)(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
        assert value == pytest.approx(expected_value, rel=1e-12, abs=1e-13)
        grads = srcgrad.grad(fn, wrt=wrt, backend=backend)(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        for g, e, a in zip(grads, expected, args):
            assert np.asarray(g).dtype == np.asarray(a).dtype      # as PyTorch's: the argument's dtype
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-13)
        _, dot = srcgrad.jvp(fn, tuple(args), tuple(direction), backend=backend)
        assert dot == pytest.approx(sum(float(np.sum(e * d)) for e, d in zip(expected, direction)),
                                    rel=max(rtol, 1e-11), abs=1e-12)
        got[backend] = grads
    for a, b in zip(got["python"], got["llvm"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


# ---------------------------------------------------------------------- None and ...
def new_axes(y, w):
    outer = y[:, None] * w[None, :]
    return np.sum(np.tanh(outer)) + np.sum(y[None, :] * y[:, np.newaxis] * 0.1) + np.sum(y[1:4, None] ** 2)


def new_axes_torch(y, w):
    return torch.sum(torch.tanh(y[:, None] * w[None, :])) + torch.sum(y[None, :] * y[:, None] * 0.1) \
        + torch.sum(y[1:4, None] ** 2)


def middle_axis(x, w):
    return np.sum(x[:, None, :] * w) + np.sum(x[2, None] * x[None, 1, :]) + np.sum(x[:, 0][:, None] * x)


def middle_axis_torch(x, w):
    return torch.sum(x[:, None, :] * w) + torch.sum(x[2, None] * x[None, 1, :]) + torch.sum(x[:, 0][:, None] * x)


def ellipsis(x, y):
    return np.sum(x[..., 1] * y) + np.sum(x[...] ** 2) + np.sum(x[..., None] * 0.5) + np.sum(np.sin(y[...]))


def ellipsis_torch(x, y):
    return torch.sum(x[..., 1] * y) + torch.sum(x[...] ** 2) + torch.sum(x[..., None] * 0.5) \
        + torch.sum(torch.sin(y[...]))


@pytest.mark.parametrize("fn,torch_fn,args", [
    (new_axes, new_axes_torch, (Y, W)),
    (middle_axis, middle_axis_torch, (X, W)),
    (ellipsis, ellipsis_torch, (X, Y)),
])
def test_new_axes_and_ellipsis(fn, torch_fn, args):
    check(fn, torch_fn, args)


def shapes_of_views(x):
    a = x[:, None, :]
    b = x[None]
    c = x[..., None]
    d = x[1, ..., None]
    return a.shape[0] * 1000 + a.shape[1] * 100 + a.shape[2] * 10 + b.shape[0] + c.shape[2] * 7 + d.shape[1] * 11


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_axes_have_numpy_shapes(backend):
    assert srcgrad.jit(shapes_of_views, backend=backend)(X) == shapes_of_views(X)


def write_through_ellipsis(x, c):
    t = x * 1.0
    t[..., 0] = c
    t[1, ...] = t[1, ...] * 2.0
    return np.sum(t * x)


def write_through_ellipsis_torch(x, c):
    t = x * 1.0
    t[..., 0] = c
    t[1, ...] = t[1, ...] * 2.0
    return torch.sum(t * x)


def test_writes_through_ellipsis():
    check(write_through_ellipsis, write_through_ellipsis_torch, (X, 0.7))


# ---------------------------------------------------------------------- gather
def gathers(y, x):
    a = np.sum(y[IDX] ** 2) + np.sum(y[[0, 2, 2]] * y[[-1, -2, 0]])
    b = np.sum(np.sin(x[IDX]) * x[[1, 1, 3, 0, 4]])        # rows
    c = np.sum(x[PAIRS_I, PAIRS_J] * 1.5) + np.sum(x[IDX, 2]) + np.sum(x[1, [0, 2]] ** 2)
    d = np.sum(x[:, [2, 0, 2]] * np.cos(x[:, [1, 1, 0]]))
    return a + b + c + d + np.sum(y[PAIRS_I] * 0.25)


def gathers_torch(y, x):
    idx, pi, pj = torch.tensor(IDX), torch.tensor(PAIRS_I), torch.tensor(PAIRS_J)
    a = torch.sum(y[idx] ** 2) + torch.sum(y[[0, 2, 2]] * y[[-1, -2, 0]])
    b = torch.sum(torch.sin(x[idx]) * x[[1, 1, 3, 0, 4]])
    c = torch.sum(x[pi, pj] * 1.5) + torch.sum(x[idx, 2]) + torch.sum(x[1, [0, 2]] ** 2)
    d = torch.sum(x[:, [2, 0, 2]] * torch.cos(x[:, [1, 1, 0]]))
    return a + b + c + d + torch.sum(y[pi] * 0.25)


def test_gathers_accumulate_repeated_places():
    check(gathers, gathers_torch, (Y, X))


def gather_by_argument(y, idx):
    return np.sum(y[idx] * y[idx])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_shapes_and_index_arguments(backend):
    idx = np.array([[4, 0, -5], [1, 1, 2]])
    assert srcgrad.jit(gather_by_argument, backend=backend)(Y, idx) == pytest.approx(gather_by_argument(Y, idx))
    g = srcgrad.grad(gather_by_argument, backend=backend)(Y, idx)
    expected = np.zeros(5)
    np.add.at(expected, idx, 2 * Y[idx])
    np.testing.assert_allclose(g, expected, rtol=1e-13)

    def picked(x, i):
        return x[i]
    X3 = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(srcgrad.jit(picked, backend=backend)(X3, idx[:, :2] % 2), X3[idx[:, :2] % 2])


def float32_gather(y, x):
    return np.sum(y[[0, 2, 2]] * y[y > 0.0]) + np.sum(x[[1, 3]] ** 2) + np.sum(x[..., 0][:, None] * x)


def float32_gather_torch(y, x):
    return torch.sum(y[[0, 2, 2]] * y[y > 0.0]) + torch.sum(x[[1, 3]] ** 2) \
        + torch.sum(x[..., 0][:, None] * x)


def test_float32_arrays():
    # float32 elements widen exactly to float64, in which compiled code computes
    y32 = np.array([0.5, -1.0, 2.0, 0.25, -0.75], dtype=np.float32)
    x32 = X.astype(np.float32)
    check(float32_gather, float32_gather_torch, (y32, x32), rtol=1e-6)


# ---------------------------------------------------------------------- masks
def masks(y, x):
    pos = y[y > 0.0]
    rows = x[np.abs(x[:, 0]) > 0.5]           # a mask over the leading axis: whole rows
    return np.sum(pos ** 3) + np.sum(x[x < 0.5] * 2.0) + np.sum(np.sin(rows)) + np.sum(y[y > 10.0])


def masks_torch(y, x):
    return torch.sum(y[y > 0.0] ** 3) + torch.sum(x[x < 0.5] * 2.0) \
        + torch.sum(torch.sin(x[torch.abs(x[:, 0]) > 0.5])) + torch.sum(y[y > 10.0])


def test_masks():
    check(masks, masks_torch, (Y, X))


def mask_length(y, c):
    return y[y > c].shape[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_length_is_known_at_run_time(backend):
    f = srcgrad.jit(mask_length, backend=backend)
    assert [f(Y, c) for c in (-5.0, 0.0, 0.4, 5.0)] == [5, 3, 2, 0]


# ---------------------------------------------------------------------- writes
def masked_write(y, c):
    t = y * 2.0
    t[t > 0.0] = c * c
    u = y.copy()
    u[y < 0.0] = np.sin(y[y < 0.0]) * c
    return np.sum(t * y) + np.sum(u * u)


def masked_write_torch(y, c):
    t = y * 2.0
    t[t > 0.0] = c * c
    u = y.clone()
    u[y < 0.0] = torch.sin(y[y < 0.0]) * c
    return torch.sum(t * y) + torch.sum(u * u)


def index_write(y, v):
    t = y * 1.0
    t[WRITE_AT] = v[:3] * 2.0
    t[[1]] = v[4]
    return np.sum(t * t * y)


def index_write_torch(y, v):
    t = y * 1.0
    t[torch.tensor(WRITE_AT)] = v[:3] * 2.0
    t[[1]] = v[4]
    return torch.sum(t * t * y)


def matrix_writes(x, w):
    t = x * 1.0
    t[[0, 3]] = w                     # rows
    t[DISTINCT_I, PAIRS_J] = 0.5 * w[0]
    t[t > 1.0] = 1.0
    return np.sum(t * x)


def matrix_writes_torch(x, w):
    t = x * 1.0
    t[[0, 3]] = w
    t[torch.tensor(DISTINCT_I), torch.tensor(PAIRS_J)] = 0.5 * w[0]
    t[t > 1.0] = 1.0
    return torch.sum(t * x)


@pytest.mark.parametrize("fn,torch_fn,args", [
    (masked_write, masked_write_torch, (Y, 0.7)),
    (index_write, index_write_torch, (Y, Y[::-1] * 0.5)),
    (matrix_writes, matrix_writes_torch, (X, W)),
])
def test_writes(fn, torch_fn, args):
    check(fn, torch_fn, args)


def repeated_write(y, v):
    t = y * 1.0
    t[IDX] = v                 # places 2 gets v[1], then v[2]: v[2] stays
    return np.sum(t * t * y)


def test_repeated_write_keeps_the_last_value_and_its_gradient():
    v = np.array([0.1, -0.2, 0.3, 0.4, -0.5])
    t = Y.copy()
    t[IDX] = v
    assert t[2] == v[2]
    kept = np.ones(5)
    kept[IDX] = 0.0            # only y[3] is still in t
    dy = t * t + 2 * t * Y * kept
    dv = 2 * t[IDX] * Y[IDX]
    dv[1] = 0.0                # overwritten by v[2]
    check(repeated_write, None, (Y, v), oracle=[dy, dv])


def augmented_write(y, v):
    t = y * 1.0
    t[IDX] += v                # numpy's buffered +=: place 2 gets y[2] + v[2] (once)
    return np.sum(np.sin(t) * y)


def add_at(y, v):
    t = y * 1.0
    np.add.at(t, IDX, v)       # place 2 gets y[2] + v[1] + v[2]
    u = np.zeros((5, 3))
    np.add.at(u, (PAIRS_I, PAIRS_J), v[0] * y[1])
    return np.sum(np.sin(t) * y) + np.sum(u * u)


def add_at_torch(y, v):
    t = y.index_put((torch.tensor(IDX),), v, accumulate=True)
    u = torch.zeros((5, 3), dtype=torch.float64).index_put(
        (torch.tensor(PAIRS_I), torch.tensor(PAIRS_J)), v[0] * y[1], accumulate=True)
    return torch.sum(torch.sin(t) * y) + torch.sum(u * u)


def test_augmented_write_is_buffered_and_add_at_accumulates():
    v = np.array([0.1, -0.2, 0.3, 0.4, -0.5])
    for backend in BACKENDS:
        assert srcgrad.jit(augmented_write, backend=backend)(Y, v) == pytest.approx(augmented_write(Y, v), rel=1e-13)
        assert srcgrad.jit(add_at, backend=backend)(Y, v) == pytest.approx(add_at(Y, v), rel=1e-13)
    t = Y.copy()
    t[IDX] += v
    dt = np.cos(t) * Y
    dy = np.sin(t) + dt
    dv = dt[IDX].copy()
    dv[1] = 0.0                # its sum was overwritten by place 2's second (last) write
    check(augmented_write, None, (Y, v), oracle=[dy, dv])
    check(add_at, add_at_torch, (Y, v))


def writes_into_argument(y, idx, c):
    y[idx] = c
    y[y < 0.0] = 0.0
    np.add.at(y, idx, 1.0)
    return 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_reach_the_caller(backend):
    got, want = Y.copy(), Y.copy()
    idx = np.array([1, 1, 3])
    srcgrad.jit(writes_into_argument, backend=backend)(got, idx, -2.0)
    writes_into_argument(want, idx, -2.0)
    np.testing.assert_array_equal(got, want)


def int_writes(n):
    a = np.arange(6)
    a[[0, 5]] = n
    a[a > 3] = 1
    np.add.at(a, [1, 1], 2)
    return a[0] + a[1] * 10 + a[5] * 100 + a[4] * 1000


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_arrays(backend):
    assert srcgrad.jit(int_writes, backend=backend)(3) == int_writes(3)


# ---------------------------------------------------------------------- errors
def reads_at(y, idx):
    return np.sum(y[idx])


def reads_mask(y, m):
    return np.sum(y[m])


def writes_mask(y, m, v):
    t = y * 1.0
    t[m] = v
    return np.sum(t)


def reads_pairs(x, i, j):
    return np.sum(x[i, j])


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_errors(backend):
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0"):
        srcgrad.jit(reads_at, backend=backend)(Y, np.array([0, 5]))
    with pytest.raises(IndexError, match="index -6 is out of bounds for axis 0"):
        srcgrad.grad(reads_at, backend=backend)(Y, np.array([-6]))
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis "
                                         "is 5 but size of corresponding boolean axis is 4"):
        srcgrad.jit(reads_mask, backend=backend)(Y, np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 3 output values where the mask"):
        srcgrad.jit(writes_mask, backend=backend)(Y, Y > 0.0, np.ones(2))
    with pytest.raises(IndexError, match=r"shape mismatch: indexing arrays could not be broadcast together with "
                                         r"shapes \(2,\) \(3,\)"):
        srcgrad.jit(reads_pairs, backend=backend)(X, np.array([0, 1]), np.array([0, 1, 2]))


def mixed(x):
    return np.sum(x[[0, 1], 1:])


def float_index(x):
    return np.sum(x[x * 2.0])


def two_ellipses(x):
    return np.sum(x[..., ...])


def mask_and_int(x):
    return np.sum(x[x[:, 0] > 0.0, 1])


def add_at_scalar(x):
    t = x * 1.0
    np.add.at(t, 1, 2.0)
    return np.sum(t)


def float_list(x):
    return np.sum(x[[0.5, 1.0]])


def mask_write_2d_value(x):
    t = x * 1.0
    t[x > 0.0] = np.ones((2, 2))
    return np.sum(t)


@pytest.mark.parametrize("fn,error,says", [
    (mixed, srcgrad.UnsupportedSyntaxError, "mixture of index arrays with slices"),
    (float_index, srcgrad.TypingError, "arrays used as indices must be of integer"),
    (two_ellipses, srcgrad.UnsupportedSyntaxError, "two `...`"),
    (mask_and_int, srcgrad.UnsupportedSyntaxError, "a boolean mask combined with other indices"),
    (add_at_scalar, srcgrad.UnsupportedSyntaxError, "np.add.at with the index 1"),
    (float_list, srcgrad.UnsupportedSyntaxError, "the list [0.5, 1.0] as an index"),
    (mask_write_2d_value, srcgrad.UnsupportedSyntaxError, "storing an array of 2 dimensions through a mask"),
])
def test_refusals_name_the_construct_and_the_line(fn, error, says):
    with pytest.raises(error, match=says.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")) as info:
        srcgrad.jit(fn)(X.copy())
    assert "test_numpy_indexing.py" in str(info.value)


def new_axis_out_of_bounds(x):
    return np.sum(x[None, 7, :])


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_error_names_the_axis_past_new_axes(backend):
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 of 'x' with size 5"):
        srcgrad.jit(new_axis_out_of_bounds, backend=backend)(X)


# ---------------------------------------------------------------------- loops and branches
def reads_in_loop(y, c):
    s = 0.0
    for k in range(3):
        s += np.sum(y[IDX] * c * y[k]) + np.sum(y[y > c] ** 2)
    return s


def add_at_in_loop(y, c):
    t = y * 1.0
    for k in range(3):
        np.add.at(t, IDX, c * y[k])      # t is carried by the loop, as for t[i] = v
    return np.sum(t * t)


def add_at_in_loop_torch(y, c):
    t = y * 1.0
    for k in range(3):
        t = t.index_put((torch.tensor(IDX),), (c * y[k]).expand(5), accumulate=True)
    return torch.sum(t * t)


def reads_in_loop_torch(y, c):
    s = 0.0
    for k in range(3):
        s = s + torch.sum(y[torch.tensor(IDX)] * c * y[k]) + torch.sum(y[y > c] ** 2)
    return s


@pytest.mark.parametrize("fn,torch_fn", [(reads_in_loop, reads_in_loop_torch),
                                         (add_at_in_loop, add_at_in_loop_torch)])
def test_in_loops(fn, torch_fn):
    check(fn, torch_fn, (Y, 0.7))


def write_read_in_loop(y, c):
    t = y * 1.0
    for k in range(3):
        t[y > 0.0] = t[y > 0.0] * c + y[k]
    return np.sum(t * t)


def write_in_branch(y, c):
    t = y * 1.0
    if c > 0.0:
        t[IDX] = c
    return np.sum(t * t)


def write_read_in_loop_torch(y, c):
    t = y * 1.0
    for k in range(3):
        t = torch.where(y > 0.0, t * c + y[k], t)
    return torch.sum(t * t)


def write_in_branch_torch(y, c):
    t = y * 1.0
    if c > 0.0:
        places = torch.tensor(sorted(set(IDX.tolist())))     # numpy: a place named twice is written once
        t = t.index_put((places,), c.expand(len(places)))
    return torch.sum(t * t)


@pytest.mark.parametrize("fn,torch_fn", [(write_read_in_loop, write_read_in_loop_torch),
                                         (write_in_branch, write_in_branch_torch)])
def test_writes_through_masks_and_index_arrays_in_loops_and_branches(fn, torch_fn):
    """Issue 12: the undo log puts back what a masked or indexed write overwrote."""
    check(fn, torch_fn, (Y, 0.7))


SCALES = np.array([[1.0, 2.0], [3.0, 4.0]])


def repeated_pair_write(x, c):
    t = x * 1.0
    t[PAIRS_I, PAIRS_J] = SCALES * c       # (4, 2) is named twice: 4c stays, 2c is overwritten
    return np.sum(t * t)


def test_repeated_pair_write_gives_the_gradient_to_the_last_value():
    c = 0.7
    kept = np.ones((5, 3))
    kept[PAIRS_I, PAIRS_J] = 0.0
    check(repeated_pair_write, None, (X, c), oracle=[2 * X * kept, 2 * c * (1.0 + 9.0 + 16.0)])


def bool_writes(y):
    m = y > 0.0
    m[[0, 1]] = True
    m[m] = False          # written through itself
    m[[3]] = 1
    return np.sum(y[m])


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_arrays(backend):
    assert srcgrad.jit(bool_writes, backend=backend)(Y) == bool_writes(Y)


def write_with_new_axes(x, w):
    t = x * 1.0
    t[:, None, 1] = w[0] * 2.0
    t[None, 2] = w
    return np.sum(t * x)


def write_with_new_axes_torch(x, w):
    t = x * 1.0
    t[:, None, 1] = w[0] * 2.0
    t[None, 2] = w
    return torch.sum(t * x)


def test_writes_through_new_axes():
    check(write_with_new_axes, write_with_new_axes_torch, (X, W))
