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
    facts = Buffers(fn)
    facts.observable(write_op)      # True: the write changes memory someone may read
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
            writes = PRIMITIVES[op.prim].writes
            if writes is not None:
                self.written |= self.of(op.operands[writes])
            for v in read_operands(op):
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
                    changed |= self._add(r, self.of(region.yielded[j]))
        elif op.prim in ("for", "while"):
            for j, r in enumerate(op.results):
                carried = self.of(op.inits[j]) | self.of(op.body.yielded[j])
                changed |= self._add(r, carried)
                changed |= self._add(op.carried[j], carried)
                if op.prim == "while":
                    changed |= self._add(op.test.args[j], carried)
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


def read_operands(op):
    """The array operands whose memory ``op`` itself reads: not the one it writes into, nor one
    it only hands on (a view's array, a loop's initial value, a yield)."""
    writes = PRIMITIVES[op.prim].writes
    return [v for k, v in enumerate(op.operands) if v.type.is_array and k != writes and not _passes_through(op, k)]


def _passes_through(op, k):
    """Whether operand ``k`` of ``op`` only hands the array on (a view, a loop's initial value,
    a region's yield) rather than reading it."""
    prim = PRIMITIVES[op.prim]
    if op.prim in ("yield",) or op.prim in ("for", "while"):
        return True
    return prim.view and k == 0
