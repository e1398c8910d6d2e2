"""Arrays in the llvm backend: element access, views (slices, transposes, broadcast views),
numpy's broadcasting of element-wise ops, and new arrays.

An array value is the struct {data pointer, shape, strides} (types.py), strides counted in
elements; any numpy array, non-contiguous included, arrives as one without a copy. Element
reads and writes are bounds-checked (IndexError naming the array, the index and the line)
unless checks.py proved them in bounds before their loop. New arrays are allocated into the
call's arena (memory.py) and handed to numpy on return.

``ARRAY`` holds the rules of the array primitives; ``Arrays`` the lowering's helpers for them.

Example (inside the lowering):
    part = self.slice_view(op, t, arr, bounds)
"""
import numpy as np
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, I64, ArrayType
from .error_codes import ARANGE_STEP, ERR_SLOTS, FLOAT_ARANGE_STEP, NEGATIVE_SIZE, SLICE_STEP, shape_text
from .lazy import Lazy
from .registry import lower
from .types import BIT, BYTE, DOUBLE, ELEMENT_SIZE, INT64, PTR, element_type, ltype

ARRAY = {}


@lower(ARRAY, "shape")
def _shape(ctx, op, ins):
    return ctx.shape_values(ins[0], op.operands[0].type.ndim)[op.attrs["axis"]]     # a lazy array's too


@lower(ARRAY, "size")
def _size(ctx, op, ins):
    return ctx.product(ctx.shape_values(ins[0], op.operands[0].type.ndim))


@lower(ARRAY, "index")
def _index(ctx, op, ins):
    arr = op.operands[0]
    return ctx.from_memory(arr.type, ctx.b.load(ctx.element_pointer(op, arr, ins[0], ins[1:])))


@lower(ARRAY, "setitem", "index_add")
def _setitem(ctx, op, ins):
    b = ctx.b
    arr = op.operands[0]
    ptr = ctx.element_pointer(op, arr, ins[0], ins[2:])
    val = ins[1]
    if op.prim == "index_add":
        old = b.load(ptr)
        val = b.fadd(b.fpext(old, DOUBLE) if arr.type.dtype is F32 else old, val)
    b.store(ctx.to_memory(arr.type, val), ptr)
    return ins[0]


@lower(ARRAY, "zeros_like")
def _zeros_like(ctx, op, ins):
    t = op.operands[0].type
    return ctx.new_array(t, ctx.shape_values(ins[0], t.ndim), 0.0)


@lower(ARRAY, "full")
def _full(ctx, op, ins):
    return ctx.new_array(op.results[0].type, ins, op.attrs["value"])


@lower(ARRAY, "copy")
def _copy(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    src = ins[0]
    dst = ctx.new_array(t, ctx.shape_values(src, t.ndim), None, written=True)

    def move(idx):
        value = b.load(ctx.raw_pointer(t, src, idx))
        b.store(value, ctx.raw_pointer(t, dst, idx))
    ctx.each_index(ctx.shape_values(src, t.ndim), move)
    return dst


@lower(ARRAY, "arange")
def _arange(ctx, op, ins):
    b = ctx.b
    out_t = op.results[0].type
    if out_t.dtype is F64:
        return _float_arange(ctx, op, ins)
    start, stop, step = ins
    ctx.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), ARANGE_STEP)
    n = ctx.range_len(start, stop, step)
    result = ctx.new_array(out_t, [n], None)
    ctx.each_index([n], lambda idx: ctx.store_element(out_t, result, idx, b.add(start, b.mul(idx[0], step))))
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
    result = ctx.new_array(out_t, [n], None)
    ctx.each_index([n], lambda idx: ctx.store_element(out_t, result, idx,
                                                      b.fadd(start, b.fmul(b.sitofp(idx[0], DOUBLE), delta))))
    return result


