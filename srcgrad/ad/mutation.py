"""Arrays written in place (``x[i] = v``) under differentiation.

The IR gives each write a new version of the array, while the backends write one buffer, as
Python does. The reverse sweep needs each op's operands as they were when the op ran, so
every write into memory someone reads saves, on the undo log, the elements it overwrites
(``logged_writes``), and the reverse sweep puts them back as it passes the write (ad/reverse.py).
The log holds only overwritten elements: a write of one element costs one entry, a row write
a row, whatever loop or branch it is in.

What is still refused, with the user's line:

- ``refuse_stale_uses``: a view used after a write through another name (both modes).

Example:
    logged_writes(fn, Buffers(fn))      # the writes whose old values the undo log keeps
"""
from ..errors import UnsupportedSyntaxError
from ..ir.core import nested_ops, walk_blocks, walk_ops
from ..ir.memory import Buffers, read_operands
from ..ir.primitives import PRIMITIVES
from .fresh_writes import unsaved_writes

def logged_writes(fn, buffers):
    """The writes of ``fn`` whose overwritten elements the reverse sweep must put back: those
    into memory some op reads, or the caller's (an argument array). A write into memory only
    written (and returned, or dropped) needs nothing back."""
    return frozenset(op for op in walk_ops(fn.body) if PRIMITIVES[op.prim].user_write and buffers.observable(op))


class UndoPlan:
    """Where the reverse sweep must put memory back, and where a recomputation must write.

    A rewind pops every entry above its mark, whatever wrote it, so one rewind before the
    first op that reads the memory again is enough: a write (or a loop or ``if`` around writes)
    rewinds after its adjoint only when an op before it in its block reads memory it writes
    (``rewinds``); the ops before a loop or ``if`` are covered by the rewind after it. A write
    recomputed in the reverse sweep (a loop's iteration, a branch) is done again only when an
    op after it in the recomputed block reads what it wrote (``replays``). A write into an array
    made in the same iteration, whose old contents nothing reads, saves nothing (``unsaved``,
    fresh_writes.py)."""

    def __init__(self, fn, buffers, logged):
        self.buffers, self.logged = buffers, logged
        self._written = {}
        self.rewinds, self.replays = set(), set()
        self.top = set(fn.body.ops)
        self.unsaved = unsaved_writes(fn, buffers, logged)     # old contents nobody reads
        for block in walk_blocks(fn.body):
            self._block(block)

    def written(self, op):
        """The roots of the memory that the logged writes in ``op`` (or ``op`` itself) change."""
        if op not in self._written:
            out = set(self.buffers.of(op.operands[0])) if op in self.logged else set()
            for r in op.regions:
                for o in r.ops:
                    out |= self.written(o)
            self._written[op] = out
        return self._written[op]

    def _reads(self, op):
        """The roots of the memory ``op`` (with its regions) reads."""
        return {r for o in [op, *nested_ops(op)] for v in read_operands(o) for r in self.buffers.of(v)}

    def _block(self, block):
        reads = [self._reads(op) for op in block.ops]
        after = [set()]                 # after[j]: what the ops from the end down to op -1 - j read
        for r in reversed(reads):
            after.append(after[-1] | r)
        before = set()
        for k, op in enumerate(block.ops):
            mine = self.written(op)
            if mine and mine & before:
                self.rewinds.add(op)
            if op in self.logged and mine & after[len(block.ops) - 1 - k]:
                self.replays.add(op)
            before |= reads[k]


