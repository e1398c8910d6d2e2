"""The block cache: compiled code's malloc, calloc and free, keeping freed blocks for the next call.

A gradient that tapes 10,000 arrays of 8 kB frees 80 MB when it returns. glibc gives such a
heap back to the system as soon as its top is free (or keeps it, depending on what else the
process allocated), and the next call then faults 80 MB of fresh pages in again: 30 ms of a
50 ms gradient (benchmarks/RESULTS.md, H1). XLA and PyTorch keep their buffers in an
allocator of their own; so does compiled code here.

Blocks are glibc's own: ``srcgrad.rt.malloc(n)`` takes a block of n's size class from the
cache, or asks malloc for the class's size; ``srcgrad.rt.free(p)`` files a block under the
largest class that fits in it (``malloc_usable_size``), or frees it where the cache would pass
its limit. So any block may be freed either way (libc's free, the cache's). Growing goes through
the cache too (``srcgrad.rt.realloc``: the block itself where it already holds the new size,
else a block of the new size's class, the bytes copied, the old block filed): glibc's realloc
would hand back a block of a size no request asks for, filed under a class no request takes
from, and a tape that grows by doubling would leave one such block in the cache every call.
Size classes: blocks of 1 kiB and up, four classes an octave (1024, 1280, 1536, 1792, 2048,
...); a request takes the smallest class that holds it, so at most a quarter is wasted.
Smaller blocks go straight to glibc, whose thread caches do well with them.

The cache is one per process, guarded by a spin lock (compiled code runs without the GIL;
a fork from Python waits for it, runtime.py);
its limit (``SRCGRAD_CACHE_LIMIT`` bytes, 1 GiB unless set; 0 caches nothing) bounds what it
keeps, and ``srcgrad.empty_cache()`` gives it all back. The lowering calls ``malloc``,
``calloc`` and ``free`` by their C names, so that LLVM's optimisations know them; the
optimised module's declarations are then renamed to these (``use_block_cache``).

Example:
    define(module, libc)            # in runtime.py, once a process
"""
from llvmlite import ir

MIN_CLASS = 10            # 2**10 bytes: smaller blocks are glibc's
BINS = 4 * 40             # four classes an octave, up to 2**50 bytes
RENAMED = ("malloc", "calloc", "realloc", "free")

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = I8.as_pointer()


def default_limit(environ):
    """The cache's limit in bytes: ``SRCGRAD_CACHE_LIMIT`` (a number of bytes), 1 GiB unless set."""
    text = environ.get("SRCGRAD_CACHE_LIMIT", "").strip()
    if not text:
        return 1 << 30
    try:
        limit = int(text)
    except ValueError:
        raise ValueError(f"SRCGRAD_CACHE_LIMIT must be a number of bytes, not {text!r}") from None
    if limit < 0:
        raise ValueError(f"SRCGRAD_CACHE_LIMIT must be 0 or more bytes, not {limit}")
    return limit


def use_block_cache(mod):
    """Rename an optimised module's declarations of malloc, calloc, realloc and free to the cache's
    (``srcgrad.rt.malloc``, ...), after LLVM has optimised with what it knows of the C ones."""
    for f in mod.functions:
        if f.is_declaration and f.name in RENAMED:
            f.name = "srcgrad.rt." + f.name


def define(module, limit):
    """Add the cache's globals and functions to the runtime module: ``srcgrad.rt.malloc``,
    ``.calloc``, ``.realloc``, ``.free``, ``.empty_cache`` (returns the bytes it freed), ``.cached_bytes``,
    ``.set_cache_limit``, and ``.hold``/``.let_go`` (the lock, taken around a fork so that the
    child's cache is whole). Returns {name: function}."""
    c = _Cache(module, limit)
    return {f.name: f for f in (c.malloc, c.calloc, c.realloc, c.free, c.empty, c.cached_bytes, c.set_limit, c.hold, c.let_go)}


