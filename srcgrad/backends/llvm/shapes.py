"""Shapes and views in the llvm backend: reshape, restride (transpose, flip, squeeze,
expand_dims), astype and the array literals (pack, stack), as native code.

A restride is a view: new shape and strides over the same data, as numpy's. A reshape is a
view when its array is C-contiguous (numpy's test: the strides of the axes longer than 1 are
C's) and otherwise a C-ordered copy, then viewed. Errors raise numpy's own messages.

``SHAPES`` holds the rules (registered in lowering.py's tables).

Example (inside the lowering):
    SHAPES["reshape"](ctx, op, ins)
"""
import numpy as np
from llvmlite import ir

from ...ir.types import F32, F64, I64
from .arrays import load_element, new_array, offset_pointer, product, raw_pointer, shape_values, store_element, view
from .error_codes import ERR_SLOTS, raised
from .loops import each_index
from .registry import lower
from .types import BIT, DOUBLE, INT64

SHAPES = {}


def _c_strides(b, sizes):
    strides, stride = [], ir.Constant(INT64, 1)
    for n in reversed(sizes):
        strides.insert(0, stride)
        stride = b.mul(stride, n)
    return strides


def _strides(ctx, arr, ndim):
    sd = ctx.b.extract_value(arr, 2)
    return [ctx.b.extract_value(sd, k) for k in range(ndim)]


def _reshape_error(err):
    size, sizes = err[0], err[1:]
    return raised(lambda: np.broadcast_to(0.0, (size,)).reshape(sizes))


def _new_sizes(ctx, size, sizes):
    """The sizes with the one negative entry (numpy: any negative one) computed, and numpy's
    ValueError where they do not fit ``size`` elements."""
    b = ctx.b
    zero, one = ir.Constant(INT64, 0), ir.Constant(INT64, 1)
    negative = [b.icmp_signed("<", s, zero) for s in sizes]
    unknowns, known = zero, one
    for s, neg in zip(sizes, negative):
        unknowns = b.add(unknowns, b.zext(neg, INT64))
        known = b.mul(known, b.select(neg, one, s))
    divisor = b.select(b.icmp_signed("==", known, zero), one, known)
    exact = b.icmp_signed("==", known, size)
    fits = b.and_(b.icmp_signed("!=", known, zero), b.icmp_signed("==", b.srem(size, divisor), zero))
    ok = b.select(b.icmp_signed("==", unknowns, zero), exact,
                  b.and_(b.icmp_signed("==", unknowns, one), fits))
    ctx.raise_at(b.not_(ok), _reshape_error, [size] + list(sizes))
    unknown = b.sdiv(size, divisor)
    return [b.select(neg, unknown, s) for s, neg in zip(sizes, negative)]


def _c_contiguous(ctx, shape, strides):
    """numpy's C-contiguity: each axis longer than 1 has C's stride (an empty array is too)."""
    b = ctx.b
    one = ir.Constant(INT64, 1)
    ok, expected, empty = ir.Constant(BIT, 1), one, ir.Constant(BIT, 0)
    for n, st in zip(reversed(shape), reversed(strides)):
        ok = b.and_(ok, b.or_(b.icmp_signed("<=", n, one), b.icmp_signed("==", st, expected)))
        expected = b.mul(expected, n)
        empty = b.or_(empty, b.icmp_signed("==", n, ir.Constant(INT64, 0)))
    return b.or_(ok, empty)


@lower(SHAPES, "reshape")
def _reshape(ctx, op, ins):
    b = ctx.b
    t, out_t = op.operands[0].type, op.results[0].type
    x = ins[0]
    shape = shape_values(ctx, x, t.ndim)
    sizes = _new_sizes(ctx, product(ctx, shape), [b.zext(s, INT64) if s.type is BIT else s for s in ins[1:]])
    strides = _c_strides(b, sizes)
    contiguous = _c_contiguous(ctx, shape, _strides(ctx, x, t.ndim))
    with b.if_else(contiguous) as (then, otherwise):
        with then:
            same = view(ctx, x, b.extract_value(x, 0), sizes, strides, out_t.ndim)
            same_block = b.block
        with otherwise:
            dense = new_array(ctx, t, shape, None)
            each_index(ctx, shape, lambda idx: b.store(b.load(raw_pointer(ctx, t, x, idx)),
                                                       raw_pointer(ctx, t, dense, idx)))
            copied = view(ctx, dense, b.extract_value(dense, 0), sizes, strides, out_t.ndim)
            copy_block = b.block
    out = b.phi(same.type)
    out.add_incoming(same, same_block)
    out.add_incoming(copied, copy_block)
    return out


_SQUEEZE_MESSAGE = str(raised(lambda: np.squeeze(np.zeros(2), axis=0)))


