"""The llvm backend's rules for the array primitives (``ARRAY``): shape and size, element
reads and writes, views (transposes, slices), slice writes, new arrays (``np.zeros_like``,
``np.full``, copies, ``np.arange``) and ``broadcast_like``. The helpers they share with every
other table (element access, views, new arrays, numpy's shape checks) are arrays.py's.

Example (inside the lowering):
    ARRAY["slice"](ctx, op, ins)
"""
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, I64, ArrayType
from .arrays import (Lazy, assignable, broadcast_view, element_pointer, from_memory, load_broadcast, load_element, new_array,
                     product, raw_pointer, shape_values, slice_view, store_element, to_memory, view)
from .error_codes import ARANGE_STEP, FLOAT_ARANGE_STEP
from .lazy import each_element, element, evaluating, lazy_fill
from .loops import each_index, range_len
from .registry import lower
from .types import BIT, DOUBLE, INT64

ARRAY = {}


@lower(ARRAY, "shape")
def _shape(ctx, op, ins):
    return shape_values(ctx, ins[0], op.operands[0].type.ndim)[op.attrs["axis"]]     # a lazy array's too


@lower(ARRAY, "size")
def _size(ctx, op, ins):
    return product(ctx, shape_values(ctx, ins[0], op.operands[0].type.ndim))


@lower(ARRAY, "index")
def _index(ctx, op, ins):
    arr = op.operands[0]
    return from_memory(ctx, arr.type, ctx.b.load(element_pointer(ctx, op, arr, ins[0], ins[1:])))


@lower(ARRAY, "setitem", "index_add")
def _setitem(ctx, op, ins):
    b = ctx.b
    arr = op.operands[0]
    ptr = element_pointer(ctx, op, arr, ins[0], ins[2:])
    val = ins[1]
    if op.prim == "index_add":
        old = b.load(ptr)
        val = b.fadd(b.fpext(old, DOUBLE) if arr.type.dtype is F32 else old, val)
    b.store(to_memory(ctx, arr.type, val), ptr)
    return ins[0]


@lower(ARRAY, "zeros_like")
def _zeros_like(ctx, op, ins):
    t = op.operands[0].type
    return new_array(ctx, t, shape_values(ctx, ins[0], t.ndim), 0.0)


@lower(ARRAY, "full")
def _full(ctx, op, ins):
    return new_array(ctx, op.results[0].type, ins, op.attrs["value"])


@lower(ARRAY, "empty")
def _empty(ctx, op, ins):
    return new_array(ctx, op.results[0].type, ins, None, written=True)


@lower(ARRAY, "copy")
def _copy(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    src = ins[0]
    dst = new_array(ctx, t, shape_values(ctx, src, t.ndim), None, written=True)

    def move(idx):
        value = b.load(raw_pointer(ctx, t, src, idx))
        b.store(value, raw_pointer(ctx, t, dst, idx))
    each_index(ctx, shape_values(ctx, src, t.ndim), move)
    return dst


@lower(ARRAY, "arange")
def _arange(ctx, op, ins):
    b = ctx.b
    out_t = op.results[0].type
    if out_t.dtype is F64:
        return _float_arange(ctx, op, ins)
    start, stop, step = ins
    ctx.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), ARANGE_STEP)
    n = range_len(ctx, start, stop, step)
    result = new_array(ctx, out_t, [n], None)
    each_index(ctx, [n], lambda idx: store_element(ctx, out_t, result, idx, b.add(start, b.mul(idx[0], step))))
    return result


