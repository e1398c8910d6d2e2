"""Scalar math as tables (Numba's mathimpl.py habit): one lowering per primitive, keyed by
its name. ``CPU_MATH`` holds the math functions of the CPU target (LLVM intrinsics or libm;
a target object carries its own table, so the CUDA target's is a second table of
``__nv_*`` names); ``SCALAR`` holds arithmetic, comparisons, logic and conversions.

Each entry is ``lower(ctx, in_types, out_type, ins, elementwise)``: the scalar values ``ins``
(of IR types ``in_types``) to the result (of ``out_type``), or, with ``elementwise``, the
element step of a whole-array operation (numpy's semantics where they differ from Python's).

Example:
    SCALAR["div"](ctx, [F64, F64], F64, [x, y], False)      # an fdiv
"""
import math

from llvmlite import ir

from ...errors import NEGATIVE_INT_POWER
from ...ir.types import BOOL, F64, I64
from .error_codes import INT_MODULO, INT_OVERFLOW, ZERO_DIVISION, as_float
from .types import BIT, DOUBLE, INT64


def intrinsic(name):
    """A math function as an LLVM intrinsic (``llvm.sin``), which LLVM may fold and vectorise."""
    def lower(ctx, in_types, out_type, ins, elementwise):
        return ctx.call_intrinsic(name, ins)
    return lower


def libm(name):
    """A math function as a call of the C library's (``tanh``) on doubles."""
    def lower(ctx, in_types, out_type, ins, elementwise):
        return ctx.b.call(ctx.declare(name, DOUBLE, [DOUBLE] * len(ins)), ins)
    return lower


# intrinsics where LLVM has one (a vectorised loop then calls libmvec's: vector_math.py)
CPU_MATH = {name: intrinsic("llvm." + name) for name in ("sin", "cos", "exp", "log", "sqrt", "log2", "log10", "tan",
                                                         "asin", "acos", "atan", "sinh", "cosh", "tanh")}
CPU_MATH.update({name: libm(name) for name in ("expm1", "log1p", "erf", "atan2", "hypot")})

_FCMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _arith(float_op, int_op):
    def lower(ctx, in_types, out_type, ins, elementwise):
        return getattr(ctx.b, float_op if out_type is F64 else int_op)(*ins)
    return lower


def _floordiv_mod(p):
    def lower(ctx, in_types, out_type, ins, elementwise):
        return floordiv_mod(ctx, p, out_type, ins)
    return lower


def _neg(ctx, in_types, out_type, ins, elementwise):
    return ctx.b.fneg(ins[0]) if out_type is F64 else ctx.b.neg(ins[0])


def _abs(ctx, in_types, out_type, ins, elementwise):
    b = ctx.b
    return ctx.call_intrinsic("llvm.fabs", ins) if out_type is F64 else \
        b.select(b.icmp_signed("<", ins[0], ir.Constant(INT64, 0)), b.neg(ins[0]), ins[0])


def power(float_pow):
    """``**``: of floats by ``float_pow`` (the target's: ``llvm.pow`` on the CPU), of ints as
    numpy's int64 (element-wise: wraps around; a negative exponent is numpy's ValueError)."""
    def lower(ctx, in_types, out_type, ins, elementwise):
        b = ctx.b
        if out_type is I64:
            ctx.raise_at(b.icmp_signed("<", ins[1], ir.Constant(INT64, 0)),
                         lambda err: ValueError("Integers to negative integer powers are not allowed."))
            return b.extract_value(b.call(ipow(ctx), ins), 0)
        return float_pow(ctx, in_types, out_type, ins, elementwise)
    return lower


CPU_MATH["pow"] = power(intrinsic("llvm.pow"))


def numpy_min_max(b, p, a, c):
    """np.minimum(a, c) or np.maximum(a, c) of doubles (``p``: "min" or "max"): a NaN on
    either side wins; of equal values (-0.0, 0.0) the second."""
    keep = b.or_(b.fcmp_ordered("<" if p == "min" else ">", a, c), b.fcmp_unordered("uno", a, a))
    return b.select(keep, a, c)


def _min_max(p):
    def lower(ctx, in_types, out_type, ins, elementwise):
        b = ctx.b
        a, c = ins
        if out_type is F64 and elementwise:
            return numpy_min_max(b, p, a, c)
        if out_type is F64:
            better = b.fcmp_ordered("<" if p == "min" else ">", c, a)
        else:
            better = b.icmp_signed("<" if p == "min" else ">", c, a)
        return b.select(better, c, a)      # Python: the first argument unless the second is better
    return lower


def _rounding(name):
    """math.floor, math.ceil, round (Python rounds halves to even, round(2.5) is 2, as
    llvm.roundeven): an int, raising where Python's int() of the float would."""
    def lower(ctx, in_types, out_type, ins, elementwise):
        return float_to_int(ctx, ctx.call_intrinsic(name, ins))
    return lower


