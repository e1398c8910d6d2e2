"""numpy's advanced indexing in the llvm backend: ``x[idx]`` (gather), ``x[idx] = v``
(scatter), ``np.add.at`` (scatter_add), ``x[mask]`` and ``x[mask] = v``, as loop nests.

Index arrays broadcast together (zero strides on their length-1 axes); each index is
wrapped (negative from the end) and bounds-checked, raising the IndexError of an element
read (naming the array, the index, the axis and the line). Loops run in C order, so of two
writes to one place the last stays, as in numpy. A mask's count of True is known after a
first pass over it; the result of ``x[mask]`` is allocated then and filled in a second.

Example (inside the lowering):
    INDEXING["gather"](ctx, op, ins)
"""
from llvmlite import ir

from ...ir.types import BOOL, I64, ArrayType
from .arrays import (broadcast_view, check_index, from_end, load_broadcast, load_element, new_array, shape_values,
                     store_element)
from .error_codes import shape_text
from .loops import each_index
from .registry import lower
from .types import BIT, DOUBLE, INT64

INDEXING = {}


def _index_shape(ctx, ts, vals):
    """The shape the index arrays broadcast to (numpy's IndexError where they do not)."""
    b = ctx.b
    rank = max(t.ndim for t in ts)
    one = ir.Constant(INT64, 1)
    shape, ok = [one] * rank, ir.Constant(BIT, 1)
    dims = []
    for t, v in zip(ts, vals):
        lead = rank - t.ndim
        for k, n in enumerate(shape_values(ctx, v, t.ndim)):
            cur = shape[lead + k]
            ok = b.and_(ok, b.or_(b.or_(b.icmp_signed("==", cur, one), b.icmp_signed("==", n, one)),
                                  b.icmp_signed("==", cur, n)))
            shape[lead + k] = b.select(b.icmp_signed("==", n, one), cur, n)
            dims.append(n)
    if len(ts) > 1:
        ndims = [t.ndim for t in ts]

        def make(err):
            it = iter(err)
            shapes = " ".join(shape_text([next(it) for _ in range(nd)]) for nd in ndims)
            return IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes} ")
        ctx.raise_at(b.not_(ok), make, dims)
    return shape


def index_places(ctx, op, ts, views, arr_shape, idx):
    """The checked places (axis by axis) that the index arrays name at index position ``idx``."""
    out = []
    for axis, (t, v) in enumerate(zip(ts, views)):
        i, j = from_end(ctx, load_broadcast(ctx, t, v, idx), arr_shape[axis])
        if ctx.boundscheck:
            check_index(ctx, op, axis, i, j, arr_shape[axis])
        out.append(j)
    return out


def index_arrays(ctx, op, ins, first):
    """(index types, broadcast views of the index arrays, their shape) of an op whose index
    arrays start at operand ``first``."""
    ts = [v.type for v in op.operands[first:]]
    vals = ins[first:]
    shape = _index_shape(ctx, ts, vals)
    return ts, [broadcast_view(ctx, t, v) for t, v in zip(ts, vals)], shape


def _flat(ctx, shape, idx):
    """The C-order position of ``idx`` in an array of ``shape``."""
    b = ctx.b
    pos = ir.Constant(INT64, 0)
    for n, i in zip(shape, idx):
        pos = b.add(b.mul(pos, n), i)
    return pos


@lower(INDEXING, "gather")
def _gather(ctx, op, ins):
    b = ctx.b
    arr_t = op.operands[0].type
    ts, views, ishape = index_arrays(ctx, op, ins, 1)
    arr_shape = shape_values(ctx, ins[0], arr_t.ndim)
    k, r = len(ts), len(ishape)
    out_t = op.results[0].type
    result = new_array(ctx, out_t, ishape + arr_shape[k:], None)
    owner = None
    if op.attrs.get("last_only"):
        # owner[place] = the last index position naming the place (x[idx] = v kept its value)
        owner_t = ArrayType(I64, k)
        owner = new_array(ctx, owner_t, arr_shape[:k], None)
        each_index(ctx, ishape, lambda idx: store_element(
            ctx, owner_t, owner, index_places(ctx, op, ts, views, arr_shape, idx), _flat(ctx, ishape, idx)))

    def step(idx):
        places = index_places(ctx, op, ts, views, arr_shape, idx[:r])
        val = load_element(ctx, arr_t, ins[0], places + idx[r:])
        if owner is not None:
            last = load_element(ctx, ArrayType(I64, k), owner, places)
            val = b.select(b.icmp_signed("==", last, _flat(ctx, ishape, idx[:r])), val, ir.Constant(val.type, 0))
        store_element(ctx, out_t, result, idx, val)
    each_index(ctx, ishape + arr_shape[k:], step)
    return result


def _stored(ctx, arr_t, val, old=None):
    """A value as an element of ``arr_t`` (plus ``old``, for np.add.at)."""
    b = ctx.b
    if arr_t.dtype is BOOL:
        if val.type is INT64:
            return b.icmp_signed("!=", val, ir.Constant(INT64, 0))
        return val if val.type is BIT else b.fcmp_unordered("!=", val, ir.Constant(DOUBLE, 0.0))
    if val.type is BIT:
        val = b.zext(val, INT64) if arr_t.dtype is I64 else b.uitofp(val, DOUBLE)
    elif val.type is INT64 and arr_t.dtype is not I64:
        val = b.sitofp(val, DOUBLE)
    if old is not None:
        val = b.add(old, val) if arr_t.dtype is I64 else b.fadd(old, val)
    return val


