"""What the python backend decides before it prints a function, so the source reads like the
user's code while computing exactly what the IR computes (the same operations, in the same
order, raising the same error first):

- how a reverse sweep's ``for`` is written: ``for i in reversed(range(start, stop, step))``
  with the user's index name instead of a tape position counting down (``Header``);
- what each printed statement reads, in Python's evaluation order (``reads``), and so how
  often each value is used; ops that these rewrites leave unused are not printed;
- which single-use temporaries are folded back into the expression that uses them;
- which loop (if) results take the name of the value they continue (no ``dx_1 = dx`` copy).

Example:
    plan = Plan(fn)             # fn: an IR Function
    plan.folded                 # values written in place of their single use
"""
import linecache
import re

from ...ir.core import Value, walk_ops
from ...ir.primitives import PRIMITIVES
from ...ir.types import I64
from .exprs import EXPR, const_value, is_const

EAGER, LAZY, FIXED = "eager", "lazy", "fixed"
MAX_OPS = 6     # ops in one printed statement: folds stop there, so each line stays readable
# EAGER: always evaluated where it stands; LAZY: maybe not at all (``and``, ``if``-expressions), or
# after the statement's own error (``a[i] += g`` reads a[i] before g); FIXED: must stay a name


class Header:
    """A reverse sweep printed as ``for target in [reversed](range(*bounds))``.

    ``bounds`` holds Values (or an int); ``absorbed`` are the body's ops that computed the
    index from the tape position ``k`` (the loop variable now is that index); when ``derive``
    is set, ``k`` itself is computed from the index as ``(target - start) // step``."""

    def __init__(self, target, bounds, backwards, k, absorbed=(), derive=None, hint=None):
        self.target, self.bounds, self.backwards, self.k = target, bounds, backwards, k
        self.absorbed, self.derive, self.hint = set(absorbed), derive, hint


