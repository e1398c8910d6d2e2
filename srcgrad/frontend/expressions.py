"""The expressions: names, constants, arithmetic with Python's and numpy's type rules,
comparisons, short-circuiting ``and``/``or``/``if``-``else`` and attributes, each into ops of
the current block. Each handler takes ``(lw, node, env)`` (lw: context.py's Context, env: name
-> value) and is found by the node's type in lower.py's EXPRESSIONS table; the other
expressions have their own modules: containers.py (displays, comprehensions), indexing.py
(``x[...]``), functions.py (calls, lambdas).

Example:
    >>> import ast
    >>> from srcgrad.frontend.lower import TABLES
    >>> from srcgrad.frontend.context import Context
    >>> from srcgrad.ir.core import Function
    >>> from srcgrad.ir.types import F64
    >>> def f(x):
    ...     return x > 0.0 and x < 1.0
    >>> lw = Context(f, ast.parse("def f(x):\\n    return x > 0.0 and x < 1.0").body[0], "<doc>", 1, TABLES)
    >>> fn = Function("f", [("x", F64)])
    >>> with Builder(fn.body) as lw.b:
    ...     y = bool_op_expr(lw, lw.fdef.body[0].value, {"x": fn.params[0]})
    >>> [op.prim for op in fn.body.ops]
    ['const', 'gt', 'const', 'lt', 'and']
"""
import ast

import numpy as np

from ..ir.core import Block, Builder, if_op
from ..ir.primitives import PRIMITIVES
from ..ir.types import BOOL, F32, F64, I64, type_of, unify, user_name
from ..trees import Tree, flatten
from .call_table import known_callable
from .containers import UNKNOWN, static_value, tree_attribute, tree_binop
from .dtypes import DTYPE_VALUES, DType, dtype_comparison, dtype_value
from .values import FunctionRef

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


# ---------------------------------------------------------------------- the handlers, by node type
def name_expr(lw, node, env):
    """A name: a local's value, else the global (or closure variable) read while compiling."""
    if node.id in lw.locals:
        v = lw.read(node.id, env, node)
        return v.seen_from(env) if getattr(v, "definer", None) is lw else v
    return constant(lw, lw.resolve_global(node.id, node), node)


def constant_expr(lw, node, env):
    """A literal number or bool."""
    if isinstance(node.value, (bool, int, float)) and not isinstance(node.value, complex):
        return lw.b.const(node.value)
    lw.unsupported(node, f"the constant {node.value!r}", "use numbers only")


def binop_expr(lw, node, env):
    """``a op b``: of numbers and arrays (Context.binop), or of containers (``t1 + t2``, ``[v] * n``)."""
    op = BINOPS.get(type(node.op))
    if op is None:
        lw.unsupported(node, f"the operator {type(node.op).__name__}")
    a, b = lw.expr_any(node.left, env), lw.expr_any(node.right, env)
    if isinstance(a, Tree) or isinstance(b, Tree):
        return tree_binop(lw, node, op, a, b)
    return lw.binop(node, op, lw.value(node.left, a), lw.value(node.right, b))


def unary_expr(lw, node, env):
    """``-x``, ``+x``, ``not x`` (``~x`` is refused)."""
    v = lw.expr(node.operand, env)
    if isinstance(node.op, ast.USub):
        return lw.negate(node, v)
    if isinstance(node.op, ast.UAdd):
        return lw.b.convert(v, I64) if v.type is BOOL else v
    if isinstance(node.op, ast.Not):
        scalar_truth(lw, node, v, "`not`")
        return lw.emit(node, "not", [lw.b.convert(v, BOOL)])
    lw.unsupported(node, "the operator ~")


def compare_expr(lw, node, env):
    """``a < b``, chains ``a < b < c`` (short-circuiting), and comparisons of dtypes (constants)."""
    known = dtype_comparison(lw, node, env)
    if known is not None:
        return known        # x.dtype == np.float32: known when compiling
    for op in node.ops:
        if type(op) not in _CMPOPS:
            lw.unsupported(node, f"the comparison {type(op).__name__}")
    return compare_chain(lw, node, 0, lw.expr(node.left, env), env)


def bool_op_expr(lw, node, env):
    """``a and b``, ``a or b``: the right operand runs only when the left one does not decide."""
    return bool_op(lw, node, node.values, env)


def attribute_expr(lw, node, env):
    """``x.T``, ``x.size``, ``x.ndim``, ``x.dtype``, ``x.shape`` (a tuple), a namedtuple's field, a
    module's constant (``math.pi``)."""
    if not lw.is_global_name(node.value) and node.attr not in ("T", "size", "ndim"):
        base = lw.expr_any(node.value, env)
        if isinstance(base, Tree):
            return tree_attribute(lw, node, base)
        if not hasattr(base, "type"):       # a function or a dtype
            lw.unsupported(node, f"the attribute `.{node.attr}` of {ast.unparse(node.value)}",
                           "x.dtype can be compared or passed as a dtype" if isinstance(base, DType) else None)
        if node.attr == "shape" and base.type.is_array:          # n, m = x.shape
            return Tree(tuple, [lw.emit(node, "shape", [base], {"axis": k}) for k in range(base.type.ndim)])
        return attribute(lw, node, base)
    if not lw.is_global_name(node.value):
        return attribute(lw, node, lw.expr(node.value, env))
    obj = lw.resolve_global(node.value.id, node.value)
    if hasattr(obj, node.attr):
        return constant(lw, lw.global_attribute(obj, node.attr), node)
    lw.unsupported(node, f"the attribute `.{node.attr}` here", "x.shape[k] and module constants work")


