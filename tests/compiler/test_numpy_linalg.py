"""Linear algebra and contractions (np.linalg.norm/det/slogdet/inv/solve/cholesky, the singular
values: np.linalg.svd(A, compute_uv=False), np.linalg.svdvals and the matrix norms ord=2, -2,
'nuc', np.einsum, np.tensordot/inner/vdot/matmul, @ and np.dot beyond two dimensions): values as numpy's,
gradients against PyTorch and finite differences, jvp against the gradient, the backends
against each other, float32 input, numpy's errors and the clear refusals."""
import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
R = np.random.default_rng(11)
V = np.array([0.5, -1.25, 2.0])
U = np.array([-0.3, 0.8, 1.1])
A = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, -0.4], [0.1, 0.5, 3.0]])       # well conditioned
M = R.standard_normal((3, 4))
N = R.standard_normal((4, 2))
T3 = R.standard_normal((2, 3, 4))
W3 = np.array([0.7, -0.2, 1.3])
W33 = R.standard_normal((3, 3))
N43 = R.standard_normal((4, 3))
ROW = np.array([[0.5, -1.25, 2.0, 0.3]])        # 1×4: its one singular value is its 2-norm


def _t(x):
    return torch.tensor(x, requires_grad=True)


# each case: (function, its PyTorch twin, arguments); every argument is differentiated
def norm_vectors(v):
    return (np.linalg.norm(v) + np.linalg.norm(v, 2) + 2.0 * np.linalg.norm(v, ord=1)
            + 3.0 * np.linalg.norm(v, ord=np.inf) + 5.0 * np.linalg.norm(v, ord=-np.inf)
            + 7.0 * np.linalg.norm(v * (v > 0.0), 0))


def norm_vectors_t(v):
    n = torch.linalg.vector_norm
    return (n(v) + n(v, 2) + 2.0 * n(v, 1) + 3.0 * n(v, float("inf")) + 5.0 * n(v, float("-inf"))
            + 7.0 * n(v * (v > 0.0), 0))


def norm_matrices(m):
    return (np.linalg.norm(m) + np.linalg.norm(m, "fro") + 2.0 * np.linalg.norm(m, 1) + 3.0 * np.linalg.norm(m, -1)
            + 5.0 * np.linalg.norm(m, np.inf) + 7.0 * np.linalg.norm(m, ord=-np.inf)
            + 11.0 * np.linalg.norm(m, ord=1, axis=(1, 0)))


def norm_matrices_t(m):
    n = torch.linalg.matrix_norm
    return (n(m) + n(m, "fro") + 2.0 * n(m, 1) + 3.0 * n(m, -1) + 5.0 * n(m, float("inf"))
            + 7.0 * n(m, float("-inf")) + 11.0 * n(m, 1, dim=(1, 0)))


def norm_axes(m, t):
    return (np.sum(np.linalg.norm(m, axis=0) * np.arange(4)) + np.sum(np.linalg.norm(m, axis=-1) * W3)
            + np.sum(np.linalg.norm(m, ord=1, axis=1) * W3) + np.sum(np.linalg.norm(m, np.inf, 0))
            + np.linalg.norm(t) + np.sum(np.linalg.norm(t, axis=2) ** 2)
            + np.sum(m / np.linalg.norm(m, axis=0, keepdims=True)) + np.sum(t * np.linalg.norm(t, axis=1, keepdims=True))
            + np.sum(m * np.linalg.norm(m, ord=1, keepdims=True)) + np.sum(np.linalg.norm(t, keepdims=True)))


def norm_axes_t(m, t):
    n = torch.linalg.vector_norm
    return (torch.sum(n(m, dim=0) * torch.arange(4)) + torch.sum(n(m, dim=-1) * torch.tensor(W3))
            + torch.sum(n(m, 1, dim=1) * torch.tensor(W3)) + torch.sum(n(m, float("inf"), dim=0))
            + n(t) + torch.sum(n(t, dim=2) ** 2)
            + torch.sum(m / n(m, dim=0, keepdim=True)) + torch.sum(t * n(t, dim=1, keepdim=True))
            + torch.sum(m * torch.linalg.matrix_norm(m, 1, keepdim=True)) + torch.sum(n(t, keepdim=True)))


