"""Forward mode over the structured IR: primal Function → function of (primals, tangents)
returning (outputs, output tangents), for ``jvp``.

Each op is copied, then its tangent made by its rule in ad/tangent_rules.py (elementwise ops:
the reverse rules of ad/rules.py, each linear in the incoming value). Loops carry tangents
next to their values; an ``if`` yields them. Only values that depend on an input with a
tangent get one (ad/activity.py).

Example:
    >>> import numpy as np
    >>> from srcgrad.frontend.lower import lower
    >>> from srcgrad.ir.interpret import interpret
    >>> from srcgrad.ir.types import F64
    >>> def f(x, y):
    ...     return x * y + np.sin(x)
    >>> fwd = forward(lower(f, [F64, F64]))   # fwd(x, y, dx, dy) -> (f, df)
    >>> [round(v, 4) for v in interpret(fwd, [1.0, 2.0, 1.0, 0.0])]     # f(1, 2), df/dx
    [2.8415, 2.5403]
"""
from ..errors import TypingError
from ..ir.core import Builder, Function, Op, Value, current, walk_ops
from ..ir.memory import Buffers
from ..ir.primitives import PRIMITIVES
from ..ir.types import is_float
from .activity import active_values
from .clone import clone_op, fresh_block, zero_like
from .mutation import refuse_stale_uses
from .names import derivative_name
from .second_order import NO_TANGENT, goes_through, refuse_twice
from .all_rules import TANGENT


def forward(primal, wrt=None):
    """An IR Function of (params..., tangents of float params...) -> (results..., result tangents...);
    with ``wrt`` (parameter positions), tangents of those float params only (the others are
    constants: no tangent parameter, no tangent work)."""
    ret = primal.body.terminator
    for v in ret.operands:
        if not is_float(v.type):
            raise TypingError(f"jvp needs float results; {primal.name} returns {v.type}", primal.loc)
    buffers = Buffers(primal)
    refuse_stale_uses(primal, buffers)       # the tangents of arrays follow the IR's versions
    chosen = primal.params if wrt is None else [primal.params[k] for k in wrt]
    with_tangent = [p for p in chosen if is_float(p.type)]
    params = [(p.name, p.type) for p in primal.params] + [(derivative_name(p, "x"), p.type) for p in with_tangent]
    fn = Function(primal.name + "_jvp", params, primal.loc)
    fn.derivative = True
    mapping = dict(zip(primal.params, fn.params))
    tangent = dict(zip(with_tangent, fn.params[len(primal.params):]))
    f = _Forward(active_values(primal, with_tangent), buffers, primal)
    written = buffers.written
    with Builder(fn.body) as b:
        for p in with_tangent:
            if p in written:        # its tangent is written alongside it: not into the caller's array
                tangent[p] = b.emit("copy", [tangent[p]], name=tangent[p].name)
        f.ops(primal.body.ops[:-1], mapping, tangent)
        outs = [mapping[v] for v in ret.operands]
        touts = [tangent.get(v) or zero_like(v, mapping) for v in ret.operands]
        b.ret(outs + touts)
    return fn


