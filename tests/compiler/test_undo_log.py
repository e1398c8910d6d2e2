"""The undo log of reverse mode on the llvm backend (backends/llvm/undo.py): every kind of
write (element, slice and row, index arrays, np.add.at, masks) into an array that is read
again, in straight-line code, under ``if``, in loops and nested loops, gives on llvm the
gradient the python backend gives, and finite differences; float32, int64 and bool arrays
are saved and put back with their own widths; an index out of bounds raises the write's
IndexError; the caller's argument arrays end as the function leaves them; the log grows.

Few functions, each covering several cases: every one is compiled twice (python, llvm)."""
import math

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm.loop_memory import frees_each_iteration
from srcgrad.ir.core import walk_ops

from .test_gradients import numeric_gradient

R = np.random.default_rng(7)
_GRADS = {}


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _check(f, args, wrt, fd=True):
    """llvm's gradient equals python's to 1e-12, and finite differences to ~1e-6."""
    ks = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = {}
    for backend in ("python", "llvm"):
        key = (f, wrt, backend)
        if key not in _GRADS:           # compiled once (llvm's O3 takes seconds on these)
            _GRADS[key] = srcgrad.grad(f, wrt=wrt, backend=backend)
        g = _GRADS[key](*_copies(args))
        grads[backend] = g if isinstance(wrt, tuple) else (g,)
    for k, gp, gn in zip(ks, grads["python"], grads["llvm"]):
        np.testing.assert_allclose(gn, gp, rtol=1e-12, atol=1e-12, err_msg=f"{f.__name__}: llvm vs python, arg {k}")
        if fd:
            np.testing.assert_allclose(gp, numeric_gradient(lambda *a: f(*_copies(a)), args, k), rtol=1e-6,
                                       atol=1e-6, err_msg=f"{f.__name__}: finite differences, arg {k}")
    return grads["llvm"]


# ---------------------------------------------------------------- element writes: setitem

def element_writes(x, c):
    n = x.shape[0]
    y = np.zeros(n)
    # straight-line: written, read, overwritten, read again
    y[0] = x[0] * c
    s = y[0] * y[0]
    y[0] = math.sin(y[0]) + x[1]
    s += y[0] * x[2]
    # under if
    if x[1] > 0.0:
        y[1] = y[0] * x[1]
        s += y[1] * c
    else:
        y[1] = -x[1]
        y[-1] = y[1] * y[0]        # a negative index
    # in a loop, reading the element before and the whole array
    for i in range(1, n):
        y[i] = y[i - 1] * x[i] + c
        s += np.sum(y) * 0.1
    # nested loops: a table read along the row above and across the row
    t = np.zeros((n, 3))
    for i in range(n):
        for j in range(3):
            t[i, j] = x[i] * (j + 1.0) + (t[i - 1, j] * c if i > 0 else 0.0)
            if t[i, j] > 0.5:
                t[i, j] = math.sqrt(t[i, j])
        s += t[i, 0] * t[i, 2]
    return s + np.sum(y * y) + np.sum(t)


def rnn(W, x):
    T = x.shape[0]
    h = np.zeros((T + 1, W.shape[0]))
    for t in range(T):
        h[t + 1] = np.tanh(W @ h[t] + x[t])
    return np.sum(h[T])


def dp(x):
    n = x.shape[0]
    t = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            t[i, j] = x[i] * x[j] + (t[i - 1, j] if i > 0 else 0.0)
    return np.sum(t)


def write_in_if_loop(x):
    y = np.zeros(4)
    for i in range(4):
        if x[i] > 0:
            y[i] = x[i] * x[i]
        else:
            y[i] = -x[i]
    return np.sum(y)


def test_element_writes_and_the_example_programs():
    x = np.array([0.7, -0.4, 1.3, 0.2, -0.9])
    _check(element_writes, (x, 0.6), (0, 1))
    x[1] = 0.8          # the other branch
    _check(element_writes, (x, 0.6), (0, 1))
    _check(rnn, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(6, 3))), (0, 1))
    _check(dp, (R.normal(size=4),), 0)
    _check(write_in_if_loop, (np.array([1.0, -2.0, 3.0, 0.5]),), 0)


# ---------------------------------------------------------------- slice and row writes: setslice

