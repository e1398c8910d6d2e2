"""When a loop of the llvm backend may free, at the end of each iteration, the arrays the
iteration allocated.

Every native allocation of a call is recorded in its arena, which Python frees after the
call, on every exit path. A loop that allocates (``t = x * 2.0`` in the body, or a carried
``a = a + 1.0``) would otherwise keep every iteration's arrays until the call ends. At the end
of an iteration, everything allocated since the loop began is freed except the arrays the
iteration passes on (its yielded values: found by their data pointer, which is where their
allocation starts). That is sound when every yielded array is an allocation of its own or
a value from outside the iteration — not a view into an allocation (``t[1:]``, ``t.T``) — no
tape keeps an array of the iteration, and every undo log save in the loop is into memory
allocated before the loop began (the log keeps its addresses for a later rewind). The one
tape that may keep an iteration's arrays is a checkpointed loop's snapshots (ad/checkpoint.py):
its slots own copies, which the arena marks as theirs (memory.py, ``tape_put``).

Example:
    frees_each_iteration(loop_op)      # True
"""
from ...ir.core import walk_ops
from ...ir.primitives import PRIMITIVES


def frees_each_iteration(loop_op):
    """Whether ``loop_op`` (for or while) allocates and may free per iteration (module doc)."""
    body = loop_op.body
    ops = list(walk_ops(body))
    if not any(PRIMITIVES[op.prim].makes_new_array(op) for op in ops):
        return False
    if any(op.prim == "tape_put" and not _owned_copies(op) for op in ops):
        return False
    inside = {r for op in ops for r in op.results}
    # the undo log (undo.py) keeps the addresses of the elements a save found until a rewind puts
    # them back, maybe after this iteration: where they are in an array this iteration (or an
    # earlier one) allocated, freeing it at the iteration's end would let that rewind write freed
    # memory. Saves into memory allocated before the loop began (which is never freed here: the
    # caller's arrays, a table the loop fills, the arrays a tape hands back) leave freeing sound.
    carried = _carried_arguments([loop_op] + [op for op in ops if op.prim in ("for", "while")])
    saved = [op.operands[0] for op in ops if op.prim == "undo_save"]
    if not all(_allocated_before(v, inside, carried, set()) for v in saved):
        return False
    return all(_own_or_outside(y, inside) for y in body.yielded if y.type.is_array)


def _owned_copies(put):
    """Whether a ``tape_put`` puts no array, or only copies its slot owns (snapshots)."""
    arrays = [v for v in put.operands[2:] if v.type.is_array]
    return not arrays or put.attrs.get("owned", False) and all(v.owner.prim == "copy" for v in arrays)


def _carried_arguments(loops):
    """{carried block argument of a loop in ``loops``: (the loop, its position)}."""
    out = {}
    for op in loops:
        for j, a in enumerate(op.carried):
            out[a] = (op, j)
        if op.prim == "while":
            out.update((a, (op, j)) for j, a in enumerate(op.test.args))
    return out


def _allocated_before(v, inside, carried, seen):
    """Whether array value ``v`` (used in the loop's body; ``inside``: the values defined there,
    ``carried``: its loops' carried arguments) lives in memory allocated before the loop began.
    A value met again through a loop-carried cycle adds no memory of its own (``seen``)."""
    if v in seen or (v not in inside and v not in carried):
        return True
    seen.add(v)
    if v in carried:
        op, j = carried[v]
        return all(_allocated_before(w, inside, carried, seen) for w in (op.inits[j], op.body.yielded[j]))
    op = v.owner
    prim = PRIMITIVES[op.prim]
    if prim.writes is not None or prim.view:
        return _allocated_before(op.operands[prim.writes or 0], inside, carried, seen)
    if op.prim == "tape_get":        # an array put on the tape before the loop (no array tape_put in it)
        return True
    j = op.results.index(v)
    if op.prim == "if":
        return all(_allocated_before(r.yielded[j], inside, carried, seen) for r in (op.then, op.orelse))
    if op.prim in ("for", "while"):
        return all(_allocated_before(w, inside, carried, seen) for w in (op.inits[j], op.body.yielded[j]))
    return False            # made in the loop (or by user code)


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
