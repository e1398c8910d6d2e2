"""IR passes: constant folding, algebraic simplification, common subexpressions, dead code.

Each pass rewrites a Function in place and returns it; ``optimize`` runs them in order.
They keep Python's semantics: a rewrite is made only where it holds for every IEEE double,
NaN, the infinities and -0.0 included (``x * 0.0`` stays, as NaN * 0 is NaN; ``x + 0.0``
stays, as -0.0 + 0.0 is 0.0), and for every 64-bit int; no reassociation. Every observable
effect is kept: in-place writes into memory someone may read (ir/memory.py), raised errors,
the order of effects. The facts about each op come from its record in ir/primitives.py.

Example:
    optimize(fn)       # then str(fn) shows the simpler IR
"""
import collections
import math

from .core import Op, nested_ops, walk_blocks, walk_ops as _walk
from .memory import Buffers, read_operands
from .primitives import PRIMITIVES
from .shape_passes import simplify_broadcasts, take_shapes_early
from .write_passes import move_copies, read_past_writes, write_instead_of_zeros

_I64_RANGE = (-(1 << 63), (1 << 63) - 1)
_FOLD = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b if b else None, "mod": lambda a, b: a % b if b else None,
    "div": lambda a, b: a / b if b else None, "neg": lambda a: -a,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "not": lambda a: not a,
    "and": lambda a, b: a and b, "or": lambda a, b: a or b, "min": min, "max": max, "abs": abs,
    "to_f64": float, "to_i64": int, "to_bool": bool, "select": lambda c, a, b: a if c else b,
}


def _const(v):
    op = v.owner
    ok = op is not None and op.prim == "const" and not hasattr(op.attrs["value"], "shape")
    return ok, (op.attrs["value"] if ok else None)


def _is(v, value):
    ok, c = _const(v)
    return ok and type(c) is type(value) and c == value


def _adjoint_zero(v):
    """The zero an adjoint starts from (ad/reverse.py marks it)."""
    return v.owner is not None and v.owner.attrs.get("adjoint_zero", False)


def fold_constants(fn):
    """Evaluate ops whose operands are all constants, and drop identities that hold exactly
    (int x + 0, x - 0, x * 1, int x // 1, x ** 1, ``a if True else b``)."""
    subst = {}
    _fold_block(fn.body, subst)
    return fn


def _fold_block(block, subst):
    kept = []
    for op in block.ops:
        op.operands = [subst.get(v, v) for v in op.operands]
        for r in op.regions:
            _fold_block(r, subst)
        repl = _fold(op)
        if repl is None:
            kept.append(op)
            continue
        if isinstance(repl, Op):
            kept.append(repl)
            repl = repl.results[0]
        subst[op.results[0]] = repl
    block.ops = kept


def _fold(op):
    """A Value or a new const Op that replaces ``op``'s single result, or None."""
    if op.regions or len(op.results) != 1 or op.prim not in _FOLD or not hasattr(op.results[0].type, "py"):
        return None
    res = op.results[0]
    consts = [_const(v) for v in op.operands]
    if all(ok for ok, _ in consts):
        try:
            value = _FOLD[op.prim](*[c for _, c in consts])
        except (ArithmeticError, ValueError, OverflowError):
            return None
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return None
        value = res.type.py(value)
        if isinstance(value, int) and not _I64_RANGE[0] <= value <= _I64_RANGE[1]:
            return None         # the compiled code raises OverflowError at run time
        return Op("const", [], [res.type], {"value": value, "type": res.type}, loc=op.loc, names=[res.name])
    if op.prim == "select" and consts[0][0]:        # a branch decided when the code was made
        chosen = op.operands[1] if consts[0][1] else op.operands[2]
        return chosen if chosen.type == res.type else None
    a = op.operands[0]
    b = op.operands[1] if len(op.operands) > 1 else None
    if a.type != res.type or (b is not None and b.type != res.type):
        return None
    zero, one = res.type.py(0), res.type.py(1)
    exact_int = not isinstance(zero, float)
    # x + 0.0 is not x at x = -0.0, and x // 1.0 is floor(x): those hold for ints only;
    # x - 0.0, x * 1.0 and x ** 1.0 are x for every double (-0.0, the infinities, NaN too)
    if op.prim == "add":
        if _is(b, zero) and (exact_int or _adjoint_zero(b)):
            return a
        if _is(a, zero) and (exact_int or _adjoint_zero(a)):
            return b
    if op.prim == "sub" and _is(b, zero):
        return a
    if op.prim == "mul":
        if _is(b, one):
            return a
        if _is(a, one):
            return b
    if op.prim == "floordiv" and exact_int and _is(b, one):
        return a
    if op.prim == "pow" and _is(b, one):
        return a
    return None


