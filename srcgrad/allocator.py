"""The block cache's controls: compiled code keeps the memory blocks it frees for its next
call (up to a limit), as XLA's and PyTorch's allocators do (backends/llvm/block_cache.py).

A gradient that tapes 80 MB would otherwise give them back to the system when it returns and
fault them in again on the next call. The cache holds only blocks no array uses; arrays that
compiled functions return are numpy's until they die, and then their blocks come back too.

Example:
    >>> import os, srcgrad
    >>> from srcgrad.backends.llvm.block_cache import default_limit
    >>> srcgrad.set_cache_limit(256 << 20) # keep at most 256 MiB (SRCGRAD_CACHE_LIMIT sets it too)
    >>> srcgrad.empty_cache()             # give every kept block back to the C library
    >>> srcgrad.memory_cached()           # bytes kept for the next call (0 after empty_cache)
    0
    >>> srcgrad.set_cache_limit(default_limit(os.environ))   # the limit back to its default
"""


def _runtime():
    from .backends.llvm.runtime import load
    return load()


def empty_cache():
    """Give every block the cache keeps back to the C library (glibc then returns what it can
    to the system). Arrays in use are not touched; compiled functions go on working and fill
    the cache again as they free blocks.

    Example:
        >>> import srcgrad
        >>> srcgrad.empty_cache()
        >>> srcgrad.memory_cached()
        0
    """
    _runtime().empty_cache()


def memory_cached():
    """The bytes of the blocks the cache keeps for later calls (no array uses them).

    Example:
        >>> import numpy as np, srcgrad
        >>> def f(x):
        ...     return np.sum(np.cumsum(x) * x)
        >>> dx = srcgrad.grad(f)(np.ones(1000))
        >>> srcgrad.memory_cached() > 0
        True
    """
    return int(_runtime().cached_bytes())


def set_cache_limit(nbytes):
    """Keep at most ``nbytes`` bytes of freed blocks (1 GiB unless ``SRCGRAD_CACHE_LIMIT`` said
    otherwise; 0 keeps none: every block goes straight back to the C library). Blocks already
    kept beyond a lower limit are given back.

    Example:
        >>> import os, srcgrad
        >>> from srcgrad.backends.llvm.block_cache import default_limit
        >>> srcgrad.set_cache_limit(0)        # no cache: memory goes back after every call
        >>> srcgrad.memory_cached()
        0
        >>> srcgrad.set_cache_limit(default_limit(os.environ))   # the default again
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"set_cache_limit takes a number of bytes, 0 or more, not {nbytes!r}")
    rt = _runtime()
    rt.set_cache_limit(nbytes)
    if rt.cached_bytes() > nbytes:
        rt.empty_cache()
