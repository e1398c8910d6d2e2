"""The llvm backend's rules (``JOINS``) for joining, splitting and building arrays: each a
loop nest over the result (or over each operand) that copies elements, with numpy's checks
and messages (shapes that do not join, a split that is not equal, a negative count).

Example (inside the lowering):
    JOINS["roll"](ctx, op, ins)       # a new array: x rolled by shift
"""
from llvmlite import ir

from ...ir.interpret_joins import SPLIT_MESSAGE, STACK_MESSAGE
from ...ir.types import BOOL, F32, F64, I64
from .arrays import as_f64, load_element, new_array, product, raw_pointer, shape_values, store_element
from .error_codes import NEGATIVE_SIZE
from .loops import each_index
from .registry import lower
from .types import DOUBLE, INT64

JOINS = {}
REPEATS_MESSAGE = "repeats may not contain negative values."
CONCAT_MESSAGE = ("all the input array dimensions except for the concatenation axis must match exactly, but "
                  "along dimension {}, the array at index 0 has size {} and the array at index {} has size {}")


def _i64(n):
    return ir.Constant(INT64, n)


def _smin(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def _smax(b, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def _convert(ctx, src_t, out_t, v):
    """An element of an array of ``src_t`` (as loaded) as a value for an array of ``out_t``."""
    if out_t.dtype in (F64, F32):
        return as_f64(ctx, src_t, v)
    if out_t.dtype is I64 and src_t.dtype is BOOL:
        return ctx.b.zext(v, INT64)
    return v


def _check_shapes(ctx, op, shapes, axis):
    """numpy's checks, on the shapes with their new axes: every operand's shape is operand
    0's (np.stack), or is along every axis but the joined one (the others), in numpy's order."""
    b = ctx.b
    stack = op.attrs.get("fn") == "stack"
    for k in range(1, len(shapes)):
        for d, (n0, nk) in enumerate(zip(shapes[0], shapes[k])):
            if d == axis and not stack:
                continue
            bad = b.icmp_signed("!=", n0, nk)
            if stack:
                ctx.raise_at(bad, lambda err: ValueError(STACK_MESSAGE))
            else:
                ctx.raise_at(bad, lambda err, d=d, k=k: ValueError(CONCAT_MESSAGE.format(d, err[0], k, err[1])),
                             [n0, nk])


@lower(JOINS, "concat")
def _concat(ctx, op, ins):
    """Each operand copied into its place along ``axis`` (with its new axis where expanded)."""
    b = ctx.b
    axis, expand = op.attrs["axis"], op.attrs["expand"]
    out_t = op.results[0].type
    ts = [v.type for v in op.operands]
    given = [shape_values(ctx, x, t.ndim) for x, t in zip(ins, ts)]
    shapes = [s[:axis] + [_i64(1)] + s[axis:] if e else s for s, e in zip(given, expand)]
    _check_shapes(ctx, op, shapes, axis)
    total = _i64(0)
    for s in shapes:
        total = b.add(total, s[axis])
    result = new_array(ctx, out_t, shapes[0][:axis] + [total] + shapes[0][axis + 1:], None)
    offset = _i64(0)
    for x, t, s, e in zip(ins, ts, shapes, expand):
        def move(idx, x=x, t=t, e=e, offset=offset):
            src = idx[:axis] + idx[axis + 1:] if e else idx
            value = _convert(ctx, t, out_t, load_element(ctx, t, x, src))
            store_element(ctx, out_t, result, idx[:axis] + [b.add(idx[axis], offset)] + idx[axis + 1:], value)
        each_index(ctx, s, move)
        offset = b.add(offset, s[axis])
    return result


@lower(JOINS, "split_size")
def _split_size(ctx, op, ins):
    b = ctx.b
    n, sections = ins[0], _i64(op.attrs["sections"])
    ctx.raise_at(b.icmp_signed("!=", b.srem(n, sections), _i64(0)), lambda err: ValueError(SPLIT_MESSAGE))
    return b.sdiv(n, sections)


def _diagonal_span(b, n, m, k):
    """(length, first row, first column) of diagonal k of an n×m matrix."""
    zero = _i64(0)
    length = _smax(b, _smin(b, b.add(n, _smin(b, k, zero)), b.sub(m, _smax(b, k, zero))), zero)
    return length, b.neg(_smin(b, k, zero)), _smax(b, k, zero)


@lower(JOINS, "diagonal")
def _diagonal(ctx, op, ins):
    b = ctx.b
    x, k = ins
    t, out_t = op.operands[0].type, op.results[0].type
    n, m = shape_values(ctx, x, 2)
    length, row, col = _diagonal_span(b, n, m, k)
    result = new_array(ctx, out_t, [length], None)
    each_index(ctx, [length], lambda i: b.store(b.load(raw_pointer(ctx, t, x, [b.add(row, i[0]), b.add(col, i[0])])),
                                                raw_pointer(ctx, out_t, result, i)))
    return result


@lower(JOINS, "diag_embed")
def _diag_embed(ctx, op, ins):
    b = ctx.b
    v, n, m, k = ins
    t, out_t = op.operands[0].type, op.results[0].type
    result = new_array(ctx, out_t, [n, m], 0.0)
    length, row, col = _diagonal_span(b, n, m, k)
    length = _smin(b, length, shape_values(ctx, v, 1)[0])
    each_index(ctx, [length], lambda i: b.store(b.load(raw_pointer(ctx, t, v, i)), raw_pointer(
        ctx, out_t, result, [b.add(row, i[0]), b.add(col, i[0])])))
    return result


@lower(JOINS, "tri")
def _tri(ctx, op, ins):
    b = ctx.b
    n, m, k = ins
    out_t = op.results[0].type
    result = new_array(ctx, out_t, [n, m], None)
    each_index(ctx, [n, m], lambda idx: store_element(ctx, out_t, result, idx, b.icmp_signed(
        "<=", b.sub(idx[1], idx[0]), k)))
    return result


@lower(JOINS, "linspace")
def _linspace(ctx, op, ins):
    """numpy's formula: step = (stop - start) / div, y_i = i * step + start (where step is 0:
    i / div * delta + start; where div is 0: i * delta + start), the last point stop itself."""
    b = ctx.b
    start, stop, num = ins
    endpoint = op.attrs["endpoint"]
    ctx.raise_at(b.icmp_signed("<", num, _i64(0)),
                 lambda err: ValueError(f"Number of samples, {err[0]}, must be non-negative."), [num])
    div = b.sub(num, _i64(1)) if endpoint else num
    fdiv = b.sitofp(div, DOUBLE)
    delta = b.fsub(stop, start)
    step = b.fdiv(delta, fdiv)
    positive = b.icmp_signed(">", div, _i64(0))
    zero_step = b.and_(positive, b.fcmp_ordered("==", step, ir.Constant(DOUBLE, 0.0)))
    out_t = op.results[0].type
    result = new_array(ctx, out_t, [num], None)

    def point(idx):
        i = b.sitofp(idx[0], DOUBLE)
        scaled = b.select(zero_step, b.fmul(b.fdiv(i, fdiv), delta),
                          b.select(positive, b.fmul(i, step), b.fmul(i, delta)))
        value = b.fadd(scaled, start)
        if endpoint:
            value = b.select(b.and_(b.icmp_signed(">", num, _i64(1)), b.icmp_signed("==", idx[0], div)), stop, value)
        store_element(ctx, out_t, result, idx, value)
    each_index(ctx, [num], point)
    return result


def _mod(b, a, n):
    """a mod n in [0, n) (Python's %), for n > 0; 0 where n is 0."""
    safe = b.select(b.icmp_signed("==", n, _i64(0)), _i64(1), n)
    r = b.srem(a, safe)
    return b.select(b.icmp_signed("<", r, _i64(0)), b.add(r, safe), r)


@lower(JOINS, "roll")
def _roll(ctx, op, ins):
    """out[i] = x[(i - shift) mod n] along the axis, or over the flattened array (axis None)."""
    b = ctx.b
    x, shift = ins
    t = op.operands[0].type
    axis = op.attrs.get("axis")
    shape = shape_values(ctx, x, t.ndim)
    result = new_array(ctx, t, shape, None)
    n = shape[axis] if axis is not None else product(ctx, shape)
    s = _mod(b, shift, n)

    def back(i):                # (i - s) mod n, for 0 <= i < n
        j = b.sub(i, s)
        return b.select(b.icmp_signed("<", j, _i64(0)), b.add(j, n), j)

    def move(idx):
        if axis is not None:
            src = idx[:axis] + [back(idx[axis])] + idx[axis + 1:]
        else:
            flat = _i64(0)
            for i, size in zip(idx, shape):
                flat = b.add(b.mul(flat, size), i)
            flat, src = back(flat), []
            for size in reversed(shape):
                src.insert(0, b.srem(flat, size))
                flat = b.sdiv(flat, size)
        b.store(b.load(raw_pointer(ctx, t, x, src)), raw_pointer(ctx, t, result, idx))
    each_index(ctx, shape, move)
    return result


# ---------------------------------------------------------------------- np.tile, np.repeat
def _tile_source(b, idx, x_shape):
    """The element of x that out[idx] of np.tile copies: idx mod x's shape (trailing axes)."""
    lead = len(idx) - len(x_shape)
    return [b.srem(i, n) for i, n in zip(idx[lead:], x_shape)]


def _repeat_source(b, idx, x_shape, r, axis):
    """The element of x that out[idx] of np.repeat copies: idx // r along the axis, or in
    the flattened array (C order) for axis None."""
    if axis is not None:
        return idx[:axis] + [b.sdiv(idx[axis], r)] + idx[axis + 1:]
    flat, src = b.sdiv(idx[0], r), []
    for n in reversed(x_shape):
        src.insert(0, b.srem(flat, n))
        flat = b.sdiv(flat, n)
    return src


def _no_negative(ctx, counts):
    for r in counts:
        ctx.guard(ctx.b.icmp_signed("<", r, _i64(0)), NEGATIVE_SIZE)


def _gather(ctx, op, x, out_shape, source):
    t, out_t = op.operands[0].type, op.results[0].type
    result = new_array(ctx, out_t, out_shape, None)
    each_index(ctx, out_shape, lambda idx: ctx.b.store(ctx.b.load(raw_pointer(ctx, t, x, source(idx))),
                                                       raw_pointer(ctx, out_t, result, idx)))
    return result


def _scatter_add(ctx, op, g, x, source):
    """The adjoint of a gather: zeros shaped like x, each element of g added where it came from."""
    b = ctx.b
    gt, xt, out_t = op.operands[0].type, op.operands[1].type, op.results[0].type
    result = new_array(ctx, out_t, shape_values(ctx, x, xt.ndim), 0.0)

    def add(idx):
        ptr = raw_pointer(ctx, out_t, result, source(idx))
        b.store(b.fadd(b.load(ptr), as_f64(ctx, gt, load_element(ctx, gt, g, idx))), ptr)
    each_index(ctx, shape_values(ctx, g, gt.ndim), add)
    return result


@lower(JOINS, "tile")
def _tile(ctx, op, ins):
    x, *reps = ins
    _no_negative(ctx, reps)
    x_shape = shape_values(ctx, x, op.operands[0].type.ndim)
    padded = [_i64(1)] * (len(reps) - len(x_shape)) + x_shape
    out_shape = [ctx.b.mul(r, n) for r, n in zip(reps, padded)]
    return _gather(ctx, op, x, out_shape, lambda idx: _tile_source(ctx.b, idx, x_shape))


@lower(JOINS, "tile_sum")
def _tile_sum(ctx, op, ins):
    g, x = ins[:2]
    x_shape = shape_values(ctx, x, op.operands[1].type.ndim)
    return _scatter_add(ctx, op, g, x, lambda idx: _tile_source(ctx.b, idx, x_shape))


@lower(JOINS, "repeat")
def _repeat(ctx, op, ins):
    b = ctx.b
    x, r = ins
    _no_negative(ctx, [r])
    axis = op.attrs.get("axis")
    x_shape = shape_values(ctx, x, op.operands[0].type.ndim)
    if axis is None:
        out_shape = [b.mul(product(ctx, x_shape), r)]
    else:
        out_shape = x_shape[:axis] + [b.mul(x_shape[axis], r)] + x_shape[axis + 1:]
    return _gather(ctx, op, x, out_shape, lambda idx: _repeat_source(b, idx, x_shape, r, axis))


@lower(JOINS, "repeat_sum")
def _repeat_sum(ctx, op, ins):
    g, x, r = ins
    x_shape = shape_values(ctx, x, op.operands[1].type.ndim)
    return _scatter_add(ctx, op, g, x, lambda idx: _repeat_source(ctx.b, idx, x_shape, r, op.attrs.get("axis")))


# ---------------------------------------------------------------------- np.kron
def _product(ctx, t, x, y):
    return ctx.b.fmul(x, y) if t.dtype is F64 else ctx.b.mul(x, y)


@lower(JOINS, "kron")
def _kron(ctx, op, ins):
    """out[i·p + k] = a[i]·b[k] along each axis (p: b's shape)."""
    b = ctx.b
    a, c = ins
    t = op.operands[0].type
    sa, sb = shape_values(ctx, a, t.ndim), shape_values(ctx, c, t.ndim)
    result = new_array(ctx, t, [b.mul(m, p) for m, p in zip(sa, sb)], None)

    def put(idx):
        i, k = idx[:t.ndim], idx[t.ndim:]
        at = [b.add(b.mul(ii, p), kk) for ii, kk, p in zip(i, k, sb)]
        store_element(ctx, t, result, at, _product(ctx, t, load_element(ctx, t, a, i), load_element(ctx, t, c, k)))
    each_index(ctx, sa + sb, put)
    return result


@lower(JOINS, "kron_grad")
def _kron_grad(ctx, op, ins):
    """da[i] += g[i·p + k]·b[k] (wrt 0) or db[k] += g[i·p + k]·a[i] (wrt 1)."""
    b = ctx.b
    g, other, like = ins
    gt, ot, lt = (v.type for v in op.operands)
    out_t = op.results[0].type
    wrt = op.attrs["wrt"]
    so, sl = shape_values(ctx, other, ot.ndim), shape_values(ctx, like, lt.ndim)
    sa, sb = (sl, so) if wrt == 0 else (so, sl)
    result = new_array(ctx, out_t, sl, 0.0)

    def add(idx):
        i, k = idx[:lt.ndim], idx[lt.ndim:]
        gv = as_f64(ctx, gt, load_element(ctx, gt, g, [b.add(b.mul(ii, p), kk) for ii, kk, p in zip(i, k, sb)]))
        mine, theirs = (i, k) if wrt == 0 else (k, i)
        ptr = raw_pointer(ctx, out_t, result, mine)
        b.store(b.fadd(b.load(ptr), b.fmul(gv, as_f64(ctx, ot, load_element(ctx, ot, other, theirs)))), ptr)
    each_index(ctx, sa + sb, add)
    return result


# ---------------------------------------------------------------------- np.repeat by counts
def _runs(ctx, op, x_shape, counts, axis, step):
    """For each position i along the axis (of the flattened array for axis None) and each of
    its count(i) copies: ``step(i, at)``, ``at`` the copy's position in the result. Checks
    numpy's conditions first; returns the result's length along the axis."""
    b = ctx.b
    n = product(ctx, x_shape) if axis is None else x_shape[axis]
    length = shape_values(ctx, counts, 1)[0]
    one = b.icmp_signed("==", length, _i64(1))
    ctx.raise_at(b.and_(b.icmp_signed("!=", length, n), b.not_(one)), lambda err: ValueError(
        f"operands could not be broadcast together with shape ({err[0]},) ({err[1]},)"), [n, length])
    ct = op.operands[2 if op.prim == "repeat_each_sum" else 1].type

    def count(i):
        return load_element(ctx, ct, counts, [b.select(one, _i64(0), i)])
    total = ctx.stack_slot(INT64)
    b.store(_i64(0), total)

    def add_count(i):
        c = count(i[0])
        negative = b.icmp_signed("<", c, _i64(0))
        # numpy: one count for all is a scalar count (a negative size), else its own message
        ctx.guard(b.and_(negative, one), NEGATIVE_SIZE)
        ctx.raise_at(b.and_(negative, b.not_(one)), lambda err: ValueError(REPEATS_MESSAGE))
        b.store(b.add(b.load(total), c), total)
    each_index(ctx, [n], add_count)
    if step is not None:
        at = ctx.stack_slot(INT64)
        b.store(_i64(0), at)

        def copies(i):
            def copy(t):
                step(i[0], b.load(at))
                b.store(b.add(b.load(at), _i64(1)), at)
            each_index(ctx, [count(i[0])], copy)
        each_index(ctx, [n], copies)
    return b.load(total)


def _unravel(b, flat, shape):
    out = []
    for size in reversed(shape):
        out.insert(0, b.srem(flat, size))
        flat = b.sdiv(flat, size)
    return out


@lower(JOINS, "repeat_each")
def _repeat_each(ctx, op, ins):
    b = ctx.b
    x, counts = ins
    t, out_t = op.operands[0].type, op.results[0].type
    axis = op.attrs.get("axis")
    x_shape = shape_values(ctx, x, t.ndim)
    total = _runs(ctx, op, x_shape, counts, axis, None)
    out_shape = [total] if axis is None else x_shape[:axis] + [total] + x_shape[axis + 1:]
    result = new_array(ctx, out_t, out_shape, None)
    rest = [] if axis is None else x_shape[:axis] + x_shape[axis + 1:]

    def step(i, at):
        def move(idx):
            src = _unravel(b, i, x_shape) if axis is None else idx[:axis] + [i] + idx[axis:]
            dst = [at] if axis is None else idx[:axis] + [at] + idx[axis:]
            b.store(b.load(raw_pointer(ctx, t, x, src)), raw_pointer(ctx, out_t, result, dst))
        each_index(ctx, rest, move)
    _runs(ctx, op, x_shape, counts, axis, step)
    return result


@lower(JOINS, "repeat_each_sum")
def _repeat_each_sum(ctx, op, ins):
    b = ctx.b
    g, x, counts = ins
    gt, xt, out_t = op.operands[0].type, op.operands[1].type, op.results[0].type
    axis = op.attrs.get("axis")
    x_shape = shape_values(ctx, x, xt.ndim)
    result = new_array(ctx, out_t, x_shape, 0.0)
    rest = [] if axis is None else x_shape[:axis] + x_shape[axis + 1:]

    def step(i, at):
        def add(idx):
            dst = _unravel(b, i, x_shape) if axis is None else idx[:axis] + [i] + idx[axis:]
            src = [at] if axis is None else idx[:axis] + [at] + idx[axis:]
            ptr = raw_pointer(ctx, out_t, result, dst)
            b.store(b.fadd(b.load(ptr), as_f64(ctx, gt, load_element(ctx, gt, g, src))), ptr)
        each_index(ctx, rest, add)
    _runs(ctx, op, x_shape, counts, axis, step)
    return result
