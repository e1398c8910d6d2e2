"""Passes driven by which arrays provably have one shape. IR types carry the rank, not the
shape, so a walk gives each array value a *shape class*: the set of arrays whose broadcast it
is shaped as. ``x``'s class is ``{x}``; ``exp(x)`` and ``x * 2.0`` are ``{x}`` too; ``a * b``
is ``{a, b}`` (numpy's broadcasting is associative and commutative, so ``(a * b) * a`` is
``{a, b}`` as well); ``sum_to(g, like)``, ``broadcast_like(g, like)`` and the other ops of
the record's ``shaped_as`` are their operand's class, and so is ``full(x.shape[0], ...)``
(``np.zeros_like(x)``).
Two arrays of one class have one shape, whatever the arguments are; an array of any other
origin (an argument, a reshape, a loop's carried value, a reduction) is a class of its own.

With that, the gradient code loses what a person would not write (what a reviewer flagged in the generated code):
- ``sum_to(g, like)`` where ``g`` is of ``like``'s class is ``g``;
- ``broadcast_like(c, like) * y`` with ``c`` a number and ``like``'s class within ``y``'s is
  ``c * y`` (every element of the broadcast is ``c``, and the result is ``y``-shaped), and
  ``1.0 * y`` is ``y``;
  where a result becomes its operand, the two are one buffer: only where neither is written in
  place and the caller cannot hold both (``_Facts.may_become``);
- ``copy(v)`` is ``v`` where neither is written in place (``_Facts.may_become`` again);
- an operand read only for its shape (``size``, ``zeros_like``, the ``like`` of ``sum_to``)
  is the earliest array of its class and type that is never written, so an array computed
  only for its shape (the loss before ``np.sum``) is not computed at all.

Example:
    simplify_broadcasts(fn); take_shapes_early(fn); remove_dead_code(fn)
"""
from .core import walk_ops
from .memory import Buffers
from .primitives import PRIMITIVES
from .types import F64

_ARITHMETIC = ("add", "sub", "mul", "div")


def shape_classes(fn):
    """{array value: frozenset of the arrays whose broadcast it is shaped as}; a value not in
    the dict (a block argument, say) is a class of its own."""
    classes = {}
    for op in walk_ops(fn.body):
        if len(op.results) == 1 and op.results[0].type.is_array:
            classes[op.results[0]] = _class_of(op, classes)
    return classes


def class_of(v, classes):
    """The shape class of array ``v``."""
    return classes.get(v) or frozenset((v,))


def _class_of(op, classes):
    record = PRIMITIVES[op.prim]
    like = _shaped_like(op)
    if like is not None:
        return class_of(like, classes)
    if record.elementwise:
        return frozenset().union(*(class_of(v, classes) for v in op.operands if v.type.is_array))
    k = record.shaped_as(op)        # sum_to, broadcast_like, cumsum, a write's new version, ...
    return class_of(op.operands[k], classes) if k is not None else frozenset(op.results)


def _shaped_like(op):
    """``x`` where ``op`` is ``full(x.shape[0], ..., x.shape[n - 1])`` (or ``empty``) of an n-d
    ``x`` (what ``np.zeros_like(x)`` becomes): an array of ``x``'s shape."""
    if op.prim not in ("full", "empty") or not op.operands:
        return None
    sizes = [v.owner for v in op.operands]
    if any(o is None or o.prim != "shape" for o in sizes):
        return None
    x = sizes[0].operands[0]
    if x.type.ndim != len(sizes) or any(o.operands[0] is not x or o.attrs["axis"] != k for k, o in enumerate(sizes)):
        return None
    return x


def simplify_broadcasts(fn):
    """Drop the no-op ``sum_to``s and the broadcasts of a number into arithmetic (see above)."""
    facts = _Facts(fn)
    _simplify_block(fn.body, {}, facts)
    return fn