class Plan:
    def __init__(self, fn):
        self.fn = fn
        self.parent = {fn.body: None}       # block -> the op owning it
        self.block_of = {}                  # op -> its block
        for op in walk_ops(fn.body):
            for r in op.regions:
                self.parent[r] = op
        for block, owner in self.parent.items():
            for op in block.ops:
                self.block_of[op] = block
        self.headers = {}
        for op in walk_ops(fn.body):
            h = _header(op) if op.prim == "for" and op.attrs.get("reverse_sweep") else None
            if h is not None:
                self.headers[op] = h
        self.skipped = {o for h in self.headers.values() for o in h.absorbed}
        self.reads = {op: self._reads(op) for op in walk_ops(fn.body)}
        self._drop_unused()
        self.folded = set()
        self._leaves = {}
        for block in self.parent:
            self._fold_block(block)
        self.share = {}                     # (loop or if op, slot) -> the value whose name its result takes
        self._share_names()

    # ------------------------------------------------------------------ reads and uses
    def _reads(self, op):
        """[(value, mode)]: what the statement printed for ``op`` reads, in evaluation order."""
        p, ops, prim = op.prim, op.operands, PRIMITIVES[op.prim]
        if op in self.headers:
            return [(v, FIXED) for v in op.inits] + \
                [(v, FIXED) for v in self.headers[op].bounds if isinstance(v, Value)]
        if p in ("for", "while"):
            return [(v, FIXED) for v in ops]
        if p == "if":
            return [(ops[0], EAGER)]
        if p == "yield":
            owner = self.parent[self.block_of[op]]
            test = owner is not None and owner.prim == "while" and owner.test is self.block_of[op]
            return [(v, EAGER if test else FIXED) for v in ops]
        if p in ("and", "or"):
            return [(ops[0], EAGER)] + [(v, LAZY) for v in ops[1:]]
        if p == "select" and not op.results[0].type.is_array:
            return [(ops[0], EAGER), (ops[1], LAZY), (ops[2], LAZY)]
        if p in ("index", "slice", "gather", "mask_select"):
            return [(ops[0], FIXED)] + [(v, EAGER) for v in ops[1:]]
        if prim.writes is not None and not prim.accumulates:                 # a[i] = v: v first
            return [(ops[1], EAGER), (ops[0], FIXED)] + [(v, EAGER) for v in ops[2:]]
        if prim.accumulates:                                                 # a[i] += g: a[i] is read before g
            return [(ops[0], FIXED)] + [(v, EAGER) for v in ops[2:]] + [(ops[1], LAZY)]
        if p == "tape_put":
            vals = [(v, EAGER) for v in ops[2:]]
            return vals + [(ops[0], FIXED)] + ([] if op.attrs.get("append") else [(ops[1], EAGER)])
        if p == "tape_get":
            return [(ops[0], FIXED), (ops[1], EAGER)]
        if p == "tape_new":
            return [(self.tape_size(op), EAGER)] if ops else []
        return [(v, EAGER) for v in ops]

    def tape_size(self, op):
        """The length of a ``tape_new``: ``n`` itself for ``len(range(0, n, 1))`` ([None] * n is
        empty for a negative n as the range is)."""
        n = op.operands[0]
        owner = n.owner
        if owner is not None and owner.prim == "range_len" and is_const(owner.operands[0], 0) \
                and is_const(owner.operands[2], 1):
            return owner.operands[1]
        return n

    def _count(self):
        self.uses, self.reader, self.readers = {}, {}, {}
        for op, reads in self.reads.items():
            if op in self.skipped:
                continue
            for v, mode in reads:
                self.uses[v] = self.uses.get(v, 0) + 1
                self.reader[v] = (op, mode)
                self.readers.setdefault(v, []).append(op)

    def _drop_unused(self):
        """Ops whose only use the rewrites removed (``n - 1`` of a reverse loop) are not printed."""
        while True:
            self._count()
            dead = [op for op in self.reads if op not in self.skipped and op.results
                    and not any(self.uses.get(r) for r in op.results) and _droppable(op)]
            if not dead:
                return
            self.skipped.update(dead)

    # ------------------------------------------------------------------ folding
    def _fold_block(self, block):
        """Fold each single-use temporary into its use in the same block; then undo the folds
        that would change the order of errors or effects (``_bad_folds``)."""
        position = {op: k for k, op in enumerate(block.ops)}
        size = {}
        for op in block.ops:
            if op in self.skipped:
                continue
            size[op] = 1
            for v, mode in self.reads[op]:
                d = v.owner
                if mode != FIXED and d in position and d not in self.skipped and self.uses.get(v) == 1 \
                        and _foldable(d, op) and size[op] + size[d] <= MAX_OPS:
                    self.folded.add(v)
                    size[op] += size[d]
        while True:
            bad = self._bad_folds(block, position)
            if not bad:
                return
            self.folded -= bad

    def _bad_folds(self, block, position):
        """The folds that break Python's order of evaluation: a raising op moved into a place
        that may not run it, or an op moved past one it does not commute with."""
        order, statement, lazy_raise = [], {}, set()

        def expand(op, lazy, stmt):
            for v, mode in self.reads[op]:
                if v in self.folded:
                    inner = lazy or mode == LAZY
                    if inner and _raises(v.owner):
                        lazy_raise.add(v)
                        inner = False       # as it will be: a statement of its own
                    expand(v.owner, inner, stmt)
            order.append(op)
            statement[op] = stmt
        for op in block.ops:
            if op not in self.skipped and not (op.results and op.results[0] in self.folded):
                expand(op, False, op)
        if lazy_raise:
            return lazy_raise
        final = {op: k for k, op in enumerate(order)}
        # whether each op is a barrier, and whether it raises: two that raise keep their order
        kind = {op: 2 if _barrier(op) else int(_raises(op)) for op in order}
        bad = set()
        for a in order:
            # only ops between ``a`` and the statement it moved into can run before it now
            for b in block.ops[position[a] + 1:position[statement[a]]]:
                if b in final and final[b] < final[a] and kind[a] + kind[b] >= 2:
                    bad.add(self._crossing(a, b, position))
                    break
        return bad

    def _crossing(self, a, b, position):
        """The fold in ``a``'s chain of folds that carries it past ``b``."""
        x = a
        while True:
            user = self.reader[x.results[0]][0]
            if user.results and user.results[0] in self.folded and position[user] < position[b]:
                x = user
            else:
                return x.results[0]

    def leaves(self, op):
        """The values whose names the printed ``op`` reads (through its folded operands and
        the ops of its regions)."""
        out = self._leaves.get(op)
        if out is None:
            out = set()
            if op not in self.skipped:
                for v, _ in self.reads[op]:
                    out |= self.leaves(v.owner) if v in self.folded else {v}
                for r in op.regions:
                    for o in r.ops:
                        out |= self.leaves(o)
            self._leaves[op] = out
        return out

    def loc(self, op):
        """Where the statement of ``op`` comes from: its own location, or (an adjoint's op has
        none) that of the first op folded into it that has one."""
        if op.loc is not None:
            return op.loc
        for v, _ in self.reads.get(op, ()):
            if v in self.folded:
                loc = self.loc(v.owner)
                if loc is not None:
                    return loc
        return None

    # ------------------------------------------------------------------ shared names
    def _share_names(self):
        """A loop's (an if's) result takes the name of its init (of a value a branch passes
        through) — no ``dx_1 = dx`` — when both are named after one variable and that value is
        read nowhere after the op (nor again by an enclosing loop; a branch may read it)."""
        order = {op: k for k, op in enumerate(walk_ops(self.fn.body))}
        for op in order:
            if op.prim not in ("for", "while", "if"):
                continue
            made = _made_in(op) if op.prim == "if" else None
            for j, r in enumerate(op.results):
                v = self._passed_in(op, j, made)
                if v is None or const_value(v) is not None or v.name != r.name or not self._once(v, op):
                    continue
                if all(order[u] < order[op] or (op.prim == "if" and self._inside(u, op)) or self._exclusive(u, op)
                       for u in self._readers(v, op)):
                    self.share[(op, j)] = v

    def _once(self, v, op):
        """Whether ``op`` runs at most once each time ``v`` is defined: only ifs lie between
        them (a while's condition shares its arguments' names with the body: not there)."""
        block = self.block_of[op]
        while True:
            owner = self.parent[block]
            if v in block.args:
                return not (owner is not None and owner.prim == "while" and owner.test is block)
            if v.owner is not None and self.block_of.get(v.owner) is block:
                return True
            if owner is None or owner.prim != "if":
                return False
            block = self.block_of[owner]

    def _branches(self, o):
        """{enclosing op: the region of it that holds ``o``}."""
        out, block = {}, self.block_of.get(o)
        while block is not None and self.parent.get(block) is not None:
            owner = self.parent[block]
            out[owner], block = block, self.block_of[owner]
        return out

    def _exclusive(self, u, op):
        """Whether ``u`` and ``op`` sit in the two branches of one ``if``."""
        mine, theirs = self._branches(op), self._branches(u)
        return any(o.prim == "if" and o in theirs and theirs[o] is not blk for o, blk in mine.items())

    def _inside(self, u, op):
        while u is not None and u is not op:
            u = self.parent.get(self.block_of.get(u))
        return u is op

    def _passed_in(self, op, j, made):
        """The value from outside ``op`` whose variable its result ``j`` continues: a loop's
        init; for an if, the one value read inside it that is named like the result (``x``
        before ``if c: x = x * 2.0 else: x = -x``; ``made``: the values defined inside)."""
        if op.prim != "if":
            return op.inits[j] if op.inits.count(op.inits[j]) == 1 else None
        name = op.results[j].name
        if [r.name for r in op.results].count(name) != 1:
            return None
        same = {blk.yielded[j] for blk in op.regions} - made          # passed through unchanged
        if len(same) != 1:
            # a number read inside and named alike; not an array, whose versions after in-place
            # writes print under its name too and may be read after the if (a tangent array
            # named dv and the float tangent dv of a value computed in the if)
            same = {v for v in self.leaves(op) if v.name == name and v not in made
                    and v.type == op.results[j].type and not v.type.is_array}
        return same.pop() if len(same) == 1 else None

    def name_source(self, v):
        """The value whose name ``v`` takes (``share``), or ``v``."""
        while v.owner is not None and (v.owner, _slot(v)) in self.share:
            v = self.share[(v.owner, _slot(v))]
        return v

    def _readers(self, v, op):
        """The printed ops reading ``v``, but for a loop ``op``'s one read of it as an init."""
        out = list(self.readers.get(v, ()))
        if op.prim != "if":
            out.remove(op)
        return out


