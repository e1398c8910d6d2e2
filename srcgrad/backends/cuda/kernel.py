"""The kernel of ``vectorize(fun, target="cuda")``: the element function (an IR function of
numbers, lowered for the CUDA target) called once per element of the broadcast shape, in a
grid-stride loop with 64-bit indices.

    void srcgrad_kernel(i64* errors, T0* out0, ..., (T* x | x) per argument,
                        i64 shape[rank]..., i64 strides[rank] per array argument..., i64 n, i32 flat)

Arrays come as data pointers (``noalias``: each output is its own) and, per axis of the
broadcast shape, their element strides (0 along an axis where they are broadcast); numbers
come by value. ``flat`` says that every array argument is C-contiguous with the broadcast
shape (the common case): element ``i`` is then at ``i`` in each, with no index arithmetic.
Float32 arrays are read into doubles and results written back rounded, as on the CPU. A
failing element (an integer division by zero, say) leaves its status in ``errors[0]`` (the
first one to fail wins) and its numbers in ``errors[1:]``, for the host to raise as the CPU
would; the other elements still run.

Example:
    module, name, layout, errors = kernel_module(element_ir, [ArrayType(F64, 1), F64], cuda_target("sm_90"))
"""
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, I64
from ...ir.vectorize import output_dtype
from ..llvm.error_codes import ERR_SLOTS
from ..llvm.lowering import Lowering
from ..llvm.types import BYTE, DOUBLE, INT32, INT64, PTR, ltype

ELEMENT = "srcgrad_element"      # PTX names have no dots
KERNEL = "srcgrad_kernel"
_MEMORY = {F64: DOUBLE, F32: ir.FloatType(), I64: INT64, BOOL: BYTE}


class Layout:
    """What the host passes: ``rank``, each argument's kind ("array" or "number"), the
    results' dtypes (IR dtypes of the output arrays)."""

    def __init__(self, types, out_dtypes):
        self.types = list(types)
        self.kinds = ["array" if t.is_array else "number" for t in types]
        self.rank = max((t.ndim for t in types if t.is_array), default=0)
        self.out_dtypes = list(out_dtypes)


def kernel_module(element, types, target, boundscheck=True):
    """(the llvmlite module holding the kernel for arguments of ``types``, the kernel's name,
    its Layout, the element function's error sites). ``element`` is the IR function of numbers,
    already typed for the elements. ``target``: a CUDA target (cuda_target(arch)), or the CPU
    target, for which the same kernel is an ordinary function taking its thread's first index
    and the grid's stride as two more arguments (the tests run it as the GPU would)."""
    module = ir.Module(name=KERNEL)
    module.triple = target.triple()
    module.data_layout = str(target.machine().target_data)
    low = Lowering(element, module, target, boundscheck)
    inner = low.build(ELEMENT)
    inner.linkage = "internal"
    inner.attributes.add("alwaysinline")
    layout = Layout(types, [output_dtype(t, types, element) for t in element.result_types])
    _kernel(module, inner, element, layout, on_gpu="thread_registers" in target.supports)
    return module, KERNEL, layout, list(low.errors)


def _sreg(b, module, name):
    f = module.globals.get(name) or ir.Function(module, ir.FunctionType(INT32, []), name=name)
    return b.zext(b.call(f, []), INT64)


def _kernel(module, inner, element, layout, on_gpu):
    """The kernel (module docstring): the grid-stride loop over ``n`` elements, each one
    calling ``inner`` on its numbers and storing its results (or recording its failure)."""
    fn = _kernel_function(module, layout, on_gpu)
    errors, outs, given, shape, strides, n, flat, thread = _kernel_arguments(fn, layout)
    entry, head, body, done = (fn.append_basic_block(s) for s in ("entry", "head", "body", "done"))
    b = ir.IRBuilder(entry)
    # the element function's out-slots and its arena, error and count cells, once per thread
    slots = [b.alloca(BYTE if t is BOOL else ltype(t)) for t in element.result_types]
    arena = b.alloca(PTR)
    b.store(ir.Constant(PTR, None), arena)
    count = b.alloca(ir.ArrayType(INT64, 2))
    b.store(ir.Constant(ir.ArrayType(INT64, 2), [0, 0]), count)
    err = b.alloca(ir.ArrayType(INT64, ERR_SLOTS))
    start, step = _thread_range(b, module) if on_gpu else thread
    is_flat = b.icmp_unsigned("!=", flat, ir.Constant(INT32, 0))
    b.branch(head)

    b.position_at_end(head)
    i = b.phi(INT64, name="i")
    i.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", i, n), body, done)

    b.position_at_end(body)
    offsets = _offsets(b, i, is_flat, shape, strides)
    values = []
    for k, (t, x) in enumerate(zip(layout.types, given)):
        if not t.is_array:
            values.append(x)
            continue
        v = b.load(b.gep(x, [offsets[k]]))
        values.append(b.fpext(v, DOUBLE) if t.dtype is F32 else v)
    zero64 = ir.Constant(INT64, 0)
    status = b.call(inner, values + slots + [arena, b.gep(count, [zero64, zero64]), b.gep(err, [zero64, zero64]),
                                              ir.Constant(PTR.as_pointer(), None)])
    failed = b.icmp_unsigned("!=", status, ir.Constant(INT32, 0))
    with b.if_else(failed, likely=False) as (then, otherwise):
        with then:
            _record_failure(b, errors, b.sext(status, INT64), err)
        with otherwise:
            for out, slot, dtype in zip(outs, slots, layout.out_dtypes):
                v = b.load(slot)
                b.store(b.fptrunc(v, _MEMORY[F32]) if dtype is F32 else v, b.gep(out, [i]))
    i.add_incoming(b.add(i, step), b.block)
    b.branch(head)

    b.position_at_end(done)
    b.ret_void()


