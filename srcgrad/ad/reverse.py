"""Reverse mode over the structured IR: primal Function → adjoint Function.

The adjoint function runs a forward sweep (the primal ops; each loop that the reverse sweep
needs stores its carried values per iteration on a tape — preallocated for ``for``, growing
for ``while``), then the reverse sweep: ops in reverse order, each through its rule in
ad/rules.py. A loop's adjoint is a loop running backwards that reloads the iteration's
carried values from the tape, recomputes the body, and runs the body's adjoint; an ``if``'s
adjoint is an ``if`` on the same condition. Adjoints of values from outside a region are
threaded through it (loop-carried or yielded), so the result stays SSA.

Only values that depend on the ``wrt`` arguments get adjoints (activity analysis), so no
adjoint code is made for the other arguments.

Example:
    >>> import numpy as np
    >>> from srcgrad.frontend.lower import lower
    >>> from srcgrad.ir.interpret import interpret
    >>> from srcgrad.ir.types import F64
    >>> def f(x, y):
    ...     return x * y + np.sin(x)
    >>> adj = reverse(lower(f, [F64, F64]), wrt=[0])   # returns (value, df/dx)
    >>> [round(v, 4) for v in interpret(adj, [1.0, 2.0])]
    [2.8415, 2.5403]
"""
from ..errors import TypingError
from ..ir.core import Block, Builder, Function, Value, current, for_op, if_op, walk_ops, while_op
from ..ir.memory import Buffers
from ..ir.primitives import PRIMITIVES
from ..ir.types import F32, F64, I64, ArrayType, is_float, user_name
from .activity import active_values, dependence_edges, useful_values
from .all_rules import ADJOINT, ARRAY_ADJOINT
from .checkpoint import Snapshots, reverse_checkpointed, snapshot_loop
from .clone import clone_op, fresh_block, write_whole
from .mutation import UndoPlan, logged_writes, refuse_stale_uses
from .names import adjoint_name, derivative_name
from .rules import constant_value
from .second_order import NO_SECOND_ADJOINT, goes_through, refuse_twice
from .tape_rules import adjoint_tapes, tape_adjoint


def reverse(primal, wrt, cotangents=False, with_value=True, checkpoint=None):
    """An IR Function returning ``(value, *gradients for the wrt parameters)`` — or only the
    gradients without ``with_value``, which lets dead-code removal drop forward work that
    only the value needed.

    With ``cotangents`` (for ``vjp``) the function takes one more parameter per result — the
    result's cotangent — and returns ``(*results, *vector-Jacobian products)``.

    ``checkpoint`` (a Policy of ad/checkpoint.py) reverses the loops of the function's top level
    by binomial checkpointing instead of taping every iteration.
    """
    ret = primal.body.ops[-1]
    _check_differentiable(primal, ret, wrt, cotangents)
    params = [(p.name, p.type) for p in primal.params]
    if cotangents:
        params += [(f"d{v.name or 'out'}", v.type) for v in ret.operands]
    fn = Function(primal.name + ("_vjp" if cotangents else "_grad"), params, primal.loc)
    fn.derivative = True
    edges = dependence_edges(primal)
    active = active_values(primal, [primal.params[i] for i in wrt], edges) & useful_values(primal, edges)
    # versions of arrays written with x[i] = v share memory: the reverse sweep puts back what
    # each write overwrote (the undo log) before reading it again
    buffers = Buffers(primal)
    refuse_stale_uses(primal, buffers)
    if primal.derivative:
        _refuse_rewound_memory(primal, active, buffers)
    r = _Reverser(active, UndoPlan(primal, buffers, logged_writes(primal, buffers)), checkpoint)
    r.buffers = buffers
    mapping = dict(zip(primal.params, fn.params))
    with Builder(fn.body) as b:
        if r.logged:
            r.log = b.emit("undo_new", [], name="undo")
        tapes = r.forward(primal.body.ops[:-1], mapping, tape_loops=True, checkpointed=checkpoint is not None)
        # the reverse sweep puts back what writes overwrote: keep what the caller sees at the end
        finals = r.final_states(primal, buffers, mapping)
        adj = {}        # array adjoints are made on their first contribution
        seeds = fn.params[len(primal.params):] if cotangents else [b.const(1.0, F64)]
        r.shared.update(seeds)           # the caller's cotangent arrays are never updated in place
        for out, seed in zip(ret.operands, seeds):
            if out in active:
                if seed.name is None:
                    seed.name = "d" + (out.name or "out")
                r.add(adj, out, seed)
        r.backward(primal.body.ops[:-1], adj, mapping, tapes)
        r.restore_finals(finals, mapping)
        grads = []
        for i in wrt:
            p = primal.params[i]
            g = adj.get(p)
            if g is None:
                g = b.emit("zeros_like", [mapping[p]]) if isinstance(p.type, ArrayType) else b.const(0.0, F64)
            grads.append(g)
        b.ret(([finals.get(v, mapping[v]) for v in ret.operands] if with_value else []) + grads)
    return fn