def _made_in(op):
    """The values defined inside the regions of ``op``."""
    return {r for blk in op.regions for o in walk_ops(blk) for r in o.results} | \
        {a for blk in op.regions for o in walk_ops(blk) for r in o.regions for a in r.args}


def _slot(v):
    return v.owner.results.index(v)


def _raises(op):
    """Whether ``op`` may raise here (Python's ints do not overflow, unlike the llvm backend's)."""
    p = PRIMITIVES[op.prim]
    return p.may_raise or (p.elementwise and any(v.type.is_array for v in op.operands))


def _barrier(op):
    p = PRIMITIVES[op.prim]
    return p.region_op or p.effect or p.writes is not None


def _foldable(d, user):
    """A pure expression with one result; user-named values stay statements (the user's own
    variables), but for an adjoint's contribution to its own sum (``dx = dx + y * t``)."""
    if d.prim not in EXPR or len(d.results) != 1 or _barrier(d):
        return False
    name = d.results[0].name
    return name is None or (user.prim == "add" and user.results[0].name == name)


def _droppable(op):
    if op.prim == "range_len":
        step = const_value(op.operands[2])
        return step is not None and step != 0      # len(range(a, b, s)) raises only for s = 0
    return op.prim in EXPR and not _raises(op) and not _barrier(op)


