"""Derivative rules of the shape primitives (ir/shape_primitives.py), reverse and forward.

Each is linear and moves elements only: the adjoint undoes the move (reshape back, the
inverse permutation, the same flip, expand_dims for squeeze), the tangent repeats it.

Example:
    ADJOINT["restride"]      # d(x.transpose(axes)) -> g.transpose(argsort(axes))
"""
from ..ir.core import current
from ..ir.shape_eval import inverse_restride
from ..ir.types import F32, F64, I64
from .rules import as_float64
from .tables import adjoint_rule, tangent_rule

_FLOATS = (F64, F32)


def _emit(prim, operands, attrs=None):
    return current().emit(prim, list(operands), attrs)


def _sizes_of(x):
    return [_emit("shape", [x], {"axis": k}) for k in range(x.type.ndim)]


@adjoint_rule("reshape")
def _reshape(g, x, *sizes_and_out):
    """g reshaped back to x's shape; the sizes are ints."""
    return (lambda: _emit("reshape", [g] + _sizes_of(x)),) + (None,) * (len(sizes_and_out) - 1)


@adjoint_rule("restride")
def _restride(g, x, out):
    kind, axes = inverse_restride(out.owner.attrs["kind"], out.owner.attrs["axes"])
    return (lambda: _emit("restride", [g], {"kind": kind, "axes": axes}),)


def _float_cast(x, out):
    return x.type.dtype in _FLOATS and out.type.dtype in _FLOATS


# float -> float: the identity on values (float32 rounding has derivative 1, as in PyTorch);
# to or from ints and bools: no derivative (piecewise constant, as PyTorch refuses it)
adjoint_rule("astype")(lambda g, x, out: (lambda: g,) if _float_cast(x, out) else (None,))


@adjoint_rule("pack")
def _pack(g, *values_and_out):
    """Element k of the literal gets g at its place (row-major)."""
    values, out = values_and_out[:-1], values_and_out[-1]
    shape = out.owner.attrs["shape"]
    b = current()

    def element(k):
        place = [k] if len(shape) == 1 else list(divmod(k, shape[1]))
        return lambda: b.emit("index", [g] + [b.const(i, I64) for i in place])
    return tuple(element(k) for k in range(len(values)))


@adjoint_rule("stack")
def _stack(g, *arrays_and_out):
    """Array k of the list gets row k of g (a copy: adjoints are updated in place)."""
    b = current()

    def row(k):
        return lambda: b.emit("copy", [b.emit("slice", [g, b.const(k, I64)], {"spec": (("i",),)})])
    return tuple(row(k) for k in range(len(arrays_and_out) - 1))


@tangent_rule("reshape", "restride")
def _moved(op, ts, xs, out):
    """d move(x) = move(dx)."""
    return _emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs)) if ts[0] is not None else None


@tangent_rule("astype")
def _astype(op, ts, xs, out):
    if ts[0] is None or not _float_cast(xs[0], out):
        return None
    # the identity, as the adjoint: a tangent is not rounded to float32 (it stays or becomes float64)
    return as_float64(ts[0])


@tangent_rule("pack", "stack")
def _gathered(op, ts, xs, out):
    """d np.array([a, b]) = np.array([da, db]), a zero for an operand without a tangent."""
    if all(t is None for t in ts):
        return None
    b = current()
    zero = (lambda x: b.const(0.0, F64)) if op.prim == "pack" else (lambda x: _emit("zeros_like", [x]))
    tangents = [t if t is not None else zero(x) for t, x in zip(ts, xs)]
    return _emit(op.prim, tangents, dict(op.attrs, dtype=F64))       # not rounded to float32, as astype's
