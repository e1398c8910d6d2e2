"""Memory in the llvm backend: the arena, the tapes of reverse mode, and freeing per iteration.

Every native allocation of a call (new arrays, tapes) is recorded in the call's arena, a
growing array of pointers that the entry stub (jit.py) frees after the call on every exit
path, except the arrays it hands to numpy. A tape lives until the region that made it ends
(``free_all``); a loop that allocates frees what an iteration does not pass on at the end of
the iteration (``_release_since``, when loop_memory.py says that is sound). A checkpointed
loop's snapshot slots own the copies put in them: their arena entries are marked (the low bit
of the pointer set, which ``_release_since`` keeps), and freed when the slot is taken again.

``TAPES`` holds the rules of the tape primitives; the functions before them are the arena's,
each taking the lowering context first (lowering.Lowering: its builder ``b`` and the call's
``arena``, ``arena_count``, ``errinfo``, with the region's ``frees`` and the ``growing`` tapes).

Example (inside a rule):
    data, slot = allocate(ctx, count, 8, zeroed=True)
"""
from llvmlite import ir

from .error_codes import MEMORY
from .folding import known
from .loops import counted_loop
from .registry import lower
from .types import BIT, INT64, PTR, ltype

TAPES = {}


def allocate(ctx, count, size, zeroed, too_big=None):
    """(pointer, arena slot) of ``count`` items of ``size`` bytes (at least one item),
    recorded in the arena so that Python frees it after the call, whichever way the call
    ends. A size that overflows (or ``too_big``, the count's own overflow) or memory that
    cannot be had makes the call raise MemoryError saying how much was asked for."""
    b = ctx.b
    one, size = ir.Constant(INT64, 1), ir.Constant(INT64, size)
    count = b.select(b.icmp_signed(">", count, one), count, one)
    asked = count if too_big is None else b.select(too_big, ir.Constant(INT64, 2 ** 63 - 1), count)
    data = b.call(_allocator(ctx, zeroed), [asked, size, ctx.arena, ctx.arena_count])
    memory_guard(ctx, b.icmp_unsigned("==", data, ir.Constant(PTR, None)), count, size)
    return data, b.sub(b.load(ctx.arena_count), one)


def _allocator(ctx, zeroed):
    """The module's function ``ptr allocate(count, size, arena, arena_count)``: ``count`` items
    of ``size`` bytes from malloc (calloc if ``zeroed``), recorded in the arena (grown by
    doubling); null where the size overflows or memory cannot be had. One function however
    many allocations call it, so that each is a call and a test (compile time)."""
    def body(count, size, arena, arena_count):
        b = ctx.b
        null = ir.Constant(PTR, None)
        nbytes = b.smul_with_overflow(count, size)
        with b.if_then(b.extract_value(nbytes, 1), likely=False):
            b.ret(null)
        if zeroed:
            data = b.call(ctx.declare("calloc", PTR, [INT64, INT64]), [count, size])
        else:
            data = b.call(ctx.declare("malloc", PTR, [INT64]), [b.extract_value(nbytes, 0)])
        with b.if_then(b.icmp_unsigned("==", data, null), likely=False):
            b.ret(null)
        n = b.load(arena_count)
        cap_ptr = b.gep(arena_count, [ir.Constant(INT64, 1)])
        cap = b.load(cap_ptr)
        with b.if_then(b.icmp_signed(">=", n, cap), likely=False):
            new_cap = b.select(b.icmp_signed(">", cap, ir.Constant(INT64, 0)), b.mul(cap, ir.Constant(INT64, 2)),
                               ir.Constant(INT64, 64))
            grown = b.call(ctx.declare("realloc", PTR, [PTR, INT64]),
                           [b.load(arena), b.mul(new_cap, ir.Constant(INT64, 8))])
            with b.if_then(b.icmp_unsigned("==", grown, null), likely=False):
                b.call(ctx.declare("free", ir.VoidType(), [PTR]), [data])
                b.ret(null)
            b.store(grown, arena)
            b.store(new_cap, cap_ptr)
        b.store(data, b.gep(b.bitcast(b.load(arena), ir.PointerType(PTR)), [n]))
        b.store(b.add(n, ir.Constant(INT64, 1)), arena_count)
        b.ret(data)
    f = ctx.module_function("srcgrad.allocate" + (".zeroed" if zeroed else ""),
                            [INT64, INT64, ctx.arena.type, ctx.arena_count.type], PTR, body)
    f.return_value.attributes.add("noalias")        # as malloc's: LLVM's alias analysis needs it
    return f


def _reallocate(ctx, data, nbytes, count, size):
    """realloc(data, nbytes), leaving with MemoryError (``count`` items of ``size``) where it fails."""
    grown = ctx.b.call(ctx.declare("realloc", PTR, [PTR, INT64]), [data, nbytes])
    memory_guard(ctx, ctx.b.icmp_unsigned("==", grown, ir.Constant(PTR, None)), count, size)
    return grown


def memory_guard(ctx, cond, count, size):
    """Leave with MemoryError where ``cond`` holds, naming ``count`` items of ``size`` bytes."""
    if known(cond) == 0:
        return
    bad = ctx.func.append_basic_block("no.memory")
    good = ctx.func.append_basic_block("memory.ok")
    ctx.b.cbranch(cond, bad, good)
    ctx.b.position_at_end(bad)
    ctx.b.store(count, ctx.errinfo)
    ctx.b.store(size, ctx.b.gep(ctx.errinfo, [ir.Constant(INT64, 1)]))
    ctx.fail(MEMORY)
    ctx.b.position_at_end(good)


