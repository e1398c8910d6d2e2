"""Array values in the llvm backend: element access, views (slices, transposes, broadcast
views), numpy's shape checks (broadcasting, slice assignment, ``@``'s core axes), bounds
checks, and new arrays: the helpers every table's rules use on arrays.

An array value is the struct {data pointer, shape, strides} (types.py), strides counted in
elements; any numpy array, non-contiguous included, arrives as one without a copy. An array
that is never stored is a ``Lazy`` value instead (its kinds and their elements: lazy.py);
``shape_values`` reads both. Element reads and writes are bounds-checked (IndexError naming
the array, the index and the line) unless checks.py proved them in bounds before their loop.
New arrays are allocated into the call's arena (memory.py) and handed to numpy on return.
Each function takes the lowering context first (lowering.Lowering: its builder ``b``); the
rules of the array primitives are array_ops.py's.

Example (inside a rule):
    part = slice_view(ctx, op, t, arr, bounds)
"""
import numpy as np
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, I64
from .error_codes import ERR_SLOTS, MATMUL_MESSAGE, NEGATIVE_SIZE, SLICE_STEP, shape_text
from .loops import each_index
from .memory import allocate
from .types import BIT, BYTE, DOUBLE, ELEMENT_SIZE, INT64, PTR, element_type, ltype


class Lazy:
    """An array that is never stored: ``t`` its type, ``shape`` its LLVM sizes (lazy.py holds
    its kinds: what each computes, and how its elements are computed in a consumer's loop)."""

    def __init__(self, t, shape):
        self.t, self.shape = t, list(shape)

    def children(self):
        """The lazy values this one's elements are computed from."""
        return []


def broadcast_shape(ctx, ndim, operands):
    """The shape numpy broadcasts ``operands`` ((type, value) pairs) to, raising its
    ValueError where they do not broadcast."""
    b = ctx.b
    shape = [ir.Constant(INT64, 1)] * ndim
    one = ir.Constant(INT64, 1)
    ok = ir.Constant(BIT, 1)
    for t, v in operands:
        if not t.is_array:
            continue
        lead = ndim - t.ndim
        for k, n in enumerate(shape_values(ctx, v, t.ndim)):
            cur = shape[lead + k]
            fits = b.or_(b.or_(b.icmp_signed("==", cur, one), b.icmp_signed("==", n, one)),
                         b.icmp_signed("==", cur, n))
            ok = b.and_(ok, fits)
            shape[lead + k] = b.select(b.icmp_signed("==", n, one), cur, n)
    # numpy's message lists every operand's shape, a scalar's as ()
    ndims = [t.ndim if t.is_array else 0 for t, _ in operands]
    dims = [n for t, v in operands if t.is_array for n in shape_values(ctx, v, t.ndim)]
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
        ctx.raise_at(b.not_(ok), make, dims)
    return shape


def assignable(ctx, part_t, part, vt, v):
    """numpy's check of ``x[a:b] = v``: each axis of ``v`` is 1 or the slice's."""
    b = ctx.b
    one = ir.Constant(INT64, 1)
    ok = ir.Constant(BIT, 1)
    part_shape, v_shape = shape_values(ctx, part, part_t.ndim), shape_values(ctx, v, vt.ndim)
    for n, m in zip(part_shape[part_t.ndim - vt.ndim:], v_shape):
        ok = b.and_(ok, b.or_(b.icmp_signed("==", m, one), b.icmp_signed("==", m, n)))
    ok = b.and_(ok, ir.Constant(BIT, int(vt.ndim <= part_t.ndim)))

    def make(err):
        return ValueError(f"could not broadcast input array from shape {shape_text(err[:vt.ndim])} "
                          f"into shape {shape_text(err[vt.ndim:])}")
    ctx.raise_at(b.not_(ok), make, v_shape + part_shape)


def broadcast_view(ctx, t, arr):
    """``arr`` with a zero stride on its size-1 axes, made once before a loop: then element
    ``idx`` of the broadcast result is at ``idx`` (right-aligned) without a test per element."""
    b = ctx.b
    shape = shape_values(ctx, arr, t.ndim)
    st = b.extract_value(arr, 2)
    strides = [b.select(b.icmp_signed("==", n, ir.Constant(INT64, 1)), ir.Constant(INT64, 0),
                        b.extract_value(st, k)) for k, n in enumerate(shape)]
    return view(ctx, arr, b.extract_value(arr, 0), shape, strides, t.ndim)


