"""Derivative rules for the primitives that the AD transformations themselves make, so that an
adjoint can be differentiated again: ``jvp(grad(f))`` (forward over reverse: Hessian-vector
products), ``grad(grad(f))`` (reverse over reverse).

A gradient's IR sums adjoints back to shapes (``sum_to``), broadcasts them (``broadcast_like``)
and accumulates them into arrays (``index_add``, ``slice_add``); all four are linear in their
float operands, so their rules are the transposes of one another:

    sum_to(x, like)            tangent sum_to(dx, like)        adjoint broadcast_like(g, x)
    broadcast_like(x, like)    tangent broadcast_like(dx, ..)  adjoint sum_to(g, x) (or sum)
    index_add(acc, v, i)       tangent index_add(dacc, dv, i)  adjoint acc: g, v: g[i]
    slice_add(acc, v, a:b)     tangent slice_add(dacc, dv, ..) adjoint acc: g, v: g[a:b]

Tapes carry derivatives forward: in forward mode a tape with float items gets a tangent tape
of the same length, written and read at the same places (ad/forward.py). ``dependence_edges``
(ad/activity.py) joins each stored item to what reading it gives. The undo log of a gradient
that overwrites array elements also keeps the tangent arrays' old elements: each save of an
array with a tangent is followed by a save of its tangent into the same log, so the heights
the gradient marks (and rewinds to) cover both.

What cannot be differentiated again yet is in ``NO_TANGENT`` (neither mode) and
``NO_SECOND_ADJOINT`` (reverse mode), with the reason; those ops count as differentiable for
activity, so that a derivative through them is a clear error (``refuse_twice``), never a
silent zero.

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    >>> y, hv = srcgrad.jvp(srcgrad.grad(f), (x,), (v,))      # H(x) v
    >>> hv
    array([6., 0.])
"""
from ..errors import TypingError
from ..ir.core import current
from .tables import adjoint_rule, tangent_rule

_LOOPS = "use jvp(grad(f)) (forward over reverse) for second derivatives of functions with loops"

# no rule in either direction yet: forward and reverse mode both refuse where it is active
NO_TANGENT = {
    "reduce_grad": "the gradient of np.prod cannot be differentiated again yet",
    "cumprod_grad": "the gradient of np.cumprod cannot be differentiated again yet",
    "call_custom_vjp": "a custom_vjp function has a hand-written first derivative only; differentiating it "
                       "twice needs a derivative of its backward function, which srcgrad cannot see",
}
# forward mode has a rule (jvp(grad(f)) works), reverse mode not yet (grad(grad(f)) refuses)
NO_SECOND_ADJOINT = dict(NO_TANGENT, **{
    "undo_save": "the gradient of a function that overwrites array elements keeps an undo log, which reverse "
                 "mode cannot go through yet; use jvp(grad(f)) (forward over reverse), or build new arrays "
                 "instead of writing into one",
    # ad/tape_rules.py differentiates the tapes of for loops (nested ones too)
    "tape_put": "reverse over reverse through a while loop's tape is not built yet; " + _LOOPS,
    "tape_get": "reverse over reverse through a while loop's tape is not built yet; " + _LOOPS,
    **{p: f"reverse over reverse through {p} is not built yet; use jvp(grad(f)) (forward over reverse)"
       for p in ("tile_sum", "repeat_sum", "repeat_each_sum", "kron_grad", "cholesky_grad", "svdvals_grad")},
})


def goes_through(op, active):
    """Whether a derivative goes through ``op``: an operand or a result of it is in ``active``."""
    return any(v in active for v in op.operands) or any(r in active for r in op.results)


def refuse_twice(op, how, table):
    """Raise the clear error for an op of ``table`` that ``how`` (jvp, grad) must go through."""
    raise TypingError(f"{how} cannot differentiate {op.prim} (made by a first derivative): {table[op.prim]}",
                      op.loc)




def _emit(prim, operands, attrs=None):
    return current().emit(prim, operands, attrs)


def _to_shape_of(g, x):
    """``g`` (broadcast to at least ``x``'s shape) summed back to ``x``: an array or a number."""
    return _emit("sum_to", [g, x]) if x.type.is_array else _emit("sum", [g], {"axis": None})


