"""Matrix products through BLAS: ``a @ b`` of float64 matrices and matrix-vector products call
``dgemm`` and ``dgemv`` where they are big enough to gain from them, and the loop nests of
kernels.py stay for the small ones (a 3×3 product is faster inline than through a call).

Where the routines come from, the first found:

1. the OpenBLAS numpy's wheels bundle (``numpy.libs/libscipy_openblas64_*``): numpy has loaded
   it already, so it costs nothing at start-up, and ``a @ b`` then computes with the same kernels
   as numpy's, to the same rounding; its integers are 64-bit;
2. scipy's ``scipy.linalg.cython_blas``: the function pointers Numba uses, 32-bit integers
   (importing ``scipy.linalg`` costs about 0.2 s, once a process);
3. none: the loop nests.

``SRCGRAD_BLAS=0`` uses none, ``SRCGRAD_BLAS=numpy`` or ``=scipy`` only that one.

The routines are registered with LLVM's symbol table as ``srcgrad.blas.dgemm`` and
``srcgrad.blas.dgemv`` (as the runtime's are, runtime.py), so object code from the disk cache
finds them too; the cache key names the source (jit.py).

BLAS reads a matrix with one unit stride, row- or column-major with a leading dimension: an
operand strided otherwise (``x[::2, ::2]``, negative strides) takes the loop nests. Being
column-major, BLAS computes the row-major ``C = A B`` as ``Cᵀ = Bᵀ Aᵀ``: each operand's memory
read column-major is its transpose when row-major, so it is passed as it lies with ``"N"``,
and a column-major one (``x.T`` of a C array) with ``"T"``.

Example (inside kernels.py's matmul rule):
    blas = blas_for(ctx, p)
    if blas is not None:
        emit_product(ctx, blas, p, loop_nests)      # the loop nests where BLAS does not pay
"""
import ctypes
import glob
import os

import llvmlite.binding as llvm
from llvmlite import ir

from ...ir.types import F64
from .arrays import Lazy
from .types import DOUBLE, INT64

ROUTINES = ("dgemm", "dgemv")
LAPACK_ROUTINES = ("dgetrf", "dgetrs", "dpotrf")       # LU factors and solves, Cholesky (linalg.py)
# the smallest products worth a BLAS call (multiply-adds), below which the loop nests are as fast
# (benchmarks/matmul.py measures the crossover)
GEMM_MIN = 10_000
GEMV_MIN = 16_384
_BYTE = ir.IntType(8)
_found = []


class Blas:
    """BLAS's routines as the lowering calls them: ``source`` (where they came from, for the
    cache key and the docs), ``int_type`` (its integers: i64 or i32)."""

    def __init__(self, source, int_bits, addresses):
        self.source, self.int_type = source, ir.IntType(int_bits)
        for name in ROUTINES + LAPACK_ROUTINES:
            llvm.add_symbol(f"srcgrad.blas.{name}", addresses[name])

    def declare(self, module, name):
        """The routine ``name`` in ``module``: Fortran's interface, every argument by pointer."""
        full = f"srcgrad.blas.{name}"
        if full in module.globals:
            return module.globals[full]
        n, d, c = self.int_type.as_pointer(), DOUBLE.as_pointer(), _BYTE.as_pointer()
        args = {"dgemm": [c, c, n, n, n, d, d, n, d, n, d, d, n],      # transa, transb, m, n, k, alpha, a, lda, ...
                "dgemv": [c, n, n, d, d, n, d, n, d, d, n],            # trans, m, n, alpha, a, lda, x, incx, ...
                "dgetrf": [n, n, d, n, n, n],                          # m, n, a, lda, ipiv, info
                "dgetrs": [c, n, n, d, n, n, d, n, n],                 # trans, n, nrhs, a, lda, ipiv, b, ldb, info
                "dpotrf": [c, n, d, n, n]}[name]                       # uplo, n, a, lda, info
        return ir.Function(module, ir.FunctionType(ir.VoidType(), args), name=full)


def load():
    """The process's BLAS, found at the first call (the module docstring's order), or None."""
    if not _found:
        _found.append(_find())
    return _found[0]


def _find():
    choice = os.environ.get("SRCGRAD_BLAS", "")
    if choice == "0":
        return None
    sources = {"numpy": (_numpy_openblas,), "scipy": (_scipy_cython_blas,)}.get(choice,
                                                                              (_numpy_openblas, _scipy_cython_blas))
    for find in sources:
        try:
            found = find()
        except (ImportError, OSError, AttributeError, ValueError):
            found = None
        if found is not None:
            return found
    return None