def slice_writes(W, x):
    n = x.shape[0]
    y = np.zeros((n, 3))
    y[0] = x[0] * 2.0                           # a row, straight-line
    y[0, 1:] = np.tanh(y[0, :2])                # a slice reading what it overwrites
    s = np.sum(y[0])
    if x[0, 0] > 0.0:
        y[1, ::2] = y[0, ::2] * x[1, 0]         # a strided slice under if
    else:
        y[1] = W @ y[0]
    for t in range(1, n):
        y[t] = np.tanh(W @ y[t - 1] + x[t])     # rows in a loop, read whole
        y[t, 0] = y[t, 0] * y[t, 2]
        s += np.sum(y) * 0.1
    for i in range(n):
        for j in range(3):
            y[:i + 1, j] = y[:i + 1, j] * 0.9 + x[i, j]     # a column part in nested loops
            if y[i, j] > 0.3:
                y[i:, j] = np.sin(y[i:, j])
    z = np.ones((2, n, 3))
    z[1, :, 1:] = y[:, :2] * y[:, 1:]           # a 2-d slice of a 3-d array
    return s + np.sum(y * y) + np.sum(z * z)


def test_slice_and_row_writes():
    W, x = R.normal(size=(3, 3)) * 0.5, R.normal(size=(5, 3))
    x[0, 0] = 0.5
    _check(slice_writes, (W, x), (0, 1))
    x[0, 0] = -0.5
    _check(slice_writes, (W, x), (0, 1))


# ---------------------------------------------------------------- index arrays: scatter, scatter_add

def index_array_writes(x, idx):
    n = x.shape[0]
    y = np.zeros(n)
    y[idx] = x[idx] * 2.0                   # straight-line, a place named twice
    s = np.sum(y * x)
    if x[0] > 0.0:
        y[idx] = y[idx] * y[idx]
    for k in range(3):
        y[np.array([k, k + 2])] = np.sin(y[np.array([k + 1, k + 2])]) + x[k]
        s += np.sum(y) * y[k]
        for j in range(2):
            y[idx[j:]] = y[idx[j:]] * 0.5 + x[j]
    m = np.zeros((3, n))
    for k in range(3):
        rows = np.array([k, 2 - k])
        m[rows] = m[rows] * 0.7 + x                   # rows: fewer index arrays than axes
        m[[0, 2], np.array([k, k + 1])] = x[k] * m[1, np.array([k, k + 1])]
    return s + np.sum(y * y) + np.sum(m * m)


def add_at_writes(x, idx):
    n = x.shape[0]
    y = np.zeros(n)
    np.add.at(y, idx, x[idx] * 2.0)         # repeated places accumulate
    s = np.sum(y * x)
    if x[1] > 0.0:
        np.add.at(y, idx, y[idx] * y[idx])
    for k in range(3):
        np.add.at(y, np.array([k, k + 1, k + 1]), x[k] * y[k + 2])
        s += np.sum(y * y) * 0.1
        for j in range(2):
            np.add.at(y, idx[j:], np.tanh(y[idx[j:]]))
    m = np.zeros((3, n))
    for k in range(2):
        np.add.at(m, np.array([k, k + 1, k]), m[k + 1] * 0.5 + x)    # rows
    return s + np.sum(y * y) + np.sum(m * m)


def test_index_array_writes():
    x, idx = np.array([0.3, -0.5, 0.8, 0.1, -0.2]), np.array([4, 1, -1, 0])
    for sign in (1.0, -1.0):
        x[0] = x[1] = sign * 0.4
        _check(index_array_writes, (x, idx), 0)
        _check(add_at_writes, (x, idx), 0)


# ---------------------------------------------------------------- masks: setmask

def mask_writes(x, m):
    y = x * 1.5
    y[y > 0.5] = 0.5                        # straight-line: a clip
    s = np.sum(y * x)
    if x[0] > 0.0:
        y[y < 0.0] = y[y < 0.0] * y[y < 0.0]
    for k in range(3):
        y[x > k * 0.3] = np.sin(y[x > k * 0.3]) * x[k]
        s += np.sum(y * y)
        for j in range(2):
            m[m > x[j]] = x[j] * m[j, 1]               # a 2-d mask
    return s + np.sum(y) + np.sum(m * m)


def test_mask_writes():
    x = np.array([0.9, -0.3, 0.45, 0.05, -0.7])
    m = R.normal(size=(4, 2))
    _check(mask_writes, (x, m), (0, 1))
    x[0] = -0.9
    _check(mask_writes, (x, m), (0, 1))


# ---------------------------------------------------------------- float32, int64 and bool arrays

def typed_writes(x, order):
    n = x.shape[0]
    f = np.ones(n, dtype=np.float32)
    pick = order.copy()
    flag = x > 0.0
    s = 0.0
    for i in range(n):
        j = n - 1 - i                       # downwards: the element after j holds a written value
        f[j] = x[j] * 3.0 + f[(j + 1) % n]  # rounded to float32, read back widened
        pick[j] = order[(j + 1) % n]        # an index table, read by the gathers below
        flag[j] = x[j] * f[j] > 0.0
        s += f[j] * x[j] + np.sum(f * x)
        y = x[pick] * f[j]                  # its gradient needs this iteration's indices
        s += np.sum(y * y) + np.sum(np.where(flag, x, 0.0 * x))
        if flag[j]:
            pick[j] = 0
            flag[j] = False
        f[j] = f[j] * x[j]                  # (a float32 array written under if breaks reverse.py)
        s += np.sum(x[pick] * x) + np.sum(np.where(flag, x * x, x))
    return s


