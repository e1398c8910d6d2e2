"""The entry stub's side of the arena (memory.py): which of a call's allocations its results
take over, and freeing the rest natively, in one call.

A gradient that tapes 100,000 arrays leaves 100,000 allocations in its arena. Looking each up
in a Python dict and freeing it through ctypes cost about 3 µs an allocation, more than the
iteration that made it; here the lookups are numpy comparisons over the arena's pointers and
the freeing is one loop of native code (``srcgrad.rt.free_arena``, runtime.py). Blocks go
back to the block cache (block_cache.py), the ones numpy takes over too when their array dies.

Example:
    allocations = Allocations(arena, count)       # after the call returned
    low in allocations                            # does a result start in memory the call made?
    allocations.take(low)                         # the owner an array over it keeps alive
    allocations.release()                         # frees all that no result took, and the arena
"""
import ctypes

import numpy as np

from ..marshal import Memory
from .runtime import load as load_runtime


class Block:
    """A block the compiled code allocated and a returned array now uses: freed (into the
    block cache) with the array."""

    def __init__(self, address, free):
        self.address, self._free = address, free

    def __del__(self):
        self._free(self.address)


def empty(shape, dtype):
    """An uninitialised array over a block of the block cache, given back to it when the array
    dies, as compiled code's own results are: a large result then reuses the pages the last one
    left instead of faulting fresh ones in (vectorize in blocks fills such arrays).

    >>> a = empty((2, 3), np.float64)
    >>> a[:] = 1.0
    >>> float(a.sum()), a.flags.writeable
    (6.0, True)
    """
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if size == 0:
        return np.empty(shape, dtype)
    rt = load_runtime()
    address = rt.malloc(size)
    if not address:
        raise MemoryError(f"srcgrad: cannot allocate {size} bytes")
    strides = tuple(int(np.prod(shape[k + 1:])) * dtype.itemsize for k in range(len(shape)))
    return np.asarray(Memory(address, tuple(shape), strides, dtype, Block(address, rt.free)))


class Allocations:
    """The allocations recorded in a call's arena (pointers, with a snapshot's mark, the low
    bit, cleared), and the owners results gave them (``result_value`` in marshal.py).

    Most calls allocate a few blocks: those are looked up in a Python set (a numpy comparison
    costs microseconds however short the arena); many blocks, in numpy arrays."""

    def __init__(self, arena, count):
        self.arena, self.count = arena, count
        self.raw = (ctypes.c_uint64 * count).from_address(arena.value) if arena.value and count else None
        self.owners = {}
        if count <= _SMALL:
            self.small = {} if self.raw is None else {p & ~1: k for k, p in enumerate(self.raw)}
        else:
            self.small = None
            self.raw = np.ctypeslib.as_array(self.raw)
            self.pointers = self.raw & ~np.uint64(1)

    def __contains__(self, pointer):
        if not pointer:
            return False
        if self.small is not None:
            return pointer in self.small
        return bool(np.any(self.pointers == np.uint64(pointer)))

    def take(self, pointer):
        """The owner of the block at ``pointer``, which a result now uses (one per block)."""
        if pointer not in self.owners:
            self.owners[pointer] = Block(pointer, load_runtime().free)
        return self.owners[pointer]

    def release(self):
        """Free every allocation no result took over, then the arena itself (glibc's: realloc)."""
        if self.owners:
            if self.small is not None:
                for pointer in self.owners:
                    self.raw[self.small[pointer]] = 0
            else:
                self.raw[np.isin(self.pointers, np.array(list(self.owners), dtype=np.uint64))] = 0
        if not self.arena.value:
            return                                  # the call allocated nothing
        if self.count:
            load_runtime().free_arena(self.arena.value, self.count)
        load_runtime().free(self.arena.value)      # grown through the cache (block_cache.py): filed for the next call


_SMALL = 64        # allocations a call makes, up to which a set finds them faster than numpy
