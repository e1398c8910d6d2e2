"""Linear algebra on the llvm backend, natively: einsum as one loop nest over all its indices,
Gaussian elimination with partial pivoting (LAPACK getrf's pivots: the first largest |a_ik|)
for det, slogdet, inv and solve, the Cholesky factorisation and its gradient by triangular
solves, the singular values and their derivative by a one-sided Jacobi SVD (Hestenes; its
values agree with LAPACK's to ~1e-15 relative). Solve and inv from n = SOLVE_MIN on, and the
Cholesky factorisation from CHOLESKY_MIN on, call LAPACK's getrf/getrs and potrf instead
(blas.py finds them with BLAS), and det and slogdet from SOLVE_MIN on getrf; the SVD stays
loops.

numpy's errors, with numpy's words: LinAlgError('Singular matrix') (an exact zero pivot, in
inv and solve; det and slogdet give 0 and (0, -inf) there, as numpy's), LinAlgError('Matrix
is not positive definite'), LinAlgError('Last 2 dimensions of the array must be square'),
LinAlgError('SVD did not converge') (a NaN; an infinity gives NaN singular values, as numpy's),
the ValueError of solve's mismatched sizes.

``LINALG`` holds the whole-array rules, ``LINALG_SCALAR`` the element-wise ``norm_sqrt``.

Example:
    LINALG["det"]         # rule(ctx, op, ins) -> the LLVM double
"""
import numpy as np
from llvmlite import ir

from ...ir.types import F64, I64, ArrayType
from .arrays import as_f64, load_element, new_array, raw_pointer, shape_values, store_element
from .blas import call as blas_call, fits, lapack_for
from .lazy import stored
from .loops import choose, counted_loop, each_index, sum_step
from .registry import lower
from .types import BIT, DOUBLE, INT64, ltype

LINALG = {}
LINALG_SCALAR = {}
MATRIX = ArrayType(F64, 2)
# the smallest n (of an n×n matrix) whose solve (getrf/getrs) or Cholesky factorisation (potrf)
# calls LAPACK: below them the loops here are faster (measured one thread: solve 87 against 81 µs
# at n = 96, 57 against 60 at 80; Cholesky 50 against 42 at 80, 24 against 26 at 48)
SOLVE_MIN = 90
CHOLESKY_MIN = 64


def _numpy_error(compute):
    try:
        compute()
    except (np.linalg.LinAlgError, ValueError) as e:
        return e
    raise AssertionError("srcgrad: expected numpy to raise")


_SINGULAR = str(_numpy_error(lambda: np.linalg.inv(np.zeros((2, 2)))))
_NOT_PD = str(_numpy_error(lambda: np.linalg.cholesky(-np.eye(2))))
_SQUARE = str(_numpy_error(lambda: np.linalg.det(np.zeros((2, 3)))))
_SOLVE = {nd: str(_numpy_error(lambda: np.linalg.solve(np.eye(3), np.ones((2,) * nd)))).replace(
    "(size 2 is different from 3)", "(size {} is different from {})") for nd in (1, 2)}


def _i(n):
    return ir.Constant(INT64, n)


def _d(x):
    return ir.Constant(DOUBLE, x)


def _loop(ctx, start, stop, body, step=1):
    """for i in range(start, stop, step): body(i)."""
    def iteration(i, carried):
        body(i)
        return []
    counted_loop(ctx, start, stop, _i(step), [], iteration)


def _down(ctx, n, body):
    """for i in reversed(range(n)): body(i)."""
    _loop(ctx, ctx.b.sub(n, _i(1)), _i(-1), body, step=-1)


def _ptr(ctx, arr, i, j):
    return raw_pointer(ctx, MATRIX, arr, [i, j])


def _get(ctx, arr, i, j):
    return ctx.b.load(_ptr(ctx, arr, i, j))


def _square(ctx, t, a):
    """n for an n×n matrix; numpy's LinAlgError for another shape."""
    n, m = shape_values(ctx, a, 2)
    ctx.raise_at(ctx.b.icmp_signed("!=", n, m), lambda err: np.linalg.LinAlgError(_SQUARE))
    return n


def _copy(ctx, t, a, shape):
    """A fresh C-ordered float64 copy of array ``a`` (any strides)."""
    out_t = ArrayType(F64, t.ndim)
    out = new_array(ctx, out_t, shape, None)
    each_index(ctx, shape, lambda idx: store_element(ctx, out_t, out, idx,
                                                     as_f64(ctx, t, load_element(ctx, t, a, idx))))
    return out