def load_broadcast(ctx, t, arr, idx):
    """The element of ``arr``, a ``broadcast_view``, for result index ``idx``."""
    return load_element(ctx, t, arr, idx[len(idx) - t.ndim:])


def load_element(ctx, t, arr, idx):
    """arr[idx] (indices already checked) as a value: float32 and bool elements widen."""
    return from_memory(ctx, t, ctx.b.load(raw_pointer(ctx, t, arr, idx)))


def store_element(ctx, t, arr, idx, val):
    """arr[idx] = val (indices already checked), converted to the array's element type."""
    ctx.b.store(to_memory(ctx, t, val), raw_pointer(ctx, t, arr, idx))


def from_memory(ctx, t, val):
    """An element as loaded from an array of ``t`` to its value (float32 and bool widen)."""
    if t.dtype is F32:
        return ctx.b.fpext(val, DOUBLE)
    if t.dtype is BOOL:
        return ctx.b.trunc(val, BIT)
    return val


def to_memory(ctx, t, val):
    """A value to the element type of an array of ``t`` (a float into an int array truncates)."""
    b = ctx.b
    if t.dtype is F32:
        return b.fptrunc(val, ir.FloatType())
    if t.dtype is BOOL:
        return b.zext(val, BYTE)
    if t.dtype is I64 and val.type is DOUBLE:
        return b.fptosi(val, INT64)
    return val


def as_f64(ctx, t, v):
    """An element of an array of ``t`` (as from_memory gives it) as a double."""
    if t.dtype is I64:
        return ctx.b.sitofp(v, DOUBLE)
    if t.dtype is BOOL:
        return ctx.b.uitofp(v, DOUBLE)
    return v


def view(ctx, arr, data, shape, strides, ndim):
    """The array struct of ``ndim`` axes over ``data`` with ``shape`` and ``strides`` (LLVM values)."""
    st = ir.ArrayType(INT64, ndim)
    sh, sd = ir.Constant(st, ir.Undefined), ir.Constant(st, ir.Undefined)
    for k in range(ndim):
        sh = ctx.b.insert_value(sh, shape[k], k)
        sd = ctx.b.insert_value(sd, strides[k], k)
    out = ir.Constant(ir.LiteralStructType([PTR, st, st]), ir.Undefined)
    return ctx.b.insert_value(ctx.b.insert_value(ctx.b.insert_value(out, data, 0), sh, 1), sd, 2)


def slice_view(ctx, op, t, arr, bounds):
    """x[a:b, j, ::s] as a view: pointer offset, new shape and strides (Python's slice rules)."""
    b = ctx.b
    shape = shape_values(ctx, arr, t.ndim)
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
            i, j = from_end(ctx, next(it), n)
            check_index(ctx, op, k, i, j, n)
            offset = b.add(offset, b.mul(j, st))
            continue
        start, stop, step = (next(it) if has else None for has in s[1:])
        step = step if step is not None else ir.Constant(INT64, 1)
        ctx.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), SLICE_STEP)
        lo, length = _adjust_slice(ctx, start, stop, step, n)
        offset = b.add(offset, b.mul(lo, st))
        new_shape.append(length)
        new_strides.append(b.mul(st, step))
    data = b.bitcast(offset_pointer(ctx, t, arr, offset), PTR)
    return view(ctx, arr, data, new_shape, new_strides, len(new_shape))


def _adjust_slice(ctx, start, stop, step, n):
    """(first index, length) of start:stop:step over n elements, as Python computes them."""
    b = ctx.b
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


def global_array(ctx, t, value):
    """A global numpy array read at compile time: constant data in the module."""
    b = ctx.b
    flat = np.ascontiguousarray(value).reshape(-1)
    elem = element_type(t)
    items = [float(v) if t.dtype in (F64, F32) else int(v) for v in flat] or [0]
    data_t = ir.ArrayType(elem, len(items))
    g = ir.GlobalVariable(ctx.module, data_t, name=f"srcgrad.const.{len(ctx.module.global_values)}")
    g.global_constant = True
    g.initializer = ir.Constant(data_t, items)
    shape = [ir.Constant(INT64, n) for n in value.shape]
    strides, stride = [], 1
    for n in reversed(value.shape):
        strides.insert(0, ir.Constant(INT64, stride))
        stride *= n
    return view(ctx, None, b.bitcast(g, PTR), shape, strides, t.ndim)


