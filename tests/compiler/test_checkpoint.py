"""Checkpointing (``grad(f, checkpoint=...)``, ad/checkpoint.py): a loop's reverse sweep by
binomial checkpointing gives the gradient the taped sweep gives, bit for bit, on both backends,
for every number of snapshots (1 up to more than the iterations) and trip count (0 up), for
for loops over any range, while loops, loops with nested loops, branches and break, arrays
written into fresh copies or in place; with value_and_grad and vjp; within bounded memory on
llvm.

Where the taped gradient's reverse loop only accumulates, the passes run it forwards
(run_accumulations_forward), adding in another order: there the two agree to rounding."""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad.ir.core import walk_ops

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
SLOTS = (1, 2, 3, 5, 64)


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _same(a, b, what):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=what)


def _counted_up(compiled):
    """Whether the taped gradient runs a reverse loop forwards (its sums in another order)."""
    return any(op.attrs.get("counted_up") for op in walk_ops(compiled._spec().code_ir.body))


def iterated(x, n):
    s = x
    for i in range(n):
        s = math.sin(s) * 1.1 + 0.01 * i
    return s


def strided(x, a, b):
    s = x
    for i in range(a, b, 3):
        s = s * math.cos(0.1 * i + s)
    return s


def counted_while(x):
    s = x
    k = 0
    while s < 30.0 and k < 60:
        s = s * 1.3 + math.sin(s)
        k += 1
    return s * x


def branchy(x, w, n):
    s = x
    acc = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5
        else:
            s = s + w[i % 3] * s
        for j in range(2):
            acc = acc + s * w[j]
        if acc > 50.0:
            break
    return acc + s


def two_loops(x, w):
    u = x * w
    for i in range(7):
        u = np.tanh(u) + w
    t = np.sum(u)
    for i in range(5):
        t = t * math.cos(t)
    return t


def heat(u0, k, steps):
    u = u0.copy()
    n = u.shape[0]
    for step in range(steps):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = un
    return np.sum(u * u)


def accumulates(x, w):
    y = 0.0
    acc = 0.0
    for i in range(x.shape[0]):
        y = y + 0.1
        acc = acc + x[i] * y * w
    return acc


def table_rows(W, x, steps):
    h = np.zeros((steps + 1, x.shape[0]))
    h[0] = x
    for t in range(steps):
        h[t + 1] = np.tanh(W @ h[t])
    return np.sum(h[steps])


def heat_in_place(u0, k, steps):
    u = u0.copy()
    for step in range(steps):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
    return np.sum(u * u)


def gram(X, w):
    G = np.zeros((X.shape[1], X.shape[1]))
    for i in range(X.shape[0]):
        G += np.outer(X[i], X[i]) * w[i]
    return np.sum(G * G)


def argument_in_place(x, n):
    for i in range(n):
        x[1:] = x[1:] * 0.5 + np.sin(x[:-1])
    return np.sum(x * x)


