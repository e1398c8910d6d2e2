"""Kernels of the llvm backend: matrix products and reductions (sum, prod, max, min, along an
axis or over everything, and their gradients), each a loop nest chosen for how the operands
lie in memory.

``KERNELS`` holds their rules; each is the kernel itself (``_matmul`` picks one of its loop
orders, the functions after it, at run time).

Example (inside the lowering):
    total = KERNELS["sum"](ctx, op, ins)
"""
from llvmlite import ir

from ...ir.types import F64, ArrayType
from .arrays import (as_f64, broadcast_view, core_mismatch, load_element, new_array, product, raw_pointer,
                     shape_values, store_element)
from .blas import blas_for, emit_product
from .error_codes import EMPTY_MAX, EMPTY_MIN
from .fusion import equal_rank_sum_to
from .lazy import Lazy, each_element, element, evaluating, lazy_row_dot, lazy_sum_to, stored
from .loops import choose, each_index, sum_step
from .registry import lower
from .scalar_math import numpy_min_max
from .types import DOUBLE, INT64

KERNELS = {}


@lower(KERNELS, "sum")
def _sum(ctx, op, ins):
    """np.sum over everything (lazy operands computed in its loop) or along one axis."""
    b = ctx.b
    t, arr = op.operands[0].type, ins[0]
    shape = shape_values(ctx, arr, t.ndim)
    axis = op.attrs.get("axis")
    if axis is None or t.ndim == 1:
        acc = ctx.stack_slot(DOUBLE)
        b.store(ir.Constant(DOUBLE, 0.0), acc)
        evaluating(ctx, [arr], lambda: each_element(ctx, shape, lambda idx: b.store(sum_step(
            ctx, b.load(acc), as_f64(ctx, t, element(ctx, t, arr, idx))), acc)))
        return b.load(acc)
    return _reduce_axis(ctx, op, t, arr, shape, 0.0, b.fadd)


@lower(KERNELS, "prod", "amax", "amin")
def _reduce(ctx, op, ins):
    """np.prod / np.max / np.min, over everything or along one axis (NaN propagates)."""
    b = ctx.b
    t, arr = op.operands[0].type, ins[0]
    kind = op.prim
    start = {"prod": 1.0, "amax": float("-inf"), "amin": float("inf")}[kind]
    shape = shape_values(ctx, arr, t.ndim)
    axis = op.attrs.get("axis")

    def combine(acc, x):
        if kind == "prod":
            return b.fmul(acc, x)
        # numpy's maximum(acc, x): a NaN stays; of equal values (-0.0, 0.0) the later one
        return numpy_min_max(b, "max" if kind == "amax" else "min", acc, x)

    if kind != "prod":       # numpy: an error where the reduced axis (or the whole array) is empty
        reduced = product(ctx, shape) if axis is None else shape[axis]
        ctx.guard(b.icmp_signed("==", reduced, ir.Constant(INT64, 0)), EMPTY_MAX if kind == "amax" else EMPTY_MIN)
    if axis is None or t.ndim == 1:
        acc = ctx.stack_slot(DOUBLE)
        b.store(ir.Constant(DOUBLE, start), acc)
        each_index(ctx, shape, lambda idx: b.store(combine(b.load(acc), as_f64(
            ctx, t, load_element(ctx, t, arr, idx))), acc))
        return b.load(acc)
    return _reduce_axis(ctx, op, t, arr, shape, start, combine)


def _reduce_axis(ctx, op, t, arr, shape, start, combine):
    """A reduction along op's axis: a new array of the other axes, from ``start``, each
    element of ``arr`` combined into its place (``combine(acc, x)``)."""
    b = ctx.b
    axis = op.attrs["axis"]
    out_t = op.results[0].type
    result = new_array(ctx, out_t, [n for k, n in enumerate(shape) if k != axis], start)

    def step(idx):
        ptr = raw_pointer(ctx, out_t, result, [i for k, i in enumerate(idx) if k != axis])
        b.store(combine(b.load(ptr), as_f64(ctx, t, load_element(ctx, t, arr, idx))), ptr)
    each_index(ctx, shape, step)
    return result