def refuse_stale_uses(fn, buffers=None):
    """Raise UnsupportedSyntaxError at the first stale use of ``fn`` (see first_stale_use): the
    derivative passes call it, as the versions they differentiate would be wrong there."""
    found = first_stale_use(fn, buffers)
    if found is not None:
        op, v = found
        if fn.derivative:
            raise UnsupportedSyntaxError(
                f"srcgrad cannot differentiate the derivative {fn.name} again: its code reads an array after writing "
                "into it through another name (a view, or an adjoint shared by two arrays), which derivatives of "
                "derivatives do not handle yet", op.loc,
                "differentiate once, or write the function without slices written in place")
        raise UnsupportedSyntaxError(
            f"srcgrad cannot differentiate this yet: '{v.name or 'this array'}' may share memory with an array "
            "written since through another name (a view such as t = a[1:] or a.T, written or read after a write; "
            "or arrays that trade places in a loop, u, un = un, u)", op.loc,
            "write and read the array through one name, or take a copy: t = a[1:].copy(), or un = u.copy() "
            "in the loop")


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
    """A walk in program order counting, per buffer, the writes into it. A buffer is its root
    (ir/memory.py) and, for an allocation, which of its executions made it: ``un = u.copy()`` in
    a loop makes a new buffer each iteration, so writing it does not touch the ``u`` carried in
    from the iteration before, though both have that op among their roots."""

    def __init__(self):
        self.now = {}           # buffer -> the count of the last write into it
        self.made = {}          # value -> the counts of its buffers when it was made
        self.runs = {}          # allocating op -> how many times the walk has run it
        self.counter = 0
        # derivative code (a gradient differentiated again): a write saved on the undo log is
        # undone by a rewind to a height before it, which gives its buffers their counts back
        self.saved = None       # the array of the last undo_save, whose write comes next
        self.undo = []          # per saved write: {buffer: its count before the write}
        self.heights = {}       # undo_mark result -> len(self.undo) then

    def _buffers(self, v, buffers):
        return [(r, self.runs.get(r, 0)) for r in buffers.of(v)]

    def stamp(self, v, buffers, like=None):
        """Record ``v``'s buffers (those of the array ``like`` it views or versions) and their counts."""
        keys = list(self.made[like]) if like in self.made else self._buffers(v, buffers)
        self.made[v] = {k: self.now.get(k, 0) for k in keys}

    def check(self, op, v, buffers):
        made = self.made.get(v)
        if made is not None and any(self.now.get(k, 0) != c for k, c in made.items()):
            raise _Stale(op, v)

    def block(self, block, buffers):
        for a in block.args:
            if a.type.is_array:
                self.stamp(a, buffers)
        for op in block.ops:
            prim = PRIMITIVES[op.prim]
            for k, v in enumerate(op.operands):
                # a write changes no shape; a gradient's copy and restore of the caller's arrays
                # (ad/reverse.py, final_states) read and write them through their entry names on purpose
                if v.type.is_array and k != prim.shape_operand and not op.attrs.get("final_state"):
                    self.check(op, v, buffers)
            if op.prim == "if":
                before, before_undo, ends, stacks = dict(self.now), list(self.undo), [], []
                for r in op.regions:
                    self.now, self.undo = dict(before), list(before_undo)
                    self.block(r, buffers)
                    ends.append(self.now)
                    stacks.append(self.undo)
                self.now = {k: max(e.get(k, 0) for e in ends) for e in ends for k in e}
                # a later rewind below the if undoes the saved writes of whichever branch ran
                # (between a mark and its rewind, derivative code saves every write into memory
                # the rewind restores: ad/reverse.py)
                common = 0
                while all(len(u) > common and u[common] is stacks[0][common] for u in stacks):
                    common += 1
                self.undo = stacks[0][:common] + [e for u in stacks for e in u[common:]]
            elif op.regions:
                for _ in range(2):          # the second pass sees what the first iteration wrote
                    for r in op.regions:
                        self.block(r, buffers)
            if op.prim == "undo_save":
                self.saved = op.operands[0]
            elif op.prim == "undo_mark":
                self.heights[op.results[0]] = len(self.undo)
            elif op.prim == "undo_rewind":
                self._rewind(self.heights.get(op.operands[1]))
            if prim.writes is not None:
                self.counter += 1
                target = op.operands[prim.writes]
                keys = self.made[target] if target in self.made else self._buffers(target, buffers)
                if self.saved is target:
                    self.undo.append({k: self.now.get(k, 0) for k in keys})
                self.saved = None
                for k in keys:
                    self.now[k] = self.counter
            fresh = prim.makes_new_array(op) and buffers.of(op.results[0]) == {op}
            if fresh:
                self.runs[op] = self.runs.get(op, 0) + 1
            for r in op.results:
                if r.type.is_array:
                    views = (prim.view or prim.writes is not None) and op.operands
                    self.stamp(r, buffers, op.operands[prim.writes or 0] if views else None)


    def _rewind(self, height):
        """undo_rewind to ``height`` (None: a height read back from a tape, unknown here, so
        nothing is taken as undone: the check stays on the safe side)."""
        if height is None:
            return
        while len(self.undo) > height:
            self.now.update(self.undo.pop())


__all__ = ["logged_writes", "UndoPlan", "refuse_stale_uses", "first_stale_use"]
