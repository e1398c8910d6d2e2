"""The python backend's entries for numpy's advanced indexing: ``x[idx]`` and ``x[mask]`` are
written as themselves (numpy's semantics, errors included), the writes as ``x[idx] = v``,
``x[mask] = v`` and ``np.add.at(x, idx, v)``.

Example:
    INDEXING_EXPR["gather"](em, op, [_name("x"), _name("idx")])     # x[idx]
"""
import ast

from .exprs import _attr, _call, _name


def _key(ins):
    return ins[0] if len(ins) == 1 else ast.Tuple(elts=list(ins), ctx=ast.Load())


def _gather(em, op, ins):
    if op.attrs.get("last_only"):
        return _call(_name("_gather_last"), [ins[0], ast.Tuple(elts=list(ins[1:]), ctx=ast.Load())])
    return ast.Subscript(value=ins[0], slice=_key(ins[1:]), ctx=ast.Load())


def _mask_select(em, op, ins):
    return ast.Subscript(value=ins[0], slice=ins[1], ctx=ast.Load())


def _write(em, op, yield_to):
    """x[key] = v in place: the new version is the same array, under the same name."""
    arr, v, *rest = op.operands
    em.names.alias(op.result, em.names.name(arr))
    value, target = em.value(v), _name(em.names.name(arr))
    key = _key([em.value(r) for r in rest])
    if op.prim == "scatter_add":
        return [ast.Expr(value=_call(_attr(_attr("np", "add"), "at"), [target, key, value]))]
    return [ast.Assign(targets=[ast.Subscript(value=target, slice=key, ctx=ast.Store())], value=value, lineno=0)]


_write.key = lambda em, op, idx: _key([em.value(r) for r in idx])      # the subscript (undo.py saves through it)

INDEXING_EXPR = {"gather": _gather, "mask_select": _mask_select}
INDEXING_STMT = {"scatter": _write, "scatter_add": _write, "setmask": _write}
