"""Forward-mode (tangent) rules.

A scalar or elementwise primitive's derivative is a 1x1 Jacobian per operand, so the tangent
of ``op(a, b)`` is ``rule_a(da) + rule_b(db)`` with the reverse rules of ad/rules.py, each
linear in the value it is given (``linear_tangent``); those primitives are listed by name
(``ELEMENTWISE``), never reached by default: a primitive without an entry here is a failed
lookup in ad/forward.py, where a default would give a plausible wrong number (``cumsum``'s
adjoint is its transpose, not its tangent). The other entries are not elementwise: their
tangent is not their transposed adjoint.

``TANGENT[prim](op, ts, xs, out)`` emits into the current block and returns the tangent of
the result, or None when it is zero: ``ts`` are the operands' tangents (None: zero), ``xs``
the operands and ``out`` the result in the new function, ``op`` the primal op.

Example:
    TANGENT["transpose"]      # d(x.T) = (dx).T
"""
from ..errors import TypingError
from ..ir.core import current
from ..ir.types import F64
from .rules import extremum_grad
from .tables import ADJOINT, tangent_rule

_rule = tangent_rule


def linear_tangent(op, ts, xs, out):
    """sum_k (∂op/∂x_k) dx_k, from the reverse rule thunks (an infinite partial times a zero
    tangent is NaN, as in reverse mode and PyTorch: jvp(t) is <grad, t> in IEEE arithmetic)."""
    block = current().block
    without = {x for t, x in zip(ts, xs) if t is None and x.type.is_array}
    total, start = None, len(block.ops)
    for k, dv in enumerate(ts):
        if dv is None:
            continue
        thunk = ADJOINT[op.prim](dv, *xs, out)[k]
        if thunk is None:
            continue
        term = thunk()
        total = term if total is None else current().emit("add", [total, term])
    used = {v for o in block.ops[start:] for v in o.operands}
    if total is not None and out.type.is_array and out not in used and without - used:
        # the result's shape may come from an array without a tangent that no term broadcast
        # against (ones((2, 3)) - v): the tangent is broadcast to it, as numpy broadcast the values
        total = current().emit("broadcast_like", [total, out], {"axis": None})
    return total


# each partial derivative is elementwise, so the reverse rule gives the tangent as it is;
# to_f64 and select are too (a conversion; a choice per element)
ELEMENTWISE = ("add", "sub", "mul", "div", "mod", "pow", "neg", "abs", "min", "max", "atan2", "hypot",
               "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log",
               "log1p", "log2", "log10", "sqrt", "erf", "norm_sqrt", "to_f64", "select")
_rule(*ELEMENTWISE)(linear_tangent)


@_rule("outer", "matmul")
def _bilinear(op, ts, xs, out):
    """d(a ∘ b) = da ∘ b + a ∘ db for a product that is linear in each operand (@, outer)."""
    b = current()
    (da, db), (a, bb) = ts, xs
    terms = []
    if da is not None:
        terms.append(b.emit(op.prim, [da, bb]))
    if db is not None:
        terms.append(b.emit(op.prim, [a, db]))
    if not terms:
        return None         # both tangents zero (an active operand whose tangent rule gave zero)
    return terms[0] if len(terms) == 1 else b.emit("add", terms)


@_rule("prod", "amax", "amin")
def _reduction(op, ts, xs, out):
    """d reduce(x) = sum over the reduced axes of (∂reduce/∂x · dx)."""
    if ts[0] is None:
        return None
    b = current()
    axis = op.attrs.get("axis")
    if op.prim == "prod":
        partials = b.emit("reduce_grad", [b.const(1.0, F64), xs[0], out], {"of": op.prim, "axis": axis})
    else:
        partials = extremum_grad(None, xs[0], out, axis)
    return b.emit("sum", [b.emit("mul", [partials, ts[0]])], {"axis": axis})


@_rule("sum")
def _sum(op, ts, xs, out):
    return current().emit("sum", [ts[0]], dict(op.attrs)) if ts[0] is not None else None


@_rule("transpose")
def _transpose(op, ts, xs, out):
    return current().emit("transpose", [ts[0]]) if ts[0] is not None else None


@_rule("copy")
def _copy(op, ts, xs, out):
    return ts[0]


@_rule("index", "slice")
def _read(op, ts, xs, out):
    """d(x[i]) = dx[i]; d(x[a:b]) = dx[a:b]."""
    if ts[0] is None:
        return None
    return current().emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs) if op.prim == "slice" else {})


@_rule("setitem", "setslice")
def _write(op, ts, xs, out):
    """x[i] = v: dx[i] = dv, into dx (a copy where dx may be another value's tangent too)."""
    b = current()
    darr, dv = ts[0], ts[1]
    if darr is None:
        darr = b.emit("zeros_like", [xs[0]])
    elif op.prim == "setslice" or (darr.owner is not None and darr.owner.prim not in ("zeros_like", "setitem", "copy")):
        darr = b.emit("copy", [darr])
    attrs = dict(op.attrs) if op.prim == "setslice" else {}
    return b.emit(op.prim, [darr, dv if dv is not None else b.const(0.0, F64)] + xs[2:], attrs)


@_rule("call_custom")
def _custom(op, ts, xs, out):
    raise TypingError(f"jvp cannot go through {op.attrs['fn'].__name__}: a custom_vjp function has a "
                      "reverse-mode derivative only; use grad or vjp", op.loc)


__all__ = ["ELEMENTWISE", "linear_tangent"]

