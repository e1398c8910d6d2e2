"""Derivative rules, one per differentiable primitive, written as the math.

``ADJOINT[prim](g, *operands, out)`` gives one thunk per operand; calling thunk k emits the
adjoint contribution to operand k (``g`` is the adjoint of the result, ``out`` the result).
Thunks are called only for operands that need an adjoint, so no dead code is emitted.
Primitives with no derivative (comparisons, integer ops, array shapes) map to None.

Example:
    ADJOINT["sin"]        # g * cos(x)
"""
import math

from ..ir.core import const, cos, current, exp, select, sin, sqrt
from ..ir.types import F64, is_float
from .tables import adjoint_rule, no_derivative

_rule = adjoint_rule


def _emit(prim, *args):
    return current().emit(prim, list(args))


_rule("add")(lambda g, a, b, out: (lambda: g, lambda: g))
_rule("sub")(lambda g, a, b, out: (lambda: g, lambda: -g))
_rule("mul")(lambda g, a, b, out: (lambda: g * b, lambda: g * a))
# at b = 0 the function itself raises (python backend) or is ±inf/nan (IEEE): no convention needed
_rule("div")(lambda g, a, b, out: (lambda: g / b, lambda: -g * out / b))
_rule("neg")(lambda g, a, out: (lambda: -g,))
# d|a| = sign(a) da, with sign(0) = sign(NaN) = 0 (PyTorch, numpy's sign, HIPS autograd); a
# product, so that a NaN arriving at 0 (sqrt(|a| * |a|) at 0) stays NaN in both modes, as in PyTorch
_rule("abs")(lambda g, a, out: (lambda: g * select(a > 0.0, 1.0, select(a < 0.0, -1.0, 0.0)),))
_rule("pow")(lambda g, a, b, out: (lambda: _pow_dbase(g, a, b, out), lambda: _pow_dexp(g, a, b, out)))
# min(a, b) is b if b < a else a (Python's order, NaN included); at a tie a == b each operand
# gets g / 2, as torch.minimum/maximum and the amin/amax reductions (ties share evenly)
_rule("min")(lambda g, a, b, out: (lambda: _pick(g, _eq(a, b), b < a, False),
                                   lambda: _pick(g, _eq(a, b), b < a, True)))
_rule("max")(lambda g, a, b, out: (lambda: _pick(g, _eq(a, b), b > a, False),
                                   lambda: _pick(g, _eq(a, b), b > a, True)))
# x / (x² + y²) as x / h / h (h = hypot(y, x)): no underflow to 0/0 for tiny x, y;
# at (0, 0): 0, as PyTorch (h is replaced by 1 there, so the terms are g·0)
_rule("atan2")(lambda g, y, x, out: (lambda: g * (x / _radius(y, x) / _radius(y, x)),
                                     lambda: g * (-y / _radius(y, x) / _radius(y, x))))
# at (0, 0): 0, as the gradient of torch.linalg.norm at a zero vector and d|x| at 0
# (hypot(x, 0) is |x|; torch.hypot itself gives NaN there)
_rule("hypot")(lambda g, a, b, out: (lambda: g * a / _nonzero(out), lambda: g * b / _nonzero(out)))
# the jumps of a % b belong to the piece on their right, as floordiv's value there (PyTorch: same formula)
_rule("mod")(lambda g, a, b, out: (lambda: g, lambda: -g * _emit("floordiv", a, b)))
_rule("select")(lambda g, c, a, b, out: (None, lambda: select(c, g, 0.0), lambda: select(c, 0.0, g)))

