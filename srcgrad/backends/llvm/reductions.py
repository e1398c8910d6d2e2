"""The llvm backend's rules for the reductions family: keepdims' new axis (a view), the scans
np.cumsum / np.cumprod and cumprod's gradient, and np.argmax / np.argmin, each a native loop
nest over C order (numpy's order of accumulation along the scanned axis).

Example (inside the lowering):
    REDUCTIONS["cumsum"](ctx, op, ins)
"""
from llvmlite import ir

from ...ir.types import F64, I64, ArrayType
from .arrays import as_f64, load_element, new_array, product, raw_pointer, shape_values, store_element, view
from .loops import choose, counted_loop, each_index
from .registry import lower
from .types import BIT, DOUBLE, INT64

REDUCTIONS = {}


@lower(REDUCTIONS, "expand_dims")
def _expand_dims(ctx, op, ins):
    """A view with one more axis, of size 1 (its stride is never used: 0)."""
    b, t, axis = ctx.b, op.operands[0].type, op.attrs["axis"]
    shape = shape_values(ctx, ins[0], t.ndim)
    sd = b.extract_value(ins[0], 2)
    strides = [b.extract_value(sd, k) for k in range(t.ndim)]
    one, zero = ir.Constant(INT64, 1), ir.Constant(INT64, 0)
    return view(ctx, ins[0], b.extract_value(ins[0], 0), shape[:axis] + [one] + shape[axis:],
                strides[:axis] + [zero] + strides[axis:], t.ndim + 1)


def _along(ctx, idx, axis, n, reverse):
    """(position, previous position, is first) along ``axis`` for loop index ``idx``: counted
    from the end when ``reverse`` (C order visits the previous position first either way)."""
    b = ctx.b
    i = idx[axis]
    if not reverse:
        pos, prev = i, b.sub(i, ir.Constant(INT64, 1))
    else:
        pos = b.sub(b.sub(n, ir.Constant(INT64, 1)), i)
        prev = b.add(pos, ir.Constant(INT64, 1))
    first = b.icmp_signed("==", i, ir.Constant(INT64, 0))
    safe_prev = b.select(first, pos, prev)
    return idx[:axis] + [pos] + idx[axis + 1:], idx[:axis] + [safe_prev] + idx[axis + 1:], first


def scan(ctx, t, x, axis, combine, reverse=False):
    """out[i] = x[i] at the first position along ``axis``, else combine(out[i-1], x[i])."""
    b = ctx.b
    shape = shape_values(ctx, x, t.ndim)
    out_t = ArrayType(F64, t.ndim)
    result = new_array(ctx, out_t, shape, 0.0)

    def step(idx):
        here, prev, first = _along(ctx, idx, axis, shape[axis], reverse)
        v = as_f64(ctx, t, load_element(ctx, t, x, here))
        acc = combine(load_element(ctx, out_t, result, prev), v)
        store_element(ctx, out_t, result, here, b.select(first, v, acc))
    each_index(ctx, shape, step)
    return result


@lower(REDUCTIONS, "cumsum")
def _cumsum(ctx, op, ins):
    return scan(ctx, op.operands[0].type, ins[0], op.attrs["axis"], ctx.b.fadd, op.attrs.get("reverse", False))


@lower(REDUCTIONS, "cumprod")
def _cumprod(ctx, op, ins):
    return scan(ctx, op.operands[0].type, ins[0], op.attrs["axis"], ctx.b.fmul)


