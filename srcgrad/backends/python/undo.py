"""The python backend's undo log (ad/reverse.py): a list of (array, key, old values). A write
saves what it overwrites, ``undo.append((x, np.s_[i], x[i]))``; the reverse sweep puts it back,
``rewind(undo, h)`` (srcgrad/runtime.py), to the height ``h = len(undo)`` taken before.

Example:
    UNDO_STMT["undo_mark"](em, op, None)        # [h = len(undo)]
"""
import ast

from ...ir.primitives import PRIMITIVES
from .syntax import ast_attr, ast_call, ast_name
from .write_keys import WRITE_KEYS


def _new(em, op, yield_to):
    return [em.assign(op.results[0], ast.List(elts=[], ctx=ast.Load()))]


def _mark(em, op, yield_to):
    return [em.assign(op.results[0], ast_call(ast_name("len"), [em.value(op.operands[0])]))]


def _save(em, op, yield_to):
    """undo.append((x, np.s_[key], x[key])): the key as the write writes it (a copy of what a
    slice, an index array or a mask reads, which later writes would change)."""
    arr, log, *idx = op.operands
    write = op.attrs["write"]
    key = WRITE_KEYS[PRIMITIVES[write].key](em, op, idx)
    # a site (emit.py): an index out of bounds raises here, before the write, the write's IndexError
    old = em.site(ast.Subscript(value=em.value(arr), slice=key, ctx=ast.Load()), op)
    if PRIMITIVES[write].key != "item":      # one element is a number, the others arrays
        old = ast_call(ast_attr(old, "copy"), [])
    where = ast.Subscript(value=ast_attr("np", "s_"), slice=key, ctx=ast.Load())
    entry = ast.Tuple(elts=[em.value(arr), where, old], ctx=ast.Load())
    return [ast.Expr(value=ast_call(ast_attr(em.value(log), "append"), [entry]))]


def _rewind(em, op, yield_to):
    return [ast.Expr(value=ast_call(ast_name("rewind"), [em.value(v) for v in op.operands]))]


UNDO_STMT = {"undo_new": _new, "undo_mark": _mark, "undo_save": _save, "undo_rewind": _rewind}
