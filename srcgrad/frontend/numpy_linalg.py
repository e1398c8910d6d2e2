"""numpy's linear algebra and contractions, as entries of the CALLS table (call_table.py merges
``LINALG_CALLS``): np.linalg.norm/det/slogdet/inv/solve/cholesky, the singular values
(np.linalg.svd(A, compute_uv=False), np.linalg.svdvals), np.einsum with explicit subscripts,
and np.tensordot, np.inner, np.vdot, np.matmul, which lower to einsum (as do ``@`` and np.dot
of arrays of more than two dimensions: ``matmul_any_rank``).

Norms are sums, maxima and minima of |x| (their gradients follow those of np.sum, np.abs and
np.max: d|x| = 0 at 0, ties share evenly, as PyTorch's); the 2-norm is ``norm_sqrt`` of a sum
of squares, whose gradient at the zero vector is 0, as torch.linalg.norm's; the matrix norms
ord=2, -2 and 'nuc' are the largest, smallest and sum of the singular values (``svdvals``).

Example:
    LINALG_CALLS[np.linalg.det].lower      # emits the ``det`` primitive
"""
import ast
import string

import numpy as np

from ..trees import Tree
from .callee import Callee

from ..ir.types import F64

LETTERS = string.ascii_letters


# ---------------------------------------------------------------------- compile-time arguments
def _static(lw, node, what):
    """The value of an argument that must be known at compile time: a number, a string,
    np.inf, -np.inf, None, True/False, or a tuple or list of these."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _static(lw, node.operand, what)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_static(lw, e, what) for e in node.elts)
    if isinstance(node, (ast.Name, ast.Attribute)):
        v = lw.global_object(node)
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return v.item() if isinstance(v, np.generic) else v
    lw.unsupported(node, f"{what} given as `{ast.unparse(node)}`", f"write {what} as a constant (it decides "
                                                                   "which computation is compiled)")


def _options(lw, node, name, first, names, defaults):
    """The compile-time options of a call: positional after its ``first`` arrays, then keywords."""
    given = dict(zip(names, node.args[first:]))
    if len(node.args) - first > len(names):
        lw.typing_error(node, f"np.{name} takes at most {first + len(names)} arguments here")
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in given:
            lw.unsupported(node, f"the keyword {kw.arg}= of np.{name}",
                           f"np.{name} accepts {', '.join(n + '=' for n in names)}")
        given[kw.arg] = kw.value
    return [(_static(lw, given[n], f"{n}=") if n in given else d) for n, d in zip(names, defaults)]


def _axis(lw, node, axis, ndim):
    if not isinstance(axis, int) or isinstance(axis, bool) or not -ndim <= axis < ndim:
        lw.typing_error(node, f"axis {axis!r} is out of range for an array of {ndim} dimensions")
    return axis % ndim


def _float_arrays(lw, node, name, args, ranks=None):
    for a in args:
        if not a.type.is_array:
            lw.typing_error(node, f"np.{name} takes arrays here, got {a.type}")
        if ranks is not None and a.type.ndim not in ranks:
            lw.typing_error(node, f"np.{name} takes arrays of {' or '.join(map(str, ranks))} dimensions here, "
                                  f"got {a.type}")
    return lw.to_float_array_operands(node, *args)


# ---------------------------------------------------------------------- norms
def _abs_sum(lw, node, x, axis):
    return lw.emit(node, "sum", [lw.emit(node, "abs", [x])], {"axis": axis})


def _two_norm(lw, node, x, axis):
    return lw.emit(node, "norm_sqrt", [lw.emit(node, "sum", [lw.emit(node, "mul", [x, x])], {"axis": axis})])


def _vector_norm(lw, node, x, ord, axis):
    if ord is None or ord == 2:
        return _two_norm(lw, node, x, axis)
    if ord == 1:
        return _abs_sum(lw, node, x, axis)
    if ord == 0:        # how many elements are not 0: piecewise constant, its gradient 0 (PyTorch's)
        nonzero = lw.emit(node, "ne", [x, lw.b.const(0.0)])
        return lw.emit(node, "sum", [lw.emit(node, "to_f64", [nonzero])], {"axis": axis})
    if ord in (np.inf, -np.inf):
        return lw.emit(node, "amax" if ord > 0 else "amin", [lw.emit(node, "abs", [x])], {"axis": axis})
    lw.unsupported(node, f"np.linalg.norm with ord={ord!r} for vectors (yet)",
                   "ord=None/2, 1, 0, np.inf and -np.inf work; for another p write "
                   "np.sum(np.abs(x) ** p) ** (1.0 / p)")


def _matrix_norm(lw, node, x, ord, rows, cols):
    """numpy's matrix norms of a 2-d array, ``rows``/``cols`` its axes as given by axis=(r, c)."""
    if ord is None or ord == "fro":
        return _two_norm(lw, node, x, None)
    if ord in (1, -1):          # the largest (smallest) column sum of |x|
        return lw.emit(node, "amax" if ord > 0 else "amin", [_abs_sum(lw, node, x, rows)], {"axis": 0})
    if ord in (np.inf, -np.inf):        # the largest (smallest) row sum
        return lw.emit(node, "amax" if ord > 0 else "amin", [_abs_sum(lw, node, x, cols)], {"axis": 0})
    if ord in (2, -2, "nuc"):           # of the singular values (a transpose has the same: axis=(1, 0))
        s = lw.emit(node, "svdvals", [x])
        return lw.emit(node, {2: "amax", -2: "amin", "nuc": "sum"}[ord], [s], {"axis": None if ord == "nuc" else 0})
    lw.unsupported(node, f"np.linalg.norm with ord={ord!r} for matrices",
                   "ord=None/'fro', 'nuc', 1, -1, 2, -2, np.inf and -np.inf work")