@lower(KERNELS, "reduce_grad")
def _reduce_grad(ctx, op, ins):
    """The gradient of prod, exact at zeros — runtime.reduce_grad natively: per reduced
    position, count the zeros and multiply the other elements; then each element's share."""
    b = ctx.b
    g, x, _ = ins
    gt, xt, _ = (v.type for v in op.operands)
    axis = op.attrs.get("axis")
    shape = shape_values(ctx, x, xt.ndim)
    rt = ArrayType(F64, xt.ndim)
    result = new_array(ctx, rt, shape, 0.0)

    def reduced(idx):
        return [i for k, i in enumerate(idx) if k != axis] if axis is not None else []

    def at(value_t, value, idx):
        return load_element(ctx, value_t, value, reduced(idx)) if value_t.is_array else value

    aux_t = ArrayType(F64, max(xt.ndim - 1, 0)) if axis is not None and xt.ndim > 1 else None
    red_shape = [n for k, n in enumerate(shape) if k != axis] if aux_t is not None else []
    if aux_t is not None:
        count = new_array(ctx, aux_t, red_shape, 0.0)
        nonzero = new_array(ctx, aux_t, red_shape, 1.0)
    else:
        cslot, pslot = ctx.stack_slot(DOUBLE), ctx.stack_slot(DOUBLE)
        b.store(ir.Constant(DOUBLE, 0.0), cslot)
        b.store(ir.Constant(DOUBLE, 1.0), pslot)

    def slots(idx):
        if aux_t is not None:
            sub = reduced(idx)
            return raw_pointer(ctx, aux_t, count, sub), raw_pointer(ctx, aux_t, nonzero, sub)
        return cslot, pslot

    def first(idx):
        xv = as_f64(ctx, xt, load_element(ctx, xt, x, idx))
        c, pz = slots(idx)
        zero = b.fcmp_ordered("==", xv, ir.Constant(DOUBLE, 0.0))
        b.store(b.fadd(b.load(c), b.uitofp(zero, DOUBLE)), c)
        b.store(b.fmul(b.load(pz), b.select(zero, ir.Constant(DOUBLE, 1.0), xv)), pz)

    def second(idx):
        xv = as_f64(ctx, xt, load_element(ctx, xt, x, idx))
        c, pz = slots(idx)
        zeros = b.load(c)
        is_zero = b.fcmp_ordered("==", xv, ir.Constant(DOUBLE, 0.0))
        none = b.fcmp_ordered("==", zeros, ir.Constant(DOUBLE, 0.0))
        one = b.fcmp_ordered("==", zeros, ir.Constant(DOUBLE, 1.0))
        others = b.select(none, b.fdiv(b.load(pz), xv),
                          b.select(b.and_(one, is_zero), b.load(pz), ir.Constant(DOUBLE, 0.0)))
        store_element(ctx, rt, result, idx, b.fmul(at(gt, g, idx), others))

    each_index(ctx, shape, first)
    each_index(ctx, shape, second)
    return result


@lower(KERNELS, "outer")
def _outer(ctx, op, ins):
    b = ctx.b
    ta, tb = op.operands[0].type, op.operands[1].type
    shape = shape_values(ctx, ins[0], 1) + shape_values(ctx, ins[1], 1)
    out_t = op.results[0].type
    result = new_array(ctx, out_t, shape, None, written=True)
    each_index(ctx, shape, lambda idx: store_element(ctx, out_t, result, idx, b.fmul(
        load_element(ctx, ta, ins[0], idx[:1]), load_element(ctx, tb, ins[1], idx[1:]))))
    return result