_rule("sin")(lambda g, x, out: (lambda: g * cos(x),))
_rule("cos")(lambda g, x, out: (lambda: -g * sin(x),))
_rule("tan")(lambda g, x, out: (lambda: g * (1.0 + out * out),))
# at x = ±1: ±inf·g, as PyTorch (never a ZeroDivisionError: the function is finite there)
_rule("asin")(lambda g, x, out: (lambda: _ieee_div(g, sqrt(1.0 - x * x)),))
_rule("acos")(lambda g, x, out: (lambda: _ieee_div(-g, sqrt(1.0 - x * x)),))
_rule("atan")(lambda g, x, out: (lambda: g / (1.0 + x * x),))
_rule("sinh")(lambda g, x, out: (lambda: g * _emit("cosh", x),))
_rule("cosh")(lambda g, x, out: (lambda: g * _emit("sinh", x),))
_rule("tanh")(lambda g, x, out: (lambda: g * (1.0 - out * out),))
_rule("exp")(lambda g, x, out: (lambda: g * out,))
_rule("expm1")(lambda g, x, out: (lambda: g * (out + 1.0),))
# at x = 0 (log1p: x = -1), where the function is -inf: inf·g, as PyTorch
_rule("log")(lambda g, x, out: (lambda: _ieee_div(g, x),))
_rule("log1p")(lambda g, x, out: (lambda: _ieee_div(g, 1.0 + x),))
_rule("log2")(lambda g, x, out: (lambda: _ieee_div(g, x * math.log(2.0)),))
_rule("log10")(lambda g, x, out: (lambda: _ieee_div(g, x * math.log(10.0)),))
# at x = 0: inf·g, as PyTorch
_rule("sqrt")(lambda g, x, out: (lambda: _ieee_div(g * 0.5, out),))
_rule("erf")(lambda g, x, out: (lambda: g * (2.0 / math.sqrt(math.pi)) * exp(-(x * x)),))


def _eq(a, b):
    return _emit("eq", a, b)


def _zero_like(g):
    return _emit("zeros_like", g) if g.type.is_array else const(0.0)


def _nonzero(d):
    """``d`` with its zeros replaced by 1: a divisor that never raises ZeroDivisionError."""
    return select(_eq(d, 0.0), 1.0, d)


def _radius(y, x):
    return _nonzero(_emit("hypot", y, x))


def _ieee_div(n, d):
    """n / d, but n·inf where d is 0 (as IEEE division, which the python backend's floats do
    not follow: they raise). The sign of a zero divisor is not kept: -0.0 counts as +0.0.
    Arrays are divided as they are: numpy and LLVM divide them as IEEE (numpy warns at 0), and
    an unguarded division keeps the loop fusable (one use of d)."""
    if d.type.is_array:
        return n / d
    return n * select(_eq(d, 0.0), math.inf, 1.0 / _nonzero(d))


def _pick(g, tie, second, to_second):
    """The adjoint of one operand of min/max: g to the operand returned, g / 2 each at a tie."""
    return select(tie, g * 0.5, select(second, g, 0.0) if to_second else select(second, 0.0, g))


def constant_value(v):
    """The number ``v`` holds when it is a scalar constant, else None."""
    op = v.owner
    if op is not None and op.prim == "const" and isinstance(op.attrs["value"], (int, float)):
        return op.attrs["value"]
    return None


def _pow_dbase(g, a, b, out):
    """d(a ** b)/da = b·a**(b-1), with b·a**(b-1) = 0 wherever b = 0 (x**0 is constant: PyTorch
    masks it the same way), and at a = 0: 0 for b > 1, 1 for b = 1, ±inf for b < 1 as PyTorch
    (the sign of -0.0 is not kept). a**(b-1) itself may overflow (Python raises) where a**b does
    not (a = 1e-300, b = -1): it is computed as out / a wherever out is a normal number."""
    c = constant_value(b)
    if c == 0:
        return _zero_like(g)
    if c is not None and c >= 1:
        # a ** (c - 1) is 0 or 1 at a = 0 and never larger than max(1, |a ** c|): it cannot raise
        power = const(1.0) if c == 1 else a if c == 2 else a ** const(c - 1.0)
        return g * b * power
    zero = _eq(a, 0.0)
    safe = _nonzero(a)
    size = _emit("abs", out)
    normal = select(size < 2.2250738585072014e-308, False, size < math.inf)
    # where out is 0, subnormal, ±inf or NaN, a ** (b - 1) is small, or the primal already overflowed
    direct = select(normal, 1.0, safe) ** (b - 1.0)
    at_zero = math.inf if c is not None else select(b > 1.0, 0.0, select(_eq(b, 1.0), 1.0, math.inf))
    factor = select(zero, at_zero, select(normal, out / safe, direct))
    if c is None:
        factor = select(_eq(b, 0.0), 0.0, factor)     # before the product: b·inf would be NaN
    return g * b * factor