def _kernel_function(module, layout, on_gpu):
    """The kernel's declaration, with the signature of the module docstring (on the CPU, two
    more arguments: this thread's first index and the grid's stride)."""
    params = [INT64.as_pointer()] + [_MEMORY[d].as_pointer() for d in layout.out_dtypes]
    for t in layout.types:
        params.append(_MEMORY[t.dtype].as_pointer() if t.is_array else (BYTE if t is BOOL else ltype(t)))
    arrays = sum(t.is_array for t in layout.types)
    params += [INT64] * (layout.rank * (1 + arrays)) + [INT64, INT32] + ([] if on_gpu else [INT64, INT64])
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name=KERNEL)
    if on_gpu:
        fn.calling_convention = "ptx_kernel"
    return fn


def _kernel_arguments(fn, layout):
    """The kernel's arguments by role: (errors, outputs, the given arguments, the broadcast
    shape, {array argument: its strides}, n, flat, [first index, stride] or [] on a GPU).
    The outputs and array arguments are ``noalias``: each output is its own array."""
    arrays = [k for k, t in enumerate(layout.types) if t.is_array]
    args = list(fn.args)
    errors, rest = args[0], args[1:]
    outs, rest = rest[:len(layout.out_dtypes)], rest[len(layout.out_dtypes):]
    given, rest = rest[:len(layout.types)], rest[len(layout.types):]
    for a in outs + [given[k] for k in arrays]:
        a.add_attribute("noalias")
    shape, rest = rest[:layout.rank], rest[layout.rank:]
    strides = {k: rest[j * layout.rank:(j + 1) * layout.rank] for j, k in enumerate(arrays)}
    n, flat, *thread = rest[len(arrays) * layout.rank:]
    return errors, outs, given, shape, strides, n, flat, thread


def _thread_range(b, module):
    """(this thread's first element, the grid's stride), in 64 bits:
    blockIdx.x * blockDim.x + threadIdx.x, and gridDim.x * blockDim.x."""
    start = b.add(b.mul(_sreg(b, module, "llvm.nvvm.read.ptx.sreg.ctaid.x"),
                        _sreg(b, module, "llvm.nvvm.read.ptx.sreg.ntid.x")),
                  _sreg(b, module, "llvm.nvvm.read.ptx.sreg.tid.x"))
    step = b.mul(_sreg(b, module, "llvm.nvvm.read.ptx.sreg.nctaid.x"),
                 _sreg(b, module, "llvm.nvvm.read.ptx.sreg.ntid.x"))
    return start, step


def _offsets(b, i, is_flat, shape, strides):
    """{argument: the offset of element ``i`` in it}: ``i`` itself where ``flat``, else
    Σ coordinate × stride over the axes of the broadcast shape. A branch, not a select: the
    flat path must not pay for the divisions (slow 64-bit ones on a GPU)."""
    if not strides:
        return {}
    fn = b.function
    before = b.block
    strided, join = fn.append_basic_block("strided"), fn.append_basic_block("indexed")
    b.cbranch(is_flat, join, strided)
    b.position_at_end(strided)
    general = {k: ir.Constant(INT64, 0) for k in strides}
    rest = i
    for axis in reversed(range(len(shape))):
        coordinate = b.urem(rest, shape[axis])
        rest = b.udiv(rest, shape[axis])
        for k in strides:
            general[k] = b.add(general[k], b.mul(coordinate, strides[k][axis]))
    b.branch(join)
    b.position_at_end(join)
    offsets = {}
    for k in strides:
        phi = b.phi(INT64)
        phi.add_incoming(i, before)
        phi.add_incoming(general[k], strided)
        offsets[k] = phi
    return offsets


def _record_failure(b, errors, status, err):
    """errors[0] = status unless another element failed first; then this one's numbers."""
    old = b.extract_value(b.cmpxchg(errors, ir.Constant(INT64, 0), status, "monotonic", "monotonic"), 1)
    with b.if_then(old):
        for s in range(ERR_SLOTS):
            slot = b.gep(err, [ir.Constant(INT64, 0), ir.Constant(INT64, s)])
            b.store(b.load(slot), b.gep(errors, [ir.Constant(INT64, 1 + s)]))