def _refuse_rewound_memory(primal, active, buffers):
    """A first derivative rewinds its undo log before it returns, so the memory of each array
    it saved then holds the old contents again; a second reverse sweep, which runs after it,
    would read them where it needs the new ones (a wrong number: grad(grad(f)) of
    ``buf[0] += x; np.sum(buf * buf * y)`` gave 0 for d/dy). Refused, with
    NO_SECOND_ADJOINT's error, where an active array lives in such memory (jvp(grad(f)) runs
    beside the first derivative and is right)."""
    live = set()
    for v in active:
        if v.type.is_array:
            live |= buffers.of(v)
    for op in walk_ops(primal.body):
        if op.prim == "undo_save" and buffers.of(op.operands[0]) & live:
            refuse_twice(op, "grad", NO_SECOND_ADJOINT)


def _check_differentiable(primal, ret, wrt, cotangents):
    """The user's error for results (``ret``'s operands) or ``wrt`` parameters that have no
    derivative: vjp needs float results, grad one float scalar, and both float parameters."""
    if cotangents:
        for v in ret.operands:
            if not is_float(v.type):
                raise TypingError(f"vjp needs float results; {primal.name} returns {v.type}", primal.loc)
    elif len(ret.operands) != 1 or ret.operands[0].type is not F64:
        got = ", ".join(repr(v.type) for v in ret.operands)
        raise TypingError(f"grad needs a function with one real scalar (float) result; {primal.name} returns "
                          f"({got}). Use srcgrad.vjp for other results.", primal.loc)
    for i in wrt:
        p = primal.params[i]
        if not is_float(p.type):
            raise TypingError(f"cannot take the gradient with respect to argument '{p.name}' of type "
                              f"{user_name(p.type)}: "
                              "only float scalars and float64 arrays have gradients", primal.loc)


def _uses(block):
    """Every value used by the ops of ``block`` and its nested regions."""
    out = set()
    for op in block.ops:
        out.update(op.operands)
        for r in op.regions:
            out |= _uses(r)
    return out


def _defined(block):
    out = set(block.args)
    for op in block.ops:
        out.update(op.results)
        for r in op.regions:
            out |= _defined(r)
    return out


