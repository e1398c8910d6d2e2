"""Reverse-mode rules for array reads, writes and calls: ops whose adjoint is not one
contribution per operand but an update of an adjoint array (``dx[i] += g``).

``ARRAY_ADJOINT[prim](rev, op, g, adj, mapping)`` emits, into the current block, the
adjoint of one op: ``g`` is the adjoint of its result, ``adj`` the adjoint map (primal value ->
adjoint value) to update with ``rev.add``, ``mapping`` the primal values in the adjoint
function. ``rev`` is the reverse pass (ad/reverse.py): ``rev.active`` (the values with
adjoints), ``rev.exclusive(acc)`` (an adjoint array the rule may update in place) and
``rev.zero_like(v, mapping)``.

Example:
    ARRAY_ADJOINT["index"]      # dx[i] += g
"""
from ..ir.core import current
from ..ir.types import F64
from .names import adjoint_name
from .tables import array_rule

_rule = array_rule



def accumulator(rev, arr, adj, mapping):
    acc = adj.get(arr)
    return rev.zero_like(arr, mapping) if acc is None else rev.exclusive(acc)


@_rule("index", "slice")
def _read(rev, op, g, adj, mapping):
    """y = x[i]: dx[i] += g (``index_add``); y = x[a:b]: dx[a:b] += g (``slice_add``)."""
    arr = op.operands[0]
    if arr in rev.active:
        acc = accumulator(rev, arr, adj, mapping)
        prim, attrs = ("index_add", {}) if op.prim == "index" else ("slice_add", dict(op.attrs))
        adj[arr] = current().emit(prim, [acc, g] + [mapping[v] for v in op.operands[1:]],
                                  dict(attrs, array=arr.name), name=acc.name)
        adj[arr].owner.loc = op.loc     # an IndexError names the user's array and line


@_rule("setitem")
def _setitem(rev, op, g, adj, mapping):
    """x' = x with x[idx] = v: v gets x'[idx]'s adjoint; the old x[idx] was overwritten, so
    its adjoint restarts from zero."""
    b = current()
    arr, v, *idx = op.operands
    idx = [mapping[i] for i in idx]
    if v in rev.active:
        rev.add(adj, v, adjoint_name(b.emit("index", [g] + idx), v))
    if arr in rev.active:
        # replay: the primal's write ran with these indices into an array of g's shape, so
        # this one cannot fail, and dead-code removal may drop it where nothing reads it later
        cleared = b.emit("setitem", [rev.exclusive(g), b.const(0.0, F64)] + idx, {"replay": True}, name=g.name)
        rev.add(adj, arr, cleared)


@_rule("setslice")
def _setslice(rev, op, g, adj, mapping):
    """x' = x with x[a:b] = v: v gets the sum (to its shape) of x'[a:b]'s adjoint."""
    b = current()
    arr, v, *bounds = op.operands
    bounds = [mapping[x] for x in bounds]
    if v in rev.active:
        # a copy: the slice is a view of g, whose elements are zeroed just below
        part = b.emit("copy", [b.emit("slice", [g] + bounds, dict(op.attrs))])
        dv = b.emit("sum_to", [part, mapping[v]]) if v.type.is_array else b.emit("sum", [part], {"axis": None})
        rev.add(adj, v, adjoint_name(dv, v))
    if arr in rev.active:
        cleared = b.emit("setslice", [rev.exclusive(g), b.const(0.0, F64)] + bounds, dict(op.attrs, replay=True),
                         name=g.name)     # replay: cannot fail (see _setitem)
        rev.add(adj, arr, cleared)


@_rule("call_custom")
def _custom(rev, op, g, adj, mapping):
    """The user's vjp: fn.vjp(*args, result(s), cotangent(s)) -> one cotangent per argument."""
    b = current()
    gs = [adj.get(r) or b.const(0.0, F64) for r in op.results]
    targets = [k for k, v in enumerate(op.operands) if v in rev.active]
    types = [op.operands[k].type for k in targets]
    outs = b.emit("call_custom_vjp", [mapping[v] for v in op.operands] + [mapping[r] for r in op.results] + gs,
                  {"fn": op.attrs["fn"], "n_args": len(op.operands), "targets": targets, "result_types": types},
                  result_types=types)
    outs = outs if isinstance(outs, list) else [outs]
    for k, dv in zip(targets, outs):
        rev.add(adj, op.operands[k], adjoint_name(dv, op.operands[k]))


__all__ = ["accumulator"]

