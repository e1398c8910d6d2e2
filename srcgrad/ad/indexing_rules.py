"""Derivative rules of numpy's advanced indexing, both modes (registered into
array_rules.ARRAY_ADJOINT and tangent_rules.TANGENT):

- ``y = x[idx]`` (gather): ``dx`` gets ``g`` scatter-ADDED at ``idx``, as ``np.add.at`` does:
  a place named twice receives both entries' adjoints (PyTorch's ``index`` backward, which
  accumulates too);
- ``y = x[mask]``: ``dx[mask] += g`` (the places are distinct);
- ``x[idx] = v``: where ``idx`` names a place twice numpy keeps the LAST value written, so
  only that entry of ``v`` gets the place's adjoint (the earlier ones were overwritten: 0);
  the written places' adjoint restarts from zero, as for ``x[i] = v``;
- ``x[mask] = v``: ``v`` gets the adjoint of the True places, which then restart from zero;
- ``np.add.at(x, idx, v)``: ``dx = g`` and ``dv = g[idx]`` (every entry adds: no overwrite).

A scalar ``v`` (broadcast to every place) gets the sum of its places' adjoints, an array
``v`` the adjoint summed to its shape (``sum_to``).

Example:
    ARRAY_ADJOINT["gather"]      # dx = np.add.at(dx, idx, g)
"""
from ..ir.core import current
from ..ir.types import F64
from .rules import as_float64
from .array_rules import accumulator
from .names import adjoint_name
from .tables import array_rule, tangent_rule




def _located(v, op):
    v.owner.loc = op.loc        # an IndexError names the user's line
    return v


@array_rule("gather", "mask_select")
def _read(rev, op, g, adj, mapping):
    """y = x[idx]: dx[idx] += g, repeated places accumulating; y = x[mask]: dx[mask] += g."""
    arr, *rest = op.operands
    if arr not in rev.active:
        return
    b = current()
    acc = accumulator(rev, arr, adj, mapping)
    rest = [mapping[v] for v in rest]
    if op.prim == "gather":
        adj[arr] = _located(b.emit("scatter_add", [acc, g] + rest, {"array": arr.name}, name=acc.name), op)
    else:
        part = as_float64(b.emit("mask_select", [acc] + rest))     # the adjoint of a float32 array is one
        more = b.emit("add", [part, g])
        adj[arr] = _located(b.emit("setmask", [acc, more] + rest, {"array": arr.name}, name=acc.name), op)


def _value_adjoint(rev, adj, v, part, mapping):
    """v's adjoint from ``part``, the adjoint of the places it was written to."""
    b = current()
    dv = b.emit("sum_to", [part, mapping[v]]) if v.type.is_array else b.emit("sum", [part], {"axis": None})
    rev.add(adj, v, adjoint_name(dv, v))


@array_rule("scatter", "setmask", "scatter_add")
def _write(rev, op, g, adj, mapping):
    """x' = x with x[idx] = v (or x[mask] = v, or np.add.at(x, idx, v))."""
    b = current()
    arr, v, *rest = op.operands
    rest = [mapping[r] for r in rest]
    if v in rev.active:
        if op.prim == "setmask":
            part = b.emit("mask_select", [g] + rest)
        else:   # a fresh array: g is zeroed at those places just below
            part = b.emit("gather", [g] + rest, {"last_only": op.prim == "scatter"})
        _value_adjoint(rev, adj, v, _located(part, op), mapping)
    if arr in rev.active:
        if op.prim == "scatter_add":
            rev.shared.add(g)           # passed through unchanged
            rev.add(adj, arr, g)
            return
        cleared = b.emit(op.prim, [rev.exclusive(g), b.const(0.0, F64)] + rest, {"replay": True},
                         name=g.name)     # replay: cannot fail (array_rules._setitem)
        rev.add(adj, arr, _located(cleared, op))


@tangent_rule("gather", "mask_select")
def _read_tangent(op, ts, xs, out):
    """d(x[idx]) = dx[idx]; d(x[mask]) = dx[mask]."""
    if ts[0] is None:
        return None
    return current().emit(op.prim, [ts[0]] + xs[1:])


@tangent_rule("scatter", "setmask", "scatter_add")
def _write_tangent(op, ts, xs, out):
    """x[idx] = v: dx[idx] = dv, into a copy of dx (which may be another value's tangent too);
    np.add.at(x, idx, v): dx[idx] += dv (repeated places accumulating, as the values do)."""
    b = current()
    darr, dv = ts[0], ts[1]
    if dv is None and op.prim == "scatter_add":
        return darr
    darr = b.emit("zeros_like", [xs[0]]) if darr is None else b.emit("copy", [darr])
    return b.emit(op.prim, [darr, dv if dv is not None else b.const(0.0, F64)] + xs[2:])


__all__ = []