def _pow_dexp(g, a, b, out):
    """d(a ** b)/db = a**b·log(a); at a = 0: 0 for b >= 0 (PyTorch masks 0**y the same way: 0**y
    is constant for y > 0) and -inf·g for b < 0; NaN for a < 0 (log of a negative number)."""
    c = constant_value(a)
    if c is not None and c > 0:
        return g * out * math.log(c)
    positive = a > 0.0
    d = g * out * _emit("log", select(positive, a, 1.0))
    pole = g * select(b >= 0.0, 0.0, -math.inf)
    return select(positive, d, select(_eq(a, 0.0), pole, g * math.nan))


_rule("sum")(lambda g, x, out: (lambda: _emit_attrs("broadcast_like", [g, x], axis=_axis(out, x)),))
_rule("transpose")(lambda g, x, out: (lambda: _emit("transpose", g),))
_rule("outer")(lambda g, a, b, out: (lambda: _emit("matmul", g, b), lambda: _emit("matmul", _emit("transpose", g), a)))
# exact where elements are zero: the product of the other elements, from one runtime helper
_rule("prod")(lambda g, x, out: (lambda: _emit_attrs("reduce_grad", [g, x, out], of="prod", axis=_axis(out, x)),))
_rule("amax")(lambda g, x, out: (lambda: extremum_grad(g, x, out, _axis(out, x)),))
_rule("amin")(lambda g, x, out: (lambda: extremum_grad(g, x, out, _axis(out, x)),))


def extremum_grad(g, x, out, axis):
    """d max(x) (or min): g shared evenly among the elements equal to the result (ties: as
    torch.amax/amin); NaN everywhere when x holds a NaN (no element equals the NaN result: 0/0).
    Without ``g``: the partial derivatives themselves."""
    spread = {"axis": axis}
    mask = select(_eq(x, _emit_attrs("broadcast_like", [out, x], **spread)), 1.0, 0.0)
    count = _emit_attrs("broadcast_like", [_emit_attrs("sum", [mask], **spread), x], **spread)
    if g is None:
        return mask / count
    return _emit_attrs("broadcast_like", [g, x], **spread) * mask / count
_rule("copy")(lambda g, x, out: (lambda: g,))
no_derivative("full", "empty")


@_rule("matmul")
def _matmul(g, a, b, out):
    """d(a @ b): vector·vector, matrix·vector, vector·matrix and matrix·matrix."""
    ra, rb = a.type.ndim, b.type.ndim
    if ra == 1 and rb == 1:
        return (lambda: g * b, lambda: g * a)
    if ra == 2 and rb == 1:
        return (lambda: _emit("outer", g, b), lambda: _emit("matmul", _emit("transpose", a), g))
    if ra == 1 and rb == 2:
        return (lambda: _emit("matmul", b, g), lambda: _emit("outer", a, g))
    return (lambda: _emit("matmul", g, _emit("transpose", b)), lambda: _emit("matmul", _emit("transpose", a), g))


def _emit_attrs(prim, args, **attrs):
    return current().emit(prim, list(args), attrs)


def as_float64(g):
    """An adjoint or tangent array as float64 (float32, int and bool ones are widened): the
    derivative arrays of srcgrad are float64."""
    return current().emit("to_f64", [g]) if g.type.is_array and g.type.dtype is not F64 else g


def _axis(out, x):
    """The reduced axis of a sum (None: all), read back from the op that made ``out``."""
    return out.owner.attrs.get("axis") if out.owner is not None else None


# no derivative: piecewise constant, integer-valued or not numbers at all
# (the rules of derivative code's own primitives, sum_to, index_add, tapes..., are in second_order.py)
no_derivative("const", "to_i64", "to_bool", "floor", "ceil", "round", "floordiv", "lt", "le", "gt", "ge", "eq", "ne",
              "not", "and", "or", "shape", "assert", "range_len", "tape_new", "zeros_like", "yield", "return", "size",
              "arange", "undo_new", "undo_mark", "undo_rewind")        # the undo log: reverse.py's own
# (array reads, writes, calls and structured control flow are "structural" in their records:
# the engines and ad/array_rules.py, ad/indexing_rules.py differentiate them)
# a float32 array widened to float64 passes its gradient on (an int or bool one has none);
# a float32 tangent (forward mode) is widened with it
adjoint_rule("to_f64")(lambda g, x, out: (lambda: as_float64(g),) if is_float(x.type) else (None,))
__all__ = ["as_float64", "constant_value", "extremum_grad"]
