"""Which values need derivatives: a reachability question over one dependence graph.

An edge ``u -> v`` says that ``v`` depends differentiably on ``u``: from each operand to each
result of an op with a derivative rule, and through control flow from a loop's initial value
and its body's yielded value to the carried block argument and the loop result (zero trips
pass the initial value through), from a branch's yielded value to the ``if`` result, and from
an item stored on a tape to the item read back (a derivative of a derivative). Only floats
and float arrays are nodes: ints, bools and tapes carry no derivative.

- ``active_values(fn, seeds)``: what depends on the seeds (forward reachability) — only these
  get tangents (forward mode) or adjoints (reverse mode);
- ``useful_values(fn)``: what a float result depends on (backward reachability) — a value
  computed for another reason (a condition, a write the result never reads) keeps no adjoint,
  since a zero adjoint times an infinite partial derivative (sqrt at 0) would be NaN.

Example:
    active = active_values(fn, [fn.params[0]]) & useful_values(fn)
"""
from collections import defaultdict

from ..ir.core import walk_ops
from ..ir.types import is_float
from .all_rules import ADJOINT
from ..ir.primitives import PRIMITIVES
from .second_order import tape_edges


def dependence_edges(fn):
    """{u: [v, ...]} for every differentiable dependence ``u -> v`` of ``fn``."""
    edges = defaultdict(list)
    ops = list(walk_ops(fn.body))
    tape_edges(ops, edges)
    for op in ops:
        if op.prim in ("for", "while"):
            ys = op.body.yielded
            for j, (init, r) in enumerate(zip(op.inits, op.results)):
                targets = [op.carried[j], r] + ([op.test.args[j]] if op.prim == "while" else [])
                for source in (init, ys[j]):
                    edges[source].extend(targets)
                edges[op.carried[j]].append(r)
        elif op.prim == "if":
            for region in op.regions:
                for y, r in zip(region.yielded, op.results):
                    edges[y].append(r)
        elif PRIMITIVES[op.prim].adjoint != "rule" or ADJOINT[op.prim] is not None:
            for v in op.operands:
                edges[v].extend(op.results)
    return edges


def _reach(starts, edges):
    seen = {v for v in starts if is_float(v.type)}
    todo = list(seen)
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen and is_float(w.type):
                seen.add(w)
                todo.append(w)
    return seen


def active_values(fn, seeds, edges=None):
    """The values of ``fn`` that depend differentiably on ``seeds`` (the seeds included);
    ``edges``: ``dependence_edges(fn)`` when the caller has it already."""
    return _reach(seeds, dependence_edges(fn) if edges is None else edges)


def useful_values(fn, edges=None):
    """The values of ``fn`` that some float result depends on differentiably."""
    backwards = defaultdict(list)
    for u, vs in (dependence_edges(fn) if edges is None else edges).items():
        for v in vs:
            backwards[v].append(u)
    return _reach(fn.body.yielded, backwards)


__all__ = ["dependence_edges", "active_values", "useful_values"]