def test_float32_int64_and_bool_arrays():
    x, order = np.array([0.4, -0.7, 1.1, 0.3]), np.array([2, 0, 3, 1])
    g = _check(typed_writes, (x, order), 0, fd=False)[0]
    # float32 rounding: finite differences over a wider step
    np.testing.assert_allclose(g, numeric_gradient(typed_writes, (x, order), 0, eps=1e-3), rtol=1e-3)


# ---------------------------------------------------------------- errors, argument arrays, a long loop

def out_of_bounds(x, k):
    y = np.zeros(3)
    for i in range(4):
        y[i + k] = x[i] * y[i - 1]
    return np.sum(y)


def test_an_out_of_bounds_write_raises_the_writes_error():
    x = np.ones(4)
    messages = []
    for run in (srcgrad.jit(out_of_bounds, backend="python"), srcgrad.jit(out_of_bounds, backend="llvm"),
                srcgrad.grad(out_of_bounds, backend="python"), srcgrad.grad(out_of_bounds, backend="llvm")):
        with pytest.raises(IndexError) as got:
            run(x, 0)
        messages.append(str(got.value))
    where = f"{__file__}:{out_of_bounds.__code__.co_firstlineno + 3}:"
    assert messages[0].startswith("index 3 is out of bounds for axis 0 of 'y' with size 3 (" + where), messages
    assert all(m == messages[0] for m in messages), messages


def writes_its_argument(x, c):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * c + x[i]
    x[x > 1.0] = 1.0
    x[[0, 2]] = x[[1, 3]] * c
    return np.sum(x * x)


def test_the_argument_array_ends_as_the_function_leaves_it():
    x = np.array([0.3, 0.5, -0.2, 0.9, 0.4])
    _check(writes_its_argument, (x, 1.3), (0, 1))
    plain = x.copy()
    writes_its_argument(plain, 1.3)
    for backend in ("python", "llvm"):
        given = x.copy()
        _GRADS[writes_its_argument, (0, 1), backend](given, 1.3)
        np.testing.assert_array_equal(given, plain, err_msg=backend)


def long_loop(x):
    y = np.zeros(3)
    s = 0.0
    for i in range(100000):
        y[i % 3] = math.sin(y[(i + 2) % 3]) * 0.5 + x[i % 2]
        s += y[i % 3]
    return s


def test_a_long_loop_grows_the_log():
    x = np.array([0.3, -0.2])
    g = _check(long_loop, (x,), 0, fd=False)[0]
    np.testing.assert_allclose(g, numeric_gradient(long_loop, (x,), 0, eps=1e-4), rtol=1e-6)


# ---------------------------------------------------------------- freeing per iteration (loop_memory.py)

def fresh_arrays(x):
    s = 0.0
    for i in range(3):
        b = x * 2.0                         # a new array each iteration
        s += b[0] * b[1]                    # its old contents are read: the write below saves them
        b[0] = np.sum(b) * x[i]
        s += np.sum(b * b)
    return s


def rnn_read(W, x):
    T = x.shape[0]
    h = np.zeros((T + 1, W.shape[0]))
    s = 0.0
    for t in range(T):
        h[t + 1] = np.tanh(W @ h[t] + x[t])
        s += np.sum(h[t + 1] * h[t + 1])    # the reverse loop writes h[t + 1] again to read it
    return s


def _loops(g):
    """(is the reverse sweep's loop, saves on the log, frees per iteration) of each loop of g's code."""
    return [(any(o.prim == "tape_get" for o in op.body.ops), any(o.prim == "undo_save" for o in walk_ops(op.body)),
             frees_each_iteration(op)) for op in walk_ops(g._spec().code_ir.body) if op.prim in ("for", "while")]


def test_loops_free_per_iteration_unless_the_log_points_into_their_arrays():
    _check(fresh_arrays, (np.array([0.3, 0.5, -0.2]),), 0)
    _check(rnn_read, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))), (0, 1))
    # fresh_arrays' loops save into arrays they allocate: they keep them until the call ends
    loops = _loops(_GRADS[fresh_arrays, 0, "llvm"])
    assert any(saves for _, saves, _ in loops) and not any(frees for _, saves, frees in loops if saves), loops
    # rnn_read's reverse loop saves only into h (allocated before it, handed back by the tape), so it
    # frees its temporaries each iteration (dW's outer products: kept, they would take T times the memory)
    loops = _loops(_GRADS[rnn_read, (0, 1), "llvm"])
    assert (True, True, True) in loops, loops
