"""The primitive table: every op the IR may contain, with its type rule.

This table is the single source of truth: the derivative rules (ad/rules.py), forward rules
and each backend are tables keyed by these names, and tests/compiler/test_primitive_tables.py
fails when one of them misses a primitive.

Example:
    >>> PRIMITIVES["sin"].result_type([F64], {})
    f64
"""
from ..errors import TypingError
from .types import BOOL, F64, I64, NONE, ArrayType, TapeType, unify


class Primitive:
    """One op kind: ``name``, whether it owns regions, and ``result_type(operand_types, attrs)``."""

    def __init__(self, name, type_rule, region_op=False, doc=""):
        self.name = name
        self.type_rule = type_rule
        self.region_op = region_op
        self.doc = doc

    def result_type(self, operand_types, attrs):
        return self.type_rule(operand_types, attrs)

    def __repr__(self):
        return f"<primitive {self.name}>"


PRIMITIVES = {}


def _def(name, rule, doc="", region_op=False):
    PRIMITIVES[name] = Primitive(name, rule, region_op, doc)


def _numeric(t, what):
    if t not in (F64, I64, BOOL):
        raise TypingError(f"{what} needs numbers, got {t}")
    return t


def _float_rule(ts, attrs):
    for t in ts:
        _numeric(t, "this math function")
    return F64


def _arith_rule(ts, attrs):
    a, b = (_numeric(t, "arithmetic") for t in ts)
    t = unify(a, b)
    return I64 if t is BOOL else t


def _same_rule(ts, attrs):
    t = _numeric(ts[0], "this operation")
    return I64 if t is BOOL else t


def _bool_rule(ts, attrs):
    return BOOL


def _pow_rule(ts, attrs):
    a, b = ts
    return I64 if unify(a, b) in (I64, BOOL) and attrs.get("int_result") else F64


def _select_rule(ts, attrs):
    c, a, b = ts
    t = unify(a, b)
    if t is None:
        raise TypingError(f"the two branches have types {a} and {b}")
    return t


def _const_rule(ts, attrs):
    return attrs["type"]


def _index_rule(ts, attrs):
    arr = ts[0]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays can be indexed, not {arr}")
    if len(ts) - 1 != arr.ndim:
        raise TypingError(f"an array of {arr.ndim} dimensions needs {arr.ndim} indices here, got {len(ts) - 1}")
    for t in ts[1:]:
        if t not in (I64, BOOL):
            raise TypingError(f"array indices must be integers, got {t}")
    return arr.dtype


def _shape_rule(ts, attrs):
    arr = ts[0]
    if not isinstance(arr, ArrayType):
        raise TypingError(f"only arrays have a shape, not {arr}")
    if not 0 <= attrs["axis"] < arr.ndim:
        raise TypingError(f"axis {attrs['axis']} is out of range for an array of {arr.ndim} dimensions")
    return I64


def _region_rule(ts, attrs):
    return attrs.get("result_types", ())


# constants and conversions
_def("const", _const_rule, "a literal or a global read at compile time; attrs: value, type")
_def("to_f64", lambda ts, a: F64, "float(x)")
_def("to_i64", lambda ts, a: I64, "int(x): truncates toward 0")
_def("to_bool", lambda ts, a: BOOL, "bool(x)")

# arithmetic (Python semantics: / is true division, // and % floor toward -inf)
for _n in ("add", "sub", "mul"):
    _def(_n, _arith_rule)
def _div_rule(ts, attrs):
    _arith_rule(ts, attrs)      # checks the operands
    return F64


_def("div", _div_rule, "true division")
_def("floordiv", _arith_rule, "floor division (toward -inf)")
_def("mod", _arith_rule, "remainder with the sign of the divisor")
_def("pow", _pow_rule, "x ** y; attrs: int_result for int ** non-negative int constant")
_def("neg", _same_rule)
_def("abs", _same_rule)
_def("min", _arith_rule)
_def("max", _arith_rule)
_def("atan2", _float_rule)
_def("hypot", _float_rule)

# elementary functions of floats
UNARY_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "expm1", "log",
              "log1p", "log2", "log10", "sqrt", "erf")
for _n in UNARY_MATH:
    _def(_n, _float_rule)
_def("floor", lambda ts, a: I64, "math.floor: an int")
_def("ceil", lambda ts, a: I64, "math.ceil: an int")

# comparisons and logic
for _n in ("lt", "le", "gt", "ge", "eq", "ne"):
    _def(_n, _bool_rule)
_def("not", _bool_rule)
_def("and", _bool_rule, "both operands evaluated (they have no side effects)")
_def("or", _bool_rule)
_def("select", _select_rule, "cond ? a : b")

# arrays
_def("index", _index_rule, "x[i, j]: one element")
_def("shape", _shape_rule, "x.shape[axis]; attrs: axis")

# adjoint bookkeeping (made by ad/reverse.py, never by the frontend)
def _tape_new_rule(ts, attrs):
    return TapeType(attrs["items"])


def _tape_get_rule(ts, attrs):
    return list(ts[0].items)


def _zeros_like_rule(ts, attrs):
    return ts[0]


def _index_add_rule(ts, attrs):
    return ts[0]


_def("tape_new", _tape_new_rule, "a tape for per-iteration values; operand: length (none: grows); attrs: items")
_def("tape_put", lambda ts, a: NONE, "tape[k] = values (attrs: append for a growing tape)")
_def("tape_get", _tape_get_rule, "the values stored at tape[k]")
_def("zeros_like", _zeros_like_rule, "an array of zeros shaped like the operand")
_def("index_add", _index_add_rule, "adjoint accumulation: arr[idx] += g; returns arr (updated in place)")
_def("range_len", lambda ts, a: I64, "len(range(start, stop, step))")

# calls into user code with a hand-written derivative (srcgrad.custom_vjp)
_def("call_custom", lambda ts, a: list(a["result_types"]), "fn(*operands); attrs: fn (a custom_vjp)")
_def("call_custom_vjp", lambda ts, a: list(a["result_types"]),
     "fn.vjp(*args, *results, *cotangents) -> one cotangent per float argument; attrs: fn, n_args")

# structured control flow: ops that own regions
_def("if", _region_rule, "operands: cond; regions: then, else; each yields the results", region_op=True)
_def("for", _region_rule, "operands: start, stop, step, *init; region args: i, *carried", region_op=True)
_def("while", _region_rule, "operands: *init; regions: cond (args -> yield bool), body (args -> yield carried)",
     region_op=True)
_def("assert", lambda ts, a: NONE, "raises AssertionError(message) when the operand is false")
_def("yield", lambda ts, a: NONE, "ends a region")
_def("return", lambda ts, a: NONE, "ends the function")

DIFFERENTIABLE_FLOAT_OPS = UNARY_MATH + ("add", "sub", "mul", "div", "pow", "neg", "abs", "min", "max", "atan2",
                                         "hypot", "mod", "select", "to_f64")