def shape_values(ctx, arr, ndim):
    """The sizes of the ``ndim`` axes of ``arr`` (stored or lazy) as LLVM values."""
    if isinstance(arr, Lazy):
        return list(arr.shape)
    shape = ctx.b.extract_value(arr, 1)
    return [ctx.b.extract_value(shape, k) for k in range(ndim)]


def product(ctx, values):
    """The product of the i64 ``values`` (1 for none)."""
    out = ir.Constant(INT64, 1)
    for v in values:
        out = ctx.b.mul(out, v)
    return out


def raw_pointer(ctx, t, arr, idx):
    """The address of arr[idx] (indices already checked)."""
    b = ctx.b
    strides = b.extract_value(arr, 2)
    off = ir.Constant(INT64, 0)
    for k, i in enumerate(idx):
        off = b.add(off, b.mul(i, b.extract_value(strides, k)))
    return offset_pointer(ctx, t, arr, off)


def offset_pointer(ctx, t, arr, offset):
    """arr's data pointer moved by ``offset`` elements. Strides count elements, not bytes,
    so that LLVM's loop vectoriser can specialise a loop on a unit stride (contiguous)."""
    data = ctx.b.bitcast(ctx.b.extract_value(arr, 0), ir.PointerType(element_type(t)))
    return ctx.b.gep(data, [offset], inbounds=True)


def element_pointer(ctx, op, arr_value, arr, idx):
    """arr[idx] with Python's negative indices and a bounds check that raises IndexError."""
    shape = shape_values(ctx, arr, arr_value.type.ndim)
    fixed = []
    for k, (i, n) in enumerate(zip(idx, shape)):
        i, j = from_end(ctx, i, n)
        if op in ctx.trusted:          # checked before the loop: 0 <= i < n
            fixed.append(i)
            continue
        if not ctx.boundscheck:
            fixed.append(j)
            continue
        check_index(ctx, op, k, i, j, n)
        fixed.append(j)
    return raw_pointer(ctx, arr_value.type, arr, fixed)


def from_end(ctx, i, n):
    """(index ``i`` as an i64, and as Python reads it on an axis of size ``n``: i + n where
    negative)."""
    b = ctx.b
    i = b.zext(i, INT64) if i.type is BIT else i
    return i, b.select(b.icmp_signed("<", i, ir.Constant(INT64, 0)), b.add(i, n), i)


def check_index(ctx, op, axis, i, j, n):
    """IndexError unless 0 <= j < n: index ``i`` (as written) on ``axis`` of op's array."""
    b = ctx.b
    bad = b.or_(b.icmp_signed("<", j, ir.Constant(INT64, 0)), b.icmp_signed(">=", j, n))
    name, where = array_label(op, op.operands[0])
    ctx.raise_at(bad, lambda err: IndexError(f"index {err[0]} is out of bounds for axis {axis} of {name} "
                                             f"with size {err[1]}{where}"), [i, n])


def array_label(op, arr_value):
    """How an IndexError names the array: the user's array, also for the adjoint array of
    gradient code (reverse.py records it), and the source line."""
    name = op.attrs.get("array") or arr_value.name or "array"
    return f"'{name}'", f" ({op.loc})" if op.loc is not None else ""


def core_mismatch(ctx, k_a, k_b):
    """``a @ b`` with a's last axis ``k_a`` and b's first ``k_b`` of different sizes."""
    ctx.raise_at(ctx.b.icmp_signed("!=", k_a, k_b),
                 lambda err: ValueError(MATMUL_MESSAGE.format(err[1], err[0])), [k_a, k_b])


def new_array(ctx, t, sizes, fill, written=False):
    """A C-ordered array of ``sizes`` (``fill``; zeros for None, but uninitialised where the
    caller says it writes every element: ``written``), recorded in the arena so that Python
    frees it after the call. (Zeroing memory just to overwrite it cost a quarter of a taped
    gradient's time: the zeros go to fresh memory, one more pass over it.)"""
    b = ctx.b
    size = ELEMENT_SIZE[t.dtype]
    total, too_big = ir.Constant(INT64, 1), ir.Constant(BIT, 0)
    for n in sizes:
        ctx.guard(b.icmp_signed("<", n, ir.Constant(INT64, 0)), NEGATIVE_SIZE)
        times = b.smul_with_overflow(total, n)
        total, too_big = b.extract_value(times, 0), b.or_(too_big, b.extract_value(times, 1))
    data, _ = allocate(ctx, total, size, zeroed=not written, too_big=too_big)
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
        each_index(ctx, [total], lambda idx: b.store(value, b.gep(flat, idx)))
    return arr
