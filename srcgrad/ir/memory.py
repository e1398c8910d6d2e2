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
from .core import walk_op, walk_ops as _walk
from .primitives import PRIMITIVES

EXTERN = "extern"
# ops whose array operands may be read again through memory of unknown origin (EXTERN): a tape
# item comes back from tape_get, and a custom_vjp function may return (a view of) its argument;
# or written without being named: an undo_rewind puts back what undo_save saved
_ESCAPES = ("tape_put", "call_custom", "call_custom_vjp", "undo_save")


class Buffers:
    """Roots of every array value of ``fn``, which roots are written, and which are read."""

    def __init__(self, fn):
        self.fn = fn
        self.roots = {}
        self.params = {p for p in fn.params if p.type.is_array}
        for p in self.params:
            self.roots[p] = {p}
        self._ops = list(_walk(fn.body))
        self.written, self.read = set(), set()
        self._escaped, self._where, self._inside = None, None, {}
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

    def read_later(self, op):
        """Whether some op that may run after the write ``op`` reads what it writes: an op after it
        in its block or in the blocks around it, any op of a loop around it (the next
        iteration), the caller through ``return``; or the buffer is the caller's, of unknown
        origin, or may come back later from a tape or a custom_vjp function. Unlike
        ``observable``, reads before the write do not count, nor a read of an element the write
        provably leaves alone (``x[0]`` after ``x[1:] = v``, ``disjoint``). The backends keep
        the IR's order (fusion evaluates a lazy read late only where no write between may reach
        its memory), so "after" is program order."""
        return self._later(op, self.of(op.operands[PRIMITIVES[op.prim].writes]), op, False)

    def dead_after(self, op, v):
        """Whether no op that may run after ``op`` (as in ``read_later``) reads or writes the buffer
        array ``v`` lives in, and that buffer is this function's own (not an argument's, of
        unknown origin, a tape item, or given to a custom_vjp function)."""
        return not self._later(op, self.of(v), None, True)

    def _later(self, op, roots, write, writes):
        if EXTERN in roots or roots & self.params:
            return True
        if self._escaped is None:
            self._escaped = set().union(*(self.of(v) for o in self._ops if o.prim in _ESCAPES
                                          for v in o.operands))
            self._where = {}
            _locate(self.fn.body, None, self._where)
        if roots & self._escaped:
            return True
        touches = (lambda o: self._reads(o, roots, write) or
                   writes and PRIMITIVES[o.prim].writes is not None and self.of(o.operands[PRIMITIVES[o.prim].writes]) & roots)
        at_op = op
        while True:
            block, at, parent = self._where[at_op]
            if any(touches(o) for top in block.ops[at + 1:] for o in walk_op(top)):
                return True
            if parent is None:
                return False
            if parent.prim in ("for", "while") and not self._per_iteration(roots, parent) and \
                    any(touches(o) for o in walk_op(parent)):
                return True         # the next iteration
            at_op = parent

    def _per_iteration(self, roots, loop):
        """Whether ``roots`` are buffers each iteration of ``loop`` makes anew and no carried value
        takes to the next: made by ops in its body, none of them yielded."""
        inside = self._inside.get(loop)
        if inside is None:
            inside = self._inside[loop] = set(walk_op(loop))
        return roots <= inside and not any(self.of(v) & roots for v in loop.body.yielded)

    def _reads(self, op, roots, write):
        """Whether ``op`` itself (not the ops nested in it) reads one of ``roots`` where ``write``
        may have written."""
        if write is not None and op.prim == "index" and disjoint(op, write):
            return False
        return any(self.of(v) & roots and not (write is not None and _apart_view(v, write)) for v in read_operands(op))

    def never_written(self, v):
        """Whether no in-place write reaches the buffer ``v`` lives in."""
        roots = self.of(v)
        return EXTERN not in roots and not (roots & self.written)

    def mutable(self):
        """Every array value living in a buffer that some op writes in place."""
        return {v for v, roots in self.roots.items() if roots & self.written}


