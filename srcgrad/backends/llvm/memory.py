"""Memory in the llvm backend: the arena, the tapes of reverse mode, and freeing per iteration.

Every native allocation of a call (new arrays, tapes) is recorded in the call's arena, a
growing array of pointers that the entry stub (jit.py) frees after the call on every exit
path, except the arrays it hands to numpy. A tape lives until the region that made it ends
(``free_all``); a loop that allocates frees what an iteration does not pass on at the end of
the iteration (``release_since``, when loop_memory.py says that is sound). A checkpointed
loop's snapshot slots own the copies put in them: their arena entries are marked (the low bit
of the pointer set, which ``release_since`` keeps), and freed when the slot is taken again.

``TAPES`` holds the rules of the tape primitives; ``Memory`` the lowering's helpers.

Example (inside the lowering):
    data, slot = self.allocate(count, 8, zeroed=True)
"""
from llvmlite import ir

from .error_codes import MEMORY
from .registry import lower
from .types import BIT, INT64, PTR, ltype

TAPES = {}


@lower(TAPES, "tape_new")
def _tape_new(ctx, op, ins):
    return ctx.tape_new(op, ins)


@lower(TAPES, "tape_put")
def _tape_put(ctx, op, ins):
    ctx.tape_put(op, ins)


@lower(TAPES, "tape_get")
def _tape_get(ctx, op, ins):
    b = ctx.b
    tape, k = ins
    item = b.load(b.gep(ctx.tape_pointer(op.operands[0]), [k]))
    for j, r in enumerate(op.results):
        ctx.values[r] = b.extract_value(item, j)


