"""Derivative rules, one per differentiable primitive, written as the math.

``ADJOINT[prim](g, *operands, out)`` gives one thunk per operand; calling thunk k emits the
adjoint contribution to operand k (``g`` is the adjoint of the result, ``out`` the result).
Thunks are called only for operands that need an adjoint, so no dead code is emitted.
Primitives with no derivative (comparisons, integer ops, array shapes) map to None.

Example:
    >>> ADJOINT["sin"]        # g * cos(x)
"""
import math

from ..ir.core import const, cos, current, exp, select, sin, sqrt
from ..ir.types import F64

ADJOINT = {}


def _rule(name):
    def register(fn):
        ADJOINT[name] = fn
        return fn
    return register


def _emit(prim, *args):
    return current().emit(prim, list(args))


_rule("add")(lambda g, a, b, out: (lambda: g, lambda: g))
_rule("sub")(lambda g, a, b, out: (lambda: g, lambda: -g))
_rule("mul")(lambda g, a, b, out: (lambda: g * b, lambda: g * a))
_rule("div")(lambda g, a, b, out: (lambda: g / b, lambda: -g * out / b))
_rule("neg")(lambda g, a, out: (lambda: -g,))
_rule("abs")(lambda g, a, out: (lambda: select(a < 0.0, -g, g),))
_rule("pow")(lambda g, a, b, out: (lambda: g * b * a ** (b - 1.0), lambda: g * out * _emit("log", a)))
_rule("min")(lambda g, a, b, out: (lambda: select(a <= b, g, 0.0), lambda: select(a <= b, 0.0, g)))
_rule("max")(lambda g, a, b, out: (lambda: select(a >= b, g, 0.0), lambda: select(a >= b, 0.0, g)))
_rule("atan2")(lambda g, y, x, out: (lambda: g * x / (x * x + y * y), lambda: -g * y / (x * x + y * y)))
_rule("hypot")(lambda g, a, b, out: (lambda: g * a / out, lambda: g * b / out))
_rule("mod")(lambda g, a, b, out: (lambda: g, lambda: -g * _emit("floordiv", a, b)))
_rule("select")(lambda g, c, a, b, out: (None, lambda: select(c, g, 0.0), lambda: select(c, 0.0, g)))

_rule("sin")(lambda g, x, out: (lambda: g * cos(x),))
_rule("cos")(lambda g, x, out: (lambda: -g * sin(x),))
_rule("tan")(lambda g, x, out: (lambda: g * (1.0 + out * out),))
_rule("asin")(lambda g, x, out: (lambda: g / sqrt(1.0 - x * x),))
_rule("acos")(lambda g, x, out: (lambda: -g / sqrt(1.0 - x * x),))
_rule("atan")(lambda g, x, out: (lambda: g / (1.0 + x * x),))
_rule("sinh")(lambda g, x, out: (lambda: g * _emit("cosh", x),))
_rule("cosh")(lambda g, x, out: (lambda: g * _emit("sinh", x),))
_rule("tanh")(lambda g, x, out: (lambda: g * (1.0 - out * out),))
_rule("exp")(lambda g, x, out: (lambda: g * out,))
_rule("expm1")(lambda g, x, out: (lambda: g * (out + 1.0),))
_rule("log")(lambda g, x, out: (lambda: g / x,))
_rule("log1p")(lambda g, x, out: (lambda: g / (1.0 + x),))
_rule("log2")(lambda g, x, out: (lambda: g / (x * math.log(2.0)),))
_rule("log10")(lambda g, x, out: (lambda: g / (x * math.log(10.0)),))
_rule("sqrt")(lambda g, x, out: (lambda: g * 0.5 / out,))
_rule("erf")(lambda g, x, out: (lambda: g * (2.0 / math.sqrt(math.pi)) * exp(-(x * x)),))

_rule("sum")(lambda g, x, out: (lambda: _emit_attrs("broadcast_like", [g, x], axis=_axis(out, x)),))
_rule("transpose")(lambda g, x, out: (lambda: _emit("transpose", g),))
_rule("outer")(lambda g, a, b, out: (lambda: _emit("matmul", g, b), lambda: _emit("matmul", _emit("transpose", g), a)))
for _name in ("prod", "amax", "amin"):
    # exact at zeros (prod) and sharing the gradient among ties (max/min): done in one runtime helper
    ADJOINT[_name] = (lambda name: lambda g, x, out: (
        lambda: _emit_attrs("reduce_grad", [g, x, out], of=name, axis=_axis(out, x)),))(_name)
_rule("copy")(lambda g, x, out: (lambda: g,))
ADJOINT["full"] = None


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


def _axis(out, x):
    """The reduced axis of a sum (None: all), read back from the op that made ``out``."""
    return out.owner.attrs.get("axis") if out.owner is not None else None


# no derivative: piecewise constant, integer-valued or not numbers at all
for _name in ("const", "to_i64", "to_bool", "floor", "ceil", "floordiv", "lt", "le", "gt", "ge", "eq", "ne",
              "not", "and", "or", "shape", "assert", "range_len", "tape_new", "tape_put", "tape_get",
              "zeros_like", "index_add", "yield", "return", "call_custom_vjp", "size", "sum_to",
              "broadcast_like", "reduce_grad", "arange", "slice_add"):
    ADJOINT[_name] = None
# handled by the reverse pass itself: conversions, array reads and structured control flow
ADJOINT["to_f64"] = lambda g, x, out: (lambda: g,) if x.type is F64 else (None,)
for _name in ("index", "if", "for", "while", "call_custom", "setitem", "slice", "setslice"):
    ADJOINT[_name] = "structural"

__all__ = ["ADJOINT", "const"]
