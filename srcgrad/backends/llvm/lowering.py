"""The llvm backend: IR → LLVM IR (llvmlite) → native code, JIT-compiled with LLVM's O3
pipeline for the host CPU.

It handles every primitive of the IR: f64/i64/bool values, arithmetic with Python's
semantics, math functions, `if`/`for`/`while`, asserts, the tapes of reverse mode, and arrays
(marshal.py): they arrive as (data pointer, shape, strides), so any numpy array,
non-contiguous included, is used without a copy; element reads and writes are bounds-checked
(IndexError naming the array, the index and the line; hoisted_checks.py checks a loop's
accesses once where it can); whole-array operations are loop nests (fusion.py fuses
element-wise chains); new arrays are allocated natively into the call's arena and handed to
numpy on return (loop_memory.py frees what loops no longer need); ``custom_vjp`` functions
are called back in Python (callbacks.py).

The compiled function is ``i32 f(args..., T* out0, T* out1, ..., arena, count, error, callbacks)``:
it writes its results through the pointers and returns 0, or an error code that the Python
entry stub turns into the exception the python backend would raise.

Example:
    >>> run, llvm_ir = compile_function(ir_function)
    >>> run(1.0, 2.0)
"""
import ctypes
import ctypes.util
import hashlib
import math
import struct

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ...errors import NEGATIVE_INT_POWER
from ...ir.memory import Buffers
from ...ir.primitives import PRIMITIVES
from ...ir.types import BOOL, F32, F64, I64, ArrayType, TapeType
from ..callbacks import CallState, make_bridge
from .fusion import lazy_ops, lazy_positions
from .checks import checkable_accesses
from .lazy import Lazy, LazyArrays
from .loop_memory import frees_each_iteration
from ..marshal import (
    arena_slots,
    array_struct,
    ctype_of,
    element_strided,
    libc_free,
    result_value,
)

_F64, _I64, _I1, _I8, _I32 = ir.DoubleType(), ir.IntType(64), ir.IntType(1), ir.IntType(8), ir.IntType(32)
_PTR = ir.PointerType(_I8)
# one status code per condition (_ERRORS says which exception each raises); conditions whose
# message depends on the site (an index, shapes, an assert) take codes from _SITE up
(OK, ZERO_DIVISION, INT_MODULO, INT_OVERFLOW, RANGE_STEP, ARANGE_STEP, FLOAT_ARANGE_STEP, SLICE_STEP, EMPTY_MAX,
 EMPTY_MIN, NEGATIVE_SIZE, MEMORY, CALLBACK) = range(13)
_SITE = 100
_ERR_SLOTS = 64        # i64 numbers a failing call leaves for its message (an index and a size, shapes)

_INTRINSICS = {"sin": "llvm.sin", "cos": "llvm.cos", "exp": "llvm.exp", "log": "llvm.log", "sqrt": "llvm.sqrt",
               "log2": "llvm.log2", "log10": "llvm.log10"}
_LIBM = {"tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
         "tanh": "tanh", "expm1": "expm1", "log1p": "log1p", "erf": "erf", "atan2": "atan2", "hypot": "hypot"}
_INT_CHECKED = {"add", "sub", "mul", "neg", "pow", "abs"}
_FCMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_initialized = []


def _init():
    """A new target machine for the host CPU (each JIT engine takes ownership of its own)."""
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libm = ctypes.util.find_library("m")
        if libm:
            llvm.load_library_permanently(libm)
        _initialized.append(llvm.get_host_cpu_features().flatten())
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=_initialized[0], opt=3, jit=True)


def _ltype(t):
    if t is F64:
        return _F64
    if t is I64:
        return _I64
    if t is BOOL:
        return _I1
    if isinstance(t, TapeType):
        return ir.PointerType(ir.LiteralStructType([_ltype(i) for i in t.items]))
    if isinstance(t, ArrayType):
        n = ir.ArrayType(_I64, t.ndim)
        return ir.LiteralStructType([_PTR, n, n])      # data, shape, strides (in elements)
    raise NotImplementedError(f"srcgrad: the llvm backend has no type for {t}")


def _elem(t):
    """The LLVM type of an array's elements (numpy's bool is one byte)."""
    return {F64: _F64, F32: ir.FloatType(), I64: _I64, BOOL: _I8}[t.dtype]


_ELEMENT_SIZE = {F64: 8, F32: 4, I64: 8, BOOL: 1}
_ELEMENTWISE = {"add", "sub", "mul", "div", "floordiv", "mod", "neg", "abs", "pow", "min", "max", "floor", "ceil", "round",
                "lt", "le", "gt", "ge", "eq", "ne", "not", "and", "or", "select", "to_f64", "to_i64", "to_bool",
                *_INTRINSICS, *_LIBM}
_WHOLE = {"sum", "transpose", "slice", "setslice", "slice_add", "matmul", "outer", "sum_to", "broadcast_like",
          "prod", "amax", "amin", "reduce_grad", "arange"}
_ARRAY_OPS = {"index", "setitem", "index_add", "shape", "size", "zeros_like", "full", "copy", "yield", "return",
              "tape_put", "tape_get", "if", "for", "while", "const", "call_custom", "call_custom_vjp"} | _ELEMENTWISE | _WHOLE


