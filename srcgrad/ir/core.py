"""The IR: SSA values, ops that may own regions (structured control flow), blocks, functions,
and a builder.

Values overload Python's operators while a builder is active, so derivative rules can be
written as math: ``g * cos(x)`` emits a ``cos`` and a ``mul`` into the current block.

Example:
    >>> from srcgrad.ir.types import F64
    >>> fn = Function("f", [("x", F64)])
    >>> with Builder(fn.body) as b:
    ...     b.ret([sin(fn.params[0]) * 2.0])
    >>> print(fn)      # doctest: +NORMALIZE_WHITESPACE
    func f(%x: f64) -> f64 {
      %0 = sin %x : f64
      %1 = mul %0, 2.0 : f64
      return %1
    }
"""
import threading

from ..errors import TypingError
from .primitives import PRIMITIVES
from .types import BOOL, F64, I64, NONE, Type


class Loc:
    """Where an op came from in the user's source. ``call``: for an op of a function compiled
    in place (an inlined helper), the Loc of the call in the user's function that brought it
    in (the outermost call, for nested helpers); None in the user's function itself."""

    __slots__ = ("file", "line", "col", "func", "call")

    def __init__(self, file, line, col, func=None, call=None):
        self.file, self.line, self.col, self.func, self.call = file, line, col, func, call

    def outermost(self):
        """The line of the user's function this op belongs to: the call that inlined it, or itself."""
        return self.call or self

    def __repr__(self):
        return f"{self.file}:{self.line}:{self.col}"


class Value:
    """An SSA value: defined once, by an op result or as a block argument."""

    __slots__ = ("type", "name", "owner", "id")
    _ids = iter(range(1 << 62))

    def __init__(self, type, name=None, owner=None):
        self.type, self.name, self.owner = type, name, owner
        self.id = next(Value._ids)

    def __repr__(self):
        return f"%{self.name or self.id}:{self.type}"

    # operators emit ops into the current builder (used by derivative rules)
    def __add__(self, o): return current().emit("add", [self, o])
    def __radd__(self, o): return current().emit("add", [o, self])
    def __sub__(self, o): return current().emit("sub", [self, o])
    def __rsub__(self, o): return current().emit("sub", [o, self])
    def __mul__(self, o): return current().emit("mul", [self, o])
    def __rmul__(self, o): return current().emit("mul", [o, self])
    def __truediv__(self, o): return current().emit("div", [self, o])
    def __rtruediv__(self, o): return current().emit("div", [o, self])
    def __pow__(self, o): return current().emit("pow", [self, o])
    def __neg__(self): return current().emit("neg", [self])
    def __lt__(self, o): return current().emit("lt", [self, o])
    def __gt__(self, o): return current().emit("gt", [self, o])
    def __le__(self, o): return current().emit("le", [self, o])
    def __ge__(self, o): return current().emit("ge", [self, o])
    __hash__ = object.__hash__


class Op:
    """One operation: a primitive applied to operands, with attributes and maybe regions."""

    __slots__ = ("prim", "operands", "results", "attrs", "regions", "loc")

    def __init__(self, prim, operands, result_types, attrs=None, regions=(), loc=None, names=None):
        self.prim = prim
        self.operands = list(operands)
        self.attrs = attrs or {}
        self.regions = list(regions)
        self.loc = loc
        names = names or [None] * len(result_types)
        self.results = [Value(t, n, self) for t, n in zip(result_types, names)]

    @property
    def result(self):
        return self.results[0]

    # Region ops, by name rather than by position (operand and region layout is in
    # primitives.py): for(start, stop, step, *inits) { body(i, *carried) },
    # while(*inits) { cond(*carried) } { body(*carried) }, if(cond) { then } { else }.

    @property
    def bounds(self):
        """``(start, stop, step)`` of a ``for``."""
        assert self.prim == "for", self.prim
        return self.operands[:3]

    @property
    def inits(self):
        """The initial values of a loop's carried variables."""
        assert self.prim in ("for", "while"), self.prim
        return self.operands[3:] if self.prim == "for" else self.operands

    @property
    def first_init(self):
        """Index of the first carried init among the loop's operands."""
        return 3 if self.prim == "for" else 0

    @property
    def body(self):
        """The body region of a loop."""
        assert self.prim in ("for", "while"), self.prim
        return self.regions[-1]

    @property
    def test(self):
        """The condition region of a ``while`` (it yields one bool)."""
        assert self.prim == "while", self.prim
        return self.regions[0]

    @property
    def carried(self):
        """The body's block arguments for the carried variables (a ``for`` also has ``i``)."""
        body = self.body
        return body.args[1:] if self.prim == "for" else body.args

    @property
    def index(self):
        """The induction variable of a ``for``."""
        assert self.prim == "for", self.prim
        return self.regions[0].args[0]

    @property
    def cond(self):
        """The condition of an ``if``."""
        assert self.prim == "if", self.prim
        return self.operands[0]

    @property
    def then(self):
        assert self.prim == "if", self.prim
        return self.regions[0]

    @property
    def orelse(self):
        assert self.prim == "if", self.prim
        return self.regions[1]

    def __repr__(self):
        from .printer import format_op
        return format_op(self)


class Block:
    """A list of ops ending in a terminator (``yield`` or ``return``), with block arguments."""

    def __init__(self, args=()):
        self.args = list(args)
        self.ops = []

    @property
    def terminator(self):
        return self.ops[-1] if self.ops and self.ops[-1].prim in ("yield", "return") else None

    @property
    def yielded(self):
        """The values the block's terminator yields (or returns)."""
        return self.ops[-1].operands


