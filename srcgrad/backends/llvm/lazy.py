"""Lazy arrays of the llvm backend: values fusion.py leaves unstored, and the code that
computes their elements inside the loop of the op consuming them.

A lazy value knows its shape (checked where the op stood, so errors come in program order)
and how to compute element ``idx`` (right-aligned, as numpy broadcasting aligns shapes).
Within one iteration of the consumer's loop, each lazy element is computed once (``memo``).
A lazy ``sum_to`` is the identity only when its shapes are equal: the consumer checks that
at run time and otherwise runs a strict copy of its loop, where each such ``sum_to`` is
first computed into an array.

``elementwise`` lowers a scalar primitive over arrays (a lazy value, or one computed into a
new array); the lazy kinds are ``Lazy``'s (arrays.py) subclasses here. Each function takes
the lowering context first (lowering.Lowering: its builder ``b``, ``memo`` and ``strict``).

Example (inside a rule):
    evaluating(ctx, [v], lambda: each_element(ctx, shape, step))
"""
from llvmlite import ir

from ...ir.types import F32, F64, ArrayType
from .arrays import (Lazy, as_f64, broadcast_shape, broadcast_view, core_mismatch, load_broadcast, load_element,
                     new_array, raw_pointer, shape_values, store_element)
from .loops import choose, each_index, sum_step
from .types import BIT, DOUBLE, INT64


class Fused(Lazy):
    """An element-wise op: its operands (broadcast views, scalars or lazy values)."""

    def __init__(self, op, ins, shape, elem_types):
        super().__init__(op.results[0].type, shape)
        self.op, self.ins, self.elem_types = op, ins, elem_types

    def children(self):
        return [v for v in self.ins if isinstance(v, Lazy)]


class RowDot(Lazy):
    """``A @ w``: element i is the dot product of row i of A with w."""

    def __init__(self, t, shape, a, ta, w, tw):
        super().__init__(t, shape)
        self.a, self.ta, self.w, self.tw = a, ta, w, tw


class SumTo(Lazy):
    """``sum_to(g, like)`` of equal ranks: ``g`` itself where ``equal`` (the shapes match)."""

    def __init__(self, t, shape, g, gt, equal):
        super().__init__(t, shape)
        self.g, self.gt, self.equal = g, gt, equal

    def children(self):
        return [self.g] if isinstance(self.g, Lazy) else []


class Fill(Lazy):
    """Every element is ``value``."""

    def __init__(self, t, shape, value):
        super().__init__(t, shape)
        self.value = value


