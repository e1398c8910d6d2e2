"""Passes about in-place writes in derivative code: what the reverse sweep's bookkeeping leaves
that a person would not write.

The adjoint of ``du[1:] = v`` reads ``g[1:]`` (a copy, since ``g[1:]`` is zeroed next) and
zeroes it; when ``g`` is then read only at ``g[0]``, the zeroing and the copy are waste (two
passes over memory each, on arrays of 10^5 elements). These passes let dead-code removal see
that:

- ``read_past_writes``: ``x'[i]`` where ``x' = x`` with writes that provably leave element
  ``i`` alone (``memory.disjoint``) becomes ``x[i]``, read just before those writes (the same
  element either way), so their results may become unused. Dead-code removal then drops a
  write where no later op reads what it wrote (``Buffers.read_later``: a read of elements it
  leaves alone, ``g[:-1]`` after ``g[-1] = 0.0``, does not count).
- ``write_instead_of_zeros``: ``z = np.zeros(n); z[1:] = v`` (or ``+= v``, the adjoint's
  accumulation into zeros) is ``z = np.empty(n); z[1:] = v; z[:1] = 0.0``: the zeros go only
  where the first write leaves them, and where the next write overwrites exactly those
  (``du[0] = a; du[1:] = b``) not at all; only where what is left for zeros has a constant
  size (``z[:1]``, ``z[-2:]``). A memset of the whole array saved, and a read of it.
- ``move_copies``: ``c = copy(v)`` is ``v`` itself where nothing runs after the copy that reads or
  writes ``v``'s buffer, and the buffer is this function's own (not an argument, a tape item or
  the caller's): the copy's writes may then go into ``v``'s memory, which nobody sees again.

Example:
    read_past_writes(fn); remove_dead_code(fn); move_copies(fn)
"""
from .core import Block, Builder, walk_blocks, walk_op, walk_ops
from .memory import Buffers, coordinate, disjoint, extents, int_constant, read_operands, within
from .primitives import PRIMITIVES
from .types import F32, F64

_ZEROS = ("full", "zeros_like")
# the first write into fresh zeros, as the assignment that leaves the same elements: += into
# a zero is the value itself (but for -0.0, whose sum with 0.0 is 0.0: a sign of zero is the
# one thing this changes)
_ASSIGNMENT = {"setitem": "setitem", "index_add": "setitem", "setslice": "setslice", "slice_add": "setslice"}


def read_past_writes(fn):
    """Each ``index`` of a version of an array that the writes making that version leave alone
    reads the earliest such version, just before those writes (see above): read before the
    writes, it is no stale use of an old version (ad/mutation.py), so the derivative may be
    differentiated again. Derivative code only (a primal's IR is what the user wrote); only
    where no other write into the array, nor an effect, comes between."""
    if not fn.derivative:
        return fn
    buffers = Buffers(fn)
    for block in walk_blocks(fn.body):
        at = 0
        while at < len(block.ops):
            at = _hoist_read(block, at, buffers) + 1
    return fn


def _hoist_read(block, at, buffers):
    """Move the ``index`` at ``block.ops[at]`` above the writes it reads past; returns the
    position of the op after which to go on."""
    op = block.ops[at]
    if op.prim != "index":
        return at
    position = {o: k for k, o in enumerate(block.ops[:at])}
    chain, v = [], op.operands[0]
    while v.owner in position and PRIMITIVES[v.owner.prim].writes == 0 and disjoint(op, v.owner):
        chain.append(v.owner)
        v = v.owner.operands[0]
    if not chain:
        return at
    start = position[chain[-1]]
    roots = buffers.of(v)
    for o in block.ops[start:at]:
        for inner in walk_op(o):
            prim = PRIMITIVES[inner.prim]
            if inner in chain:
                continue
            if prim.effect and inner.prim not in ("assert", "yield", "return") or \
                    prim.writes is not None and buffers.of(inner.operands[prim.writes]) & roots:
                return at
    later = {r for o in block.ops[start:at] for inner in walk_op(o) for r in inner.results}
    if any(i in later and int_constant(i) is None for i in op.operands[1:]):
        return at               # an index computed between the writes and the read
    with Builder(Block(), op.loc) as b:
        indices = [b.const(int_constant(i)) if i in later else i for i in op.operands[1:]]
        head = b.block.ops
    op.operands = [v] + indices
    del block.ops[at]
    block.ops[start:start] = head + [op]
    return at


def move_copies(fn):
    """``copy(v)`` becomes ``v`` where no op after it reads or writes ``v``'s buffer and the buffer is
    the function's own (see above). Derivative code only (``read_past_writes``)."""
    if not fn.derivative:
        return fn
    while True:                 # one at a time: each changes which buffers the others' values live in
        buffers = Buffers(fn)
        op = next((o for o in walk_ops(fn.body) if o.prim == "copy" and o.operands[0].type == o.results[0].type
                   and (buffers.dead_after(o, o.operands[0]) or _carried_dead_after(fn, o))), None)
        if op is None:
            return fn
        _replace(fn.body, {op.results[0]: op.operands[0]})