@lower(KERNELS, "sum_to")
def _sum_to(ctx, op, ins):
    """g summed over its broadcast axes to the shape of ``like`` (the adjoint of broadcasting)."""
    b = ctx.b
    gt, lt = op.operands[0].type, op.operands[1].type
    if not gt.is_array:
        raise NotImplementedError("srcgrad: llvm sum_to of a scalar")
    if op in ctx.lazy:
        return lazy_sum_to(ctx, op, ins)
    if equal_rank_sum_to(op):
        summed = lazy_sum_to(ctx, op, ins)
        if isinstance(ins[0], Lazy) or gt.dtype != lt.dtype:
            # mostly the identity (shapes equal at run time): a copy LLVM vectorises, with the
            # summing loop only where the shapes differ
            return stored(ctx, lt, summed)
        # a stored g of equal shape is the result itself (the IR's sum_to may alias, as numpy's
        # code does, so no copy); only unequal shapes are summed into a new array
        return _where(ctx, summed.equal, lambda: ins[0], lambda: stored(ctx, lt, summed))
    g, like = ins
    out_shape = shape_values(ctx, like, lt.ndim)
    result = new_array(ctx, lt, out_shape, 0.0)
    target = broadcast_view(ctx, lt, result)
    lead = gt.ndim - lt.ndim

    def step(idx):
        ptr = raw_pointer(ctx, lt, target, idx[lead:])
        b.store(b.fadd(b.load(ptr), as_f64(ctx, gt, element(ctx, gt, g, idx))), ptr)
    evaluating(ctx, [g], lambda: each_element(ctx, shape_values(ctx, g, gt.ndim), step))
    return result


def _where(ctx, cond, then, otherwise):
    """The value ``then()`` computes where ``cond`` holds at run time, else ``otherwise()``'s."""
    b = ctx.b
    with b.if_else(cond) as (yes, no):
        with yes:
            a, a_block = then(), b.block
        with no:
            c, c_block = otherwise(), b.block
    out = b.phi(a.type)
    out.add_incoming(a, a_block)
    out.add_incoming(c, c_block)
    return out


@lower(KERNELS, "matmul")
def _matmul(ctx, op, ins):
    """a @ b for 1-d and 2-d operands: through BLAS where it pays (blas.py), else with the
    loop order chosen at run time from the strides, so that the innermost loop walks memory contiguously where it can: dot
    products along rows, or rows of ``b`` scaled and added (also for ``X.T @ v``). A lazy
    1-d operand (fusion.py) is computed once per element in the second order, and stored
    first for the first."""
    if op in ctx.lazy:
        return lazy_row_dot(ctx, op, ins)
    (ta, tb), (a, c) = [x.type for x in op.operands], ins
    sa, sb = shape_values(ctx, a, ta.ndim), shape_values(ctx, c, tb.ndim)
    core_mismatch(ctx, sa[-1], sb[0])
    p = _Product(ta, tb, a, c, sa, sb, op.results[0].type, sa[:-1] + sb[1:], ctx.stack_slot(DOUBLE))
    if not p.out_t.is_array:
        return _dot(ctx, p, [], stored(ctx, ta, a), stored(ctx, tb, c))
    p.result = new_array(ctx, p.out_t, p.out_shape, None)
    blas = blas_for(ctx, p)
    if blas is not None:
        emit_product(ctx, blas, p, lambda: _loop_nests(ctx, p))
    else:
        _loop_nests(ctx, p)
    return p.result


def _loop_nests(ctx, p):
    """``p`` by the loop order its operands' strides suit."""
    ta, tb, a, c = p.ta, p.tb, p.a, p.c
    by_dots, k_outermost = (lambda: _by_dots(ctx, p)), (lambda: _k_outermost(ctx, p))
    if ta.ndim == 2 and tb.ndim == 1:
        choose(ctx, _rows_contiguous(ctx, ta, a), by_dots, k_outermost)
    elif ta.ndim == 1:
        choose(ctx, _rows_contiguous(ctx, tb, c), k_outermost, by_dots)
    else:
        choose(ctx, _rows_contiguous(ctx, ta, a),
               lambda: choose(ctx, _rows_contiguous(ctx, tb, c), lambda: _k_middle(ctx, p), by_dots), k_outermost)


