"""The python backend's expressions for the reductions family (keepdims, np.cumsum,
np.cumprod and its gradient, np.argmax/argmin, np.floor & co on floats), merged into
``exprs.EXPR``; the helpers it calls are srcgrad/runtime.py's.

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
        return ast_call(ast_name("cumsum_reverse"), ins + [ast.Constant(op.attrs["axis"])])
    return ast_call(ast_attr("np", "cumsum"), ins, _axis(op))


def _arg(fname):
    def expr(em, op, ins):
        axis = op.attrs.get("axis")
        found = ast_call(ast_attr("np", fname), ins, [] if axis is None else _axis(op))
        if op.results[0].type.is_array:
            return found
        return ast_call(ast_name("int"), [found])        # a Python int, as the other int results
    return expr


REDUCTION_EXPR = {
    "expand_dims": lambda em, op, ins: ast_call(ast_attr("np", "expand_dims"), ins + [ast.Constant(op.attrs["axis"])]),
    "cumsum": _cumsum,
    "cumprod": lambda em, op, ins: ast_call(ast_attr("np", "cumprod"), ins, _axis(op)),
    "cumprod_grad": lambda em, op, ins: ast_call(ast_name("cumprod_grad"), ins + [
        ast.Constant(op.attrs["axis"]), ast.Constant(op.attrs["mode"])]),
    "argmax": _arg("argmax"), "argmin": _arg("argmin"),
    "argsort": lambda em, op, ins: ast_call(ast_attr("np", "argsort"), ins, _axis(op) + [
        ast.keyword(arg="kind", value=ast.Constant("stable"))]),
    "take_along": lambda em, op, ins: ast_call(ast_attr("np", "take_along_axis"), ins, _axis(op)),
    "put_along": lambda em, op, ins: ast_call(ast_name("put_along"), ins + [ast.Constant(op.attrs["axis"])]),
    "float_floor": np_call("floor"), "float_ceil": np_call("ceil"), "float_trunc": np_call("trunc"),
    "float_rint": np_call("rint"),
}

