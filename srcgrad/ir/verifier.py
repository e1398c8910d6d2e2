"""Checks that an IR function is well formed: SSA (each value defined once, before use, in a
scope that encloses the use), known primitives, terminators, region arities and types.

Example:
    verify(fn)      # raises IRError naming the first problem
"""
from .primitives import PRIMITIVES


class IRError(Exception):
    """The IR is malformed: a compiler bug, never the user's fault."""


def verify(fn):
    """Raise IRError if ``fn`` is not well formed; return ``fn``."""
    if fn.body.args != fn.params:
        raise IRError("the body's arguments must be the function's parameters")
    _verify_block(fn.body, set(), "return")
    return fn


def _define(v, defined):
    if v in defined:
        raise IRError(f"value {v} is defined twice")
    defined.add(v)


def _verify_block(block, outer, terminator):
    scope = set(outer)
    for a in block.args:
        _define(a, scope)
    if not block.ops or block.ops[-1].prim != terminator:
        raise IRError(f"a block must end in '{terminator}'")
    for k, op in enumerate(block.ops):
        if op.prim not in PRIMITIVES:
            raise IRError(f"unknown primitive '{op.prim}'")
        if op.prim in ("yield", "return") and k != len(block.ops) - 1:
            raise IRError(f"'{op.prim}' must be the last op of its block")
        for v in op.operands:
            if v not in scope:
                raise IRError(f"{op.prim} uses {v} outside the scope that defines it")
        _verify_regions(op, scope)
        for r in op.results:
            _define(r, scope)


def _verify_regions(op, scope):
    p = PRIMITIVES[op.prim]
    if not p.region_op:
        if op.regions:
            raise IRError(f"'{op.prim}' may not own regions")
        return
    if op.prim == "if":
        then, other = op.regions
        for r in (then, other):
            _verify_block(r, scope, "yield")
            _check_yield(op, r.ops[-1])
    elif op.prim == "for":
        (body,) = op.regions
        if len(body.args) != len(op.operands) - 2:
            raise IRError("a 'for' body takes the index and one argument per carried value")
        _verify_block(body, scope, "yield")
        _check_yield(op, body.ops[-1])
    elif op.prim == "while":
        cond, body = op.regions
        _verify_block(cond, scope, "yield")
        _verify_block(body, scope, "yield")
        if len(cond.ops[-1].operands) != 1:
            raise IRError("a 'while' condition region yields one bool")
        _check_yield(op, body.ops[-1])


def _check_yield(op, y):
    if [v.type for v in y.operands] != [r.type for r in op.results]:
        raise IRError(f"'{op.prim}' yields {[v.type for v in y.operands]} but has results "
                      f"{[r.type for r in op.results]}")