class _Product:
    """What each loop order of ``a @ c`` reads: the operands' types and values, their shapes
    (``sa``, ``sb``), the result's type, shape and (zeroed) array, and ``acc``, the stack slot
    a dot product sums in."""

    def __init__(self, ta, tb, a, c, sa, sb, out_t, out_shape, acc):
        self.ta, self.tb, self.a, self.c, self.sa, self.sb = ta, tb, a, c, sa, sb
        self.out_t, self.out_shape, self.acc, self.result = out_t, out_shape, acc, None


def _dot(ctx, p, idx, a, c):
    """Element ``idx`` of ``a @ c`` (stored operands) as one dot product along the summed axis."""
    b, ta, tb = ctx.b, p.ta, p.tb
    ia, ib = idx[:ta.ndim - 1], idx[ta.ndim - 1:]
    b.store(ir.Constant(DOUBLE, 0.0), p.acc)
    each_index(ctx, [p.sa[-1]], lambda kk: b.store(sum_step(ctx, b.load(p.acc), b.fmul(
        load_element(ctx, ta, a, ia + kk), load_element(ctx, tb, c, kk + ib))), p.acc))
    return b.load(p.acc)


def _by_dots(ctx, p):
    """The loop order for rows of ``a`` (or a column of ``c``) contiguous: one dot product per
    element of the result (lazy operands stored first)."""
    a, c = stored(ctx, p.ta, p.a), stored(ctx, p.tb, p.c)
    each_index(ctx, p.out_shape, lambda idx: store_element(ctx, p.out_t, p.result, idx, _dot(ctx, p, idx, a, c)))


def _add_to(ctx, p, idx, value):
    """result[idx] += value."""
    ptr = raw_pointer(ctx, p.out_t, p.result, idx)
    ctx.b.store(ctx.b.fadd(ctx.b.load(ptr), value), ptr)


def _k_outermost(ctx, p):
    """The loop order for columns of ``a`` contiguous: result (zeroed) += a[:, k] * c[k, :]
    for each k, a lazy 1-d operand computed once per k."""
    b, ta, tb, a, c = ctx.b, p.ta, p.tb, p.a, p.c

    def per_k(kk):
        if tb.ndim == 1:            # a 2-d: result[i] += a[i, k] * c[k]
            ck = as_f64(ctx, tb, element(ctx, tb, c, kk))
            each_index(ctx, p.out_shape, lambda idx: _add_to(ctx, p, idx, b.fmul(
                load_element(ctx, ta, a, idx + kk), ck)))
        elif ta.ndim == 1:          # c 2-d: result[j] += a[k] * c[k, j]
            ak = as_f64(ctx, ta, element(ctx, ta, a, kk))
            each_index(ctx, p.out_shape, lambda idx: _add_to(ctx, p, idx, b.fmul(
                ak, load_element(ctx, tb, c, kk + idx))))
        else:
            each_index(ctx, p.out_shape, lambda idx: _add_to(ctx, p, idx, b.fmul(
                load_element(ctx, ta, a, idx[:1] + kk), load_element(ctx, tb, c, kk + idx[1:]))))
    evaluating(ctx, [a, c], lambda: each_element(ctx, [p.sa[-1]], per_k))


def _k_middle(ctx, p):
    """The loop order for rows of both contiguous: for each row i of a,
    result[i, :] += a[i, k] * c[k, :] for each k."""
    b, ta, tb, a, c = ctx.b, p.ta, p.tb, p.a, p.c
    each_index(ctx, [p.sa[0]], lambda i: each_index(ctx, [p.sa[-1]], lambda kk: each_index(
        ctx, [p.sb[1]], lambda j: _add_to(ctx, p, i + j, b.fmul(load_element(ctx, ta, a, i + kk),
                                                                load_element(ctx, tb, c, kk + j))))))


def _rows_contiguous(ctx, t, arr):
    """Whether |stride of the last axis| <= |stride of the first| of ``arr``, at run time."""
    b = ctx.b
    st = b.extract_value(arr, 2)
    first, last = (b.extract_value(st, k) for k in (0, t.ndim - 1))
    first, last = (b.select(b.icmp_signed("<", x, ir.Constant(INT64, 0)), b.neg(x), x) for x in (first, last))
    return b.icmp_signed("<=", last, first)
