"""Lazy arrays of the llvm backend: values fusion.py leaves unstored, and the code that
computes their elements inside the loop of the op consuming them.

A lazy value knows its shape (checked where the op stood, so errors come in program order)
and how to compute element ``idx`` (right-aligned, as numpy broadcasting aligns shapes).
Within one iteration of the consumer's loop, each lazy element is computed once (``memo``).
A lazy ``sum_to`` is the identity only when its shapes are equal: the consumer checks that
at run time and otherwise runs a strict copy of its loop, where each such ``sum_to`` is
first computed into an array.

Example (inside the lowering):
    self.evaluating([v], lambda: self.each_index(shape, step))
"""
from llvmlite import ir

from ...ir.types import F32, F64, ArrayType
from .types import BIT, DOUBLE, INT64


class Lazy:
    """An array that is never stored: ``t`` its type, ``shape`` its LLVM sizes."""

    def __init__(self, t, shape):
        self.t, self.shape = t, list(shape)

    def children(self):
        return []


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


class LazyArrays:
    """The lowering's methods for lazy values (a mixin of lowering.Lowering: uses its builder and helpers)."""

    def element(self, t, value, idx):
        """Element ``idx`` (right-aligned) of an array value, a broadcast view or a lazy value."""
        if not isinstance(value, Lazy):
            return self.load_broadcast(t, value, idx)
        key = id(value)
        if key not in self.memo:
            self.memo[key] = self.lazy_element(value, idx[len(idx) - value.t.ndim:])
        return self.memo[key]

    def lazy_element(self, value, idx):
        b = self.b
        if isinstance(value, Fused):
            op = value.op
            vals = [self.element(x.type, v, idx) if x.type.is_array else v for x, v in zip(op.operands, value.ins)]
            return self.scalar(op.prim, value.elem_types, op.results[0].type.dtype, vals, elementwise=True)
        if isinstance(value, Fill):
            return value.value
        if isinstance(value, SumTo):
            if self.strict is not None:
                return self.load_broadcast(value.t, self.strict[id(value)], idx)
            return self.element(value.gt, value.g, idx)
        # a row's dot product (a size-1 result broadcasts: row 0)
        (n,) = value.shape
        i = b.select(b.icmp_signed("==", n, ir.Constant(INT64, 1)), ir.Constant(INT64, 0), idx[0])
        acc = self.stack_slot(DOUBLE)
        b.store(ir.Constant(DOUBLE, 0.0), acc)
        k_len = self.shape_values(value.w, 1)[0]
        self.each_index([k_len], lambda kk: b.store(self.sum_step(b.load(acc), b.fmul(
            self.as_f64(value.ta, self.load_element(value.ta, value.a, [i] + kk)),
            self.as_f64(value.tw, self.load_element(value.tw, value.w, kk)))), acc))
        return b.load(acc)

    def each_element(self, shape, step):
        """each_index whose body may compute lazy elements (each once per iteration)."""
        def body(idx):
            saved, self.memo = self.memo, {}
            step(idx)
            self.memo = saved
        self.each_index(shape, body)

    def evaluating(self, values, emit):
        """Emit ``emit()`` — a consumer's loop over the lazy ``values`` — guarded by what
        their lazy ``sum_to`` parts assume, with a strict copy for when that does not hold."""
        sums = [v for v in _post_order(values) if isinstance(v, SumTo)]
        if not sums:
            emit()
            return
        b = self.b
        cond = sums[0].equal
        for s in sums[1:]:
            cond = b.and_(cond, s.equal)

        def strict():
            saved, self.strict = self.strict, {}
            for s in sums:
                self.strict[id(s)] = self.broadcast_view(s.t, self.stored_sum_to(s))
            emit()
            self.strict = saved
        self.choose(cond, emit, strict)

    def stored_sum_to(self, s):
        """``sum_to(g, like)`` computed into an array (g's lazy parts computed element-wise)."""
        b = self.b
        result = self.new_array(s.t, s.shape, 0.0)
        target = self.broadcast_view(s.t, result)

        def step(idx):
            ptr = self.raw_pointer(s.t, target, idx)
            b.store(b.fadd(b.load(ptr), self.as_f64(s.gt, self.element(s.gt, s.g, idx))), ptr)
        self.each_element(self.shape_values(s.g, s.gt.ndim), step)
        return result

    def stored(self, t, value):
        """``value`` as an array: itself when stored, else computed into a new array."""
        if not isinstance(value, Lazy):
            return value
        result = self.new_array(value.t, value.shape, None, written=True)
        self.evaluating([value], lambda: self.each_element(value.shape, lambda idx: self.store_element(
            value.t, result, idx, self.element(value.t, value, idx))))
        return result

    # ------------------------------------------------------------------ making lazy values
    def lazy_elementwise(self, op, ins, shape):
        elem_types = [(F64 if x.type.dtype is F32 else x.type.dtype) if x.type.is_array else x.type
                      for x in op.operands]
        ins = [self.broadcast_view(x.type, v) if x.type.is_array and not isinstance(v, Lazy) else v
               for x, v in zip(op.operands, ins)]
        return Fused(op, ins, shape, elem_types)

    def lazy_row_dot(self, op, ins):
        (ta, tw), (a, w) = [x.type for x in op.operands], ins
        n, k = self.shape_values(a, 2)
        self.core_mismatch(k, self.shape_values(w, 1)[0])
        return RowDot(op.results[0].type, [n], a, ta, w, tw)

    def lazy_sum_to(self, op, ins):
        b = self.b
        (gt, lt), (g, like) = [x.type for x in op.operands], ins
        shape, g_shape = self.shape_values(like, lt.ndim), self.shape_values(g, gt.ndim)
        equal = ir.Constant(BIT, 1)
        for m, n in zip(shape, g_shape):
            equal = b.and_(equal, b.icmp_signed("==", m, n))
        return SumTo(lt, shape, g, gt, equal)

    def lazy_fill(self, op, ins):
        g, like = ins
        gt, lt = (x.type for x in op.operands)
        value = g if gt is F64 else (self.b.uitofp(g, DOUBLE) if g.type == BIT else self.b.sitofp(g, DOUBLE))
        return Fill(ArrayType(F64, lt.ndim), self.shape_values(like, lt.ndim), value)
