"""The undo log of reverse mode (ad/reverse.py) in the llvm backend: each logged write first
saves the elements it is about to overwrite, and the reverse sweep puts them back, latest first.

The log is a growing buffer of entries {address, old bits, element size in bytes}, one entry
per element overwritten (a row write pushes one per element of the row), so its height counts
elements, not writes as the python backend's list does: heights are only compared with
heights of the same log. The entry keeps the element's raw bits widened to an i64 (a float64's
or an int64's 8 bytes, a float32's 4, a bool's 1), and rewinding stores them back with that
width. The count, the capacity, the data pointer and the data's arena slot live in one stack
struct (types.py: ``ltype`` of the log is a pointer to it); the data is allocated in the
call's arena (memory.py) and grown by doubling like a growing tape, so it is freed after the
call whichever way the call ends (and at the ``return``, as tapes are).

A save computes the elements' addresses exactly as its write's lowering does (negative indices
wrapped, numpy's IndexError where one is out of bounds), so that a bad index raises, before
anything is read, the error the write itself would raise.

``UNDO`` holds the rules of the four primitives.

Example (inside the lowering):
    UNDO["undo_save"](ctx, op, ins)      # op.attrs["write"]: setitem, setslice, scatter, ...
"""
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, ArrayType
from .arrays import element_pointer, product, raw_pointer, shape_values, slice_view
from .indexing import each_true, index_arrays, index_places, mask_shape
from .loops import counted_loop, each_index
from .memory import allocate, arena_pointers, memory_guard
from .registry import lower
from .types import ELEMENT_SIZE, INT64, PTR, UNDO_ENTRY, UNDO_LOG_STRUCT

UNDO = {}

# fields of the log's struct (types.UNDO_LOG_STRUCT)
COUNT, CAPACITY, DATA, SLOT = range(4)
START_CAPACITY = 64
ENTRY_BYTES = 24             # {i8*, i64, i64}
_LOG = ir.PointerType(UNDO_LOG_STRUCT)


def _field(ctx, log, k):
    return ctx.b.gep(log, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), k)])


def _entries(ctx, log):
    return ctx.b.bitcast(ctx.b.load(_field(ctx, log, DATA)), ir.PointerType(UNDO_ENTRY))


@lower(UNDO, "undo_new")
def _new(ctx, op, ins):
    """An empty log: its struct in the function's stack frame, START_CAPACITY entries in the arena."""
    b = ctx.b
    with b.goto_block(ctx.allocas_block):
        b.position_at_start(ctx.allocas_block)
        log = b.alloca(UNDO_LOG_STRUCT, name="undo")
    data, slot = allocate(ctx, ir.Constant(INT64, START_CAPACITY), ENTRY_BYTES, zeroed=False)
    b.store(ir.Constant(INT64, 0), _field(ctx, log, COUNT))
    b.store(ir.Constant(INT64, START_CAPACITY), _field(ctx, log, CAPACITY))
    b.store(data, _field(ctx, log, DATA))
    b.store(slot, _field(ctx, log, SLOT))
    ctx.frees.append((_field(ctx, log, DATA), slot))     # freed where its region ends, as a tape
    return log


@lower(UNDO, "undo_mark")
def _mark(ctx, op, ins):
    return ctx.b.load(_field(ctx, ins[0], COUNT))


@lower(UNDO, "undo_rewind")
def _rewind(ctx, op, ins):
    ctx.b.call(ctx.module_function("srcgrad.rt.undo_rewind", [_LOG, INT64], ir.VoidType(),
                                   lambda *args: _rewind_body(ctx, *args)), ins)


def _rewind_body(ctx, log, height):
    """Entries count-1 down to ``height``: each element's old bits stored back, with its width."""
    b = ctx.b
    count = b.load(_field(ctx, log, COUNT))
    entries = _entries(ctx, log)
    one = ir.Constant(INT64, 1)

    def restore(k, carried):
        entry = b.load(b.gep(entries, [k]))
        where, bits, size = (b.extract_value(entry, j) for j in range(3))
        done = ctx.func.append_basic_block("restored")
        cases = {width: ctx.func.append_basic_block(f"restore{width}") for width in (8, 4, 1)}
        switch = b.switch(size, cases[1])          # 1: a bool
        switch.add_case(ir.Constant(INT64, 8), cases[8])
        switch.add_case(ir.Constant(INT64, 4), cases[4])
        for width, bb in cases.items():
            b.position_at_end(bb)
            t = ir.IntType(8 * width)
            b.store(bits if width == 8 else b.trunc(bits, t), b.bitcast(where, ir.PointerType(t)))
            b.branch(done)
        b.position_at_end(done)
        return []
    counted_loop(ctx, b.sub(count, one), b.sub(height, one), ir.Constant(INT64, -1), [], restore, name="rewind")
    b.store(b.select(b.icmp_signed(">", count, height), height, count), _field(ctx, log, COUNT))
    b.ret_void()


def _reserve(ctx, log, n):
    """Room for ``n`` more entries: the module's grow function where the log is full, MemoryError
    where it fails."""
    b = ctx.b
    need = b.add(b.load(_field(ctx, log, COUNT)), n)
    with b.if_then(b.icmp_signed(">", need, b.load(_field(ctx, log, CAPACITY))), likely=False):
        slot = b.gep(arena_pointers(ctx), [b.load(_field(ctx, log, SLOT))])
        grow = ctx.module_function("srcgrad.rt.undo_grow", [_LOG, INT64, ir.PointerType(PTR)], INT64,
                                   lambda *args: _grow_body(ctx, *args))
        failed = b.call(grow, [log, need, slot])
        memory_guard(ctx, b.icmp_signed("!=", failed, ir.Constant(INT64, 0)), failed,
                     ir.Constant(INT64, ENTRY_BYTES))