def _post_order(values):
    """The lazy values among ``values`` and those they are computed from, children first."""
    seen, out = set(), []

    def visit(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        for c in v.children():
            visit(c)
        out.append(v)
    for v in values:
        if isinstance(v, Lazy):
            visit(v)
    return out


def element(ctx, t, value, idx):
    """Element ``idx`` (right-aligned) of an array value, a broadcast view or a lazy value."""
    if not isinstance(value, Lazy):
        return load_broadcast(ctx, t, value, idx)
    key = id(value)
    if key not in ctx.memo:
        ctx.memo[key] = _lazy_element(ctx, value, idx[len(idx) - value.t.ndim:])
    return ctx.memo[key]


def _lazy_element(ctx, value, idx):
    """Element ``idx`` (the value's own axes) of a lazy value, computed here."""
    b = ctx.b
    if isinstance(value, Fused):
        op = value.op
        vals = [element(ctx, x.type, v, idx) if x.type.is_array else v for x, v in zip(op.operands, value.ins)]
        return ctx.scalar(op.prim, value.elem_types, op.results[0].type.dtype, vals, elementwise=True)
    if isinstance(value, Fill):
        return value.value
    if isinstance(value, SumTo):
        if ctx.strict is not None:
            return load_broadcast(ctx, value.t, ctx.strict[id(value)], idx)
        return element(ctx, value.gt, value.g, idx)
    # a row's dot product (a size-1 result broadcasts: row 0)
    (n,) = value.shape
    i = b.select(b.icmp_signed("==", n, ir.Constant(INT64, 1)), ir.Constant(INT64, 0), idx[0])
    acc = ctx.stack_slot(DOUBLE)
    b.store(ir.Constant(DOUBLE, 0.0), acc)
    k_len = shape_values(ctx, value.w, 1)[0]
    each_index(ctx, [k_len], lambda kk: b.store(sum_step(ctx, b.load(acc), b.fmul(
        as_f64(ctx, value.ta, load_element(ctx, value.ta, value.a, [i] + kk)),
        as_f64(ctx, value.tw, load_element(ctx, value.tw, value.w, kk)))), acc))
    return b.load(acc)


def each_element(ctx, shape, step):
    """each_index whose body may compute lazy elements (each once per iteration)."""
    def body(idx):
        saved, ctx.memo = ctx.memo, {}
        step(idx)
        ctx.memo = saved
    each_index(ctx, shape, body)


def evaluating(ctx, values, emit):
    """Emit ``emit()`` — a consumer's loop over the lazy ``values`` — guarded by what
    their lazy ``sum_to`` parts assume, with a strict copy for when that does not hold."""
    sums = [v for v in _post_order(values) if isinstance(v, SumTo)]
    if not sums:
        emit()
        return
    b = ctx.b
    cond = sums[0].equal
    for s in sums[1:]:
        cond = b.and_(cond, s.equal)

    def strict():
        saved, ctx.strict = ctx.strict, {}
        for s in sums:
            ctx.strict[id(s)] = broadcast_view(ctx, s.t, _stored_sum_to(ctx, s))
        emit()
        ctx.strict = saved
    choose(ctx, cond, emit, strict)


def _stored_sum_to(ctx, s):
    """``sum_to(g, like)`` computed into an array (g's lazy parts computed element-wise)."""
    b = ctx.b
    result = new_array(ctx, s.t, s.shape, 0.0)
    target = broadcast_view(ctx, s.t, result)

    def step(idx):
        ptr = raw_pointer(ctx, s.t, target, idx)
        b.store(b.fadd(b.load(ptr), as_f64(ctx, s.gt, element(ctx, s.gt, s.g, idx))), ptr)
    each_element(ctx, shape_values(ctx, s.g, s.gt.ndim), step)
    return result


def stored(ctx, t, value):
    """``value`` as an array: itself when stored, else computed into a new array."""
    if not isinstance(value, Lazy):
        return value
    result = new_array(ctx, value.t, value.shape, None, written=True)
    evaluating(ctx, [value], lambda: each_element(ctx, value.shape, lambda idx: store_element(
        ctx, value.t, result, idx, element(ctx, value.t, value, idx))))
    return result


def elementwise(ctx, op, ins):
    """A scalar primitive over arrays with numpy's broadcasting: a loop nest over the result,
    or, for a lazy op (fusion.py), a value its consumer computes element by element."""
    out_t = op.results[0].type
    shape = broadcast_shape(ctx, out_t.ndim, [(x.type, v) for x, v in zip(op.operands, ins)])
    fused = _lazy_elementwise(ctx, op, ins, shape)
    if op in ctx.lazy:
        return fused
    result = new_array(ctx, out_t, shape, None, written=True)       # each element stored below
    evaluating(ctx, [fused], lambda: each_element(ctx, shape, lambda idx: store_element(
        ctx, out_t, result, idx, element(ctx, out_t, fused, idx))))
    return result


# ------------------------------------------------------------------ making lazy values
def _lazy_elementwise(ctx, op, ins, shape):
    """The element-wise ``op`` as a Fused value over broadcast views of its stored operands."""
    elem_types = [(F64 if x.type.dtype is F32 else x.type.dtype) if x.type.is_array else x.type
                  for x in op.operands]
    ins = [broadcast_view(ctx, x.type, v) if x.type.is_array and not isinstance(v, Lazy) else v
           for x, v in zip(op.operands, ins)]
    return Fused(op, ins, shape, elem_types)


def lazy_row_dot(ctx, op, ins):
    """``A @ w`` left lazy (fusion.py): a RowDot, its core axes checked here."""
    (ta, tw), (a, w) = [x.type for x in op.operands], ins
    n, k = shape_values(ctx, a, 2)
    core_mismatch(ctx, k, shape_values(ctx, w, 1)[0])
    return RowDot(op.results[0].type, [n], a, ta, w, tw)


def lazy_sum_to(ctx, op, ins):
    """``sum_to(g, like)`` left lazy: a SumTo, with the run-time test of its shapes being equal."""
    b = ctx.b
    (gt, lt), (g, like) = [x.type for x in op.operands], ins
    shape, g_shape = shape_values(ctx, like, lt.ndim), shape_values(ctx, g, gt.ndim)
    equal = ir.Constant(BIT, 1)
    for m, n in zip(shape, g_shape):
        equal = b.and_(equal, b.icmp_signed("==", m, n))
    return SumTo(lt, shape, g, gt, equal)


def lazy_fill(ctx, op, ins):
    """``broadcast_like`` of a number left lazy: a Fill of that number as a double."""
    g, like = ins
    gt, lt = (x.type for x in op.operands)
    value = g if gt is F64 else (ctx.b.uitofp(g, DOUBLE) if g.type == BIT else ctx.b.sitofp(g, DOUBLE))
    return Fill(ArrayType(F64, lt.ndim), shape_values(ctx, like, lt.ndim), value)