def eliminate_common_subexpressions(fn):
    """Reuse the result of an identical pure op computed earlier in the same or an enclosing block.
    Allocations are never merged (either may be written in place later), nor ops making or
    reading arrays that are."""
    _cse_block(fn.body, {}, {}, Buffers(fn))
    return fn


def _mergeable(op, buffers):
    prim = PRIMITIVES[op.prim]
    if op.regions or prim.effect or prim.allocates or prim.writes is not None or op.prim in ("tape_get", "undo_mark") \
            or len(op.results) != 1:
        return False
    # an array written in place is not the same value before and after the write (a read of it
    # through a view, t = a.T, is not either)
    # (an operand read only for its shape does not change)
    read = [v for k, v in enumerate(op.operands) if k != prim.shape_operand]
    return all(buffers.never_written(v) for v in read + op.results if v.type.is_array)


def _cse_block(block, seen, subst, buffers):
    seen = dict(seen)
    kept = []
    for op in block.ops:
        op.operands = [subst.get(v, v) for v in op.operands]
        for r in op.regions:
            _cse_block(r, seen, subst, buffers)
        if not _mergeable(op, buffers):
            kept.append(op)
            continue
        key = (op.prim, tuple(id(v) for v in op.operands),
               tuple(sorted((k, id(v) if hasattr(v, "shape") else repr(v)) for k, v in op.attrs.items())))
        prev = seen.get(key)
        if prev is not None:
            subst[op.results[0]] = prev
            if op.results[0].name not in (None, prev.name):
                prev.name = None        # it stands for two variables now: name neither
            continue
        seen[key] = op.results[0]
        kept.append(op)
    block.ops = kept


def eliminate_dead_code(fn, keep_errors=True):
    """Remove ops whose results are never used and that have no effect (loops whose results are
    unused and whose bodies do nothing observable go too). A write into an argument array, or
    into a buffer some later op reads (``Buffers.read_later``), is an effect; so is an error an op may raise, unless not
    ``keep_errors`` (derivative code, whose reverse sweep reads what the forward sweep did;
    writes keep their errors there too).
    Returns whether anything was removed."""
    removed = False
    again = True
    while again:    # again only where a removed op read a written buffer: a write may be unobservable now
        uses = collections.Counter()
        _count_uses(fn.body, uses)
        buffers = Buffers(fn)
        dropped = []
        _dce_block(fn.body, uses, buffers, keep_errors, dropped)
        removed |= bool(dropped)
        again = any(buffers.of(v) & buffers.written for op in dropped for v in read_operands(op))
    return removed


def _collect_uses(block, used):
    for op in block.ops:
        used.update(op.operands)
        for r in op.regions:
            _collect_uses(r, used)


def _count_uses(block, uses):
    for op in block.ops:
        uses.update(op.operands)
        for r in op.regions:
            _count_uses(r, uses)


def _has_effects(op, buffers, keep_errors):
    prim = PRIMITIVES[op.prim]
    if prim.effect and op.prim != "yield" or prim.writes is not None and buffers.read_later(op):
        return True
    # an out-of-bounds write is an error even where nothing reads the array (but a write that a
    # reverse sweep recomputes ran once already: it cannot fail)
    if (keep_errors or prim.writes is not None) and prim.raises(op) and not op.attrs.get("replay"):
        return True
    return any(_has_effects(o, buffers, keep_errors) for r in op.regions for o in r.ops)


