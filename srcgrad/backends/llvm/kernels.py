"""Kernels of the llvm backend: matrix products and reductions (sum, prod, max, min, along an
axis or over everything, and their gradients), each a loop nest chosen for how the operands
lie in memory.

``KERNELS`` holds their rules; ``Kernels`` the lowering's helpers for them.

Example (inside the lowering):
    total = self.reduce_sum(op, t, arr)
"""
from llvmlite import ir

from ...ir.types import F64, ArrayType
from .error_codes import EMPTY_MAX, EMPTY_MIN, MATMUL_MESSAGE
from .registry import lower
from .scalar_math import numpy_min_max
from .types import DOUBLE, INT64

KERNELS = {}


@lower(KERNELS, "sum")
def _sum(ctx, op, ins):
    return ctx.reduce_sum(op, op.operands[0].type, ins[0])


@lower(KERNELS, "prod", "amax", "amin")
def _reduce(ctx, op, ins):
    return ctx.reduce(op, op.operands[0].type, ins[0])


@lower(KERNELS, "reduce_grad")
def _reduce_grad(ctx, op, ins):
    return ctx.reduce_grad(op, ins)


@lower(KERNELS, "matmul")
def _matmul(ctx, op, ins):
    return ctx.matmul(op, ins)


@lower(KERNELS, "outer")
def _outer(ctx, op, ins):
    b = ctx.b
    ta, tb = op.operands[0].type, op.operands[1].type
    shape = ctx.shape_values(ins[0], 1) + ctx.shape_values(ins[1], 1)
    out_t = op.results[0].type
    result = ctx.new_array(out_t, shape, None, written=True)
    ctx.each_index(shape, lambda idx: ctx.store_element(out_t, result, idx, b.fmul(
        ctx.load_element(ta, ins[0], idx[:1]), ctx.load_element(tb, ins[1], idx[1:]))))
    return result


@lower(KERNELS, "sum_to")
def _sum_to(ctx, op, ins):
    """g summed over its broadcast axes to the shape of ``like`` (the adjoint of broadcasting)."""
    b = ctx.b
    gt, lt = op.operands[0].type, op.operands[1].type
    if not gt.is_array:
        raise NotImplementedError("srcgrad: llvm sum_to of a scalar")
    if op in ctx.lazy:
        return ctx.lazy_sum_to(op, ins)
    g, like = ins
    out_shape = ctx.shape_values(like, lt.ndim)
    result = ctx.new_array(lt, out_shape, 0.0)
    target = ctx.broadcast_view(lt, result)
    lead = gt.ndim - lt.ndim

    def step(idx):
        ptr = ctx.raw_pointer(lt, target, idx[lead:])
        b.store(b.fadd(b.load(ptr), ctx.as_f64(gt, ctx.element(gt, g, idx))), ptr)
    ctx.evaluating([g], lambda: ctx.each_element(ctx.shape_values(g, gt.ndim), step))
    return result


