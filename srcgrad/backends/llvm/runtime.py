"""srcgrad's native runtime: the functions compiled code and the entry stub call by name
(``srcgrad.rt.*``), compiled once a process.

- the block cache (block_cache.py): ``srcgrad.rt.malloc``, ``.calloc``, ``.realloc``, ``.free``, which the
  optimised modules call in place of glibc's, and the cache's controls;
- ``srcgrad.rt.free_arena(slots, count)``: frees what a call's arena recorded (arena.py), in
  one native loop rather than a ctypes call an allocation.

The functions are registered with LLVM's symbol table (``llvm.add_symbol``), so that every
JIT-compiled module, and object code loaded from the disk cache, finds them. The runtime's
machine code is never freed: arrays handed to numpy free their blocks through it whenever
they die, at interpreter exit too. ``os.fork`` (multiprocessing's too) takes the cache's lock
first, as glibc does with malloc's.

Example:
    rt = load()
    rt.empty_cache()          # bytes the block cache gave back to glibc
"""
import ctypes
import os
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from . import block_cache
from .target import CPU

_lock = threading.Lock()
_loaded = []


class Runtime:
    """ctypes callables of the runtime's functions (what Python calls)."""

    def __init__(self, address):
        c = ctypes
        self.malloc = c.CFUNCTYPE(c.c_void_p, c.c_int64)(address("srcgrad.rt.malloc"))
        self.free = c.CFUNCTYPE(None, c.c_void_p)(address("srcgrad.rt.free"))
        self.free_arena = c.CFUNCTYPE(None, c.c_void_p, c.c_int64)(address("srcgrad.rt.free_arena"))
        self.empty_cache = c.CFUNCTYPE(c.c_int64)(address("srcgrad.rt.empty_cache"))
        self.cached_bytes = c.CFUNCTYPE(c.c_int64)(address("srcgrad.rt.cached_bytes"))
        self.set_cache_limit = c.CFUNCTYPE(None, c.c_int64)(address("srcgrad.rt.set_cache_limit"))
        self.hold = c.CFUNCTYPE(None)(address("srcgrad.rt.hold"))
        self.let_go = c.CFUNCTYPE(None)(address("srcgrad.rt.let_go"))


def load():
    """The process's runtime, compiled and registered at the first call."""
    if _loaded:               # no lock after that: a child forked while a thread held it would wait forever
        return _loaded[0]
    with _lock:
        if not _loaded:
            _loaded.append(_compile())
        return _loaded[0]


def _compile():
    module = ir.Module(name="srcgrad.rt")
    module.triple = CPU.triple()
    functions = block_cache.define(module, block_cache.default_limit(os.environ))
    _define_free_arena(module, functions["srcgrad.rt.free"])
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(module)), CPU.machine())
    engine.finalize_object()
    addresses = {name: engine.get_function_address(name) for name in functions}
    addresses["srcgrad.rt.free_arena"] = engine.get_function_address("srcgrad.rt.free_arena")
    for name in ("srcgrad.rt.malloc", "srcgrad.rt.calloc", "srcgrad.rt.realloc", "srcgrad.rt.free"):
        llvm.add_symbol(name, addresses[name])
    engine.detach()           # the machine code stays for the life of the process
    rt = Runtime(addresses.__getitem__)
    # a fork waits until no thread is inside the cache, so the child's lists are whole
    os.register_at_fork(before=rt.hold, after_in_parent=rt.let_go, after_in_child=rt.let_go)
    return rt


def _define_free_arena(module, free):
    """``void free_arena(i8** slots, i64 count)``: free(slot & ~1) for every non-null slot
    (the low bit marks a snapshot's copy, memory.py)."""
    ptr, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64.as_pointer(), i64]), name="srcgrad.rt.free_arena")
    slots, count = fn.args
    entry, head, body, done = (fn.append_basic_block(n) for n in ("entry", "head", "body", "done"))
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), entry)
    b.cbranch(b.icmp_signed("<", k, count), body, done)
    b.position_at_end(body)
    slot = b.and_(b.load(b.gep(slots, [k])), ir.Constant(i64, ~1))
    b.call(free, [b.inttoptr(slot, ptr)])           # free(NULL) does nothing
    k.add_incoming(b.add(k, ir.Constant(i64, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
