"""The threads compiled code runs on: ``vectorize`` over a large array cuts its outer axis into
blocks of about ``BLOCK`` elements, which the threads share out, each call filling its block's
rows of the result arrays (compiled code runs without the GIL, as every ctypes call does).
The blocks are the same at every thread count, one thread included, so the results are the
same bit for bit (within one call, LLVM's vector loop and its scalar remainder may round
libm's functions differently: where an element falls depends on the call's bounds).

The count is ``SRCGRAD_NUM_THREADS`` if set, else the CPUs this process may run on; BLAS and
LAPACK keep their own (``OPENBLAS_NUM_THREADS``).

Example:
    >>> import srcgrad
    >>> before = srcgrad.get_num_threads()
    >>> srcgrad.set_num_threads(2)
    >>> srcgrad.get_num_threads()
    2
    >>> srcgrad.set_num_threads(before)
"""
import concurrent.futures
import os
import threading

PARALLEL_MIN = 1 << 18          # elements from which a call runs in blocks (each block costs a call, ~25 µs)
BLOCK = 1 << 17                 # elements per block, whatever the number of threads (benchmarks/threads.py)

_lock = threading.Lock()
_state = {"threads": None, "pool": None}


def _default():
    given = os.environ.get("SRCGRAD_NUM_THREADS", "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise ValueError(f"SRCGRAD_NUM_THREADS must be a number of threads (1 or more), not {given!r}")
        return int(given)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # (not on Linux)
        return os.cpu_count() or 1


def set_num_threads(n):
    """Run compiled code on ``n`` threads (1: on the caller's alone), as torch.set_num_threads."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_threads: the number of threads must be an int of at least 1, got {n!r}")
    with _lock:
        _state["threads"] = n       # (a pool of fewer workers is replaced when next asked for)


def get_num_threads():
    """The number of threads compiled code runs on."""
    with _lock:
        if _state["threads"] is None:
            _state["threads"] = _default()
        return _state["threads"]


def _pool(workers):
    """A pool of at least ``workers`` threads (besides the caller's)."""
    with _lock:
        pool, size = _state["pool"] or (None, 0)
        if size < workers:
            if pool is not None:
                pool.shutdown(wait=False)
            pool, size = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="srcgrad"), workers
            _state["pool"] = pool, size
        return pool


def blocks(n, size):
    """[(start, stop)] cutting range(n) into blocks of ``size`` (the last one shorter).

    >>> blocks(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    """
    return [(lo, min(lo + size, n)) for lo in range(0, n, max(1, size))]


def run_blocks(work, n, size):
    """``work(start, stop)`` for each block of ``blocks(n, size)``, shared out among the threads
    (the caller's is one of them), each block one call. The blocks do not depend on the number
    of threads, so neither do the results. The exception of the earliest block that raised is
    raised (as one thread would have met it first), once every thread has stopped."""
    todo = blocks(n, size)
    threads = min(get_num_threads(), len(todo))
    if threads == 1:
        for lo, hi in todo:
            work(lo, hi)
        return
    taken = iter(range(len(todo)))          # next() on it is atomic under the GIL
    errors = {}

    def worker():
        for k in taken:
            if errors and min(errors) < k:  # one thread would have stopped before this block
                return
            try:
                work(*todo[k])
            except BaseException as e:      # noqa: B036 (raised below, once the others are done)
                errors[k] = e
                return
    pool = _pool(threads - 1)
    futures = [pool.submit(worker) for _ in range(threads - 1)]
    worker()
    for f in futures:
        if not f.cancel():      # one not started yet is left undone (a pool busy with this call's
            f.result()          # caller, from a callback inside a block, would never start it)
    if errors:
        raise errors[min(errors)]


def _after_fork():
    global _lock
    _lock = threading.Lock()        # (a fork while another thread held it)
    _state["pool"] = None           # the parent's worker threads do not exist in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)

__all__ = ["set_num_threads", "get_num_threads", "run_blocks", "blocks", "PARALLEL_MIN", "BLOCK"]