def attribute(lw, node, arr):
    """x.T, x.size, x.ndim of an array value."""
    if node.attr == "dtype" and arr.type.is_array:
        return DTYPE_VALUES[arr.type.dtype]     # known when compiling: dtypes are part of the types
    if node.attr not in ("T", "size", "ndim"):
        lw.unsupported(node, f"the attribute `.{node.attr}` here", "x.shape[k] and module constants work")
    if not arr.type.is_array:
        lw.typing_error(node, f"only arrays have .{node.attr}, not {arr.type}")
    if node.attr == "ndim":
        return lw.b.const(arr.type.ndim)        # the rank is part of the array's type
    if node.attr == "T" and arr.type.dtype is F32:      # the general permutation (numpy_shapes.py)
        return lw.emit(node, "restride", [arr], {"kind": "permute", "axes": tuple(reversed(range(arr.type.ndim)))})
    return lw.emit(node, "transpose" if node.attr == "T" else "size", [arr])


def truth(lw, node, env):
    """A condition (of an `if`, a loop, `assert`, `... if ... else ...`): a bool value."""
    v = lw.expr(node, env)
    scalar_truth(lw, node, v, "a condition")
    if v.type is not BOOL:
        v = lw.emit(node, "to_bool", [v])
    return v


def scalar_truth(lw, node, v, where):
    """Refuse an array where Python takes the truth of one value (``where``: a condition, `and`, ...)."""
    if v.type.is_array:
        lw.typing_error(node, f"an array has no single truth value for {where} (numpy raises ValueError): "
                              "test one element, or a reduction such as np.max(x) > 0")


# ---------------------------------------------------------------------- short circuits
# Python evaluates the right operand of `and`/`or`, the later links of `a < b < c` and the
# branch of `a if c else b` only when needed: there, an index, a division or a call may
# raise (`i < len(x) and x[i] > 0`). Each such operand is lowered into a region of its own,
# and becomes an `if` op, unless all it computes is cheap (no effect, cannot raise, no
# loop): then it is computed on every path, as the `and`/`or`/`select` ops do.

def short_circuit(lw, node, left, lower_right, is_and):
    """``left and right`` / ``left or right`` with Python's values: the deciding operand,
    int/bool/float unified as everywhere (``x > 0 and x * 2`` is 0.0 or x * 2)."""
    word = "and" if is_and else "or"
    scalar_truth(lw, node, left, f"`{word}`")
    block, right = lw.lowered_apart(lower_right)
    scalar_truth(lw, node, right, f"`{word}`")
    t = unify(left.type, right.type)
    if t is None:
        lw.typing_error(node, f"the operands of `{word}` are {user_name(left.type)} and {user_name(right.type)}")
    if _cheap(block):
        lw.b.block.ops += block.ops
        if t is BOOL:
            return lw.emit(node, word, [left, right])
        cond = lw.b.convert(left, BOOL)
        a, b = lw.b.convert(left, t), lw.b.convert(right, t)
        return lw.emit(node, "select", [cond, b, a] if is_and else [cond, a, b])
    cond = lw.b.convert(left, BOOL)
    with Builder(block, lw.loc(node)) as bb:
        bb.yield_([bb.convert(right, t)])
    other = Block()
    with Builder(other, lw.loc(node)) as bb:
        bb.yield_([bb.convert(left, t)])
    return _if_value(lw, node, cond, [block, other] if is_and else [other, block], t)


def _if_value(lw, node, cond, blocks, t):
    return lw.b.append(if_op(cond, *blocks, [t], lw.loc(node)))[0]


def bool_op(lw, node, values, env):
    """``a and b and c`` as ``a and (b and c)``: the rest runs only when ``a`` does not decide."""
    left = lw.expr(values[0], env)
    if len(values) == 1:
        return left
    return short_circuit(lw, node, left, lambda: bool_op(lw, node, values[1:], env), isinstance(node.op, ast.And))


def compare_chain(lw, node, k, left, env):
    """``left op_k c_k op_k+1 c_k+1 ...``: each operand once, and the later links only while
    the earlier ones hold (``0 <= i < len(x) and ...``)."""
    right = lw.expr(node.comparators[k], env)
    if _inexact_mix(left, right):
        r = exact_mixed_compare(lw, node, _CMPOPS[type(node.ops[k])], left, right)
    else:
        a, c = lw.coerce(node, left, right)
        r = lw.emit(node, _CMPOPS[type(node.ops[k])], [a, c])
    if k + 1 == len(node.ops):
        return r
    return short_circuit(lw, node, r, lambda: compare_chain(lw, node, k + 1, right, env), True)