# ---------------------------------------------------------------------- elimination
def _eliminate(ctx, a, n, rhs=None, rhs_t=None, cols=None):
    """Gaussian elimination with partial pivoting of the n×n copy ``a`` in place (U above and on
    the diagonal, the multipliers below), applying the same row operations to the copy ``rhs``
    (``cols`` columns; a vector when ``rhs_t`` is 1-d). Returns (sign slot, singular slot):
    the permutation's sign, and 1.0 where some pivot column was all zero."""
    b = ctx.b
    sign, singular = ctx.stack_slot(DOUBLE), ctx.stack_slot(DOUBLE)
    b.store(_d(1.0), sign)
    b.store(_d(0.0), singular)

    def rhs_ptr(i, c):
        return raw_pointer(ctx, rhs_t, rhs, [i] if rhs_t.ndim == 1 else [i, c])

    def column(k):
        def better(i, carried):         # the first row of the largest |a[i, k]|
            best, at = carried
            v = ctx.call_intrinsic("llvm.fabs", [_get(ctx, a, i, k)])
            more = b.fcmp_ordered(">", v, best)
            return [b.select(more, v, best), b.select(more, i, at)]
        start = ctx.call_intrinsic("llvm.fabs", [_get(ctx, a, k, k)])
        best, p = counted_loop(ctx, b.add(k, _i(1)), n, _i(1), [start, k], better)
        zero = b.fcmp_ordered("==", best, _d(0.0))
        with b.if_else(zero) as (yes, no):
            with yes:
                b.store(_d(1.0), singular)          # the column is zero below k: nothing to eliminate
            with no:
                with b.if_then(b.icmp_signed("!=", p, k)):
                    b.store(b.fneg(b.load(sign)), sign)
                    _loop(ctx, _i(0), n, lambda j: _swap(ctx, _ptr(ctx, a, k, j), _ptr(ctx, a, p, j)))
                    if rhs is not None:
                        _loop(ctx, _i(0), cols, lambda c: _swap(ctx, rhs_ptr(k, c), rhs_ptr(p, c)))
                pivot = _get(ctx, a, k, k)

                def row(i):
                    mult = b.fdiv(_get(ctx, a, i, k), pivot)
                    b.store(mult, _ptr(ctx, a, i, k))
                    _loop(ctx, b.add(k, _i(1)), n, lambda j: _sub_into(ctx, _ptr(ctx, a, i, j), mult,
                                                                         _get(ctx, a, k, j)))
                    if rhs is not None:
                        _loop(ctx, _i(0), cols, lambda c: _sub_into(ctx, rhs_ptr(i, c), mult, b.load(rhs_ptr(k, c))))
                _loop(ctx, b.add(k, _i(1)), n, row)
    _loop(ctx, _i(0), n, column)
    return sign, singular


def _lu(ctx, a, n):
    """The LU factorisation of the n×n copy ``a`` in place (U on and above the diagonal), as
    ``_eliminate`` returns it: (the permutation's sign, 1.0 where a pivot is zero). LAPACK's
    getrf from n = SOLVE_MIN on: it factorises Aᵀ (``a`` read column-major), whose determinant
    is A's, and its pivots are 1-based row swaps."""
    blas = lapack_for(ctx)
    if blas is None:
        return _eliminate(ctx, a, n)
    b = ctx.b
    sign, singular = ctx.stack_slot(DOUBLE), ctx.stack_slot(DOUBLE)

    def loops():
        s, z = _eliminate(ctx, a, n)
        b.store(b.load(s), sign)
        b.store(b.load(z), singular)

    def lapack():
        info = ctx.stack_slot(blas.int_type)
        pivots = b.extract_value(new_array(ctx, ArrayType(I64, 1), [n], None, written=True), 0)
        blas_call(ctx, blas, "dgetrf", [("n", n), ("n", n), ("p", a), ("n", n), ("ints", pivots), ("ints", info)])
        b.store(b.uitofp(b.icmp_signed(">", b.load(info), ir.Constant(blas.int_type, 0)), DOUBLE), singular)
        b.store(_d(1.0), sign)
        swaps = b.bitcast(pivots, blas.int_type.as_pointer())

        def pivot(i):
            row = b.load(b.gep(swaps, [i]))
            here = b.trunc(b.add(i, _i(1)), blas.int_type) if blas.int_type.width < 64 else b.add(i, _i(1))
            with b.if_then(b.icmp_signed("!=", row, here)):
                b.store(b.fneg(b.load(sign)), sign)
        _loop(ctx, _i(0), n, pivot)
    choose(ctx, fits(ctx, blas, n, SOLVE_MIN, [n]), lapack, loops)
    return sign, singular


def _swap(ctx, p, q):
    x, y = ctx.b.load(p), ctx.b.load(q)
    ctx.b.store(y, p)
    ctx.b.store(x, q)


def _sub_into(ctx, ptr, mult, x):
    """*ptr -= mult * x"""
    ctx.b.store(ctx.b.fsub(ctx.b.load(ptr), ctx.b.fmul(mult, x)), ptr)


