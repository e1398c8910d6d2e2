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
                      "assert blas.load().source == 'scipy.linalg.cython_blas' and blas.load().int_type.width == 32\n")
    subprocess.run([sys.executable, str(script)], check=True, env=dict(os.environ, SRCGRAD_BLAS="scipy"))