class Kernels:
    """The lowering's kernels (a mixin of lowering.Lowering: uses its builder ``b``)."""

    def reduce_sum(self, op, t, arr):
        """np.sum over everything (lazy operands computed in its loop) or along one axis."""
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        axis = op.attrs.get("axis")
        if axis is None or t.ndim == 1:
            acc = self.stack_slot(DOUBLE)
            b.store(ir.Constant(DOUBLE, 0.0), acc)
            self.evaluating([arr], lambda: self.each_element(shape, lambda idx: b.store(self.sum_step(
                b.load(acc), self.as_f64(t, self.element(t, arr, idx))), acc)))
            return b.load(acc)
        return self.reduce_axis(op, t, arr, shape, 0.0, b.fadd)

    def reduce(self, op, t, arr):
        """np.prod / np.max / np.min, over everything or along one axis (NaN propagates)."""
        b = self.b
        kind = op.prim
        start = {"prod": 1.0, "amax": float("-inf"), "amin": float("inf")}[kind]
        shape = self.shape_values(arr, t.ndim)
        axis = op.attrs.get("axis")

        def combine(acc, x):
            if kind == "prod":
                return b.fmul(acc, x)
            # numpy's maximum(acc, x): a NaN stays; of equal values (-0.0, 0.0) the later one
            return numpy_min_max(b, "max" if kind == "amax" else "min", acc, x)

        if kind != "prod":       # numpy: an error where the reduced axis (or the whole array) is empty
            reduced = self.product(shape) if axis is None else shape[axis]
            self.guard(b.icmp_signed("==", reduced, ir.Constant(INT64, 0)), EMPTY_MAX if kind == "amax" else EMPTY_MIN)
        if axis is None or t.ndim == 1:
            acc = self.stack_slot(DOUBLE)
            b.store(ir.Constant(DOUBLE, start), acc)
            self.each_index(shape, lambda idx: b.store(combine(b.load(acc), self.as_f64(
                t, self.load_element(t, arr, idx))), acc))
            return b.load(acc)
        return self.reduce_axis(op, t, arr, shape, start, combine)

    def reduce_axis(self, op, t, arr, shape, start, combine):
        """A reduction along op's axis: a new array of the other axes, from ``start``, each
        element of ``arr`` combined into its place (``combine(acc, x)``)."""
        b = self.b
        axis = op.attrs["axis"]
        out_t = op.results[0].type
        result = self.new_array(out_t, [n for k, n in enumerate(shape) if k != axis], start)

        def step(idx):
            ptr = self.raw_pointer(out_t, result, [i for k, i in enumerate(idx) if k != axis])
            b.store(combine(b.load(ptr), self.as_f64(t, self.load_element(t, arr, idx))), ptr)
        self.each_index(shape, step)
        return result

    def reduce_grad(self, op, ins):
        """The gradient of prod, exact at zeros — runtime.reduce_grad natively: per reduced
        position, count the zeros and multiply the other elements; then each element's share."""
        b = self.b
        g, x, _ = ins
        gt, xt, _ = (v.type for v in op.operands)
        axis = op.attrs.get("axis")
        shape = self.shape_values(x, xt.ndim)
        rt = ArrayType(F64, xt.ndim)
        result = self.new_array(rt, shape, 0.0)

        def reduced(idx):
            return [i for k, i in enumerate(idx) if k != axis] if axis is not None else []

        def at(value_t, value, idx):
            return self.load_element(value_t, value, reduced(idx)) if value_t.is_array else value

        aux_t = ArrayType(F64, max(xt.ndim - 1, 0)) if axis is not None and xt.ndim > 1 else None
        red_shape = [n for k, n in enumerate(shape) if k != axis] if aux_t is not None else []
        if aux_t is not None:
            count = self.new_array(aux_t, red_shape, 0.0)
            nonzero = self.new_array(aux_t, red_shape, 1.0)
        else:
            cslot, pslot = self.stack_slot(DOUBLE), self.stack_slot(DOUBLE)
            b.store(ir.Constant(DOUBLE, 0.0), cslot)
            b.store(ir.Constant(DOUBLE, 1.0), pslot)

        def slots(idx):
            if aux_t is not None:
                sub = reduced(idx)
                return self.raw_pointer(aux_t, count, sub), self.raw_pointer(aux_t, nonzero, sub)
            return cslot, pslot

        def first(idx):
            xv = self.as_f64(xt, self.load_element(xt, x, idx))
            c, pz = slots(idx)
            zero = b.fcmp_ordered("==", xv, ir.Constant(DOUBLE, 0.0))
            b.store(b.fadd(b.load(c), b.uitofp(zero, DOUBLE)), c)
            b.store(b.fmul(b.load(pz), b.select(zero, ir.Constant(DOUBLE, 1.0), xv)), pz)

        def second(idx):
            xv = self.as_f64(xt, self.load_element(xt, x, idx))
            c, pz = slots(idx)
            zeros = b.load(c)
            is_zero = b.fcmp_ordered("==", xv, ir.Constant(DOUBLE, 0.0))
            none = b.fcmp_ordered("==", zeros, ir.Constant(DOUBLE, 0.0))
            one = b.fcmp_ordered("==", zeros, ir.Constant(DOUBLE, 1.0))
            others = b.select(none, b.fdiv(b.load(pz), xv),
                              b.select(b.and_(one, is_zero), b.load(pz), ir.Constant(DOUBLE, 0.0)))
            self.store_element(rt, result, idx, b.fmul(at(gt, g, idx), others))

        self.each_index(shape, first)
        self.each_index(shape, second)
        return result

    def sum_step(self, acc, x):
        """acc + x inside a reduction: reassociable, so LLVM may vectorise the loop."""
        out = self.b.fadd(acc, x)
        out.flags.append("reassoc")
        return out

    def matmul(self, op, ins):
        """a @ b for 1-d and 2-d operands, with the loop order chosen at run time from the
        strides, so that the innermost loop walks memory contiguously where it can: dot
        products along rows, or rows of ``b`` scaled and added (also for ``X.T @ v``). A lazy
        1-d operand (fusion.py) is computed once per element in the second order, and stored
        first for the first."""
        if op in self.lazy:
            return self.lazy_row_dot(op, ins)
        b = self.b
        (ta, tb), (a, c) = [x.type for x in op.operands], ins
        sa, sb = self.shape_values(a, ta.ndim), self.shape_values(c, tb.ndim)
        k_a, k_b = sa[-1], sb[0]
        self.core_mismatch(k_a, k_b)
        out_t = op.results[0].type
        out_shape = sa[:-1] + sb[1:]
        acc = self.stack_slot(DOUBLE)

        def dot(idx, a, c):
            ia, ib = idx[:ta.ndim - 1], idx[ta.ndim - 1:]
            b.store(ir.Constant(DOUBLE, 0.0), acc)
            self.each_index([k_a], lambda kk: b.store(self.sum_step(b.load(acc), b.fmul(
                self.load_element(ta, a, ia + kk), self.load_element(tb, c, kk + ib))), acc))
            return b.load(acc)
        if not out_t.is_array:
            return dot([], self.stored(ta, a), self.stored(tb, c))
        result = self.new_array(out_t, out_shape, None)

        def by_dots():
            a_, c_ = self.stored(ta, a), self.stored(tb, c)
            self.each_index(out_shape, lambda idx: self.store_element(out_t, result, idx, dot(idx, a_, c_)))

        def add_to(idx, value):
            ptr = self.raw_pointer(out_t, result, idx)
            b.store(b.fadd(b.load(ptr), value), ptr)

        def k_outermost():          # result (zeroed) += a[:, k] * b[k, :] for each k
            def per_k(kk):
                if tb.ndim == 1:            # a 2-d: result[i] += a[i, k] * c[k]
                    ck = self.as_f64(tb, self.element(tb, c, kk))
                    self.each_index(out_shape, lambda idx: add_to(idx, b.fmul(self.load_element(ta, a, idx + kk), ck)))
                elif ta.ndim == 1:          # c 2-d: result[j] += a[k] * c[k, j]
                    ak = self.as_f64(ta, self.element(ta, a, kk))
                    self.each_index(out_shape, lambda idx: add_to(idx, b.fmul(ak, self.load_element(tb, c, kk + idx))))
                else:
                    self.each_index(out_shape, lambda idx: add_to(idx, b.fmul(
                        self.load_element(ta, a, idx[:1] + kk), self.load_element(tb, c, kk + idx[1:]))))
            self.evaluating([a, c], lambda: self.each_element([k_a], per_k))

        def k_middle():             # for each row i of a: result[i, :] += a[i, k] * b[k, :]
            self.each_index([sa[0]], lambda i: self.each_index([k_a], lambda kk: self.each_index(
                [sb[1]], lambda j: add_to(i + j, b.fmul(self.load_element(ta, a, i + kk),
                                                        self.load_element(tb, c, kk + j))))))

        def rows_contiguous(t, arr):        # |stride of the last axis| <= |stride of the first|
            st = b.extract_value(arr, 2)
            first, last = (b.extract_value(st, k) for k in (0, t.ndim - 1))
            first, last = (b.select(b.icmp_signed("<", x, ir.Constant(INT64, 0)), b.neg(x), x) for x in (first, last))
            return b.icmp_signed("<=", last, first)

        if ta.ndim == 2 and tb.ndim == 1:
            self.choose(rows_contiguous(ta, a), by_dots, k_outermost)
        elif ta.ndim == 1:
            self.choose(rows_contiguous(tb, c), k_outermost, by_dots)
        else:
            self.choose(rows_contiguous(ta, a),
                        lambda: self.choose(rows_contiguous(tb, c), k_middle, by_dots), k_outermost)
        return result

    def core_mismatch(self, k_a, k_b):
        """``a @ b`` with a's last axis ``k_a`` and b's first ``k_b`` of different sizes."""
        self.raise_at(self.b.icmp_signed("!=", k_a, k_b),
                      lambda err: ValueError(MATMUL_MESSAGE.format(err[1], err[0])), [k_a, k_b])