def _dce_block(block, uses, buffers, keep_errors, dropped):
    """Remove the dead ops of ``block``, last to first, so that the ops only a removed op used
    go in the same sweep (``uses`` counts the uses left); each removed op, and the ops nested in
    it, are appended to ``dropped``."""
    kept = []
    for op in reversed(block.ops):
        # (a loop left with no carried value, drop_dead_carried's doing, is dead without results)
        unused = not any(uses[r] for r in op.results) if op.results else op.prim in ("for", "while")
        if unused and not _has_effects(op, buffers, keep_errors):
            dropped.append(op)
            uses.subtract(op.operands)
            for o in nested_ops(op):
                dropped.append(o)
                uses.subtract(o.operands)
            continue
        for r in op.regions:
            _dce_block(r, uses, buffers, keep_errors, dropped)
        kept.append(op)
    kept.reverse()
    block.ops = kept


def prune_tapes(fn):
    """Store on a tape only what the reverse sweep reads back: items no ``tape_get`` uses are
    dropped from every ``tape_put``; a tape nobody reads goes away entirely. Returns whether
    anything was dropped."""
    changed = False
    ops = list(_walk(fn.body))
    used = set()
    for op in ops:
        used.update(op.operands)
    for op in ops:
        if op.prim != "tape_new":
            continue
        tape = op.results[0]
        gets = [o for o in ops if o.prim == "tape_get" and o.operands[0] is tape]
        keep = [j for j in range(len(op.attrs["items"])) if any(g.results[j] in used for g in gets)]
        if len(keep) == len(op.attrs["items"]):
            continue
        changed = True
        op.attrs["items"] = [op.attrs["items"][j] for j in keep]
        tape.type = type(tape.type)(op.attrs["items"])
        for o in ops:
            if o.prim == "tape_put" and o.operands[0] is tape:
                o.operands = o.operands[:2] + [o.operands[2 + j] for j in keep]
                if not keep:
                    o.attrs["dead"] = True
            elif o.prim == "tape_get" and o.operands[0] is tape:
                o.results = [o.results[j] for j in keep]
    _drop_dead_puts(fn.body)
    return changed


def remove_dead_code(fn, keep_errors=True):
    """Dead-code removal, tape pruning and dead carried values, each run until none finds
    anything more: removing the last reader of a tape item lets the item go, and with it,
    maybe, the loop that stored it."""
    while eliminate_dead_code(fn, keep_errors) | prune_tapes(fn) | drop_dead_carried(fn, keep_errors):
        pass
    return fn


def drop_dead_carried(fn, keep_errors=True):
    """A loop's carried value that nothing after the loop reads, and that its body uses only to
    compute its own next value, goes with its initial value, block argument, yield and result
    (the gradient accumulated beside a Hessian-vector product, which returns only the
    tangents). Not where what depends on it in the body has an effect, or (with
    ``keep_errors``) may raise. Returns whether any went."""
    used = set()
    _collect_uses(fn.body, used)
    candidates = [op for op in _walk(fn.body) if op.prim in ("for", "while") and
                  any(r not in used for r in op.results)]
    if not candidates:          # the common case: the buffer analysis is not needed
        return False
    buffers = Buffers(fn)
    changed = False
    for op in candidates:
        for j in reversed(range(len(op.results))):
            if op.results[j] not in used and _feeds_only_itself(op, j, buffers, keep_errors):
                _drop_slot(op, j)
                changed = True
    return changed


def _feeds_only_itself(op, j, buffers, keep_errors):
    if op.prim == "while" and _uses_any(op.test, {op.test.args[j]}):
        return False
    body = op.body
    slice_ = {op.carried[j]}            # what depends on the carried value in one iteration
    for o in body.ops[:-1]:
        if not _uses_any(o, slice_):
            continue
        if o.regions or _has_effects(o, buffers, keep_errors):
            return False
        slice_.update(o.results)
    return not any(y in slice_ for k, y in enumerate(body.yielded) if k != j)