def _slogdet(ctx, op, ins):
    """(sign, log|det|) as numpy's: the product of the pivots' signs and the sum of the logs
    of their magnitudes; (0, -inf) for a singular matrix."""
    b = ctx.b
    t = op.operands[0].type
    n = _square(ctx, t, ins[0])
    a = _copy(ctx, t, ins[0], [n, n])
    sign, singular = _lu(ctx, a, n)
    logdet = ctx.stack_slot(DOUBLE)
    b.store(_d(0.0), logdet)

    def pivot(k):
        u = _get(ctx, a, k, k)
        size = ctx.call_intrinsic("llvm.fabs", [u])
        b.store(b.fmul(b.load(sign), b.fdiv(u, size)), sign)
        b.store(b.fadd(b.load(logdet), ctx.scalar("log", [F64], F64, [size])), logdet)
    _loop(ctx, _i(0), n, pivot)
    is_singular = b.fcmp_ordered("!=", b.load(singular), _d(0.0))
    return (b.select(is_singular, _d(0.0), b.load(sign)),
            b.select(is_singular, _d(float("-inf")), b.load(logdet)))


@lower(LINALG, "slogdet_sign")
def _slogdet_sign(ctx, op, ins):
    return _slogdet(ctx, op, ins)[0]


@lower(LINALG, "slogdet_log")
def _slogdet_log(ctx, op, ins):
    return _slogdet(ctx, op, ins)[1]


@lower(LINALG, "det")
def _det(ctx, op, ins):
    """numpy's det: sign * exp(log|det|), from the same factorisation as slogdet."""
    sign, logdet = _slogdet(ctx, op, ins)
    return ctx.b.fmul(sign, ctx.scalar("exp", [F64], F64, [logdet]))


def _solve_into(ctx, a, n, rhs, rhs_t, cols):
    """rhs := A^-1 rhs, from the copy ``a`` of A; LinAlgError('Singular matrix') at a zero pivot.
    LAPACK's getrf/getrs where n is at least SOLVE_MIN, the elimination below otherwise."""
    blas = lapack_for(ctx)
    if blas is None:
        _eliminate_and_solve(ctx, a, n, rhs, rhs_t, cols)
        return
    choose(ctx, fits(ctx, blas, n, SOLVE_MIN, [n, cols]), lambda: _getrs(ctx, blas, a, n, rhs, rhs_t, cols),
           lambda: _eliminate_and_solve(ctx, a, n, rhs, rhs_t, cols))


def _getrs(ctx, blas, a, n, rhs, rhs_t, cols):
    """rhs := A^-1 rhs by LAPACK. Read column-major, the C-ordered copy ``a`` is M = Aᵀ, so A x =
    b is Mᵀ x = b: getrs with "T". A matrix right-hand side goes through a column-major copy
    (BLAS's n×cols, C-ordered cols×n) and back."""
    b = ctx.b
    info = ctx.stack_slot(blas.int_type)
    pivots = b.extract_value(new_array(ctx, ArrayType(I64, 1), [n], None, written=True), 0)   # room for i64 or i32
    blas_call(ctx, blas, "dgetrf", [("n", n), ("n", n), ("p", a), ("n", n), ("ints", pivots), ("ints", info)])
    ctx.raise_at(b.icmp_signed(">", b.load(info), ir.Constant(blas.int_type, 0)),
                 lambda err: np.linalg.LinAlgError(_SINGULAR))
    columns = rhs
    if rhs_t.ndim == 2:
        columns = new_array(ctx, MATRIX, [cols, n], None, written=True)
        each_index(ctx, [n, cols], lambda ij: b.store(b.load(_ptr(ctx, rhs, *ij)), _ptr(ctx, columns, ij[1], ij[0])))
    blas_call(ctx, blas, "dgetrs", [("c", ir.Constant(ir.IntType(8), ord("T"))), ("n", n), ("n", cols), ("p", a),
                                    ("n", n), ("ints", pivots), ("p", columns), ("n", n), ("ints", info)])
    if rhs_t.ndim == 2:
        each_index(ctx, [n, cols], lambda ij: b.store(b.load(_ptr(ctx, columns, ij[1], ij[0])), _ptr(ctx, rhs, *ij)))