class _Cache:
    def __init__(self, module, limit):
        self.module = module
        self.bins = self._global("srcgrad.rt.bins", ir.ArrayType(PTR, BINS), None)
        self.cached = self._global("srcgrad.rt.cached", I64, 0)
        self.limit = self._global("srcgrad.rt.limit", I64, limit)
        self.lock = self._global("srcgrad.rt.lock", I32, 0)
        self.libc_malloc = self._declare("malloc", PTR, [I64])
        self.libc_calloc = self._declare("calloc", PTR, [I64, I64])
        self.libc_free = self._declare("free", ir.VoidType(), [PTR])
        self.libc_realloc = self._declare("realloc", PTR, [PTR, I64])
        self.usable_size = self._declare("malloc_usable_size", I64, [PTR])
        self.memset = self._declare("llvm.memset.p0i8.i64", ir.VoidType(), [PTR, I8, I64, ir.IntType(1)])
        self.memcpy = self._declare("llvm.memcpy.p0i8.p0i8.i64", ir.VoidType(), [PTR, PTR, I64, ir.IntType(1)])
        self.ctlz = self._declare("llvm.ctlz.i64", I64, [I64, ir.IntType(1)])
        self.malloc = self._function("srcgrad.rt.malloc", PTR, [I64], self._malloc)
        self.calloc = self._function("srcgrad.rt.calloc", PTR, [I64, I64], self._calloc)
        self.free = self._function("srcgrad.rt.free", ir.VoidType(), [PTR], self._free)
        self.realloc = self._function("srcgrad.rt.realloc", PTR, [PTR, I64], self._realloc)
        self.empty = self._function("srcgrad.rt.empty_cache", I64, [], self._empty)
        self.cached_bytes = self._function("srcgrad.rt.cached_bytes", I64, [],
                                           lambda b, f: b.ret(b.load_atomic(self.cached, "monotonic", 8)))
        self.set_limit = self._function("srcgrad.rt.set_cache_limit", ir.VoidType(), [I64], self._set_limit)
        self.hold = self._function("srcgrad.rt.hold", ir.VoidType(), [], lambda b, f: (self._acquire(b), b.ret_void()))
        self.let_go = self._function("srcgrad.rt.let_go", ir.VoidType(), [], lambda b, f: (self._release(b), b.ret_void()))

    # ------------------------------------------------------------------ module pieces
    def _global(self, name, ty, value):
        g = ir.GlobalVariable(self.module, ty, name)
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, value)
        return g

    def _declare(self, name, ret, args):
        return self.module.globals.get(name) or ir.Function(self.module, ir.FunctionType(ret, args), name)

    def _function(self, name, ret, args, body):
        f = ir.Function(self.module, ir.FunctionType(ret, args), name)
        body(ir.IRBuilder(f.append_basic_block("entry")), f)
        return f

    # ------------------------------------------------------------------ size classes
    def _class_below(self, b, n):
        """The largest class that fits in n bytes (n >= 2**MIN_CLASS): its bin number.
        Octave e (2**e <= n < 2**(e+1)) has four classes, 2**e + j * 2**(e-2) for j = 0..3."""
        e = b.sub(ir.Constant(I64, 63), b.call(self.ctlz, [n, ir.Constant(ir.IntType(1), 0)]))
        j = b.and_(b.lshr(n, b.sub(e, ir.Constant(I64, 2))), ir.Constant(I64, 3))
        return b.add(b.mul(b.sub(e, ir.Constant(I64, MIN_CLASS)), ir.Constant(I64, 4)), j)

    def _class_size(self, b, k):
        """The bytes of bin k's class: (4 + k % 4) << (k // 4 + MIN_CLASS - 2)."""
        j = b.add(ir.Constant(I64, 4), b.and_(k, ir.Constant(I64, 3)))
        return b.shl(j, b.add(b.lshr(k, ir.Constant(I64, 2)), ir.Constant(I64, MIN_CLASS - 2)))

    def _class_above(self, b, n):
        """The smallest class that holds n bytes: (bin number, its bytes)."""
        k = self._class_below(b, n)
        k = b.add(k, b.zext(b.icmp_unsigned("!=", self._class_size(b, k), n), I64))
        return k, self._class_size(b, k)

    def _cached_size(self, b, n):
        """Whether requests of n bytes go through the cache (a class in the bins' range)."""
        low = b.icmp_unsigned(">=", n, ir.Constant(I64, 1 << MIN_CLASS))
        high = b.icmp_unsigned("<", n, ir.Constant(I64, 1 << (MIN_CLASS + BINS // 4 - 1)))
        return b.and_(low, high)

    # ------------------------------------------------------------------ the lock
    def _acquire(self, b):
        """Spin until the lock is ours (held for a few instructions at a time)."""
        f = b.function
        spin, held = f.append_basic_block("spin"), f.append_basic_block("held")
        b.branch(spin)
        b.position_at_end(spin)
        got = b.extract_value(b.cmpxchg(self.lock, ir.Constant(I32, 0), ir.Constant(I32, 1), "acquire", "monotonic"), 1)
        b.cbranch(got, held, spin)
        b.position_at_end(held)

    def _release(self, b):
        b.store_atomic(ir.Constant(I32, 0), self.lock, "release", 4)

    def _pop(self, b, k):
        """Under the lock: the first block of bin k (null where it is empty), taken off it."""
        head = b.gep(self.bins, [ir.Constant(I32, 0), k])
        block = b.load(head)
        f = b.function
        take, done = f.append_basic_block("take"), f.append_basic_block("popped")
        before = b.block
        b.cbranch(b.icmp_unsigned("!=", block, ir.Constant(PTR, None)), take, done)
        b.position_at_end(take)
        b.store(b.load(b.bitcast(block, PTR.as_pointer())), head)       # a free block holds the next
        b.store(b.sub(b.load(self.cached), self._class_size(b, k)), self.cached)
        b.branch(done)
        b.position_at_end(done)
        out = b.phi(PTR)
        out.add_incoming(ir.Constant(PTR, None), before)
        out.add_incoming(block, take)
        return out

    # ------------------------------------------------------------------ the functions
    def _from_cache(self, b, f, n, fresh, reuse):
        """Shared by malloc and calloc: a cached block of n's class (``reuse(block)`` prepares
        it), or ``fresh(bytes)`` of glibc's, for the whole class where n has one."""
        direct, cached = f.append_basic_block("direct"), f.append_basic_block("cached")
        b.cbranch(self._cached_size(b, n), cached, direct)
        b.position_at_end(direct)
        b.ret(fresh(b, n))
        b.position_at_end(cached)
        k, size = self._class_above(b, n)
        self._acquire(b)
        block = self._pop(b, k)
        self._release(b)
        hit, miss = f.append_basic_block("hit"), f.append_basic_block("miss")
        b.cbranch(b.icmp_unsigned("!=", block, ir.Constant(PTR, None)), hit, miss)
        b.position_at_end(hit)
        reuse(b, block, n)
        b.ret(block)
        b.position_at_end(miss)
        b.ret(fresh(b, size))

    def _malloc(self, b, f):
        (n,) = f.args
        self._from_cache(b, f, n, lambda b, size: b.call(self.libc_malloc, [size]), lambda b, block, n: None)

    def _calloc(self, b, f):
        count, size = f.args
        product = b.umul_with_overflow(count, size)
        overflow, ok = f.append_basic_block("overflow"), f.append_basic_block("sized")
        b.cbranch(b.extract_value(product, 1), overflow, ok)
        b.position_at_end(overflow)
        b.ret(b.call(self.libc_calloc, [count, size]))            # glibc says no (null)
        b.position_at_end(ok)
        zero = ir.Constant(ir.IntType(1), 0)
        self._from_cache(b, f, b.extract_value(product, 0),
                         lambda b, nbytes: b.call(self.libc_calloc, [ir.Constant(I64, 1), nbytes]),
                         lambda b, block, n: b.call(self.memset, [block, ir.Constant(I8, 0), n, zero]))

    def _realloc(self, b, f):
        """realloc(p, n) by the cache: p itself where its block holds n bytes (never shrunk),
        else a block of n's class with p's bytes copied and p filed (glibc's own realloc
        where n is not a class size, like malloc)."""
        p, n = f.args
        null = ir.Constant(PTR, None)
        fresh, grow, move, moved, keep, direct = (f.append_basic_block(x) for x in
                                                  ("fresh", "grow", "move", "moved", "keep", "direct"))
        b.cbranch(b.icmp_unsigned("==", p, null), fresh, grow)
        b.position_at_end(fresh)
        b.ret(b.call(self.malloc, [n]))
        b.position_at_end(grow)
        usable = b.call(self.usable_size, [p])
        b.cbranch(b.icmp_unsigned("<=", n, usable), keep, move)
        b.position_at_end(keep)
        b.ret(p)
        b.position_at_end(move)
        b.cbranch(self._cached_size(b, n), moved, direct)
        b.position_at_end(direct)
        b.ret(b.call(self.libc_realloc, [p, n]))
        b.position_at_end(moved)
        q = b.call(self.malloc, [n])
        failed, copy = f.append_basic_block("failed"), f.append_basic_block("copy")
        b.cbranch(b.icmp_unsigned("==", q, null), failed, copy)
        b.position_at_end(failed)
        b.ret(null)                      # p is untouched, as realloc leaves it
        b.position_at_end(copy)
        b.call(self.memcpy, [q, p, usable, ir.Constant(ir.IntType(1), 0)])     # usable < n <= q's bytes
        b.call(self.free, [p])
        b.ret(q)

    def _free(self, b, f):
        (p,) = f.args
        to_glibc, sized, keep, done = (f.append_basic_block(n) for n in ("to_glibc", "sized", "keep", "done"))
        b.cbranch(b.icmp_unsigned("==", p, ir.Constant(PTR, None)), done, sized)
        b.position_at_end(sized)
        usable = b.call(self.usable_size, [p])
        b.cbranch(self._cached_size(b, usable), keep, to_glibc)
        b.position_at_end(keep)
        k = self._class_below(b, usable)
        size = self._class_size(b, k)
        self._acquire(b)
        total = b.add(b.load(self.cached), size)
        fits, full = f.append_basic_block("fits"), f.append_basic_block("full")
        b.cbranch(b.icmp_unsigned("<=", total, b.load(self.limit)), fits, full)
        b.position_at_end(full)
        self._release(b)
        b.branch(to_glibc)
        b.position_at_end(fits)
        head = b.gep(self.bins, [ir.Constant(I32, 0), k])
        b.store(b.load(head), b.bitcast(p, PTR.as_pointer()))
        b.store(p, head)
        b.store(total, self.cached)
        self._release(b)
        b.branch(done)
        b.position_at_end(to_glibc)
        b.call(self.libc_free, [p])
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()

    def _empty(self, b, f):
        """Free every cached block; returns the bytes the cache held."""
        self._acquire(b)
        freed = b.load(self.cached)
        head, body, next_bin, done = (f.append_basic_block(n) for n in ("bin", "block", "next_bin", "emptied"))
        entry = b.block
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(I64)
        k.add_incoming(ir.Constant(I64, 0), entry)
        b.cbranch(b.icmp_unsigned("<", k, ir.Constant(I64, BINS)), body, done)
        b.position_at_end(body)
        block = self._pop(b, k)
        gone = f.append_basic_block("free_block")
        b.cbranch(b.icmp_unsigned("!=", block, ir.Constant(PTR, None)), gone, next_bin)
        b.position_at_end(gone)
        b.call(self.libc_free, [block])
        b.branch(body)             # the same bin again, until it is empty
        b.position_at_end(next_bin)
        k.add_incoming(b.add(k, ir.Constant(I64, 1)), next_bin)
        b.branch(head)
        b.position_at_end(done)
        self._release(b)
        b.ret(freed)

    def _set_limit(self, b, f):
        (limit,) = f.args
        self._acquire(b)
        b.store(limit, self.limit)
        self._release(b)
        b.ret_void()
