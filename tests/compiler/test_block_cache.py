"""The block cache (backends/llvm/block_cache.py): compiled code keeps the blocks it frees for
its next call, up to a limit, reuses them (zeroed where calloc is asked), from several threads
at once, and gives them back on ``srcgrad.empty_cache()``."""
import os
import threading

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm.block_cache import default_limit


def decay(x, n):
    a = x.copy()
    for i in range(n):
        a = a * 0.9 + x          # tapes n arrays of 8 kB
    return np.sum(a * a)


def fresh_zeros(x):
    z = np.zeros(x.shape[0])     # calloc: a reused block must come back zeroed
    z[0] = x[0]
    return z


def decay_by_hand(x, n):
    a, g = x.copy(), np.zeros_like(x)
    for _ in range(n):
        a = a * 0.9 + x
    da = 2.0 * a
    for _ in range(n):
        g += da
        da = da * 0.9
    return g + da


@pytest.fixture
def limit():
    yield
    srcgrad.set_cache_limit(default_limit({}))


def test_a_gradient_reuses_the_blocks_its_last_call_freed():
    g = srcgrad.grad(decay, backend="llvm")
    x = np.linspace(0.0, 1.0, 1000)
    first = g(x, 50)
    assert srcgrad.memory_cached() >= 50 * 8000      # the tape's arrays came back to the cache
    np.testing.assert_allclose(g(x, 50), decay_by_hand(x, 50), rtol=1e-12)
    kept = srcgrad.memory_cached()            # and the second result's block, when it died
    for _ in range(5):
        np.testing.assert_array_equal(g(x, 50), first)
    assert srcgrad.memory_cached() == kept    # the same blocks each call, none more


def test_empty_cache_gives_everything_back_and_calls_go_on():
    g = srcgrad.grad(decay, backend="llvm")
    x = np.linspace(0.0, 1.0, 1000)
    g(x, 20)
    assert srcgrad.memory_cached() > 0
    srcgrad.empty_cache()
    assert srcgrad.memory_cached() == 0
    np.testing.assert_allclose(g(x, 20), decay_by_hand(x, 20), rtol=1e-12)


def test_the_limit_bounds_what_is_kept(limit):
    g = srcgrad.grad(decay, backend="llvm")
    x = np.linspace(0.0, 1.0, 1000)
    srcgrad.set_cache_limit(100_000)
    g(x, 50)
    assert 0 < srcgrad.memory_cached() <= 100_000
    srcgrad.set_cache_limit(0)
    assert srcgrad.memory_cached() == 0       # a lower limit gives back what is above it
    np.testing.assert_allclose(g(x, 50), decay_by_hand(x, 50), rtol=1e-12)
    assert srcgrad.memory_cached() == 0


def test_reused_blocks_are_zeroed_where_zeros_were_asked():
    g = srcgrad.grad(decay, backend="llvm")
    f = srcgrad.jit(fresh_zeros, backend="llvm")
    x = np.linspace(1.0, 2.0, 1000)
    for _ in range(3):
        g(x, 10)                              # leaves dirty 8 kB blocks in the cache
        z = f(x)
        assert z[0] == 1.0 and not z[1:].any()


def test_returned_arrays_give_their_blocks_back_when_they_die():
    f = srcgrad.jit(fresh_zeros, backend="llvm")
    srcgrad.empty_cache()
    z = f(np.ones(100_000))                   # 800 kB, numpy's while z lives
    assert srcgrad.memory_cached() == 0
    del z
    assert srcgrad.memory_cached() >= 800_000


def test_threads_share_the_cache_without_losing_a_block():
    g = srcgrad.grad(decay, backend="llvm")
    xs = [np.linspace(0.0, 1.0, 1000) * (k + 1) for k in range(4)]
    expected = [decay_by_hand(x, 30) for x in xs]
    wrong = []

    def work(k):
        for _ in range(40):
            got = g(xs[k], 30)
            if not np.allclose(got, expected[k], rtol=1e-12):
                wrong.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
    srcgrad.empty_cache()
    assert srcgrad.memory_cached() == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_while_threads_allocate_finds_its_cache_whole():
    g = srcgrad.grad(decay, backend="llvm")
    x = np.linspace(0.0, 1.0, 1000)
    g(x, 30)            # compiled before the thread starts: a fork while it compiles would copy a held lock
    stop = []

    def churn():
        while not stop:
            g(x, 30)
    thread = threading.Thread(target=churn)
    thread.start()
    try:
        statuses = []
        for _ in range(5):
            pid = os.fork()
            if pid == 0:                      # the child: only this thread; the lock is free
                ok = np.allclose(g(x, 30), decay_by_hand(x, 30), rtol=1e-12)
                srcgrad.empty_cache()
                os._exit(0 if ok else 1)
            statuses.append(os.waitpid(pid, 0)[1])
    finally:
        stop.append(True)
        thread.join()
    assert statuses == [0] * 5


@pytest.mark.parametrize("text, words", [("lots", "a number of bytes, not 'lots'"), ("-1", "0 or more bytes")])
def test_a_bad_limit_is_a_clear_error(text, words):
    with pytest.raises(ValueError, match=words):
        default_limit({"SRCGRAD_CACHE_LIMIT": text})
    assert default_limit({"SRCGRAD_CACHE_LIMIT": "0"}) == 0
    assert default_limit({}) == 1 << 30
    with pytest.raises(ValueError, match="number of bytes"):
        srcgrad.set_cache_limit(-5)


def recurrence(x):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + np.sin(x[i])     # the undo log grows (realloc) as the loop runs
    return np.sum(y * y)


def recurrence_by_hand(x):
    y = np.zeros_like(x)
    for i in range(1, len(x)):
        y[i] = 0.5 * y[i - 1] + np.sin(x[i])
    dy, dx = 0.0, np.zeros_like(x)
    for i in range(len(x) - 1, 0, -1):
        dy = 2.0 * y[i] + 0.5 * dy
        dx[i] = dy * np.cos(x[i])
    return dx


@pytest.mark.parametrize("n", [300, 5000])
def test_a_log_grown_by_realloc_is_copied_whole_and_its_blocks_are_served_again(n):
    """Issue 27: glibc's realloc handed back blocks of sizes no request asks for, and every
    call left one more in the cache (40 bytes an element a call)."""
    g = srcgrad.grad(recurrence, backend="llvm")
    x = np.sin(np.arange(n) * 0.37)
    expected = recurrence_by_hand(x)
    np.testing.assert_allclose(g(x), expected, rtol=1e-12, atol=1e-14)
    kept = srcgrad.memory_cached()
    for _ in range(20):
        np.testing.assert_allclose(g(x), expected, rtol=1e-12, atol=1e-14)
    assert srcgrad.memory_cached() == kept
