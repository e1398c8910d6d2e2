"""The python backend's expressions for the reductions family (keepdims, np.cumsum,
np.cumprod and its gradient, np.argmax/argmin, np.floor & co on floats), merged into
``exprs.EXPR``; ``HELPERS`` are the functions the generated code calls by a private name.

Example:
    REDUCTION_EXPR["cumsum"]        # np.cumsum(x, axis=k)
"""
import ast

import numpy as np

from .syntax import ast_attr, ast_call, ast_name, np_call


def _axis(op):
    return [ast.keyword(arg="axis", value=ast.Constant(op.attrs["axis"]))]


def _cumsum(em, op, ins):
    if op.attrs.get("reverse"):
        return ast_call(ast_name("_cumsum_reverse"), ins + [ast.Constant(op.attrs["axis"])])
    return ast_call(ast_attr("np", "cumsum"), ins, _axis(op))


def _arg(fname):
    def expr(em, op, ins):
        axis = op.attrs.get("axis")
        found = ast_call(ast_attr("np", fname), ins, [] if axis is None else _axis(op))
        if op.results[0].type.is_array:
            return found
        return ast_call(ast_name("int"), [found])        # a Python int, as the other int results
    return expr


def cumsum_reverse(x, axis):
    """The cumulative sum from the end along ``axis`` (cumsum's adjoint), in that order."""
    return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis).copy()


def cumprod_grad(t, x, axis, mode):
    """d cumprod without division (exact at zeros), P the running product (P[-1] = 1):
    vjp: grad[i] = P[i-1]·S[i], S[i] = t[i] + x[i+1]·S[i+1]; jvp: dP[i] = dP[i-1]·x[i] + P[i-1]·t[i]."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, 0)
    t = np.broadcast_to(np.moveaxis(np.asarray(t, dtype=np.float64), axis, 0), x.shape)
    out = np.empty(x.shape)
    before, acc = np.ones(x.shape[1:]), np.zeros(x.shape[1:])
    if mode == "jvp":
        for i in range(x.shape[0]):
            acc = t[i] if i == 0 else acc * x[i] + before * t[i]
            before = before * x[i]
            out[i] = acc
    else:
        for i in reversed(range(x.shape[0])):
            acc = t[i] + x[i + 1] * acc if i + 1 < x.shape[0] else t[i]
            out[i] = acc
        for i in range(x.shape[0]):
            out[i] = before * out[i]
            before = before * x[i]
    return np.ascontiguousarray(np.moveaxis(out, 0, axis))


REDUCTION_EXPR = {
    "expand_dims": lambda em, op, ins: ast_call(ast_attr("np", "expand_dims"), ins + [ast.Constant(op.attrs["axis"])]),
    "cumsum": _cumsum,
    "cumprod": lambda em, op, ins: ast_call(ast_attr("np", "cumprod"), ins, _axis(op)),
    "cumprod_grad": lambda em, op, ins: ast_call(ast_name("_cumprod_grad"), ins + [
        ast.Constant(op.attrs["axis"]), ast.Constant(op.attrs["mode"])]),
    "argmax": _arg("argmax"), "argmin": _arg("argmin"),
    "argsort": lambda em, op, ins: ast_call(ast_attr("np", "argsort"), ins, _axis(op) + [
        ast.keyword(arg="kind", value=ast.Constant("stable"))]),
    "take_along": lambda em, op, ins: ast_call(ast_attr("np", "take_along_axis"), ins, _axis(op)),
    "put_along": lambda em, op, ins: ast_call(ast_name("_put_along"), ins + [ast.Constant(op.attrs["axis"])]),
    "float_floor": np_call("floor"), "float_ceil": np_call("ceil"), "float_trunc": np_call("trunc"),
    "float_rint": np_call("rint"),
}

def put_along(g, idx, axis):
    """out[.., idx[i], ..] += g[.., i, ..] into zeros: take_along's adjoint."""
    out = np.zeros(np.shape(g))
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    np.add.at(out, tuple(grids), g)
    return out


HELPERS = {"_cumsum_reverse": cumsum_reverse, "_cumprod_grad": cumprod_grad, "_put_along": put_along}
