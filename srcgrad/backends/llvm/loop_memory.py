"""When a loop of the llvm backend may free, at the end of each iteration, the arrays the
iteration allocated.

Every native allocation of a call is recorded in its arena, which Python frees after the
call, on every exit path. A loop that allocates (``t = x * 2.0`` in the body, or a carried
``a = a + 1.0``) would otherwise keep every iteration's arrays until the call ends. At the end
of an iteration, everything allocated since the loop began is freed except the arrays the
iteration passes on (its yielded values: found by their data pointer, which is where their
allocation starts). That is sound when every yielded array is an allocation of its own or
a value from outside the iteration — not a view into an allocation (``t[1:]``, ``t.T``) — no
tape keeps an array of the iteration, and no undo log entry points into one.

Example:
    >>> frees_each_iteration(loop_op)
    True
"""
from ...ir.core import walk_ops
from ...ir.primitives import PRIMITIVES


def frees_each_iteration(loop_op):
    """Whether ``loop_op`` (for or while) allocates and may free per iteration (module doc)."""
    body = loop_op.body
    ops = list(walk_ops(body))
    if not any(PRIMITIVES[op.prim].makes_new_array(op) for op in ops):
        return False
    if any(op.prim == "tape_put" and any(v.type.is_array for v in op.operands[2:]) for op in ops):
        return False
    # the undo log (undo.py) keeps addresses of the elements a save found, maybe in arrays this
    # iteration allocated: freeing those at its end would let a later undo_rewind write freed memory
    if any(op.prim == "undo_save" for op in ops):
        return False
    inside = {r for op in ops for r in op.results}
    return all(_own_or_outside(y, inside) for y in body.yielded if y.type.is_array)


def _own_or_outside(v, inside):
    """``v`` is defined outside, is a block argument, or starts an allocation of its own."""
    if v not in inside:
        return True
    op = v.owner
    prim = PRIMITIVES[op.prim]
    if prim.writes is not None:
        return _own_or_outside(op.operands[prim.writes], inside)
    if prim.view:
        return False
    j = op.results.index(v)
    if op.prim == "if":
        return all(_own_or_outside(r.yielded[j], inside) for r in (op.then, op.orelse))
    if op.prim in ("for", "while"):
        return _own_or_outside(op.inits[j], inside) and _own_or_outside(op.body.yielded[j], inside)
    return True