def _check_value(ctx, vt, v, target):
    """numpy's ValueError unless ``v`` broadcasts to the written places' shape ``target``."""
    b = ctx.b
    one = ir.Constant(INT64, 1)
    ok = ir.Constant(BIT, int(vt.ndim <= len(target)))
    v_shape = shape_values(ctx, v, vt.ndim)
    for n, m in zip(target[len(target) - vt.ndim:], v_shape):
        ok = b.and_(ok, b.or_(b.icmp_signed("==", m, one), b.icmp_signed("==", m, n)))

    def make(err):
        return ValueError(f"shape mismatch: value array of shape {shape_text(err[:vt.ndim])} could not be "
                          f"broadcast to indexing result of shape {shape_text(err[vt.ndim:])}")
    ctx.raise_at(b.not_(ok), make, v_shape + list(target))
    return broadcast_view(ctx, vt, v)


@lower(INDEXING, "scatter", "scatter_add")
def _scatter(ctx, op, ins):
    arr_t, vt = op.operands[0].type, op.operands[1].type
    ts, views, ishape = index_arrays(ctx, op, ins, 2)
    arr_shape = shape_values(ctx, ins[0], arr_t.ndim)
    k, r = len(ts), len(ishape)
    target = ishape + arr_shape[k:]
    v = _check_value(ctx, vt, ins[1], target) if vt.is_array else ins[1]

    def step(idx):
        places = index_places(ctx, op, ts, views, arr_shape, idx[:r]) + idx[r:]
        val = load_broadcast(ctx, vt, v, idx) if vt.is_array else v
        old = load_element(ctx, arr_t, ins[0], places) if op.prim == "scatter_add" else None
        store_element(ctx, arr_t, ins[0], places, _stored(ctx, arr_t, val, old))
    each_index(ctx, target, step)
    return ins[0]


def mask_shape(ctx, op, arr_shape, mask_t, mask):
    """The mask's shape, which must be the array's on the axes it covers (numpy's IndexError)."""
    b = ctx.b
    shape = shape_values(ctx, mask, mask_t.ndim)
    for axis, (n, m) in enumerate(zip(arr_shape, shape)):
        ctx.raise_at(b.icmp_signed("!=", n, m), lambda err, axis=axis: IndexError(
            f"boolean index did not match indexed array along axis {axis}; size of axis is {err[0]} but size "
            f"of corresponding boolean axis is {err[1]}"), [n, m])
    return shape


def _count(ctx, mask_t, mask, shape):
    """The number of True in the mask."""
    b = ctx.b
    slot = ctx.stack_slot(INT64)
    b.store(ir.Constant(INT64, 0), slot)
    each_index(ctx, shape, lambda idx: b.store(
        b.add(b.load(slot), b.zext(load_element(ctx, mask_t, mask, idx), INT64)), slot))
    return b.load(slot)


def each_true(ctx, mask_t, mask, shape, body):
    """``body(idx, c)`` for each True of the mask, ``c`` counting them from 0 in C order."""
    b = ctx.b
    slot = ctx.stack_slot(INT64)
    b.store(ir.Constant(INT64, 0), slot)

    def step(idx):
        with b.if_then(load_element(ctx, mask_t, mask, idx)):
            c = b.load(slot)
            body(idx, c)
            b.store(b.add(c, ir.Constant(INT64, 1)), slot)
    each_index(ctx, shape, step)


@lower(INDEXING, "mask_select")
def _mask_select(ctx, op, ins):
    arr_t, mask_t = op.operands[0].type, op.operands[1].type
    arr, mask = ins
    arr_shape = shape_values(ctx, arr, arr_t.ndim)
    shape = mask_shape(ctx, op, arr_shape, mask_t, mask)
    rest = arr_shape[mask_t.ndim:]
    out_t = op.results[0].type
    result = new_array(ctx, out_t, [_count(ctx, mask_t, mask, shape)] + rest, None)
    each_true(ctx, mask_t, mask, shape, lambda idx, c: each_index(ctx, rest, lambda more: store_element(
        ctx, out_t, result, [c] + more, load_element(ctx, arr_t, arr, idx + more))))
    return result


@lower(INDEXING, "setmask")
def _setmask(ctx, op, ins):
    arr_t, vt, mask_t = (v.type for v in op.operands)
    arr, v, mask = ins
    arr_shape = shape_values(ctx, arr, arr_t.ndim)
    shape = mask_shape(ctx, op, arr_shape, mask_t, mask)
    rest = arr_shape[mask_t.ndim:]
    if vt.is_array:
        count = _count(ctx, mask_t, mask, shape)
        if vt.ndim == 1 and not rest:
            v = _check_count(ctx, vt, v, count)
        else:
            v = _check_value(ctx, vt, v, [count] + rest)

    def store(idx, c):
        def one(more):
            val = load_broadcast(ctx, vt, v, [c] + more) if vt.is_array else v
            store_element(ctx, arr_t, arr, idx + more, _stored(ctx, arr_t, val))
        each_index(ctx, rest, one)
    each_true(ctx, mask_t, mask, shape, store)
    return ins[0]


def _check_count(ctx, vt, v, count):
    """numpy's ValueError unless a 1-D ``v`` has one value per True (or one value)."""
    b = ctx.b
    (n,) = shape_values(ctx, v, 1)
    bad = b.and_(b.icmp_signed("!=", n, count), b.icmp_signed("!=", n, ir.Constant(INT64, 1)))
    ctx.raise_at(bad, lambda err: ValueError(
        f"NumPy boolean array indexing assignment cannot assign {err[0]} input values to the {err[1]} output "
        "values where the mask is true"), [n, count])
    return broadcast_view(ctx, vt, v)


__all__ = ["INDEXING"]
