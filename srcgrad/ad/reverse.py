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
    >>> adj = reverse(lower(f, [F64, F64]), wrt=[0])   # returns (value, df/dx)
"""
from ..errors import TypingError
from ..ir.core import Block, Builder, Function, Op, Value, walk_ops as _walk_ops
from ..ir.memory import Buffers, refuse_stale_uses
from ..ir.primitives import PRIMITIVES
from ..ir.types import F64, I64, ArrayType, is_float, user_name
from .rules import ADJOINT


def reverse(primal, wrt, cotangents=False, with_value=True):
    """An IR Function returning ``(value, *gradients for the wrt parameters)`` — or only the
    gradients without ``with_value``, which lets dead-code removal drop forward work that
    only the value needed.

    With ``cotangents`` (for ``vjp``) the function takes one more parameter per result — the
    result's cotangent — and returns ``(*results, *vector-Jacobian products)``.
    """
    ret = primal.body.ops[-1]
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
    params = [(p.name, p.type) for p in primal.params]
    if cotangents:
        params += [(f"d{v.name or 'out'}", v.type) for v in ret.operands]
    fn = Function(primal.name + ("_vjp" if cotangents else "_grad"), params, primal.loc)
    active = _activity(primal, [primal.params[i] for i in wrt]) & _useful(primal)
    # versions of arrays written with x[i] = v share memory: the reverse sweep may not read them
    # again (it reads taped values instead)
    refuse_stale_uses(primal)
    r = _Reverser(active, Buffers(primal).mutable())
    mapping = dict(zip(primal.params, fn.params))
    with Builder(fn.body) as b:
        tapes = r.forward(primal.body.ops[:-1], mapping, tape_loops=True)
        adj = {}        # array adjoints are made on their first contribution
        seeds = fn.params[len(primal.params):] if cotangents else [b.const(1.0, F64)]
        r.shared.update(seeds)           # the caller's cotangent arrays are never updated in place
        for out, seed in zip(ret.operands, seeds):
            if out in active:
                if seed.name is None:
                    seed.name = "d" + (out.name or "out")
                r.add(adj, out, seed)
        r.backward(primal.body.ops[:-1], adj, mapping, tapes)
        grads = []
        for i in wrt:
            p = primal.params[i]
            g = adj.get(p)
            if g is None:
                g = b.emit("zeros_like", [mapping[p]]) if isinstance(p.type, ArrayType) else b.const(0.0, F64)
            grads.append(g)
        b.ret(([mapping[v] for v in ret.operands] if with_value else []) + grads)
    return fn


# ------------------------------------------------------------------------------ activity


def _activity(fn, seeds):
    """The primal values that depend differentiably on the seeds (floats and float arrays)."""
    active = set(seeds)
    changed = [True]

    def mark(v):
        if v not in active and is_float(v.type):
            active.add(v)
            changed[0] = True

    def visit(block):
        for op in block.ops:
            if op.prim == "for":
                body = op.regions[0]
                ys = body.ops[-1].operands
                for j, (a, r) in enumerate(zip(body.args[1:], op.results)):
                    if op.operands[3 + j] in active or ys[j] in active:
                        mark(a)
                visit(body)
                for j, (y, r) in enumerate(zip(ys, op.results)):
                    if y in active or op.operands[3 + j] in active:    # zero trips pass the init through
                        mark(r)
            elif op.prim == "while":
                cond, body = op.regions
                ys = body.ops[-1].operands
                for j in range(len(op.results)):
                    if op.operands[j] in active or ys[j] in active:
                        mark(cond.args[j])
                        mark(body.args[j])
                visit(cond)
                visit(body)
                for j, (y, r) in enumerate(zip(ys, op.results)):
                    if y in active or op.operands[j] in active:
                        mark(r)
            elif op.prim == "if":
                for blk in op.regions:
                    visit(blk)
                    for y, r in zip(blk.ops[-1].operands, op.results):
                        if y in active:
                            mark(r)
            elif ADJOINT.get(op.prim) is not None and any(v in active for v in op.operands):
                for res in op.results:
                    mark(res)

    while changed[0]:
        changed[0] = False
        visit(fn.body)
    return active


def _useful(fn):
    """The primal values some float result depends on differentiably: only they get adjoints.
    A value computed for another reason (a condition, a write the result never reads, an
    assert) keeps a zero adjoint, and a zero adjoint times an infinite partial derivative
    (sqrt at 0) would make the gradient NaN."""
    useful = {v for v in fn.body.ops[-1].operands if is_float(v.type)}
    changed = [True]

    def mark(v):
        if v not in useful and is_float(v.type):
            useful.add(v)
            changed[0] = True

    def visit(block):
        for op in reversed(block.ops):
            if op.prim in ("for", "while"):
                first = 3 if op.prim == "for" else 0
                body = op.regions[-1]
                args = body.args[1:] if op.prim == "for" else body.args
                for j, r in enumerate(op.results):
                    if r in useful or args[j] in useful:
                        mark(body.ops[-1].operands[j])
                        mark(op.operands[first + j])
                        mark(args[j])
                for region in reversed(op.regions):
                    visit(region)
            elif op.prim == "if":
                for blk in op.regions:
                    for y, r in zip(blk.ops[-1].operands, op.results):
                        if r in useful:
                            mark(y)
                    visit(blk)
            elif ADJOINT.get(op.prim) is not None and any(r in useful for r in op.results):
                for v in op.operands:
                    mark(v)

    while changed[0]:
        changed[0] = False
        visit(fn.body)
    return useful


def _reads_mutable(op, mutable):
    """An op (not a region op, not a write) that reads a written array."""
    return op.prim not in ("setitem", "setslice", "yield", "return") and not op.regions and \
        any(v in mutable for v in op.operands)


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
    def __init__(self, active, mutable=frozenset()):
        self.active = active
        self.mutable = mutable
        self.snapshots = {}     # op -> the mapping with copies of the written arrays it read
        self.shared = set()     # adjoint arrays that other names may hold too

    def b(self):
        from ..ir.core import current
        return current()

    # ------------------------------------------------------------------ forward sweep
    def forward(self, ops, mapping, tape_loops, reads=None):
        if reads is None:
            return self._forward(ops, mapping, tape_loops, None)
        replaying, self.replaying = self.replaying, True
        try:
            return self._forward(ops, mapping, tape_loops, reads)
        finally:
            self.replaying = replaying

    replaying = False     # inside a recomputation: array writes are not done again

    def _forward(self, ops, mapping, tape_loops, reads):
        """Clone ``ops`` into the current block; taped loops for those the reverse sweep needs.
        Returns {primal loop op: (tape, trip count, start, step, reads tape, read ops)}.

        ``reads`` marks a recomputation inside the reverse sweep: ops that read a written array
        take their values from ``reads`` (taped in the forward sweep), and writes are skipped —
        the array memory holds its final contents by then."""
        tapes = {}
        for op in ops:
            if reads is not None:
                if op in reads:
                    mapping[op.results[0]] = reads[op]
                    continue
                if op.prim in ("setitem", "setslice"):
                    mapping[op.results[0]] = mapping[op.operands[0]]
                    continue
                self._refuse_nested_mutable_reads(op)
            if tape_loops and op.prim in ("for", "while") and self._needs_adjoint(op):
                tapes[op] = self._taped_loop(op, mapping)
            else:
                self._clone(op, mapping)
        return tapes

    def _refuse_nested_mutable_reads(self, op):
        from ..errors import UnsupportedSyntaxError
        for r in op.regions:
            for o in _walk_ops(r):
                if _reads_mutable(o, self.mutable):
                    raise UnsupportedSyntaxError(
                        "srcgrad cannot differentiate this yet: an array that is written with x[i] = v is read "
                        "inside a nested loop or branch of a loop", o.loc,
                        "read the array in the outer loop's body, or keep reads and writes of one array at one "
                        "loop level")

    def _clone(self, op, mapping):
        if op.prim in ("setitem", "setslice") and self.replaying:
            mapping[op.results[0]] = mapping[op.operands[0]]
            return
        if not self.replaying and op.prim != "index" and _reads_mutable(op, self.mutable) \
                and any(v in self.active for v in op.operands):
            # a whole-array read of an array written later: the reverse sweep needs this version
            snapshot = dict(mapping)
            for v in op.operands:
                if v in self.mutable:
                    snapshot[v] = self.b().emit("copy", [mapping[v]], name=v.name)
            self.snapshots[op] = snapshot
            mapping = _Overlay(mapping, snapshot)
        regions = []
        for blk in op.regions:
            nb = Block([Value(a.type, a.name) for a in blk.args])
            inner = dict(mapping)
            inner.update(zip(blk.args, nb.args))
            with Builder(nb):
                for o in blk.ops:
                    self._clone(o, inner)
            mapping.update(inner)
            regions.append(nb)
        new = Op(op.prim, [mapping[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs),
                 regions, op.loc, names=[r.name for r in op.results])
        self.b().block.ops.append(new)
        mapping.update(zip(op.results, new.results))

    def _taped_loop(self, op, mapping):
        b = self.b()
        body = op.regions[-1]
        carried = body.args[1:] if op.prim == "for" else body.args
        items = [a.type for a in carried]
        read_ops = [o for o in body.ops if _reads_mutable(o, self.mutable) and o.results]
        for o in read_ops:
            if o.prim != "index" and any(v in self.active for v in o.operands):
                from ..errors import UnsupportedSyntaxError
                if any(w.prim in ("setitem", "setslice", "slice_add") for w in _walk_ops(body)):
                    raise UnsupportedSyntaxError(
                        "srcgrad cannot differentiate this yet: a whole-array operation reads an array that is "
                        "written with x[i] = v in the same loop (its gradient needs every iteration's version of "
                        "the array)", o.loc, "read the elements one by one (a loop over x[j]), or move the "
                        "whole-array operation after the loop")
                raise UnsupportedSyntaxError(
                    "srcgrad cannot differentiate this yet: a whole-array operation in a loop reads an array that "
                    "is written with x[i] = v elsewhere in the function", o.loc,
                    "copy the array before the loop (c = x.copy()) and read the copy in the loop")
        if op.prim == "for":
            start, stop, step = (mapping[v] for v in op.operands[:3])
            n = b.emit("range_len", [start, stop, step], name="n")
            tape = b.emit("tape_new", [n], {"items": items}, name="tape")
            rtape = b.emit("tape_new", [n], {"items": [o.results[0].type for o in read_ops]},
                           name="reads") if read_ops else None
            nb = Block([Value(a.type, a.name) for a in body.args])
            inner = dict(mapping)
            inner.update(zip(body.args, nb.args))
            with Builder(nb) as bb:
                k = bb.emit("floordiv", [bb.emit("sub", [nb.args[0], start]), step], name="k")
                bb.emit("tape_put", [tape, k] + nb.args[1:], result_types=[])
                for o in body.ops[:-1]:
                    self._clone(o, inner)
                if read_ops:
                    bb.emit("tape_put", [rtape, k] + [inner[o.results[0]] for o in read_ops], result_types=[])
                self._clone(body.ops[-1], inner)
            new = Op("for", [start, stop, step] + [mapping[v] for v in op.operands[3:]],
                     [r.type for r in op.results], dict(op.attrs), [nb], op.loc, names=[r.name for r in op.results])
            b.block.ops.append(new)
            mapping.update(zip(op.results, new.results))
            return tape, n, start, step, rtape, read_ops
        # while: count the iterations and let the tape grow
        cond, body = op.regions
        tape = b.emit("tape_new", [], {"items": items}, name="tape")
        types = [r.type for r in op.results] + [I64]
        nc = Block([Value(a.type, a.name) for a in cond.args] + [Value(I64, "count")])
        nbody = Block([Value(a.type, a.name) for a in body.args] + [Value(I64, "count")])
        inner = dict(mapping)
        inner.update(zip(cond.args, nc.args))
        with Builder(nc):
            for o in cond.ops:
                self._clone(o, inner)
        inner = dict(mapping)
        inner.update(zip(body.args, nbody.args))
        rtape = b.emit("tape_new", [], {"items": [o.results[0].type for o in read_ops]},
                       name="reads") if read_ops else None
        with Builder(nbody) as bb:
            bb.emit("tape_put", [tape, nbody.args[-1]] + nbody.args[:-1], {"append": True}, result_types=[])
            for o in body.ops[:-1]:
                self._clone(o, inner)
            if read_ops:
                bb.emit("tape_put", [rtape, nbody.args[-1]] + [inner[o.results[0]] for o in read_ops],
                        {"append": True}, result_types=[])
            one = bb.const(1)
            bb.yield_([inner[v] for v in body.ops[-1].operands] + [bb.emit("add", [nbody.args[-1], one])])
        zero = b.const(0)
        new = Op("while", [mapping[v] for v in op.operands] + [zero], types, {"result_types": types}, [nc, nbody],
                 op.loc, names=[r.name for r in op.results] + ["n"])
        b.block.ops.append(new)
        mapping.update(zip(op.results, new.results[:-1]))
        return tape, new.results[-1], None, None, rtape, read_ops

    def _needs_adjoint(self, op):
        return any(v in self.active for v in _uses(op.regions[-1]) | set(op.operands) | set(op.results))

    # ------------------------------------------------------------------ reverse sweep
    def add(self, adj, v, g):
        """adj[v] += g"""
        if g is None:
            return
        prev = adj.get(v)
        adj[v] = g if prev is None else self.b().emit("add", [prev, g], name=prev.name)

    def zero_like(self, v, mapping):
        """A zero adjoint for ``v``, named d<name>."""
        b = self.b()
        name = "d" + v.name if v.name else None
        if isinstance(v.type, ArrayType):
            return b.emit("zeros_like", [mapping[v]], name=name)
        # marked: the passes may drop it from sums (0.0 + g is g but for g = -0.0, which as a
        # gradient is the same number)
        return b.emit("const", [], {"value": 0.0, "type": F64, "adjoint_zero": True}, name=name)

    def backward(self, ops, adj, mapping, tapes):
        for op in reversed(ops):
            if op.prim in ("for", "while"):
                if op in tapes:
                    self._loop_adjoint(op, adj, mapping, tapes[op])
                continue
            if op.prim == "if":
                self._if_adjoint(op, adj, mapping)
                continue
            rule = ADJOINT.get(op.prim)
            if rule is None or not op.results:
                continue
            res = op.results[0]
            g = adj.get(res)
            if g is None:
                continue
            if op.prim == "call_custom":
                self._custom_adjoint(op, adj, mapping)
                continue
            if op.prim == "setitem":
                self._setitem_adjoint(op, adj, mapping)
                continue
            if op.prim == "slice":
                arr = op.operands[0]
                if arr in self.active:
                    acc = adj.get(arr)
                    acc = self.zero_like(arr, mapping) if acc is None else self._exclusive(acc)
                    adj[arr] = self.b().emit("slice_add", [acc, g] + [mapping[v] for v in op.operands[1:]],
                                             dict(op.attrs, array=arr.name), name=acc.name)
                    adj[arr].owner.loc = op.loc     # an IndexError names the user's array and line
                continue
            if op.prim == "setslice":
                self._setslice_adjoint(op, adj, mapping)
                continue
            if op.prim == "index":
                arr = op.operands[0]
                if arr in self.active:
                    acc = adj.get(arr)
                    acc = self.zero_like(arr, mapping) if acc is None else self._exclusive(acc)
                    adj[arr] = self.b().emit("index_add", [acc, g] + [mapping[i] for i in op.operands[1:]],
                                             {"array": arr.name}, name=acc.name)
                    adj[arr].owner.loc = op.loc     # an IndexError names the user's array and line
                continue
            seen = self.snapshots.get(op, mapping)
            thunks = rule(g, *[seen[v] for v in op.operands], mapping[res])
            for v, thunk in zip(op.operands, thunks):
                if thunk is not None and v in self.active:
                    c = thunk()
                    if PRIMITIVES[op.prim].unbounded_slope and not c.type.is_array:
                        # a zero adjoint (from a branch not taken, say) contributes nothing, even
                        # times sqrt's infinite slope at 0, where the product would be NaN
                        b = self.b()
                        c = b.emit("select", [b.emit("eq", [g, 0.0]), 0.0, c])
                    if c is g:
                        self.shared.add(c)
                    self.add(adj, v, _named(self._unbroadcast(c, v, mapping, op), v))

    def _exclusive(self, acc):
        """An adjoint array the caller may update in place, copied when it may be shared.

        Shared are: a gradient a rule passed through unchanged (``add`` gives ``g`` to both
        operands), a cotangent the user passed in, and views (``.T``, a ``sum_to`` that had
        nothing to sum). Results of other ops are fresh arrays; loops and branches thread
        accumulators whose inits and yields go through here."""
        if not acc.type.is_array:
            return acc
        if acc in self.shared or (acc.owner is not None and acc.owner.prim in _VIEWS):
            return self.b().emit("copy", [acc], name=acc.name)
        return acc

    def _setitem_adjoint(self, op, adj, mapping):
        """x' = x with x[idx] = v: v gets x'[idx]'s adjoint; the old x[idx] was overwritten, so
        its adjoint restarts from zero."""
        g = adj.get(op.results[0])
        if g is None:
            return
        b = self.b()
        arr, v, *idx = op.operands
        idx = [mapping[i] for i in idx]
        if v in self.active:
            self.add(adj, v, _named(b.emit("index", [g] + idx), v))
        if arr in self.active:
            cleared = b.emit("setitem", [self._exclusive(g), b.const(0.0, F64)] + idx, name=g.name)
            self.add(adj, arr, cleared)

    def _setslice_adjoint(self, op, adj, mapping):
        g = adj.get(op.results[0])
        if g is None:
            return
        b = self.b()
        arr, v, *bounds = op.operands
        bounds = [mapping[x] for x in bounds]
        if v in self.active:
            # a copy: the slice is a view of g, whose elements are zeroed just below
            part = b.emit("copy", [b.emit("slice", [g] + bounds, dict(op.attrs))])
            dv = b.emit("sum_to", [part, mapping[v]]) if v.type.is_array else b.emit("sum", [part], {"axis": None})
            self.add(adj, v, _named(dv, v))
        if arr in self.active:
            cleared = b.emit("setslice", [self._exclusive(g), b.const(0.0, F64)] + bounds, dict(op.attrs),
                             name=g.name)
            self.add(adj, arr, cleared)

    def _unbroadcast(self, c, v, mapping, op):
        """A contribution from a broadcasting op, summed back to the shape of operand ``v``."""
        if c is None or not c.type.is_array or len(op.operands) < 2 or op.prim == "matmul":
            return c
        b = self.b()
        if v.type.is_array:
            return b.emit("sum_to", [c, mapping[v]])
        return b.emit("sum", [c], {"axis": None})

    def _custom_adjoint(self, op, adj, mapping):
        """The user's vjp: fn.vjp(*args, result(s), cotangent(s)) -> one cotangent per argument."""
        b = self.b()
        gs = [adj.get(r) or b.const(0.0, F64) for r in op.results]
        targets = [k for k, v in enumerate(op.operands) if v in self.active]
        types = [op.operands[k].type for k in targets]
        outs = b.emit("call_custom_vjp", [mapping[v] for v in op.operands] + [mapping[r] for r in op.results] + gs,
                      {"fn": op.attrs["fn"], "n_args": len(op.operands), "targets": targets, "result_types": types},
                      result_types=types)
        outs = outs if isinstance(outs, list) else [outs]
        for k, g in zip(targets, outs):
            self.add(adj, op.operands[k], _named(g, op.operands[k]))

    def _free(self, op, regions):
        """Active values from outside ``op`` whose adjoints its regions update."""
        inside = set()
        used = set()
        for r in regions:
            inside |= _defined(r)
            used |= _uses(r)
        return sorted((v for v in used if v in self.active and v not in inside), key=lambda v: v.id)

    def _if_adjoint(self, op, adj, mapping):
        ys_active = [j for j, r in enumerate(op.results) if r in adj]
        if not ys_active:
            return
        free = self._free(op, op.regions)
        for f in free:
            adj[f] = self._exclusive(adj[f]) if f in adj else self.zero_like(f, mapping)
        blocks = []
        for blk in op.regions:
            nb = Block()
            with Builder(nb) as bb:
                inner = dict(mapping)
                tapes = self.forward(blk.ops[:-1], inner, tape_loops=True, reads=self._no_reads(blk))
                local = {f: adj[f] for f in free}
                for j in ys_active:
                    y = blk.ops[-1].operands[j]
                    if y in self.active:
                        self.add(local, y, adj[op.results[j]])
                self.backward(blk.ops[:-1], local, inner, tapes)
                bb.yield_([self._exclusive(local[f]) for f in free])
            blocks.append(nb)
        types = [f.type for f in free]
        new = Op("if", [mapping[op.operands[0]]], types, {"result_types": types}, blocks, op.loc,
                 names=[adj[f].name for f in free])
        self.b().block.ops.append(new)
        adj.update(zip(free, new.results))

    def _no_reads(self, blk):
        """A branch is recomputed as is: refuse written arrays inside it (no tape to read from)."""
        for o in _walk_ops(blk):
            if _reads_mutable(o, self.mutable) or o.prim == "setitem":
                from ..errors import UnsupportedSyntaxError
                raise UnsupportedSyntaxError(
                    "srcgrad cannot differentiate this yet: an array written with x[i] = v is read or written "
                    "inside an `if`", o.loc, "move the read or write out of the `if` (compute both, then select)")
        return None

    def _loop_adjoint(self, op, adj, mapping, taped):
        tape, n, start, step, rtape, read_ops = taped
        b = self.b()
        is_for = op.prim == "for"
        body = op.regions[-1]
        args = body.args[1:] if is_for else body.args
        carried = [j for j, a in enumerate(args) if a in self.active]
        free = self._free(op, op.regions)
        for f in free:
            if f not in adj:
                adj[f] = self.zero_like(f, mapping)
        inits = []
        for j in carried:
            r = op.results[j]
            inits.append(self._exclusive(adj[r]) if r in adj else self.zero_like(r, mapping))
        inits += [self._exclusive(adj[f]) for f in free]
        # for k in range(n - 1, -1, -1): the iterations backwards
        one = b.const(1)
        last = b.emit("sub", [n, one])
        minus_one = b.const(-1)
        names = ["d" + (args[j].name or "v") for j in carried] + [adj[f].name for f in free]
        nb = Block([Value(I64, "k")] + [Value(v.type, nm) for v, nm in zip(inits, names)])
        with Builder(nb) as bb:
            k = nb.args[0]
            loaded = bb.emit("tape_get", [tape, k], result_types=list(tape.type.items))
            loaded = loaded if isinstance(loaded, list) else [loaded]
            for v, a in zip(loaded, args):
                v.name = a.name
            inner = dict(mapping)
            if is_for:
                i = bb.emit("add", [start, bb.emit("mul", [k, step])], name=body.args[0].name)
                inner[body.args[0]] = i
            inner.update(zip(args, loaded))
            reads = {}
            if read_ops:
                values = bb.emit("tape_get", [rtape, k], result_types=list(rtape.type.items))
                values = values if isinstance(values, list) else [values]
                for o, v in zip(read_ops, values):
                    v.name = o.results[0].name
                    reads[o] = v
            tapes = self.forward(body.ops[:-1], inner, tape_loops=True, reads=reads)
            local = {f: a for f, a in zip(free, nb.args[1 + len(carried):])}
            ys = body.ops[-1].operands
            for slot, j in enumerate(carried):
                if ys[j] in self.active:
                    self.add(local, ys[j], nb.args[1 + slot])
            self.backward(body.ops[:-1], local, inner, tapes)
            outs = [local.get(args[j]) or self.zero_like(args[j], inner) for j in carried] + [local[f] for f in free]
            bb.yield_([self._exclusive(o) for o in outs])
        types = [v.type for v in inits]
        new = Op("for", [last, minus_one, minus_one] + inits, types, {"result_types": types, "reverse_sweep": True},
                 [nb], op.loc, names=names)
        b.block.ops.append(new)
        adj.update(zip(free, new.results[len(carried):]))   # first: an init may be a free value too
        for slot, j in enumerate(carried):
            init = op.operands[3 + j] if is_for else op.operands[j]
            if init in self.active:
                self.add(adj, init, new.results[slot])


_VIEWS = ("transpose", "sum_to", "call_custom_vjp", "tape_get")


class _Overlay(dict):
    """A mapping whose writes also go to ``base`` (used to read snapshots for one op)."""

    def __init__(self, base, view):
        super().__init__(view)
        self.base = base

    def update(self, *a, **kw):
        items = dict(*a, **kw)      # an iterator can be read once only
        super().update(items)
        self.base.update(items)


def _named(v, primal):
    """Adjoint values are named after the primal variable: d<name>."""
    if v is not None and v.name is None and primal.name:
        v.name = "d" + primal.name
    return v