def singular_values(m, n, a, row):
    """Of 3×4, 4×3, 3×3, 1×4 and 4×1 matrices (distinct singular values, none zero)."""
    return (np.linalg.norm(m, 2) + 2.0 * np.linalg.norm(m, -2) + 3.0 * np.linalg.norm(m, "nuc")
            + 5.0 * np.linalg.norm(n, 2) + 7.0 * np.linalg.norm(n, ord=-2) + np.linalg.norm(n, "nuc", axis=(1, 0))
            + np.sum(np.linalg.svd(a, compute_uv=False) * W3) + np.sum(np.linalg.svdvals(m) * W3)
            + np.sum(m * np.linalg.norm(m, 2, keepdims=True)) + np.linalg.norm(row, 2) + np.linalg.norm(row.T, -2)
            + 3.0 * np.linalg.norm(row, "nuc") + np.sum(np.linalg.svd(row.T, False, False)))


def singular_values_t(m, n, a, row):
    mn, sv, w = torch.linalg.matrix_norm, torch.linalg.svdvals, torch.tensor(W3)
    return (mn(m, 2) + 2.0 * mn(m, -2) + 3.0 * mn(m, "nuc") + 5.0 * mn(n, 2) + 7.0 * mn(n, -2)
            + mn(n, "nuc", dim=(1, 0)) + torch.sum(sv(a) * w) + torch.sum(sv(m) * w) + torch.sum(m * mn(m, 2))
            + mn(row, 2) + mn(row.T, -2) + 3.0 * mn(row, "nuc") + torch.sum(sv(row.T)))


def determinants(a):
    s, ld = np.linalg.slogdet(a)
    s2, ld2 = np.linalg.slogdet(-a)
    return (np.linalg.det(a) + s * ld + 3.0 * s2 * ld2 + np.linalg.det(a.T @ a) ** 0.5
            + 5.0 * np.linalg.slogdet(a * 2.0)[1] * np.linalg.slogdet(-a)[0] + np.linalg.slogdet(a + 1.0).logabsdet
            + np.linalg.slogdet(-a).sign * np.linalg.slogdet(a)[-1])


def determinants_t(a):
    s, ld = torch.linalg.slogdet(a)
    s2, ld2 = torch.linalg.slogdet(-a)
    return (torch.linalg.det(a) + s * ld + 3.0 * s2 * ld2 + torch.linalg.det(a.T @ a) ** 0.5
            + 5.0 * torch.linalg.slogdet(a * 2.0)[1] * s2 + torch.linalg.slogdet(a + 1.0).logabsdet + s2 * ld)


def inverse(a):
    return np.sum(np.linalg.inv(a) * W33) + np.linalg.inv(a)[0, 2]


def inverse_t(a):
    return torch.sum(torch.linalg.inv(a) * torch.tensor(W33)) + torch.linalg.inv(a)[0, 2]


def solving(a, v, m):
    x = np.linalg.solve(a, v)
    y = np.linalg.solve(a.T, m)
    return np.sum(x * W3) + np.sum(y * y) + np.linalg.solve(a, m)[1, 3]


def solving_t(a, v, m):
    x = torch.linalg.solve(a, v)
    y = torch.linalg.solve(a.T, m)
    return torch.sum(x * torch.tensor(W3)) + torch.sum(y * y) + torch.linalg.solve(a, m)[1, 3]


def cholesky(a):
    s = a @ a.T + 0.5           # positive definite
    low = np.linalg.cholesky(s)
    return np.sum(low * W33) + np.linalg.cholesky(a.T @ a)[2, 1]


def cholesky_t(a):
    s = a @ a.T + 0.5
    low = torch.linalg.cholesky(s)
    return torch.sum(low * torch.tensor(W33)) + torch.linalg.cholesky(a.T @ a)[2, 1]


def einsums(a, m, n, v):
    return (np.sum(np.einsum("ij,j->i", a, v) * W3) + np.einsum("ij,jk->ik", m, n)[2, 1]
            + np.einsum("ij,ij->", a, a) + np.sum(np.einsum("i,j,k->ijk", v, v * v, W3) ** 2)
            + np.einsum("ij->", m) + np.sum(np.einsum("ij->ji", m) * m.T * m.T)
            + np.sum(np.einsum("ij,k->i", a, v) * v) + np.einsum("i,i,i->", v, v, v)
            + np.sum(np.einsum(" ij , jk , kl -> il ", a, m, n)) + np.einsum("ii->", a) * 2.0
            + np.sum(np.einsum("ii,i->i", a, v) * W3) + np.sum(np.einsum("ij,jj->ij", a, a * a) * W33))