def _grow_body(ctx, log, need, slot):
    """The log's capacity doubled (or made ``need`` where that is more), the data reallocated and
    its arena slot (at ``slot``) updated: returns 0, or the capacity it could not get."""
    b = ctx.b
    cap = b.load(_field(ctx, log, CAPACITY))
    double = b.mul(cap, ir.Constant(INT64, 2))
    new_cap = b.select(b.icmp_signed(">", need, double), need, double)
    nbytes = b.smul_with_overflow(new_cap, ir.Constant(INT64, ENTRY_BYTES))
    with b.if_then(b.extract_value(nbytes, 1), likely=False):
        b.ret(new_cap)
    realloc = ctx.declare("realloc", PTR, [PTR, INT64])
    grown = b.call(realloc, [b.load(_field(ctx, log, DATA)), b.extract_value(nbytes, 0)])
    with b.if_then(b.icmp_unsigned("==", grown, ir.Constant(PTR, None)), likely=False):
        b.ret(new_cap)
    b.store(grown, _field(ctx, log, DATA))
    b.store(grown, slot)
    b.store(new_cap, _field(ctx, log, CAPACITY))
    b.ret(ir.Constant(INT64, 0))


def _bits(ctx, t, ptr):
    """The raw bits of the element at ``ptr`` (of an array of ``t``) as an i64."""
    b = ctx.b
    value = b.load(ptr)
    if t.dtype is F64:
        return b.bitcast(value, INT64)
    if t.dtype is F32:
        return b.zext(b.bitcast(value, ir.IntType(32)), INT64)
    if t.dtype is BOOL:
        return b.zext(value, INT64)
    return value


def _push(ctx, log, t, ptr, reserved=False):
    """Save the element at ``ptr`` (of an array of ``t``); ``reserved``: room was made before."""
    b = ctx.b
    if not reserved:
        _reserve(ctx, log, ir.Constant(INT64, 1))
    count_ptr = _field(ctx, log, COUNT)
    count = b.load(count_ptr)
    entry = ir.Constant(UNDO_ENTRY, ir.Undefined)
    entry = b.insert_value(entry, b.bitcast(ptr, PTR), 0)
    entry = b.insert_value(entry, _bits(ctx, t, ptr), 1)
    entry = b.insert_value(entry, ir.Constant(INT64, ELEMENT_SIZE[t.dtype]), 2)
    b.store(entry, b.gep(_entries(ctx, log), [count]))
    b.store(b.add(count, ir.Constant(INT64, 1)), count_ptr)


@lower(UNDO, "undo_save")
def _save(ctx, op, ins):
    """The elements write ``op.attrs["write"]`` is about to overwrite (operands: the array, the
    log, the write's index operands), addressed as that write's lowering addresses them."""
    arr_value = op.operands[0]
    t = arr_value.type
    arr, log = ins[0], ins[1]
    SAVES[op.attrs["write"]](ctx, op, t, arr, log, ins[2:])


def _save_item(ctx, op, t, arr, log, idx):
    _push(ctx, log, t, element_pointer(ctx, op, op.operands[0], arr, idx))


def _save_slice(ctx, op, t, arr, log, bounds):
    """Every element of the view ``x[spec]`` (arrays.py ``_setslice`` writes through it)."""
    spec = op.attrs["spec"]
    part = slice_view(ctx, op, t, arr, bounds)
    pt = ArrayType(t.dtype, t.ndim - sum(1 for s in spec if s[0] == "i") + sum(1 for s in spec if s[0] == "n"))
    shape = shape_values(ctx, part, pt.ndim)
    _reserve(ctx, log, product(ctx, shape))
    each_index(ctx, shape, lambda idx: _push(ctx, log, pt, raw_pointer(ctx, pt, part, idx), reserved=True))


def _save_scatter(ctx, op, t, arr, log, idx):
    """Each place the index arrays name (indexing.py ``_scatter``), with the row under it where
    they index fewer axes than the array has; a place named twice is saved twice, which is
    right: rewinding latest first puts the oldest value back last."""
    ts, views, ishape = index_arrays(ctx, op, [arr, log] + list(idx), 2)
    arr_shape = shape_values(ctx, arr, t.ndim)
    k, r = len(ts), len(ishape)
    target = ishape + arr_shape[k:]
    _reserve(ctx, log, product(ctx, target))

    def step(idx):
        places = index_places(ctx, op, ts, views, arr_shape, idx[:r]) + idx[r:]
        _push(ctx, log, t, raw_pointer(ctx, t, arr, places), reserved=True)
    each_index(ctx, target, step)


def _save_mask(ctx, op, t, arr, log, idx):
    """Each element where the mask (over the leading axes) is True (indexing.py ``_setmask``)."""
    (mask,) = idx
    mask_t = op.operands[2].type
    arr_shape = shape_values(ctx, arr, t.ndim)
    shape = mask_shape(ctx, op, arr_shape, mask_t, mask)
    rest = arr_shape[mask_t.ndim:]
    each_true(ctx, mask_t, mask, shape, lambda where, c: each_index(
        ctx, rest, lambda more: _push(ctx, log, t, raw_pointer(ctx, t, arr, where + more))))


SAVES = {"setitem": _save_item, "setslice": _save_slice, "scatter": _save_scatter, "scatter_add": _save_scatter,
         "setmask": _save_mask}

__all__ = ["UNDO"]
