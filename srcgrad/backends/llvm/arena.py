"""The entry stub's side of the arena (memory.py): which of a call's allocations its results
take over, and freeing the rest natively, in one call.

A gradient that tapes 100,000 arrays leaves 100,000 allocations in its arena. Looking each up
in a Python dict and freeing it through ctypes cost about 3 µs an allocation, more than the
iteration that made it; here the lookups are numpy comparisons over the arena's pointers and
the freeing is one loop of native code (``srcgrad.rt.free_arena``, compiled once a process).

Example:
    >>> allocations = Allocations(arena, count)       # after the call returned
    >>> low in allocations                            # does a result start in memory the call made?
    >>> allocations.release()                         # frees all that no result took, and the arena
"""
import ctypes
import threading

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ..marshal import libc_free
from .target import CPU

_NAME = "srcgrad.rt.free_arena"
_lock = threading.Lock()
_compiled = []          # (engine, function): compiled at the first release, kept for the process


class Allocations:
    """The allocations recorded in a call's arena (pointers, with a snapshot's mark, the low
    bit, cleared), and the owners results gave them (``result_value`` in marshal.py reads it
    as a mapping: ``low in allocations``, ``allocations[low]``)."""

    def __init__(self, arena, count):
        self.arena, self.count = arena, count
        if arena.value and count:
            self.raw = np.ctypeslib.as_array((ctypes.c_uint64 * count).from_address(arena.value))
        else:
            self.raw = np.zeros(0, np.uint64)
        self.pointers = self.raw & ~np.uint64(1)
        self.owners = {}

    def __contains__(self, pointer):
        return bool(pointer) and bool(np.any(self.pointers == np.uint64(pointer)))

    def __getitem__(self, pointer):
        return self.owners.get(pointer)

    def __setitem__(self, pointer, owner):
        self.owners[pointer] = owner

    def release(self):
        """Free every allocation no result took over, then the arena itself."""
        if self.owners:
            self.raw[np.isin(self.pointers, np.array(list(self.owners), dtype=np.uint64))] = 0
        if len(self.raw):
            _free_arena()(self.arena.value, self.count)
        libc_free(self.arena.value)


def _free_arena():
    """``void free_arena(i8** slots, i64 count)``: free(slot & ~1) for every non-null slot."""
    with _lock:
        if not _compiled:
            module = ir.Module(name="srcgrad.rt")
            module.triple = CPU.triple()
            ptr, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
            free = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr]), name="free")
            fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64.as_pointer(), i64]), name=_NAME)
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
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(module)), CPU.machine())
            engine.finalize_object()
            address = engine.get_function_address(_NAME)
            _compiled.append((engine, ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(address)))
        return _compiled[0][1]
