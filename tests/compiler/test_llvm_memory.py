"""Memory of the llvm backend: what loops allocate is freed each iteration, everything a call
allocated is freed however it ends, and a request too big is a MemoryError, not a crash."""
import math
import resource

import numpy as np
import pytest

import srcgrad


def _peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def temporaries(x, n):
    s = 0.0
    for i in range(n):
        t = x * 2.0                 # 8 KiB each iteration
        s += t[i % 1000]
    return s


def carried(x, n):
    a = np.zeros_like(x)
    for i in range(n):
        a = a * 0.5 + x             # a new array each iteration replaces the last
    return a


def fails_late(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]            # the gradient tapes n items
    return s


def iterated(x, n):
    s = x
    for i in range(n):
        s = math.sin(s)             # the gradient tapes every s
    return s


def sized(n):
    return np.zeros(n)


def test_arrays_made_in_a_loop_are_freed_each_iteration():
    x = np.arange(1000.0)
    before = _peak_kib()
    assert srcgrad.jit(temporaries, backend="llvm")(x, 200_000) == temporaries(x, 2000) * 100    # 1.6 GB if kept
    got = srcgrad.jit(carried, backend="llvm")(x, 100_000)                                      # 0.8 GB if kept
    np.testing.assert_allclose(got, 2.0 * x)
    assert _peak_kib() - before < 200 * 1024


def test_a_call_that_fails_frees_its_tapes_and_arrays():
    g = srcgrad.grad(fails_late, backend="llvm")
    x = np.ones(1_000_000)
    g(x, 1000)
    before = _peak_kib()
    for _ in range(60):                       # 8 MB of tape each: 480 MB if leaked
        with pytest.raises(IndexError, match="index 1000000 is out of bounds"):
            g(x, 1_000_001)
    assert _peak_kib() - before < 200 * 1024


def test_sizes_too_big_or_negative_are_clear_errors():
    f = srcgrad.jit(sized, backend="llvm")
    with pytest.raises(MemoryError, match="compiled code needs 4,611,686,018,427,387,904 items of 8 bytes"):
        f(2 ** 62)
    with pytest.raises(MemoryError, match="could not get them"):
        f(2 ** 50)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        f(-1)
    assert f(3).tolist() == [0.0, 0.0, 0.0]


def test_a_tape_too_big_for_memory_is_a_memory_error():
    g = srcgrad.grad(iterated, backend="llvm")
    assert g(0.5, 3) == pytest.approx(math.cos(0.5) * math.cos(math.sin(0.5)) * math.cos(math.sin(math.sin(0.5))))
    with pytest.raises(MemoryError, match="GiB"):
        g(0.5, 2 ** 61)
    with pytest.raises(MemoryError, match="GiB"):
        g(0.5, 2 ** 45)
