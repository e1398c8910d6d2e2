"""The python backend's entries for numpy's advanced indexing: ``x[idx]`` and ``x[mask]`` are
written as themselves (numpy's semantics, errors included), the writes as ``x[idx] = v``,
``x[mask] = v`` and ``np.add.at(x, idx, v)``.

Example:
    INDEXING_EXPR["gather"](em, op, [ast_name("x"), ast_name("idx")])     # x[idx]
"""
import ast

from .syntax import ast_attr, ast_call, ast_name
from .write_keys import subscript as _key


def _gather(em, op, ins):
    if op.attrs.get("last_only"):
        return ast_call(ast_name("gather_last"), [ins[0], ast.Tuple(elts=list(ins[1:]), ctx=ast.Load())])
    return ast.Subscript(value=ins[0], slice=_key(ins[1:]), ctx=ast.Load())


def _mask_select(em, op, ins):
    return ast.Subscript(value=ins[0], slice=ins[1], ctx=ast.Load())


def _write(em, op, yield_to):
    """x[key] = v in place: the new version is the same array, under the same name."""
    arr, v, *rest = op.operands
    em.names.alias(op.result, em.names.name(arr))
    value, target = em.value(v), ast_name(em.names.name(arr))
    key = _key([em.value(r) for r in rest])
    if op.prim == "scatter_add":
        return [ast.Expr(value=ast_call(ast_attr(ast_attr("np", "add"), "at"), [target, key, value]))]
    return [ast.Assign(targets=[ast.Subscript(value=target, slice=key, ctx=ast.Store())], value=value, lineno=0)]



INDEXING_EXPR = {"gather": _gather, "mask_select": _mask_select}
INDEXING_STMT = {"scatter": _write, "scatter_add": _write, "setmask": _write}