def exact_mixed_compare(lw, node, prim, a, b):
    """An int compared with a float exactly, as Python does (2**53 + 1 > 2.0**53 is True;
    the int converted to a double would round to 2**53). Rounding is monotonic, so where
    the int's double differs from the float, comparing the doubles is exact; where they are
    equal the float is integral and the ints are compared (2**63 is above every int)."""
    if a.type is F64:           # f op i as i op' f
        a, b, prim = b, a, {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(prim, prim)
    i, f = a, b
    fi = lw.b.convert(i, F64)
    same = lw.emit(node, "eq", [fi, f])
    top = lw.emit(node, "ge", [f, lw.b.const(2.0 ** 63)])
    usable = lw.emit(node, "and", [same, lw.emit(node, "not", [top])])
    fint = lw.emit(node, "to_i64", [lw.emit(node, "select", [usable, f, lw.b.const(0.0)])])
    above = lw.b.const(prim in ("lt", "le", "ne"))       # i op 2**63
    exact = lw.emit(node, "select", [top, above, lw.emit(node, prim, [i, fint])])
    return lw.emit(node, "select", [same, exact, lw.emit(node, prim, [fi, f])])


def if_expr(lw, node, env):
    """``a if c else b``: only the chosen branch runs."""
    c = truth(lw, node.test, env)
    decided = static_value(c)
    if decided is not UNKNOWN:      # decided while compiling (a constant argument of a recursion)
        return lw.expr(node.body if decided else node.orelse, env)
    then, a = lw.lowered_apart(lambda: lw.expr(node.body, env))
    other, b = lw.lowered_apart(lambda: lw.expr(node.orelse, env))
    if a.type.is_array or b.type.is_array:
        if a.type != b.type:        # numpy would not broadcast: the value is one branch, as it is
            lw.typing_error(node, f"the branches of `... if ... else ...` are {user_name(a.type)} and "
                                  f"{user_name(b.type)}: give both the same type")
        t = a.type
    else:
        t = unify(a.type, b.type)
        if t is None:
            lw.typing_error(node, f"cannot combine {a.type} and {b.type}")
        if _cheap(then) and _cheap(other):
            lw.b.block.ops += then.ops + other.ops
            return lw.emit(node, "select", [c, lw.b.convert(a, t), lw.b.convert(b, t)])
    for block, v in ((then, a), (other, b)):
        with Builder(block, lw.loc(node)) as bb:
            bb.yield_([bb.convert(v, t)])
    return _if_value(lw, node, c, [then, other], t)


# ---------------------------------------------------------------------- globals
def constant(lw, obj, node):
    """A Python object read while compiling (a global, a default) as a value of the compiled code."""
    if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)) and not isinstance(obj, complex):
        return lw.b.const(obj.item() if isinstance(obj, np.generic) else obj)
    if isinstance(obj, np.ndarray):
        t = type_of(obj)
        if t is None:
            lw.unsupported(node, f"a global array of dtype {obj.dtype}", "use float64, int64 or bool arrays")
        # read at compile time, like every global: a frozen copy, so later changes do not leak in
        frozen = obj.copy()
        frozen.flags.writeable = False
        return lw.b.emit("const", [], {"value": frozen, "type": t})
    tree = flatten(obj)
    if isinstance(tree, Tree):       # a global tuple, list or dict (of numbers and arrays)
        return tree.refill(iter([constant(lw, v, node) for v in tree.leaves()]))
    if dtype_value(obj) is not None:
        return dtype_value(obj)      # a global np.dtype('float32')
    if callable(obj) and known_callable(obj):
        return FunctionRef(obj)      # np.tanh passed to a function that calls it
    what = "None" if obj is None else f"a {type(obj).__name__}" + (f" ({obj.__name__})" if hasattr(obj, "__name__") else "")
    lw.unsupported(node, f"using {what} as a value (a global or a default read while compiling)",
                   "numbers, arrays, tuples, lists and dicts of them can be used as values; functions can "
                   "be called")


def _inexact_mix(a, b):
    """An int and a float scalar whose comparison as doubles could round the int (|int| > 2**53)."""
    if {a.type, b.type} != {I64, F64}:
        return False
    i = a if a.type is I64 else b
    c = i.owner.attrs.get("value") if i.owner is not None and i.owner.prim == "const" else None
    return c is None or abs(c) > 2 ** 53


def _cheap(block):
    """Whether running ``block``'s ops on a path Python would skip changes nothing: no effect,
    no possible raise, no loop or branch (their cost), no allocation."""
    for op in block.ops:
        p = PRIMITIVES[op.prim]
        if p.effect or p.raises(op) or p.region_op or p.allocates or p.writes is not None:
            return False
    return True
