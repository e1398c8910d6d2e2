"""Reverse mode through a gradient's own tapes: ``grad(grad(f))`` where f has loops.

The gradient of a loop stores each iteration's carried values on a tape in its forward sweep
(``tape_put(tape, k, values)``) and reads them back in its reverse sweep (``values =
tape_get(tape, k)``). Differentiating that code in reverse mode again, the adjoint of the read
is a write and the adjoint of the write a read, on an *adjoint tape* of the same length made
before the (outer) reverse sweep:

    values = tape_get(tape, k)      adjoint: tape_put(dtape, k, dvalues)
    tape_put(tape, k, values)       adjoint: dvalues += tape_get(dtape, k)

The outer reverse sweep meets the read first (it runs the gradient's reverse loop backwards),
then the write. This holds where each slot is written once and read once: a tape made at the
function's top level or in a loop iteration or a branch being reversed (nested loops), with
one ``tape_put`` in the body of one ``for`` loop of the same block and one ``tape_get`` in the
body of another, at that loop's own index (the tapes ad/reverse.py makes for ``for`` loops).
A ``while`` loop's growing tape keeps the clear error of ad/second_order.py.

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> def f(x):
    ...     for i in range(3):
    ...         x = x * np.sin(x)
    ...     return x
    >>> round(srcgrad.grad(srcgrad.grad(f))(0.5), 6)     # f with a loop: through its gradient's tape
    0.633561
"""
from ..ir.core import current, walk_ops
from ..ir.types import F64, ArrayType, is_float


def adjoint_tapes(ops, active, mapping):
    """{tape: (adjoint tape, positions of its float items)} for the tapes made by ``ops`` (one
    block: the function's top level, or a loop iteration or a branch being reversed) that a
    derivative goes through and that fit (see the module's doc); the adjoint tapes are made
    now, in the current block, before the block's reverse sweep."""
    found = {}
    for op in ops:
        if op.prim != "tape_new" or not op.operands:
            continue
        tape = op.results[0]
        puts = _ops_on(ops, tape, "tape_put")
        gets = _ops_on(ops, tape, "tape_get")
        if len(puts) != 1 or len(gets) != 1 or puts[0][1] is None or gets[0][1] is None:
            continue
        (put, _), (get, loop) = puts[0], gets[0]
        if loop.prim != "for" or get.operands[1] is not loop.index:
            continue                        # read at the loop's index: every slot once
        floats = [j for j, t in enumerate(tape.type.items) if is_float(t)]
        if not any(put.operands[2 + j] in active for j in floats):
            continue
        items = [ArrayType(F64, t.ndim) if t.is_array else F64 for t in (tape.type.items[j] for j in floats)]
        atape = current().emit("tape_new", [mapping[op.operands[0]]], {"items": items}, name="dtape")
        found[tape] = (atape, floats)
    return found


def _ops_on(ops, tape, prim):
    """[(op, the ``for`` loop of ``ops`` whose body holds it directly, or None)] for each op
    ``prim`` on ``tape`` in ``ops`` and the regions inside them."""
    out = []
    for top in ops:
        if top.prim == prim and top.operands[0] is tape:
            out.append((top, None))
        for region in top.regions:
            for op in walk_ops(region):
                if op.prim == prim and op.operands[0] is tape:
                    direct = top.prim == "for" and op in region.ops
                    out.append((op, top if direct else None))
    return out


def tape_adjoint(reverser, op, adj, mapping):
    """The adjoint of a ``tape_get`` (its values' adjoints put on the adjoint tape) or of a
    ``tape_put`` (the adjoint tape's slot added to its values' adjoints)."""
    atape, floats = reverser.adjoint_tapes[op.operands[0]]
    b = current()
    k = mapping[op.operands[1]]
    if op.prim == "tape_get":
        values = []
        for j in floats:
            g = adj.get(op.results[j])
            if g is None:
                g = reverser.zero_like(op.results[j], mapping)
            elif g.type.is_array:
                g = b.emit("copy", [g], name=g.name)        # the slot keeps it: not updated in place later
            values.append(g)
        b.emit("tape_put", [atape, k] + values, result_types=[])
        return
    got = b.emit("tape_get", [atape, k], result_types=list(atape.type.items))
    got = got if isinstance(got, list) else [got]
    for g, j in zip(got, floats):
        v = op.operands[2 + j]
        if v in reverser.active:
            reverser.add(adj, v, g)


__all__ = ["adjoint_tapes", "tape_adjoint"]