def einsums_t(a, m, n, v):
    e, w = torch.einsum, torch.tensor(W3)
    return (torch.sum(e("ij,j->i", a, v) * w) + e("ij,jk->ik", m, n)[2, 1] + e("ij,ij->", a, a)
            + torch.sum(e("i,j,k->ijk", v, v * v, w) ** 2) + e("ij->", m) + torch.sum(e("ij->ji", m) * m.T * m.T)
            + torch.sum(e("ij,k->i", a, v) * v) + e("i,i,i->", v, v, v) + torch.sum(e("ij,jk,kl->il", a, m, n))
            + e("ii->", a) * 2.0 + torch.sum(e("ii,i->i", a, v) * w) + torch.sum(e("ij,jj->ij", a, a * a) * torch.tensor(W33)))


def contractions(a, m, t, v):
    return (np.tensordot(a, a, axes=2) + np.sum(np.tensordot(m, t, axes=([1], [2])) ** 2)
            + np.sum(np.tensordot(t, m, ([1, 2], [0, 1]))) + np.sum(np.tensordot(v, v, 0) * a)
            + np.sum(np.tensordot(a, m, 1)) + np.inner(v, v) + np.sum(np.inner(a, m.T)) + np.vdot(m, m)
            + np.sum(np.inner(t, m[0]) * t[:, :, 0]) + np.inner(v, 2.0)[1])


def contractions_t(a, m, t, v):
    td = torch.tensordot
    return (td(a, a, dims=2) + torch.sum(td(m, t, dims=([1], [2])) ** 2) + torch.sum(td(t, m, ([1, 2], [0, 1])))
            + torch.sum(td(v, v, 0) * a) + torch.sum(td(a, m, 1)) + torch.inner(v, v) + torch.sum(torch.inner(a, m.T))
            + torch.sum(m * m) + torch.sum(torch.inner(t, m[0]) * t[:, :, 0]) + (v * 2.0)[1])


def products(a, m, t, v):
    s = t @ m.T                 # a stack of matrices times a matrix
    return (np.sum(s * s) + np.sum(np.matmul(t, m.T @ a)) + np.sum(t @ np.einsum("kij->kji", t) * 0.5)
            + np.sum(np.dot(t, m.T) ** 2) + np.sum(v @ np.einsum("ij,kjl->kil", a, t)) + np.sum(t @ m[0])
            + np.sum(np.matmul(a, m)) + np.dot(2.0, v)[0] + np.sum(np.dot(t, np.einsum("kij->kji", t)) ** 2)
            + np.sum((np.einsum("i,jkl->ijkl", v[:2], t) @ np.einsum("kij->kji", t)) ** 2))


def products_t(a, m, t, v):
    s = t @ m.T
    return (torch.sum(s * s) + torch.sum(torch.matmul(t, m.T @ a)) + torch.sum(t @ t.transpose(1, 2) * 0.5)
            + torch.sum(torch.tensordot(t, m.T, dims=([2], [0])) ** 2)
            + torch.sum(v @ torch.einsum("ij,kjl->kil", a, t)) + torch.sum(t @ m[0]) + torch.sum(torch.matmul(a, m))
            + (2.0 * v)[0] + torch.sum(torch.tensordot(t, t.transpose(1, 2), dims=([2], [1])) ** 2)
            + torch.sum((torch.einsum("i,jkl->ijkl", v[:2], t) @ t.transpose(1, 2)) ** 2))


CASES = {
    "norm of vectors": (norm_vectors, norm_vectors_t, (V,)),
    "norm of matrices": (norm_matrices, norm_matrices_t, (M,)),
    "norm along axes": (norm_axes, norm_axes_t, (M, T3)),
    "singular values": (singular_values, singular_values_t, (M, N43, A, ROW)),
    "det and slogdet": (determinants, determinants_t, (A,)),
    "inv": (inverse, inverse_t, (A,)),
    "solve": (solving, solving_t, (A, V, M)),
    "cholesky": (cholesky, cholesky_t, (A,)),
    "einsum": (einsums, einsums_t, (A, M, N, V)),
    "tensordot, inner, vdot": (contractions, contractions_t, (A, M, T3, V)),
    "matmul and dot of stacks": (products, products_t, (A, M, T3, V)),
}


def _grads(fn, args, backend):
    g = srcgrad.grad(fn, wrt=tuple(range(len(args))), backend=backend)(*args)
    return list(g) if isinstance(g, tuple) else [g]


