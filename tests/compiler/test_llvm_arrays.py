"""How the llvm backend passes arrays in and out: any strides, views of arguments, and
arrays whose strides are not a whole number of elements."""
import numpy as np
import pytest

import srcgrad


def transposed(x):
    return x.T


def reversed_rows(x):
    return x[::-1, 1:]


def fresh_then_transposed(x):
    y = x * 2.0
    return y.T


def write_then_reverse(x):
    x[1] = 7.0
    return x[::-1]


@pytest.mark.parametrize("fn", [transposed, reversed_rows, fresh_then_transposed])
def test_returned_views_match_numpy(fn):
    x = np.arange(12.0).reshape(3, 4)
    got = srcgrad.jit(fn, backend="llvm")(x)
    np.testing.assert_array_equal(got, fn(x.copy()))


def test_a_returned_view_of_an_argument_shares_its_memory_like_numpy():
    x = np.arange(12.0).reshape(3, 4)
    view = srcgrad.jit(transposed, backend="llvm")(x)
    x[0, 0] = 100.0
    assert view[0, 0] == 100.0


def test_arguments_with_byte_strides_work_and_receive_writes():
    rec = np.zeros(4, dtype=[("a", "f8"), ("b", "i4")])        # field stride 12 bytes
    rec["a"] = [1.0, 2.0, 3.0, 4.0]
    expected_rec = rec.copy()
    expected = write_then_reverse(expected_rec["a"])
    got = srcgrad.jit(write_then_reverse, backend="llvm")(rec["a"])
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(rec["a"], expected_rec["a"])


def dot_rows(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s += X[i, j] * w[j]
    return s


@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_gradients_on_any_layout_agree_with_the_python_backend(layout):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((40, 70))
    X = {"C": base[:, :33], "F": np.asfortranarray(base[:, :33]), "strided": base[:, ::2][:, :33],
         "negative": base[::-1, ::-2][:, :33]}[layout]
    w = rng.standard_normal(33)
    native = srcgrad.grad(dot_rows, wrt=(0, 1), backend="llvm")(X, w)
    python = srcgrad.grad(dot_rows, wrt=(0, 1), backend="python")(X, w)
    for a, b in zip(native, python):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def neighbours(x, start, k):
    t = 0.0
    for i in range(start, x.shape[0] - 1):
        t += x[i + k] - 2.0 * x[i - 1]
    return t


def stepped(x, s):
    t = 0.0
    for i in range(0, x.shape[0], s):
        t += x[i]
    return t


def test_loops_checked_once_still_raise_at_the_right_index():
    # the unchecked copy of the loop runs only when every access is in bounds throughout;
    # otherwise the checked copy raises (or wraps a negative index round) as Python does
    x = np.arange(1.0, 8.0) ** 2
    f = srcgrad.jit(neighbours, backend="llvm")
    for start, k in [(1, 1), (0, 1), (3, 0), (7, 1)]:
        assert f(x, start, k) == neighbours(x, start, k)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 of 'x' with size 7"):
        f(x, 1, 2)
    with pytest.raises(IndexError, match="index -8 is out of bounds for axis 0 of 'x' with size 7"):
        f(x, 0, -8)


def two_step_offsets(x, a, b):
    # indices two additions away from the loop variable, as a reversed range's 1 + k - 1
    t = 0.0
    for k in range(x.shape[0] - 2, -1, -1):
        i = 1 + k
        t += x[i - b] * 0.5 + x[(i + a) - 1]
    return t


def test_two_step_offsets_are_checked_once_and_still_raise_at_the_right_index():
    x = np.arange(1.0, 8.0) ** 2
    f = srcgrad.jit(two_step_offsets, backend="llvm")
    for a, b in [(0, 0), (1, 1), (-1, 2), (0, 7), (-6, 1)]:
        assert f(x, a, b) == two_step_offsets(x, a, b)          # in bounds, or wrapping like Python
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 of 'x' with size 7"):
        f(x, 2, 0)
    with pytest.raises(IndexError, match="index -8 is out of bounds for axis 0 of 'x' with size 7"):
        f(x, 0, 9)


def test_a_zero_range_step_is_a_value_error_on_both_backends():
    for backend in ("python", "llvm"):
        with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
            srcgrad.jit(stepped, backend=backend)(np.arange(3.0), 0)


def chain(y, z, b):
    t = np.exp(-y * z)                      # everything is computed inside the last op's loop,
    return (1.0 / (1.0 + t)) * t * b        # t once per element though read twice; b broadcasts


def chain_with_write(y, z):
    t = y * 2.0
    y[0] = 100.0                            # t must see the old y[0]: not fused
    return t + z


def test_fused_elementwise_chains_give_numpys_numbers():
    from srcgrad.backends.llvm.fusion import lazy_ops
    rng = np.random.default_rng(2)
    y, z, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 4)), rng.standard_normal(4)
    f = srcgrad.jit(chain, backend="llvm")
    np.testing.assert_allclose(f(y, z, b), chain(y, z, b), rtol=1e-15)
    fn = f._spec().code_ir
    assert sorted(op.prim for op in lazy_ops(fn)) == ["add", "div", "exp", "mul", "mul", "neg"]
    y2 = y.copy()
    np.testing.assert_array_equal(srcgrad.jit(chain_with_write, backend="llvm")(y2, z), chain_with_write(y.copy(), z))


def test_fused_chains_still_check_broadcasting():
    with pytest.raises(ValueError, match="could not be broadcast"):
        srcgrad.jit(chain, backend="llvm")(np.ones((5, 4)), np.ones((5, 3)), np.ones(4))