class _Lowering(LazyArrays):
    def __init__(self, fn, module, boundscheck=True):
        self.fn, self.module = fn, module
        self.boundscheck = boundscheck
        self.values = {}
        self.trusted = set()         # accesses whose bounds were checked before their loop
        self.lazy = lazy_ops(fn)      # array ops computed inside their consumer's loop (fusion.py)
        self.memo = {}                # lazy elements computed in the current loop iteration
        self.strict = None            # lazy sum_to parts stored as arrays (llvm_lazy.py)
        self.errors = []             # per site: numbers -> the exception to raise (status _SITE + k)
        self.callbacks = []          # call_custom(_vjp) ops, in the order of the callback table
        self.growing = {}      # growing tape value -> (capacity slot, pointer slot)

    # ------------------------------------------------------------------ declarations
    def declare(self, name, ret, args):
        f = self.module.globals.get(name)
        if f is None:
            f = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return f

    def build(self):
        fn = self.fn
        params = [ir.PointerType(_ltype(p.type)) if p.type.is_array else (_ltype(p.type) if p.type is not BOOL
                                                                          else _I8) for p in fn.params]
        outs = [ir.PointerType(_ltype(t) if t is not BOOL else _I8) for t in fn.result_types]
        # the arena (a growing array of every allocation, for Python to free), its count and
        # capacity, error details, and the table of callbacks into Python (callbacks.py)
        extra = [ir.PointerType(_PTR), ir.PointerType(_I64), ir.PointerType(_I64), ir.PointerType(_PTR)]
        self.func = ir.Function(self.module, ir.FunctionType(_I32, params + outs + extra), name=symbol_name(fn))
        entry = self.func.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        self.exit_block = self.func.append_basic_block("exit")
        self.allocas_block = entry
        self.status = self.b.alloca(_I32, name="status")
        self.b.store(ir.Constant(_I32, OK), self.status)
        for p, arg in zip(fn.params, self.func.args[:len(fn.params)]):
            if p.type.is_array:
                self.values[p] = self.b.load(arg)
            else:
                self.values[p] = self.b.trunc(arg, _I1) if p.type is BOOL else arg
        n_out = len(fn.result_types)
        self.outs = self.func.args[len(fn.params):len(fn.params) + n_out]
        self.arena, self.arena_count, self.errinfo, self.callback_table = self.func.args[len(fn.params) + n_out:]
        self.block(fn.body)
        eb = ir.IRBuilder(self.exit_block)
        eb.ret(eb.load(self.status))
        return self.func

    # ------------------------------------------------------------------ blocks
    def block(self, block, on_yield=None):
        for op in block.ops:
            if op.prim == "yield":
                return [self.v(x) for x in op.operands]
            if op.prim == "return":
                for v, ptr in zip(op.operands, self.outs):
                    val = self.v(v)
                    self.b.store(self.b.zext(val, _I8) if v.type is BOOL else val, ptr)
                self.free_all()
                self.b.branch(self.exit_block)
                return None
            self.op(op)
        return None

    def v(self, value):
        return self.values[value]

    def fail(self, code, message=None):
        """Branch to the exit with an error code when the condition (set up by the caller) holds."""
        self.b.store(ir.Constant(_I32, code), self.status)
        self.b.branch(self.exit_block)

    def guard(self, cond, code):
        bad = self.func.append_basic_block("error")
        good = self.func.append_basic_block("ok")
        self.b.cbranch(cond, bad, good)
        self.b.position_at_end(bad)
        self.fail(code)
        self.b.position_at_end(good)

    def raise_at(self, cond, make, numbers=()):
        """Leave with the exception ``make(numbers)`` where ``cond`` holds at run time; the i64
        ``numbers`` (an index, shapes) are kept for its message."""
        self.errors.append((make, len(numbers)))
        bad = self.func.append_basic_block("error")
        good = self.func.append_basic_block("ok")
        self.b.cbranch(cond, bad, good)
        self.b.position_at_end(bad)
        for k, n in enumerate(numbers):
            self.b.store(self.b.zext(n, _I64) if n.type is _I1 else n, self.b.gep(self.errinfo, [ir.Constant(_I64, k)]))
        self.fail(_SITE + len(self.errors) - 1)
        self.b.position_at_end(good)

    def array_label(self, op, arr_value):
        """How an IndexError names the array: the user's array, also for the adjoint array of
        gradient code (reverse.py records it), and the source line."""
        name = op.attrs.get("array") or arr_value.name or "array"
        return f"'{name}'", f" ({op.loc})" if op.loc is not None else ""

    # ------------------------------------------------------------------ ops
    def op(self, op):
        p = op.prim
        b = self.b
        ins = [self.v(x) for x in op.operands] if p not in ("for", "while", "if") else None
        if ins and any(isinstance(v, Lazy) for v in ins):
            keep = lazy_positions(op) | ({PRIMITIVES[p].shape_operand} - {None})
            ins = [v if k in keep else self.stored(x.type, v) for k, (x, v) in enumerate(zip(op.operands, ins))]
        if p not in _ARRAY_OPS and (any(x.type.is_array for x in op.operands) or
                                    any(r.type.is_array for r in op.results)):
            raise NotImplementedError(f"srcgrad: the llvm backend does not handle the whole-array operation "
                                      f"'{p}' yet; use backend='python' (element-wise array code works)")
        if p in ("index", "setitem", "index_add", "shape", "size", "zeros_like", "full", "copy") or p in _WHOLE:
            self.array_op(op, ins)
            return
        if p == "const":
            t = op.results[0].type
            value = op.attrs["value"]
            if hasattr(value, "shape"):
                self.values[op.results[0]] = self.global_array(t, value)
                return
            out = ir.Constant(_ltype(t), int(value) if t is not F64 else float(value))
        elif p in _ELEMENTWISE and op.results and op.results[0].type.is_array:
            self.values[op.results[0]] = self.elementwise(op, ins)
            return
        elif p in _INT_CHECKED and op.results[0].type is I64:
            out = self.checked_int(op, ins)
        elif p in _ELEMENTWISE:
            out = self.scalar(p, [x.type for x in op.operands], op.results[0].type, ins)
        elif p == "assert":
            message = op.attrs["message"]
            self.raise_at(b.not_(ins[0]), lambda err: AssertionError(message))
            return
        elif p == "range_len":
            out = self.range_len(*ins)
        elif p == "tape_new":
            out = self.tape_new(op, ins)
        elif p == "tape_put":
            self.tape_put(op, ins)
            return
        elif p == "tape_get":
            tape, k = ins
            slot = b.gep(self.tape_pointer(op.operands[0]), [k])
            item = b.load(slot)
            for j, r in enumerate(op.results):
                self.values[r] = b.extract_value(item, j)
            return
        elif p == "if":
            self.lower_if(op)
            return
        elif p == "for":
            self.lower_for(op)
            return
        elif p == "while":
            self.lower_while(op)
            return
        elif p in ("call_custom", "call_custom_vjp"):
            self.call_python(op, ins)
            return
        else:
            raise NotImplementedError(f"srcgrad: the llvm backend has no rule for primitive '{p}' yet; "
                                      "use backend='python'")
        self.values[op.results[0]] = out

    def scalar(self, p, in_types, out_type, ins, elementwise=False):
        """One scalar primitive on LLVM values, or with ``elementwise`` the element step of a
        whole-array operation (numpy's semantics where they differ from Python's)."""
        b = self.b
        if p in ("add", "sub", "mul"):
            out = self.arith(p, out_type, ins)
        elif p == "div":
            out = b.fdiv(*ins)      # IEEE: x / 0.0 is inf or nan (the python backend raises; see docs)
        elif p in ("floordiv", "mod"):
            out = self.floordiv_mod(p, out_type, ins)
        elif p == "neg":
            out = b.fneg(ins[0]) if out_type is F64 else b.neg(ins[0])
        elif p == "abs":
            out = self.call_intrinsic("llvm.fabs", ins) if out_type is F64 else \
                b.select(b.icmp_signed("<", ins[0], ir.Constant(_I64, 0)), b.neg(ins[0]), ins[0])
        elif p == "pow":
            if out_type is I64:          # element-wise on int arrays: wraps around as numpy's int64 does
                self.raise_at(b.icmp_signed("<", ins[1], ir.Constant(_I64, 0)),
                              lambda err: ValueError("Integers to negative integer powers are not allowed."))
                out = b.extract_value(b.call(self.ipow(), ins), 0)
            else:
                out = self.call_intrinsic("llvm.pow", ins)
        elif p in ("min", "max"):
            a, c = ins
            if out_type is F64 and elementwise:
                # np.minimum/np.maximum: a NaN on either side wins; ties (-0.0, 0.0) give the second
                keep = b.or_(b.fcmp_ordered("<" if p == "min" else ">", a, c), b.fcmp_unordered("uno", a, a))
                out = b.select(keep, a, c)
            else:
                if out_type is F64:
                    better = b.fcmp_ordered("<" if p == "min" else ">", c, a)
                else:
                    better = b.icmp_signed("<" if p == "min" else ">", c, a)
                out = b.select(better, c, a)      # Python: the first argument unless the second is better
        elif p in _INTRINSICS:
            out = self.call_intrinsic(_INTRINSICS[p], ins)
        elif p in _LIBM:
            f = self.declare(_LIBM[p], _F64, [_F64] * len(ins))
            out = b.call(f, ins)
        elif p in ("floor", "ceil", "round"):
            # round: Python rounds halves to even (round(2.5) is 2), as llvm.roundeven
            out = self.float_to_int(self.call_intrinsic("llvm.roundeven" if p == "round" else "llvm." + p, ins))
        elif p in _FCMP:
            a, c = ins
            t = in_types[0]
            if t is F64:
                out = b.fcmp_unordered("!=", a, c) if p == "ne" else b.fcmp_ordered(_FCMP[p], a, c)
            elif t is BOOL:         # False < True: i1 read unsigned (signed, True is -1)
                out = b.icmp_unsigned(_FCMP[p], a, c)
            else:
                out = b.icmp_signed(_FCMP[p], a, c)
        elif p == "not":
            out = b.not_(ins[0])
        elif p == "and":
            out = b.and_(*ins)
        elif p == "or":
            out = b.or_(*ins)
        elif p == "select":
            out = b.select(*ins)
        elif p == "to_f64":
            out = b.uitofp(ins[0], _F64) if in_types[0] is BOOL else b.sitofp(ins[0], _F64)
        elif p == "to_i64":
            out = self.float_to_int(ins[0]) if in_types[0] is F64 else b.zext(ins[0], _I64)
        elif p == "to_bool":
            x = ins[0]
            out = b.fcmp_unordered("!=", x, ir.Constant(_F64, 0.0)) if in_types[0] is F64 else \
                b.icmp_signed("!=", x, ir.Constant(_I64, 0))
        else:
            return None
        return out

    # ------------------------------------------------------------------ arrays
    def array_op(self, op, ins):
        b = self.b
        p = op.prim
        if p == "shape":
            self.values[op.results[0]] = b.extract_value(b.extract_value(ins[0], 1), op.attrs["axis"])
        elif p == "size":
            self.values[op.results[0]] = self.product(self.shape_values(ins[0], op.operands[0].type.ndim))
        elif p == "index":
            arr = op.operands[0]
            ptr = self.element_pointer(op, arr, ins[0], ins[1:])
            val = b.load(ptr)
            if arr.type.dtype is F32:
                val = b.fpext(val, _F64)
            elif arr.type.dtype is BOOL:
                val = b.trunc(val, _I1)
            self.values[op.results[0]] = val
        elif p in ("setitem", "index_add"):
            arr = op.operands[0]
            ptr = self.element_pointer(op, arr, ins[0], ins[2:])
            val = ins[1]
            if p == "index_add":
                old = b.load(ptr)
                val = b.fadd(b.fpext(old, _F64) if arr.type.dtype is F32 else old, val)
            if arr.type.dtype is F32:
                val = b.fptrunc(val, ir.FloatType())
            elif arr.type.dtype is BOOL:
                val = b.zext(val, _I8)
            elif arr.type.dtype is I64 and val.type is _F64:
                val = b.fptosi(val, _I64)
            b.store(val, ptr)
            self.values[op.results[0]] = ins[0]
        elif p == "zeros_like":
            t = op.operands[0].type
            self.values[op.results[0]] = self.new_array(t, self.shape_values(ins[0], t.ndim), 0.0)
        elif p == "full":
            t = op.results[0].type
            self.values[op.results[0]] = self.new_array(t, ins, op.attrs["value"])
        elif p == "sum":
            self.values[op.results[0]] = self.reduce_sum(op, op.operands[0].type, ins[0])
        elif p in ("prod", "amax", "amin"):
            self.values[op.results[0]] = self.reduce(op, op.operands[0].type, ins[0])
        elif p == "reduce_grad":
            self.values[op.results[0]] = self.reduce_grad(op, ins)
        elif p == "arange":
            out_t = op.results[0].type
            if out_t.dtype is F64:
                self.values[op.results[0]] = self.float_arange(op, ins)
                return
            start, stop, step = ins
            self.guard(b.icmp_signed("==", step, ir.Constant(_I64, 0)), ARANGE_STEP)
            n = self.range_len(start, stop, step)
            result = self.new_array(out_t, [n], None)
            self.each_index([n], lambda idx: self.store_element(out_t, result, idx,
                                                                b.add(start, b.mul(idx[0], step))))
            self.values[op.results[0]] = result
        elif p == "transpose":
            t = op.operands[0].type
            shape = self.shape_values(ins[0], t.ndim)
            sd = b.extract_value(ins[0], 2)
            strides = [b.extract_value(sd, k) for k in range(t.ndim)]
            self.values[op.results[0]] = self.view(ins[0], b.extract_value(ins[0], 0), shape[::-1], strides[::-1],
                                                   t.ndim)
        elif p == "slice":
            self.values[op.results[0]] = self.slice_view(op, op.operands[0].type, ins[0], ins[1:])
        elif p in ("setslice", "slice_add"):
            t = op.operands[0].type
            part = self.slice_view(op, t, ins[0], ins[2:])
            pt = ArrayType(t.dtype, op.operands[0].type.ndim - sum(1 for s in op.attrs["spec"] if s[0] == "i"))
            vt, v = op.operands[1].type, ins[1]
            shape = self.shape_values(part, pt.ndim)
            if vt.is_array:
                self.assignable(pt, part, vt, v)
                v = self.broadcast_view(vt, v)

            def step(idx):
                val = self.load_broadcast(vt, v, idx) if vt.is_array else v
                if val.type is _I1:
                    val = b.uitofp(val, _F64)
                elif val.type is _I64 and pt.dtype is not I64:
                    val = b.sitofp(val, _F64)
                if p == "slice_add":
                    val = b.fadd(self.load_element(pt, part, idx), val)
                self.store_element(pt, part, idx, val)
            self.each_index(shape, step)
            self.values[op.results[0]] = ins[0]
        elif p == "matmul":
            self.values[op.results[0]] = self.matmul(op, ins)
        elif p == "outer":
            ta, tb = op.operands[0].type, op.operands[1].type
            shape = self.shape_values(ins[0], 1) + self.shape_values(ins[1], 1)
            out_t = op.results[0].type
            result = self.new_array(out_t, shape, None)
            self.each_index(shape, lambda idx: self.store_element(out_t, result, idx, b.fmul(
                self.load_element(ta, ins[0], idx[:1]), self.load_element(tb, ins[1], idx[1:]))))
            self.values[op.results[0]] = result
        elif p == "sum_to":
            gt, lt = op.operands[0].type, op.operands[1].type
            if not gt.is_array:
                raise NotImplementedError("srcgrad: llvm sum_to of a scalar")
            if op in self.lazy:
                self.values[op.results[0]] = self.lazy_sum_to(op, ins)
                return
            g, like = ins
            out_shape = self.shape_values(like, lt.ndim)
            result = self.new_array(lt, out_shape, 0.0)
            target = self.broadcast_view(lt, result)
            lead = gt.ndim - lt.ndim

            def step(idx):
                ptr = self.raw_pointer(lt, target, idx[lead:])
                b.store(b.fadd(b.load(ptr), self.as_f64(gt, self.element(gt, g, idx))), ptr)
            self.evaluating([g], lambda: self.each_element(self.shape_values(g, gt.ndim), step))
            self.values[op.results[0]] = result
        elif p == "broadcast_like" and op in self.lazy:
            self.values[op.results[0]] = self.lazy_fill(op, ins)
        elif p == "broadcast_like":
            gt, lt = op.operands[0].type, op.operands[1].type
            g, like = ins
            shape = self.shape_values(like, lt.ndim)
            result = self.new_array(ArrayType(F64, lt.ndim), shape, None)
            axis = op.attrs.get("axis")
            if gt.is_array and axis is None:
                g = self.broadcast_view(gt, g)

            def step(idx):
                if not gt.is_array:
                    val = g
                elif axis is not None:
                    val = self.load_element(gt, g, [i for k, i in enumerate(idx) if k != axis])
                else:
                    val = self.load_broadcast(gt, g, idx)
                self.store_element(ArrayType(F64, lt.ndim), result, idx, val)
            self.each_index(shape, step)
            self.values[op.results[0]] = result
        elif p == "copy":
            t = op.operands[0].type
            src = ins[0]
            dst = self.new_array(t, self.shape_values(src, t.ndim), None)

            def move(idx):
                value = b.load(self.raw_pointer(op.operands[0].type, src, idx))
                b.store(value, self.raw_pointer(t, dst, idx))
            self.each_index(self.shape_values(src, t.ndim), move)
            self.values[op.results[0]] = dst

    def elementwise(self, op, ins):
        """A scalar primitive over arrays with numpy's broadcasting: a loop nest over the result,
        or, for a lazy op (fusion.py), a value its consumer computes element by element."""
        out_t = op.results[0].type
        shape = self.broadcast_shape(out_t.ndim, [(x.type, v) for x, v in zip(op.operands, ins)])
        fused = self.lazy_elementwise(op, ins, shape)
        if op in self.lazy:
            return fused
        result = self.new_array(out_t, shape, None)
        self.evaluating([fused], lambda: self.each_element(shape, lambda idx: self.store_element(
            out_t, result, idx, self.element(out_t, fused, idx))))
        return result

    def broadcast_shape(self, ndim, operands):
        b = self.b
        shape = [ir.Constant(_I64, 1)] * ndim
        one = ir.Constant(_I64, 1)
        ok = ir.Constant(_I1, 1)
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
        if len(dims) > _ERR_SLOTS:
            ndims, dims = None, []

        def make(err):
            if ndims is None:
                return ValueError("operands could not be broadcast together")
            shapes, it = [], iter(err)
            for nd in ndims:
                shapes.append(_shape_text([next(it) for _ in range(nd)]))
            return ValueError(f"operands could not be broadcast together with shapes {' '.join(shapes)} ")
        if sum(t.is_array for t, _ in operands) > 1:
            self.raise_at(b.not_(ok), make, dims)
        return shape

    def assignable(self, part_t, part, vt, v):
        """numpy's check of ``x[a:b] = v``: each axis of ``v`` is 1 or the slice's."""
        b = self.b
        one = ir.Constant(_I64, 1)
        ok = ir.Constant(_I1, 1)
        part_shape, v_shape = self.shape_values(part, part_t.ndim), self.shape_values(v, vt.ndim)
        for n, m in zip(part_shape[part_t.ndim - vt.ndim:], v_shape):
            ok = b.and_(ok, b.or_(b.icmp_signed("==", m, one), b.icmp_signed("==", m, n)))
        ok = b.and_(ok, ir.Constant(_I1, int(vt.ndim <= part_t.ndim)))

        def make(err):
            return ValueError(f"could not broadcast input array from shape {_shape_text(err[:vt.ndim])} "
                              f"into shape {_shape_text(err[vt.ndim:])}")
        self.raise_at(b.not_(ok), make, v_shape + part_shape)

    def float_arange(self, op, ins):
        """np.arange with a float among start, stop, step: ceil((stop - start) / step) values
        start + i * delta, where delta = (start + step) - start, as numpy computes them."""
        b = self.b
        start, stop, step = (b.sitofp(b.zext(v, _I64) if v.type is _I1 else v, _F64) if v.type != _F64 else v
                             for v in ins)
        self.guard(b.fcmp_ordered("==", step, ir.Constant(_F64, 0.0)), FLOAT_ARANGE_STEP)
        count = self.call_intrinsic("llvm.ceil", [b.fdiv(b.fsub(stop, start), step)])
        n = b.fptosi(b.select(b.fcmp_ordered(">", count, ir.Constant(_F64, 0.0)), count, ir.Constant(_F64, 0.0)),
                     _I64)
        delta = b.fsub(b.fadd(start, step), start)
        out_t = op.results[0].type
        result = self.new_array(out_t, [n], None)
        self.each_index([n], lambda idx: self.store_element(out_t, result, idx,
                                                             b.fadd(start, b.fmul(b.sitofp(idx[0], _F64), delta))))
        return result

    def broadcast_view(self, t, arr):
        """``arr`` with a zero stride on its size-1 axes, made once before a loop: then element
        ``idx`` of the broadcast result is at ``idx`` (right-aligned) without a test per element."""
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        st = b.extract_value(arr, 2)
        strides = [b.select(b.icmp_signed("==", n, ir.Constant(_I64, 1)), ir.Constant(_I64, 0), b.extract_value(st, k))
                   for k, n in enumerate(shape)]
        return self.view(arr, b.extract_value(arr, 0), shape, strides, t.ndim)

    def load_broadcast(self, t, view, idx):
        """The element of a ``broadcast_view`` for result index ``idx``."""
        return self.load_element(t, view, idx[len(idx) - t.ndim:])

    def load_element(self, t, arr, idx):
        val = self.b.load(self.raw_pointer(t, arr, idx))
        if t.dtype is F32:
            return self.b.fpext(val, _F64)
        if t.dtype is BOOL:
            return self.b.trunc(val, _I1)
        return val

    def store_element(self, t, arr, idx, val):
        b = self.b
        if t.dtype is F32:
            val = b.fptrunc(val, ir.FloatType())
        elif t.dtype is BOOL:
            val = b.zext(val, _I8)
        b.store(val, self.raw_pointer(t, arr, idx))

    def view(self, arr, data, shape, strides, ndim):
        st = ir.ArrayType(_I64, ndim)
        sh, sd = ir.Constant(st, ir.Undefined), ir.Constant(st, ir.Undefined)
        for k in range(ndim):
            sh = self.b.insert_value(sh, shape[k], k)
            sd = self.b.insert_value(sd, strides[k], k)
        out = ir.Constant(ir.LiteralStructType([_PTR, st, st]), ir.Undefined)
        return self.b.insert_value(self.b.insert_value(self.b.insert_value(out, data, 0), sh, 1), sd, 2)

    def slice_view(self, op, t, arr, bounds):
        """x[a:b, j, ::s] as a view: pointer offset, new shape and strides (Python's slice rules)."""
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        strides_v = b.extract_value(arr, 2)
        strides = [b.extract_value(strides_v, k) for k in range(t.ndim)]
        spec = list(op.attrs["spec"]) + [("s", False, False, False)] * (t.ndim - len(op.attrs["spec"]))
        it = iter(bounds)
        offset = ir.Constant(_I64, 0)
        new_shape, new_strides = [], []
        for k, s in enumerate(spec):
            n, st = shape[k], strides[k]
            if s[0] == "i":
                i = next(it)
                i = b.zext(i, _I64) if i.type is _I1 else i
                j = b.select(b.icmp_signed("<", i, ir.Constant(_I64, 0)), b.add(i, n), i)
                bad = b.or_(b.icmp_signed("<", j, ir.Constant(_I64, 0)), b.icmp_signed(">=", j, n))
                self.index_error(op, bad, k, i, n)
                offset = b.add(offset, b.mul(j, st))
                continue
            start, stop, step = (next(it) if has else None for has in s[1:])
            step = step if step is not None else ir.Constant(_I64, 1)
            self.guard(b.icmp_signed("==", step, ir.Constant(_I64, 0)), SLICE_STEP)
            lo, length = self.adjust_slice(start, stop, step, n)
            offset = b.add(offset, b.mul(lo, st))
            new_shape.append(length)
            new_strides.append(b.mul(st, step))
        data = b.bitcast(self.offset_pointer(t, arr, offset), _PTR)
        return self.view(arr, data, new_shape, new_strides, len(new_shape))

    def adjust_slice(self, start, stop, step, n):
        """(first index, length) of start:stop:step over n elements, as Python computes them."""
        b = self.b
        zero, one, minus = ir.Constant(_I64, 0), ir.Constant(_I64, 1), ir.Constant(_I64, -1)
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

    def reduce_sum(self, op, t, arr):
        b = self.b
        shape = self.shape_values(arr, t.ndim)
        axis = op.attrs.get("axis")
        if axis is None or t.ndim == 1:
            with b.goto_entry_block():
                acc = b.alloca(_F64)
            b.store(ir.Constant(_F64, 0.0), acc)
            self.evaluating([arr], lambda: self.each_element(shape, lambda idx: b.store(self.sum_step(
                b.load(acc), self.as_f64(t, self.element(t, arr, idx))), acc)))
            return b.load(acc)
        out_t = op.results[0].type
        result = self.new_array(out_t, [n for k, n in enumerate(shape) if k != axis], 0.0)

        def step(idx):
            sub = [i for k, i in enumerate(idx) if k != axis]
            ptr = self.raw_pointer(out_t, result, sub)
            b.store(b.fadd(b.load(ptr), self.as_f64(t, self.load_element(t, arr, idx))), ptr)
        self.each_index(shape, step)
        return result

    def global_array(self, t, value):
        """A global numpy array read at compile time: constant data in the module."""
        b = self.b
        flat = np.ascontiguousarray(value).reshape(-1)
        elem = _elem(t)
        items = [float(v) if t.dtype in (F64, F32) else int(v) for v in flat] or [0]
        data_t = ir.ArrayType(elem, len(items))
        g = ir.GlobalVariable(self.module, data_t, name=f"srcgrad.const.{len(self.module.global_values)}")
        g.global_constant = True
        g.initializer = ir.Constant(data_t, items)
        shape = [ir.Constant(_I64, n) for n in value.shape]
        strides, stride = [], 1
        for n in reversed(value.shape):
            strides.insert(0, ir.Constant(_I64, stride))
            stride *= n
        return self.view(None, b.bitcast(g, _PTR), shape, strides, t.ndim)

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
            keep = b.or_(b.fcmp_ordered(">" if kind == "amax" else "<", acc, x), b.fcmp_unordered("uno", acc, acc))
            return b.select(keep, acc, x)

        if kind != "prod":       # numpy: an error where the reduced axis (or the whole array) is empty
            reduced = self.product(shape) if axis is None else shape[axis]
            self.guard(b.icmp_signed("==", reduced, ir.Constant(_I64, 0)), EMPTY_MAX if kind == "amax" else EMPTY_MIN)
        if axis is None or t.ndim == 1:
            with b.goto_entry_block():
                acc = b.alloca(_F64)
            b.store(ir.Constant(_F64, start), acc)
            self.each_index(shape, lambda idx: b.store(combine(b.load(acc), self.as_f64(
                t, self.load_element(t, arr, idx))), acc))
            return b.load(acc)
        out_t = op.results[0].type
        result = self.new_array(out_t, [n for k, n in enumerate(shape) if k != axis], start)

        def step(idx):
            ptr = self.raw_pointer(out_t, result, [i for k, i in enumerate(idx) if k != axis])
            b.store(combine(b.load(ptr), self.as_f64(t, self.load_element(t, arr, idx))), ptr)
        self.each_index(shape, step)
        return result

    def reduce_grad(self, op, ins):
        """The gradient of prod (exact at zeros) or max/min (ties share it) — runtime.reduce_grad natively."""
        b = self.b
        g, x, out = ins
        gt, xt, ot = (v.type for v in op.operands)
        kind, axis = op.attrs["of"], op.attrs.get("axis")
        shape = self.shape_values(x, xt.ndim)
        rt = ArrayType(F64, xt.ndim)
        result = self.new_array(rt, shape, 0.0)

        def reduced(idx):
            return [i for k, i in enumerate(idx) if k != axis] if axis is not None else []

        def at(value_t, value, idx):
            return self.load_element(value_t, value, reduced(idx)) if value_t.is_array else value

        # per reduced position: how many elements tie with the result (max/min), or are zero and the
        # product of the non-zero ones (prod)
        aux_t = ArrayType(F64, max(xt.ndim - 1, 0)) if axis is not None and xt.ndim > 1 else None
        red_shape = [n for k, n in enumerate(shape) if k != axis] if aux_t is not None else []
        if aux_t is not None:
            count = self.new_array(aux_t, red_shape, 0.0)
            nonzero = self.new_array(aux_t, red_shape, 1.0)
        else:
            with b.goto_entry_block():
                cslot = b.alloca(_F64)
                pslot = b.alloca(_F64)
            b.store(ir.Constant(_F64, 0.0), cslot)
            b.store(ir.Constant(_F64, 1.0), pslot)

        def slots(idx):
            if aux_t is not None:
                sub = reduced(idx)
                return self.raw_pointer(aux_t, count, sub), self.raw_pointer(aux_t, nonzero, sub)
            return cslot, pslot

        def first(idx):
            xv = self.as_f64(xt, self.load_element(xt, x, idx))
            c, pz = slots(idx)
            if kind == "prod":
                zero = b.fcmp_ordered("==", xv, ir.Constant(_F64, 0.0))
                b.store(b.fadd(b.load(c), b.uitofp(zero, _F64)), c)
                b.store(b.fmul(b.load(pz), b.select(zero, ir.Constant(_F64, 1.0), xv)), pz)
            else:
                tie = b.fcmp_ordered("==", xv, at(ot, out, idx))
                b.store(b.fadd(b.load(c), b.uitofp(tie, _F64)), c)

        def second(idx):
            xv = self.as_f64(xt, self.load_element(xt, x, idx))
            c, pz = slots(idx)
            gv = at(gt, g, idx)
            if kind == "prod":
                zeros = b.load(c)
                is_zero = b.fcmp_ordered("==", xv, ir.Constant(_F64, 0.0))
                none = b.fcmp_ordered("==", zeros, ir.Constant(_F64, 0.0))
                one = b.fcmp_ordered("==", zeros, ir.Constant(_F64, 1.0))
                others = b.select(none, b.fdiv(b.load(pz), xv),
                                  b.select(b.and_(one, is_zero), b.load(pz), ir.Constant(_F64, 0.0)))
                val = b.fmul(gv, others)
            else:
                tie = b.fcmp_ordered("==", xv, at(ot, out, idx))
                # g times the tie's share, as numpy's and PyTorch's masks: a NaN g stays NaN
                val = b.fmul(gv, b.select(tie, b.fdiv(ir.Constant(_F64, 1.0), b.load(c)), ir.Constant(_F64, 0.0)))
            self.store_element(rt, result, idx, val)

        self.each_index(shape, first)
        self.each_index(shape, second)
        return result

    def sum_step(self, acc, x):
        """acc + x inside a reduction: reassociable, so LLVM may vectorise the loop."""
        out = self.b.fadd(acc, x)
        out.flags.append("reassoc")
        return out

    def as_f64(self, t, v):
        if t.dtype is I64:
            return self.b.sitofp(v, _F64)
        if t.dtype is BOOL:
            return self.b.uitofp(v, _F64)
        return v

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
        with b.goto_entry_block():
            acc = b.alloca(_F64)

        def dot(idx, a, c):
            ia, ib = idx[:ta.ndim - 1], idx[ta.ndim - 1:]
            b.store(ir.Constant(_F64, 0.0), acc)
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
            first, last = (b.select(b.icmp_signed("<", x, ir.Constant(_I64, 0)), b.neg(x), x) for x in (first, last))
            return b.icmp_signed("<=", last, first)

        if ta.ndim == 2 and tb.ndim == 1:
            self.choose(rows_contiguous(ta, a), by_dots, k_outermost)
        elif ta.ndim == 1:
            self.choose(rows_contiguous(tb, c), k_outermost, by_dots)
        else:
            self.choose(rows_contiguous(ta, a),
                        lambda: self.choose(rows_contiguous(tb, c), k_middle, by_dots), k_outermost)
        return result

    def choose(self, cond, then, otherwise):
        """Emit ``then()`` where ``cond`` holds at run time, ``otherwise()`` where it does not."""
        with self.b.if_else(cond) as (yes, no):
            with yes:
                then()
            with no:
                otherwise()

    def shape_values(self, arr, ndim):
        if isinstance(arr, Lazy):
            return list(arr.shape)
        shape = self.b.extract_value(arr, 1)
        return [self.b.extract_value(shape, k) for k in range(ndim)]

    def product(self, values):
        out = ir.Constant(_I64, 1)
        for v in values:
            out = self.b.mul(out, v)
        return out

    def raw_pointer(self, t, arr, idx):
        """The address of arr[idx] (indices already checked)."""
        b = self.b
        strides = b.extract_value(arr, 2)
        off = ir.Constant(_I64, 0)
        for k, i in enumerate(idx):
            off = b.add(off, b.mul(i, b.extract_value(strides, k)))
        return self.offset_pointer(t, arr, off)

    def offset_pointer(self, t, arr, offset):
        """arr's data pointer moved by ``offset`` elements. Strides count elements, not bytes,
        so that LLVM's loop vectoriser can specialise a loop on a unit stride (contiguous)."""
        data = self.b.bitcast(self.b.extract_value(arr, 0), ir.PointerType(_elem(t)))
        return self.b.gep(data, [offset], inbounds=True)

    def element_pointer(self, op, arr_value, arr, idx):
        """arr[idx] with Python's negative indices and a bounds check that raises IndexError."""
        b = self.b
        shape = self.shape_values(arr, arr_value.type.ndim)
        fixed = []
        for k, (i, n) in enumerate(zip(idx, shape)):
            if i.type is _I1:
                i = b.zext(i, _I64)
            j = b.select(b.icmp_signed("<", i, ir.Constant(_I64, 0)), b.add(i, n), i)
            if op in self.trusted:          # checked before the loop: 0 <= i < n
                fixed.append(i)
                continue
            if not self.boundscheck:
                fixed.append(j)
                continue
            bad = b.or_(b.icmp_signed("<", j, ir.Constant(_I64, 0)), b.icmp_signed(">=", j, n))
            self.index_error(op, bad, k, i, n)
            fixed.append(j)
        return self.raw_pointer(arr_value.type, arr, fixed)

    def index_error(self, op, bad, axis, i, n):
        """IndexError where ``bad``: index ``i`` on ``axis`` (of size ``n``) of op's array."""
        name, where = self.array_label(op, op.operands[0])
        self.raise_at(bad, lambda err: IndexError(f"index {err[0]} is out of bounds for axis {axis} of {name} "
                                                  f"with size {err[1]}{where}"), [i, n])

    def core_mismatch(self, k_a, k_b):
        """``a @ b`` with a's last axis ``k_a`` and b's first ``k_b`` of different sizes."""
        self.raise_at(self.b.icmp_signed("!=", k_a, k_b),
                      lambda err: ValueError(_MATMUL_MESSAGE.format(err[1], err[0])), [k_a, k_b])

    def new_array(self, t, sizes, fill):
        """A C-ordered array of ``sizes`` (zeros, ``fill``, or uninitialised for None), recorded in
        the arena so that Python frees it after the call."""
        b = self.b
        size = _ELEMENT_SIZE[t.dtype]
        total, too_big = ir.Constant(_I64, 1), ir.Constant(_I1, 0)
        for n in sizes:
            self.guard(b.icmp_signed("<", n, ir.Constant(_I64, 0)), NEGATIVE_SIZE)
            product = b.smul_with_overflow(total, n)
            total, too_big = b.extract_value(product, 0), b.or_(too_big, b.extract_value(product, 1))
        data, _ = self.allocate(total, size, zeroed=True, too_big=too_big)
        shape_t = ir.ArrayType(_I64, t.ndim)
        shape = ir.Constant(shape_t, ir.Undefined)
        strides = ir.Constant(shape_t, ir.Undefined)
        stride = ir.Constant(_I64, 1)
        for k in reversed(range(t.ndim)):
            strides = b.insert_value(strides, stride, k)
            stride = b.mul(stride, sizes[k])
        for k, n in enumerate(sizes):
            shape = b.insert_value(shape, n, k)
        arr = ir.Constant(_ltype(t), ir.Undefined)
        arr = b.insert_value(b.insert_value(b.insert_value(arr, data, 0), shape, 1), strides, 2)
        if fill not in (None, 0, 0.0):
            elem = _elem(t)
            value = ir.Constant(elem, float(fill) if isinstance(elem, (ir.DoubleType, ir.FloatType)) else int(fill))
            flat = b.bitcast(data, ir.PointerType(elem))
            self.each_index([total], lambda idx: b.store(value, b.gep(flat, idx)))
        return arr

    def each_index(self, shape, body):
        """Emit nested loops over all indices of ``shape`` calling ``body(indices)``."""
        if not shape:
            body([])
            return
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)

        def iteration(i, carried):
            self.each_index(shape[1:], lambda rest: body([i] + rest))
            return []
        self.counted_loop(zero, shape[0], one, [], iteration, name="each")

    def arith(self, p, t, ins):
        b = self.b
        if t is F64:
            return {"add": b.fadd, "sub": b.fsub, "mul": b.fmul}[p](*ins)
        return {"add": b.add, "sub": b.sub, "mul": b.mul}[p](*ins)

    def floordiv_mod(self, p, t, ins):
        """Python's // and %: floor toward -inf; an integer division by zero raises."""
        if t is F64:
            return self.float_floordiv_mod(p, *ins)
        b = self.b
        a, c = ins
        zero, minus_one = ir.Constant(_I64, 0), ir.Constant(_I64, -1)
        self.guard(b.icmp_signed("==", c, zero), ZERO_DIVISION if p == "floordiv" else INT_MODULO)
        minus_one_divisor = b.icmp_signed("==", c, minus_one)
        if p == "floordiv":
            # -2**63 // -1 is 2**63, beyond i64 (and sdiv traps on it)
            self.guard(b.and_(minus_one_divisor, b.icmp_signed("==", a, ir.Constant(_I64, -2**63))), INT_OVERFLOW)
        # x // -1 and x % -1 without sdiv/srem by -1, which trap on -2**63
        safe = b.select(minus_one_divisor, ir.Constant(_I64, 1), c)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, c), zero))
        if p == "floordiv":
            return b.select(minus_one_divisor, b.neg(a), b.select(adjust, b.sub(q, ir.Constant(_I64, 1)), q))
        return b.select(minus_one_divisor, zero, b.select(adjust, b.add(r, c), r))

    def float_floordiv_mod(self, p, a, c):
        """Float // and % as CPython computes them (Objects/floatobject.c, _float_div_mod): fmod,
        the sign fix, and the quotient from fmod snapped to an integer, so that the last bits
        agree (2.3 % 0.7 is 0.19999999999999996, not floor's 0.20000000000000018). numpy's
        npy_divmod is the same algorithm; a zero divisor gives numpy's (IEEE's) results:
        fmod's nan, and a / c for // (docs/compiler.md)."""
        b = self.b
        zero, one = ir.Constant(_F64, 0.0), ir.Constant(_F64, 1.0)
        copysign = self.declare("llvm.copysign.f64", _F64, [_F64, _F64])
        mod = b.frem(a, c)                                  # C's fmod: exact
        nonzero = b.fcmp_unordered("!=", mod, zero)         # C's ``if (mod)``: nan is true
        flip = b.and_(nonzero, b.xor(b.fcmp_ordered("<", c, zero), b.fcmp_ordered("<", mod, zero)))
        if p == "mod":
            fixed = b.select(flip, b.fadd(mod, c), mod)
            return b.select(nonzero, fixed, b.call(copysign, [zero, c]))
        div = b.fdiv(b.fsub(a, mod), c)
        div = b.select(flip, b.fsub(div, one), div)
        floor = self.call_intrinsic("llvm.floor", [div])
        snapped = b.select(b.fcmp_ordered(">", b.fsub(div, floor), ir.Constant(_F64, 0.5)), b.fadd(floor, one), floor)
        quotient = b.fdiv(a, c)
        out = b.select(b.fcmp_unordered("!=", div, zero), snapped, b.call(copysign, [zero, quotient]))
        return b.select(b.fcmp_ordered("==", c, zero), quotient, out)

    def checked_int(self, op, ins):
        """Scalar int +, -, *, unary - and ** : Python's ints are unbounded, compiled ones are
        64 bits, so a result beyond them raises OverflowError instead of wrapping around."""
        b = self.b
        p = op.prim
        if p == "pow":
            self.raise_at(b.icmp_signed("<", ins[1], ir.Constant(_I64, 0)), lambda err: ValueError(NEGATIVE_INT_POWER))
            pair = b.call(self.ipow(), ins)
        elif p == "abs":        # abs(-2**63) is 2**63
            a = ins[0]
            value = b.select(b.icmp_signed("<", a, ir.Constant(_I64, 0)), b.neg(a), a)
            pair = ir.Constant(ir.LiteralStructType([_I64, _I1]), ir.Undefined)
            pair = b.insert_value(b.insert_value(pair, value, 0), b.icmp_signed("==", a, ir.Constant(_I64, -2 ** 63)), 1)
        elif p == "neg":
            pair = b.ssub_with_overflow(ir.Constant(_I64, 0), ins[0])
        else:
            pair = {"add": b.sadd_with_overflow, "sub": b.ssub_with_overflow, "mul": b.smul_with_overflow}[p](*ins)
        symbol = {"add": "+", "sub": "-", "mul": "*", "neg": "unary -", "pow": "**", "abs": "abs()"}[p]
        where = f" ({op.loc})" if op.loc is not None else ""
        self.raise_at(b.extract_value(pair, 1), lambda err: OverflowError(
            f"srcgrad: integer overflow: the result of {symbol}{where} is beyond the 64-bit integers compiled "
            "code computes with (-2**63 to 2**63 - 1); Python's integers are unbounded (use floats for such numbers)"))
        return b.extract_value(pair, 0)

    def float_to_int(self, x):
        """An integral double as i64, raising where Python's int() raises (NaN, the infinities)
        and where the int would not fit in 64 bits (fptosi would give a wrong number there)."""
        b = self.b
        self.raise_at(b.fcmp_unordered("uno", x, x), lambda err: ValueError("cannot convert float NaN to integer"))
        infinite = b.fcmp_ordered("==", self.call_intrinsic("llvm.fabs", [x]), ir.Constant(_F64, math.inf))
        self.raise_at(infinite, lambda err: OverflowError("cannot convert float infinity to integer"))
        fits = b.and_(b.fcmp_ordered(">=", x, ir.Constant(_F64, -2.0 ** 63)), b.fcmp_ordered("<", x, ir.Constant(_F64, 2.0 ** 63)))
        self.raise_at(b.not_(fits), lambda err: OverflowError(
            f"srcgrad: {_as_float(err[0])!r} converted to int is beyond the 64-bit integers compiled code computes "
            "with (-2**63 to 2**63 - 1)"), [b.bitcast(x, _I64)])
        return b.fptosi(x, _I64)

    def call_intrinsic(self, name, args):
        f = self.module.declare_intrinsic(name, [a.type for a in args[:1]])
        return self.b.call(f, args)

    def ipow(self):
        """i64 ** i64 by squaring (the exponent is not negative: checked before): {the result
        wrapped to 64 bits, whether the true result is beyond them}."""
        f = self.module.globals.get("srcgrad.rt.ipow")
        if f is not None:
            return f
        pair_t = ir.LiteralStructType([_I64, _I1])
        f = ir.Function(self.module, ir.FunctionType(pair_t, [_I64, _I64]), name="srcgrad.rt.ipow")
        f.linkage = "internal"
        entry, loop, done = f.append_basic_block(), f.append_basic_block(), f.append_basic_block()
        b = ir.IRBuilder(entry)
        base, exp = f.args
        b.branch(loop)
        b.position_at_end(loop)
        acc = b.phi(_I64)
        bb = b.phi(_I64)
        ee = b.phi(_I64)
        over = b.phi(_I1)
        acc.add_incoming(ir.Constant(_I64, 1), entry)
        bb.add_incoming(base, entry)
        ee.add_incoming(exp, entry)
        over.add_incoming(ir.Constant(_I1, 0), entry)
        odd = b.trunc(ee, _I1)
        times = b.smul_with_overflow(acc, bb)
        acc2 = b.select(odd, b.extract_value(times, 0), acc)
        ee2 = b.lshr(ee, ir.Constant(_I64, 1))
        more = b.icmp_signed("!=", ee2, ir.Constant(_I64, 0))
        squared = b.smul_with_overflow(bb, bb)
        # the square overflowing matters only if it is used: when bits of the exponent remain
        over2 = b.or_(over, b.or_(b.and_(odd, b.extract_value(times, 1)), b.and_(more, b.extract_value(squared, 1))))
        acc.add_incoming(acc2, loop)
        bb.add_incoming(b.extract_value(squared, 0), loop)
        ee.add_incoming(ee2, loop)
        over.add_incoming(over2, loop)
        b.cbranch(more, loop, done)
        b.position_at_end(done)
        pair = b.insert_value(ir.Constant(pair_t, ir.Undefined), acc2, 0)
        b.ret(b.insert_value(pair, over2, 1))
        return f

    def range_len(self, start, stop, step):
        """len(range(start, stop, step)) (step != 0)."""
        b = self.b
        self.guard(b.icmp_signed("==", step, ir.Constant(_I64, 0)), RANGE_STEP)
        up = b.icmp_signed(">", step, ir.Constant(_I64, 0))
        empty = b.select(up, b.icmp_signed(">=", start, stop), b.icmp_signed("<=", start, stop))
        # the distance and the step's size as unsigned numbers: exact even across the whole i64 range
        span = b.select(up, b.sub(stop, start), b.sub(start, stop))
        mag = b.select(up, step, b.neg(step))
        partial = b.icmp_unsigned("!=", b.urem(span, mag), ir.Constant(_I64, 0))
        n = b.add(b.udiv(span, mag), b.zext(partial, _I64))
        return b.select(empty, ir.Constant(_I64, 0), n)

    # ------------------------------------------------------------------ tapes
    def item_type(self, tape_value):
        return ir.LiteralStructType([_ltype(t) for t in tape_value.type.items])

    def allocate(self, count, size, zeroed, too_big=None):
        """(pointer, arena slot) of ``count`` items of ``size`` bytes (at least one item),
        recorded in the arena so that Python frees it after the call, whichever way the call
        ends. A size that overflows or memory that cannot be had makes the call raise
        MemoryError saying how much was asked for."""
        b = self.b
        one, size = ir.Constant(_I64, 1), ir.Constant(_I64, size)
        count = b.select(b.icmp_signed(">", count, one), count, one)
        nbytes = b.smul_with_overflow(count, size)
        bad = b.extract_value(nbytes, 1) if too_big is None else b.or_(too_big, b.extract_value(nbytes, 1))
        self.memory_guard(bad, count, size)
        if zeroed:
            data = b.call(self.declare("calloc", _PTR, [_I64, _I64]), [count, size])
        else:
            data = b.call(self.declare("malloc", _PTR, [_I64]), [b.extract_value(nbytes, 0)])
        self.memory_guard(b.icmp_unsigned("==", data, ir.Constant(_PTR, None)), count, size)
        return data, self.arena_push(data)

    def memory_guard(self, cond, count, size):
        bad = self.func.append_basic_block("no.memory")
        good = self.func.append_basic_block("memory.ok")
        self.b.cbranch(cond, bad, good)
        self.b.position_at_end(bad)
        self.b.store(count, self.errinfo)
        self.b.store(size, self.b.gep(self.errinfo, [ir.Constant(_I64, 1)]))
        self.fail(MEMORY)
        self.b.position_at_end(good)

    def arenaarena_slots(self):
        return self.b.bitcast(self.b.load(self.arena), ir.PointerType(_PTR))

    def arena_push(self, data):
        """Record an allocation in the arena (grown by doubling); returns its slot."""
        b = self.b
        count = b.load(self.arena_count)
        cap_ptr = b.gep(self.arena_count, [ir.Constant(_I64, 1)])
        cap = b.load(cap_ptr)
        with b.if_then(b.icmp_signed(">=", count, cap), likely=False):
            new_cap = b.select(b.icmp_signed(">", cap, ir.Constant(_I64, 0)), b.mul(cap, ir.Constant(_I64, 2)),
                               ir.Constant(_I64, 64))
            realloc = self.declare("realloc", _PTR, [_PTR, _I64])
            grown = b.call(realloc, [b.load(self.arena), b.mul(new_cap, ir.Constant(_I64, 8))])
            self.memory_guard(b.icmp_unsigned("==", grown, ir.Constant(_PTR, None)), new_cap, ir.Constant(_I64, 8))
            b.store(grown, self.arena)
            b.store(new_cap, cap_ptr)
        b.store(data, b.gep(self.arenaarena_slots(), [count]))
        b.store(b.add(count, ir.Constant(_I64, 1)), self.arena_count)
        return count

    def release_since(self, mark, keep):
        """Free every allocation recorded since arena slot ``mark`` except those starting at a
        pointer in ``keep``, which move down (loop_memory.py says when this is sound)."""
        b = self.b
        slots = self.arenaarena_slots()
        free = self.declare("free", ir.VoidType(), [_PTR])
        null = ir.Constant(_PTR, None)

        def step(k, carried):
            (w,) = carried
            p = b.load(b.gep(slots, [k]))
            kept = ir.Constant(_I1, 0)
            for ptr in keep:
                kept = b.or_(kept, b.icmp_unsigned("==", p, ptr))
            kept = b.and_(kept, b.icmp_unsigned("!=", p, null))
            b.store(p, b.gep(slots, [w]))              # w <= k: overwritten or beyond the count if freed
            b.call(free, [b.select(kept, null, p)])
            return [b.select(kept, b.add(w, ir.Constant(_I64, 1)), w)]
        (w,) = self.counted_loop(mark, b.load(self.arena_count), ir.Constant(_I64, 1), [mark], step, name="release")
        b.store(w, self.arena_count)

    def tape_new(self, op, ins):
        b = self.b
        st = self.item_type(op.results[0])
        size = ir.Constant(_I64, max(st.get_abi_size(_TARGET_DATA[0]), 1))
        if op.operands:
            raw, slot = self.allocate(ins[0], size.constant, zeroed=False)
            self.frees.append((raw, slot))
            return b.bitcast(raw, ir.PointerType(st))
        # a growing tape: capacity and pointer live in stack slots
        with b.goto_block(self.allocas_block):
            b.position_at_start(self.allocas_block)
            cap = b.alloca(_I64)
            ptr = b.alloca(_PTR)
        b.store(ir.Constant(_I64, 16), cap)
        raw, slot = self.allocate(ir.Constant(_I64, 16), size.constant, zeroed=False)
        b.store(raw, ptr)
        self.growing[op.results[0]] = (cap, ptr, size, slot)
        self.frees.append((ptr, slot))
        return b.bitcast(raw, ir.PointerType(st))

    def tape_pointer(self, tape_value):
        if tape_value in self.growing:
            ptr = self.growing[tape_value][1]
            return self.b.bitcast(self.b.load(ptr), ir.PointerType(self.item_type(tape_value)))
        return self.v(tape_value)

    def tape_put(self, op, ins):
        b = self.b
        tape_value = op.operands[0]
        k = ins[1]
        if op.attrs.get("append"):
            cap, ptr, size, slot = self.growing[tape_value]
            with b.if_then(b.icmp_signed(">=", k, b.load(cap)), likely=False):
                new_cap = b.mul(b.load(cap), ir.Constant(_I64, 2))
                nbytes = b.smul_with_overflow(new_cap, size)
                self.memory_guard(b.extract_value(nbytes, 1), new_cap, size)
                realloc = self.declare("realloc", _PTR, [_PTR, _I64])
                grown = b.call(realloc, [b.load(ptr), b.extract_value(nbytes, 0)])
                self.memory_guard(b.icmp_unsigned("==", grown, ir.Constant(_PTR, None)), new_cap, size)
                b.store(grown, ptr)
                b.store(grown, b.gep(self.arenaarena_slots(), [slot]))
                b.store(new_cap, cap)
        st = self.item_type(tape_value)
        item = ir.Constant(st, ir.Undefined)
        for j, v in enumerate(ins[2:]):
            item = b.insert_value(item, v, j)
        b.store(item, b.gep(self.tape_pointer(tape_value), [k]))

    # ------------------------------------------------------------------ calls into Python
    def call_python(self, op, ins):
        """A call of the user's Python function through the callback table (callbacks.py):
        operands and results travel as arrays of pointers to stack cells."""
        b = self.b
        index = len(self.callbacks)
        self.callbacks.append(op)

        def cells(types):
            with b.goto_entry_block():
                vector = b.alloca(ir.ArrayType(_PTR, max(len(types), 1)))
                out = [b.alloca(_I8 if t is BOOL else _ltype(t)) for t in types]
            for k, cell in enumerate(out):
                b.store(b.bitcast(cell, _PTR), b.gep(vector, [ir.Constant(_I32, 0), ir.Constant(_I32, k)]))
            return b.bitcast(vector, ir.PointerType(_PTR)), out

        argv, arg_cells = cells([v.type for v in op.operands])
        for v, cell, value in zip(op.operands, arg_cells, ins):
            b.store(b.zext(value, _I8) if v.type is BOOL else value, cell)
        resv, res_cells = cells([r.type for r in op.results])
        fnty = ir.FunctionType(_I32, [ir.PointerType(_PTR), ir.PointerType(_PTR)])
        target = b.load(b.gep(self.callback_table, [ir.Constant(_I64, index)]))
        status = b.call(b.bitcast(target, fnty.as_pointer()), [argv, resv])
        self.guard(b.icmp_signed("!=", status, ir.Constant(_I32, 0)), CALLBACK)
        for r, cell in zip(op.results, res_cells):
            value = b.load(cell)
            self.values[r] = b.trunc(value, _I1) if r.type is BOOL else value

    # ------------------------------------------------------------------ control flow
    def lower_if(self, op):
        b = self.b
        cond = self.v(op.operands[0])
        then_bb = self.func.append_basic_block("then")
        else_bb = self.func.append_basic_block("else")
        merge = self.func.append_basic_block("endif")
        b.cbranch(cond, then_bb, else_bb)
        incoming = []
        for blk, bb in ((op.regions[0], then_bb), (op.regions[1], else_bb)):
            b.position_at_end(bb)
            ys = self.region(blk)
            incoming.append((ys, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        for j, r in enumerate(op.results):
            phi = b.phi(_ltype(r.type))
            for ys, bb in incoming:
                phi.add_incoming(ys[j], bb)
            self.values[r] = phi

    def region(self, blk):
        """Lower a region's ops; returns its yielded values. Tapes made in it are freed at its end."""
        saved, self.frees = self.frees, []
        ys = self.block(blk)
        self.free_all()
        self.frees = saved
        return ys

    def free_all(self):
        """Free the tapes of the region ending here (and clear their arena slots)."""
        free = self.declare("free", ir.VoidType(), [_PTR])
        for ptr, slot in self.frees:
            self.b.call(free, [self.b.load(ptr) if isinstance(ptr.type.pointee, ir.PointerType) else ptr])
            self.b.store(ir.Constant(_PTR, None), self.b.gep(self.arenaarena_slots(), [slot]))

    def counted_loop(self, start, stop, step, inits, body, name="for"):
        """Emit ``for i in range(start, stop, step)`` carrying ``inits``; ``body(i, carried)``
        emits one iteration and returns the new carried values. Returns the values after the loop.
        A step other than ±1 counts iterations instead (i = start + k * step), so that ``i + step``
        cannot overflow past ``stop`` near the ends of the 64-bit range."""
        b = self.b
        if not (isinstance(step, ir.Constant) and step.constant in (1, -1)):
            one = ir.Constant(_I64, 1)
            return self.counted_loop(ir.Constant(_I64, 0), self.range_len(start, stop, step), one, inits,
                                     lambda k, carried: body(b.add(start, b.mul(k, step)), carried), name)
        pre = b.block
        head = self.func.append_basic_block(f"{name}.head")
        loop = self.func.append_basic_block(f"{name}.body")
        done = self.func.append_basic_block(f"{name}.end")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(_I64)
        i.add_incoming(start, pre)
        phis = []
        for v in inits:
            phi = b.phi(v.type)
            phi.add_incoming(v, pre)
            phis.append(phi)
        b.cbranch(b.icmp_signed("<" if step.constant > 0 else ">", i, stop), loop, done)
        b.position_at_end(loop)
        ys = body(i, phis)
        latch = b.block
        i.add_incoming(b.add(i, step), latch)
        for phi, y in zip(phis, ys):
            phi.add_incoming(y, latch)
        b.branch(head)
        b.position_at_end(done)
        return phis

    def lower_for(self, op):
        b = self.b
        start, stop, step = (self.v(x) for x in op.operands[:3])
        inits = [self.v(x) for x in op.operands[3:]]
        body = op.regions[0]
        if not isinstance(step, ir.Constant):
            self.guard(b.icmp_signed("==", step, ir.Constant(_I64, 0)), RANGE_STEP)
        mark = b.load(self.arena_count) if frees_each_iteration(op) else None

        def iteration(i, carried):
            self.values[body.args[0]] = i
            self.values.update(zip(body.args[1:], carried))
            ys = self.region(body)
            self.mark_reductions(body, ys)
            self.release_iteration(mark, body, ys)
            return ys

        accesses = checkable_accesses(op) if self.boundscheck else []
        if not accesses:
            outs = self.counted_loop(start, stop, step, inits, iteration)
        else:
            # two versions: unchecked when every access is in bounds throughout, else checked
            fast, slow, join = (self.func.append_basic_block(f"for.{k}") for k in ("unchecked", "checked", "join"))
            b.cbranch(self.in_bounds_throughout(accesses, start, stop, step), fast, slow)
            versions = []
            for bb, trusted in ((fast, {a[0] for a in accesses}), (slow, set())):
                b.position_at_end(bb)
                self.trusted = trusted
                versions.append((self.counted_loop(start, stop, step, inits, iteration), b.block))
                b.branch(join)
            self.trusted = set()
            b.position_at_end(join)
            outs = []
            for k, v in enumerate(inits):
                phi = b.phi(v.type)
                for values, end in versions:
                    phi.add_incoming(values[k], end)
                outs.append(phi)
        for r, v in zip(op.results, outs):
            self.values[r] = v

    def in_bounds_throughout(self, accesses, start, stop, step):
        """Whether every access of ``accesses`` (hoisted_checks.py) stays inside its array, with
        no negative index, from the first iteration to the last."""
        b = self.b
        zero = ir.Constant(_I64, 0)
        first = start
        last = b.add(start, b.mul(b.sub(self.range_len(start, stop, step), ir.Constant(_I64, 1)), step))
        ok = ir.Constant(_I1, 1)
        for _, arr, forms in accesses:
            shape = self.shape_values(self.v(arr), arr.type.ndim)
            for form, n in zip(forms, shape):
                if form.invariant is not None:
                    v = self.v(form.invariant)
                    ends = [b.zext(v, _I64) if v.type is _I1 else v]
                else:
                    off = self.v(form.offset) if form.offset is not None else zero
                    ends = [b.add(e, off) if form.sign > 0 else b.sub(e, off) for e in (first, last)]
                for e in ends:
                    ok = b.and_(ok, b.and_(b.icmp_signed(">=", e, zero), b.icmp_signed("<", e, n)))
        return ok

    def release_iteration(self, mark, body, ys):
        """At the end of an iteration of a loop that allocates, free what it no longer needs."""
        if mark is not None:
            self.release_since(mark, [self.b.extract_value(y, 0) for a, y in zip(body.ops[-1].operands, ys)
                                      if a.type.is_array])

    def mark_reductions(self, body, ys):
        """A carried float updated as ``s = s + x`` is a sum: let LLVM reassociate it, so the loop
        can be vectorised (results move at rounding level only; DESIGN.md allows it)."""
        args = body.args[1:]
        for a, y, inst in zip(args, body.ops[-1].operands, ys):
            op = y.owner
            if a.type is F64 and op is not None and op.prim == "add" and a in op.operands and \
                    isinstance(inst, ir.Instruction) and inst.opname == "fadd":
                inst.flags.append("reassoc")

    def lower_while(self, op):
        b = self.b
        cond, body = op.regions
        inits = [self.v(x) for x in op.operands]
        mark = b.load(self.arena_count) if frees_each_iteration(op) else None
        pre = b.block
        head = self.func.append_basic_block("while.head")
        loop = self.func.append_basic_block("while.body")
        done = self.func.append_basic_block("while.end")
        b.branch(head)
        b.position_at_end(head)
        phis = []
        for v, a in zip(inits, cond.args):
            phi = b.phi(_ltype(a.type))
            phi.add_incoming(v, pre)
            phis.append(phi)
        for a, phi in zip(cond.args, phis):
            self.values[a] = phi
        (go,) = self.region(cond)
        b.cbranch(go, loop, done)
        b.position_at_end(loop)
        for a, phi in zip(body.args, phis):
            self.values[a] = phi
        ys = self.region(body)
        self.release_iteration(mark, body, ys)
        latch = b.block
        for phi, y in zip(phis, ys):
            phi.add_incoming(y, latch)
        b.branch(head)
        b.position_at_end(done)
        for r, phi in zip(op.results, phis):
            self.values[r] = phi


def _raised(compute):
    """The exception Python or numpy raises for ``compute`` (their wording changes between
    versions, so it is taken from the running ones)."""
    try:
        compute()
    except Exception as e:      # noqa: BLE001 - any exception is the answer
        return e
    raise AssertionError("srcgrad: expected an exception")


def _as_float(bits):
    """The double whose bits an i64 error number holds."""
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _same_as(compute):
    e = _raised(compute)
    return lambda err: type(e)(*e.args)


def _shape_text(dims):
    """A shape as numpy writes it in messages: (3,) or (2,3)."""
    dims = list(dims)
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ",".join(str(n) for n in dims) + ")"


_MATMUL_MESSAGE = str(_raised(lambda: np.ones(3) @ np.ones(2)))
_MATMUL_MESSAGE = _MATMUL_MESSAGE.replace("(size 2 is different from 3)", "(size {} is different from {})") \
    if "(size 2 is different from 3)" in _MATMUL_MESSAGE else "matmul: size {} is different from {}"

_ERRORS = {
    ZERO_DIVISION: _same_as(lambda: 1 // 0),
    INT_MODULO: _same_as(lambda: 1 % 0),
    INT_OVERFLOW: lambda err: OverflowError("srcgrad: -9223372036854775808 // -1 is 2**63, beyond the 64-bit "
                                            "integers compiled code computes with (-2**63 to 2**63 - 1)"),
    RANGE_STEP: _same_as(lambda: range(0, 1, 0)),
    ARANGE_STEP: _same_as(lambda: np.arange(0, 1, 0)),
    FLOAT_ARANGE_STEP: _same_as(lambda: np.arange(0.0, 1.0, 0.0)),
    SLICE_STEP: _same_as(lambda: np.zeros(1)[::0]),
    EMPTY_MAX: _same_as(lambda: np.max(np.zeros(0))),
    EMPTY_MIN: _same_as(lambda: np.min(np.zeros(0))),
    NEGATIVE_SIZE: _same_as(lambda: np.zeros(-1)),
    MEMORY: lambda err: MemoryError(f"srcgrad: compiled code needs {err[0]:,} items of {err[1]} bytes "
                                    f"({err[0] * err[1] / 2**30:,.1f} GiB) and could not get them"),
}


def _exception(status, errors, err):
    """The exception for a compiled call's error status; ``err`` holds its numbers."""
    if status in _ERRORS:
        return _ERRORS[status](err)
    if status >= _SITE and status - _SITE < len(errors):
        make, count = errors[status - _SITE]
        return make(list(err[:count]))
    return RuntimeError(f"srcgrad: compiled code failed with status {status}")


_TARGET_DATA = []


def symbol_name(fn):
    """The compiled function's symbol: ``srcgrad.fn.<name>.<hash of its IR>``. The dots keep it
    apart from every C symbol (libm's ``exp``, which LLVM calls for ``llvm.exp``; ``malloc``;
    ``main``), the prefix from srcgrad's own helpers (``srcgrad.rt.*``), and the hash from
    another function of the same name (the hash is deterministic, so cached object code
    still defines the symbol that is looked up)."""
    digest = hashlib.sha256(str(fn).encode()).hexdigest()[:16]
    readable = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in fn.name)    # résumé: r_sum_
    return f"srcgrad.fn.{readable}.{digest}"


def compile_function(fn, boundscheck=True, cache=False):
    """(a Python callable running ``fn`` natively, the optimised LLVM IR text). Without
    ``boundscheck``, array indices are trusted (faster; an index out of range is undefined).
    With ``cache``, object code is kept on disk (backends/disk_cache.py) and reused."""
    tm = _init()
    if not _TARGET_DATA:
        _TARGET_DATA.append(llvm.create_target_data(str(tm.target_data)))
    module = ir.Module(name=symbol_name(fn))
    module.triple = llvm.get_process_triple()
    module.data_layout = str(tm.target_data)
    low = _Lowering(fn, module, boundscheck)
    low.frees = []
    low.build()
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    entry = None
    if cache:
        from .disk_cache import DiskCache
        entry = DiskCache.for_code(str(fn), options=f"boundscheck={boundscheck}")
    hit = entry.load() if entry is not None else None
    if hit is None:
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pm = pb.getModulePassManager()
        pm.run(mod, pb)
        text = str(mod)
    else:
        text = hit[1]
    engine = llvm.create_mcjit_compiler(mod, _init())
    if entry is not None:
        if hit is not None:
            engine.set_object_cache(getbuffer_func=lambda m: hit[0])       # no code generation
        else:
            engine.set_object_cache(notify_func=lambda m, data: entry.store(bytes(data), text))
    engine.finalize_object()
    address = engine.get_function_address(symbol_name(fn))
    in_types = [ctype_of(p.type) for p in fn.params]
    out_types = [ctype_of(t) for t in fn.result_types]
    cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.POINTER(t) if issubclass(t, ctypes.Structure) else t
                                               for t in in_types],
                             *[ctypes.POINTER(t) for t in out_types],
                             ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
                             ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p))(address)
    errors = list(low.errors)
    bridges = [make_bridge(op) for op in low.callbacks]
    table = (ctypes.c_void_p * max(len(bridges), 1))(*[ctypes.cast(f, ctypes.c_void_p) for f in bridges])
    param_types = [p.type for p in fn.params]
    kinds = list(fn.result_types)
    written = [k for k, p in enumerate(fn.params) if p in Buffers(fn).written]
    checked = []

    def run(*given):
        if any(not given[k].flags.writeable for k in written):
            # numpy raises where a read-only argument is written, if that write is reached:
            # the python backend does exactly that (compiled code would write into it)
            if not checked:
                from .. import python as python_backend
                checked.append(python_backend.compile_function(fn))
            return checked[0](*given)
        args = [element_strided(a) if t.is_array else a for a, t in zip(given, param_types)]
        call_args = []
        for a, t, ct in zip(args, param_types, in_types):
            if t.is_array:
                call_args.append(ctypes.byref(array_struct(ct, a)))
            else:
                call_args.append(a)
        outs = [t() for t in out_types]
        owned = None
        arena = ctypes.c_void_p(None)            # allocated and grown by the compiled code
        count = (ctypes.c_int64 * 2)()           # slots used, capacity
        err = (ctypes.c_int64 * _ERR_SLOTS)()
        try:
            with CallState() as state:
                status = cfunc(*call_args, *[ctypes.byref(o) for o in outs], ctypes.byref(arena), count, err, table)
                if status == CALLBACK:
                    raise state.error
                if status:
                    raise _exception(status, errors, err)
                owned = {p: None for p in arena_slots(arena, count[0]) if p}
                vals = [result_value(o, k, args, param_types, owned) for o, k in zip(outs, kinds)]
        finally:
            for p in arena_slots(arena, count[0]):
                if owned is None or owned.get(p) is None:
                    libc_free(p)
            libc_free(arena.value)
            for a, copy in zip(given, args):
                if copy is not a and getattr(a, "flags", None) is not None and a.flags.writeable:
                    np.copyto(a, copy)         # writes into a copied argument reach the caller's array
        return vals[0] if len(vals) == 1 else tuple(vals)

    run._engine = engine          # keeps the machine code alive as long as the callable
    run._bridges = bridges
    run.from_cache = hit is not None
    return run, text