def _torch_grads(tfn, args):
    ts = [_t(x) for x in args]
    return [g.numpy() for g in torch.autograd.grad(tfn(*ts), ts)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, tfn, args = CASES[name]
    expected = fn(*args)
    oracle = _torch_grads(tfn, args)
    assert tfn(*[torch.tensor(x) for x in args]).item() == pytest.approx(expected, rel=1e-12)
    results = {}
    for backend in BACKENDS:
        value = srcgrad.jit(fn, backend=backend)(*args)
        assert value == pytest.approx(expected, rel=1e-12), backend
        grads = _grads(fn, args, backend)
        for k, (g, e) in enumerate(zip(grads, oracle)):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"{backend}, argument {k}")
        results[backend] = (value, grads)
    for k, x in enumerate(args):
        np.testing.assert_allclose(results["llvm"][1][k], numeric_gradient(fn, args, k), rtol=1e-6, atol=1e-7)
    (vp, gp), (vl, gl) = results["python"], results["llvm"]
    assert vp == pytest.approx(vl, rel=1e-12)
    for a, b in zip(gp, gl):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_is_the_gradient_along_the_tangent(name, backend):
    fn, tfn, args = CASES[name]
    tangents = tuple(R.standard_normal(np.shape(x)) for x in args)
    value, dot = srcgrad.jvp(fn, args, tangents, backend=backend)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    oracle = _torch_grads(tfn, args)
    assert dot == pytest.approx(sum(float(np.sum(g * t)) for g, t in zip(oracle, tangents)), rel=1e-10, abs=1e-12)


def float32_mix(a, m, v):
    s, ld = np.linalg.slogdet(a)
    spd = np.einsum("ij,kj->ik", a, a) + 0.5
    return (np.linalg.det(a) + s * ld + np.sum(np.linalg.inv(a) * W33) + np.sum(np.linalg.solve(a, v) * W3)
            + np.sum(np.linalg.solve(a, m) ** 2) + np.sum(np.linalg.cholesky(spd) * W33) + np.linalg.norm(m)
            + np.linalg.norm(v, 1) + np.tensordot(a, a) + np.sum(np.einsum("ij,jk->ik", a, m) * m)
            + np.linalg.norm(m, 2))       # (one SVD norm: the others cost compile time, not coverage)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_arguments_compute_in_float64(backend):
    """numpy keeps float32 here; compiled code computes in float64 (as for every array) and
    gives float32 gradients. (The float64 reference is the python backend's: each llvm
    compilation of this function takes seconds.)"""
    small = (A.astype(np.float32), M.astype(np.float32), V.astype(np.float32))
    wide = tuple(x.astype(np.float64) for x in small)
    assert srcgrad.jit(float32_mix, backend=backend)(*small) == pytest.approx(float32_mix(*wide), rel=1e-12)
    for g, e in zip(_grads(float32_mix, small, backend), _grads(float32_mix, wide, "python")):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    tangents = tuple(np.ones_like(x) for x in small)
    _, dot = srcgrad.jvp(float32_mix, small, tangents, backend=backend)
    _, wide_dot = srcgrad.jvp(float32_mix, wide, tuple(t.astype(np.float64) for t in tangents), backend="python")
    assert dot == pytest.approx(wide_dot, rel=1e-12)