def _compare(p):
    def lower(ctx, in_types, out_type, ins, elementwise):
        b = ctx.b
        a, c = ins
        t = in_types[0]
        if t is F64:
            return b.fcmp_unordered("!=", a, c) if p == "ne" else b.fcmp_ordered(_FCMP[p], a, c)
        if t is BOOL:         # False < True: i1 read unsigned (signed, True is -1)
            return b.icmp_unsigned(_FCMP[p], a, c)
        return b.icmp_signed(_FCMP[p], a, c)
    return lower


def _to_f64(ctx, in_types, out_type, ins, elementwise):
    return ctx.b.uitofp(ins[0], DOUBLE) if in_types[0] is BOOL else ctx.b.sitofp(ins[0], DOUBLE)


def _to_i64(ctx, in_types, out_type, ins, elementwise):
    return float_to_int(ctx, ins[0]) if in_types[0] is F64 else ctx.b.zext(ins[0], INT64)


def _to_bool(ctx, in_types, out_type, ins, elementwise):
    b = ctx.b
    x = ins[0]
    return b.fcmp_unordered("!=", x, ir.Constant(DOUBLE, 0.0)) if in_types[0] is F64 else \
        b.icmp_signed("!=", x, ir.Constant(INT64, 0))


SCALAR = {
    "add": _arith("fadd", "add"),
    "sub": _arith("fsub", "sub"),
    "mul": _arith("fmul", "mul"),
    "div": lambda ctx, ts, t, ins, ew: ctx.b.fdiv(*ins),   # IEEE: x / 0.0 is inf or nan (docs/compiler.md)
    "floordiv": _floordiv_mod("floordiv"),
    "mod": _floordiv_mod("mod"),
    "neg": _neg,
    "abs": _abs,
    "min": _min_max("min"),
    "max": _min_max("max"),
    "floor": _rounding("llvm.floor"),
    "ceil": _rounding("llvm.ceil"),
    "round": _rounding("llvm.roundeven"),
    **{p: _compare(p) for p in _FCMP},
    "not": lambda ctx, ts, t, ins, ew: ctx.b.not_(ins[0]),
    "and": lambda ctx, ts, t, ins, ew: ctx.b.and_(*ins),
    "or": lambda ctx, ts, t, ins, ew: ctx.b.or_(*ins),
    "select": lambda ctx, ts, t, ins, ew: ctx.b.select(*ins),
    "to_f64": _to_f64,
    "to_i64": _to_i64,
    "to_bool": _to_bool,
    # np.floor, np.ceil, np.trunc, np.rint of floats (float results; rint: halves to even)
    "float_floor": intrinsic("llvm.floor"), "float_ceil": intrinsic("llvm.ceil"),
    "float_trunc": intrinsic("llvm.trunc"), "float_rint": intrinsic("llvm.rint"),
}


def floordiv_mod(ctx, p, t, ins):
    """Python's // and %: floor toward -inf; an integer division by zero raises."""
    if t is F64:
        return float_floordiv_mod(ctx, p, *ins)
    b = ctx.b
    a, c = ins
    zero, minus_one = ir.Constant(INT64, 0), ir.Constant(INT64, -1)
    ctx.guard(b.icmp_signed("==", c, zero), ZERO_DIVISION if p == "floordiv" else INT_MODULO)
    minus_one_divisor = b.icmp_signed("==", c, minus_one)
    if p == "floordiv":
        # -2**63 // -1 is 2**63, beyond i64 (and sdiv traps on it)
        ctx.guard(b.and_(minus_one_divisor, b.icmp_signed("==", a, ir.Constant(INT64, -2**63))), INT_OVERFLOW)
    # x // -1 and x % -1 without sdiv/srem by -1, which trap on -2**63
    safe = b.select(minus_one_divisor, ir.Constant(INT64, 1), c)
    q = b.sdiv(a, safe)
    r = b.srem(a, safe)
    adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, c), zero))
    if p == "floordiv":
        return b.select(minus_one_divisor, b.neg(a), b.select(adjust, b.sub(q, ir.Constant(INT64, 1)), q))
    return b.select(minus_one_divisor, zero, b.select(adjust, b.add(r, c), r))


def float_floordiv_mod(ctx, p, a, c):
    """Float // and % as CPython computes them (Objects/floatobject.c, _float_div_mod): fmod,
    the sign fix, and the quotient from fmod snapped to an integer, so that the last bits
    agree (2.3 % 0.7 is 0.19999999999999996, not floor's 0.20000000000000018). numpy's
    npy_divmod is the same algorithm; a zero divisor gives numpy's (IEEE's) results:
    fmod's nan, and a / c for // (docs/compiler.md)."""
    b = ctx.b
    zero, one = ir.Constant(DOUBLE, 0.0), ir.Constant(DOUBLE, 1.0)
    copysign = ctx.declare("llvm.copysign.f64", DOUBLE, [DOUBLE, DOUBLE])
    mod = b.frem(a, c)                                  # C's fmod: exact
    nonzero = b.fcmp_unordered("!=", mod, zero)         # C's ``if (mod)``: nan is true
    flip = b.and_(nonzero, b.xor(b.fcmp_ordered("<", c, zero), b.fcmp_ordered("<", mod, zero)))
    if p == "mod":
        fixed = b.select(flip, b.fadd(mod, c), mod)
        return b.select(nonzero, fixed, b.call(copysign, [zero, c]))
    div = b.fdiv(b.fsub(a, mod), c)
    div = b.select(flip, b.fsub(div, one), div)
    floor = ctx.call_intrinsic("llvm.floor", [div])
    snapped = b.select(b.fcmp_ordered(">", b.fsub(div, floor), ir.Constant(DOUBLE, 0.5)), b.fadd(floor, one), floor)
    quotient = b.fdiv(a, c)
    out = b.select(b.fcmp_unordered("!=", div, zero), snapped, b.call(copysign, [zero, quotient]))
    return b.select(b.fcmp_ordered("==", c, zero), quotient, out)