def _norm(lw, node, args, env):
    """np.linalg.norm(x, ord=None, axis=None, keepdims=False)."""
    (x,) = _float_arrays(lw, node, "linalg.norm", args[:1])
    ord, axis, keepdims = _options(lw, node, "linalg.norm", 1, ("ord", "axis", "keepdims"), (None, None, False))
    if keepdims not in (True, False):
        lw.unsupported(node, f"np.linalg.norm with keepdims={keepdims!r}", "keepdims=True or keepdims=False")
    norm = _norm_of(lw, node, x, ord, axis)
    if not keepdims:
        return norm
    reduced = [_axis(lw, node, axis, x.type.ndim)] if isinstance(axis, int) else range(x.type.ndim)
    return _keep_dims(lw, node, norm, x.type.ndim, set(reduced))


def _keep_dims(lw, node, norm, ndim, reduced):
    """keepdims=True: the reduced axes kept with size 1 — a product with ones of size 1 along
    them (an einsum, or a broadcast of a number), so no reshape is needed."""
    ones = lw.emit(node, "full", [lw.b.const(1)] * (len(reduced) if norm.type.is_array else ndim),
                   {"value": 1.0, "dtype": F64})
    if not norm.type.is_array:
        return lw.emit(node, "mul", [norm, ones])
    letters = LETTERS[:ndim]
    kept = "".join(c for k, c in enumerate(letters) if k not in reduced)
    spread = "".join(c for k, c in enumerate(letters) if k in reduced)
    return emit_einsum(lw, node, ((kept, spread), letters), [norm, ones])


def _norm_of(lw, node, x, ord, axis):
    ndim = x.type.ndim
    if isinstance(axis, tuple):
        if len(axis) != 2 or ndim != 2:
            lw.unsupported(node, f"np.linalg.norm with axis={axis!r} here", "a pair of axes works for matrices")
        rows, cols = (_axis(lw, node, a, ndim) for a in axis)
        if rows == cols:
            lw.typing_error(node, "np.linalg.norm: duplicate axes given")
        return _matrix_norm(lw, node, x, ord, rows, cols)
    if axis is not None:
        return _vector_norm(lw, node, x, ord, _axis(lw, node, axis, ndim))
    if ndim == 1:
        return _vector_norm(lw, node, x, ord, None)
    if ndim == 2:
        return _matrix_norm(lw, node, x, ord, 0, 1)
    if ord is not None:
        lw.typing_error(node, "np.linalg.norm: improper number of dimensions to norm (an ord needs a vector or "
                              "a matrix, or axis=)")
    return _two_norm(lw, node, x, None)


# ---------------------------------------------------------------------- factorisations
def _one_matrix(prim, name):
    def lower(lw, node, args, env):
        (a,) = _float_arrays(lw, node, f"linalg.{name}", args, ranks=(2,))
        return lw.emit(node, prim, [a])
    return Callee(lower, arity=1)


def _slogdet(lw, node, args, env):
    """np.linalg.slogdet(A): numpy's named tuple (sign, logabsdet), a container (unpacked,
    indexed, or read by field name)."""
    (a,) = _float_arrays(lw, node, "linalg.slogdet", args, ranks=(2,))
    return Tree(_SLOGDET, [lw.emit(node, "slogdet_sign", [a]), lw.emit(node, "slogdet_log", [a])],
                _SLOGDET._fields)


_SLOGDET = type(np.linalg.slogdet(np.eye(1)))      # numpy's SlogdetResult


