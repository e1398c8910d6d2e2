"""Arrays written in place (``x[i] = v``) under differentiation: what the derivative passes
can do with them, and the clear refusals where they cannot yet.

The IR gives each write a new version of the array, while the backends write one buffer, as
Python does. Reverse mode therefore may not read a written array again in its reverse sweep:
it reads values taped in the forward sweep instead (``reads_mutable`` finds those reads).
Where that is not done yet, these functions raise ``UnsupportedSyntaxError`` naming the
user's line:

- ``refuse_stale_uses``: a view used after a write through another name (both modes);
- ``refuse_nested_reads``: a written array read in a loop or branch nested in a loop;
- ``refuse_whole_array_reads``: a whole-array operation on a written array inside a loop;
- ``refuse_in_branch``: a written array read or written inside an ``if``.

Example:
    >>> refuse_stale_uses(fn)      # before forward() or reverse() transforms fn
"""
from ..errors import UnsupportedSyntaxError
from ..ir.core import walk_ops
from ..ir.memory import Buffers
from ..ir.primitives import PRIMITIVES

WRITES = ("setitem", "setslice", "scatter", "setmask", "scatter_add")


def reads_mutable(op, mutable):
    """An op (not a region op, not a write) that reads a written array."""
    return op.prim not in WRITES + ("yield", "return") and not op.regions and \
        any(v in mutable for v in op.operands)


def refuse_nested_reads(op, mutable):
    for o in (o for r in op.regions for o in walk_ops(r)):
        if reads_mutable(o, mutable):
            raise UnsupportedSyntaxError(
                "srcgrad cannot differentiate this yet: an array that is written with x[i] = v is read "
                "inside a nested loop or branch of a loop", o.loc,
                "read the array in the outer loop's body, or keep reads and writes of one array at one "
                "loop level")


def refuse_whole_array_reads(body, read_ops, active):
    """A loop body's reads of written arrays are taped element by element; a whole-array
    operation would need every iteration's version of the array."""
    for o in read_ops:
        if o.prim != "index" and any(v in active for v in o.operands):
            if any(w.prim in WRITES + ("slice_add",) for w in walk_ops(body)):
                raise UnsupportedSyntaxError(
                    "srcgrad cannot differentiate this yet: a whole-array operation reads an array that is "
                    "written with x[i] = v in the same loop (its gradient needs every iteration's version of "
                    "the array)", o.loc, "read the elements one by one (a loop over x[j]), or move the "
                    "whole-array operation after the loop")
            raise UnsupportedSyntaxError(
                "srcgrad cannot differentiate this yet: a whole-array operation in a loop reads an array that "
                "is written with x[i] = v elsewhere in the function", o.loc,
                "copy the array before the loop (c = x.copy()) and read the copy in the loop")


def refuse_in_branch(block, mutable):
    """A branch is recomputed as is in the reverse sweep: there is no tape to read from."""
    for o in walk_ops(block):
        if reads_mutable(o, mutable) or o.prim in ("setitem", "scatter", "setmask", "scatter_add"):
            raise UnsupportedSyntaxError(
                "srcgrad cannot differentiate this yet: an array written with x[i] = v is read or written "
                "inside an `if`", o.loc, "move the read or write out of the `if` (compute both, then select)")


def refuse_stale_uses(fn, buffers=None):
    """Raise UnsupportedSyntaxError at the first stale use of ``fn`` (see first_stale_use): the
    derivative passes call it, as the versions they differentiate would be wrong there."""
    found = first_stale_use(fn, buffers)
    if found is not None:
        op, v = found
        raise UnsupportedSyntaxError(
            f"srcgrad cannot differentiate this yet: '{v.name or 'this array'}' shares memory with an array written "
            "since through another name (a view such as t = a[1:] or a.T, written or read after a write)", op.loc,
            "write and read the array through one name, or take a copy: t = a[1:].copy()")


def first_stale_use(fn, buffers=None):
    """The first ``(op, value)`` where ``op`` uses an array ``value`` whose buffer was written,
    since ``value`` was made, through another name: ``t = a.T; a[0, 1] = v; t[1, 0]`` reads
    ``t``, and ``s = a[1:]; s[0] = v; a[1]`` reads ``a``. The backends see the write (they share
    the buffer, as Python does); the IR's versions do not, so the derivative passes refuse
    these until the frontend re-derives views after writes. None when there is none.
    ``buffers``: ``Buffers(fn)`` when the caller has it already."""
    buffers = Buffers(fn) if buffers is None else buffers
    state = _Epochs()
    try:
        state.block(fn.body, buffers)
    except _Stale as e:
        return e.args
    return None


class _Stale(Exception):
    pass


class _Epochs:
    """A walk in program order counting, per buffer, the writes into it."""

    def __init__(self):
        self.now = {}           # root -> the count of the last write into it
        self.made = {}          # value -> the counts of its roots when it was made
        self.counter = 0

    def stamp(self, v, buffers):
        self.made[v] = {r: self.now.get(r, 0) for r in buffers.of(v)}

    def check(self, op, v, buffers):
        made = self.made.get(v)
        if made is not None and any(self.now.get(r, 0) != c for r, c in made.items()):
            raise _Stale(op, v)

    def block(self, block, buffers):
        for a in block.args:
            if a.type.is_array:
                self.stamp(a, buffers)
        for op in block.ops:
            prim = PRIMITIVES[op.prim]
            for v in op.operands:
                if v.type.is_array:
                    self.check(op, v, buffers)
            if op.prim == "if":
                before, ends = dict(self.now), []
                for r in op.regions:
                    self.now = dict(before)
                    self.block(r, buffers)
                    ends.append(self.now)
                self.now = {k: max(e.get(k, 0) for e in ends) for e in ends for k in e}
            elif op.regions:
                for _ in range(2):          # the second pass sees what the first iteration wrote
                    for r in op.regions:
                        self.block(r, buffers)
            if prim.writes is not None:
                self.counter += 1
                for r in buffers.of(op.operands[prim.writes]):
                    self.now[r] = self.counter
            for r in op.results:
                if r.type.is_array:
                    self.stamp(r, buffers)


__all__ = ["reads_mutable", "refuse_stale_uses", "first_stale_use", "refuse_nested_reads",
           "refuse_whole_array_reads", "refuse_in_branch", "WRITES"]