def scaled(x):
    return x * 2.0


def test_returned_new_arrays_are_handed_over_not_copied_nor_leaked():
    import resource
    f = srcgrad.jit(scaled, backend="llvm")
    x = np.ones(1 << 17)                                   # 1 MiB per result
    for _ in range(20):
        f(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(500):                                   # 500 MiB if results leaked
        r = f(x)
    assert r[0] == 2.0 and r.flags.writeable
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024     # KiB


def logistic(X, y, w):
    return np.sum(np.log1p(np.exp(-y * (X @ w)))) + 0.05 * np.dot(w, w)


@pytest.mark.parametrize("rows_of_y", [6, 1])
def test_lazy_row_dots_and_sums_agree_with_the_python_backend(rows_of_y):
    # y of one row broadcasts: the gradient's sum_to then really sums (the strict copy runs)
    rng = np.random.default_rng(3)
    X, w = rng.standard_normal((6, 4)), rng.standard_normal(4)
    y = np.sign(rng.standard_normal(rows_of_y))
    for wrt in (1, 2):
        native = srcgrad.value_and_grad(logistic, wrt=wrt, backend="llvm")(X, y, w)
        python = srcgrad.value_and_grad(logistic, wrt=wrt, backend="python")(X, y, w)
        assert native[0] == pytest.approx(python[0], rel=1e-12)
        np.testing.assert_allclose(native[1], python[1], rtol=1e-12)
    g = srcgrad.grad(logistic, wrt=2, backend="llvm")
    g(X, y, w)
    from srcgrad.backends.llvm.fusion import lazy_ops
    lazy = {op.prim for op in lazy_ops(g._spec().code_ir)}
    assert {"matmul", "exp", "sum_to"} <= lazy


def column_sums_then_scale(A, v):
    return (A.T @ v) * 2.0 + np.sum(A @ v[:A.shape[1]])


def test_lazy_values_of_transposes_and_slices():
    rng = np.random.default_rng(4)
    A, v = rng.standard_normal((5, 3)), rng.standard_normal(5)
    np.testing.assert_allclose(srcgrad.jit(column_sums_then_scale, backend="llvm")(A, v),
                               column_sums_then_scale(A, v), rtol=1e-13)
    np.testing.assert_allclose(srcgrad.grad(lambda_free_sum, backend="llvm")(A, v),
                               srcgrad.grad(lambda_free_sum, backend="python")(A, v), rtol=1e-13)


def lambda_free_sum(A, v):
    return np.sum(column_sums_then_scale(A, v) ** 2)


def typed_slices(x):
    a = x > 0.0
    a[1:] = x[:-1] < 0.5            # bool <- bool
    f = x * 1.0
    f[:2] = a[:2]                   # float <- bool
    k = np.arange(x.shape[0])
    k[1:] = a[1:]                   # int <- bool
    b = x > 1.0
    b[:] = x - 0.3                  # bool <- float: nonzero is True
    c = x < 0.0
    c[:] = k                        # bool <- int
    return (np.sum(f * x) + np.sum(np.where(a, x, 0.0)) + np.sum(k) + np.sum(np.where(b, x, 1.0))
            + np.sum(np.where(c, x, 2.0)))


def test_slice_writes_convert_between_dtypes_as_numpy():
    """A bool array written from a bool array failed to compile on llvm (it went through a
    double): every pair of bool, int64 and float64 converts as numpy assigns."""
    x = np.array([0.3, -0.7, 1.4, 0.0])
    for backend in ("python", "llvm"):
        assert srcgrad.jit(typed_slices, backend=backend)(x) == typed_slices(x)
    np.testing.assert_array_equal(srcgrad.grad(typed_slices, backend="llvm")(x),
                                  srcgrad.grad(typed_slices, backend="python")(x))


def _overlapping_slice_writes(x, y):
    z = x * 1.0
    z[1:] += z[:-1] * 2.0            # every element read before one is written
    z[:-1] = np.tanh(z[1:] + y[:-1])
    return z


def _written_argument(x, y):
    x[1:] = y[:-1] * 2.0 + x[:-1]    # x and y may be one array
    return np.sum(x)


def test_slice_writes_computed_in_their_loop_read_before_they_write():
    x, y = np.linspace(-1.0, 1.0, 7), np.linspace(0.5, -0.5, 7)
    np.testing.assert_allclose(srcgrad.jit(_overlapping_slice_writes)(x, y), _overlapping_slice_writes(x, y),
                               rtol=1e-15)
    a, b = x.copy(), x.copy()
    assert srcgrad.jit(_written_argument)(a, a) == _written_argument(b, b)
    np.testing.assert_array_equal(a, b)


def _slice_write_loss(x, y):
    return np.sum(_overlapping_slice_writes(x, y) ** 2)


def test_slice_write_gradients_match_finite_differences():
    x, y = np.linspace(-1.0, 1.0, 7), np.linspace(0.5, -0.5, 7)
    loss = _slice_write_loss
    gx, gy = srcgrad.grad(loss, wrt=(0, 1))(x, y)
    h = 1e-6
    for k in (0, 3, 6):
        e = np.zeros(7)
        e[k] = h
        assert abs((loss(x + e, y) - loss(x - e, y)) / (2 * h) - gx[k]) < 1e-7
        assert abs((loss(x, y + e) - loss(x, y - e)) / (2 * h) - gy[k]) < 1e-7
