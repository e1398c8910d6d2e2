"""Reverse-mode rules of linear algebra and contractions (np.linalg, np.einsum and what lowers
to it), written as the math; rules.py imports this module to fill ``ADJOINT``.

Conventions: a singular matrix makes the gradients of det and slogdet raise numpy's
LinAlgError('Singular matrix') (they need inv(A): HIPS autograd's rule); cholesky's gradient
is PyTorch's (symmetric: A is taken as symmetric, though numpy reads its lower triangle);
the 2-norm's gradient at the zero vector is 0 (torch.linalg.norm's); the singular values'
is U diag(g) V^T without the terms of a zero singular value (so 0 at the zero matrix).

Example:
    ADJOINT["inv"]        # -inv(A).T @ g @ inv(A).T
"""
from ..ir.core import current, select
from .rules import _eq, _nonzero
from .tables import adjoint_rule, no_derivative



def _emit(prim, *args, **attrs):
    return current().emit(prim, list(args), attrs)


def _t(x):
    return _emit("transpose", x)


def einsum_operand_grad(g, xs, k, inputs, output):
    """The adjoint of operand k of einsum(inputs -> output): the einsum of the other operands
    and ``g`` into operand k's subscripts; an index only operand k has is summed in the primal,
    so its adjoint is spread along it (a ones operand of k's shape supplies its size); an
    index repeated in operand k ('ii') makes the adjoint a diagonal (an output index repeated)."""
    subs = [s for j, s in enumerate(inputs) if j != k]
    vals = [x for j, x in enumerate(xs) if j != k]
    if output:
        subs, vals = subs + [output], vals + [g]
    if set(inputs[k]) - set("".join(subs)):
        ones = _emit("broadcast_like", current().const(1.0), xs[k], axis=None)
        subs, vals = subs + [inputs[k]], vals + [ones]
    out = _emit("einsum", *vals, spec=(tuple(subs), inputs[k]))
    return out if output else g * out


@adjoint_rule("einsum")
def _einsum(g, *xs_out):
    """d einsum: each operand's adjoint is an einsum itself."""
    *xs, out = xs_out
    inputs, output = out.owner.attrs["spec"]
    return tuple((lambda k=k: einsum_operand_grad(g, xs, k, inputs, output)) for k in range(len(xs)))


# sqrt's derivative except at 0, where it is 0: the gradient of ||x|| at x = 0 is 0 (PyTorch
# masks it the same way); a NaN stays NaN
adjoint_rule("norm_sqrt")(lambda g, s, out: (lambda: select(_eq(out, 0.0), 0.0, g * 0.5 / _nonzero(out)),))
# d det(A) = det(A) tr(A^-1 dA): the adjoint det(A) g A^-T (singular A: inv raises, as HIPS autograd)
adjoint_rule("det")(lambda g, a, out: (lambda: (g * out) * _t(_emit("inv", a)),))
adjoint_rule("slogdet_log")(lambda g, a, out: (lambda: g * _t(_emit("inv", a)),))
# d inv(A) = -inv(A) dA inv(A)
adjoint_rule("inv")(lambda g, a, out: (lambda: -_emit("matmul", _emit("matmul", _t(out), g), _t(out)),))
adjoint_rule("cholesky")(lambda g, a, out: (lambda: _emit("cholesky_grad", g, out),))
# d s_j = u_j^T dA v_j: the adjoint U diag(g) V^T (svdvals_grad recomputes U and V; terms of s_j == 0 dropped)
adjoint_rule("svdvals")(lambda g, a, out: (lambda: _emit("svdvals_grad", g, a, mode="vjp"),))


@adjoint_rule("solve")
def _solve(g, a, b, out):
    """x = A^-1 b: gb = A^-T g, gA = -gb x^T."""
    def gb():
        return _emit("solve", _t(a), g)

    def ga():
        h = gb()
        return -(_emit("outer", h, out) if out.type.ndim == 1 else _emit("matmul", h, _t(out)))
    return ga, gb


# piecewise constant
no_derivative("slogdet_sign")