def _numpy_openblas():
    """numpy's wheel's OpenBLAS, 64-bit integers (its symbols carry scipy-openblas's prefix and suffix)."""
    import numpy as np
    site = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    paths = sorted(glob.glob(os.path.join(site, "numpy.libs", "libscipy_openblas64_*.so*")) +
                   glob.glob(os.path.join(site, "numpy", ".dylibs", "libscipy_openblas64_*.dylib")))
    if not paths:
        return None
    lib = ctypes.CDLL(paths[0])
    addresses = {name: ctypes.cast(getattr(lib, f"scipy_{name}_64_"), ctypes.c_void_p).value
                 for name in ROUTINES + LAPACK_ROUTINES}
    return Blas(f"numpy's OpenBLAS ({os.path.basename(paths[0])})", 64, addresses)


def _scipy_cython_blas():
    """scipy.linalg.cython_blas's function pointers (PyCapsules), 32-bit integers."""
    from scipy.linalg import cython_blas, cython_lapack
    get_name, get_pointer = ctypes.pythonapi.PyCapsule_GetName, ctypes.pythonapi.PyCapsule_GetPointer
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addresses = {}
    for module, names in ((cython_blas, ROUTINES), (cython_lapack, LAPACK_ROUTINES)):
        for name in names:
            capsule = module.__pyx_capi__[name]
            addresses[name] = get_pointer(capsule, get_name(capsule))
    return Blas("scipy.linalg.cython_blas", 32, addresses)


# ---------------------------------------------------------------------- the lowering's side
def blas_for(ctx, p):
    """The Blas to emit ``p`` (kernels.py's _Product) with, or None where BLAS cannot take it
    at all: no BLAS, a target without it (CUDA), not float64 matrices, a scalar result, or a
    lazy operand (fusion.py: its elements are computed where they are read)."""
    if not p.out_t.is_array:
        return None
    if p.ta.dtype is not F64 or p.tb.dtype is not F64 or isinstance(p.a, Lazy) or isinstance(p.c, Lazy):
        return None
    return lapack_for(ctx)


def lapack_for(ctx):
    """The Blas (with its LAPACK routines) for the code ``ctx`` lowers, or None (no BLAS, a
    target without it); noted in ``ctx.uses_blas`` for the cache key."""
    if "blas" not in ctx.target.supports:
        return None
    blas = load()
    if blas is not None:
        ctx.uses_blas = blas.source
    return blas


def emit_product(ctx, blas, p, fallback):
    """The BLAS call for ``p`` under its run-time conditions, ``fallback()`` otherwise."""
    b = ctx.b
    if p.ta.ndim == 2 and p.tb.ndim == 2:
        m, k, n = p.sa[0], p.sa[1], p.sb[1]
        la, lb = _layout(ctx, p.a, m, k), _layout(ctx, p.c, k, n)
        work = b.mul(b.mul(m, n), k)
        ok = b.and_(b.and_(la.ok, lb.ok), fits(ctx, blas, work, GEMM_MIN, [m, n, k, la.ld, lb.ld]))
        with b.if_else(ok) as (yes, no):
            with yes:
                # Cᵀ (n×m, column-major, ld n) = op(B's memory) op(A's memory)
                call(ctx, blas, "dgemm", [("c", lb.trans), ("c", la.trans), ("n", n), ("n", m), ("n", k),
                                           ("d", 1.0), ("p", p.c), ("n", lb.ld), ("p", p.a), ("n", la.ld),
                                           ("d", 0.0), ("p", p.result), ("n", n)])
            with no:
                fallback()
        return
    matrix, rows, cols = (p.a, p.sa[0], p.sa[1]) if p.ta.ndim == 2 else (p.c, p.sb[0], p.sb[1])
    vector = p.c if p.ta.ndim == 2 else p.a
    lay = _layout(ctx, matrix, rows, cols)
    inc = _vector_step(ctx, vector, cols if p.ta.ndim == 2 else rows)
    ok = b.and_(b.and_(lay.ok, b.icmp_signed(">", inc, ir.Constant(INT64, 0))),
                fits(ctx, blas, b.mul(rows, cols), GEMV_MIN, [rows, cols, lay.ld, inc]))
    # the matrix's memory read column-major is M (column-major) or Mᵀ (row-major): A x is "N" of
    # the first and "T" of the second, v B (= Bᵀ v) the other way round
    row_major = b.icmp_unsigned("==", lay.trans, ir.Constant(_BYTE, ord("N")))
    transposed = row_major if p.ta.ndim == 2 else b.not_(row_major)
    trans = b.select(transposed, ir.Constant(_BYTE, ord("T")), ir.Constant(_BYTE, ord("N")))
    first = b.select(row_major, cols, rows)         # the rows of the memory read column-major
    second = b.select(row_major, rows, cols)
    with b.if_else(ok) as (yes, no):
        with yes:
            call(ctx, blas, "dgemv", [("c", trans), ("n", first), ("n", second), ("d", 1.0), ("p", matrix),
                                       ("n", lay.ld), ("p", vector), ("n", inc), ("d", 0.0), ("p", p.result),
                                       ("n", ir.Constant(INT64, 1))])
        with no:
            fallback()