def _uses_any(op_or_block, values):
    ops = op_or_block.ops if hasattr(op_or_block, "ops") else [op_or_block]
    for o in ops:
        if any(v in values for v in o.operands) or any(_uses_any(r, values) for r in o.regions):
            return True
    return False


def _drop_slot(op, j):
    first = op.first_init
    del op.operands[first + j]
    for blk in op.regions:
        del blk.args[j + (1 if op.prim == "for" and blk is op.body else 0)]
    del op.body.ops[-1].operands[j]
    del op.results[j]
    if "result_types" in op.attrs:
        op.attrs["result_types"] = [t for k, t in enumerate(op.attrs["result_types"]) if k != j]


def _drop_dead_puts(block):
    block.ops = [op for op in block.ops if not (op.prim == "tape_put" and op.attrs.get("dead"))
                 and not (op.prim == "tape_get" and not op.results)]
    for op in block.ops:
        for r in op.regions:
            _drop_dead_puts(r)


def run_accumulations_forward(fn):
    """Run a reverse sweep's loop forwards when its iterations only accumulate.

    The adjoint of ``for i in range(n)`` visits i = n-1, ..., 0. When every value it carries
    is either passed through unchanged or only added to (``acc + x``, ``index_add(acc, x, i)``,
    possibly inside an inner loop) and nothing else reads it, the iterations are independent
    sums and may run in increasing order: memory is then read forwards and LLVM can vectorise
    the loop. Only loops marked ``reverse_sweep`` are touched; the user's own loops keep
    Python's order of floating-point operations.
    """
    for block in walk_blocks(fn.body):
        for op in list(block.ops):
            if op.prim == "for" and op.attrs.get("reverse_sweep") and _order_free(op):
                _count_up(block, op)
    return fn


def _order_free(loop):
    body = loop.body
    if any(o.prim.startswith("undo_") for o in _walk(body)):
        return False        # it puts memory back as it was, iteration by iteration: latest first
    return all(y is a or _accumulates(a, y, body) for a, y in zip(loop.carried, body.yielded))


def _users(v, block):
    return [op for op in _walk(block) if v in op.operands]


def _accumulates(v, end, block):
    """Whether ``v``'s one chain of uses in ``block`` only adds to it and ends at ``end``."""
    while v is not end:
        users = _users(v, block)
        if len(users) != 1 or users[0].operands.count(v) != 1:
            return False
        op = users[0]
        if op.prim == "index_add" and op.operands[0] is v or op.prim in ("add", "copy"):
            v = op.results[0]
        elif op.prim == "for" and v in op.inits and op in block.ops:
            j = op.inits.index(v)
            if not _accumulates(op.carried[j], op.body.yielded[j], op.body):
                return False
            v = op.results[j]
        else:
            return False
    return True


def _count_up(block, op):
    """for k = last down to 0  →  for k = 0 to last + 1."""
    start, stop, step = op.bounds
    if not (_is(stop, -1) and _is(step, -1)):
        return
    zero, one = (Op("const", [], [start.type], {"value": c, "type": start.type}) for c in (0, 1))
    new_ops = [zero, one]
    owner = start.owner
    if owner is not None and owner.prim == "sub" and _is(owner.operands[1], 1):
        count = owner.operands[0]
    else:
        new_ops.append(Op("add", [start, one.results[0]], [start.type]))
        count = new_ops[-1].results[0]
    at = block.ops.index(op)
    block.ops[at:at] = new_ops
    op.operands[:3] = [zero.results[0], count, one.results[0]]
    op.attrs["counted_up"] = True       # its sums in another order: checkpoint= reverses it backwards


def fuse_sibling_loops(fn):
    """Run two loops over the same range as one when neither can raise and the second does not
    read the first's results: ``value_and_grad`` then walks the range once, its forward
    and reverse sweep side by side (and CSE shares what both compute, ``exp(-c * i)`` say).
    Each loop's own order of operations is kept, so results do not change."""
    for block in walk_blocks(fn.body):
        at = 0
        while at < len(block.ops):
            if not _fuse_after(block, at):
                at += 1
    return fn


