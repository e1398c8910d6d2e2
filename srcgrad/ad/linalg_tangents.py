"""Forward-mode rules of linear algebra and contractions; tangent_rules.py imports this module
to fill ``TANGENT`` (the conventions are those of linalg_rules.py).

Example:
    TANGENT["solve"]      # d(A^-1 b) = A^-1 (db - dA x)
"""
from ..errors import TypingError
from ..ir.core import current, select
from ..ir.types import F64
from .tables import tangent_rule


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


@tangent_rule("einsum")
def _einsum(op, ts, xs, out):
    """Multilinear: the sum over operands of the einsum with that operand's tangent."""
    return _add([_emit("einsum", *(xs[:k] + [t] + xs[k + 1:]), spec=op.attrs["spec"])
                 for k, t in enumerate(ts) if t is not None])


def _trace_inv(a, da):
    """tr(A^-1 dA), as the sum of A^-T * dA."""
    return _emit("sum", _emit("mul", _emit("transpose", _emit("inv", a)), da), axis=None)


@tangent_rule("det")
def _det(op, ts, xs, out):
    return None if ts[0] is None else _emit("mul", out, _trace_inv(xs[0], ts[0]))


@tangent_rule("slogdet_log")
def _slogdet_log(op, ts, xs, out):
    return None if ts[0] is None else _trace_inv(xs[0], ts[0])


@tangent_rule("slogdet_sign")
def _none(op, ts, xs, out):
    """sign(det A): piecewise constant."""
    return None


@tangent_rule("cholesky_grad", "svdvals_grad")
def _linear_in_g(op, ts, xs, out):
    """cholesky_grad(gL, L) and svdvals_grad(g, A) (made by first derivatives: ad/linalg_rules.py)
    are linear in the gradient g, whose tangent goes through the same op; they depend on L and
    A too, through the factorisation, whose derivative is not built: where L or A has a
    tangent (a Hessian in the matrix), a clear error, never the zero it once silently was."""
    if ts[1] is not None:
        what = "np.linalg.cholesky" if op.prim == "cholesky_grad" else \
            "the singular values (np.linalg.svd, norm(A, 2), norm(A, 'nuc'), matrix_norm, cond)"
        raise TypingError(f"jvp cannot differentiate {op.prim} (made by a first derivative): the second "
                          f"derivative of {what} with respect to the matrix is not built yet", op.loc)
    return None if ts[0] is None else _emit(op.prim, ts[0], xs[1], **op.attrs)


@tangent_rule("svdvals")
def _svdvals(op, ts, xs, out):
    """d s_j = u_j^T dA v_j, the diagonal of U^T dA V (0 where s_j == 0, as the adjoint)."""
    return None if ts[0] is None else _emit("svdvals_grad", ts[0], xs[0], mode="jvp")


@tangent_rule("inv")
def _inv(op, ts, xs, out):
    return None if ts[0] is None else _emit("neg", _emit("matmul", _emit("matmul", out, ts[0]), out))


@tangent_rule("solve")
def _solve(op, ts, xs, out):
    """x = A^-1 b: dx = A^-1 (db - dA x)."""
    (da, db), (a, _) = ts, xs
    rhs = _add([db, None if da is None else _emit("neg", _emit("matmul", da, out))])
    return None if rhs is None else _emit("solve", a, rhs)


@tangent_rule("cholesky")
def _cholesky(op, ts, xs, out):
    """dL = L Φ(L^-1 S L^-T), S = (dA + dA^T) / 2, Φ the lower triangle with half its diagonal:
    the derivative for symmetric A (numpy reads A's lower triangle; PyTorch's convention), so
    that jvp(t) is <grad, t> for every t."""
    if ts[0] is None:
        return None
    low = out
    s = _emit("mul", _emit("add", ts[0], _emit("transpose", ts[0])), current().const(0.5))
    y = _emit("solve", low, s)                                                   # L^-1 S
    z = _emit("transpose", _emit("solve", low, _emit("transpose", y)))          # L^-1 S L^-T
    return _emit("matmul", low, _emit("mul", _phi_mask(low), z))


def _phi_mask(low):
    """The n×n matrix of Φ: 1 below the diagonal, 1/2 on it, 0 above."""
    b = current()
    n = _emit("shape", low, axis=0)
    index = _emit("to_f64", _emit("arange", b.const(0), n, b.const(1)))
    rows = _emit("outer", index, _emit("full", n, value=1.0, dtype=F64))
    cols = _emit("transpose", rows)
    half = select(_emit("eq", rows, cols), 0.5, 0.0)
    return select(_emit("gt", rows, cols), 1.0, half)