def arena_pointers(ctx):
    """The arena's slots, as a pointer to its first."""
    return ctx.b.bitcast(ctx.b.load(ctx.arena), ir.PointerType(PTR))


def _release_since(ctx, mark, keep):
    """Free every allocation recorded since arena slot ``mark`` except those starting at a
    pointer in ``keep``, which move down (loop_memory.py says when this is sound)."""
    b = ctx.b
    slots = arena_pointers(ctx)
    free = ctx.declare("free", ir.VoidType(), [PTR])
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
    (w,) = counted_loop(ctx, mark, b.load(ctx.arena_count), ir.Constant(INT64, 1), [mark], step, name="release")
    b.store(w, ctx.arena_count)


def release_iteration(ctx, mark, body, ys):
    """At the end of an iteration of a loop that allocates, free what it no longer needs."""
    if mark is not None:
        _release_since(ctx, mark, [ctx.b.extract_value(y, 0) for a, y in zip(body.yielded, ys)
                                   if a.type.is_array])


def free_all(ctx):
    """Free the tapes of the region ending here (and clear their arena slots)."""
    free = ctx.declare("free", ir.VoidType(), [PTR])
    for ptr, slot in ctx.frees:
        ctx.b.call(free, [ctx.b.load(ptr) if isinstance(ptr.type.pointee, ir.PointerType) else ptr])
        ctx.b.store(ir.Constant(PTR, None), ctx.b.gep(arena_pointers(ctx), [slot]))


# ------------------------------------------------------------------ tapes
def _item_type(ctx, tape_value):
    """The LLVM struct of one tape item."""
    return ir.LiteralStructType([ltype(t) for t in tape_value.type.items])


@lower(TAPES, "tape_new")
def _tape_new(ctx, op, ins):
    """A tape: of a known length (the operand), or growing (capacity and pointer in stack slots)."""
    b = ctx.b
    st = _item_type(ctx, op.results[0])
    size = ir.Constant(INT64, max(st.get_abi_size(ctx.target.target_data()), 1))
    if op.operands:
        # snapshot slots start empty (null arrays): a put frees what its slot held
        raw, slot = allocate(ctx, ins[0], size.constant, zeroed=op.attrs.get("snapshots", False))
        ctx.frees.append((raw, slot))
        return b.bitcast(raw, ir.PointerType(st))
    with b.goto_block(ctx.allocas_block):
        b.position_at_start(ctx.allocas_block)
        cap = b.alloca(INT64)
        ptr = b.alloca(PTR)
    b.store(ir.Constant(INT64, 16), cap)
    raw, slot = allocate(ctx, ir.Constant(INT64, 16), size.constant, zeroed=False)
    b.store(raw, ptr)
    ctx.growing[op.results[0]] = (cap, ptr, size, slot)
    ctx.frees.append((ptr, slot))
    return b.bitcast(raw, ir.PointerType(st))


def _tape_pointer(ctx, tape_value):
    """The tape's items as a pointer (a growing tape's current buffer, loaded from its slot)."""
    if tape_value in ctx.growing:
        ptr = ctx.growing[tape_value][1]
        return ctx.b.bitcast(ctx.b.load(ptr), ir.PointerType(_item_type(ctx, tape_value)))
    return ctx.v(tape_value)


@lower(TAPES, "tape_put")
def _tape_put(ctx, op, ins):
    """tape[k] = items; an appending put doubles a growing tape when it is full."""
    b = ctx.b
    tape_value = op.operands[0]
    k = ins[1]
    if op.attrs.get("append"):
        cap, ptr, size, slot = ctx.growing[tape_value]
        with b.if_then(b.icmp_signed(">=", k, b.load(cap)), likely=False):
            new_cap = b.mul(b.load(cap), ir.Constant(INT64, 2))
            nbytes = b.smul_with_overflow(new_cap, size)
            memory_guard(ctx, b.extract_value(nbytes, 1), new_cap, size)
            grown = _reallocate(ctx, b.load(ptr), b.extract_value(nbytes, 0), new_cap, size)
            b.store(grown, ptr)
            b.store(grown, b.gep(arena_pointers(ctx), [slot]))
            b.store(new_cap, cap)
    st = _item_type(ctx, tape_value)
    if op.attrs.get("owned"):
        _own_copies(ctx, op, ins)
    item = ir.Constant(st, ir.Undefined)
    for j, v in enumerate(ins[2:]):
        item = b.insert_value(item, v, j)
    b.store(item, b.gep(_tape_pointer(ctx, tape_value), [k]))


@lower(TAPES, "tape_get")
def _tape_get(ctx, op, ins):
    b = ctx.b
    tape, k = ins
    item = b.load(b.gep(_tape_pointer(ctx, op.operands[0]), [k]))
    for j, r in enumerate(op.results):
        ctx.values[r] = b.extract_value(item, j)


def _own_copies(ctx, op, ins):
    """A put into a snapshot slot that owns its arrays (fresh copies): the copies' arena
    entries get marked as the slot's (kept by ``_release_since``), and the arrays the slot
    held before are freed, their entries cleared."""
    b = ctx.b
    k = ins[1]
    old = b.load(b.gep(_tape_pointer(ctx, op.operands[0]), [k]))
    pairs = [(b.extract_value(b.extract_value(old, j), 0), b.extract_value(v, 0))
             for j, (a, v) in enumerate(zip(op.operands[2:], ins[2:])) if a.type.is_array]
    slots = arena_pointers(ctx)
    free = ctx.declare("free", ir.VoidType(), [PTR])
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
    counted_loop(ctx, ir.Constant(INT64, 0), b.load(ctx.arena_count), one, [], step, name="snapshot")