def _float_arange(ctx, op, ins):
    """np.arange with a float among start, stop, step: ceil((stop - start) / step) values
    start + i * delta, where delta = (start + step) - start, as numpy computes them."""
    b = ctx.b
    start, stop, step = (b.sitofp(b.zext(v, INT64) if v.type is BIT else v, DOUBLE) if v.type != DOUBLE else v
                         for v in ins)
    ctx.guard(b.fcmp_ordered("==", step, ir.Constant(DOUBLE, 0.0)), FLOAT_ARANGE_STEP)
    count = ctx.call_intrinsic("llvm.ceil", [b.fdiv(b.fsub(stop, start), step)])
    n = b.fptosi(b.select(b.fcmp_ordered(">", count, ir.Constant(DOUBLE, 0.0)), count, ir.Constant(DOUBLE, 0.0)),
                 INT64)
    delta = b.fsub(b.fadd(start, step), start)
    out_t = op.results[0].type
    result = new_array(ctx, out_t, [n], None)
    each_index(ctx, [n], lambda idx: store_element(ctx, out_t, result, idx,
                                                   b.fadd(start, b.fmul(b.sitofp(idx[0], DOUBLE), delta))))
    return result


@lower(ARRAY, "transpose")
def _transpose(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    shape = shape_values(ctx, ins[0], t.ndim)
    sd = b.extract_value(ins[0], 2)
    strides = [b.extract_value(sd, k) for k in range(t.ndim)]
    return view(ctx, ins[0], b.extract_value(ins[0], 0), shape[::-1], strides[::-1], t.ndim)


@lower(ARRAY, "slice")
def _slice(ctx, op, ins):
    return slice_view(ctx, op, op.operands[0].type, ins[0], ins[1:])


@lower(ARRAY, "setslice", "slice_add")
def _setslice(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    part = slice_view(ctx, op, t, ins[0], ins[2:])
    pt = ArrayType(t.dtype, op.operands[0].type.ndim - sum(1 for s in op.attrs["spec"] if s[0] == "i")
                   + sum(1 for s in op.attrs["spec"] if s[0] == "n"))
    vt, v = op.operands[1].type, ins[1]
    shape = shape_values(ctx, part, pt.ndim)
    if vt.is_array:
        assignable(ctx, pt, part, vt, v)
        if not isinstance(v, Lazy):
            v = broadcast_view(ctx, vt, v)

    def step(idx):
        val = _as_element(b, element(ctx, vt, v, idx) if vt.is_array else v, pt.dtype)
        if op.prim == "slice_add":
            val = b.fadd(load_element(ctx, pt, part, idx), val)
        store_element(ctx, pt, part, idx, val)
    evaluating(ctx, [v], lambda: each_element(ctx, shape, step))
    return ins[0]


def _as_element(b, val, dtype):
    """A bool, int or float value converted as numpy assigns it into an array of ``dtype``
    (into bool: nonzero is True, NaN too; into int64: truncation, to_memory)."""
    if dtype is BOOL:
        if val.type is INT64:
            return b.icmp_signed("!=", val, ir.Constant(INT64, 0))
        if val.type is DOUBLE:
            return b.fcmp_unordered("!=", val, ir.Constant(DOUBLE, 0.0))
        return val
    if val.type is BIT:
        return b.zext(val, INT64) if dtype is I64 else b.uitofp(val, DOUBLE)
    if val.type is INT64 and dtype is not I64:
        return b.sitofp(val, DOUBLE)
    return val


@lower(ARRAY, "broadcast_like")
def _broadcast_like(ctx, op, ins):
    if op in ctx.lazy:
        return lazy_fill(ctx, op, ins)
    gt, lt = op.operands[0].type, op.operands[1].type
    g, like = ins
    shape = shape_values(ctx, like, lt.ndim)
    result = new_array(ctx, ArrayType(F64, lt.ndim), shape, None)
    axis = op.attrs.get("axis")
    if gt.is_array and axis is None:
        g = broadcast_view(ctx, gt, g)

    def step(idx):
        if not gt.is_array:
            val = g
        elif axis is not None:
            val = load_element(ctx, gt, g, [i for k, i in enumerate(idx) if k != axis])
        else:
            val = load_broadcast(ctx, gt, g, idx)
        store_element(ctx, ArrayType(F64, lt.ndim), result, idx, val)
    each_index(ctx, shape, step)
    return result