def _eliminate_and_solve(ctx, a, n, rhs, rhs_t, cols):
    """rhs := A^-1 rhs by the elimination of this module (``a`` overwritten)."""
    b = ctx.b
    _, singular = _eliminate(ctx, a, n, rhs, rhs_t, cols)
    ctx.raise_at(b.fcmp_ordered("!=", b.load(singular), _d(0.0)), lambda err: np.linalg.LinAlgError(_SINGULAR))

    def rhs_ptr(i, c):
        return raw_pointer(ctx, rhs_t, rhs, [i] if rhs_t.ndim == 1 else [i, c])

    def back(c):
        def row(i):
            ptr = rhs_ptr(i, c)
            _loop(ctx, b.add(i, _i(1)), n, lambda j: _sub_into(ctx, ptr, _get(ctx, a, i, j), b.load(rhs_ptr(j, c))))
            b.store(b.fdiv(b.load(ptr), _get(ctx, a, i, i)), ptr)
        _down(ctx, n, row)
    _loop(ctx, _i(0), cols, back)


@lower(LINALG, "solve")
def _solve(ctx, op, ins):
    b = ctx.b
    ta, tb = (v.type for v in op.operands)
    n = _square(ctx, ta, ins[0])
    shape = shape_values(ctx, ins[1], tb.ndim)
    ctx.raise_at(b.icmp_signed("!=", shape[0], n),
                 lambda err: ValueError(_SOLVE[tb.ndim].format(err[0], err[1])), [shape[0], n])
    a = _copy(ctx, ta, ins[0], [n, n])
    rhs = _copy(ctx, tb, ins[1], shape)
    _solve_into(ctx, a, n, rhs, ArrayType(F64, tb.ndim), shape[1] if tb.ndim == 2 else _i(1))
    return rhs


@lower(LINALG, "inv")
def _inv(ctx, op, ins):
    t = op.operands[0].type
    n = _square(ctx, t, ins[0])
    a = _copy(ctx, t, ins[0], [n, n])
    eye = new_array(ctx, MATRIX, [n, n], 0.0)
    _loop(ctx, _i(0), n, lambda i: ctx.b.store(_d(1.0), _ptr(ctx, eye, i, i)))
    _solve_into(ctx, a, n, eye, MATRIX, n)
    return eye


# ---------------------------------------------------------------------- Cholesky
def _dot_prefix(ctx, x, i, y, j, stop):
    """sum over k < stop of x[i, k] * y[j, k]."""
    b = ctx.b
    acc = ctx.stack_slot(DOUBLE)
    b.store(_d(0.0), acc)
    _loop(ctx, _i(0), stop, lambda k: b.store(b.fadd(b.load(acc), b.fmul(_get(ctx, x, i, k), _get(ctx, y, j, k))), acc))
    return b.load(acc)


@lower(LINALG, "cholesky")
def _cholesky(ctx, op, ins):
    """L with A = L L^T from A's lower triangle (LAPACK potrf's column order)."""
    b = ctx.b
    t = op.operands[0].type
    a = ins[0]
    n = _square(ctx, t, a)
    blas = lapack_for(ctx)
    if blas is None:
        out = new_array(ctx, MATRIX, [n, n], 0.0)
        _cholesky_columns(ctx, t, a, n, out)
        return out
    # A's copy, factorised in place (either way) and its upper triangle cleared after
    out = _copy(ctx, t, a, [n, n])
    choose(ctx, fits(ctx, blas, n, CHOLESKY_MIN, [n]), lambda: _potrf(ctx, blas, out, n),
           lambda: _cholesky_columns(ctx, t, a, n, out))
    _loop(ctx, _i(0), n, lambda i: _loop(ctx, b.add(i, _i(1)), n, lambda j: b.store(_d(0.0), _ptr(ctx, out, i, j))))
    return out


def _potrf(ctx, blas, a, n):
    """LAPACK's Cholesky of the C-ordered copy ``a`` in place: read column-major it is Aᵀ, so
    potrf's upper factor U (Aᵀ = UᵀU) lies in it as L = Uᵀ, row by row: A = L Lᵀ."""
    info = ctx.stack_slot(blas.int_type)
    blas_call(ctx, blas, "dpotrf", [("c", ir.Constant(ir.IntType(8), ord("U"))), ("n", n), ("p", a), ("n", n),
                                    ("ints", info)])
    ctx.raise_at(ctx.b.icmp_signed(">", ctx.b.load(info), ir.Constant(blas.int_type, 0)),
                 lambda err: np.linalg.LinAlgError(_NOT_PD))


def _cholesky_columns(ctx, t, a, n, out):
    """L, column by column, into ``out`` (its lower triangle and diagonal)."""
    b = ctx.b

    def column(j):
        s = b.fsub(as_f64(ctx, t, load_element(ctx, t, a, [j, j])), _dot_prefix(ctx, out, j, out, j, j))
        # numpy raises where a pivot is <= 0; a NaN goes on as NaN (numpy's result then)
        ctx.raise_at(b.fcmp_ordered("<=", s, _d(0.0)), lambda err: np.linalg.LinAlgError(_NOT_PD))
        d = ctx.scalar("sqrt", [F64], F64, [s])
        b.store(d, _ptr(ctx, out, j, j))
        _loop(ctx, b.add(j, _i(1)), n, lambda i: b.store(b.fdiv(b.fsub(
            as_f64(ctx, t, load_element(ctx, t, a, [i, j])), _dot_prefix(ctx, out, i, out, j, j)), d), _ptr(ctx, out, i, j)))
    _loop(ctx, _i(0), n, column)