# ------------------------------------------------------------------ reverse sweep headers


def _header(op):
    """The Header of a reverse sweep ``for k in range(n - 1, -1, -1)`` (or ``range(0, n, 1)``,
    run forwards), where ``n`` may be ``len(range(start, stop, step))``; None otherwise."""
    start, stop, step = op.bounds
    k = op.index
    if is_const(stop, -1) and is_const(step, -1):
        backwards, n = True, _plus_one(start)
    elif is_const(start, 0) and is_const(step, 1):
        backwards, n = False, stop
    else:
        return None
    if n is None:
        return None
    counted = n.owner if isinstance(n, Value) else None
    if counted is None or counted.prim != "range_len" or not _nonzero_const(counted.operands[2]):
        return Header(k, [n], backwards, k)
    first, last, stride = counted.operands
    absorbed = _index_ops(op.body, k, first, stride)
    hint = None
    if absorbed:
        target = absorbed[0].results[0]
    elif is_const(first, 0) and is_const(stride, 1):
        target, hint = k, _user_index(op.loc)     # the tape position is the index itself
    else:
        target = Value(I64, _user_index(op.loc) or "i")
    derive = None if target is k else (first, stride)
    return Header(target, [first, last, stride], backwards, k, absorbed, derive, hint)


def _plus_one(last):
    """``n`` for ``last = n - 1``."""
    c = const_value(last)
    if isinstance(c, int) and not isinstance(c, bool):
        return c + 1
    owner = last.owner
    if owner is not None and owner.prim == "sub" and is_const(owner.operands[1], 1):
        return owner.operands[0]
    return None


def _nonzero_const(v):
    c = const_value(v)
    return isinstance(c, int) and c != 0


def _same(a, b):
    ca, cb = const_value(a), const_value(b)
    return a is b or (ca is not None and cb is not None and ca == cb)


def _index_ops(body, k, start, step):
    """The ops of ``body`` computing ``start + k * step`` (after constant folding: ``start + k``,
    ``k * step``), the last one first; [] when there are none."""
    def times_step(v):
        if is_const(step, 1):
            return [] if v is k else None
        o = v.owner
        if o is not None and o.prim == "mul" and o.operands[0] is k and _same(o.operands[1], step) \
                and o in body.ops:
            return [o]
        return None
    for o in body.ops:
        if is_const(start, 0):
            if not is_const(step, 1) and o.results and times_step(o.results[0]) == [o]:
                return [o]
        elif o.prim == "add" and _same(o.operands[0], start):
            inner = times_step(o.operands[1])
            if inner is not None and _single_use_in(inner, o, body):
                return [o] + inner
    return []


def _single_use_in(inner, user, body):
    """The intermediate ``k * step`` is read by ``user`` only."""
    for o in inner:
        r = o.results[0]
        if any(r in x.operands for x in walk_ops(body) if x is not user):
            return False
    return True


def _user_index(loc):
    """The loop variable of the user's ``for`` at ``loc`` (``for i in ...``), or None."""
    if loc is None:
        return None
    m = re.match(r"\s*for\s+([A-Za-z_]\w*)\s+in\b", linecache.getline(loc.file, loc.line))
    return m.group(1) if m else None
