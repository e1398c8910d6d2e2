"""One program per primitive of the IR (srcgrad/ir/primitives.py), each making that primitive
appear in its compiled IR (the function's or its gradient's): test_primitive_tables.py checks
each for its value against Python, its gradient against finite differences and the two
backends against each other. A new primitive without a case here fails that test.

Each entry: primitive -> (function, arguments, wrt); wrt None for programs with no float
argument to differentiate.
"""
import math

import numpy as np

import srcgrad


SIGNS = np.array([1.0, -1.0])
V = np.array([0.4, -0.9, 1.3])


@srcgrad.custom_vjp
def softclip(x):
    return math.tanh(x) * 2.0


@softclip.defvjp
def _softclip_vjp(x, y, gy):
    return (gy * 2.0 * (1.0 - math.tanh(x) ** 2),)


def p_const(x): return x * 2.5
def p_to_f64(x, n): return x * float(n)
def p_to_i64(x): return x * int(x * 3.0)
def p_to_bool(x, n): return x * 2.0 if bool(n) else x
def p_add(x, y): return x + y
def p_sub(x, y): return x - y
def p_mul(x, y): return x * y
def p_div(x, y): return x / y
def p_floordiv(x, y): return (x // y) * x + y
def p_mod(x, y): return x % y
def p_pow(x, y): return x ** y
def p_neg(x): return -x * x
def p_abs(x): return abs(x) * 3.0
def p_min(x, y): return min(x, y)
def p_max(x, y): return max(x, y)
def p_atan2(x, y): return math.atan2(x, y)
def p_hypot(x, y): return math.hypot(x, y)
def p_floor(x): return x * math.floor(x * 2.0)
def p_ceil(x): return x * math.ceil(x * 2.0)
def p_round(x): return x * round(x * 5.0)
def p_lt(x, y): return x if x < y else y
def p_le(x, y): return x * 2.0 if x <= y else y
def p_gt(x, y): return x if x > y else -y
def p_ge(x, y): return x * y if x >= y else y
def p_eq(x, n): return x * 2.0 if n == 3 else x
def p_ne(x, n): return x * 2.0 if n != 3 else x
def p_not(x, y): return x * 3.0 if not x > y else y


def p_and(x, y):
    return x * 2.0 if x > 0.0 and y > 0.0 else y


def p_or(x, y):
    return x * 2.0 if x > 5.0 or y > 0.0 else y


def p_select(x, y): return np.sum(np.where(SIGNS > 0.0, x, y))
def p_index(v): return v[1] * v[2]
def p_shape(v): return v[0] * v.shape[0]


def p_slice(v):
    return np.sum(v[1:] * v[:-1])


def p_setslice(v, x):
    w = np.zeros(4)
    w[1:4] = v * x
    return np.sum(w * w)


def p_setitem(v, x):
    w = np.zeros(3)
    w[1] = x * v[0]
    return np.sum(w * v)


# numpy's advanced indexing: index arrays and masks (a place named twice included)
PICK = np.array([2, 0, 2, -1])


def p_gather(v): return np.sum(v[PICK] * v[[1, 1]][0])
def p_mask_select(v): return np.sum(v[v > 0.0] ** 2)


def p_scatter(v, x):
    w = v * 1.0
    w[PICK] = v[:1] * x
    return np.sum(w * w)


def p_setmask(v, x):
    w = v * 2.0
    w[v < 0.0] = x
    return np.sum(w * v)


def p_scatter_add(v, x):
    w = np.zeros(3)
    np.add.at(w, PICK, x * v[0])
    return np.sum(w * v)


def p_full(x): return np.sum(np.full(3, 2.0) * x)
def p_sum(v): return np.sum(v * v)
def p_prod(v): return np.prod(v)
def p_amax(v): return np.max(v * v)
def p_amin(v): return np.min(v * v)
def p_arange(x): return np.sum(np.arange(4) * x)
def p_size(v): return v[0] * v.size
def p_matmul(m, v): return np.sum(m @ v)
def p_transpose(m): return np.sum(m.T @ V)
def p_outer(v): return np.sum(np.outer(v, v) * 0.5)
def p_copy(v):
    w = v.copy()                # written below: a copy nobody writes is its source (shape_passes.py)
    w[0] = 2.0 * v[1]
    return np.sum(w * v)


def p_sum_to(m, v): return np.sum(m * v)          # v is broadcast along m's rows: its adjoint sums them
def p_broadcast_like(m): return np.sum(np.sum(m, axis=0) * V)


def p_loop(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i)
    return s


def p_while(x):
    while x < 3.0:
        x = x * 1.5 + 0.1
    return x


def p_if(x):
    if x > 0.0:
        y = x * x
    else:
        y = -x
    return y


def p_assert(x):
    assert x > 0.0, "x must be positive"
    return math.sqrt(x)


def p_empty(v):
    # np.zeros whose zeros the writes cover: ir/write_passes.py makes it np.empty
    d = np.zeros_like(v)
    d[0] = v[0] * 2.0
    d[1:] = v[1:] * v[:-1]
    return np.sum(d * d)


def p_index_add(v):
    s = 0.0
    for i in range(3):
        s += v[i] * v[i]
    return s


def p_call_custom(x): return softclip(x * 1.5)


def p_overwrite_in_loop(x, n):
    w = np.zeros(3)
    s = 0.0
    for i in range(n):
        w[i % 3] = w[i % 3] * x + 1.0
        s += w[i % 3]
    return s


M = np.array([[0.5, -1.0], [2.0, 0.3], [-0.7, 1.1]])

# the reductions family (issue 11)
def p_expand_dims(x): return np.sum(np.sum(x, axis=1, keepdims=True) * x)
def p_cumsum(x): return np.sum(np.cumsum(x) * x)
def p_cumprod(x): return np.sum(np.cumprod(x) * x)
def p_argmax(x): return x[np.argmax(x)] * 2.0
def p_argmin(x): return x[np.argmin(x)] * 2.0
def p_argsort(x): return np.sum(np.argsort(x) * x)
def p_sort(x): return np.sum(np.sort(x) * x * x)
def p_float_floor(x): return np.sum(np.floor(x * 2.0) * x)
def p_float_ceil(x): return np.sum(np.ceil(x * 2.0) * x)
def p_float_trunc(x): return np.sum(np.trunc(x * 2.0) * x)
def p_float_rint(x): return np.sum(np.rint(x * 2.0) * x)


# joining, splitting and building arrays
def p_concat(v):
    t = np.concatenate([v, v * 2.0])
    return np.sum(t * np.tanh(t))
def p_split_size(v):
    a, b = np.split(v[:2], 2)
    return np.sum(a * np.tanh(b))
def p_diagonal(m): return np.trace(m) + np.sum(np.diagonal(m, 1) ** 2)
def p_diag_embed(v): return np.sum(np.diag(v, 1) @ np.tanh(np.concatenate([v, v[:1]])))
def p_tri(m): return np.sum(np.tril(m) * np.triu(m, 1) + np.tril(m, -1) ** 2)
def p_linspace(x): return np.sum(np.linspace(x, 2.0 * x + 1.0, 4) ** 2)
def p_roll(v): return np.sum(np.roll(v, 1) * np.tanh(v))
def p_tile(v): return np.sum(np.tanh(np.tile(v, (2, 2))) * np.tile(v, 4)[:6])
COUNTS = np.array([2, 0, 1])
def p_repeat_each(v): return np.sum(np.tanh(np.repeat(v, COUNTS)) * 2.0) + np.sum(np.repeat(np.outer(v, v), COUNTS, axis=1))
def p_kron(m): return np.sum(np.tanh(np.kron(m, m.T))) + np.sum(np.kron(m[0], m[:, 1]) ** 2)
def p_repeat(m): return np.sum(np.tanh(np.repeat(m, 2, axis=1))) + np.sum(np.repeat(m, 3)[::4] ** 2)

CASES = {
    "const": (p_const, (0.7,), 0),
    "to_f64": (p_to_f64, (0.7, 3), 0),
    "to_i64": (p_to_i64, (0.7,), 0),
    "to_bool": (p_to_bool, (0.7, 2), 0),
    "add": (p_add, (0.7, -1.2), (0, 1)),
    "sub": (p_sub, (0.7, -1.2), (0, 1)),
    "mul": (p_mul, (0.7, -1.2), (0, 1)),
    "div": (p_div, (0.7, -1.2), (0, 1)),
    "floordiv": (p_floordiv, (2.7, -1.2), (0, 1)),
    "mod": (p_mod, (2.7, -1.2), (0, 1)),
    "pow": (p_pow, (0.7, 1.3), (0, 1)),
    "neg": (p_neg, (0.7,), 0),
    "abs": (p_abs, (-0.7,), 0),
    "min": (p_min, (0.7, -1.2), (0, 1)),
    "max": (p_max, (0.7, -1.2), (0, 1)),
    "atan2": (p_atan2, (0.7, -1.2), (0, 1)),
    "hypot": (p_hypot, (0.7, -1.2), (0, 1)),
    "floor": (p_floor, (0.7,), 0),
    "ceil": (p_ceil, (0.7,), 0),
    "round": (p_round, (0.66,), 0),
    "lt": (p_lt, (0.7, -1.2), (0, 1)),
    "le": (p_le, (0.7, -1.2), (0, 1)),
    "gt": (p_gt, (0.7, -1.2), (0, 1)),
    "ge": (p_ge, (0.7, -1.2), (0, 1)),
    "eq": (p_eq, (0.7, 3), 0),
    "ne": (p_ne, (0.7, 3), 0),
    "not": (p_not, (0.7, -1.2), (0, 1)),
    "and": (p_and, (0.7, -1.2), (0, 1)),
    "or": (p_or, (0.7, -1.2), (0, 1)),
    "select": (p_select, (0.7, -1.2), (0, 1)),
    "index": (p_index, (V,), 0),
    "shape": (p_shape, (V,), 0),
    "slice": (p_slice, (V,), 0),
    "setslice": (p_setslice, (V, 0.7), (0, 1)),
    "slice_add": (p_slice, (V,), 0),
    "setitem": (p_setitem, (V, 0.7), (0, 1)),
    "gather": (p_gather, (V,), 0),
    "mask_select": (p_mask_select, (V,), 0),
    "scatter": (p_scatter, (V, 0.7), (0, 1)),
    "setmask": (p_setmask, (V, 0.7), (0, 1)),
    "scatter_add": (p_scatter_add, (V, 0.7), (0, 1)),
    "full": (p_full, (0.7,), 0),
    "empty": (p_empty, (V,), 0),
    "sum": (p_sum, (V,), 0),
    "prod": (p_prod, (V,), 0),
    "amax": (p_amax, (V,), 0),
    "amin": (p_amin, (V,), 0),
    "reduce_grad": (p_prod, (V,), 0),
    "arange": (p_arange, (0.7,), 0),
    "size": (p_size, (V,), 0),
    "matmul": (p_matmul, (M, np.array([0.3, -0.4])), (0, 1)),
    "transpose": (p_transpose, (M,), 0),
    "outer": (p_outer, (V,), 0),
    "copy": (p_copy, (V,), 0),
    "sum_to": (p_sum_to, (M.copy(), V[:2]), (0, 1)),
    "broadcast_like": (p_broadcast_like, (M.T.copy(),), 0),
    "tape_new": (p_overwrite_in_loop, (0.7, 5), 0),
    "tape_put": (p_overwrite_in_loop, (0.7, 5), 0),
    "tape_get": (p_overwrite_in_loop, (0.7, 5), 0),
    # the gradient's undo log: w[i % 3] is read after it is overwritten
    "undo_new": (p_overwrite_in_loop, (0.7, 5), 0),
    "undo_mark": (p_overwrite_in_loop, (0.7, 5), 0),
    "undo_save": (p_overwrite_in_loop, (0.7, 5), 0),
    "undo_rewind": (p_overwrite_in_loop, (0.7, 5), 0),
    "zeros_like": (p_index_add, (V,), 0),
    "index_add": (p_index_add, (V,), 0),
    "range_len": (p_loop, (0.7, 5), 0),
    "call_custom": (p_call_custom, (0.7,), 0),
    "call_custom_vjp": (p_call_custom, (0.7,), 0),
    "if": (p_if, (0.7,), 0),
    "for": (p_loop, (0.7, 5), 0),
    "while": (p_while, (0.7,), 0),
    "assert": (p_assert, (0.7,), 0),
    "yield": (p_if, (0.7,), 0),
    "return": (p_const, (0.7,), 0),
    "expand_dims": (p_expand_dims, (M,), 0),
    "cumsum": (p_cumsum, (V,), 0),
    "cumprod": (p_cumprod, (V,), 0),
    "cumprod_grad": (p_cumprod, (V,), 0),
    "argmax": (p_argmax, (V,), 0),
    "argmin": (p_argmin, (V,), 0),
    "argsort": (p_argsort, (V,), 0),
    "take_along": (p_sort, (V,), 0),
    "put_along": (p_sort, (V,), 0),
    "float_floor": (p_float_floor, (V,), 0),
    "float_ceil": (p_float_ceil, (V,), 0),
    "float_trunc": (p_float_trunc, (V,), 0),
    "float_rint": (p_float_rint, (V,), 0),
    "concat": (p_concat, (V,), 0),
    "split_size": (p_split_size, (V,), 0),
    "diagonal": (p_diagonal, (M,), 0),
    "diag_embed": (p_diag_embed, (V,), 0),
    "tri": (p_tri, (M,), 0),
    "linspace": (p_linspace, (0.7,), 0),
    "roll": (p_roll, (V,), 0),
    "tile": (p_tile, (V,), 0),
    "tile_sum": (p_tile, (V,), 0),
    "repeat": (p_repeat, (M,), 0),
    "repeat_sum": (p_repeat, (M,), 0),
    "kron": (p_kron, (M,), 0),
    "repeat_each": (p_repeat_each, (V,), 0),
    "repeat_each_sum": (p_repeat_each, (V,), 0),
    "kron_grad": (p_kron, (M,), 0),
    "unary math": None,         # filled in below: one program per function of math
}
del CASES["unary math"]


def _unary(name):
    fn = getattr(math, name)
    point = 0.3 if name not in ("acosh",) else 1.3

    def f(x):
        return fn(x * 0.5 + 0.1) * x
    f.__name__ = f"p_{name}"
    return f, (point,), 0


for _name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p",
              "log2", "log10", "sqrt", "erf"):
    CASES[_name] = _unary(_name)


