"""Checkpointing (``grad(f, checkpoint=...)``): a long loop's reverse sweep in bounded memory.

Without it, the forward sweep keeps every iteration's carried values on a tape. With it, the
forward sweep runs each loop of the function's top level untaped and keeps only the loop's
carried values on entry, in snapshot slot 0 of ``s``. The reverse sweep then reverses the
iterations from the last to the first by binomial checkpointing (Griewank and Walther's
revolve). To reverse iterations ``cap .. fine - 1`` from the snapshot (taken before iteration
``cap``) in slot ``top``:

- with no slot free above ``top``, or one iteration left, it recomputes from ``cap`` up to
  iteration ``fine - 1`` and runs that iteration's adjoint; when that was iteration ``cap``,
  slot ``top`` is free again;
- otherwise it recomputes up to a split point ``m`` and takes a snapshot there, in slot
  ``top + 1``. The split is binomial: with ``c`` slots (``top``'s and those above it) and
  ``r`` the fewest recomputations per iteration that reach, β(c, r) = C(c + r, c) ≥ fine - cap,
  the part after ``m`` is β(c - 1, r) long (what the slots above ``top`` reverse in r).

So ``s`` snapshots reverse T iterations recomputing each at most r times, r the least with
C(s + r, s) ≥ T: 64 snapshots reverse 10,000 iterations with r = 3, 2.9T recomputations in
all (Griewank's optimum, r·T − C(s + r, r − 1), is 2.8T); 1,000 snapshots with r = 2, 1.9T.
Every iteration's adjoint sees exactly the values the forward sweep computed (recomputed by
the same ops from the same values), so the gradient is bit for bit the taped one (but where
the passes run a taped reverse loop that only accumulates forwards, adding in another order:
there the two agree to rounding).

A ``while`` loop counts its iterations in the forward sweep and is then reversed as a ``for``
over that count: its body is recomputed, its test is not (it held each time it ran).

An array the loop writes in place (``u[1:-1] = ...``, ``G += np.outer(x, x)``, ``h[t + 1] = ...``)
is part of the state: a snapshot holds a copy of its contents, put back into the array before
recomputing from it. Those runs write without saving on the undo log; the iteration whose
adjoint runs saves its writes and rewinds them after its adjoint, so each iteration leaves the
log as it found it and the array as at the iteration's start. (A table the loop fills row by
row is copied whole into each snapshot: there the undo log, without ``checkpoint=``, keeps
less.) An array made and written within one iteration, not carried to the next, is no state.
Refused, with the write's line: a write into an array the loop does not carry in one buffer
from start to end (one it replaces by a new array in some iteration).

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> def f(x):
    ...     for i in range(100):
    ...         x = np.sin(x)
    ...     return np.sum(x)
    >>> x = np.ones(3)
    >>> dx = srcgrad.grad(f, checkpoint=64)(x)        # 64 snapshots per loop
    >>> dx2 = srcgrad.grad(f, checkpoint="100MB")(x)  # as many as fit in 100 MB
    >>> bool(np.all(dx == srcgrad.grad(f)(x))), bool(np.all(dx2 == dx))      # bit for bit
    (True, True)
"""
import re
from dataclasses import dataclass

from ..errors import UnsupportedSyntaxError
from ..ir.core import Block, Builder, Value, current, for_op, if_op, walk_ops, while_op
from ..ir.types import BOOL, F32, I64
from .clone import write_whole

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


@dataclass(frozen=True)
class Policy:
    """How many snapshots a checkpointed loop keeps: ``slots``, or as many as fit in ``budget``
    bytes (counted at run time from the loop's carried values on entry)."""
    slots: int = None
    budget: int = None

    @staticmethod
    def of(checkpoint, name):
        """The Policy for a ``checkpoint=`` argument: an int (snapshots) or a size in bytes as
        a string ("100MB", "1.5GiB"); None stays None.

        >>> Policy.of(64, "grad").slots
        64
        """
        if checkpoint is None:
            return None
        if isinstance(checkpoint, bool) or not isinstance(checkpoint, (int, str)):
            raise TypeError(f"srcgrad.{name}(..., checkpoint={checkpoint!r}): give the number of snapshots "
                            "(an int, like 64) or a memory budget (a string, like '100MB')")
        if isinstance(checkpoint, int):
            if checkpoint < 1:
                raise ValueError(f"srcgrad.{name}(..., checkpoint={checkpoint}): a loop needs at least one "
                                 "snapshot (the one of its start)")
            return Policy(slots=checkpoint)
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", checkpoint)
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError(f"srcgrad.{name}(..., checkpoint={checkpoint!r}): a memory budget is a number and a "
                             f"unit: one of {', '.join(u.upper() for u in _UNITS if u)}, like '100MB'")
        return Policy(budget=int(float(m.group(1)) * _UNITS[m.group(2).lower()]))


