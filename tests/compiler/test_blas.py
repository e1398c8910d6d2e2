"""Matrix products through BLAS (backends/llvm/blas.py) give numpy's values for every way an
operand can lie in memory (C order, transposed, a slice with a leading dimension larger than
its rows, a size-1 axis with any stride, strides BLAS cannot read, which take the loop nests),
for sizes on both sides of the thresholds, in gradients too; and a process without BLAS
computes the same with the loop nests."""
import os
import subprocess
import sys

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm import blas

RNG = np.random.default_rng(7)


def mm(a, b):
    return a @ b


def mm_sum(a, b):
    return np.sum(np.tanh(a @ b))


def _operand(kind, rows, cols):
    """A rows×cols float64 matrix lying in memory as ``kind`` says."""
    if kind == "c":
        return RNG.standard_normal((rows, cols))
    if kind == "f":                                  # column-major: a C array's transpose
        return RNG.standard_normal((cols, rows)).T
    if kind == "ld":                                 # rows further apart than a row
        return RNG.standard_normal((rows, cols + 3))[:, 1:cols + 1]
    if kind == "strided":                            # no unit stride: the loop nests
        return RNG.standard_normal((2 * rows, 2 * cols))[::2, ::2]
    if kind == "reversed":                           # negative strides: the loop nests
        return RNG.standard_normal((rows, cols))[::-1, ::-1]
    raise ValueError(kind)


KINDS = ["c", "f", "ld", "strided", "reversed"]
SIZES = [(1, 1, 1), (3, 3, 3), (1, 70, 80), (70, 1, 60), (64, 64, 1), (17, 64, 65), (80, 90, 70)]


@pytest.mark.parametrize("m,k,n", SIZES)
@pytest.mark.parametrize("ka", KINDS)
@pytest.mark.parametrize("kb", ["c", "f", "ld", "strided"])
def test_matrix_products_give_numpys_values(m, k, n, ka, kb):
    a, b = _operand(ka, m, k), _operand(kb, k, n)
    got = srcgrad.jit(mm, backend="llvm")(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12 * np.abs(a).max() * np.abs(b).max() * k)
    assert got.shape == (m, n) and got.flags.c_contiguous


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 4), (1, 5000), (5000, 1), (70, 80), (200, 300)])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("vector", ["c", "strided", "reversed"])
def test_matrix_vector_products_give_numpys_values(rows, cols, kind, vector):
    a = _operand(kind, rows, cols)
    x = {"c": RNG.standard_normal(cols), "strided": RNG.standard_normal(2 * cols)[::2],
         "reversed": RNG.standard_normal(cols)[::-1]}[vector]
    v = {"c": RNG.standard_normal(rows), "strided": RNG.standard_normal(2 * rows)[::2],
         "reversed": RNG.standard_normal(rows)[::-1]}[vector]
    f = srcgrad.jit(mm, backend="llvm")
    np.testing.assert_allclose(f(a, x), a @ x, rtol=1e-12, atol=1e-12 * cols)
    np.testing.assert_allclose(f(v, a), v @ a, rtol=1e-12, atol=1e-12 * rows)


def test_empty_and_mismatched_products_are_numpys():
    f = srcgrad.jit(mm, backend="llvm")
    for a, b in [(np.zeros((0, 70)), np.ones((70, 80))), (np.ones((70, 0)), np.ones((0, 80))),
                 (np.ones((80, 70)), np.zeros((70, 0)))]:
        np.testing.assert_array_equal(f(a, b), a @ b)
    with pytest.raises(ValueError, match="matmul"):
        f(np.ones((70, 80)), np.ones((81, 70)))


@pytest.mark.parametrize("n", [3, 40, 90])
def test_gradients_of_a_product_match_pytorch(n):
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal((n, n + 1)) / n, RNG.standard_normal((n + 1, n + 2)) / n
    ga, gb = srcgrad.grad(mm_sum, wrt=(0, 1), backend="llvm")(a, b)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.tanh(ta @ tb).sum().backward()
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-10, atol=1e-13)
    # and the python backend (numpy's @) agrees
    pa, pb = srcgrad.grad(mm_sum, wrt=(0, 1), backend="python")(a, b)
    np.testing.assert_allclose(ga, pa, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gb, pb, rtol=1e-12, atol=1e-14)


def test_big_products_call_blas_and_small_ones_do_not():
    if blas.load() is None:
        pytest.skip("no BLAS in this process")
    f = srcgrad.jit(mm, backend="llvm")
    f(np.ones((3, 3)), np.ones((3, 3)))
    assert "srcgrad.blas.dgemm" in f.llvm_ir         # emitted, behind its run-time threshold
    assert blas.GEMM_MIN > 27


def test_without_blas_the_loop_nests_compute_the_same(tmp_path):
    script = tmp_path / "no_blas.py"
    script.write_text("import numpy as np, srcgrad\n"
                      "from srcgrad.backends.llvm import blas\n"
                      "def mm(a, b):\n"
                      "    return a @ b\n"
                      "a = np.arange(6000.0).reshape(60, 100) / 1e3\n"
                      "b = np.cos(np.arange(8000.0)).reshape(100, 80)\n"
                      "f = srcgrad.jit(mm, backend='llvm')\n"
                      "np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-12, atol=1e-12)\n"
                      "assert blas.load() is None and 'srcgrad.blas' not in f.llvm_ir\n")
    subprocess.run([sys.executable, str(script)], check=True, env=dict(os.environ, SRCGRAD_BLAS="0"))