def norm2(v):
    return np.linalg.norm(v) + np.sum(np.linalg.norm(np.outer(v, W3), axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_two_norm_at_zero_has_gradient_zero(backend):
    """torch.linalg.norm's convention: the subgradient 0 at the zero vector (also per row)."""
    z = np.zeros(3)
    assert srcgrad.jit(norm2, backend=backend)(z) == 0.0
    np.testing.assert_array_equal(srcgrad.grad(norm2, backend=backend)(z), np.zeros(3))
    tz = _t(z)
    tg, = torch.autograd.grad(torch.linalg.vector_norm(tz) + torch.sum(torch.linalg.vector_norm(
        torch.outer(tz, torch.tensor(W3)), dim=1)), tz)
    np.testing.assert_array_equal(tg.numpy(), np.zeros(3))
    assert srcgrad.jvp(norm2, (z,), (np.ones(3),), backend=backend)[1] == 0.0


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_values_as_numpy(backend):
    """np.linalg.svd(A, compute_uv=False) to 1e-12 relative (llvm: a Jacobi SVD, not LAPACK),
    descending, of square, wide, tall, strided, badly scaled and empty matrices."""
    compiled = srcgrad.jit(svd_values, backend=backend)
    rng = np.random.default_rng(3)
    cases = [M, M.T, N43, A, ROW, ROW.T, np.eye(3), np.ones((3, 4)), rng.standard_normal((6, 5))[::2, ::-1],
             np.diag([3.0, -2.0, 1.0]) @ W33, rng.standard_normal((5, 7)) * 1e200, rng.standard_normal((4, 2)) * 1e-200,
             np.zeros((0, 3)), np.zeros((3, 0))]
    for x in cases:
        want = np.linalg.svd(x, compute_uv=False)
        got = compiled(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * np.max(want, initial=0.0))


def svd_norms(m):
    return (np.linalg.norm(m, 2) + 2.0 * np.linalg.norm(m, -2) + 3.0 * np.linalg.norm(m, "nuc")
            + np.sum(np.linalg.svd(m, compute_uv=False) * np.arange(1.0, 1.0 + min(m.shape[0], m.shape[1]))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_values_at_kinks(backend):
    """The zero matrix: value 0, gradient 0 (a zero singular value's terms are dropped, as d|x|
    at 0; PyTorch gives the subgradient of whatever U, V LAPACK returns); equal singular values:
    the gradient U diag(t) V^T is the same for every basis where t is equal over the tie (max and
    min share ties evenly: torch's)."""
    grad = srcgrad.grad(svd_norms, backend=backend)
    for shape in [(3, 4), (4, 3), (1, 4), (4, 1)]:
        z = np.zeros(shape)
        assert srcgrad.jit(svd_norms, backend=backend)(z) == 0.0
        np.testing.assert_array_equal(grad(z), z)
        assert srcgrad.jvp(svd_norms, (z,), (np.ones(shape),), backend=backend)[1] == 0.0
    tie = 2.0 * np.eye(3)
    ta = _t(tie)
    (expected,) = torch.autograd.grad(torch.linalg.matrix_norm(ta, 2) + 2.0 * torch.linalg.matrix_norm(ta, -2)
                                      + 3.0 * torch.linalg.matrix_norm(ta, "nuc"), ta)
    g = srcgrad.grad(norm_ties, backend=backend)(tie)
    # PyTorch's U and V at the tie are whatever its LAPACK (MKL, picked per CPU) returns: any
    # rotation Q gives Q 4I Q^T, off the diagonal zeros only up to rounding (issue 27)
    np.testing.assert_allclose(g, expected.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, 4.0 * np.eye(3), rtol=1e-12)     # 1/3 + 2/3 + 3 on the diagonal


def norm_ties(m):
    return np.linalg.norm(m, 2) + 2.0 * np.linalg.norm(m, -2) + 3.0 * np.linalg.norm(m, "nuc")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")       # NaN / NaN in the gradient of max
@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_values_of_nan_and_inf(backend):
    """numpy raises LinAlgError('SVD did not converge') for a NaN and gives NaN singular values
    for an infinity: both backends, values and gradients."""
    nan, inf = M.copy(), M.copy()
    nan[1, 2], inf[2, 0] = np.nan, -np.inf
    for fn in (srcgrad.jit(svd_norms, backend=backend), srcgrad.grad(svd_norms, backend=backend)):
        with pytest.raises(np.linalg.LinAlgError, match="^SVD did not converge$"):
            fn(nan)
    assert np.isnan(np.linalg.norm(inf, 2)) and np.isnan(srcgrad.jit(svd_norms, backend=backend)(inf))
    assert np.isnan(srcgrad.grad(svd_norms, backend=backend)(inf)).all()
    assert np.isnan(srcgrad.jit(svd_values, backend=backend)(inf)).all()


def singular_parts(a):
    s, ld = np.linalg.slogdet(a)
    return np.linalg.det(a), s, ld


def inv_sum(a):
    return np.sum(np.linalg.inv(a))


def solve_sum(a, v):
    return np.sum(np.linalg.solve(a, v))


def det_only(a):
    return np.linalg.det(a)


def chol_sum(a):
    return np.sum(np.linalg.cholesky(a))


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_matrices_as_numpy(backend):
    d, s, ld = srcgrad.jit(singular_parts, backend=backend)(SINGULAR)
    assert (d, s, ld) == (np.linalg.det(SINGULAR), 0.0, -np.inf)
    assert srcgrad.jit(singular_parts, backend=backend)(np.zeros((0, 0))) == (1.0, 1.0, 0.0)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        srcgrad.jit(inv_sum, backend=backend)(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        srcgrad.jit(solve_sum, backend=backend)(np.zeros((3, 3)), V)
    # the gradient of det needs inv(A): at a singular matrix it raises (HIPS autograd's rule)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        srcgrad.grad(det_only, backend=backend)(SINGULAR)


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_errors(backend):
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        srcgrad.jit(chol_sum, backend=backend)(-A)
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        srcgrad.jit(chol_sum, backend=backend)(np.zeros((2, 2)))
    nan = np.full((2, 2), np.nan)          # numpy gives NaN here, no error
    assert np.isnan(srcgrad.jit(chol_sum, backend=backend)(nan)) and np.isnan(chol_sum(nan))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        srcgrad.jit(det_only, backend=backend)(M)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        srcgrad.jit(inv_sum, backend=backend)(M)
    with pytest.raises(ValueError, match="size 2 is different from 3"):
        srcgrad.jit(solve_sum, backend=backend)(A, np.ones(2))


def trace(a):
    return np.einsum("ii->", a)


def einsum_mismatch(a, v):
    return np.sum(np.einsum("ij,j->i", a, v))


@pytest.mark.parametrize("backend", BACKENDS)
def test_einsum_sizes_must_agree(backend):
    with pytest.raises(ValueError, match="index 'i' has size 3 in one operand and 4"):
        srcgrad.jit(trace, backend=backend)(M)
    with pytest.raises(ValueError, match="index 'j' has size 3 in one operand and 2"):
        srcgrad.jit(einsum_mismatch, backend=backend)(A, np.ones(2))
    # numpy stretches a size of 1; compiled code refuses it (the gradient would need a sum)
    with pytest.raises(ValueError, match="index 'j'"):
        srcgrad.jit(einsum_mismatch, backend=backend)(A, np.ones(1))


def cholesky_lower_only(a):
    return np.sum(np.linalg.cholesky(a) * W33)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cholesky_reads_the_lower_triangle_and_its_gradient_is_symmetric(backend):
    s = A @ A.T + np.eye(3)
    skew = s + np.triu(np.ones((3, 3)), 1)          # numpy reads only the lower triangle
    assert srcgrad.jit(cholesky_lower_only, backend=backend)(skew) == pytest.approx(cholesky_lower_only(s), rel=1e-12)
    g = srcgrad.grad(cholesky_lower_only, backend=backend)(s)
    np.testing.assert_allclose(g, g.T, rtol=1e-12)
    ts = _t(s)
    (e,) = torch.autograd.grad(torch.sum(torch.linalg.cholesky(ts) * torch.tensor(W33)), ts)
    np.testing.assert_allclose(g, e.numpy(), rtol=1e-10)


# refusals: each names the construct and the line
def r_implicit(a): return np.sum(np.einsum("ij,j", a, V))
def r_ellipsis(a): return np.sum(np.einsum("...j,j->...", a, V))
def r_repeated_output(v): return np.sum(np.einsum("i->ii", v))
def r_einsum_keyword(a): return np.sum(np.einsum("ij,j->i", a, V, optimize=True))
def r_einsum_operands(a): return np.sum(np.einsum("ij,j->i", a))
def r_einsum_rank(a): return np.sum(np.einsum("ijk,j->i", a, V))
def r_full_svd(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(s)
def r_svd_hermitian(a): return np.sum(np.linalg.svd(a, compute_uv=False, hermitian=True))
def r_svd_stack(t): return np.sum(np.linalg.svd(t, compute_uv=False))
def r_svdvals_vector(v): return np.sum(np.linalg.svdvals(v))
def r_spectral_stack(t): return np.linalg.norm(t, 2)
def r_ord3(v): return np.linalg.norm(v, ord=3)
def r_keepdims(a): return np.sum(np.linalg.norm(a, axis=1, keepdims=1.5))
def r_norm_out(a): return np.linalg.norm(a, out=a)
def r_ord_variable(v, p): return np.linalg.norm(v, ord=p)
def r_det_vector(v): return np.linalg.det(v)
def r_det_stack(t): return np.sum(np.linalg.det(t))
def r_tensordot_axes(a): return np.tensordot(a, a, axes=3)
def r_vdot_ranks(a): return np.vdot(a, V)
def r_matmul_scalar(v): return np.sum(np.matmul(v, 2.0))
def r_slogdet_one_value(a): return np.linalg.slogdet(a) + 1.0
def r_slogdet_index(a): return np.linalg.slogdet(a)[2]
def r_slogdet_field(a): return np.linalg.slogdet(a).det


REFUSALS = [
    (r_implicit, (A,), srcgrad.UnsupportedSyntaxError, "implicit mode"),
    (r_ellipsis, (A,), srcgrad.UnsupportedSyntaxError, r"'\.\.\.'"),
    (r_repeated_output, (V,), srcgrad.TypingError, "output subscript appears twice"),
    (r_einsum_keyword, (A,), srcgrad.UnsupportedSyntaxError, "optimize="),
    (r_einsum_operands, (A,), srcgrad.TypingError, "2 operand subscripts for 1 operands"),
    (r_einsum_rank, (A,), srcgrad.TypingError, "'ijk' need an array of 3 dimensions"),
    (r_full_svd, (A,), srcgrad.UnsupportedSyntaxError, r"np.linalg.svd with its singular vectors(.|\n)*compute_uv=False"),
    (r_svd_hermitian, (A,), srcgrad.UnsupportedSyntaxError, "hermitian=True"),
    (r_svd_stack, (T3,), srcgrad.TypingError, "np.linalg.svd takes arrays of 2 dimensions"),
    (r_svdvals_vector, (V,), srcgrad.TypingError, "np.linalg.svdvals takes arrays of 2 dimensions"),
    (r_spectral_stack, (T3,), srcgrad.TypingError, "improper number of dimensions"),
    (r_ord3, (V,), srcgrad.UnsupportedSyntaxError, "ord=3 for vectors"),
    (r_keepdims, (A,), srcgrad.UnsupportedSyntaxError, "keepdims=1.5"),
    (r_norm_out, (A,), srcgrad.UnsupportedSyntaxError, r"np.linalg.norm\(..., out=...\)"),
    (r_ord_variable, (V, 2.0), srcgrad.UnsupportedSyntaxError, "ord= given as `p`"),
    (r_det_vector, (V,), srcgrad.TypingError, "np.linalg.det takes arrays of 2 dimensions"),
    (r_det_stack, (T3,), srcgrad.TypingError, "np.linalg.det takes arrays of 2 dimensions"),
    (r_tensordot_axes, (A,), srcgrad.TypingError, "axes=3"),
    (r_vdot_ranks, (A,), srcgrad.UnsupportedSyntaxError, "different ranks"),
    (r_matmul_scalar, (V,), srcgrad.TypingError, "np.matmul takes arrays"),
    (r_slogdet_one_value, (A,), srcgrad.TypingError, "unsupported operand type\\(s\\) for \\+: 'SlogdetResult'"),
    (r_slogdet_index, (A,), srcgrad.TypingError, "IndexError: index 2 is out of range for a SlogdetResult"),
    (r_slogdet_field, (A,), srcgrad.UnsupportedSyntaxError, "the attribute `.det`"),
]


@pytest.mark.parametrize("fn, args, error, words", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_refusals_name_the_construct_and_line(fn, args, error, words):
    with pytest.raises(error, match=words) as info:
        srcgrad.jit(fn)(*args)
    assert "test_numpy_linalg.py" in str(info.value) and fn.__name__ in str(info.value)


def outer_of_matrices(a, v):
    return np.sum(np.tanh(np.outer(a, v)) * np.outer(a.T, v))


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_outer_flattens_arrays_of_other_ranks(backend):
    """np.outer of a matrix: numpy flattens it (C order) first."""
    a, v = np.array([[0.3, -1.0], [0.5, 2.0]]), np.array([0.7, -0.2, 1.1])
    assert srcgrad.jit(outer_of_matrices, backend=backend)(a, v) == pytest.approx(outer_of_matrices(a, v), rel=1e-14)
    ta, tv = torch.tensor(a, requires_grad=True), torch.tensor(v, requires_grad=True)
    value = torch.sum(torch.tanh(torch.outer(ta.flatten(), tv)) * torch.outer(ta.T.flatten(), tv))
    ea, ev = torch.autograd.grad(value, (ta, tv))
    ga, gv = srcgrad.grad(outer_of_matrices, wrt=(0, 1), backend=backend)(a, v)
    np.testing.assert_allclose(ga, ea.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gv, ev.numpy(), rtol=1e-12)
