"""vectorize on several threads (issue 29 point 6, srcgrad/threads.py): a large call's outer axis
in blocks shared out among the threads, with the same numbers, bit for bit, as on one thread;
errors as one thread meets them. The size threshold and the block are lowered here so that
small arrays take the path."""
import math

import numpy as np
import pytest

import srcgrad
from srcgrad import threads


def bump(x, y):
    return math.sin(x) * math.exp(-y * y) + math.log1p(x * x)


def branchy(x, y):
    s = 0.0
    for i in range(3):
        if x * i > y:
            s = s + math.tanh(x - y)
        else:
            s = s * x + math.cos(y)
    return s


def positive_root(x, y):
    assert x > -0.9, "x too small"
    return math.sqrt(x + 1.0) * y


def counts(x, y):
    return x > y


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(threads, "PARALLEL_MIN", 1)
    monkeypatch.setattr(threads, "BLOCK", 64)
    before = srcgrad.get_num_threads()
    yield
    srcgrad.set_num_threads(before)


def _at(n, fun, *args):
    srcgrad.set_num_threads(n)
    return fun(*args)


def _same(a, b):
    for p, q in zip(a if isinstance(a, tuple) else [a], b if isinstance(b, tuple) else [b]):
        assert p.dtype == q.dtype and p.shape == q.shape
        np.testing.assert_array_equal(p, q)


RNG = np.random.default_rng(3)
CASES = {
    "vector": (RNG.standard_normal(1031), RNG.standard_normal(1031)),
    "matrix": (RNG.standard_normal((37, 11)), RNG.standard_normal((37, 11))),
    "broadcast column and row": (RNG.standard_normal((29, 1)), RNG.standard_normal(13)),
    "row broadcast down": (RNG.standard_normal((1, 13)), RNG.standard_normal((29, 13))),
    "a number": (RNG.standard_normal(700), 0.25),
    "first axis of length 1": (RNG.standard_normal((1, 1, 500)), RNG.standard_normal(500)),
    "lower rank, cut in its own axis": (RNG.standard_normal((1, 300, 1)), RNG.standard_normal((300, 7))),
    "float32": (RNG.standard_normal(900).astype(np.float32), RNG.standard_normal(900).astype(np.float32)),
    "strided": (RNG.standard_normal(2000)[::3], RNG.standard_normal(2000)[1::3]),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fun", [bump, branchy], ids=["bump", "branchy"])
def test_every_thread_count_gives_the_same_bits(small_threshold, case, fun):
    x, y = CASES[case]
    for compiled in (srcgrad.vectorize(fun), srcgrad.vectorize(srcgrad.grad(fun, wrt=(0, 1)))):
        one = _at(1, compiled, x, y)
        for n in (2, 3, 8):
            _same(_at(n, compiled, x, y), one)
        expected = np.vectorize(fun)(x, y) if compiled.kind == "vectorize" and compiled.fun is fun else None
        if expected is not None:
            np.testing.assert_allclose(one, expected, rtol=1e-6 if one.dtype == np.float32 else 1e-13)


def test_the_parts_agree_with_the_whole_call(monkeypatch):
    x, y = CASES["matrix"]
    whole = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))(x, y)     # below the threshold: one call
    monkeypatch.setattr(threads, "PARALLEL_MIN", 1)
    monkeypatch.setattr(threads, "BLOCK", 64)
    srcgrad.set_num_threads(2)
    parted = srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))(x, y)
    for a, b in zip(whole, parted):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_numbers_and_arrays_of_one_element_run_whole(small_threshold):
    srcgrad.set_num_threads(3)
    assert srcgrad.vectorize(bump)(0.5, 0.25) == pytest.approx(bump(0.5, 0.25))
    got = srcgrad.vectorize(bump)(np.full((1, 1), 0.5), 0.25)
    assert got.shape == (1, 1) and got[0, 0] == pytest.approx(bump(0.5, 0.25))


def test_bool_results(small_threshold):
    x, y = CASES["vector"]
    got = _at(3, srcgrad.vectorize(counts), x, y)
    assert got.dtype == np.bool_ and np.array_equal(got, x > y)


def test_an_error_in_a_part_is_the_one_thread_error(small_threshold):
    x = np.linspace(0.0, 1.0, 1000)
    x[10], x[900] = -0.95, -0.99        # in the first block and in the last
    f = srcgrad.vectorize(positive_root)
    with pytest.raises(AssertionError, match="x too small") as one:
        _at(1, f, x, 2.0)
    with pytest.raises(AssertionError, match="x too small") as three:
        _at(3, f, x, 2.0)
    assert str(one.value) == str(three.value)
    x[10] = 0.5                          # only the last block fails now
    with pytest.raises(AssertionError, match="x too small"):
        _at(3, f, x, 2.0)
    x[900] = 0.5
    assert _at(3, f, x, 2.0).shape == x.shape       # the pool goes on working after errors


def test_set_num_threads_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="at least 1"):
            srcgrad.set_num_threads(bad)


def test_the_default_is_the_cpus_or_the_environment(monkeypatch):
    monkeypatch.setenv("SRCGRAD_NUM_THREADS", "3")
    assert threads._default() == 3
    monkeypatch.delenv("SRCGRAD_NUM_THREADS")
    assert threads._default() >= 1


def test_a_bad_environment_value_is_said(monkeypatch):
    for bad in ("zero", "0", "-2", "1.5"):
        monkeypatch.setenv("SRCGRAD_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="SRCGRAD_NUM_THREADS must be a number of threads"):
            threads._default()


def test_a_block_that_runs_blocks_itself_does_not_wait_forever(small_threshold):
    """A callback inside a block (here: the work itself) running a large call of its own, on a
    pool whose one worker is busy with the outer call: the inner call's caller does all."""
    srcgrad.set_num_threads(2)
    done = []

    def inner(lo, hi):
        done.append((lo, hi))

    def outer(lo, hi):
        threads.run_blocks(inner, 8, 2)

    threads.run_blocks(outer, 4, 1)
    assert sorted(done) == sorted([(0, 2), (2, 4), (4, 6), (6, 8)] * 4)


def test_blocks_cover_the_range_in_order():
    for n in (1, 2, 7, 255, 256, 257, 4096, 10**6 + 3):
        for size in (1, 3, 64, 1 << 16):
            b = threads.blocks(n, size)
            assert b[0][0] == 0 and b[-1][1] == n
            assert all(hi - lo == size for lo, hi in b[:-1]) and 0 < b[-1][1] - b[-1][0] <= size
            assert all(x[1] == y[0] for x, y in zip(b, b[1:]))


def test_python_backend_runs_whole(small_threshold):
    x, y = CASES["vector"]
    f = srcgrad.vectorize(bump, backend="python")
    _same(_at(3, f, x, y), _at(1, f, x, y))