class _Forward:
    def __init__(self, active, buffers, primal):
        self.active = active
        self.buffers = buffers
        self.written = buffers.written
        self.tangent_tapes = {}         # primal tape -> its tangent tape
        # for each tape, the positions of its float items that carry a tangent
        self._tape_items = {}
        for op in walk_ops(primal.body):
            if op.prim == "tape_put":
                act = {j for j, v in enumerate(op.operands[2:]) if v in active}
                self._tape_items[op.operands[0]] = sorted(set(self._tape_items.get(op.operands[0], [])) | act)

    def ops(self, ops, mapping, tangent):
        b = current()
        outer = b.loc
        try:
            for op in ops:
                b.loc = op.loc      # an op's tangent comes from the user's line of the op
                if op.prim == "if":
                    self.if_op(op, mapping, tangent)
                elif op.prim in ("for", "while"):
                    self.loop(op, mapping, tangent)
                else:
                    self.op(op, mapping, tangent)
        finally:
            b.loc = outer

    def op(self, op, mapping, tangent):
        if op.prim in ("tape_new", "tape_put", "tape_get"):
            return self.tape_op(op, mapping, tangent)
        if op.prim in NO_TANGENT and goes_through(op, self.active):
            refuse_twice(op, "jvp", NO_TANGENT)
        new = clone_op(op, mapping)
        if op.prim == "undo_save" and tangent.get(op.operands[0]) is not None:
            # the tangent's old elements go on the same undo log (ad/second_order.py)
            current().emit("undo_save", [tangent[op.operands[0]]] + new.operands[1:], dict(op.attrs),
                           result_types=[])
        if not op.results or op.results[0] not in self.active:
            return
        res = op.results[0]
        rule = TANGENT[op.prim]         # a missing rule fails here, by name (tangent_rules.py)
        before = len(current().block.ops)
        t = rule(op, [tangent.get(v) for v in op.operands], [mapping[v] for v in op.operands], mapping[res])
        if t is not None and self._needs_own_buffer(op, res, t, current().block.ops[before:]):
            # a new array written in place later: its tangent is written alongside it, so it
            # must not be an operand's tangent (y = x.copy(): dy = dx would write into dx)
            t = current().emit("copy", [t])
        if t is not None:
            t.name = t.name or derivative_name(res)
            tangent[res] = t

    def tape_op(self, op, mapping, tangent):
        """A tape of an adjoint being differentiated (forward over reverse): its float items'
        tangents go on a tangent tape of the same length, at the same places."""
        b = current()
        new = clone_op(op, mapping)
        tape = op.operands[0] if op.prim != "tape_new" else op.results[0]
        if op.prim == "tape_new":
            items = self._tape_items.get(tape) or []
            if items:
                if op.attrs.get("snapshots"):
                    raise TypingError("jvp cannot differentiate a gradient compiled with checkpoint=; "
                                      "differentiate the gradient without it", op.loc)
                types = [op.attrs["items"][j] for j in items]
                self.tangent_tapes[tape] = b.emit("tape_new", list(new.operands), dict(op.attrs, items=types),
                                                  name=derivative_name(tape))
            return
        ttape = self.tangent_tapes.get(tape)
        if ttape is None:
            return
        items = self._tape_items[tape]
        if op.prim == "tape_put":
            vals = op.operands[2:]
            ts = [tangent.get(vals[j]) or zero_like(vals[j], mapping) for j in items]
            b.emit("tape_put", [ttape, mapping[op.operands[1]]] + ts, dict(op.attrs), result_types=[])
        else:
            got = b.emit("tape_get", [ttape, mapping[op.operands[1]]], result_types=list(ttape.type.items))
            got = got if isinstance(got, list) else [got]
            for j, t in zip(items, got):
                t.name = derivative_name(op.results[j])
                tangent[op.results[j]] = t

    def _needs_own_buffer(self, op, res, t, made):
        if not (t.type.is_array and PRIMITIVES[op.prim].makes_new_array(op) and self.buffers.of(res) & self.written):
            return False
        return not (t.owner in made and PRIMITIVES[t.owner.prim].makes_new_array(t.owner))

    def region(self, blk, nb, inner, tin, tangent_of):
        """Copy region ``blk`` into ``nb``: its yield gives the values, then the tangents of the
        yielded values at positions ``tangent_of``."""
        with Builder(nb) as bb:
            self.ops(blk.ops[:-1], inner, tin)
            ys = blk.yielded
            bb.yield_([inner[v] for v in ys] + [tin.get(ys[j]) or zero_like(ys[j], inner) for j in tangent_of])

    def if_op(self, op, mapping, tangent):
        out_active = [j for j, r in enumerate(op.results) if r in self.active]
        blocks = [fresh_block(blk) for blk in op.regions]
        for blk, nb in zip(op.regions, blocks):
            self.region(blk, nb, dict(mapping), dict(tangent), out_active)
        self.append(op, out_active, [op.results[j] for j in out_active], [mapping[op.cond]], blocks, mapping, tangent)

    def loop(self, op, mapping, tangent):
        is_for = op.prim == "for"
        act = [j for j, a in enumerate(op.carried) if a in self.active]
        t_inits = [tangent.get(op.inits[j]) or zero_like(op.inits[j], mapping) for j in act]
        regions = []
        for blk in op.regions:
            blk_args = blk.args[1:] if is_for else blk.args
            nb = fresh_block(blk, [Value(blk_args[j].type, derivative_name(blk_args[j])) for j in act])
            inner, tin = dict(mapping), dict(tangent)
            inner.update(zip(blk.args, nb.args))
            tin.update({blk_args[j]: t for j, t in zip(act, nb.args[len(blk.args):])})
            # a while loop's condition region yields its bool only
            self.region(blk, nb, inner, tin, act if blk is op.body else [])
            regions.append(nb)
        self.append(op, act, [op.carried[j] for j in act], [mapping[v] for v in op.operands] + t_inits, regions,
                    mapping, tangent)

    def append(self, op, tangent_of, primals, operands, regions, mapping, tangent):
        """The copy of region op ``op``, with results for the tangents of its results
        ``tangent_of`` (of the values ``primals``: they give the tangents' types and names)."""
        types = [r.type for r in op.results] + [v.type for v in primals]
        names = [r.name for r in op.results] + [derivative_name(v) for v in primals]
        new = Op(op.prim, operands, types, {"result_types": types}, regions, op.loc, names=names)
        current().block.ops.append(new)
        n = len(op.results)
        mapping.update(zip(op.results, new.results[:n]))
        tangent.update({op.results[j]: t for j, t in zip(tangent_of, new.results[n:])})
