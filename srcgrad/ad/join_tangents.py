"""Forward-mode rules (``TANGENT``, see ad/tangent_rules.py) of joining and building arrays:
each op is linear in its array operand, so its tangent is the same op of the tangents.

Example:
    TANGENT["concat"]       # d concatenate([a, b]) = concatenate([da, db])
"""
from ..ir.core import current
from .rules import as_float64
from .join_rules import linspace_weights
from .tables import tangent_rule


@tangent_rule("concat")
def _concat(op, ts, xs, out):
    """concatenate([da, 0, dc]): a missing tangent is zeros shaped like its operand."""
    if all(t is None for t in ts):
        return None
    b = current()
    parts = []
    for t, x in zip(ts, xs):
        if t is None:
            t = as_float64(b.emit("zeros_like", [x]))
        parts.append(t)
    return b.emit("concat", parts, dict(op.attrs))


@tangent_rule("diagonal", "diag_embed", "roll", "tile", "repeat", "repeat_each")
def _first_linear(op, ts, xs, out):
    """op(dx, *rest): linear in its first operand; the others (sizes, offsets) are integers."""
    if ts[0] is None:
        return None
    return current().emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs))


@tangent_rule("linspace")
def _linspace(op, ts, xs, out):
    """dstart·(1 - t) + dstop·t with t = linspace(0, 1, num)."""
    b = current()
    d_start, d_stop = ts[:2]
    if d_start is None and d_stop is None:
        return None
    t = linspace_weights(xs[2], op.attrs["endpoint"])
    terms = []
    if d_start is not None:
        terms.append(b.emit("mul", [b.emit("sub", [b.const(1.0), t]), d_start]))
    if d_stop is not None:
        terms.append(b.emit("mul", [t, d_stop]))
    return terms[0] if len(terms) == 1 else b.emit("add", terms)


@tangent_rule("kron")
def _kron(op, ts, xs, out):
    """d kron(a, b) = kron(da, b) + kron(a, db)."""
    b = current()
    terms = [b.emit("kron", [ts[0], xs[1]])] if ts[0] is not None else []
    terms += [b.emit("kron", [xs[0], ts[1]])] if ts[1] is not None else []
    return None if not terms else terms[0] if len(terms) == 1 else b.emit("add", terms)