class Memory:
    """The lowering's memory helpers (a mixin of lowering.Lowering: uses its builder ``b``,
    ``arena``, ``arena_count``, ``errinfo``, ``frees`` and ``growing``)."""

    def allocate(self, count, size, zeroed, too_big=None):
        """(pointer, arena slot) of ``count`` items of ``size`` bytes (at least one item),
        recorded in the arena so that Python frees it after the call, whichever way the call
        ends. A size that overflows or memory that cannot be had makes the call raise
        MemoryError saying how much was asked for."""
        b = self.b
        one, size = ir.Constant(INT64, 1), ir.Constant(INT64, size)
        count = b.select(b.icmp_signed(">", count, one), count, one)
        nbytes = b.smul_with_overflow(count, size)
        bad = b.extract_value(nbytes, 1) if too_big is None else b.or_(too_big, b.extract_value(nbytes, 1))
        self.memory_guard(bad, count, size)
        if zeroed:
            data = b.call(self.declare("calloc", PTR, [INT64, INT64]), [count, size])
        else:
            data = b.call(self.declare("malloc", PTR, [INT64]), [b.extract_value(nbytes, 0)])
        self.memory_guard(b.icmp_unsigned("==", data, ir.Constant(PTR, None)), count, size)
        return data, self.arena_push(data)

    def reallocate(self, data, nbytes, count, size):
        """realloc(data, nbytes), leaving with MemoryError (``count`` items of ``size``) where it fails."""
        grown = self.b.call(self.declare("realloc", PTR, [PTR, INT64]), [data, nbytes])
        self.memory_guard(self.b.icmp_unsigned("==", grown, ir.Constant(PTR, None)), count, size)
        return grown

    def memory_guard(self, cond, count, size):
        """Leave with MemoryError where ``cond`` holds, naming ``count`` items of ``size`` bytes."""
        bad = self.func.append_basic_block("no.memory")
        good = self.func.append_basic_block("memory.ok")
        self.b.cbranch(cond, bad, good)
        self.b.position_at_end(bad)
        self.b.store(count, self.errinfo)
        self.b.store(size, self.b.gep(self.errinfo, [ir.Constant(INT64, 1)]))
        self.fail(MEMORY)
        self.b.position_at_end(good)

    def arena_pointers(self):
        """The arena's slots, as a pointer to its first."""
        return self.b.bitcast(self.b.load(self.arena), ir.PointerType(PTR))

    def arena_push(self, data):
        """Record an allocation in the arena (grown by doubling); returns its slot."""
        b = self.b
        count = b.load(self.arena_count)
        cap_ptr = b.gep(self.arena_count, [ir.Constant(INT64, 1)])
        cap = b.load(cap_ptr)
        with b.if_then(b.icmp_signed(">=", count, cap), likely=False):
            new_cap = b.select(b.icmp_signed(">", cap, ir.Constant(INT64, 0)), b.mul(cap, ir.Constant(INT64, 2)),
                               ir.Constant(INT64, 64))
            grown = self.reallocate(b.load(self.arena), b.mul(new_cap, ir.Constant(INT64, 8)), new_cap,
                                    ir.Constant(INT64, 8))
            b.store(grown, self.arena)
            b.store(new_cap, cap_ptr)
        b.store(data, b.gep(self.arena_pointers(), [count]))
        b.store(b.add(count, ir.Constant(INT64, 1)), self.arena_count)
        return count

    def release_since(self, mark, keep):
        """Free every allocation recorded since arena slot ``mark`` except those starting at a
        pointer in ``keep``, which move down (loop_memory.py says when this is sound)."""
        b = self.b
        slots = self.arena_pointers()
        free = self.declare("free", ir.VoidType(), [PTR])
        null = ir.Constant(PTR, None)

        def step(k, carried):
            (w,) = carried
            p = b.load(b.gep(slots, [k]))
            kept = b.trunc(b.ptrtoint(p, INT64), BIT)       # a snapshot's copy (tape_put)
            for ptr in keep:
                kept = b.or_(kept, b.icmp_unsigned("==", p, ptr))
            kept = b.and_(kept, b.icmp_unsigned("!=", p, null))
            b.store(p, b.gep(slots, [w]))              # w <= k: overwritten or beyond the count if freed
            b.call(free, [b.select(kept, null, p)])
            return [b.select(kept, b.add(w, ir.Constant(INT64, 1)), w)]
        (w,) = self.counted_loop(mark, b.load(self.arena_count), ir.Constant(INT64, 1), [mark], step, name="release")
        b.store(w, self.arena_count)

    def release_iteration(self, mark, body, ys):
        """At the end of an iteration of a loop that allocates, free what it no longer needs."""
        if mark is not None:
            self.release_since(mark, [self.b.extract_value(y, 0) for a, y in zip(body.yielded, ys)
                                      if a.type.is_array])

    def free_all(self):
        """Free the tapes of the region ending here (and clear their arena slots)."""
        free = self.declare("free", ir.VoidType(), [PTR])
        for ptr, slot in self.frees:
            self.b.call(free, [self.b.load(ptr) if isinstance(ptr.type.pointee, ir.PointerType) else ptr])
            self.b.store(ir.Constant(PTR, None), self.b.gep(self.arena_pointers(), [slot]))

    # ------------------------------------------------------------------ tapes
    def item_type(self, tape_value):
        return ir.LiteralStructType([ltype(t) for t in tape_value.type.items])

    def tape_new(self, op, ins):
        """A tape: of a known length (the operand), or growing (capacity and pointer in stack slots)."""
        b = self.b
        st = self.item_type(op.results[0])
        size = ir.Constant(INT64, max(st.get_abi_size(self.target.target_data()), 1))
        if op.operands:
            # snapshot slots start empty (null arrays): a put frees what its slot held
            raw, slot = self.allocate(ins[0], size.constant, zeroed=op.attrs.get("snapshots", False))
            self.frees.append((raw, slot))
            return b.bitcast(raw, ir.PointerType(st))
        with b.goto_block(self.allocas_block):
            b.position_at_start(self.allocas_block)
            cap = b.alloca(INT64)
            ptr = b.alloca(PTR)
        b.store(ir.Constant(INT64, 16), cap)
        raw, slot = self.allocate(ir.Constant(INT64, 16), size.constant, zeroed=False)
        b.store(raw, ptr)
        self.growing[op.results[0]] = (cap, ptr, size, slot)
        self.frees.append((ptr, slot))
        return b.bitcast(raw, ir.PointerType(st))

    def tape_pointer(self, tape_value):
        if tape_value in self.growing:
            ptr = self.growing[tape_value][1]
            return self.b.bitcast(self.b.load(ptr), ir.PointerType(self.item_type(tape_value)))
        return self.v(tape_value)

    def tape_put(self, op, ins):
        """tape[k] = items; an appending put doubles a growing tape when it is full."""
        b = self.b
        tape_value = op.operands[0]
        k = ins[1]
        if op.attrs.get("append"):
            cap, ptr, size, slot = self.growing[tape_value]
            with b.if_then(b.icmp_signed(">=", k, b.load(cap)), likely=False):
                new_cap = b.mul(b.load(cap), ir.Constant(INT64, 2))
                nbytes = b.smul_with_overflow(new_cap, size)
                self.memory_guard(b.extract_value(nbytes, 1), new_cap, size)
                grown = self.reallocate(b.load(ptr), b.extract_value(nbytes, 0), new_cap, size)
                b.store(grown, ptr)
                b.store(grown, b.gep(self.arena_pointers(), [slot]))
                b.store(new_cap, cap)
        st = self.item_type(tape_value)
        if op.attrs.get("owned"):
            self._own_copies(op, ins)
        item = ir.Constant(st, ir.Undefined)
        for j, v in enumerate(ins[2:]):
            item = b.insert_value(item, v, j)
        b.store(item, b.gep(self.tape_pointer(tape_value), [k]))

    def _own_copies(self, op, ins):
        """A put into a snapshot slot that owns its arrays (fresh copies): the copies' arena
        entries get marked as the slot's (kept by ``release_since``), and the arrays the slot
        held before are freed, their entries cleared."""
        b = self.b
        k = ins[1]
        old = b.load(b.gep(self.tape_pointer(op.operands[0]), [k]))
        pairs = [(b.extract_value(b.extract_value(old, j), 0), b.extract_value(v, 0))
                 for j, (a, v) in enumerate(zip(op.operands[2:], ins[2:])) if a.type.is_array]
        slots = self.arena_pointers()
        free = self.declare("free", ir.VoidType(), [PTR])
        one = ir.Constant(INT64, 1)

        def step(i, carried):
            at = b.gep(slots, [i])
            entry = b.load(at)
            for before, now in pairs:
                gone = b.icmp_unsigned("==", b.ptrtoint(entry, INT64), b.or_(b.ptrtoint(before, INT64), one))
                with b.if_then(b.and_(gone, b.icmp_unsigned("!=", before, ir.Constant(PTR, None)))):
                    b.call(free, [before])
                    b.store(ir.Constant(PTR, None), at)
                with b.if_then(b.icmp_unsigned("==", entry, now)):
                    b.store(b.inttoptr(b.or_(b.ptrtoint(now, INT64), one), PTR), at)
            return []
        self.counted_loop(ir.Constant(INT64, 0), b.load(self.arena_count), one, [], step, name="snapshot")