def _upper_solve(ctx, lower_f, r, n, rows):
    """Solve L^T v = (each column of ``r``, or each row with ``rows``) in place, L the lower
    factor ``lower_f``: back substitution."""
    b = ctx.b

    def vector(c):
        def at(i):
            return _ptr(ctx, r, c, i) if rows else _ptr(ctx, r, i, c)

        def row(i):
            ptr = at(i)
            _loop(ctx, b.add(i, _i(1)), n, lambda k: _sub_into(ctx, ptr, _get(ctx, lower_f, k, i), b.load(at(k))))
            b.store(b.fdiv(b.load(ptr), _get(ctx, lower_f, i, i)), ptr)
        _down(ctx, n, row)
    _loop(ctx, _i(0), n, vector)


def _matrix_of(ctx, n, value, cols=None):
    """A new n×n (n×cols) matrix with elements value(i, j)."""
    shape = [n, n if cols is None else cols]
    out = new_array(ctx, MATRIX, shape, None)
    each_index(ctx, shape, lambda idx: ctx.b.store(value(*idx), _ptr(ctx, out, *idx)))
    return out


@lower(LINALG, "cholesky_grad")
def _cholesky_grad(ctx, op, ins):
    """gA = L^-T P L^-1, P = sym(tril(L^T gL)) (PyTorch's cholesky_backward; linalg_eval.py)."""
    b = ctx.b
    gt = op.operands[0].type
    g, lf = stored(ctx, gt, ins[0]), ins[1]
    n = shape_values(ctx, lf, 2)[0]
    lt_g = _matrix_of(ctx, n, lambda i, j: _column_dot(ctx, lf, i, g, gt, j, n))    # L^T gL

    def p(i, j):
        low = b.icmp_signed(">=", i, j)
        below = _get(ctx, lt_g, i, j)
        above = _get(ctx, lt_g, j, i)
        return b.fmul(_d(0.5), b.select(low, below, above))
    out = _matrix_of(ctx, n, p)
    _upper_solve(ctx, lf, out, n, rows=False)       # L^-T P
    _upper_solve(ctx, lf, out, n, rows=True)        # (L^-T (L^-T P)^T)^T = L^-T P L^-1
    return out


def _column_dot(ctx, lf, i, g, gt, j, n):
    """(L^T gL)[i, j]: sum over k >= i of L[k, i] gL[k, j]."""
    b = ctx.b
    acc = ctx.stack_slot(DOUBLE)
    b.store(_d(0.0), acc)
    _loop(ctx, i, n, lambda k: b.store(b.fadd(b.load(acc), b.fmul(
        _get(ctx, lf, k, i), as_f64(ctx, gt, load_element(ctx, gt, g, [k, j])))), acc))
    return b.load(acc)


# ---------------------------------------------------------------------- singular values
VECTOR = ArrayType(F64, 1)
_NO_SVD = str(_numpy_error(lambda: np.linalg.svd(np.full((2, 2), np.nan), compute_uv=False)))
_SVD_TOL = 2e-15           # columns p, q are orthogonal when |w_p.w_q| <= tol |w_p| |w_q|
_SVD_SWEEPS = 60           # at most (a few sweeps are enough for small matrices: 6-8 at 40×40)


class _Svd:
    """The one-sided Jacobi SVD (Hestenes) of a matrix A (m×n): B = A, or A^T when m < n (so
    that B, r×c, has r >= c rows), copied into W and scaled by 1/max|a| (no overflow in the
    squared norms; an infinity makes W all NaN, so that every result is NaN, as numpy's);
    rotations of column pairs (p, q) applied to W and V = I make W's columns orthogonal,
    W = B V. Then s_j = |w_j| (of the scaled B), u_j = w_j / s_j, sorted so that s descends.
    A NaN raises numpy's LinAlgError('SVD did not converge'). The work is the module's
    function ``_factor``; W, V, s are arrays of the call (the arena frees them)."""

    def __init__(self, ctx, t, a):
        b = ctx.b
        m, n = shape_values(ctx, a, 2)
        if t.dtype is not F64:
            a = _copy(ctx, t, a, [m, n])
        self.tr = b.icmp_signed("<", m, n)
        self.r, self.c = b.select(self.tr, n, m), b.select(self.tr, m, n)
        self.w = new_array(ctx, MATRIX, [self.r, self.c], None)
        self.v = new_array(ctx, MATRIX, [self.c, self.c], None)
        self.s = new_array(ctx, VECTOR, [self.c], None)
        found = b.call(_factor(ctx), [a, self.w, self.v, self.s])
        ctx.raise_at(b.extract_value(found, 0), lambda err: np.linalg.LinAlgError(_NO_SVD))
        self.top = b.extract_value(found, 1)       # max|a|: s times it are A's singular values