class _Facts:
    """What the rewrites read: the shape classes, the buffers, what the function returns."""

    def __init__(self, fn):
        self.classes, self.buffers = shape_classes(fn), Buffers(fn)
        self.returned = [v for v in fn.body.yielded if v.type.is_array]

    def same_class(self, a, b):
        return class_of(a, self.classes) == class_of(b, self.classes)

    def may_become(self, res, v):
        """Whether ``res`` may be ``v`` itself (one buffer): neither is ever written in place,
        and where the caller gets ``res`` back, ``v`` lives only in arrays this function made
        and returns nowhere else (the caller never holds two names for one buffer, nor its own
        argument)."""
        b = self.buffers
        if not (b.never_written(v) and b.never_written(res)):
            return False
        if not any(b.of(res) & b.of(u) for u in self.returned):
            return True
        roots = b.of(v)
        return not (roots & b.params) and not any(roots & b.of(u) for u in self.returned if u is not res)


def _simplify_block(block, subst, facts):
    kept = []
    for op in block.ops:
        op.operands = [subst.get(v, v) for v in op.operands]
        for r in op.regions:
            _simplify_block(r, subst, facts)
        same = _simplified(op, facts)
        if same is None:
            kept.append(op)
        else:
            subst[op.results[0]] = same
    block.ops = kept


def _simplified(op, facts):
    """The value ``op``'s result is, where ``op`` can go; None otherwise (``op`` may be
    rewritten in place: ``broadcast_like(c, like) * y`` becomes ``c * y``)."""
    res = op.results[0] if len(op.results) == 1 else None
    if op.prim == "sum_to":
        g, like = op.operands
        if g.type == res.type and facts.same_class(g, like) and facts.may_become(res, g):
            return g
        return None
    if op.prim == "copy":               # a copy nobody writes, of an array nobody writes
        v = op.operands[0]
        return v if v.type == res.type and facts.may_become(res, v) else None
    if op.prim not in _ARITHMETIC or res is None or not res.type.is_array:
        return None
    for k in (0, 1):
        b, y = op.operands[k], op.operands[1 - k]
        c = _broadcast_number(b)
        if c is not None and y.type == res.type and \
                class_of(b, facts.classes) <= class_of(y, facts.classes):
            op.operands[k] = c
            if op.prim == "mul" and _is_one(c) and facts.may_become(res, y):
                return y
            return None
    return None


def _broadcast_number(v):
    """``c`` where ``v`` is ``broadcast_like(c, like)`` of a float ``c`` along no axis."""
    op = v.owner
    if op is None or op.prim != "broadcast_like" or op.attrs.get("axis") is not None:
        return None
    c = op.operands[0]
    return c if c.type is F64 else None


def _is_one(v):
    op = v.owner
    return op is not None and op.prim == "const" and type(op.attrs["value"]) is float and op.attrs["value"] == 1.0


def take_shapes_early(fn):
    """An operand read only for its shape becomes the earliest array of its shape class and
    type that is never written in place (see above), so what was computed only for its shape
    is left for dead-code removal."""
    classes, buffers = shape_classes(fn), Buffers(fn)
    earliest = {}
    for p in fn.params:
        _offer(p, earliest, classes, buffers)
    _take_block(fn.body, earliest, classes, buffers)
    return fn


def _take_block(block, earliest, classes, buffers):
    for op in block.ops:
        k = PRIMITIVES[op.prim].shape_operand
        if k is not None and op.operands[k].type.is_array:
            v = op.operands[k]
            op.operands[k] = earliest.get((class_of(v, classes), v.type), v)
        for r in op.regions:
            inner = dict(earliest)          # what a region defines is not seen after it
            for a in r.args:
                _offer(a, inner, classes, buffers)
            _take_block(r, inner, classes, buffers)
        for r in op.results:
            _offer(r, earliest, classes, buffers)


def _offer(v, earliest, classes, buffers):
    # a tape item (memory of unknown origin) counts as never written where no write here may
    # reach unknown memory: the reverse sweep reads its shape instead of recomputing an array
    if v.type.is_array and not (buffers.of(v) & buffers.written):
        earliest.setdefault((class_of(v, classes), v.type), v)
