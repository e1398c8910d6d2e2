"""Forward-mode rules of linear algebra and contractions; tangent_rules.py imports this module
to fill ``TANGENT`` (the conventions are those of linalg_rules.py).

Example:
    >>> TANGENT["solve"]      # d(A^-1 b) = A^-1 (db - dA x)
"""
from ..ir.core import current
from ..ir.primitives import table_entry
from .tangent_rules import TANGENT


def _emit(prim, *args, **attrs):
    return current().emit(prim, list(args), attrs)


def _add(terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = _emit("add", total, t)
    return total


@table_entry(TANGENT, "einsum")
def _einsum(op, ts, xs, out):
    """Multilinear: the sum over operands of the einsum with that operand's tangent."""
    return _add([_emit("einsum", *(xs[:k] + [t] + xs[k + 1:]), spec=op.attrs["spec"])
                 for k, t in enumerate(ts) if t is not None])


def _trace_inv(a, da):
    """tr(A^-1 dA), as the sum of A^-T * dA."""
    return _emit("sum", _emit("mul", _emit("transpose", _emit("inv", a)), da), axis=None)


@table_entry(TANGENT, "det")
def _det(op, ts, xs, out):
    return None if ts[0] is None else _emit("mul", out, _trace_inv(xs[0], ts[0]))


@table_entry(TANGENT, "slogdet_log")
def _slogdet_log(op, ts, xs, out):
    return None if ts[0] is None else _trace_inv(xs[0], ts[0])


@table_entry(TANGENT, "slogdet_sign", "cholesky_grad", "cholesky_tangent")
def _none(op, ts, xs, out):
    return None


@table_entry(TANGENT, "inv")
def _inv(op, ts, xs, out):
    return None if ts[0] is None else _emit("neg", _emit("matmul", _emit("matmul", out, ts[0]), out))


@table_entry(TANGENT, "solve")
def _solve(op, ts, xs, out):
    """x = A^-1 b: dx = A^-1 (db - dA x)."""
    (da, db), (a, _) = ts, xs
    rhs = _add([db, None if da is None else _emit("neg", _emit("matmul", da, out))])
    return None if rhs is None else _emit("solve", a, rhs)


@table_entry(TANGENT, "cholesky")
def _cholesky(op, ts, xs, out):
    return None if ts[0] is None else _emit("cholesky_tangent", ts[0], out)