def _factor(ctx):
    """factor(A, W, V, s) -> {A holds a NaN, max|a|}: W, V and s (descending) of A's SVD."""
    def body(a, w, v, s):
        b = ctx.b
        m, n = shape_values(ctx, a, 2)
        tr = b.icmp_signed("<", m, n)
        r, c = b.select(tr, n, m), b.select(tr, m, n)

        def scan(idx, carried):
            nan, top = carried
            x = _get(ctx, a, *idx)
            size = ctx.call_intrinsic("llvm.fabs", [x])
            return [b.or_(nan, b.fcmp_unordered("uno", x, x)), b.select(b.fcmp_ordered(">", size, top), size, top)]
        nan, top = _each_carried(ctx, [m, n], [ir.Constant(BIT, 0), _d(0.0)], scan)
        infinite = b.fcmp_ordered("==", top, _d(float("inf")))
        scale = b.fdiv(_d(1.0), b.select(b.fcmp_ordered(">", top, _d(0.0)), top, _d(1.0)))
        each_index(ctx, [r, c], lambda idx: b.store(b.select(infinite, _d(float("nan")), b.fmul(_get(
            ctx, a, b.select(tr, idx[1], idx[0]), b.select(tr, idx[0], idx[1])), scale)), _ptr(ctx, w, *idx)))
        each_index(ctx, [c, c], lambda idx: b.store(b.uitofp(b.icmp_signed("==", *idx), DOUBLE), _ptr(ctx, v, *idx)))
        _sweeps(ctx, w, v, r, c)
        _loop(ctx, _i(0), c, lambda j: b.store(ctx.scalar("sqrt", [F64], F64, [_columns_dot(ctx, w, j, w, j, r)]),
                                               raw_pointer(ctx, VECTOR, s, [j])))
        _sort(ctx, w, v, s, r, c)
        pair = b.insert_value(ir.Constant(_FACTOR_RESULT, ir.Undefined), nan, 0)
        b.ret(b.insert_value(pair, top, 1))
    arr = ltype(MATRIX)
    return ctx.module_function("srcgrad.rt.svd_factor", [arr, arr, arr, ltype(VECTOR)], _FACTOR_RESULT, body)


_FACTOR_RESULT = ir.LiteralStructType([BIT, DOUBLE])


def _each_carried(ctx, shape, inits, body):
    """Nested loops over the indices of a 2-d ``shape`` carrying values: body(idx, carried) -> new."""
    return counted_loop(ctx, _i(0), shape[0], _i(1), inits, lambda i, outer: counted_loop(
        ctx, _i(0), shape[1], _i(1), outer, lambda j, inner: body([i, j], inner)))


def _sweeps(ctx, w, v, r, c):
    """Rotations of W's column pairs (and V's) until a sweep rotates none, at most _SVD_SWEEPS."""
    b = ctx.b
    more, rotated = ctx.stack_slot(BIT), ctx.stack_slot(BIT)
    b.store(ir.Constant(BIT, 1), more)

    def pair(p, q):
        def dots(i, carried):
            x, y = _get(ctx, w, i, p), _get(ctx, w, i, q)
            return [b.fadd(carried[0], b.fmul(x, x)), b.fadd(carried[1], b.fmul(y, y)), b.fadd(carried[2], b.fmul(x, y))]
        alpha, beta, gamma = counted_loop(ctx, _i(0), r, _i(1), [_d(0.0)] * 3, dots)
        bound = b.fmul(_d(_SVD_TOL), b.fmul(ctx.scalar("sqrt", [F64], F64, [alpha]), ctx.scalar("sqrt", [F64], F64, [beta])))
        with b.if_then(b.fcmp_ordered(">", ctx.call_intrinsic("llvm.fabs", [gamma]), bound)):
            b.store(ir.Constant(BIT, 1), rotated)
            zeta = b.fdiv(b.fsub(beta, alpha), b.fmul(_d(2.0), gamma))
            sign = b.select(b.fcmp_ordered(">=", zeta, _d(0.0)), _d(1.0), _d(-1.0))
            tan = b.fdiv(sign, b.fadd(ctx.call_intrinsic("llvm.fabs", [zeta]),
                                      ctx.scalar("hypot", [F64, F64], F64, [_d(1.0), zeta])))
            cos = b.fdiv(_d(1.0), ctx.scalar("sqrt", [F64], F64, [b.fadd(_d(1.0), b.fmul(tan, tan))]))
            sin = b.fmul(cos, tan)
            _rotate(ctx, w, p, q, r, cos, sin)
            _rotate(ctx, v, p, q, c, cos, sin)

    def sweep(k):
        with b.if_then(b.load(more)):
            b.store(ir.Constant(BIT, 0), rotated)
            _loop(ctx, _i(0), c, lambda p: _loop(ctx, b.add(p, _i(1)), c, lambda q: pair(p, q)))
            b.store(b.load(rotated), more)
    _loop(ctx, _i(0), _i(_SVD_SWEEPS), sweep)