# linear algebra and contractions (tests/compiler/test_numpy_linalg.py checks them in depth)
LA = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, -0.4], [0.1, 0.5, 3.0]])


def p_einsum(a, v): return np.sum(np.einsum("ij,j->i", a, v) * V)
def p_norm_sqrt(v): return np.linalg.norm(v)
def p_det(a): return np.linalg.det(a)
def p_inv(a): return np.sum(np.linalg.inv(a) * LA)
def p_solve(a, v): return np.sum(np.linalg.solve(a, v) * V)
def p_cholesky(a): return np.sum(np.linalg.cholesky(np.einsum("ij,kj->ik", a, a) + 0.5) * LA)
def p_svdvals(a): return np.sum(np.linalg.svd(a[:, :2], compute_uv=False) * V[:2]) + np.linalg.norm(a.T, "nuc")


def p_slogdet(a):
    s, ld = np.linalg.slogdet(a)
    return s * ld


CASES.update({
    "einsum": (p_einsum, (LA, V), (0, 1)),
    "norm_sqrt": (p_norm_sqrt, (V,), 0),
    "det": (p_det, (LA,), 0),
    "slogdet_sign": (p_slogdet, (LA,), 0),
    "slogdet_log": (p_slogdet, (LA,), 0),
    "inv": (p_inv, (LA,), 0),
    "solve": (p_solve, (LA, V), (0, 1)),
    "cholesky": (p_cholesky, (LA,), 0),
    "cholesky_grad": (p_cholesky, (LA,), 0),
    "svdvals": (p_svdvals, (LA,), 0),
    "svdvals_grad": (p_svdvals, (LA,), 0),
})


# shapes and views (issue 11)
def p_reshape(m): return np.sum(m.reshape(2, 3) @ V * np.arange(2.0)) + np.sum(np.ravel(m.T)[1:] ** 2)
def p_restride(m): return np.sum(np.flip(np.transpose(m), 1) * M.T) + np.sum(np.expand_dims(V, 0).squeeze(0) * m[:, 0])
def p_astype(v): return np.sum(v * np.arange(3).astype(np.float64)) + np.sum((v * 3.0).astype(int) * v) + np.sum(v.astype(bool) * v)
def p_pack(x): return np.sum(np.array([x, x * x, 1.0]) * V) + np.sum(np.array([[x, 2.0], [3.0, x]]) @ M.T[:, :2])
def p_stack(v): return np.sum(np.array([v, v * 2.0]) @ V)


CASES.update({"reshape": (p_reshape, (M,), 0), "restride": (p_restride, (M,), 0), "astype": (p_astype, (V,), 0),
              "pack": (p_pack, (0.7,), 0), "stack": (p_stack, (V,), 0)})
