"""Reverse-mode rules (``ADJOINT``, see ad/rules.py) of joining, splitting and building
arrays. Joining is linear and moves elements around without changing them, so each operand's
adjoint is the part of ``g`` its elements went to: a slice of ``g`` for np.concatenate (a
copy, since the engine may update an adjoint in place), the diagonal of ``g`` for a diagonal
built from a vector, ``g`` rolled back for np.roll. np.split is made of slices (array_rules.py).

Example:
    ADJOINT["roll"]       # d roll(x, s) = roll(g, -s)
"""
from ..ir.core import current
from .tables import adjoint_rule, no_derivative

_WHOLE = ("s", False, False, False)       # a slice spec entry for `:`


def _emit(prim, args, **attrs):
    return current().emit(prim, list(args), attrs)


def _shape(x, axis):
    return _emit("shape", [x], axis=axis)


def concat_offset(xs, expand, axis, k):
    """Where operand ``k`` starts along ``axis`` of the joined array."""
    b = current()
    off = b.const(0)
    for x, e in zip(xs[:k], expand[:k]):
        off = _emit("add", [off, b.const(1) if e else _shape(x, axis)])
    return off


@adjoint_rule("concat")
def _concat(g, *operands):
    """dx_k = g[..., off_k : off_k + n_k] (np.stack: g[..., k]) along the joined axis."""
    *xs, out = operands
    axis, expand = out.owner.attrs["axis"], out.owner.attrs["expand"]

    def part(k):
        def thunk():
            off = concat_offset(xs, expand, axis, k)
            if expand[k]:
                piece = _emit("slice", [g, off], spec=((_WHOLE,) * axis) + (("i",),))
            else:
                stop = _emit("add", [off, _shape(xs[k], axis)])
                piece = _emit("slice", [g, off, stop], spec=((_WHOLE,) * axis) + (("s", True, True, False),))
            return _emit("copy", [piece])
        return thunk
    return tuple(part(k) for k in range(len(xs)))


# d diagonal(x, k) = g placed on diagonal k of zeros shaped like x; and the other way round
adjoint_rule("diagonal")(lambda g, x, k, out: (
    lambda: _emit("diag_embed", [g, _shape(x, 0), _shape(x, 1), k]), None))
adjoint_rule("diag_embed")(lambda g, v, n, m, k, out: (lambda: _emit("diagonal", [g, k]), None, None, None))
# np.roll is a permutation: its adjoint rolls back
adjoint_rule("roll")(lambda g, x, shift, out: (
    lambda: _emit("roll", [g, _emit("neg", [shift])], axis=out.owner.attrs.get("axis")), None))


def linspace_weights(num, endpoint):
    """t = linspace(0, 1, num): y_i = start·(1 - t_i) + stop·t_i, so dy_i/dstart = 1 - t_i and
    dy_i/dstop = t_i (also for numpy's last point, set to stop exactly, and num = 1: [start])."""
    b = current()
    return _emit("linspace", [b.const(0.0), b.const(1.0), num], endpoint=endpoint)


def _linspace(g, start, stop, num, out):
    endpoint = out.owner.attrs["endpoint"]
    t = lambda: linspace_weights(num, endpoint)     # noqa: E731
    return (lambda: _emit("sum", [_emit("mul", [g, _emit("sub", [current().const(1.0), t()])])], axis=None),
            lambda: _emit("sum", [_emit("mul", [g, t()])], axis=None), None)


adjoint_rule("linspace")(_linspace)
# every copy of an element gives it its gradient: the copies' gradients summed
adjoint_rule("tile")(lambda g, x, *rest: (lambda: _emit("tile_sum", [g, x] + list(rest[:-1])),) + (None,) * (
    len(rest) - 1))
adjoint_rule("repeat")(lambda g, x, r, out: (
    lambda: _emit("repeat_sum", [g, x, r], axis=out.owner.attrs.get("axis")), None))
adjoint_rule("repeat_each")(lambda g, x, counts, out: (
    lambda: _emit("repeat_each_sum", [g, x, counts], axis=out.owner.attrs.get("axis")), None))
# bilinear: each operand's adjoint contracts g with the other operand
adjoint_rule("kron")(lambda g, a, b, out: (lambda: _emit("kron_grad", [g, b, a], wrt=0),
                                        lambda: _emit("kron_grad", [g, a, b], wrt=1)))
# no derivative: an integer (the size of a part) and a mask of bools
no_derivative("split_size")
no_derivative("tri")