def _svd(lw, node, args, env):
    """np.linalg.svd(A, compute_uv=False): the singular values; U and Vh are not computed here."""
    (a,) = _float_arrays(lw, node, "linalg.svd", args[:1], ranks=(2,))
    _, compute_uv, hermitian = _options(lw, node, "linalg.svd", 1, ("full_matrices", "compute_uv", "hermitian"),
                                        (True, True, False))
    if compute_uv:          # numpy's test too: compute_uv=0 gives the singular values
        lw.unsupported(node, "np.linalg.svd with its singular vectors (U, S, Vh = np.linalg.svd(A))",
                       "np.linalg.svd(A, compute_uv=False) or np.linalg.svdvals(A) give the singular values, "
                       "np.linalg.norm(A, 2), -2 and 'nuc' the norms made of them")
    if hermitian:
        lw.unsupported(node, f"np.linalg.svd with hermitian={hermitian!r}",
                       "leave hermitian=False (with True numpy reads one triangle of A and takes A as symmetric)")
    return lw.emit(node, "svdvals", [a])


def _svdvals(lw, node, args, env):
    """np.linalg.svdvals(A) (numpy 2): np.linalg.svd(A, compute_uv=False)."""
    (a,) = _float_arrays(lw, node, "linalg.svdvals", args, ranks=(2,))
    return lw.emit(node, "svdvals", [a])


def _solve(lw, node, args, env):
    a, b = args
    (a,) = _float_arrays(lw, node, "linalg.solve", [a], ranks=(2,))
    (b,) = _float_arrays(lw, node, "linalg.solve", [b], ranks=(1, 2))
    return lw.emit(node, "solve", [a, b])


# ---------------------------------------------------------------------- contractions
def einsum_spec(lw, node, text, n_operands):
    """The (inputs, output) of explicit einsum subscripts ``text``, each checked."""
    if not isinstance(text, str):
        lw.unsupported(node, "np.einsum without a subscripts string first", "np.einsum('ij,j->i', A, x)")
    text = text.replace(" ", "")
    if "..." in text:
        lw.unsupported(node, "np.einsum with '...' (broadcast dimensions)", "name every axis: 'bij,bjk->bik'")
    if "->" not in text:
        lw.unsupported(node, "np.einsum in implicit mode (no '->')",
                       f"write the output's subscripts, e.g. '{text}->...' with the indices to keep")
    left, output = text.split("->")
    inputs = tuple(left.split(","))
    if len(inputs) != n_operands:
        lw.typing_error(node, f"np.einsum: {len(inputs)} operand subscripts for {n_operands} operands")
    for sub in inputs + (output,):
        bad = [c for c in sub if c not in LETTERS]
        if bad:
            lw.typing_error(node, f"np.einsum: invalid subscript {bad[0]!r} in '{text}'")
    if len(set(output)) != len(output):
        lw.typing_error(node, f"np.einsum: an output subscript appears twice in '{text}'")
    missing = set(output) - set("".join(inputs))
    if missing:
        lw.typing_error(node, f"np.einsum: output subscript {sorted(missing)[0]!r} does not appear in the inputs")
    return inputs, output


def _einsum(lw, node, args, env):
    """np.einsum('ij,jk->ik', A, B): explicit subscripts, any number of operands."""
    if node.keywords:
        lw.unsupported(node, f"the keyword {node.keywords[0].arg}= of np.einsum", "call np.einsum(subscripts, *arrays)")
    if not node.args:
        lw.typing_error(node, "np.einsum needs subscripts and arrays")
    operands = _float_arrays(lw, node, "einsum", args[1:])
    text = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
    return emit_einsum(lw, node, einsum_spec(lw, node, text, len(operands)), operands)


def emit_einsum(lw, node, spec, operands):
    for sub, x in zip(spec[0], operands):
        if len(sub) != x.type.ndim:
            lw.typing_error(node, f"np.einsum: the subscripts '{sub}' need an array of {len(sub)} dimensions, "
                                  f"got {x.type}")
    return lw.emit(node, "einsum", list(operands), {"spec": (tuple(spec[0]), spec[1])})


def _tensordot(lw, node, args, env):
    """np.tensordot(a, b, axes=2 | k | (a_axes, b_axes))."""
    a, b = _float_arrays(lw, node, "tensordot", args[:2])
    (axes,) = _options(lw, node, "tensordot", 2, ("axes",), (2,))
    na, nb = a.type.ndim, b.type.ndim
    if isinstance(axes, int) and not isinstance(axes, bool):
        if not 0 <= axes <= min(na, nb):
            lw.typing_error(node, f"np.tensordot: axes={axes} for arrays of {na} and {nb} dimensions")
        pairs = list(zip(range(na - axes, na), range(axes)))
    elif isinstance(axes, tuple) and len(axes) == 2:
        ia, ib = (ax if isinstance(ax, tuple) else (ax,) for ax in axes)
        if len(ia) != len(ib):
            lw.typing_error(node, "np.tensordot: shape-mismatch for sum (as many axes of a as of b)")
        pairs = list(zip((_axis(lw, node, k, na) for k in ia), (_axis(lw, node, k, nb) for k in ib)))
    else:
        lw.unsupported(node, f"np.tensordot with axes={axes!r}", "axes=k or axes=([axes of a], [axes of b])")
    sa = list(LETTERS[:na])
    sb = list(LETTERS[na:na + nb])
    for i, j in pairs:
        sb[j] = sa[i]
    summed_a, summed_b = {i for i, _ in pairs}, {j for _, j in pairs}
    if len(summed_a) != len(pairs) or len(summed_b) != len(pairs):
        lw.typing_error(node, "np.tensordot: an axis is summed twice")
    out = [c for k, c in enumerate(sa) if k not in summed_a] + [c for k, c in enumerate(sb) if k not in summed_b]
    return emit_einsum(lw, node, (("".join(sa), "".join(sb)), "".join(out)), [a, b])