def _carried_dead_after(fn, copy):
    """Whether ``copy(v)`` in the body of a ``for`` loop may be ``v`` where ``v`` is (a view or
    version of) a carried value ``a`` the copy's own writes then replace: the accumulator of a
    reverse sweep, ``da2 = sum_to(da, x); da3 = da2.copy(); da3[1:] += g; yield da3``. Root sets
    cannot say so (``a``'s include the copy's, through the yield), so this follows values: in
    this iteration nothing after the copy uses ``a``'s family (what is a view or version of
    it), the copy's family is yielded at ``a``'s slot only, and ``a``'s initial value is an
    array made just before the loop that nothing uses but the loop: each iteration's ``a`` is
    then memory nobody else sees."""
    ops = list(walk_ops(fn.body))
    loop = next((o for o in ops if o.prim == "for" and copy in o.body.ops), None)
    if loop is None:
        return False
    body = loop.body
    a = _source(copy.operands[0])
    if a not in body.args[1:]:
        return False
    j = body.args.index(a) - 1
    inside = list(walk_ops(body))
    family, chain = _family(a, inside), _family(copy.results[0], inside)
    after = body.ops[body.ops.index(copy) + 1:]
    if any(v in family for o in after for inner in walk_op(o) for v in inner.operands):
        return False
    if [k for k, v in enumerate(body.yielded) if v in chain] != [j]:
        return False
    if any(o.prim == "undo_save" and o.operands[0] in family | chain for o in ops):
        return False            # an undo_rewind writes it back, naming no array
    return _made_for(loop, j, fn, ops)


def _made_for(loop, j, fn, ops):
    """Whether the loop's initial value ``j`` is (a view or version of) an array computed in
    the loop's block, for the loop alone: every use of its family comes before the loop, or is
    that initial value."""
    init = loop.inits[j]
    top = _source(init)
    if top.owner is None or not PRIMITIVES[top.owner.prim].makes_new_array(top.owner):
        return False
    block = next((b for b in walk_blocks(fn.body) if top.owner in b.ops), None)
    if block is None or loop not in block.ops:
        return False
    before = set()
    for o in block.ops[:block.ops.index(loop)]:
        before.update(walk_op(o))
    family = _family(top, ops)
    if any(o.prim == "undo_save" and o.operands[0] in family for o in ops):
        return False
    for o in ops:
        for k, v in enumerate(o.operands):
            if v in family and o not in before and not (o is loop and k == 3 + j):
                return False
    return True


def _source(v):
    """The array ``v`` is a view or version of (through slices, writes, sum_to)."""
    while v.owner is not None and _passes_on(v.owner):
        v = v.owner.operands[0]
    return v


def _passes_on(op):
    prim = PRIMITIVES[op.prim]
    return prim.view or prim.writes == 0 or op.prim == "sum_to"


def _family(v, ops):
    """``v`` and the values made from it by views, writes and sum_to, among ``ops`` (every op,
    nested ones included, in program order)."""
    family = {v}
    for o in ops:
        if o.results and _passes_on(o) and o.operands[0] in family:
            family.update(o.results)
    return family


def _replace(block, subst):
    kept = []
    for op in block.ops:
        op.operands = [subst.get(v, v) for v in op.operands]
        for r in op.regions:
            _replace(r, subst)
        if not (op.prim == "copy" and op.results[0] in subst):
            kept.append(op)
    block.ops = kept


def write_instead_of_zeros(fn):
    """Fresh zeros whose first toucher is a write of the whole fresh array (see above) become
    ``empty`` with the zeros written only where that write leaves them."""
    buffers = Buffers(fn)
    for block in list(walk_blocks(fn.body)):
        at = 0
        while at < len(block.ops):
            at = _rewrite_zeros(block, at, buffers) + 1
    return fn