def _sort(ctx, w, v, s, r, c):
    """Selection sort of s, descending (the first largest), the columns of W and V with it."""
    b = ctx.b

    def at(j):
        return raw_pointer(ctx, VECTOR, s, [j])

    def place(j):
        def better(i, carried):
            best, where = carried
            x = b.load(at(i))
            more = b.fcmp_ordered(">", x, best)
            return [b.select(more, x, best), b.select(more, i, where)]
        _, k = counted_loop(ctx, b.add(j, _i(1)), c, _i(1), [b.load(at(j)), j], better)
        with b.if_then(b.icmp_signed("!=", k, j)):
            _swap(ctx, at(j), at(k))
            _loop(ctx, _i(0), r, lambda i: _swap(ctx, _ptr(ctx, w, i, j), _ptr(ctx, w, i, k)))
            _loop(ctx, _i(0), c, lambda i: _swap(ctx, _ptr(ctx, v, i, j), _ptr(ctx, v, i, k)))
    _loop(ctx, _i(0), c, place)


def _columns_dot(ctx, x, p, y, q, rows):
    """sum over i < rows of x[i, p] * y[i, q]."""
    b = ctx.b
    return counted_loop(ctx, _i(0), rows, _i(1), [_d(0.0)], lambda i, acc: [
        b.fadd(acc[0], b.fmul(_get(ctx, x, i, p), _get(ctx, y, i, q)))])[0]


def _rotate(ctx, x, p, q, rows, cos, sin):
    """Columns p, q of ``x`` := (cos x_p - sin x_q, sin x_p + cos x_q)."""
    b = ctx.b

    def row(i):
        pp, qp = _ptr(ctx, x, i, p), _ptr(ctx, x, i, q)
        xp, xq = b.load(pp), b.load(qp)
        b.store(b.fsub(b.fmul(cos, xp), b.fmul(sin, xq)), pp)
        b.store(b.fadd(b.fmul(sin, xp), b.fmul(cos, xq)), qp)
    _loop(ctx, _i(0), rows, row)


def _weights(ctx, s, t, c):
    """s_j := t_j / s_j in place, 0 where s_j == 0 (W's columns are s_j u_j; the terms of a zero
    singular value are dropped)."""
    b = ctx.b

    def one(j):
        at = raw_pointer(ctx, VECTOR, s, [j])
        sj = b.load(at)
        b.store(b.select(b.fcmp_ordered("==", sj, _d(0.0)), _d(0.0), b.fdiv(t(j), sj)), at)
    _loop(ctx, _i(0), c, one)


def _vjp(ctx):
    """vjp(g, W, V, s, transposed, out): out = U diag(g) V^T = sum_j W[:, j] (g_j / s_j) V[:, j]^T
    in B's frame, written transposed back when B = A^T."""
    def body(g, w, v, s, tr, out):
        b = ctx.b
        m, n = shape_values(ctx, out, 2)
        c = shape_values(ctx, s, 1)[0]
        _weights(ctx, s, lambda j: b.load(raw_pointer(ctx, VECTOR, g, [j])), c)

        def element(idx):
            i, l = b.select(tr, idx[1], idx[0]), b.select(tr, idx[0], idx[1])      # B's indices
            total = counted_loop(ctx, _i(0), c, _i(1), [_d(0.0)], lambda j, acc: [b.fadd(acc[0], b.fmul(b.fmul(
                _get(ctx, w, i, j), b.load(raw_pointer(ctx, VECTOR, s, [j]))), _get(ctx, v, l, j)))])[0]
            b.store(total, _ptr(ctx, out, *idx))
        each_index(ctx, [m, n], element)
        b.ret_void()
    arr, vec = ltype(MATRIX), ltype(VECTOR)
    return ctx.module_function("srcgrad.rt.svd_vjp", [vec, arr, arr, vec, BIT, arr], ir.VoidType(), body)