@dataclass
class Snapshots:
    """The forward sweep's record of a checkpointed loop, for its reverse sweep."""
    tape: Value         # slot j: (the iteration it was taken before, *the carried values then)
    slots: Value        # how many slots
    count: Value        # the loop's trip count
    start: Value        # a for loop's range start and step (None for a while loop)
    step: Value
    in_place: set       # positions of carried arrays written in place: put back from the snapshot


def snapshot_loop(r, op, mapping):
    """The forward sweep of loop ``op`` under checkpointing: its carried values on entry in
    snapshot slot 0, then the loop itself, untaped (a while loop counting its iterations)."""
    in_place = _written_in_place(r, op)
    b = current()
    zero = b.const(0)
    slots = _slot_count(r.checkpoint, op, mapping)
    items = [I64] + [a.type for a in op.carried]
    tape = b.emit("tape_new", [slots], {"items": items, "snapshots": True}, name="snapshots")
    entry = [b.emit("copy", [mapping[v]], name=a.name) if j in in_place else mapping[v]
             for j, (a, v) in enumerate(zip(op.carried, op.inits))]
    b.emit("tape_put", [tape, zero, zero] + entry, result_types=[])
    r._mark(op, mapping)
    r.saving = False            # the snapshots, not the undo log, keep what the loop overwrites
    try:
        if op.prim == "for":
            start, stop, step = (mapping[v] for v in op.bounds)
            count = b.emit("range_len", [start, stop, step], name="n")
            r._clone(op, mapping)
            return Snapshots(tape, slots, count, start, step, in_place)
        _, count, _, _, _ = r._taped_while(op, mapping, [], False, taped=False)
        return Snapshots(tape, slots, count, None, None, in_place)
    finally:
        r.saving = True


def _written_in_place(r, op):
    """The positions of the carried arrays that loop ``op`` writes in place, keeping one buffer
    from its start to its end (their snapshots are copies); refuses a loop that saves writes
    into any other memory."""
    if not r._writes_in(op):
        return set()
    of = r.buffers.of
    in_place = {j for j, (a, v, y) in enumerate(zip(op.carried, op.inits, op.body.yielded))
                if a.type.is_array and of(a) == of(v) and of(y) <= of(v)}
    kept = set().union(*(of(op.inits[j]) for j in in_place))
    # an array made in an iteration and not carried to the next lives within it: its contents
    # at an iteration's start are not state
    inside = set(walk_ops(op.body))         # (a buffer's roots are the ops that made it: ir/memory.py)
    used = {v for w in walk_ops(op.body) for v in w.operands}
    carried = set().union(*(of(a) for a in op.carried if a in used))    # (b = x * 2.0 each iteration: not)
    for w in walk_ops(op.body):
        roots = of(w.operands[0]) if w in r.logged and w not in r.plan.unsaved else set()
        if not roots <= kept and not (roots <= inside and not roots & carried):
            raise UnsupportedSyntaxError(
                "checkpoint=: this loop writes into an array it does not keep in one buffer from its first "
                "iteration to its last (a new array replaces it in some iteration), so a snapshot cannot say "
                "what the write overwrote", w.loc,
                "hint: write into a fresh copy each iteration (un = u.copy(); un[i] = ...; u = un), or into one "
                "array throughout; or leave checkpoint= out")
    return in_place


def _slot_count(policy, op, mapping):
    """The number of snapshot slots: the user's, or as many as the budget holds (at least one)."""
    b = current()
    if policy.slots is not None:
        return b.const(policy.slots)
    size = b.const(8 * (1 + sum(not a.type.is_array for a in op.carried)))   # the iteration and scalars
    for a, init in zip(op.carried, op.inits):
        if a.type.is_array:
            itemsize = 4 if a.type.dtype is F32 else 1 if a.type.dtype is BOOL else 8
            size = b.emit("add", [size, b.emit("mul", [b.emit("size", [mapping[init]]), itemsize])])
    return b.emit("max", [b.emit("floordiv", [b.const(policy.budget), size]), 1], name="slots")


