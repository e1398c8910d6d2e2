"""Which buffers an array value may live in: the facts that let passes keep in-place writes.

In the IR an element write ``x' = setitem x, v, i`` makes a new version of ``x``, but the
backends write ``x``'s buffer in place, as Python does: ``x'``, ``x``, and every view of either
(``x[1:]``, ``x.T``) are one buffer. A pass may therefore not drop a write because its
result is unused when the buffer is the caller's (an argument) or is read elsewhere, and may
not merge two arrays when either is written later. This module finds, for every array
value, its *roots*: the ops that made the buffers it may be (an allocation, a computed
array), the argument it came from, or ``EXTERN`` for memory of unknown origin (tape items,
what user code returned).

Example:
    >>> facts = Buffers(fn)
    >>> facts.observable(write_op)      # the write changes memory someone may read
    True
"""
from .core import walk_ops as _walk
from .primitives import PRIMITIVES

EXTERN = "extern"


class Buffers:
    """Roots of every array value of ``fn``, which roots are written, and which are read."""

    def __init__(self, fn):
        self.roots = {}
        self.params = {p for p in fn.params if p.type.is_array}
        for p in self.params:
            self.roots[p] = {p}
        self._ops = list(_walk(fn.body))
        self.written, self.read = set(), set()
        if not self.params and not any(r.type.is_array for op in self._ops for r in op.results):
            return              # no arrays: nothing shares memory
        changed = True
        while changed:              # loop-carried arrays: grow the sets to a fixpoint
            changed = False
            for op in self._ops:
                changed |= self._flow(op)
        for op in self._ops:
            prim = PRIMITIVES[op.prim]
            for k, v in enumerate(op.operands):
                if not v.type.is_array:
                    continue
                if k == prim.writes:
                    self.written |= self.of(v)
                elif not _passes_through(op, k):
                    self.read |= self.of(v)

    def of(self, v):
        """The roots of array value ``v`` (a set; empty for numbers)."""
        return self.roots.get(v, set())

    def _add(self, v, roots):
        old = self.roots.setdefault(v, set())
        if roots <= old:
            return False
        old |= roots
        return True

    def _flow(self, op):
        prim = PRIMITIVES[op.prim]
        changed = False
        arrays = [r for r in op.results if r.type.is_array]
        if op.prim == "if":
            for j, r in enumerate(op.results):
                for region in op.regions:
                    changed |= self._add(r, self.of(region.ops[-1].operands[j]))
        elif op.prim in ("for", "while"):
            first = 3 if op.prim == "for" else 0
            body = op.regions[-1]
            args = body.args[1:] if op.prim == "for" else body.args
            for j, r in enumerate(op.results):
                carried = self.of(op.operands[first + j]) | self.of(body.ops[-1].operands[j])
                changed |= self._add(r, carried)
                changed |= self._add(args[j], carried)
                if op.prim == "while":
                    changed |= self._add(op.regions[0].args[j], carried)
        elif prim.view or prim.writes is not None:
            for r in arrays:
                changed |= self._add(r, self.of(op.operands[0]))
        elif op.prim in ("tape_get", "call_custom", "call_custom_vjp"):
            for r in arrays:
                changed |= self._add(r, {EXTERN})
        else:
            for r in arrays:
                changed |= self._add(r, {op})
            if prim.may_alias:          # sum_to may hand back its operand itself
                for r in arrays:
                    changed |= self._add(r, self.of(op.operands[0]))
        return changed

    def observable(self, op):
        """Whether ``op``'s in-place write may be seen: its buffer is the caller's (or unknown), or
        some op reads a value living in it (read before or after: this is conservative)."""
        roots = self.of(op.operands[PRIMITIVES[op.prim].writes])
        return EXTERN in roots or bool(roots & self.params) or bool(roots & self.read)

    def never_written(self, v):
        """Whether no in-place write reaches the buffer ``v`` lives in."""
        roots = self.of(v)
        return EXTERN not in roots and not (roots & self.written)

    def mutable(self):
        """Every array value living in a buffer that some op writes in place."""
        return {v for v, roots in self.roots.items() if roots & self.written}


def _passes_through(op, k):
    """Whether operand ``k`` of ``op`` only hands the array on (a view, a loop's initial value,
    a region's yield) rather than reading it."""
    prim = PRIMITIVES[op.prim]
    if op.prim in ("yield",) or op.prim in ("for", "while"):
        return True
    return prim.view and k == 0


def refuse_stale_uses(fn):
    """Raise UnsupportedSyntaxError at the first stale use of ``fn`` (see first_stale_use): the
    derivative passes call it, as the versions they differentiate would be wrong there."""
    from ..errors import UnsupportedSyntaxError
    found = first_stale_use(fn)
    if found is not None:
        op, v = found
        raise UnsupportedSyntaxError(
            f"srcgrad cannot differentiate this yet: '{v.name or 'this array'}' shares memory with an array written "
            "since through another name (a view such as t = a[1:] or a.T, written or read after a write)", op.loc,
            "write and read the array through one name, or take a copy: t = a[1:].copy()")


def first_stale_use(fn):
    """The first ``(op, value)`` where ``op`` uses an array ``value`` whose buffer was written,
    since ``value`` was made, through another name: ``t = a.T; a[0, 1] = v; t[1, 0]`` reads
    ``t``, and ``s = a[1:]; s[0] = v; a[1]`` reads ``a``. The backends see the write (they share
    the buffer, as Python does); the IR's versions do not, so the derivative passes refuse
    these until the frontend re-derives views after writes. None when there is none."""
    buffers = Buffers(fn)
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