@lower(REDUCTIONS, "cumprod_grad")
def _cumprod_grad(ctx, op, ins):
    """Without division, so exact at zeros; P = cumprod(x), P[-1] = 1.
    vjp: S[i] = t[i] + x[i+1]·S[i+1] (from the end), then grad[i] = P[i-1]·S[i];
    jvp: dP[i] = dP[i-1]·x[i] + P[i-1]·t[i], dP[0] = t[0]."""
    b = ctx.b
    (tt, xt), (t, x) = [v.type for v in op.operands], ins
    axis = op.attrs["axis"]
    shape = shape_values(ctx, x, xt.ndim)
    out_t = ArrayType(F64, xt.ndim)
    running = scan(ctx, xt, x, axis, b.fmul)
    result = new_array(ctx, out_t, shape, 0.0)

    def load(value_t, value, idx):
        return as_f64(ctx, value_t, load_element(ctx, value_t, value, idx))

    def before(prev, first):        # P[i-1], 1 at the first position
        return b.select(first, ir.Constant(DOUBLE, 1.0), load_element(ctx, out_t, running, prev))

    if op.attrs["mode"] == "jvp":
        def step(idx):
            here, prev, first = _along(ctx, idx, axis, shape[axis], False)
            ti = load(tt, t, here)
            acc = b.fadd(b.fmul(load_element(ctx, out_t, result, prev), load(xt, x, here)),
                         b.fmul(before(prev, first), ti))
            store_element(ctx, out_t, result, here, b.select(first, ti, acc))
        each_index(ctx, shape, step)
        return result

    def backward(idx):              # here = i from the end, prev = i + 1
        here, nxt, last = _along(ctx, idx, axis, shape[axis], True)
        ti = load(tt, t, here)
        acc = b.fadd(ti, b.fmul(load(xt, x, nxt), load_element(ctx, out_t, result, nxt)))
        store_element(ctx, out_t, result, here, b.select(last, ti, acc))

    def forward(idx):
        here, prev, first = _along(ctx, idx, axis, shape[axis], False)
        store_element(ctx, out_t, result, here, b.fmul(before(prev, first), load_element(ctx, out_t, result, here)))
    each_index(ctx, shape, backward)
    each_index(ctx, shape, forward)
    return result


@lower(REDUCTIONS, "argmax", "argmin")
def _arg_extremum(ctx, op, ins):
    """The first index of the largest (smallest) element, or of the first NaN, as numpy's;
    over everything in C order (axis None) or along one axis."""
    b = ctx.b
    t, x, kind = op.operands[0].type, ins[0], op.prim
    shape = shape_values(ctx, x, t.ndim)
    axis = op.attrs.get("axis")
    whole = axis is None or t.ndim == 1
    reduced = product(ctx, shape) if axis is None else shape[axis]
    ctx.raise_at(b.icmp_signed("==", reduced, ir.Constant(INT64, 0)),
                 lambda err: ValueError(f"attempt to get {kind} of an empty sequence"))
    start = ir.Constant(DOUBLE, float("-inf") if kind == "argmax" else float("inf"))
    if whole:
        best, where, count = ctx.stack_slot(DOUBLE), ctx.stack_slot(INT64), ctx.stack_slot(INT64)
        b.store(start, best)
        b.store(ir.Constant(INT64, 0), where)
        b.store(ir.Constant(INT64, 0), count)
    else:
        rest = [n for k, n in enumerate(shape) if k != axis]
        bests_t, wheres_t = ArrayType(F64, t.ndim - 1), op.results[0].type
        bests, wheres = new_array(ctx, bests_t, rest, float(start.constant)), new_array(ctx, wheres_t, rest, 0)

    def step(idx):
        if whole:
            slots, k = (best, where), b.load(count)
            b.store(b.add(k, ir.Constant(INT64, 1)), count)
        else:
            other = [i for j, i in enumerate(idx) if j != axis]
            slots, k = (raw_pointer(ctx, bests_t, bests, other), raw_pointer(ctx, wheres_t, wheres, other)), idx[axis]
        v, old = as_f64(ctx, t, load_element(ctx, t, x, idx)), b.load(slots[0])
        better = b.fcmp_ordered(">" if kind == "argmax" else "<", v, old)
        first_nan = b.and_(b.fcmp_unordered("uno", v, v), b.fcmp_ordered("ord", old, old))
        take = b.or_(better, first_nan)
        b.store(b.select(take, v, old), slots[0])
        b.store(b.select(take, k, b.load(slots[1])), slots[1])
    each_index(ctx, shape, step)
    return b.load(where) if whole else wheres


def _lanes(ctx, shape, axis, body):
    """``body(at)`` once per line along ``axis``: ``at(i)`` is the full index of position i."""
    rest = shape[:axis] + shape[axis + 1:]
    each_index(ctx, rest, lambda r: body(lambda i: r[:axis] + [i] + r[axis:]))


