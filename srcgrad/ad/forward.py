"""Forward mode over the structured IR: primal Function → function of (primals, tangents)
returning (outputs, output tangents), for ``jvp``.

It uses the same rules as reverse mode (ad/rules.py): a scalar primitive's derivative is a
1×1 Jacobian per operand, so the tangent of ``op(a, b)`` is ``rule_a(ȧ) + rule_b(ḃ)`` —
each rule thunk is linear in the incoming value. Loops carry tangents next to their values;
an ``if`` yields them. Only values that depend on an input with a tangent get one.

Example:
    >>> fwd = forward(lower(f, [F64, F64]))   # fwd(x, y, dx, dy) -> (f, df)
"""
from ..errors import TypingError
from ..ir.core import Block, Builder, Function, Op, Value
from ..ir.memory import Buffers, refuse_stale_uses
from ..ir.types import F64, ArrayType, is_float
from .reverse import _activity
from .rules import ADJOINT


def _differentiable(t):
    return is_float(t)


def forward(primal):
    """An IR Function of (params..., tangents of float params...) -> (results..., result tangents...)."""
    ret = primal.body.ops[-1]
    for v in ret.operands:
        if not _differentiable(v.type):
            raise TypingError(f"jvp needs float results; {primal.name} returns {v.type}", primal.loc)
    refuse_stale_uses(primal)        # the tangents of arrays follow the IR's versions
    with_tangent = [p for p in primal.params if _differentiable(p.type)]
    params = [(p.name, p.type) for p in primal.params] + [("d" + (p.name or "x"), p.type) for p in with_tangent]
    fn = Function(primal.name + "_jvp", params, primal.loc)
    active = _activity(primal, with_tangent)
    mapping = dict(zip(primal.params, fn.params))
    tangent = dict(zip(with_tangent, fn.params[len(primal.params):]))
    f = _Forward(active)
    written = Buffers(primal).written
    with Builder(fn.body) as b:
        for p in with_tangent:
            if p in written:        # its tangent is written alongside it: not into the caller's array
                tangent[p] = b.emit("copy", [tangent[p]], name=tangent[p].name)
        f.ops(primal.body.ops[:-1], mapping, tangent)
        outs = [mapping[v] for v in ret.operands]
        touts = [tangent.get(v) or f.zero(v, mapping) for v in ret.operands]
        b.ret(outs + touts)
    return fn


def _bilinear_jvp(b, op, ts, xs):
    """d(a ∘ b) = ȧ ∘ b + a ∘ ḃ for a product that is linear in each operand (@, outer)."""
    da, db = ts
    a, bb = xs
    terms = []
    if da is not None:
        terms.append(b.emit(op.prim, [da, bb]))
    if db is not None:
        terms.append(b.emit(op.prim, [a, db]))
    return terms[0] if len(terms) == 1 else b.emit("add", terms)


def _reduce_jvp(b, op, ts, xs):
    """d reduce(x) = sum over the reduced axes of (∂reduce/∂x · ẋ)."""
    if ts[0] is None:
        return None
    x = xs[0]
    out = b.block.ops[-1].results[0]          # the reduction just cloned
    partials = b.emit("reduce_grad", [b.const(1.0, F64), x, out], {"of": op.prim, "axis": op.attrs.get("axis")})
    return b.emit("sum", [b.emit("mul", [partials, ts[0]])], {"axis": op.attrs.get("axis")})


# Ops that are not elementwise: their tangent rule is not their (transposed) adjoint rule.
_STRUCTURAL_JVP = {
    "outer": _bilinear_jvp,
    "prod": _reduce_jvp, "amax": _reduce_jvp, "amin": _reduce_jvp,
    "sum": lambda b, op, ts, xs: b.emit("sum", [ts[0]], dict(op.attrs)) if ts[0] is not None else None,
    "transpose": lambda b, op, ts, xs: b.emit("transpose", [ts[0]]) if ts[0] is not None else None,
    "copy": lambda b, op, ts, xs: ts[0],
    "matmul": _bilinear_jvp,
}