def _scalar_product(lw, node, a, b):
    """inner/dot with a number: the product (numpy's)."""
    return lw.binop(node, "mul", a, b)


def _inner(lw, node, args, env):
    """np.inner(a, b): a sum over the last axes."""
    a, b = args
    if not a.type.is_array or not b.type.is_array:
        return _scalar_product(lw, node, a, b)
    a, b = lw.to_float_array_operands(node, a, b)
    na, nb = a.type.ndim, b.type.ndim
    sa, sb = LETTERS[:na], LETTERS[na:na + nb - 1] + LETTERS[na - 1]
    return emit_einsum(lw, node, ((sa, sb), sa[:-1] + sb[:-1]), [a, b])


def _vdot(lw, node, args, env):
    """np.vdot(a, b) of two arrays of one shape: the sum of a * b."""
    a, b = _float_arrays(lw, node, "vdot", args)
    if a.type.ndim != b.type.ndim:
        lw.unsupported(node, "np.vdot of arrays of different ranks (numpy flattens them)",
                       "flatten them yourself, or write np.sum(a * b) for arrays of one shape")
    sub = LETTERS[:a.type.ndim]
    return emit_einsum(lw, node, ((sub, sub), ""), [a, b])


def matmul_any_rank(lw, node, a, b, dot=False):
    """a @ b (``dot``: np.dot(a, b)) where an operand has more than 2 dimensions, as an einsum.
    np.dot sums a's last axis with b's second-to-last (its only one for a vector), as matmul
    does when an operand is a vector; otherwise matmul multiplies stacks of matrices, the
    leading axes aligned from the right (numpy also stretches a stack axis of size 1: here the
    sizes must be equal, else ValueError)."""
    a, b = lw.to_float_array_operands(node, a, b)
    na, nb = a.type.ndim, b.type.ndim
    if dot or na == 1 or nb == 1:
        sa, sb = LETTERS[:na], LETTERS[na:na + nb]
        k = max(nb - 2, 0)
        sb = sb[:k] + sa[-1] + sb[k + 1:]
        return emit_einsum(lw, node, ((sa, sb), sa[:-1] + sb[:k] + sb[k + 1:]), [a, b])
    batch = LETTERS[:max(na, nb) - 2]
    i, j, k = LETTERS[len(batch):len(batch) + 3]
    sa = batch[len(batch) - (na - 2):] + i + j
    sb = batch[len(batch) - (nb - 2):] + j + k
    return emit_einsum(lw, node, ((sa, sb), batch + i + k), [a, b])


def _matmul(lw, node, args, env):
    """np.matmul(a, b): a @ b."""
    a, b = args
    if not a.type.is_array or not b.type.is_array:
        lw.typing_error(node, "np.matmul takes arrays (numpy: a scalar operand is not allowed)")
    return lw.binop(node, "matmul", a, b)


LINALG_CALLS = {
    np.linalg.norm: Callee(_norm, keywords=("ord", "axis", "keepdims"), static_after=1),
    np.linalg.det: _one_matrix("det", "det"), np.linalg.inv: _one_matrix("inv", "inv"),
    np.linalg.cholesky: _one_matrix("cholesky", "cholesky"), np.linalg.slogdet: Callee(_slogdet, arity=1),
    np.linalg.solve: Callee(_solve, arity=2),
    np.linalg.svd: Callee(_svd, keywords=("full_matrices", "compute_uv", "hermitian"), static_after=1),
    np.einsum: Callee(_einsum, shape_first=True),
    np.tensordot: Callee(_tensordot, keywords=("axes",), static_after=2),
    np.inner: Callee(_inner, arity=2), np.vdot: Callee(_vdot, arity=2), np.matmul: Callee(_matmul, arity=2),
}
if hasattr(np.linalg, "svdvals"):          # numpy >= 2.0
    LINALG_CALLS[np.linalg.svdvals] = Callee(_svdvals, arity=1)