def _rewrite_zeros(block, at, buffers):
    """Rewrite the zeros at ``block.ops[at]`` where it qualifies; returns the position of the
    last op that took its place."""
    zeros = block.ops[at]
    if zeros.prim not in _ZEROS or not zeros.results[0].type.is_array:
        return at
    z = zeros.results[0]
    if z.type.dtype not in (F64, F32) or zeros.prim == "full" and zeros.attrs.get("value") != 0:
        return at
    roots = buffers.of(z)
    first = _next_toucher(block, at, roots, buffers)
    if first is None or block.ops[first].prim not in _ASSIGNMENT or block.ops[first].operands[0] is not z:
        return at
    write = block.ops[first]
    gaps = _complement(write)
    if gaps is None or any(buffers.of(v) & roots for v in read_operands(write)):
        return at
    then = _next_toucher(block, first, roots, buffers)
    if then is not None and block.ops[then].operands[0] is write.results[0]:
        gaps = [g for g in gaps if not _covers(block.ops[then], g)]     # overwritten before any read
    if not all(_small(g) for g in gaps):
        return at               # zeros written into most of the array anyway: np.zeros reads better
    with Builder(Block(), zeros.loc) as b:
        sizes = zeros.operands if zeros.prim == "full" else \
            [b.emit("shape", [zeros.operands[0]], {"axis": k}) for k in range(z.type.ndim)]
        fresh = b.emit("empty", sizes, {"dtype": z.type.dtype}, name=z.name)
        head = b.block.ops
    with Builder(Block(), write.loc) as b:
        last = b.emit(_ASSIGNMENT[write.prim], [fresh] + write.operands[1:],
                      {k: v for k, v in write.attrs.items() if k == "spec"}, name=z.name)
        for spec, bounds in gaps:
            bounds = [b.const(x) if isinstance(x, int) else x for x in bounds]
            last = b.emit("setslice", [last, b.const(0.0, F64)] + bounds, {"spec": spec}, name=z.name)
        tail = b.block.ops
    for op in block.ops[first + 1:]:
        _rename(op, write.results[0], last)
    block.ops[first:first + 1] = tail
    block.ops[at:at + 1] = head
    return at + len(head) - 1


def _next_toucher(block, after, roots, buffers):
    """The position of the first op after ``block.ops[after]`` that (or whose nested ops) reads or
    writes a buffer of ``roots``; None where none does. Reading only the shape is not reading."""
    for k in range(after + 1, len(block.ops)):
        for o in walk_op(block.ops[k]):
            prim = PRIMITIVES[o.prim]
            shape_only = o.operands[prim.shape_operand] if prim.shape_operand is not None else None
            if any(buffers.of(v) & roots for v in read_operands(o) if v is not shape_only):
                return k
            if prim.writes is not None and buffers.of(o.operands[prim.writes]) & roots:
                return k
    return None


def _complement(write):
    """The basic slices of the written array that ``write`` leaves alone, as (spec, bounds)
    pairs (a bound a Value, or an int to make a constant of), along its first axis; None where they are not that simple. ``x[a:b]`` leaves
    ``x[:a]`` and ``x[b:]`` (for any a and b, numpy's clamping and negative bounds included:
    the three cover the axis); ``x[i]`` of a 1-d array leaves ``x[:i]`` and ``x[i + 1:]`` for a
    constant i (but -1, whose ``x[i + 1:]`` would be all of x)."""
    if write.prim in ("setitem", "index_add"):
        (i,) = write.operands[PRIMITIVES[write.prim].index_start:] if write.operands[0].type.ndim == 1 else (None,)
        k = None if i is None else int_constant(i)
        if k is None:
            return None
        gaps = [] if k == 0 else [((("s", False, True, False),), [k])]
        if k != -1:
            gaps.append(((("s", True, False, False),), [k + 1]))
        return gaps
    spec = write.attrs["spec"]
    if len(spec) != 1 or spec[0][0] != "s" or spec[0][3]:
        return None
    _, has_start, has_stop, _ = spec[0]
    bounds = list(write.operands[2:])
    gaps = []
    if has_start:
        gaps.append(((("s", False, True, False),), [bounds[0]]))
    if has_stop:
        gaps.append(((("s", True, False, False),), [bounds[-1]]))
    return gaps


def _small(gap):
    """Whether the slice ``gap`` has a constant number of elements along its axis: ``x[:k]`` for
    k >= 0, ``x[k:]`` for k < 0."""
    spec, (bound,) = gap
    k = bound if isinstance(bound, int) else int_constant(bound)
    return k is not None and (k < 0 if spec[0][1] else k >= 0)


def _covers(write, gap):
    """Whether ``write`` (an assignment, not ``+=``) writes every element of the slice ``gap``
    along the first axis (its bounds the same values, or constants that contain it)."""
    spec, bounds = gap
    if write.prim == "setslice" and write.attrs["spec"] == spec and all(
            a is b or int_constant(a) is not None and int_constant(a) == (b if isinstance(b, int) else int_constant(b))
            for a, b in zip(write.operands[2:], bounds)):
        return True
    whole = write.prim == "setitem" and write.operands[0].type.ndim == 1 or \
        write.prim == "setslice" and len(write.attrs["spec"]) == 1
    (k,) = [b if isinstance(b, int) else int_constant(b) for b in bounds]
    if not whole or k is None:
        return False
    (covered,) = extents(write)[:1] or (None,)
    wanted = (coordinate(k), ("end", 0)) if spec[0][1] else (("start", 0), coordinate(k))
    return covered is not None and within(wanted, covered)


def _rename(op, old, new):
    op.operands = [new if v is old else v for v in op.operands]
    for r in op.regions:
        for o in r.ops:
            _rename(o, old, new)