@lower(ARRAY, "transpose")
def _transpose(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    shape = ctx.shape_values(ins[0], t.ndim)
    sd = b.extract_value(ins[0], 2)
    strides = [b.extract_value(sd, k) for k in range(t.ndim)]
    return ctx.view(ins[0], b.extract_value(ins[0], 0), shape[::-1], strides[::-1], t.ndim)


@lower(ARRAY, "slice")
def _slice(ctx, op, ins):
    return ctx.slice_view(op, op.operands[0].type, ins[0], ins[1:])


@lower(ARRAY, "setslice", "slice_add")
def _setslice(ctx, op, ins):
    b = ctx.b
    t = op.operands[0].type
    part = ctx.slice_view(op, t, ins[0], ins[2:])
    pt = ArrayType(t.dtype, op.operands[0].type.ndim - sum(1 for s in op.attrs["spec"] if s[0] == "i")
                   + sum(1 for s in op.attrs["spec"] if s[0] == "n"))
    vt, v = op.operands[1].type, ins[1]
    shape = ctx.shape_values(part, pt.ndim)
    if vt.is_array:
        ctx.assignable(pt, part, vt, v)
        v = ctx.broadcast_view(vt, v)

    def step(idx):
        val = _as_element(b, ctx.load_broadcast(vt, v, idx) if vt.is_array else v, pt.dtype)
        if op.prim == "slice_add":
            val = b.fadd(ctx.load_element(pt, part, idx), val)
        ctx.store_element(pt, part, idx, val)
    ctx.each_index(shape, step)
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
        return ctx.lazy_fill(op, ins)
    gt, lt = op.operands[0].type, op.operands[1].type
    g, like = ins
    shape = ctx.shape_values(like, lt.ndim)
    result = ctx.new_array(ArrayType(F64, lt.ndim), shape, None)
    axis = op.attrs.get("axis")
    if gt.is_array and axis is None:
        g = ctx.broadcast_view(gt, g)

    def step(idx):
        if not gt.is_array:
            val = g
        elif axis is not None:
            val = ctx.load_element(gt, g, [i for k, i in enumerate(idx) if k != axis])
        else:
            val = ctx.load_broadcast(gt, g, idx)
        ctx.store_element(ArrayType(F64, lt.ndim), result, idx, val)
    ctx.each_index(shape, step)
    return result


class Arrays:
    """The lowering's array helpers (a mixin of lowering.Lowering: uses its builder ``b``)."""

    def elementwise(self, op, ins):
        """A scalar primitive over arrays with numpy's broadcasting: a loop nest over the result,
        or, for a lazy op (fusion.py), a value its consumer computes element by element."""
        out_t = op.results[0].type
        shape = self.broadcast_shape(out_t.ndim, [(x.type, v) for x, v in zip(op.operands, ins)])
        fused = self.lazy_elementwise(op, ins, shape)
        if op in self.lazy:
            return fused
        result = self.new_array(out_t, shape, None, written=True)       # each element stored below
        self.evaluating([fused], lambda: self.each_element(shape, lambda idx: self.store_element(
            out_t, result, idx, self.element(out_t, fused, idx))))
        return result

    def broadcast_shape(self, ndim, operands):
        """The shape numpy broadcasts ``operands`` ((type, value) pairs) to, raising its
        ValueError where they do not broadcast."""
        b = self.b
        shape = [ir.Constant(INT64, 1)] * ndim
        one = ir.Constant(INT64, 1)
        ok = ir.Constant(BIT, 1)
        for t, v in operands:
            if not t.is_array:
                continue
            lead = ndim - t.ndim
            for k, n in enumerate(self.shape_values(v, t.ndim)):
                cur = shape[lead + k]
                fits = b.or_(b.or_(b.icmp_signed("==", cur, one), b.icmp_signed("==", n, one)),
                             b.icmp_signed("==", cur, n))
                ok = b.and_(ok, fits)
                shape[lead + k] = b.select(b.icmp_signed("==", n, one), cur, n)
        # numpy's message lists every operand's shape, a scalar's as ()
        ndims = [t.ndim if t.is_array else 0 for t, _ in operands]
        dims = [n for t, v in operands if t.is_array for n in self.shape_values(v, t.ndim)]
        if len(dims) > ERR_SLOTS:
            ndims, dims = None, []

        def make(err):
            if ndims is None:
                return ValueError("operands could not be broadcast together")
            shapes, it = [], iter(err)
            for nd in ndims:
                shapes.append(shape_text([next(it) for _ in range(nd)]))
            return ValueError(f"operands could not be broadcast together with shapes {' '.join(shapes)} ")
        if sum(t.is_array for t, _ in operands) > 1:
            self.raise_at(b.not_(ok), make, dims)
        return shape

    def assignable(self, part_t, part, vt, v):
        """numpy's check of ``x[a:b] = v``: each axis of ``v`` is 1 or the slice's."""
        b = self.b
        one = ir.Constant(INT64, 1)
        ok = ir.Constant(BIT, 1)
        part_shape, v_shape = self.shape_values(part, part_t.ndim), self.shape_values(v, vt.ndim)
        for n, m in zip(part_shape[part_t.ndim - vt.ndim:], v_shape):
            ok = b.and_(ok, b.or_(b.icmp_signed("==", m, one), b.icmp_signed("==", m, n)))
        ok = b.and_(ok, ir.Constant(BIT, int(vt.ndim <= part_t.ndim)))

        def make(err):
            return ValueError(f"could not broadcast input array from shape {shape_text(err[:vt.ndim])} "
                              f"into shape {shape_text(err[vt.ndim:])}")
        self.raise_at(b.not_(ok), make, v_shape + part_shape)

    def broadcast_view(self, t, arr):
        """``arr`` with a zero stride on its size-1 axes, made once before a loop: then element
        ``idx`` of the broadcast result is at ``idx`` (right-aligned) without a test per element."""
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        st = b.extract_value(arr, 2)
        strides = [b.select(b.icmp_signed("==", n, ir.Constant(INT64, 1)), ir.Constant(INT64, 0),
                            b.extract_value(st, k)) for k, n in enumerate(shape)]
        return self.view(arr, b.extract_value(arr, 0), shape, strides, t.ndim)

    def load_broadcast(self, t, view, idx):
        """The element of a ``broadcast_view`` for result index ``idx``."""
        return self.load_element(t, view, idx[len(idx) - t.ndim:])

    def load_element(self, t, arr, idx):
        return self.from_memory(t, self.b.load(self.raw_pointer(t, arr, idx)))

    def store_element(self, t, arr, idx, val):
        self.b.store(self.to_memory(t, val), self.raw_pointer(t, arr, idx))

    def from_memory(self, t, val):
        """An element as loaded from an array of ``t`` to its value (float32 and bool widen)."""
        if t.dtype is F32:
            return self.b.fpext(val, DOUBLE)
        if t.dtype is BOOL:
            return self.b.trunc(val, BIT)
        return val

    def to_memory(self, t, val):
        """A value to the element type of an array of ``t`` (a float into an int array truncates)."""
        b = self.b
        if t.dtype is F32:
            return b.fptrunc(val, ir.FloatType())
        if t.dtype is BOOL:
            return b.zext(val, BYTE)
        if t.dtype is I64 and val.type is DOUBLE:
            return b.fptosi(val, INT64)
        return val

    def as_f64(self, t, v):
        if t.dtype is I64:
            return self.b.sitofp(v, DOUBLE)
        if t.dtype is BOOL:
            return self.b.uitofp(v, DOUBLE)
        return v

    def view(self, arr, data, shape, strides, ndim):
        st = ir.ArrayType(INT64, ndim)
        sh, sd = ir.Constant(st, ir.Undefined), ir.Constant(st, ir.Undefined)
        for k in range(ndim):
            sh = self.b.insert_value(sh, shape[k], k)
            sd = self.b.insert_value(sd, strides[k], k)
        out = ir.Constant(ir.LiteralStructType([PTR, st, st]), ir.Undefined)
        return self.b.insert_value(self.b.insert_value(self.b.insert_value(out, data, 0), sh, 1), sd, 2)

    def slice_view(self, op, t, arr, bounds):
        """x[a:b, j, ::s] as a view: pointer offset, new shape and strides (Python's slice rules)."""
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        strides_v = b.extract_value(arr, 2)
        strides = [b.extract_value(strides_v, k) for k in range(t.ndim)]
        given = sum(1 for s in op.attrs["spec"] if s[0] != "n")
        spec = list(op.attrs["spec"]) + [("s", False, False, False)] * (t.ndim - given)
        it = iter(bounds)
        offset = ir.Constant(INT64, 0)
        new_shape, new_strides = [], []
        k = -1
        for s in spec:
            if s[0] == "n":         # None: a new axis of length 1 (its stride is never used)
                new_shape.append(ir.Constant(INT64, 1))
                new_strides.append(ir.Constant(INT64, 0))
                continue
            k += 1
            n, st = shape[k], strides[k]
            if s[0] == "i":
                i, j = self.from_end(next(it), n)
                self.check_index(op, k, i, j, n)
                offset = b.add(offset, b.mul(j, st))
                continue
            start, stop, step = (next(it) if has else None for has in s[1:])
            step = step if step is not None else ir.Constant(INT64, 1)
            self.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), SLICE_STEP)
            lo, length = self.adjust_slice(start, stop, step, n)
            offset = b.add(offset, b.mul(lo, st))
            new_shape.append(length)
            new_strides.append(b.mul(st, step))
        data = b.bitcast(self.offset_pointer(t, arr, offset), PTR)
        return self.view(arr, data, new_shape, new_strides, len(new_shape))

    def adjust_slice(self, start, stop, step, n):
        """(first index, length) of start:stop:step over n elements, as Python computes them."""
        b = self.b
        zero, one, minus = ir.Constant(INT64, 0), ir.Constant(INT64, 1), ir.Constant(INT64, -1)
        up = b.icmp_signed(">", step, zero)

        def clip(v, default_up, default_down):
            if v is None:
                return b.select(up, default_up, default_down)
            v = b.select(b.icmp_signed("<", v, zero), b.add(v, n), v)
            low = b.select(up, zero, minus)
            high = b.select(up, n, b.sub(n, one))
            v = b.select(b.icmp_signed("<", v, low), low, v)
            return b.select(b.icmp_signed(">", v, high), high, v)
        lo = clip(start, zero, b.sub(n, one))
        hi = clip(stop, n, minus)
        span = b.select(up, b.sub(hi, lo), b.sub(lo, hi))
        mag = b.select(up, step, b.neg(step))
        length = b.sdiv(b.add(span, b.sub(mag, one)), mag)
        length = b.select(b.icmp_signed(">", length, zero), length, zero)
        return lo, length

    def global_array(self, t, value):
        """A global numpy array read at compile time: constant data in the module."""
        b = self.b
        flat = np.ascontiguousarray(value).reshape(-1)
        elem = element_type(t)
        items = [float(v) if t.dtype in (F64, F32) else int(v) for v in flat] or [0]
        data_t = ir.ArrayType(elem, len(items))
        g = ir.GlobalVariable(self.module, data_t, name=f"srcgrad.const.{len(self.module.global_values)}")
        g.global_constant = True
        g.initializer = ir.Constant(data_t, items)
        shape = [ir.Constant(INT64, n) for n in value.shape]
        strides, stride = [], 1
        for n in reversed(value.shape):
            strides.insert(0, ir.Constant(INT64, stride))
            stride *= n
        return self.view(None, b.bitcast(g, PTR), shape, strides, t.ndim)

    def shape_values(self, arr, ndim):
        if isinstance(arr, Lazy):
            return list(arr.shape)
        shape = self.b.extract_value(arr, 1)
        return [self.b.extract_value(shape, k) for k in range(ndim)]

    def product(self, values):
        out = ir.Constant(INT64, 1)
        for v in values:
            out = self.b.mul(out, v)
        return out

    def raw_pointer(self, t, arr, idx):
        """The address of arr[idx] (indices already checked)."""
        b = self.b
        strides = b.extract_value(arr, 2)
        off = ir.Constant(INT64, 0)
        for k, i in enumerate(idx):
            off = b.add(off, b.mul(i, b.extract_value(strides, k)))
        return self.offset_pointer(t, arr, off)

    def offset_pointer(self, t, arr, offset):
        """arr's data pointer moved by ``offset`` elements. Strides count elements, not bytes,
        so that LLVM's loop vectoriser can specialise a loop on a unit stride (contiguous)."""
        data = self.b.bitcast(self.b.extract_value(arr, 0), ir.PointerType(element_type(t)))
        return self.b.gep(data, [offset], inbounds=True)

    def element_pointer(self, op, arr_value, arr, idx):
        """arr[idx] with Python's negative indices and a bounds check that raises IndexError."""
        shape = self.shape_values(arr, arr_value.type.ndim)
        fixed = []
        for k, (i, n) in enumerate(zip(idx, shape)):
            i, j = self.from_end(i, n)
            if op in self.trusted:          # checked before the loop: 0 <= i < n
                fixed.append(i)
                continue
            if not self.boundscheck:
                fixed.append(j)
                continue
            self.check_index(op, k, i, j, n)
            fixed.append(j)
        return self.raw_pointer(arr_value.type, arr, fixed)

    def from_end(self, i, n):
        """(index ``i`` as an i64, and as Python reads it on an axis of size ``n``: i + n where
        negative)."""
        b = self.b
        i = b.zext(i, INT64) if i.type is BIT else i
        return i, b.select(b.icmp_signed("<", i, ir.Constant(INT64, 0)), b.add(i, n), i)

    def check_index(self, op, axis, i, j, n):
        """IndexError unless 0 <= j < n: index ``i`` (as written) on ``axis`` of op's array."""
        b = self.b
        bad = b.or_(b.icmp_signed("<", j, ir.Constant(INT64, 0)), b.icmp_signed(">=", j, n))
        name, where = self.array_label(op, op.operands[0])
        self.raise_at(bad, lambda err: IndexError(f"index {err[0]} is out of bounds for axis {axis} of {name} "
                                                  f"with size {err[1]}{where}"), [i, n])

    def new_array(self, t, sizes, fill, written=False):
        """A C-ordered array of ``sizes`` (``fill``; zeros for None, but uninitialised where the
        caller says it writes every element: ``written``), recorded in the arena so that Python
        frees it after the call. (Zeroing memory just to overwrite it cost a quarter of a taped
        gradient's time: the zeros go to fresh memory, one more pass over it.)"""
        b = self.b
        size = ELEMENT_SIZE[t.dtype]
        total, too_big = ir.Constant(INT64, 1), ir.Constant(BIT, 0)
        for n in sizes:
            self.guard(b.icmp_signed("<", n, ir.Constant(INT64, 0)), NEGATIVE_SIZE)
            product = b.smul_with_overflow(total, n)
            total, too_big = b.extract_value(product, 0), b.or_(too_big, b.extract_value(product, 1))
        data, _ = self.allocate(total, size, zeroed=not written, too_big=too_big)
        shape_t = ir.ArrayType(INT64, t.ndim)
        shape = ir.Constant(shape_t, ir.Undefined)
        strides = ir.Constant(shape_t, ir.Undefined)
        stride = ir.Constant(INT64, 1)
        for k in reversed(range(t.ndim)):
            strides = b.insert_value(strides, stride, k)
            stride = b.mul(stride, sizes[k])
        for k, n in enumerate(sizes):
            shape = b.insert_value(shape, n, k)
        arr = ir.Constant(ltype(t), ir.Undefined)
        arr = b.insert_value(b.insert_value(b.insert_value(arr, data, 0), shape, 1), strides, 2)
        if fill not in (None, 0, 0.0):
            elem = element_type(t)
            value = ir.Constant(elem, float(fill) if isinstance(elem, (ir.DoubleType, ir.FloatType)) else int(fill))
            flat = b.bitcast(data, ir.PointerType(elem))
            self.each_index([total], lambda idx: b.store(value, b.gep(flat, idx)))
        return arr