def replaced_sometimes(x, n):
    u = x.copy()
    for i in range(n):
        if i % 2 == 0:
            u = u * 1.0
        u[0] = u[0] * 0.5 + u[1]
    return np.sum(u)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_loops_bit_for_bit(backend):
    taped = srcgrad.grad(iterated, backend=backend)
    for slots in SLOTS:
        g = srcgrad.grad(iterated, checkpoint=slots, backend=backend)
        for n in (0, 1, 2, 7, 40):
            _same(g(0.3, n), taped(0.3, n), f"{backend}, checkpoint={slots}, n={n}")
    taped = srcgrad.grad(strided, backend=backend)
    for slots in (1, 3):
        g = srcgrad.grad(strided, checkpoint=slots, backend=backend)
        for a, b in ((2, 40), (5, 6), (9, 3)):
            _same(g(0.4, a, b), taped(0.4, a, b), f"{backend}, range({a}, {b}, 3), checkpoint={slots}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loops_reverse_over_their_count(backend):
    taped = srcgrad.grad(counted_while, backend=backend)
    for slots in (1, 2, 4):
        g = srcgrad.grad(counted_while, checkpoint=slots, backend=backend)
        for x in (0.5, 2.0, 40.0):             # some, a few, no iterations
            _same(g(x), taped(x), f"{backend}, checkpoint={slots}, x={x}")
    assert srcgrad.grad(counted_while, checkpoint=2)(0.5) == pytest.approx(
        numeric_gradient(counted_while, (0.5,), 0), rel=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_loops_branches_and_break(backend):
    w = np.array([0.7, -0.4, 1.3])
    taped = srcgrad.grad(branchy, wrt=(0, 1), backend=backend)
    for slots in (1, 2, 6):
        g = srcgrad.grad(branchy, wrt=(0, 1), checkpoint=slots, backend=backend)
        for x, n in ((0.3, 25), (2.5, 3), (0.9, 200)):
            _same(g(x, w, n), taped(x, w, n), f"{backend}, checkpoint={slots}, x={x}, n={n}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_in_fresh_copies_and_value_and_grad(backend):
    rng = np.random.default_rng(3)
    u0 = rng.standard_normal(12)
    taped = srcgrad.value_and_grad(heat, wrt=(0, 1), backend=backend)
    for c in (2, 4, "2KB"):
        g = srcgrad.value_and_grad(heat, wrt=(0, 1), checkpoint=c, backend=backend)
        for steps in (0, 1, 30):
            value, grads = g(u0, 0.2, steps)
            expected_value, expected = taped(u0, 0.2, steps)
            assert value == expected_value
            _same(grads, expected, f"{backend}, checkpoint={c!r}, steps={steps}")
    du0, dk = srcgrad.grad(heat, wrt=(0, 1), checkpoint=3, backend=backend)(u0, 0.2, 30)
    np.testing.assert_allclose(du0, numeric_gradient(heat, (u0, 0.2, 30), 0), rtol=1e-6, atol=1e-8)
    assert dk == pytest.approx(numeric_gradient(heat, (u0, 0.2, 30), 1), rel=1e-6)
    x, w = rng.standard_normal(4), rng.standard_normal(4)
    _same(srcgrad.grad(two_loops, wrt=(0, 1), checkpoint=2, backend=backend)(x, w),
          srcgrad.grad(two_loops, wrt=(0, 1), backend=backend)(x, w), f"{backend}: two loops")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp(backend):
    rng = np.random.default_rng(4)
    u0 = rng.standard_normal(8)
    out, pull = srcgrad.vjp(heat, u0, 0.25, 9, backend=backend, checkpoint=2)
    out_t, pull_t = srcgrad.vjp(heat, u0, 0.25, 9, backend=backend)
    assert out == out_t
    _same(tuple(pull(1.5)[:2]), tuple(pull_t(1.5)[:2]), backend)


def test_accumulating_loops_agree_to_rounding():
    x = np.linspace(-1.0, 1.0, 50)
    taped = srcgrad.grad(accumulates, wrt=(0, 1))
    got, expected = srcgrad.grad(accumulates, wrt=(0, 1), checkpoint=3)(x, 0.3), taped(x, 0.3)
    assert _counted_up(taped)       # the taped sweep runs forwards here (the module doc)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-13)
    assert got[1] == pytest.approx(expected[1], rel=1e-13)
    np.testing.assert_allclose(got[0], numeric_gradient(accumulates, (x, 0.3), 0), rtol=1e-6)


def test_the_adjoint_source_shows_the_schedule():
    g = srcgrad.grad(iterated, checkpoint=3, backend="python")
    g(0.3, 10)
    src = g.adjoint_source
    for part in ("snapshots = [None] * 3", "while fine > 0:", "snapshots[top]", "for i in range(cap,"):
        assert part in src, src


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_written_in_place(backend):
    """A snapshot holds a copy of an array the loop writes in place (a stencil updating its
    state, an accumulated Gram matrix, a table filled row by row, the caller's array)."""
    rng = np.random.default_rng(5)
    cases = [(heat_in_place, (rng.standard_normal(9), 0.2, 13), (0, 1)),
             (gram, (rng.standard_normal((7, 3)), rng.standard_normal(7)), (0, 1)),
             (table_rows, (0.5 * rng.standard_normal((4, 4)), rng.standard_normal(4), 9), (0, 1)),
             (argument_in_place, (rng.standard_normal(5), 8), 0)]
    for f, args, wrt in cases:
        expected = srcgrad.grad(f, wrt=wrt, backend=backend)(*_copies(args))
        # the schedule is the IR's, the same on both backends: llvm (seconds a compilation) takes one
        for slots in (1, 2, 5) if backend == "python" else (2,):
            given = _copies(args)
            _same(srcgrad.grad(f, wrt=wrt, checkpoint=slots, backend=backend)(*given), expected,
                  f"{f.__name__}, {backend}, checkpoint={slots}")
            left = _copies(args)
            f(*left)
            # (llvm's vectorised np.sin is libmvec's, within a few ulp of numpy's: backend="llvm"
            # agrees with Python to rounding, the checkpointed and taped gradients to the bit)
            np.testing.assert_allclose(given[0], left[0], rtol=1e-14, atol=0,
                                       err_msg=f"{f.__name__}: the argument as f leaves it")
    du0, dk = srcgrad.grad(heat_in_place, wrt=(0, 1), checkpoint=2, backend=backend)(*cases[0][1])
    np.testing.assert_allclose(du0, numeric_gradient(heat_in_place, cases[0][1], 0), rtol=1e-6, atol=1e-8)


def test_an_array_replaced_in_some_iteration_is_refused_with_the_rewrite():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as e:
        srcgrad.grad(replaced_sometimes, checkpoint=2)(np.ones(3), 4)
    text = str(e.value)
    assert "checkpoint=" in text and "u[0] = u[0] * 0.5 + u[1]" in text and "un = u.copy()" in text
    # without checkpoint= it is differentiated (the undo log)
    assert np.isfinite(srcgrad.grad(replaced_sometimes)(np.ones(3), 4)).all()


@pytest.mark.parametrize("bad, error, words", [
    (0, ValueError, "at least one snapshot"), (-2, ValueError, "at least one snapshot"),
    ("12 parsecs", ValueError, "a memory budget is a number and a unit"), (2.5, TypeError, "number of snapshots"),
    (True, TypeError, "number of snapshots")])
def test_bad_checkpoint_arguments_are_said_at_once(bad, error, words):
    for make in (lambda: srcgrad.grad(iterated, checkpoint=bad), lambda: srcgrad.value_and_grad(iterated, checkpoint=bad),
                 lambda: srcgrad.vjp(iterated, 0.3, 4, checkpoint=bad)):
        with pytest.raises(error, match=words):
            make()


def test_memory_stays_bounded_on_llvm(tmp_path):
    """A loop carrying an 80 kB array for 4,000 steps tapes 320 MB; 8 snapshots keep 0.6 MB.
    In a fresh process: its peak resident memory is what the call needed."""
    script = textwrap.dedent("""
        import resource, numpy as np, srcgrad
        def decay(x, n):
            a = x.copy()
            for i in range(n):
                a = a * 0.999 + x * 0.001
            return np.sum(a * a)
        x = np.linspace(0.0, 1.0, 10_000)
        g = srcgrad.grad(decay, checkpoint=8, backend="llvm")
        g(x, 3)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        got = g(x, 4000)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
        expected = srcgrad.grad(decay, backend="python")(x, 4000)
        assert np.array_equal(got, expected)
    """)
    path = tmp_path / "bounded.py"           # a file: srcgrad reads the function's source
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) < 40, out.stdout        # MiB
