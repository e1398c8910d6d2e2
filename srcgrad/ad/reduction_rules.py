"""Derivative rules (reverse: ``ADJOINT``; forward: ``TANGENT``) of the reductions family's
primitives: keepdims' new axis, the scans np.cumsum / np.cumprod, np.argmax / np.argmin and
the float rounding functions (np.floor, np.ceil, np.trunc, np.rint).

Example:
    ADJOINT["cumsum"]       # d cumsum: the adjoint summed from the end
"""
from ..ir.core import current
from .tables import adjoint_rule, no_derivative, tangent_rule


def _emit(prim, args, **attrs):
    return current().emit(prim, list(args), attrs)


# keepdims' axis of size 1: its adjoint sums that axis away again
adjoint_rule("expand_dims")(lambda g, x, out: (
    lambda: _emit("sum", [g], axis=out.owner.attrs["axis"]),))
# cumsum is linear: its adjoint is the cumulative sum taken from the other end
adjoint_rule("cumsum")(lambda g, x, out: (
    lambda: _emit("cumsum", [g], axis=out.owner.attrs["axis"], reverse=not out.owner.attrs.get("reverse")),))
# exact where x holds zeros (products of the other factors, no division), as torch.cumprod's
adjoint_rule("cumprod")(lambda g, x, out: (
    lambda: _emit("cumprod_grad", [g, x], axis=out.owner.attrs["axis"], mode="vjp"),))
# piecewise constant (rounding) or not a number (indices, the gradient helper): no derivative;
# np.floor & co have derivative 0 everywhere, as torch.floor (also at the jumps)
# np.sort is x taken along argsort(x): the adjoint puts g back where each element came from
adjoint_rule("take_along")(lambda g, x, idx, out: (
    lambda: _emit("put_along", [g, idx], axis=out.owner.attrs["axis"]), None))
adjoint_rule("put_along")(lambda g, x, idx, out: (
    lambda: _emit("take_along", [g, idx], axis=out.owner.attrs["axis"]), None))
no_derivative("argsort", "argmax", "argmin", "float_floor", "float_ceil", "float_trunc", "float_rint")


@tangent_rule("expand_dims", "cumsum", "take_along", "put_along")
def _linear(op, ts, xs, out):
    """A linear op's tangent is the op applied to the tangent (of its first operand: the
    indices of take_along and put_along have none)."""
    return current().emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs)) if ts[0] is not None else None


@tangent_rule("cumprod")
def _cumprod(op, ts, xs, out):
    if ts[0] is None:
        return None
    return _emit("cumprod_grad", [ts[0], xs[0]], axis=op.attrs["axis"], mode="jvp")
