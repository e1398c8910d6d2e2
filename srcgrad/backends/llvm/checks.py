"""Which bounds checks of an innermost ``for`` loop can be made once, before the loop.

An element access ``x[i + c, j]`` in a loop over ``i`` touches indices that move linearly
with ``i``, so they are all in bounds exactly when they are at the first and the last
iteration. The llvm backend then emits the loop twice: a version without the per-element
checks, taken when every such access is in bounds throughout, and the checked version
otherwise (which raises IndexError at the right iteration, as before). Without checks
inside, LLVM can vectorise the loop.

Example:
    >>> accesses = checkable_accesses(for_op)      # [(op, array, [IndexForm, ...]), ...]
"""
from dataclasses import dataclass

from ...ir.core import Value
from ...ir.primitives import PRIMITIVES


@dataclass
class IndexForm:
    """An index as ``invariant`` (loop-invariant value), or ``loop_var + sign * offset``."""
    invariant: Value = None
    sign: int = 1
    offset: Value = None


def checkable_accesses(for_op):
    """[(access op, the array value outside the loop, [IndexForm per axis])] for the element
    accesses of ``for_op``'s body that can be checked before the loop; [] when the body has
    nested regions (only innermost loops are versioned, so code grows at most twofold)."""
    body = for_op.regions[0]
    if any(op.regions for op in body.ops):
        return []
    inside = set(body.args) | {r for op in body.ops for r in op.results}
    outer = _arrays_seen_from_outside(for_op, body)
    i = body.args[0]
    found = []
    for op in body.ops:
        first = PRIMITIVES[op.prim].index_start
        if first is None:
            continue
        arr = op.operands[0]
        arr_outside = arr if arr not in inside else outer.get(arr)
        forms = [_form(v, i, inside) for v in op.operands[first:]]
        if arr_outside is not None and all(f is not None for f in forms):
            found.append((op, arr_outside, forms))
    return found


def _arrays_seen_from_outside(for_op, body):
    """Carried arrays whose every version in the body comes from element writes to the
    previous one (so their shape is the initial value's): {value in the body: initial value}."""
    outer = {}
    for j, (arg, y) in enumerate(zip(body.args[1:], body.ops[-1].operands)):
        if not arg.type.is_array:
            continue
        chain, v = [y], y
        # an element write keeps the shape of the array it writes
        while v is not arg and v.owner is not None and PRIMITIVES[v.owner.prim].index_start and \
                PRIMITIVES[v.owner.prim].writes == 0:
            v = v.owner.operands[0]
            chain.append(v)
        if v is arg:
            outer.update((c, for_op.operands[3 + j]) for c in chain)
    return outer


def _form(v, i, inside):
    if v not in inside:
        return IndexForm(invariant=v)
    if v is i:
        return IndexForm()
    op = v.owner
    if op is None or op.prim not in ("add", "sub") or len(op.operands) != 2:
        return None
    a, c = op.operands
    if a is i and c not in inside:
        return IndexForm(sign=1 if op.prim == "add" else -1, offset=c)
    if op.prim == "add" and c is i and a not in inside:
        return IndexForm(offset=a)
    return None