def test_scipys_blas_with_32_bit_integers_computes_the_same(tmp_path):
    pytest.importorskip("scipy.linalg.cython_blas")
    script = tmp_path / "scipy_blas.py"
    script.write_text("import numpy as np, srcgrad\n"
                      "from srcgrad.backends.llvm import blas\n"
                      "def mm(a, b):\n"
                      "    return a @ b\n"
                      "rng = np.random.default_rng(0)\n"
                      "a, b, x = rng.standard_normal((60, 100)), rng.standard_normal((100, 80)), rng.standard_normal(100)\n"
                      "f = srcgrad.jit(mm, backend='llvm')\n"
                      "np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-12, atol=1e-12)\n"
                      "np.testing.assert_allclose(f(b.T, a.T), b.T @ a.T, rtol=1e-12, atol=1e-12)\n"
                      "np.testing.assert_allclose(f(a, x), a @ x, rtol=1e-12, atol=1e-12)\n"
                      "np.testing.assert_allclose(f(x, b), x @ b, rtol=1e-12, atol=1e-12)\n"
                      "g = rng.standard_normal((100, 100)) + 100 * np.eye(100)\n"
                      "def solve(a, b):\n"
                      "    return np.linalg.solve(a, b)\n"
                      "def chol(a):\n"
                      "    return np.linalg.cholesky(a)\n"
                      "np.testing.assert_allclose(srcgrad.jit(solve)(g, x), np.linalg.solve(g, x), rtol=1e-11)\n"
                      "np.testing.assert_allclose(srcgrad.jit(chol)(g @ g.T), np.linalg.cholesky(g @ g.T), rtol=1e-11, "
                      "atol=1e-9)\n"
                      "assert blas.load().source == 'scipy.linalg.cython_blas' and blas.load().int_type.width == 32\n")
    subprocess.run([sys.executable, str(script)], check=True, env=dict(os.environ, SRCGRAD_BLAS="scipy"))


@pytest.mark.parametrize("n", [5, 64, 90, 130])
def test_solve_inv_det_and_cholesky_give_numpys_values_on_both_sides_of_lapacks_thresholds(n):
    from srcgrad.backends.llvm import linalg
    assert linalg.CHOLESKY_MIN < 90 <= linalg.SOLVE_MIN < 130
    a = RNG.standard_normal((n, n)) + n * np.eye(n)
    s = a @ a.T
    rhs = RNG.standard_normal((n, 4))
    solve = srcgrad.jit(lambda_free_solve, backend="llvm")
    np.testing.assert_allclose(solve(a, rhs[:, 0]), np.linalg.solve(a, rhs[:, 0]), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(solve(a, rhs), np.linalg.solve(a, rhs), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(solve(a.T, rhs), np.linalg.solve(a.T, rhs),
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(srcgrad.jit(inv, backend="llvm")(a), np.linalg.inv(a), rtol=1e-11, atol=1e-14)
    chol = srcgrad.jit(cholesky, backend="llvm")(s)
    np.testing.assert_allclose(chol, np.linalg.cholesky(s), rtol=1e-11, atol=1e-12 * np.abs(s).max())
    assert np.all(np.triu(chol, 1) == 0.0)
    np.testing.assert_allclose(srcgrad.jit(det, backend="llvm")(a), np.linalg.det(a), rtol=1e-11)
    np.testing.assert_allclose(srcgrad.jit(det, backend="llvm")(a.T), np.linalg.det(a), rtol=1e-11)
    assert srcgrad.jit(slogdet_sign, backend="llvm")(a[::-1]) == np.linalg.slogdet(a[::-1])[0]   # rows swapped
    single = np.zeros((n, n))
    single[0, 0] = 1.0
    assert srcgrad.jit(det, backend="llvm")(single) == 0.0
    assert srcgrad.jit(slogdet_sign, backend="llvm")(single) == 0.0
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        srcgrad.jit(inv, backend="llvm")(np.zeros((n, n)))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        srcgrad.jit(cholesky, backend="llvm")(-np.eye(n))


@pytest.mark.parametrize("n", [5, 100])
def test_gradients_through_lapack_match_pytorch(n):
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((n, n)) + n * np.eye(n)
    s, rhs = a @ a.T, RNG.standard_normal((n, 3))
    ga, gb = srcgrad.grad(solve_loss, wrt=(0, 1), backend="llvm")(a, rhs)
    gs = srcgrad.grad(cholesky_loss, backend="llvm")(s)
    ta, tb, ts = (torch.tensor(v, requires_grad=True) for v in (a, rhs, s))
    torch.tanh(torch.linalg.solve(ta, tb)).sum().backward()
    (torch.linalg.cholesky(ts) ** 2).sum().backward()
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-9, atol=1e-13)
    # torch's cholesky gradient is symmetrised; srcgrad's (numpy reads the lower triangle) is not:
    # they agree on the symmetric part
    np.testing.assert_allclose(gs + gs.T, ts.grad.numpy() + ts.grad.numpy().T, rtol=1e-9, atol=1e-12)


def lambda_free_solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet_sign(a):
    return np.linalg.slogdet(a)[0]


def cholesky(a):
    return np.linalg.cholesky(a)


def solve_loss(a, b):
    return np.sum(np.tanh(np.linalg.solve(a, b)))


def cholesky_loss(a):
    return np.sum(np.linalg.cholesky(a) ** 2)