def _quiet(op):
    """Neither raises nor has an effect (the ``yield`` ending a region aside)."""
    prim = PRIMITIVES[op.prim]
    return not op.regions and not prim.raises(op) and prim.writes is None and (op.prim == "yield" or not prim.effect)


def _quiet_loop(op):
    return op.prim == "for" and all(_quiet(o) for o in op.body.ops)


def _same_range(a, b):
    """Whether loops a and b visit the same indices (the reverse sweep counts to
    ``range_len(0, n, 1)`` where its loop counted to ``n``)."""
    if not all(_is(v, c) for v, c in zip(a.bounds + b.bounds, (0, None, 1, 0, None, 1)) if c is not None):
        return False
    sa, sb = a.bounds[1], b.bounds[1]
    if sa is sb:
        return True
    owner = sb.owner
    return owner is not None and owner.prim == "range_len" and owner.operands[1] is sa and \
        _is(owner.operands[0], 0) and _is(owner.operands[2], 1)


def _fuse_after(block, at):
    first = block.ops[at]
    if not _quiet_loop(first):
        return False
    results = set(first.results)
    between = []
    for k in range(at + 1, len(block.ops)):
        second = block.ops[k]
        if second.prim == "for" and _quiet_loop(second) and _same_range(first, second):
            later = _depending_on(between, results)
            reads = set(second.operands) | {v for o in _walk(second.body) for v in o.operands}
            if reads & (results | {r for o in later for r in o.results}):
                return False
            earlier = [o for o in between if o not in later]
            block.ops[at:k + 1] = earlier + [_fused(first, second)] + later
            return True
        if second.regions or PRIMITIVES[second.prim].effect:
            return False
        between.append(second)
    return False


def _depending_on(ops, values):
    out, seen = [], set(values)
    for o in ops:
        if any(v in seen for v in o.operands):
            out.append(o)
            seen.update(o.results)
    return out


def _fused(first, second):
    """One loop: the first body, then the second with its index renamed, yields side by side."""
    from .core import Block, for_op
    a, b = first.body, second.body
    body = Block([first.index] + list(first.carried) + list(second.carried))
    rename = {second.index: first.index}
    for o in b.ops:
        o.operands = [rename.get(v, v) for v in o.operands]
    body.ops = a.ops[:-1] + b.ops[:-1] + [Op("yield", a.yielded + b.yielded, [])]
    types = [r.type for r in first.results + second.results]
    fused = for_op(*first.bounds, first.inits + second.inits, body, types, first.loc)
    fused.results = first.results + second.results
    for r in fused.results:
        r.owner = fused
    return fused


PIPELINE = (
    ("fold_constants", fold_constants),
    ("eliminate_common_subexpressions", eliminate_common_subexpressions),
    ("read_past_writes", read_past_writes),
    ("remove_dead_code", remove_dead_code),
    ("move_copies", move_copies),
    ("simplify_broadcasts", simplify_broadcasts),
    ("write_instead_of_zeros", write_instead_of_zeros),
    ("take_shapes_early", take_shapes_early),
    ("remove_dead_code", remove_dead_code),
    ("run_accumulations_forward", run_accumulations_forward),
    ("fuse_sibling_loops", fuse_sibling_loops),
    ("eliminate_common_subexpressions", eliminate_common_subexpressions),
    ("remove_dead_code", remove_dead_code),
)
"""The passes ``optimize`` runs, in order, by name (translation validation checks each one)."""


def optimize(fn, after_pass=None, keep_errors=True):
    """Constant folding, CSE, dead-code removal, tape pruning, no-op broadcasts dropped
    (shape_passes.py), shapes taken early and forward-running reverse sweeps. ``after_pass(name, fn)``, when given, is called after
    each pass (translation validation runs the IR interpreter there). ``keep_errors=False``
    lets dead-code removal drop unused ops that could only raise (for derivative code)."""
    for name, run in PIPELINE:
        if run is remove_dead_code:
            run(fn, keep_errors)
        else:
            run(fn)
        if after_pass is not None:
            after_pass(name, fn)
    return fn