class _Reverser:
    def __init__(self, active, plan, checkpoint=None):
        self.active = active
        self.checkpoint = checkpoint    # how many snapshots a checkpointed loop keeps (checkpoint.py)
        self.plan = plan        # where memory is saved, put back and written again (mutation.py)
        self.logged = plan.logged   # writes whose overwritten elements go on the undo log
        self.log = None         # the undo log, when some write is logged
        self.shared = set()     # adjoint arrays that other names may hold too

    # ------------------------------------------------------------------ forward sweep
    def forward(self, ops, mapping, tape_loops, recompute=False, checkpointed=False):
        """Clone ``ops`` into the current block; taped loops for those the reverse sweep needs.
        Returns {primal loop op: (tape, trip count, start, step, marks)}. Writes save what they
        overwrite on the undo log, so the reverse sweep finds memory as it was at each op. A
        ``recompute`` (of a loop's iteration, of a branch, in the reverse sweep) runs the same
        way, but for writes that nothing after them in ``ops`` reads: those it leaves out.
        With ``checkpointed`` (the function's top level, under ``checkpoint=``), loops keep
        snapshots instead of tapes (ad/checkpoint.py): {loop op: Snapshots}."""
        tapes = {}
        self.replaying += recompute
        try:
            for op in ops:
                if recompute and op in self.logged and op not in self.plan.replays:
                    mapping[op.results[0]] = mapping[op.operands[0]]
                    mapping[("mark", op)] = None
                    continue
                if checkpointed and op.prim in ("for", "while") and self._needs_adjoint(op):
                    tapes[op] = snapshot_loop(self, op, mapping)
                elif tape_loops and op.prim in ("for", "while") and self._needs_adjoint(op):
                    self._mark(op, mapping)
                    tapes[op] = self._taped_loop(op, mapping)
                else:
                    self._clone(op, mapping)
        finally:
            self.replaying -= recompute
        return tapes

    adjoint_tapes = {}  # {a tape of the function's own: (its adjoint tape, float item positions)}
    replaying = 0       # inside a recomputation: its writes cannot fail (they ran in the forward sweep)
    saving = True       # writes save what they overwrite (not in a checkpointed loop's runs: checkpoint.py)

    def _writes_in(self, op):
        """Whether ``op`` (a write, or a region op around writes) changes memory the undo log restores."""
        if op in self.logged and op not in self.plan.unsaved:
            return True
        return any(self._writes_in(o) for r in op.regions for o in r.ops)

    def _mark(self, op, mapping):
        """The undo log's height before ``op``, when the reverse sweep rewinds to it: before a
        write or a loop that ops before it read the memory of (UndoPlan), or before any ``if``
        around writes (its branches are recomputed from there)."""
        if self.log is not None and self._writes_in(op) and (op in self.plan.rewinds or op.prim == "if"):
            mapping[("mark", op)] = current().emit("undo_mark", [self.log], name="mark")

    def _clone(self, op, mapping):
        self._mark(op, mapping)
        # a write at the function's top level saves only for its own rewind; in a loop or a
        # branch, the rewind to the iteration's (branch's) start needs every write saved
        if self.saving and op in self.logged and op not in self.plan.unsaved and \
                (op in self.plan.rewinds or op not in self.plan.top):
            arr, _, *idx = op.operands
            b = current()
            outer, b.loc = b.loc, op.loc        # an IndexError it raises is the write's
            b.emit("undo_save", [mapping[arr], self.log] + [mapping[i] for i in idx], dict(op.attrs, write=op.prim),
                   result_types=[])
            b.loc = outer
        regions = []
        for blk in op.regions:
            nb = fresh_block(blk)
            inner = dict(mapping)
            inner.update(zip(blk.args, nb.args))
            with Builder(nb):
                for o in blk.ops:
                    self._clone(o, inner)
            mapping.update(inner)
            regions.append(nb)
        new = clone_op(op, mapping, regions)
        if self.replaying and PRIMITIVES[op.prim].writes is not None:
            new.attrs["replay"] = True      # dead-code removal may drop it where nothing reads it

    def rewind(self, op, mapping):
        """Memory as it was before ``op`` (a write, or a region op around writes), where an op
        before it reads it again (UndoPlan)."""
        if op in self.plan.rewinds:
            self.rewind_to(op, mapping)

    def rewind_to(self, op, mapping):
        mark = mapping.get(("mark", op))
        if mark is not None:
            current().emit("undo_rewind", [self.log, mark], result_types=[])

    def final_states(self, primal, buffers, mapping):
        """Copies, at the end of the forward sweep, of the arrays the caller sees that the reverse
        sweep will put back: argument arrays written in place, results living in written memory."""
        if self.log is None:
            return {}
        b = current()
        written = set().union(*(buffers.of(w.operands[0]) for w in self.logged))
        seen = [p for p in primal.params if p.type.is_array and p in written]
        seen += [v for v in primal.body.ops[-1].operands if v.type.is_array and buffers.of(v) & written]
        # final_state: they read the array through its name on entry, after writes through later
        # versions, on purpose (mutation.py lets them: differentiating the gradient again meets them)
        return {v: b.emit("copy", [mapping[v]], {"final_state": True}, name=v.name) for v in dict.fromkeys(seen)}

    def restore_finals(self, finals, mapping):
        """Write back into the argument arrays their contents at the end of the forward sweep."""
        for v, final in finals.items():
            if v.owner is None:         # a parameter
                write_whole(mapping[v], final, v.name).owner.attrs["final_state"] = True

    def _taped_loop(self, op, mapping):
        """The forward sweep's copy of a loop that stores its carried values per iteration on a
        tape (with the undo log's height at the iteration's start, when the loop writes)."""
        items = [a.type for a in op.carried]
        marks = self.log is not None and self._writes_in(op)
        if marks:
            items.append(I64)
        if op.prim == "for":
            return self._taped_for(op, mapping, items, marks)
        return self._taped_while(op, mapping, items, marks)

    def _taped_for(self, op, mapping, items, marks):
        b = current()
        body = op.body
        start, stop, step = (mapping[v] for v in op.bounds)
        n = b.emit("range_len", [start, stop, step], name="n")
        tape = b.emit("tape_new", [n], {"items": items}, name="tape")
        nb = fresh_block(body)
        inner = dict(mapping)
        inner.update(zip(body.args, nb.args))
        with Builder(nb) as bb:
            k = bb.emit("floordiv", [bb.emit("sub", [nb.args[0], start]), step], name="k")
            extra = [bb.emit("undo_mark", [self.log], name="mark")] if marks else []
            bb.emit("tape_put", [tape, k] + nb.args[1:] + extra, result_types=[])
            for o in body.ops:
                self._clone(o, inner)
        new = for_op(start, stop, step, [mapping[v] for v in op.inits], nb, [r.type for r in op.results], op.loc,
                     [r.name for r in op.results], **{k: v for k, v in op.attrs.items() if k != "result_types"})
        b.append(new)
        mapping.update(zip(op.results, new.results))
        return tape, n, start, step, marks

    def _taped_while(self, op, mapping, items, marks, taped=True):
        """A while loop counts its iterations and lets the tape grow (without ``taped``, it
        only counts them)."""
        b = current()
        cond, body = op.test, op.body
        tape = b.emit("tape_new", [], {"items": items}, name="tape") if taped else None
        types = [r.type for r in op.results] + [I64]
        nc = fresh_block(cond, [Value(I64, "count")])
        nbody = fresh_block(body, [Value(I64, "count")])
        inner = dict(mapping)
        inner.update(zip(cond.args, nc.args))
        with Builder(nc):
            for o in cond.ops:
                self._clone(o, inner)
        inner = dict(mapping)
        inner.update(zip(body.args, nbody.args))
        with Builder(nbody) as bb:
            count = nbody.args[-1]
            if taped:
                extra = [bb.emit("undo_mark", [self.log], name="mark")] if marks else []
                bb.emit("tape_put", [tape, count] + nbody.args[:-1] + extra, {"append": True}, result_types=[])
            for o in body.ops[:-1]:
                self._clone(o, inner)
            one = bb.const(1)
            bb.yield_([inner[v] for v in body.yielded] + [bb.emit("add", [count, one])])
        zero = b.const(0)
        new = while_op([mapping[v] for v in op.inits] + [zero], nc, nbody, types, op.loc,
                       [r.name for r in op.results] + ["n"])
        b.append(new)
        mapping.update(zip(op.results, new.results[:-1]))
        return tape, new.results[-1], None, None, marks

    def _needs_adjoint(self, op):
        return any(v in self.active for v in _uses(op.body) | set(op.operands) | set(op.results))

    # ------------------------------------------------------------------ reverse sweep
    def add(self, adj, v, g):
        """adj[v] += g"""
        if g is None:
            return
        prev = adj.get(v)
        adj[v] = g if prev is None else current().emit("add", [prev, g], name=prev.name)

    def zero_like(self, v, mapping):
        """A zero adjoint for ``v``, named d<name>."""
        b = current()
        name = derivative_name(v) if v.name else None
        if isinstance(v.type, ArrayType):
            zeros = b.emit("zeros_like", [mapping[v]], name=name)
            # a float32 array's adjoint is float64 (what computes with it is: to_f64's rule)
            return b.emit("to_f64", [zeros], name=name) if v.type.dtype is F32 else zeros
        # marked: the passes may drop it from sums (0.0 + g is g but for g = -0.0, which as a
        # gradient is the same number)
        return b.emit("const", [], {"value": 0.0, "type": F64, "adjoint_zero": True}, name=name)

    def backward(self, ops, adj, mapping, tapes):
        b = current()
        # the tapes of a gradient, differentiated again (tape_rules.py)
        self.adjoint_tapes = {**self.adjoint_tapes, **adjoint_tapes(ops, self.active, mapping)}
        outer = b.loc
        try:
            for op in reversed(ops):
                b.loc = op.loc      # an op's adjoint comes from the user's line of the op
                self._adjoint(op, adj, mapping, tapes)
        finally:
            b.loc = outer

    def _adjoint(self, op, adj, mapping, tapes):
        """The adjoint of one op: a loop's, an ``if``'s, or its rule's; then memory is put back
        as it was before the op (a write's, or a region's that writes and had no adjoint)."""
        if op.prim in ("for", "while"):
            if isinstance(tapes.get(op), Snapshots):
                reverse_checkpointed(self, op, adj, mapping, tapes[op])
            elif op in tapes:
                self._loop_adjoint(op, adj, mapping, tapes[op])
            self.rewind(op, mapping)
            return
        if op.prim == "if":
            self._if_adjoint(op, adj, mapping)
            self.rewind(op, mapping)
            return
        if op.prim in ("tape_get", "tape_put") and goes_through(op, self.active) and \
                op.operands[0] in self.adjoint_tapes:
            tape_adjoint(self, op, adj, mapping)
            self.rewind(op, mapping)
            return
        kind = PRIMITIVES[op.prim].adjoint
        if kind == "refused" and goes_through(op, self.active):
            refuse_twice(op, "grad", NO_SECOND_ADJOINT)
        g = adj.get(op.results[0]) if op.results else None
        if g is not None and kind == "structural":
            ARRAY_ADJOINT[op.prim](self, op, g, adj, mapping)
        elif g is not None and ADJOINT[op.prim] is not None:
            self._rule_adjoint(op, ADJOINT[op.prim], g, adj, mapping)
        self.rewind(op, mapping)

    def _rule_adjoint(self, op, rule, g, adj, mapping):
        """The contributions of one op to its operands' adjoints, by its rule in ad/rules.py."""
        thunks = rule(g, *[mapping[v] for v in op.operands], mapping[op.results[0]])
        for v, thunk in zip(op.operands, thunks):
            if thunk is not None and v in self.active:
                c = thunk()
                if PRIMITIVES[op.prim].unbounded_slope and not c.type.is_array:
                    # a zero adjoint (from a branch not taken, say) contributes nothing, even
                    # times sqrt's infinite slope at 0, where the product would be NaN
                    b = current()
                    c = b.emit("select", [b.emit("eq", [g, 0.0]), 0.0, c])
                if c is g:
                    self.shared.add(c)
                self.add(adj, v, adjoint_name(self._unbroadcast(c, v, mapping, op), v))

    def exclusive(self, acc):
        """An adjoint array the caller may update in place, copied when it may be shared.

        Shared are: a gradient a rule passed through unchanged (``add`` gives ``g`` to both
        operands), a cotangent the user passed in, and views (``.T``, a ``sum_to`` that had
        nothing to sum). Results of other ops are fresh arrays; loops and branches thread
        accumulators whose inits and yields go through here."""
        if not acc.type.is_array:
            return acc
        if acc in self.shared or (acc.owner is not None and PRIMITIVES[acc.owner.prim].shares_memory):
            return current().emit("copy", [acc], name=acc.name)
        return acc

    def _unbroadcast(self, c, v, mapping, op):
        """A contribution from a broadcasting op, summed back to the shape of operand ``v``."""
        if c is None or not c.type.is_array or len(op.operands) < 2 or PRIMITIVES[op.prim].adjoint_shaped:
            return c
        b = current()
        if v.type.is_array:
            return b.emit("sum_to", [c, mapping[v]])
        return b.emit("sum", [c], {"axis": None})

    def _free(self, op):
        """Active values from outside ``op`` whose adjoints its regions update."""
        inside = set()
        used = set()
        for r in op.regions:
            inside |= _defined(r)
            used |= _uses(r)
        return sorted((v for v in used if v in self.active and v not in inside), key=lambda v: v.id)

    def _if_adjoint(self, op, adj, mapping):
        """Each branch recomputed (from memory as it was before the ``if``) and run backwards."""
        ys_active = [j for j, r in enumerate(op.results) if r in adj]
        if not ys_active:
            return
        free = self._free(op)
        for f in free:
            adj[f] = self.exclusive(adj[f]) if f in adj else self.zero_like(f, mapping)
        blocks = []
        for blk in op.regions:
            nb = Block()
            with Builder(nb) as bb:
                inner = dict(mapping)
                self.rewind_to(op, inner)            # the branch recomputed from memory before the if
                tapes = self.forward(blk.ops[:-1], inner, tape_loops=True, recompute=True)
                local = {f: adj[f] for f in free}
                for j in ys_active:
                    y = blk.yielded[j]
                    if y in self.active:
                        self.add(local, y, adj[op.results[j]])
                self.backward(blk.ops[:-1], local, inner, tapes)
                bb.yield_([self.exclusive(local[f]) for f in free])
            blocks.append(nb)
        types = [adj[f].type for f in free]      # a float32 array's adjoint is float64
        new = if_op(mapping[op.cond], blocks[0], blocks[1], types, op.loc, [adj[f].name for f in free])
        current().append(new)
        adj.update(zip(free, new.results))

    def _loop_adjoint(self, op, adj, mapping, taped):
        """for k in range(n - 1, -1, -1): iteration k backwards, from its taped values."""
        tape, n, start, step, marks = taped
        b = current()
        carried, free, inits, names = self.loop_adjoint_inits(op, adj, mapping)
        one = b.const(1)
        last = b.emit("sub", [n, one])
        minus_one = b.const(-1)
        # over range(n): iteration k is the user's i itself, and is named so
        counter = op.index.name if op.prim == "for" and _counts_from_zero(start, step) else "k"
        nb = Block([Value(I64, counter)] + [Value(v.type, nm) for v, nm in zip(inits, names)])
        with Builder(nb) as bb:
            inner, mark = self._reloaded(op, nb.args[0], taped, mapping)
            if mark is not None:        # memory as at the iteration's start, for its recomputation
                bb.emit("undo_rewind", [self.log, mark], result_types=[])
            bb.yield_(self.iteration_adjoint(op, inner, nb.args[1:], carried, free))
        types = [v.type for v in inits]
        new = for_op(last, minus_one, minus_one, inits, nb, types, op.loc, names, reverse_sweep=True)
        b.append(new)
        self.loop_adjoint_results(op, new.results, carried, free, adj)

    def loop_adjoint_inits(self, op, adj, mapping):
        """(positions of the active carried values, the active values from outside the loop whose
        adjoints it updates, the initial adjoints of both, their names) for a loop's adjoint."""
        args = op.carried
        carried = [j for j, a in enumerate(args) if a in self.active]
        free = self._free(op)
        for f in free:
            if f not in adj:
                adj[f] = self.zero_like(f, mapping)
        inits = []
        for j in carried:
            r = op.results[j]
            inits.append(self.exclusive(adj[r]) if r in adj else self.zero_like(r, mapping))
        inits += [self.exclusive(adj[f]) for f in free]
        names = [derivative_name(args[j]) for j in carried] + [adj[f].name for f in free]
        return carried, free, inits, names

    def iteration_adjoint(self, op, inner, accs, carried, free):
        """One iteration of loop ``op`` backwards: the body recomputed from the carried values
        in ``inner``, then its adjoint, from the adjoints ``accs`` of its yields (the carried
        positions ``carried``) and of the ``free`` values; returns their adjoints before it."""
        args = op.carried
        tapes = self.forward(op.body.ops[:-1], inner, tape_loops=True, recompute=True)
        local = {f: a for f, a in zip(free, accs[len(carried):])}
        ys = op.body.yielded
        for slot, j in enumerate(carried):
            if ys[j] in self.active:
                self.add(local, ys[j], accs[slot])
        self.backward(op.body.ops[:-1], local, inner, tapes)
        outs = [local.get(args[j]) or self.zero_like(args[j], inner) for j in carried] + [local[f] for f in free]
        return [self.exclusive(o) for o in outs]

    def loop_adjoint_results(self, op, results, carried, free, adj):
        """The adjoints a loop's adjoint (``results``) leaves: of the free values, of the inits."""
        adj.update(zip(free, results[len(carried):]))   # first: an init may be a free value too
        for slot, j in enumerate(carried):
            init = op.inits[j]
            if init in self.active:
                self.add(adj, init, results[slot])

    def _reloaded(self, op, k, taped, mapping):
        """(The mapping inside iteration ``k`` of the reverse loop: the carried values loaded
        from the tape, and the for loop's index ``start + k * step``; the undo log's height at
        the iteration's start, or None where the loop saves nothing on it.)"""
        tape, _, start, step, marks = taped
        bb = current()
        loaded = bb.emit("tape_get", [tape, k], result_types=list(tape.type.items))
        loaded = loaded if isinstance(loaded, list) else [loaded]
        for v, a in zip(loaded, op.carried):
            v.name = a.name
        inner = self.iteration_mapping(op, k, loaded, start, step, mapping)
        return inner, (loaded[-1] if marks else None)

    def iteration_mapping(self, op, k, carried, start, step, mapping):
        """``mapping`` extended into iteration ``k`` of loop ``op``: its carried values, and a for
        loop's index ``start + k * step``."""
        inner = dict(mapping)
        if op.prim == "for" and _counts_from_zero(start, step):
            inner[op.index] = k
        elif op.prim == "for":
            bb = current()
            inner[op.index] = bb.emit("add", [start, bb.emit("mul", [k, step])], name=op.index.name)
        inner.update(zip(op.carried, carried))
        return inner


def _counts_from_zero(start, step):
    """Whether a loop runs over range(0, n, 1): its iteration number is its index."""
    return start.type is I64 and constant_value(start) == 0 and constant_value(step) == 1