# adjoints: each linear op's transpose
@adjoint_rule("sum_to")
def _sum_to_adjoint(g, x, like, out):
    """y = sum_to(x, like) sums x's broadcast dims away, so dx = g broadcast back to x's shape."""
    return (lambda: _emit("broadcast_like", [g, x], {"axis": None}), None)


@adjoint_rule("broadcast_like")
def _broadcast_like_adjoint(g, x, like, out):
    """y = x broadcast to like's shape (``axis``: x lost that axis in a reduction): dx = g
    summed over that axis, then to x's shape."""
    axis = out.owner.attrs.get("axis") if out.owner is not None else None
    def dx():
        part = _emit("sum", [g], {"axis": axis}) if axis is not None else g
        return _to_shape_of(part, x) if x.type.is_array or axis is None else part
    return (dx, None)


def _accumulation_adjoint(read):
    def rule(g, acc, v, *rest):
        keys = list(rest[:-1])
        def dv():
            part = _emit(read, [g] + keys, _attrs_of(rest[-1]) if read == "slice" else None)
            return _to_shape_of(part, v) if v.type.is_array or part.type.is_array else part
        return (lambda: g, dv) + (None,) * len(keys)
    return rule


def _attrs_of(out):
    attrs = dict(out.owner.attrs) if out.owner is not None else {}
    attrs.pop("array", None)
    return attrs


adjoint_rule("index_add")(_accumulation_adjoint("index"))     # acc[i] += v: dacc = g, dv = g[i]
adjoint_rule("slice_add")(_accumulation_adjoint("slice"))     # acc[a:b] += v: dacc = g, dv = sum_to(g[a:b], v)


# tangents: the same linear op applied to the tangents
@tangent_rule("sum_to", "broadcast_like", "tile_sum", "repeat_sum", "repeat_each_sum")
def _linear_in_first(op, ts, xs, out):
    """Linear in operand 0 (the others give shapes or counts): the op applied to its tangent."""
    return _emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs)) if ts[0] is not None else None


@tangent_rule("kron_grad")
def _kron_grad(op, ts, xs, out):
    """kron_grad(g, other, ...) is linear in g and in other: the sum of both directions."""
    terms = []
    if ts[0] is not None:
        terms.append(_emit(op.prim, [ts[0]] + xs[1:], dict(op.attrs)))
    if ts[1] is not None:
        terms.append(_emit(op.prim, [xs[0], ts[1]] + xs[2:], dict(op.attrs)))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else _emit("add", terms)


@tangent_rule("index_add", "slice_add")
def _accumulation(op, ts, xs, out):
    """acc[idx] += v: dacc[idx] += dv, into a tangent array of its own (zeros where acc's is zero)."""
    b = current()
    dacc, dv = ts[0], ts[1]
    if dacc is None:
        dacc = b.emit("zeros_like", [xs[0]])
    elif dacc.owner is not None and dacc.owner.prim not in ("zeros_like", "index_add", "slice_add", "copy"):
        # maybe the tangent of another value too: not written into (as setitem's rule,
        # tangent_rules.py; a loop's carried tangent is the loop's own)
        dacc = b.emit("copy", [dacc])
    if dv is None:
        return dacc
    attrs = _attrs_of(out) if op.prim == "slice_add" else {}
    return b.emit(op.prim, [dacc, dv] + xs[2:], attrs)


def tape_edges(ops, edges):
    """Add to ``edges`` (ad/activity.py) an edge from each float item put on a tape to the same
    item read back from it: a derivative flows through the tape."""
    puts, gets = {}, {}
    for op in ops:
        if op.prim == "tape_put":
            puts.setdefault(op.operands[0], []).append(op)
        elif op.prim == "tape_get":
            gets.setdefault(op.operands[0], []).append(op)
    for tape, ps in puts.items():
        for put in ps:
            for j, item in enumerate(put.operands[2:]):
                for get in gets.get(tape, ()):
                    edges[item].append(get.results[j])


__all__ = ["NO_TANGENT", "NO_SECOND_ADJOINT", "goes_through", "refuse_twice", "tape_edges"]