class Function:
    """A function of the IR: typed parameters and one body block that ends in ``return``."""

    def __init__(self, name, params, loc=None):
        self.name = name
        self.params = [Value(t, n) for n, t in params]
        self.body = Block(self.params)
        self.loc = loc
        self.result_tree = None     # the container the results come in (srcgrad/trees.py), None: as they are
        self.derivative = False     # made by a derivative transformation (ad/): its errors say so

    @property
    def result_types(self):
        term = self.body.terminator
        return [v.type for v in term.operands] if term else []

    def __str__(self):
        from .printer import format_function
        return format_function(self)


_local = threading.local()


def current():
    b = getattr(_local, "builder", None)
    if b is None:
        raise RuntimeError("no IR builder is active")
    return b


class Builder:
    """Appends ops to a block; ``with Builder(block):`` makes it the current one."""

    def __init__(self, block, loc=None):
        self.block = block
        self.loc = loc

    def __enter__(self):
        self._prev = getattr(_local, "builder", None)
        _local.builder = self
        return self

    def __exit__(self, *exc):
        _local.builder = self._prev
        return False

    def const(self, value, type=None, name=None):
        if type is None:
            type = BOOL if isinstance(value, bool) else I64 if isinstance(value, int) else F64
        value = type.py(value)
        return self.emit("const", [], {"value": value, "type": type}, name=name)

    def as_value(self, x):
        return x if isinstance(x, Value) else self.const(x)

    def emit(self, prim, operands, attrs=None, name=None, regions=(), result_types=None):
        """Append one op; its result type comes from the primitive's type rule."""
        operands = [self.as_value(o) for o in operands]
        attrs = attrs or {}
        p = PRIMITIVES[prim]
        if result_types is None:
            t = p.result_type([o.type for o in operands], attrs)
            result_types = list(t) if isinstance(t, (list, tuple)) else ([] if t is NONE else [t])
        op = Op(prim, operands, result_types, attrs, regions, self.loc,
                names=[name] * len(result_types) if name else None)
        self.block.ops.append(op)
        if len(op.results) == 1:
            return op.results[0]
        return op.results

    def convert(self, v, t, name=None):
        """``v`` converted to scalar type ``t`` (int -> float, bool -> int)."""
        if v.type == t:
            return v
        if v.owner is not None and v.owner.prim == "const" and t in (F64, I64, BOOL):
            return self.const(t.py(v.owner.attrs["value"]), t, name=name)     # folded at once
        if t is F64:
            return self.emit("to_f64", [v], name=name)
        if t is I64:
            return self.emit("to_i64", [v], name=name)
        if t is BOOL:
            return self.emit("to_bool", [v], name=name)
        raise TypingError(f"cannot convert {v.type} to {t}")

    def append(self, op):
        """Append a ready-made op (a region op from ``for_op``/``while_op``/``if_op``)."""
        self.block.ops.append(op)
        return op.results

    def for_(self, start, stop, step, inits, body, types, names=None, **attrs):
        return self.append(for_op(start, stop, step, inits, body, types, self.loc, names, **attrs))

    def while_(self, inits, test, body, types, names=None, **attrs):
        return self.append(while_op(inits, test, body, types, self.loc, names, **attrs))

    def if_(self, cond, then, orelse, types, names=None, **attrs):
        return self.append(if_op(cond, then, orelse, types, self.loc, names, **attrs))

    def yield_(self, values):
        self.emit("yield", values, result_types=[])

    def ret(self, values):
        self.emit("return", values, result_types=[])


def _unary(name):
    def fn(x):
        return current().emit(name, [x])
    fn.__name__ = name
    return fn


sin, cos, tan, exp, log, sqrt, tanh, sinh, cosh, log1p, expm1 = (
    _unary(n) for n in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "log1p", "expm1"))


def select(c, a, b):
    return current().emit("select", [c, a, b])


def for_op(start, stop, step, inits, body, types, loc=None, names=None, **attrs):
    """A ``for`` op (not yet in any block) over ``range(start, stop, step)``; ``body`` takes
    ``(i, *carried)`` and yields the next carried values; ``types`` are the results'."""
    return Op("for", [start, stop, step] + list(inits), types, {"result_types": types, **attrs},
              [body], loc, names=names)


def while_op(inits, test, body, types, loc=None, names=None, **attrs):
    """A ``while`` op: ``test(*carried)`` yields a bool, ``body(*carried)`` the next values."""
    return Op("while", list(inits), types, {"result_types": types, **attrs}, [test, body], loc, names=names)


def if_op(cond, then, orelse, types, loc=None, names=None, **attrs):
    """An ``if`` op: each branch yields one value per result."""
    return Op("if", [cond], types, {"result_types": types, **attrs}, [then, orelse], loc, names=names)


def walk_ops(block):
    """Every op of ``block`` and of the regions nested in it, in program order."""
    for op in block.ops:
        yield op
        for r in op.regions:
            yield from walk_ops(r)


def nested_ops(op):
    """Every op of the regions of ``op`` (at any depth), in program order."""
    for r in op.regions:
        yield from walk_ops(r)


def walk_op(op):
    """``op`` and every op nested in its regions, in program order."""
    yield op
    yield from nested_ops(op)


def walk_blocks(block):
    """``block`` and every region nested in it."""
    return [block] + [r for op in walk_ops(block) for r in op.regions]


def const(value, type=None):
    return current().const(value, type)


__all__ = ["Loc", "Value", "Op", "Block", "Function", "Builder", "current", "Type", "walk_ops",
           "for_op", "while_op", "if_op"]
