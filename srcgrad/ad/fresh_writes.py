"""Writes into an array made in the same iteration whose old contents nothing reads: they need
nothing on the undo log (mutation.py).

``un = u.copy()`` in a time loop makes a new buffer each step; the stencil then writes into it
(``un[i] = ...``) reading only ``u``. What ``un[i]`` held before the write (a copy of ``u``) is read
by nobody, before or after, so the reverse sweep never needs it back: the log stays empty, and
the tape keeps each step's array as the loop's carried value.

For an allocation ``A`` in a block, the values after it are *current* (the buffer ``A`` made in
this pass over the block), *not current* (made before ``A`` ran this time: a block argument of
the loop carrying ``un`` into ``u``, say), or *maybe* (a loop or ``if`` result that may be either).
A write into a current value needs no save when no op reads a current or maybe value before it:
between ``A`` and the write in program order, or anywhere in a loop around the write (an earlier
iteration reads before it).

Example:
    unsaved_writes(fn, Buffers(fn), logged)      # a set of write ops
"""
from ..ir.core import nested_ops, walk_blocks
from ..ir.memory import read_operands
from ..ir.primitives import PRIMITIVES

YES, NO, MAYBE = "yes", "no", "maybe"
# passes over a loop body before giving up on the fixpoint: each carried value can only move
# once (to MAYBE), so this is enough unless one carried value feeds the next along a chain;
# past it, every carried value that may be current is taken as MAYBE (saved: always safe)
_LOOP_ROUNDS = 4


def _join(a, b):
    return a if a == b else MAYBE


def unsaved_writes(fn, buffers, logged):
    """The writes of ``logged`` whose old contents no op reads (module doc)."""
    out = set()
    for block in walk_blocks(fn.body):
        for k, alloc in enumerate(block.ops):
            if not (PRIMITIVES[alloc.prim].makes_new_array(alloc) and buffers.of(alloc.results[0]) == {alloc}):
                continue
            rest = block.ops[k + 1:]
            state = {alloc.results[0]: YES}
            _propagate(rest, state)
            for op in rest:
                for w in [op, *nested_ops(op)]:
                    if w in logged and state.get(w.operands[0]) == YES and not _read_before(w, op, rest, state):
                        out.add(w)
    return out


def _propagate(ops, state):
    """The state of each value ``ops`` define, from those of their operands (module doc)."""
    for op in ops:
        prim = PRIMITIVES[op.prim]
        if op.prim == "if":
            for r in op.regions:
                _propagate(r.ops, state)
            for j, res in enumerate(op.results):
                a, b = (state.get(r.yielded[j], NO) for r in op.regions)
                state[res] = _join(a, b)
        elif op.prim in ("for", "while"):
            _loop(op, state)
        elif (prim.view or prim.writes is not None) and op.results and op.results[0].type.is_array:
            src = op.operands[prim.writes if prim.writes is not None else 0]
            state[op.results[0]] = state.get(src, NO)


def _loop(op, state):
    """A loop's carried values: their initial values' states joined with what the body yields,
    until nothing changes."""
    carried = [state.get(v, NO) for v in op.inits]
    for _ in range(_LOOP_ROUNDS):
        for blk in op.regions:
            args = op.carried if op.prim == "for" else blk.args     # a while's test and body: carried only
            state.update(zip(args, carried))
        for blk in op.regions:
            _propagate(blk.ops, state)
        new = [_join(c, state.get(y, NO)) for c, y in zip(carried, op.body.yielded)]
        if new == carried:
            break
        carried = new
    else:
        carried = [MAYBE if c != NO else NO for c in carried]
    state.update(zip(op.results, carried))


def _reads_current(ops, state, skip=None):
    """Whether an op of ``ops`` (with its regions) reads a current or maybe value (a write's own
    target is not a read, nor is handing a value on)."""
    return any(state.get(v, NO) != NO for op in ops for o in [op, *nested_ops(op)] if o is not skip
               for v in read_operands(o))


def _read_before(w, top, rest, state):
    """Whether an op reads the buffer before write ``w`` runs: ``top`` is the op of ``rest`` (the
    ops after the allocation) that holds ``w``."""
    if _reads_current(rest[:rest.index(top)], state):
        return True
    return _read_inside_before(w, top, state)


def _read_inside_before(w, op, state):
    """Within ``op`` (which holds ``w`` or is ``w``): a loop around ``w`` reads anywhere in it (an
    earlier iteration comes first); an ``if`` or a body before ``w``."""
    if op is w:
        return False
    for blk in op.regions:
        path = next((o for o in blk.ops if o is w or w in nested_ops(o)), None)
        if path is None:
            continue
        if op.prim in ("for", "while"):
            return _reads_current([o for r in op.regions for o in r.ops], state, skip=w)
        if _reads_current(blk.ops[:blk.ops.index(path)], state):
            return True
        return _read_inside_before(w, path, state)
    return False