@lower(SHAPES, "restride")
def _restride(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    x = ins[0]
    kind, axes = op.attrs["kind"], op.attrs["axes"]
    shape, strides = shape_values(ctx, x, t.ndim), _strides(ctx, x, t.ndim)
    data = b.extract_value(x, 0)
    zero, one = ir.Constant(INT64, 0), ir.Constant(INT64, 1)
    if kind == "permute":
        shape, strides = [shape[k] for k in axes], [strides[k] for k in axes]
    elif kind == "flip":        # start at the last element of each flipped axis, walk backwards
        offset = zero
        for k in axes:
            last = b.select(b.icmp_signed(">", shape[k], zero), b.sub(shape[k], one), zero)
            offset = b.add(offset, b.mul(last, strides[k]))
            strides[k] = b.neg(strides[k])
        data = b.bitcast(offset_pointer(ctx, t, x, offset), data.type)
    elif kind == "squeeze":
        for k in axes:
            ctx.raise_at(b.icmp_signed("!=", shape[k], one), lambda err: ValueError(_SQUEEZE_MESSAGE))
        shape = [n for k, n in enumerate(shape) if k not in axes]
        strides = [s for k, s in enumerate(strides) if k not in axes]
    else:
        it = iter(zip(shape, strides))
        pairs = [(one, zero) if r in axes else next(it) for r in range(t.ndim + len(axes))]
        shape, strides = [p[0] for p in pairs], [p[1] for p in pairs]
    return view(ctx, x, data, shape, strides, len(shape))


def convert(ctx, value, to):
    """A loaded element (double, i64 or i1) as an element of dtype ``to``, by numpy's casts: a
    float to int64 truncates (NaN and out of range: the minimum int64, as numpy on x86-64), to
    bool is ``!= 0`` (NaN: True).

    Example::

        convert(ctx, ir.Constant(DOUBLE, -1.5), I64)       # i64 -1
    """
    b = ctx.b
    if to in (F64, F32):
        if value.type == INT64:     # to float32 in one rounding, as numpy (widening to double is exact)
            return b.sitofp(value, DOUBLE) if to is F64 else b.fpext(b.sitofp(value, ir.FloatType()), DOUBLE)
        return b.uitofp(value, DOUBLE) if value.type == BIT else value
    if to is I64:
        if value.type == DOUBLE:
            fits = b.and_(b.fcmp_ordered(">=", value, ir.Constant(DOUBLE, -2.0 ** 63)),
                          b.fcmp_ordered("<", value, ir.Constant(DOUBLE, 2.0 ** 63)))
            safe = b.select(fits, value, ir.Constant(DOUBLE, 0.0))
            return b.select(fits, b.fptosi(safe, INT64), ir.Constant(INT64, -2 ** 63))
        return b.zext(value, INT64) if value.type == BIT else value
    if value.type == DOUBLE:
        return b.fcmp_unordered("!=", value, ir.Constant(DOUBLE, 0.0))
    return b.icmp_signed("!=", value, ir.Constant(value.type, 0)) if value.type == INT64 else value


@lower(SHAPES, "astype")
def _astype(ctx, op, ins):
    t, out_t = op.operands[0].type, op.results[0].type
    shape = shape_values(ctx, ins[0], t.ndim)
    out = new_array(ctx, out_t, shape, None)
    each_index(ctx, shape, lambda idx: store_element(
        ctx, out_t, out, idx, convert(ctx, load_element(ctx, t, ins[0], idx), out_t.dtype)))
    return out


@lower(SHAPES, "pack")
def _pack(ctx, op, ins):
    out_t, shape = op.results[0].type, op.attrs["shape"]
    out = new_array(ctx, out_t, [ir.Constant(INT64, n) for n in shape], None)
    for k, v in enumerate(ins):
        place = [k] if len(shape) == 1 else list(divmod(k, shape[1]))
        store_element(ctx, out_t, out, [ir.Constant(INT64, i) for i in place], convert(ctx, v, out_t.dtype))
    return out


def _stack_error(ndim, count):
    def make(err):
        shapes = [tuple(err[k * ndim:(k + 1) * ndim]) for k in range(count)]
        if len(err) < ndim * count:
            return ValueError("setting an array element with a sequence: np.array([...]) of arrays of "
                              "different shapes")
        return raised(lambda: np.array([np.broadcast_to(0.0, s) for s in shapes]))
    return make


@lower(SHAPES, "stack")
def _stack(ctx, op, ins):
    b = ctx.b
    out_t = op.results[0].type
    ts = [v.type for v in op.operands]
    shapes = [shape_values(ctx, v, t.ndim) for v, t in zip(ins, ts)]
    same = ir.Constant(BIT, 1)
    for s in shapes[1:]:
        for n, m in zip(shapes[0], s):
            same = b.and_(same, b.icmp_signed("==", n, m))
    numbers = [n for s in shapes for n in s]
    ctx.raise_at(b.not_(same), _stack_error(ts[0].ndim, len(ins)), numbers if len(numbers) <= ERR_SLOTS else [])
    out = new_array(ctx, out_t, [ir.Constant(INT64, len(ins))] + shapes[0], None)
    for k, (v, t) in enumerate(zip(ins, ts)):
        row = ir.Constant(INT64, k)
        each_index(ctx, shapes[0], lambda idx, v=v, t=t, row=row: store_element(
            ctx, out_t, out, [row] + idx, convert(ctx, load_element(ctx, t, v, idx), out_t.dtype)))
    return out


__all__ = ["SHAPES", "convert"]