class _Forward:
    def __init__(self, active):
        self.active = active

    def b(self):
        from ..ir.core import current
        return current()

    def zero(self, v, mapping):
        b = self.b()
        if isinstance(v.type, ArrayType):
            return b.emit("zeros_like", [mapping[v]])
        return b.const(0.0, F64)

    def ops(self, ops, mapping, tangent):
        for op in ops:
            if op.prim in ("for", "while", "if"):
                self.region_op(op, mapping, tangent)
                continue
            new = Op(op.prim, [mapping[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs),
                     (), op.loc, names=[r.name for r in op.results])
            self.b().block.ops.append(new)
            mapping.update(zip(op.results, new.results))
            if not op.results or op.results[0] not in self.active:
                continue
            res = op.results[0]
            if op.prim == "call_custom":
                raise TypingError(f"jvp cannot go through {op.attrs['fn'].__name__}: a custom_vjp function has a "
                                  "reverse-mode derivative only; use grad or vjp", op.loc)
            if op.prim in ("slice",):
                dt = tangent.get(op.operands[0])
                if dt is not None:
                    tangent[res] = self.b().emit("slice", [dt] + [mapping[i] for i in op.operands[1:]],
                                                 dict(op.attrs), name="d" + (res.name or "v"))
                continue
            if op.prim == "setslice":
                arr, v, *bounds = op.operands
                darr, dv = tangent.get(arr), tangent.get(v)
                b = self.b()
                darr = b.emit("zeros_like", [mapping[arr]]) if darr is None else b.emit("copy", [darr])
                tangent[res] = b.emit("setslice", [darr, dv if dv is not None else b.const(0.0, F64)]
                                      + [mapping[x] for x in bounds], dict(op.attrs), name="d" + (res.name or "v"))
                continue
            if op.prim == "setitem":
                arr, v, *idx = op.operands
                darr, dv = tangent.get(arr), tangent.get(v)
                b = self.b()
                if darr is None:
                    darr = b.emit("zeros_like", [mapping[arr]])
                elif darr.owner is not None and darr.owner.prim not in ("zeros_like", "setitem", "copy"):
                    darr = b.emit("copy", [darr])       # may be shared with another tangent
                tangent[res] = b.emit("setitem", [darr, dv if dv is not None else b.const(0.0, F64)]
                                      + [mapping[i] for i in idx], name="d" + (res.name or "v"))
                continue
            if op.prim == "index":
                dt = tangent.get(op.operands[0])
                if dt is not None:
                    tangent[res] = self.b().emit("index", [dt] + [mapping[i] for i in op.operands[1:]],
                                                 name="d" + (res.name or "v"))
                continue
            if op.prim in _STRUCTURAL_JVP:
                ts = [tangent.get(v) for v in op.operands]
                t = _STRUCTURAL_JVP[op.prim](self.b(), op, ts, [mapping[v] for v in op.operands])
                if t is not None:
                    t.name = t.name or "d" + (res.name or "v")
                    tangent[res] = t
                continue
            total = None
            for k, v in enumerate(op.operands):
                dv = tangent.get(v)
                if dv is None:
                    continue
                # an infinite partial times a zero tangent is NaN, as in reverse mode and PyTorch:
                # jvp(t) is <grad, t> computed in IEEE arithmetic
                thunk = ADJOINT[op.prim](dv, *[mapping[o] for o in op.operands], mapping[res])[k]
                if thunk is None:
                    continue
                term = thunk()
                total = term if total is None else self.b().emit("add", [total, term])
            if total is not None:
                if total.name is None:
                    total.name = "d" + (res.name or "v")
                tangent[res] = total

    def region_op(self, op, mapping, tangent):
        b = self.b()
        if op.prim == "if":
            out_active = [j for j, r in enumerate(op.results) if r in self.active]
            blocks = []
            for blk in op.regions:
                nb = Block()
                inner, tin = dict(mapping), dict(tangent)
                with Builder(nb) as bb:
                    self.ops(blk.ops[:-1], inner, tin)
                    ys = blk.ops[-1].operands
                    bb.yield_([inner[v] for v in ys] + [tin.get(ys[j]) or self.zero(ys[j], inner)
                                                        for j in out_active])
                blocks.append(nb)
            types = [r.type for r in op.results] + [op.results[j].type for j in out_active]
            names = [r.name for r in op.results] + ["d" + (op.results[j].name or "v") for j in out_active]
            new = Op("if", [mapping[op.operands[0]]], types, {"result_types": types}, blocks, op.loc, names=names)
            b.block.ops.append(new)
            n = len(op.results)
            mapping.update(zip(op.results, new.results[:n]))
            tangent.update({op.results[j]: t for j, t in zip(out_active, new.results[n:])})
            return
        is_for = op.prim == "for"
        body = op.regions[-1]
        args = body.args[1:] if is_for else body.args
        inits = op.operands[3:] if is_for else op.operands
        act = [j for j, a in enumerate(args) if a in self.active]
        t_inits = [tangent.get(inits[j]) or self.zero(inits[j], mapping) for j in act]
        types = [r.type for r in op.results] + [args[j].type for j in act]
        names = [r.name for r in op.results] + ["d" + (args[j].name or "v") for j in act]
        regions = []
        for blk in op.regions:
            blk_args = blk.args[1:] if is_for else blk.args
            lead = [Value(blk.args[0].type, blk.args[0].name)] if is_for else []
            vals = [Value(a.type, a.name) for a in blk_args]
            tans = [Value(blk_args[j].type, "d" + (blk_args[j].name or "v")) for j in act]
            nb = Block(lead + vals + tans)
            inner, tin = dict(mapping), dict(tangent)
            if is_for:
                inner[blk.args[0]] = lead[0]
            inner.update(zip(blk_args, vals))
            tin.update({blk_args[j]: t for j, t in zip(act, tans)})
            with Builder(nb) as bb:
                self.ops(blk.ops[:-1], inner, tin)
                ys = blk.ops[-1].operands
                if blk is body:
                    bb.yield_([inner[v] for v in ys] + [tin.get(ys[j]) or self.zero(ys[j], inner) for j in act])
                else:       # a while loop's condition region
                    bb.yield_([inner[v] for v in ys])
            regions.append(nb)
        operands = [mapping[v] for v in op.operands] + t_inits
        new = Op(op.prim, operands, types, {"result_types": types}, regions, op.loc, names=names)
        b.block.ops.append(new)
        n = len(op.results)
        mapping.update(zip(op.results, new.results[:n]))
        tangent.update({op.results[j]: t for j, t in zip(act, new.results[n:])})