def reverse_checkpointed(r, op, adj, mapping, snaps):
    """The reverse sweep of a checkpointed loop: a while loop over (fine, top) as the module
    doc says, carrying the adjoints as the taped loop's adjoint does."""
    b = current()
    carried, free, inits, names = r.loop_adjoint_inits(op, adj, mapping)
    counter = "i" if op.prim == "while" else op.index.name
    state = ["fine", "top"] + names
    types = [I64, I64] + [v.type for v in inits]
    test = Block([Value(t, n) for t, n in zip(types, state)])
    with Builder(test) as tb:
        tb.yield_([tb.emit("gt", [test.args[0], 0])])
    body = Block([Value(t, n) for t, n in zip(types, state)])
    with Builder(body) as bb:
        fine, top, *accs = body.args
        got = bb.emit("tape_get", [snaps.tape, top], result_types=list(snaps.tape.type.items))
        cap, *values = got if isinstance(got, list) else [got]      # (a loop may carry nothing)
        cap.name = "cap"
        for v, a in zip(values, op.carried):
            v.name = a.name
        values = _put_back(op, snaps, values, mapping)
        left = bb.emit("sub", [fine, cap], name="left")
        free_slots = bb.emit("sub", [bb.emit("sub", [snaps.slots, top]), 1], name="free")
        turn = bb.emit("or", [bb.emit("eq", [free_slots, 0]), bb.emit("eq", [left, 1])], name="turn")
        then = Block()
        with Builder(then) as t:            # iteration fine - 1 backwards
            k = t.emit("sub", [fine, 1], name=counter)
            now = _advance(r, op, snaps, cap, k, values, mapping)
            inner = r.iteration_mapping(op, k, now, snaps.start, snaps.step, mapping)
            # the iteration saves its writes, and leaves memory and the undo log as it found them
            height = t.emit("undo_mark", [r.log], name="mark") if snaps.in_place else None
            outs = r.iteration_adjoint(op, inner, accs, carried, free)
            if height is not None:
                t.emit("undo_rewind", [r.log, height], result_types=[])
            popped = t.emit("select", [t.emit("eq", [k, cap]), t.emit("sub", [top, 1]), top], name="top")
            t.yield_([k, popped] + outs)
        orelse = Block()
        with Builder(orelse) as e:          # a snapshot at the split point
            m = e.emit("sub", [fine, _after_split(left, e.emit("add", [free_slots, 1], name="slots"))], name="m")
            now = _advance(r, op, snaps, cap, m, values, mapping)
            up = e.emit("add", [top, 1], name="top")
            # the slot owns copies: the llvm backend frees them when the slot is taken again
            now = [e.emit("copy", [v], name=v.name) if v.type.is_array else v for v in now]
            e.emit("tape_put", [snaps.tape, up, m] + now, {"owned": True}, result_types=[])
            e.yield_([fine, up] + accs)
        step = if_op(turn, then, orelse, types, op.loc, state)
        bb.append(step)
        bb.yield_(step.results)
    loop = while_op([snaps.count, b.const(0)] + inits, test, body, types, op.loc, state)
    b.append(loop)
    r.loop_adjoint_results(op, loop.results[2:], carried, free, adj)


def _put_back(op, snaps, values, mapping):
    """The carried values of a snapshot: an array written in place is the loop's own array,
    its contents put back from the snapshot's copy."""
    return [write_whole(mapping[op.inits[j]], v, op.carried[j].name) if j in snaps.in_place else v
            for j, v in enumerate(values)]


def _advance(r, op, snaps, lo, hi, values, mapping):
    """The carried values before iteration ``hi``, recomputed from ``values`` (before ``lo``):
    iterations lo .. hi - 1 of the loop's body, untaped, saving nothing on the undo log."""
    k = Value(I64, "i" if op.prim == "while" else op.index.name)
    nb = Block([k] + [Value(a.type, a.name) for a in op.carried])
    with Builder(nb) as bb:
        inner = r.iteration_mapping(op, k, nb.args[1:], snaps.start, snaps.step, mapping)
        r.saving = False
        try:
            r.forward(op.body.ops[:-1], inner, tape_loops=False)
        finally:
            r.saving = True
        bb.yield_([inner[v] for v in op.body.yielded])
    loop = for_op(lo, hi, current().const(1), values, nb, [a.type for a in op.carried], op.loc,
                  [a.name for a in op.carried])
    current().append(loop)
    return list(loop.results)


def _after_split(left, c):
    """β(c - 1, r) capped at left - 1: how many of ``left`` iterations go after the split point,
    with ``c`` slots and r the fewest repetitions with β(c, r) = C(c + r, c) ≥ left.

        r, beta = 0, 1
        while beta < left:
            r += 1
            beta = beta * (c + r) // r         # C(c + r, c) from C(c + r - 1, c)
        return min(beta * c // (c + r), left - 1)   # C(c - 1 + r, c - 1)
    """
    b = current()
    types = [I64, I64]
    test = Block([Value(I64, "r"), Value(I64, "beta")])
    with Builder(test) as tb:
        tb.yield_([tb.emit("lt", [test.args[1], left])])
    body = Block([Value(I64, "r"), Value(I64, "beta")])
    with Builder(body) as bb:
        reps, beta = body.args
        more = bb.emit("add", [reps, 1], name="r")
        bb.yield_([more, bb.emit("floordiv", [bb.emit("mul", [beta, bb.emit("add", [c, more])]), more], name="beta")])
    loop = while_op([b.const(0), b.const(1)], test, body, types, b.loc, ["r", "beta"])
    b.append(loop)
    reps, beta = loop.results
    after = b.emit("floordiv", [b.emit("mul", [beta, c]), b.emit("add", [c, reps])])
    return b.emit("min", [after, b.emit("sub", [left, 1])], name="after")