def checked_int(ctx, op, ins):
    """Scalar int +, -, *, unary - and ** : Python's ints are unbounded, compiled ones are
    64 bits, so a result beyond them raises OverflowError instead of wrapping around."""
    b = ctx.b
    p = op.prim
    if p == "pow":
        ctx.raise_at(b.icmp_signed("<", ins[1], ir.Constant(INT64, 0)), lambda err: ValueError(NEGATIVE_INT_POWER))
        pair = b.call(ipow(ctx), ins)
    elif p == "abs":        # abs(-2**63) is 2**63
        a = ins[0]
        value = b.select(b.icmp_signed("<", a, ir.Constant(INT64, 0)), b.neg(a), a)
        pair = ir.Constant(ir.LiteralStructType([INT64, BIT]), ir.Undefined)
        pair = b.insert_value(b.insert_value(pair, value, 0), b.icmp_signed("==", a, ir.Constant(INT64, -2 ** 63)), 1)
    elif p == "neg":
        pair = b.ssub_with_overflow(ir.Constant(INT64, 0), ins[0])
    else:
        pair = {"add": b.sadd_with_overflow, "sub": b.ssub_with_overflow, "mul": b.smul_with_overflow}[p](*ins)
    symbol = {"add": "+", "sub": "-", "mul": "*", "neg": "unary -", "pow": "**", "abs": "abs()"}[p]
    where = f" ({op.loc})" if op.loc is not None else ""
    ctx.raise_at(b.extract_value(pair, 1), lambda err: OverflowError(
        f"srcgrad: integer overflow: the result of {symbol}{where} is beyond the 64-bit integers compiled "
        "code computes with (-2**63 to 2**63 - 1); Python's integers are unbounded (use floats for such numbers)"))
    return b.extract_value(pair, 0)


def float_to_int(ctx, x):
    """An integral double as i64, raising where Python's int() raises (NaN, the infinities)
    and where the int would not fit in 64 bits (fptosi would give a wrong number there)."""
    b = ctx.b
    ctx.raise_at(b.fcmp_unordered("uno", x, x), lambda err: ValueError("cannot convert float NaN to integer"))
    infinite = b.fcmp_ordered("==", ctx.call_intrinsic("llvm.fabs", [x]), ir.Constant(DOUBLE, math.inf))
    ctx.raise_at(infinite, lambda err: OverflowError("cannot convert float infinity to integer"))
    fits = b.and_(b.fcmp_ordered(">=", x, ir.Constant(DOUBLE, -2.0 ** 63)),
                  b.fcmp_ordered("<", x, ir.Constant(DOUBLE, 2.0 ** 63)))
    ctx.raise_at(b.not_(fits), lambda err: OverflowError(
        f"srcgrad: {as_float(err[0])!r} converted to int is beyond the 64-bit integers compiled code computes "
        "with (-2**63 to 2**63 - 1)"), [b.bitcast(x, INT64)])
    return b.fptosi(x, INT64)


def ipow(ctx):
    """The module's function i64 ** i64 by squaring (the exponent is not negative: checked
    before): {the result wrapped to 64 bits, whether the true result is beyond them}."""
    f = ctx.module.globals.get("srcgrad.rt.ipow")
    if f is not None:
        return f
    pair_t = ir.LiteralStructType([INT64, BIT])
    f = ir.Function(ctx.module, ir.FunctionType(pair_t, [INT64, INT64]), name="srcgrad.rt.ipow")
    f.linkage = "internal"
    entry, loop, done = f.append_basic_block(), f.append_basic_block(), f.append_basic_block()
    b = ir.IRBuilder(entry)
    base, exp = f.args
    b.branch(loop)
    b.position_at_end(loop)
    acc = b.phi(INT64)
    bb = b.phi(INT64)
    ee = b.phi(INT64)
    over = b.phi(BIT)
    acc.add_incoming(ir.Constant(INT64, 1), entry)
    bb.add_incoming(base, entry)
    ee.add_incoming(exp, entry)
    over.add_incoming(ir.Constant(BIT, 0), entry)
    odd = b.trunc(ee, BIT)
    times = b.smul_with_overflow(acc, bb)
    acc2 = b.select(odd, b.extract_value(times, 0), acc)
    ee2 = b.lshr(ee, ir.Constant(INT64, 1))
    more = b.icmp_signed("!=", ee2, ir.Constant(INT64, 0))
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
