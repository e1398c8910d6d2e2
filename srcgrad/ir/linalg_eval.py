"""The meaning of the linear-algebra primitives, as numpy computes them: the interpreter's
``EVAL`` entries (ir/interpret.py merges ``LINALG_EVAL``) and the helpers the python backend's
generated code calls (``einsum``, ``cholesky_grad``, ``svdvals_grad``).

Example:
    >>> einsum("ij,j->i", np.eye(2), np.ones(2))
    array([1., 1.])
"""
import numpy as np


def spec_text(spec):
    """An einsum op's ``spec`` attribute, (input subscripts, output subscripts), as numpy writes it."""
    return ",".join(spec[0]) + "->" + spec[1]


def einsum(subscripts, *operands):
    """np.einsum(subscripts, *operands) with explicit subscripts, except that an index must
    have one size in every operand (numpy also stretches a size of 1: refused, as the llvm
    backend does, with a ValueError), and that an output index may repeat ('i->ii': the
    values on the diagonal, zeros elsewhere; the gradient of a diagonal read 'ii->i')."""
    inputs, output = subscripts.split("->")
    inputs = inputs.split(",")
    sizes = {}
    for sub, x in zip(inputs, operands):
        for c, n in zip(sub, np.shape(x)):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"np.einsum: the index '{c}' has size {sizes[c]} in one operand and {n} "
                                 f"in another")
    if len(set(output)) < len(output):      # made by gradients only: the values on a diagonal, 0 elsewhere
        unique = "".join(dict.fromkeys(output))
        out = np.zeros([sizes[c] for c in output])
        np.einsum(output + "->" + unique, out)[...] = np.einsum(",".join(inputs) + "->" + unique, *operands)
        return out
    out = np.einsum(subscripts, *operands)
    return float(out) if not output else np.asarray(out, dtype=np.float64)


def cholesky_grad(gl, lower):
    """The adjoint of A from the adjoint ``gl`` of L = cholesky(A): PyTorch's formula
    (cholesky_backward), L^-T P L^-1 with P = sym(tril(L^T gL)), symmetric in A."""
    p = np.tril(lower.T @ gl)
    p = 0.5 * (p + np.tril(p, -1).T)
    x = np.linalg.solve(lower.T, p)                  # L^-T P
    return np.linalg.solve(lower.T, x.T).T           # (L^-T P) L^-1


def svdvals(a):
    """np.linalg.svd(a, compute_uv=False) in float64: LinAlgError('SVD did not converge') for a NaN."""
    return np.linalg.svd(np.asarray(a, dtype=np.float64), compute_uv=False)


def svdvals_grad(t, a, mode):
    """The derivative of the singular values of ``a`` (A = U diag(s) V^T, the reduced SVD), the
    terms of an s_j that is exactly 0 dropped (d|x| = 0 at 0): with ``mode`` 'vjp' the adjoint
    U diag(t) V^T of the adjoint t of s; with 'jvp' the tangent diag(U^T t V) of s along t = dA."""
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        # numpy's LinAlgError for a NaN; an infinity: NaNs (the singular values are NaN), not
        # np.linalg.svd with U and V, which can loop forever there (OpenBLAS's LAPACK)
        svdvals(a)
        return np.full(a.shape if mode == "vjp" else min(a.shape), np.nan)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    keep = s != 0.0
    if mode == "vjp":
        return (u * np.where(keep, t, 0.0)) @ vh
    return np.where(keep, np.einsum("ik,ij,kj->k", u, np.asarray(t, dtype=np.float64), vh), 0.0)


def _single(f):
    return lambda it, op, ins: f(*ins)


def _slogdet(part):
    return lambda it, op, ins: float(np.linalg.slogdet(ins[0])[part])


LINALG_EVAL = {
    "einsum": lambda it, op, ins: einsum(spec_text(op.attrs["spec"]), *ins),
    "norm_sqrt": _single(np.sqrt),
    "det": _single(lambda a: float(np.linalg.det(a))),
    "slogdet_sign": _slogdet(0),
    "slogdet_log": _slogdet(1),
    "inv": _single(np.linalg.inv),
    "solve": _single(np.linalg.solve),
    "cholesky": _single(np.linalg.cholesky),
    "cholesky_grad": _single(cholesky_grad),
    "svdvals": _single(svdvals),
    "svdvals_grad": lambda it, op, ins: svdvals_grad(*ins, op.attrs["mode"]),
}