class _Layout:
    """How BLAS reads a matrix: ``ok`` (one unit stride, a leading dimension covering the other
    axis), ``trans`` ("N" where row-major, "T" where column-major, as an i8) and ``ld``."""

    def __init__(self, ok, trans, ld):
        self.ok, self.trans, self.ld = ok, trans, ld


def _layout(ctx, arr, rows, cols):
    """The _Layout of the ``rows``×``cols`` matrix ``arr``. A size-1 axis's stride is whatever
    numpy left there: it does not count."""
    b = ctx.b
    one = ir.Constant(INT64, 1)
    strides = b.extract_value(arr, 2)
    s0, s1 = b.extract_value(strides, 0), b.extract_value(strides, 1)
    single_row, single_col = b.icmp_signed("==", rows, one), b.icmp_signed("==", cols, one)
    # row-major: unit steps along a row, rows at least a row apart
    row_ld = b.select(single_row, cols, s0)
    row_major = b.and_(b.or_(b.icmp_signed("==", s1, one), single_col), b.icmp_signed(">=", row_ld, cols))
    col_ld = b.select(single_col, rows, s1)
    col_major = b.and_(b.or_(b.icmp_signed("==", s0, one), single_row), b.icmp_signed(">=", col_ld, rows))
    trans = b.select(row_major, ir.Constant(_BYTE, ord("N")), ir.Constant(_BYTE, ord("T")))
    return _Layout(b.or_(row_major, col_major), trans, b.select(row_major, row_ld, col_ld))


def _vector_step(ctx, vec, n):
    """The element stride of the 1-d ``vec`` of ``n`` elements (1 where n is 1: any stride reads it)."""
    b = ctx.b
    step = b.extract_value(b.extract_value(vec, 2), 0)
    return b.select(b.icmp_signed("==", n, ir.Constant(INT64, 1)), ir.Constant(INT64, 1), step)


def fits(ctx, blas, work, least, sizes):
    """Whether a product of ``work`` multiply-adds pays for the call, and every size fits BLAS's
    integers (and is at least 1: BLAS rejects a leading dimension of 0)."""
    b = ctx.b
    ok = b.icmp_signed(">=", work, ir.Constant(INT64, least))
    top = ir.Constant(INT64, (1 << (blas.int_type.width - 1)) - 1)
    for n in sizes:
        ok = b.and_(ok, b.and_(b.icmp_signed(">=", n, ir.Constant(INT64, 1)), b.icmp_signed("<=", n, top)))
    return ok


def call(ctx, blas, name, args):
    """Call the routine with each argument in a stack slot: ("c", i8), ("n", an i64 size, as
    BLAS's integer), ("d", a float constant), ("p", an array: its data pointer) or ("ints",
    a pointer to BLAS's integers: pivots, info)."""
    b = ctx.b
    passed = []
    for kind, v in args:
        if kind == "p":
            passed.append(b.bitcast(b.extract_value(v, 0), DOUBLE.as_pointer()))
            continue
        if kind == "ints":
            passed.append(b.bitcast(v, blas.int_type.as_pointer()))
            continue
        t = {"c": _BYTE, "n": blas.int_type, "d": DOUBLE}[kind]
        slot = ctx.stack_slot(t)
        if kind == "d":
            v = ir.Constant(DOUBLE, v)
        elif kind == "n" and blas.int_type.width < 64:
            v = b.trunc(v, blas.int_type)
        b.store(v, slot)
        passed.append(slot)
    b.call(blas.declare(ctx.module, name), passed)