def _locate(block, parent, where):
    """``where[op] = (its block, its position there, the op whose region the block is)``."""
    for at, op in enumerate(block.ops):
        where[op] = (block, at, parent)
        for r in op.regions:
            _locate(r, op, where)


def disjoint(read, write):
    """Whether ``read`` (an ``index``, or a ``slice``: the view's elements) provably reads no
    element ``write`` (a write of one element or a basic slice) writes: both are of one array (versions of it, not views), and along some
    axis their constant indices and bounds do not meet (``x[0]`` and ``x[1:] = v``, ``x[-1]`` and
    ``x[:-1] = v``; a negative index counts from the end, so it meets only negative bounds)."""
    if _base(read.operands[0]) is not _base(write.operands[PRIMITIVES[write.prim].writes]):
        return False
    return any(a is not None and b is not None and _apart(a, b) for a, b in zip(extents(read), extents(write)))


def _apart_view(v, write):
    """Whether ``v`` is a slice of an array (a view) that ``write`` leaves alone: what reads ``v``
    reads none of the elements ``write`` writes."""
    return v.owner is not None and v.owner.prim == "slice" and disjoint(v.owner, write)


def _base(v):
    """The array ``v`` is a version of: the start of its chain of in-place writes."""
    while v.owner is not None and PRIMITIVES[v.owner.prim].writes == 0:
        v = v.owner.operands[0]
    return v


def int_constant(v):
    """The value of ``v`` where it is an int constant; None otherwise."""
    op = v.owner
    ok = op is not None and op.prim == "const" and type(op.attrs["value"]) is int
    return op.attrs["value"] if ok else None


def coordinate(k):
    """An index or bound as (side, offset): ("start", k) for k >= 0, ("end", k) for k < 0
    (``n + k``); None where not a constant."""
    return None if k is None else ("start", k) if k >= 0 else ("end", k)


def extents(op):
    """Per leading axis, the half-open range of positions ``op`` touches, as two coordinates
    (None where not known). Only element reads and writes and basic-slice writes."""
    prim = PRIMITIVES[op.prim]
    if op.prim in ("index", "setitem", "index_add"):
        start = prim.index_start
        out = []
        for v in op.operands[start:]:
            k = int_constant(v)
            out.append(None if k is None else (coordinate(k), ("start", k + 1) if k >= 0 else ("end", k + 1)))
        return out
    if op.prim in ("slice", "setslice", "slice_add"):
        bounds, out = list(op.operands[1 if op.prim == "slice" else 2:]), []
        for entry in op.attrs["spec"]:
            if entry[0] == "n":
                return out                  # a new axis: the axes after it are shifted
            if entry[0] == "i":
                k = int_constant(bounds.pop(0))
                out.append(None if k is None else (coordinate(k), ("start", k + 1) if k >= 0 else ("end", k + 1)))
                continue
            _, has_start, has_stop, has_step = entry
            lo = coordinate(int_constant(bounds.pop(0))) if has_start else ("start", 0)
            hi = coordinate(int_constant(bounds.pop(0))) if has_stop else ("end", 0)
            step = int_constant(bounds.pop(0)) if has_step else 1
            out.append((lo, hi) if lo is not None and hi is not None and step == 1 else None)
        return out
    return []


def within(a, b):
    """Whether the range ``a`` lies inside the range ``b`` (pairs of coordinates, as ``extents``
    gives): each end of ``a`` counted from the same side as ``b``'s, and inside it."""
    return a[0][0] == b[0][0] and b[0][1] <= a[0][1] and a[1][0] == b[1][0] and a[1][1] <= b[1][1]


def _apart(a, b):
    """Whether the ranges ``a`` and ``b`` (pairs of coordinates) cannot share a position: one
    ends where the other has not begun, counted from the same side."""
    return any(x[0] == y[0] and x[1] <= y[1] for x, y in ((a[1], b[0]), (b[1], a[0])))


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
