"""The record of a primitive and the one table of them, ``PRIMITIVES``, with the two ways in:
``define`` (a new record; the families' modules ir/primitives.py, shape_primitives.py and
join_primitives.py call it) and ``table_entry`` (a rule keyed by primitive, in any other table).

This module imports none of the families, so each of them can import it; ir/primitives.py
imports them all, and the rest of the package reads the full table from there.

Example:
    >>> from srcgrad.ir.primitives import PRIMITIVES
    >>> PRIMITIVES["setitem"].key, PRIMITIVES["index_add"].accumulates
    ('item', True)
"""

from .types import I64

# what reverse mode does with a primitive (Primitive.adjoint)
ADJOINT_KINDS = (
    "rule",          # ad/tables.ADJOINT has its entry: a rule, or None where there is no derivative
    "structural",    # the engines (regions: ad/reverse.py, ad/forward.py) or ad/tables.ARRAY_ADJOINT
    "refused",       # differentiable, but reverse mode has no rule yet: ad/second_order.NO_SECOND_ADJOINT says why
)
# how a write addresses the elements it changes (Primitive.key)
WRITE_KEYS = ("item", "slice", "mask", "indices")


class Primitive:
    """One op kind and every fact about it that a pass or a backend needs.

    - ``name``, ``result_type(operand_types, attrs)`` (the type rule), ``region_op``;
    - ``elementwise``: numpy broadcasting, one result per element (from the type rule);
    - ``writes``: the operand whose memory the op changes in place (its result is that same
      buffer, a new version of the array), or None;
    - ``key``: for a write, how it addresses the elements it changes (``WRITE_KEYS``: one
      element ``x[i, j]``, a slice, a bool mask, int index arrays);
    - ``accumulates``: a write that adds to the elements (``+=``) instead of replacing them;
    - ``internal``: made only by the AD transformations (tapes, the undo log, adjoint
      accumulations, the ``*_grad`` ops), never by the frontend from the user's code;
    - ``effect``: observable beyond its results (raises on purpose, ends a region, stores on a
      tape, calls user code): never removed, merged or moved across another effect;
    - ``may_raise``: can raise for some operands (division by zero, an index out of bounds, a
      math domain error on the python backend, a shape mismatch); elementwise ops also raise
      on arrays of incompatible shapes, and ``overflows`` ops on scalar ints beyond 64 bits
      (OverflowError on the llvm backend; see ``Primitive.raises``);
    - ``allocates``: always makes a fresh buffer (``np.zeros``, ``x.copy()``): never merged with
      another, even of equal operands, since either may be written in place later;
    - ``view``: the result shares the memory of operand 0 (``x[1:]``, ``x.T``, and the new
      version made by an in-place write);
    - ``may_alias``: the result may be operand 0 itself or an array kept elsewhere (a tape
      item, what a user's vjp returned): copy before writing into it;
    - ``shape_operand``: the operand an op reads only for its shape, or None;
    - ``shaped_like``: the operand whose shape an array result always has (``np.cumsum(x,
      axis=k)``, ``x.copy()``), or None; ``shape_operand`` says it too for an array result
      (``Primitive.shaped_as``), and a write's new version has its array's shape;
    - ``index_start``: for element accesses, where the index operands start;
    - ``unbounded_slope``: the derivative is infinite at some point where the function is
      finite (``sqrt`` at 0): reverse mode takes a zero adjoint times it as 0, not NaN;
    - ``adjoint``: how reverse mode differentiates it (``ADJOINT_KINDS``);
    - ``adjoint_shaped``: its rule's contributions have their operand's shape already, so
      reverse mode never sums one back over broadcast axes (``@``, reshape, concatenate; a
      ``sum_to`` would also type a float32 operand's adjoint as float32);
    - ``scalar_only``: the backends lower it for numbers only (never an array operand or result).
    """

    def __init__(self, name, type_rule, region_op=False, doc="", writes=None, key=None, accumulates=False,
                 internal=False, effect=False, may_raise=False, allocates=False, view=False, may_alias=False,
                 shape_operand=None, index_start=None, overflows=False, unbounded_slope=False, adjoint="rule",
                 adjoint_shaped=False, scalar_only=False, shaped_like=None):
        assert adjoint in ADJOINT_KINDS, f"{name}: adjoint={adjoint!r}"
        assert (key in WRITE_KEYS) == (writes is not None), f"{name}: a write, and only a write, has a key"
        assert not accumulates or writes is not None, f"{name}: only a write accumulates"
        self.name = name
        self.type_rule = type_rule
        self.region_op = region_op
        self.doc = doc
        self.elementwise = getattr(type_rule, "elementwise", False)    # numpy broadcasting, one result per element
        self.writes, self.key, self.accumulates, self.internal = writes, key, accumulates, internal
        self.effect, self.may_raise = effect, may_raise
        self.allocates, self.view, self.may_alias = allocates, view or writes is not None, may_alias
        self.shape_operand, self.index_start, self.overflows = shape_operand, index_start, overflows
        self.shaped_like = shaped_like
        self.unbounded_slope = unbounded_slope
        self.adjoint, self.adjoint_shaped, self.scalar_only = adjoint, adjoint_shaped, scalar_only

    def result_type(self, operand_types, attrs):
        return self.type_rule(operand_types, attrs)

    def raises(self, op):
        """Whether this op (an Op of this primitive) may raise: the record's ``may_raise``, or an
        elementwise op with an array operand (shapes that do not broadcast)."""
        if self.may_raise or (self.elementwise and any(v.type.is_array for v in op.operands)):
            return True
        return self.overflows and any(r.type is I64 for r in op.results)

    def makes_new_array(self, op):
        """Whether ``op``'s array result is a buffer of its own (an allocation or a computed array,
        not a view, a new version or a possibly shared value)."""
        return bool(op.results) and op.results[0].type.is_array and not (self.view or self.may_alias) \
            and not self.region_op and self.name != "const"

    def shaped_as(self, op):
        """The operand ``op``'s array result has the shape of (see ``shaped_like``), or None."""
        if not (len(op.results) == 1 and op.results[0].type.is_array):
            return None
        for k in (self.shaped_like, self.writes, self.shape_operand):
            if k is not None and op.operands[k].type.is_array:
                return k
        return None

    @property
    def user_write(self):
        """A write the user's code makes (``x[i] = v``, ``np.add.at``), not an adjoint's accumulation."""
        return self.writes is not None and not self.internal

    @property
    def shares_memory(self):
        """The result may be memory another value owns (a view that is not a new version made by
        a write, or a possibly shared value): whoever writes into it copies it first."""
        return self.may_alias or (self.view and self.writes is None)

    def __repr__(self):
        return f"<primitive {self.name}>"


PRIMITIVES = {}


def define(name, type_rule, doc="", region_op=False, **facts):
    """A new primitive: its record, with the facts that hold for it (``Primitive``'s keywords).

    >>> from srcgrad.ir.primitives import PRIMITIVES       # the full table, sin included
    >>> define("sin", lambda ts, attrs: None)
    Traceback (most recent call last):
    AssertionError: two records for sin
    """
    assert name not in PRIMITIVES, f"two records for {name}"
    PRIMITIVES[name] = Primitive(name, type_rule, region_op, doc, **facts)


def table_entry(table, *names):
    """A decorator that puts a rule into ``table`` (a table keyed by primitive: derivative rules,
    tangent rules, a backend's lowerings) under each of ``names``, each once.

    >>> rules = {}
    >>> @table_entry(rules, "transpose")
    ... def _transpose(op, ts, xs, out): ...
    >>> sorted(rules)
    ['transpose']
    """
    def register(rule):
        for name in names:
            assert name in PRIMITIVES, f"{name} is not a primitive"
            assert name not in table, f"two entries for {name}"
            table[name] = rule
        return rule
    return register