def _jvp(ctx):
    """jvp(dA, W, V, s, transposed, out): out_j = u_j^T dB v_j = sum_(i, l) W[i, j] dB[i, l] V[l, j] / s_j."""
    def body(da, w, v, s, tr, out):
        b = ctx.b
        r, c = shape_values(ctx, w, 2)

        def component(j):
            def step(idx, carried):
                i, l = idx
                db = _get(ctx, da, b.select(tr, l, i), b.select(tr, i, l))
                return [b.fadd(carried[0], b.fmul(b.fmul(_get(ctx, w, i, j), db), _get(ctx, v, l, j)))]
            return _each_carried(ctx, [r, c], [_d(0.0)], step)[0]
        _weights(ctx, s, component, c)
        _loop(ctx, _i(0), c, lambda j: b.store(b.load(raw_pointer(ctx, VECTOR, s, [j])),
                                               raw_pointer(ctx, VECTOR, out, [j])))
        b.ret_void()
    arr, vec = ltype(MATRIX), ltype(VECTOR)
    return ctx.module_function("srcgrad.rt.svd_jvp", [arr, arr, arr, vec, BIT, vec], ir.VoidType(), body)


@lower(LINALG, "svdvals")
def _svdvals(ctx, op, ins):
    """np.linalg.svd(A, compute_uv=False): the sorted s_j, scaled back by max|a|."""
    b = ctx.b
    svd = _Svd(ctx, op.operands[0].type, ins[0])
    _loop(ctx, _i(0), svd.c, lambda j: b.store(b.fmul(b.load(raw_pointer(ctx, VECTOR, svd.s, [j])), svd.top),
                                               raw_pointer(ctx, VECTOR, svd.s, [j])))
    return svd.s


@lower(LINALG, "svdvals_grad")
def _svdvals_grad(ctx, op, ins):
    """vjp: U diag(t) V^T; jvp: diag(U^T dA V); the terms of s_j == 0 dropped (the module's
    functions ``_vjp``, ``_jvp`` on the factors of ``_Svd``)."""
    (tt, at), (t, a) = [v.type for v in op.operands], ins
    svd = _Svd(ctx, at, a)
    if tt.dtype is not F64:
        t = _copy(ctx, tt, t, shape_values(ctx, t, tt.ndim))
    if op.attrs["mode"] == "jvp":
        out = new_array(ctx, VECTOR, [svd.c], None)
        ctx.b.call(_jvp(ctx), [t, svd.w, svd.v, svd.s, svd.tr, out])
        return out
    out = new_array(ctx, MATRIX, shape_values(ctx, a, 2), None)
    ctx.b.call(_vjp(ctx), [t, svd.w, svd.v, svd.s, svd.tr, out])
    return out


# ---------------------------------------------------------------------- einsum and norm_sqrt
@lower(LINALG, "einsum")
def _einsum(ctx, op, ins):
    """One loop nest: the output's indices outside, the summed ones inside (an accumulator)."""
    b = ctx.b
    inputs, output = op.attrs["spec"]
    types = [v.type for v in op.operands]
    ins = [stored(ctx, t, v) for t, v in zip(types, ins)]
    shapes = [shape_values(ctx, v, t.ndim) for t, v in zip(types, ins)]
    size = {}
    for sub, shape in zip(inputs, shapes):
        for c, n in zip(sub, shape):
            if c not in size:
                size[c] = n
                continue
            ctx.raise_at(b.icmp_signed("!=", size[c], n), lambda err, c=c: ValueError(
                f"np.einsum: the index '{c}' has size {err[0]} in one operand and {err[1]} in another"), [size[c], n])
    summed = [c for c in dict.fromkeys("".join(inputs)) if c not in output]
    acc = ctx.stack_slot(DOUBLE)

    def term(at):
        value = None
        for sub, t, v in zip(inputs, types, ins):
            x = as_f64(ctx, t, load_element(ctx, t, v, [at[c] for c in sub]))
            value = x if value is None else b.fmul(value, x)
        return value

    def element(out_idx):
        at = dict(zip("".join(dict.fromkeys(output)), out_idx))
        b.store(_d(0.0), acc)

        def step(idx):
            at.update(zip(summed, idx))
            b.store(sum_step(ctx, b.load(acc), term(at)), acc)
        each_index(ctx, [size[c] for c in summed], step)
        return b.load(acc)
    if not output:
        return element([])
    out_t = op.results[0].type
    unique = "".join(dict.fromkeys(output))     # an output index repeats in gradients of diagonals
    result = new_array(ctx, out_t, [size[c] for c in output], None if unique == output else 0.0)

    def store(idx):
        value = element(idx)
        store_element(ctx, out_t, result, [dict(zip(unique, idx))[c] for c in output], value)
    each_index(ctx, [size[c] for c in unique], store)
    return result


@lower(LINALG_SCALAR, "norm_sqrt")
def _norm_sqrt(ctx, in_types, out_type, ins, elementwise):
    return ctx.scalar("sqrt", in_types, out_type, ins, elementwise)