@lower(REDUCTIONS, "argsort")
def _argsort(ctx, op, ins):
    """numpy's kind="stable" order of each line, NaNs last: a bottom-up merge sort of the
    positions (runs of width 1, 2, 4, ... merged between two buffers), where an element goes
    before another only if it is strictly smaller, so equal elements keep their order."""
    b = ctx.b
    t, x, axis = op.operands[0].type, ins[0], op.attrs["axis"]
    shape = shape_values(ctx, x, t.ndim)
    n, out_t, buf_t = shape[axis], op.results[0].type, ArrayType(I64, 1)
    result = new_array(ctx, out_t, shape, 0)
    bufs = [new_array(ctx, buf_t, [n], 0) for _ in range(2)]
    width, parity = ctx.stack_slot(INT64), ctx.stack_slot(BIT)
    zero, one = ir.Constant(INT64, 0), ir.Constant(INT64, 1)

    def lane(at):
        def after(k, m):        # position k sorts after position m: larger, or NaN against a number
            u, v = (as_f64(ctx, t, load_element(ctx, t, x, at(p))) for p in (k, m))
            return b.or_(b.fcmp_ordered(">", u, v), b.and_(b.fcmp_unordered("uno", u, u), b.fcmp_ordered("ord", v, v)))

        def merge_runs(src, dst, w):
            def run_pair(lo, carried):
                mid, hi = _smaller(b, b.add(lo, w), n), _smaller(b, b.add(lo, b.add(w, w)), n)

                def step(k, ij):
                    i, j = ij
                    left, right = b.icmp_signed("<", i, mid), b.icmp_signed("<", j, hi)
                    si = load_element(ctx, buf_t, src, [b.select(left, i, lo)])
                    sj = load_element(ctx, buf_t, src, [b.select(right, j, lo)])
                    take_left = b.and_(left, b.or_(b.not_(right), b.not_(after(si, sj))))
                    store_element(ctx, buf_t, dst, [k], b.select(take_left, si, sj))
                    return [b.select(take_left, b.add(i, one), i), b.select(take_left, j, b.add(j, one))]
                counted_loop(ctx, lo, hi, one, [lo, mid], step, name="merge")
                return []
            counted_loop(ctx, zero, n, b.add(w, w), [], run_pair, name="runs")

        each_index(ctx, [n], lambda i: store_element(ctx, buf_t, bufs[0], i, i[0]))
        b.store(one, width)
        b.store(ir.Constant(BIT, 0), parity)
        test, body, done = (ctx.func.append_basic_block(f"argsort.{s}") for s in ("test", "pass", "done"))
        b.branch(test)
        b.position_at_end(test)
        b.cbranch(b.icmp_signed("<", b.load(width), n), body, done)
        b.position_at_end(body)
        w, flip = b.load(width), b.load(parity)
        choose(ctx, flip, lambda: merge_runs(bufs[1], bufs[0], w), lambda: merge_runs(bufs[0], bufs[1], w))
        b.store(b.add(w, w), width)
        b.store(b.not_(flip), parity)
        b.branch(test)
        b.position_at_end(done)
        last = b.load(parity)
        each_index(ctx, [n], lambda i: store_element(ctx, out_t, result, at(i[0]), b.select(
            last, load_element(ctx, buf_t, bufs[1], i), load_element(ctx, buf_t, bufs[0], i))))
    _lanes(ctx, shape, axis, lane)
    return result


def _smaller(b, u, v):
    return b.select(b.icmp_signed("<", u, v), u, v)


@lower(REDUCTIONS, "take_along", "put_along")
def _take_put(ctx, op, ins):
    """take: out[.., i, ..] = g[.., idx[.., i, ..], ..]; put: out[.., idx[.., i, ..], ..] += g[.., i, ..]
    (idx is an argsort: every index is in range)."""
    b = ctx.b
    (gt, it), (g, idx) = [v.type for v in op.operands], ins
    axis = op.attrs["axis"]
    shape = shape_values(ctx, idx, it.ndim)
    out_t = op.results[0].type
    result = new_array(ctx, out_t, shape, 0.0)

    def step(pos):
        k = load_element(ctx, it, idx, pos)
        moved = pos[:axis] + [k] + pos[axis + 1:]
        if op.prim == "take_along":
            store_element(ctx, out_t, result, pos, as_f64(ctx, gt, load_element(ctx, gt, g, moved)))
        else:
            ptr = raw_pointer(ctx, out_t, result, moved)
            b.store(b.fadd(b.load(ptr), as_f64(ctx, gt, load_element(ctx, gt, g, pos))), ptr)
    each_index(ctx, shape, step)
    return result


__all__ = ["REDUCTIONS", "scan"]
