"""Bounds checks of an innermost ``for`` loop made once, before the loop.

An element access ``x[i + c, j]`` in a loop over ``i`` touches indices that move linearly
with ``i``, so they are all in bounds exactly when they are at the first and the last
iteration. The llvm backend then emits the loop twice: a version without the per-element
checks, taken when every such access is in bounds throughout, and the checked version
otherwise (which raises IndexError at the right iteration, as before). Without checks
inside, LLVM can vectorise the loop.

Example:
    accesses = checkable_accesses(for_op)      # [(op, array, [IndexForm, ...]), ...]
    outs = versioned_loop(ctx, accesses, start, stop, step, inits, iteration)
"""
from dataclasses import dataclass

from llvmlite import ir

from ...ir.core import Value
from ...ir.primitives import PRIMITIVES
from .arrays import shape_values
from .loops import counted_loop, range_len
from .types import BIT, INT64


@dataclass
class IndexForm:
    """An index as ``invariant`` (a loop-invariant value), or ``loop_var + Σ sign * offset``
    over ``terms`` ((sign, loop-invariant value) pairs): ``i``, ``i + 1``, and the ``1 + k - 1``
    of a reversed range's index (ad/reverse.py counts ``k`` down and reads ``i = 1 + k``)."""
    invariant: Value = None
    terms: tuple = ()


def checkable_accesses(for_op):
    """[(access op, the array value outside the loop, [IndexForm per axis])] for the element
    accesses of ``for_op``'s body that can be checked before the loop; [] when the body has
    nested regions (only innermost loops are versioned, so code grows at most twofold)."""
    body = for_op.body
    if any(op.regions for op in body.ops):
        return []
    inside = set(body.args) | {r for op in body.ops for r in op.results}
    outer = _arrays_seen_from_outside(for_op, body)
    i = for_op.index
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
    for arg, y, init in zip(for_op.carried, body.yielded, for_op.inits):
        if not arg.type.is_array:
            continue
        chain, v = [y], y
        # an element write keeps the shape of the array it writes
        while v is not arg and v.owner is not None and PRIMITIVES[v.owner.prim].index_start and \
                PRIMITIVES[v.owner.prim].writes == 0:
            v = v.owner.operands[0]
            chain.append(v)
        if v is arg:
            outer.update((c, init) for c in chain)
    return outer


def _form(v, i, inside, depth=4):
    if v not in inside:
        return IndexForm(invariant=v)
    if v is i:
        return IndexForm()
    op = v.owner
    if depth == 0 or op is None or op.prim not in ("add", "sub") or len(op.operands) != 2:
        return None
    a, c = op.operands
    sign = 1 if op.prim == "add" else -1
    if c not in inside:                          # (loop_var + ...) ± c
        inner = _form(a, i, inside, depth - 1)
        if inner is not None and inner.invariant is None:
            return IndexForm(terms=inner.terms + ((sign, c),))
    if op.prim == "add" and a not in inside:     # a + (loop_var + ...)
        inner = _form(c, i, inside, depth - 1)
        if inner is not None and inner.invariant is None:
            return IndexForm(terms=inner.terms + ((1, a),))
    return None


def versioned_loop(ctx, accesses, start, stop, step, inits, iteration):
    """``for i in range(start, stop, step)`` (loops.counted_loop) emitted twice: unchecked where
    every access of ``accesses`` is in bounds throughout, else checked; returns the carried
    values after the loop."""
    b = ctx.b
    fast, slow, join = (ctx.func.append_basic_block(f"for.{k}") for k in ("unchecked", "checked", "join"))
    b.cbranch(_in_bounds_throughout(ctx, accesses, start, stop, step), fast, slow)
    versions = []
    for bb, trusted in ((fast, {a[0] for a in accesses}), (slow, set())):
        b.position_at_end(bb)
        ctx.trusted = trusted
        versions.append((counted_loop(ctx, start, stop, step, inits, iteration), b.block))
        b.branch(join)
    ctx.trusted = set()
    b.position_at_end(join)
    outs = []
    for k, v in enumerate(inits):
        phi = b.phi(v.type)
        for values, end in versions:
            phi.add_incoming(values[k], end)
        outs.append(phi)
    return outs


def _in_bounds_throughout(ctx, accesses, start, stop, step):
    """Whether every access of ``accesses`` stays inside its array, with no negative index,
    from the first iteration to the last."""
    b = ctx.b
    zero = ir.Constant(INT64, 0)
    first = start
    last = b.add(start, b.mul(b.sub(range_len(ctx, start, stop, step), ir.Constant(INT64, 1)), step))
    ok = ir.Constant(BIT, 1)
    for _, arr, forms in accesses:
        shape = shape_values(ctx, ctx.v(arr), arr.type.ndim)
        for form, n in zip(forms, shape):
            if form.invariant is not None:
                v = ctx.v(form.invariant)
                ends = [b.zext(v, INT64) if v.type is BIT else v]
            else:
                ends = [first, last]
                for sign, term in form.terms:
                    t = ctx.v(term)
                    ends = [b.add(e, t) if sign > 0 else b.sub(e, t) for e in ends]
            for e in ends:
                ok = b.and_(ok, b.and_(b.icmp_signed(">=", e, zero), b.icmp_signed("<", e, n)))
    return ok
