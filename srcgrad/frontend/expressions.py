"""The expression half of the lowering (lower.py has the statements): names, constants,
arithmetic with Python's and numpy's type rules, short-circuiting ``and``/``or``/``if``-``else``,
calls (through the table of calls.py) and indexing, each into ops of the current block.

Example:
    >>> import ast
    >>> from srcgrad.ir.core import Function
    >>> from srcgrad.ir.types import F64
    >>> fn = Function("f", [("x", F64)])
    >>> lw = Expressions()
    >>> lw.b, lw.locals = Builder(fn.body), {"x"}
    >>> lw.file, lw.first, lw.fdef = "<doc>", 1, ast.parse("def f(): pass").body[0]
    >>> with lw.b:
    ...     y = lw.expr(ast.parse("x * 2.0 + 1.0", mode="eval").body, {"x": fn.params[0]})
    >>> [op.prim for op in fn.body.ops]
    ['const', 'mul', 'const', 'add']
"""
import ast
import builtins
import inspect

import numpy as np

from ..custom import custom_vjp
from ..errors import TypingError, UnsupportedSyntaxError
from ..ir.core import Block, Builder, Loc, if_op
from ..ir.primitives import PRIMITIVES
from ..ir.types import BOOL, F32, F64, I64, type_of, unify, user_name
from ..trees import Tree, flatten
from .functions import FunctionRef
from .containers import CONTAINER_NODES, UNKNOWN, Containers, Zipped, range_of, static_value
from .call_table import ARRAY_METHODS, WHAT_CALLS_WORK, array_method, callee, check_callee, known_callable
from .indexing import Indexing
from .numpy_linalg import matmul_any_rank
from .keywords import check_keywords
from .dtypes import DTYPE_VALUES, DType, dtype_comparison, dtype_value
from .numpy_shapes import lower_shape_call

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

WHAT_INSTEAD = {
    ast.ClassDef: "define the class outside and pass plain numbers or arrays in",
    ast.Try: "check inputs before calling the compiled function",
    ast.With: "move the `with` block outside the compiled function",
    ast.Global: "pass the value in as an argument and return the new one",
    ast.Nonlocal: "pass the value in as an argument and return the new one",
    ast.Lambda: "define a named function at module level and call it",
    ast.Yield: "return the values (a tuple) instead of yielding them",
    ast.YieldFrom: "return the values (a tuple) instead of yielding them",
    ast.ListComp: "write the loop out with an array: x = np.zeros(n); for i in range(n): x[i] = ...",
    ast.Delete: "leave the variable; it goes out of scope on return",
    ast.Raise: "write `assert condition, \"message\"` instead: an assert compiles, and raises AssertionError "
               "with its message",
    ast.Import: "import at module level; the compiled function reads module globals",
    ast.ImportFrom: "import at module level; the compiled function reads module globals",
}

# expressions by the words a user knows them by
_WORDS = {
    ast.Lambda: "`lambda`", ast.Yield: "`yield`", ast.YieldFrom: "`yield from`", ast.Await: "`await`",
    ast.NamedExpr: "the assignment expression `:=`", ast.ListComp: "list comprehensions",
    ast.SetComp: "set comprehensions", ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
    ast.List: "lists", ast.Dict: "dicts", ast.Set: "sets", ast.JoinedStr: "f-strings", ast.Starred: "`*` unpacking",
}


class Unbound:
    """A name assigned on some paths only: reading it is an error (Python's UnboundLocalError)."""

    def __init__(self, name):
        self.name = name


class Expressions(Containers, Indexing):
    """Lowers expressions into ``self.b``'s block, names read from an ``env`` (name -> Value).
    lower._Lowerer, which adds the statements, sets ``b``, ``locals``, ``globals``, ``closure``
    and the source position, and compiles calls of whole functions (``custom_call``, ``inline``)."""

    def loc(self, node):
        return Loc(self.file, self.first + node.lineno - 1, node.col_offset, self.fdef.name)

    def unsupported(self, node, what, hint=None):
        raise UnsupportedSyntaxError(f"srcgrad does not support {what}", self.loc(node), hint)

    def typing_error(self, node, message):
        raise TypingError(message, self.loc(node))

    def emit(self, node, prim, operands, attrs=None, name=None):
        self.b.loc = self.loc(node)
        try:
            return self.b.emit(prim, operands, attrs, name=name)
        except TypingError as e:
            self.typing_error(node, e.plain)

    def read(self, name, env, node):
        v = env.get(name)
        if isinstance(v, Unbound) or (v is None and name in self.locals):
            raise UnsupportedSyntaxError(
                f"the variable '{name}' may be used before it has a value on some path through the code",
                self.loc(node), f"give '{name}' a value before the `if` or loop that sets it")
        return v

    def truth(self, node, env):
        v = self.expr(node, env)
        self.scalar_truth(node, v, "a condition")
        if v.type is not BOOL:
            v = self.emit(node, "to_bool", [v])
        return v

    def number_of(self, node, x, what):
        """``x`` where Python wants a number (``float(x)``, ``math.sin(x)``): a 0-d array's
        element, as numpy converts it; an array of another rank is numpy's TypeError."""
        if not x.type.is_array:
            return x
        if x.type.ndim == 0:
            return self.emit(node, "index", [x])
        self.typing_error(node, f"{what} of a {x.type.ndim}-d {user_name(x.type)}: only 0-dimensional arrays can be "
                                "converted to Python scalars (numpy raises TypeError); index one element")

    def scalar_truth(self, node, v, where):
        if v.type.is_array:
            self.typing_error(node, f"an array has no single truth value for {where} (numpy raises ValueError): "
                                    "test one element, or a reduction such as np.max(x) > 0")

    # ------------------------------------------------------------------ expressions
    def expr_any(self, node, env):
        """An expression whose value may be a container (a Tree: a tuple, list or dict) as well as
        an IR value."""
        if isinstance(node, CONTAINER_NODES):
            if isinstance(node, ast.GeneratorExp):
                self.unsupported(node, "a generator expression here", "sum(... for ...) and np.array([...]) take one")
            return self.container(node, env)
        if isinstance(node, ast.Name) and node.id in self.locals:
            v = self.read(node.id, env, node)
            return v.seen_from(env) if getattr(v, "definer", None) is self else v
        if isinstance(node, ast.Lambda):
            return self.lambda_value(node, env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            a, b = self.expr_any(node.left, env), self.expr_any(node.right, env)
            if isinstance(a, Tree) or isinstance(b, Tree):
                return self.tree_binop(node, BINOPS[type(node.op)], a, b)
            return self.binop(node, BINOPS[type(node.op)], self.value(node.left, a), self.value(node.right, b))
        if isinstance(node, ast.Attribute) and not self.is_global_name(node.value) and node.attr not in ("T", "size",
                                                                                                         "ndim"):
            base = self.expr_any(node.value, env)
            if isinstance(base, Tree):
                return self.tree_attribute(node, base)
            if not hasattr(base, "type"):       # a function or a dtype
                self.unsupported(node, f"the attribute `.{node.attr}` of {ast.unparse(node.value)}",
                                 "x.dtype can be compared or passed as a dtype" if isinstance(base, DType) else None)
            if node.attr == "shape" and base.type.is_array:          # n, m = x.shape
                return Tree(tuple, [self.emit(node, "shape", [base], {"axis": k}) for k in range(base.type.ndim)])
            return self.attribute(node, base)
        return self.expr_value(node, env)

    def lowered_arg(self, node, env):
        """An argument of a call: lowered now, unless container_call lowered it already."""
        v = self.lowered_args.pop(id(node), None)
        return self.value(node, v) if v is not None else self.expr(node, env)

    def value(self, node, v):
        """``v``, the value of ``node``, checked to be a number or an array (not a container)."""
        if isinstance(v, Tree):
            self.typing_error(node, f"{ast.unparse(node)} is {v.words()}, where a number or an array is needed"
                              + (f" (numpy would make an array of it here: write np.asarray({ast.unparse(node)}))"
                                 if v.kind in (list, tuple) else ""))
        if not hasattr(v, "type"):
            self.typing_error(node, f"{ast.unparse(node)} is a function, where a number or an array is needed" if
                              hasattr(v, "fdef") or hasattr(v, "obj") else
                              f"{ast.unparse(node)} is a dtype, where a number or an array is needed" if
                              isinstance(v, DType) else
                              f"{ast.unparse(node)} cannot be used as a number or an array here")
        return v

    def expr(self, node, env):
        """An expression whose value is a number or an array."""
        return self.value(node, self.expr_any(node, env))

    def is_global_name(self, node):
        """Whether ``node`` names a global (read at compile time, its attributes too)."""
        return isinstance(node, ast.Name) and node.id not in self.locals

    def negate(self, node, v):
        """-v: arrays compute as floats, a bool as an int (Python's -True is -1)."""
        if v.type.is_array:
            (v,) = self.to_float_array_operands(node, v)
        return self.emit(node, "neg", [self.b.convert(v, I64) if v.type is BOOL else v])

    def expr_value(self, node, env):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)) and not isinstance(node.value, complex):
                return self.b.const(node.value)
            self.unsupported(node, f"the constant {node.value!r}", "use numbers only")
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.read(node.id, env, node)
            return self.constant(self.resolve_global(node.id, node), node)
        if isinstance(node, ast.BinOp):
            self.unsupported(node, f"the operator {type(node.op).__name__}")
        if isinstance(node, ast.UnaryOp):
            v = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                return self.negate(node, v)
            if isinstance(node.op, ast.UAdd):
                return self.b.convert(v, I64) if v.type is BOOL else v
            if isinstance(node.op, ast.Not):
                self.scalar_truth(node, v, "`not`")
                return self.emit(node, "not", [self.b.convert(v, BOOL)])
            self.unsupported(node, "the operator ~")
        known = dtype_comparison(self, node, env) if isinstance(node, ast.Compare) else None
        if known is not None:
            return known        # x.dtype == np.float32: known when compiling
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _CMPOPS:
                    self.unsupported(node, f"the comparison {type(op).__name__}")
            return self.compare_chain(node, 0, self.expr(node.left, env), env)
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, node.values, env)
        if isinstance(node, ast.IfExp):
            return self.if_expr(node, env)
        if isinstance(node, ast.Attribute) and not self.is_global_name(node.value):
            return self.attribute(node, self.expr(node.value, env))
        if isinstance(node, ast.Attribute):
            base = node.value
            if self.is_global_name(base):
                obj = self.resolve_global(base.id, base)
                if hasattr(obj, node.attr):
                    return self.constant(getattr(obj, node.attr), node)
            self.unsupported(node, f"the attribute `.{node.attr}` here", "x.shape[k] and module constants work")
        hint = WHAT_INSTEAD.get(type(node))
        self.unsupported(node, _WORDS.get(type(node), f"the expression `{type(node).__name__}`"), hint)

    def attribute(self, node, arr):
        """x.T, x.size, x.ndim of an array value."""
        if node.attr == "dtype" and arr.type.is_array:
            return DTYPE_VALUES[arr.type.dtype]     # known when compiling: dtypes are part of the types
        if node.attr not in ("T", "size", "ndim"):
            self.unsupported(node, f"the attribute `.{node.attr}` here", "x.shape[k] and module constants work")
        if not arr.type.is_array:
            self.typing_error(node, f"only arrays have .{node.attr}, not {arr.type}")
        if node.attr == "ndim":
            return self.b.const(arr.type.ndim)        # the rank is part of the array's type
        if node.attr == "T" and arr.type.dtype is F32:      # the general permutation (numpy_shapes.py)
            return self.emit(node, "restride", [arr], {"kind": "permute", "axes": tuple(reversed(range(arr.type.ndim)))})
        return self.emit(node, "transpose" if node.attr == "T" else "size", [arr])

    # ------------------------------------------------------------------ short circuits
    # Python evaluates the right operand of `and`/`or`, the later links of `a < b < c` and the
    # branch of `a if c else b` only when needed: there, an index, a division or a call may
    # raise (`i < len(x) and x[i] > 0`). Each such operand is lowered into a region of its own,
    # and becomes an `if` op, unless all it computes is cheap (no effect, cannot raise, no
    # loop): then it is computed on every path, as the `and`/`or`/`select` ops do.

    def lowered_apart(self, lower_it, block=None, loc=None):
        """(block, value): ``lower_it()``'s ops in a block of their own (its value not yielded);
        a region's ``block`` comes with its arguments."""
        block = Block() if block is None else block
        outer = self.b
        self.b = Builder(block, outer.loc if loc is None else loc)
        try:
            with self.b:
                value = lower_it()
        finally:
            self.b = outer
        return block, value

    def short_circuit(self, node, left, lower_right, is_and):
        """``left and right`` / ``left or right`` with Python's values: the deciding operand,
        int/bool/float unified as everywhere (``x > 0 and x * 2`` is 0.0 or x * 2)."""
        word = "and" if is_and else "or"
        self.scalar_truth(node, left, f"`{word}`")
        block, right = self.lowered_apart(lower_right)
        self.scalar_truth(node, right, f"`{word}`")
        t = unify(left.type, right.type)
        if t is None:
            self.typing_error(node, f"the operands of `{word}` are {user_name(left.type)} and {user_name(right.type)}")
        if _cheap(block):
            self.b.block.ops += block.ops
            if t is BOOL:
                return self.emit(node, word, [left, right])
            cond = self.b.convert(left, BOOL)
            a, b = self.b.convert(left, t), self.b.convert(right, t)
            return self.emit(node, "select", [cond, b, a] if is_and else [cond, a, b])
        cond = self.b.convert(left, BOOL)
        with Builder(block, self.loc(node)) as bb:
            bb.yield_([bb.convert(right, t)])
        other = Block()
        with Builder(other, self.loc(node)) as bb:
            bb.yield_([bb.convert(left, t)])
        return self.if_value(node, cond, [block, other] if is_and else [other, block], t)

    def if_value(self, node, cond, blocks, t):
        return self.b.append(if_op(cond, *blocks, [t], self.loc(node)))[0]

    def bool_op(self, node, values, env):
        """``a and b and c`` as ``a and (b and c)``: the rest runs only when ``a`` does not decide."""
        left = self.expr(values[0], env)
        if len(values) == 1:
            return left
        return self.short_circuit(node, left, lambda: self.bool_op(node, values[1:], env), isinstance(node.op, ast.And))

    def compare_chain(self, node, k, left, env):
        """``left op_k c_k op_k+1 c_k+1 ...``: each operand once, and the later links only while
        the earlier ones hold (``0 <= i < len(x) and ...``)."""
        right = self.expr(node.comparators[k], env)
        if _inexact_mix(left, right):
            r = self.exact_mixed_compare(node, _CMPOPS[type(node.ops[k])], left, right)
        else:
            a, c = self.coerce(node, left, right)
            r = self.emit(node, _CMPOPS[type(node.ops[k])], [a, c])
        if k + 1 == len(node.ops):
            return r
        return self.short_circuit(node, r, lambda: self.compare_chain(node, k + 1, right, env), True)

    def exact_mixed_compare(self, node, prim, a, b):
        """An int compared with a float exactly, as Python does (2**53 + 1 > 2.0**53 is True;
        the int converted to a double would round to 2**53). Rounding is monotonic, so where
        the int's double differs from the float, comparing the doubles is exact; where they are
        equal the float is integral and the ints are compared (2**63 is above every int)."""
        if a.type is F64:           # f op i as i op' f
            a, b, prim = b, a, {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(prim, prim)
        i, f = a, b
        fi = self.b.convert(i, F64)
        same = self.emit(node, "eq", [fi, f])
        top = self.emit(node, "ge", [f, self.b.const(2.0 ** 63)])
        usable = self.emit(node, "and", [same, self.emit(node, "not", [top])])
        fint = self.emit(node, "to_i64", [self.emit(node, "select", [usable, f, self.b.const(0.0)])])
        above = self.b.const(prim in ("lt", "le", "ne"))       # i op 2**63
        exact = self.emit(node, "select", [top, above, self.emit(node, prim, [i, fint])])
        return self.emit(node, "select", [same, exact, self.emit(node, prim, [fi, f])])

    def if_expr(self, node, env):
        """``a if c else b``: only the chosen branch runs."""
        c = self.truth(node.test, env)
        decided = static_value(c)
        if decided is not UNKNOWN:      # decided while compiling (a constant argument of a recursion)
            return self.expr(node.body if decided else node.orelse, env)
        then, a = self.lowered_apart(lambda: self.expr(node.body, env))
        other, b = self.lowered_apart(lambda: self.expr(node.orelse, env))
        if a.type.is_array or b.type.is_array:
            if a.type != b.type:        # numpy would not broadcast: the value is one branch, as it is
                self.typing_error(node, f"the branches of `... if ... else ...` are {user_name(a.type)} and "
                                        f"{user_name(b.type)}: give both the same type")
            t = a.type
        else:
            t = unify(a.type, b.type)
            if t is None:
                self.typing_error(node, f"cannot combine {a.type} and {b.type}")
            if _cheap(then) and _cheap(other):
                self.b.block.ops += then.ops + other.ops
                return self.emit(node, "select", [c, self.b.convert(a, t), self.b.convert(b, t)])
        for block, v in ((then, a), (other, b)):
            with Builder(block, self.loc(node)) as bb:
                bb.yield_([bb.convert(v, t)])
        return self.if_value(node, c, [then, other], t)

    # ------------------------------------------------------------------ arithmetic
    def coerce(self, node, a, b):
        if a.type.is_array or b.type.is_array:
            return self.to_float_array_operands(node, a, b)
        t = unify(a.type, b.type)
        if t is None:
            self.typing_error(node, f"cannot combine {a.type} and {b.type}")
        return self.b.convert(a, t), self.b.convert(b, t)

    def to_float_array_operands(self, node, *vals):
        """Whole-array arithmetic computes in float64 (scalars are converted, arrays must be float)."""
        out = []
        for v in vals:
            if v.type.is_array:
                if v.type.dtype is not F64:
                    v = self.emit(node, "to_f64", [v])       # int and bool arrays compute as floats
                out.append(v)
            else:
                out.append(self.b.convert(v, F64))
        return out

    def binop(self, node, op, a, b, name=None):
        if a.type.is_array or b.type.is_array:
            if op == "matmul" and a.type.is_array and b.type.is_array and max(a.type.ndim, b.type.ndim) > 2:
                return matmul_any_rank(self, node, a, b)
            return self.emit(node, op, self.to_float_array_operands(node, a, b), name=name)
        if op == "matmul":
            self.typing_error(node, f"@ needs arrays, got {a.type} and {b.type}")
        attrs = {}
        if op == "pow":
            c = b.owner.attrs.get("value") if b.owner is not None and b.owner.prim == "const" else None
            # int ** int is an int in Python unless the exponent is negative (a float): a negative
            # constant computes as floats, a variable exponent as ints (negative: a clear error)
            if a.type in (I64, BOOL) and b.type in (I64, BOOL) and (c is None or c >= 0):
                attrs["int_result"] = True
            else:
                a, b = self.b.convert(a, F64), self.b.convert(b, F64)
                return self.emit(node, "pow", [a, b], attrs, name=name)
        if op == "div":
            a, b = self.b.convert(a, F64), self.b.convert(b, F64)
        return self.emit(node, op, self.arithmetic_operands(node, a, b), attrs, name=name)

    def arithmetic_operands(self, node, a, b):
        """Scalar operands of arithmetic at their common type; bools compute as ints, as in Python
        (True + True is 2), and as the type rules say."""
        a, b = self.coerce(node, a, b)
        if a.type is BOOL:
            return [self.b.convert(a, I64), self.b.convert(b, I64)]
        return [a, b]

    # ------------------------------------------------------------------ globals, constants, calls
    def calls_range(self, name):
        """Whether ``name`` (an ast.Name, called) is the builtin range, as desugar asks."""
        try:
            return self.resolve_global(name.id, name) is builtins.range
        except UnsupportedSyntaxError:
            return False        # said when the call is lowered

    def resolve_global(self, name, node):
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise UnsupportedSyntaxError(f"the name '{name}' is not defined", self.loc(node))

    def constant(self, obj, node):
        if isinstance(obj, (bool, int, float, np.integer, np.floating, np.bool_)) and not isinstance(obj, complex):
            return self.b.const(obj.item() if isinstance(obj, np.generic) else obj)
        if isinstance(obj, np.ndarray):
            t = type_of(obj)
            if t is None:
                self.unsupported(node, f"a global array of dtype {obj.dtype}", "use float64, int64 or bool arrays")
            # read at compile time, like every global: a frozen copy, so later changes do not leak in
            frozen = obj.copy()
            frozen.flags.writeable = False
            return self.b.emit("const", [], {"value": frozen, "type": t})
        tree = flatten(obj)
        if isinstance(tree, Tree):       # a global tuple, list or dict (of numbers and arrays)
            return tree.refill(iter([self.constant(v, node) for v in tree.leaves()]))
        if dtype_value(obj) is not None:
            return dtype_value(obj)      # a global np.dtype('float32')
        if callable(obj) and known_callable(obj):
            return FunctionRef(obj)      # np.tanh passed to a function that calls it
        self.unsupported(node, f"using {type(obj).__name__} {getattr(obj, '__name__', '')!s} as a value",
                         "numbers, arrays, tuples, lists and dicts of them can be used as values; functions can "
                         "be called")

    def global_object(self, node):
        """What a name or a dotted name (np.linalg.det) of module level is bound to at compile
        time; None for anything that reads a local."""
        if self.is_global_name(node):
            return self.resolve_global(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.global_object(node.value)
            return None if base is None else getattr(base, node.attr, None)
        return None

    def call(self, node, env):
        if len(node.args) == 1 and range_of(node.args[0], env) is not None:
            return range_of(node.args[0], env).n          # len(range0)
        fobj = self.global_object(node.func)
        if fobj is None and isinstance(node.func, ast.Name) and node.func.id in self.locals:
            target = self.expr_any(node.func, env)
            if not hasattr(target, "type") and not isinstance(target, (Tree, FunctionRef)):
                return self.call_value(node, target, env)
            if isinstance(target, FunctionRef):
                fobj = target.obj
            elif not isinstance(target, Tree):
                self.typing_error(node, f"'{node.func.id}' is a {user_name(target.type)}, not a function")
        if hasattr(fobj, "as_primal"):          # a function srcgrad compiled (api.Compiled)
            return self.compiled_call(node, fobj, env)
        special = self.container_call(node, fobj, env)
        if special is not None:
            return special
        shaped = lower_shape_call(self, node, fobj, env)        # reshape, transpose, np.array([...]), ...
        if shaped is not None:
            return shaped
        plain_function = inspect.isfunction(fobj) and not isinstance(fobj, custom_vjp)
        if node.keywords and not plain_function:      # each table entry declares its keywords
            check_keywords(self, node, callee(array_method(node.func, fobj) or fobj), ast.unparse(node.func))
        if fobj is None and isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            arr = self.expr(node.func.value, env)
            if not arr.type.is_array:
                self.typing_error(node, f".copy() needs an array, got {arr.type}")
            return self.emit(node, "copy", [arr])
        method = array_method(node.func, fobj)
        if method is not None:
            arr = self.expr(node.func.value, env)
            if arr.type.is_array:
                args = [arr] + [None if callee(method).takes_none and _is_none(a) else self.expr(a, env)
                                for a in node.args]
                return callee(method).lower(self, node, args, env)
        called = ast.unparse(node.func)         # the user's spelling: np.linalg.det, math.gamma
        if fobj is None:
            self.unsupported(node, f"calling {called}", "call math/numpy functions, plain module-level functions "
                                                         "or the array methods " + ", ".join(
                                                             f"x.{m}()" for m in sorted(ARRAY_METHODS)))
        check_callee(self, node, fobj, called)
        entry = callee(fobj)
        if entry is not None and entry.raw_args:
            out = entry.lower(self, node, None, env)
            return Tree(tuple, out) if isinstance(out, list) else out     # several values (np.split): a tuple
        if entry is not None:
            args = [None if entry.takes_none and _is_none(a) else self.lowered_arg(a, env)
                    for a in node.args[1 if entry.shape_first else 0:entry.static_after]]
            out = entry.lower(self, node, [None] + args if entry.shape_first else args, env)
            return Tree(tuple, out) if isinstance(out, list) else out
        args = [self.expr_any(a, env) for a in node.args]       # a Python function may take containers
        if isinstance(fobj, custom_vjp):
            return self.custom_call(node, fobj, args)
        if inspect.isfunction(fobj):
            return self.inline(node, fobj, args, {k.arg: self.expr_any(k.value, env) for k in node.keywords})
        self.unsupported(node, f"calling {called} with these arguments (yet)", WHAT_CALLS_WORK)

    # ------------------------------------------------------------------ indexing
    def subscript(self, node, env):
        r = range_of(node.value, env)
        if r is not None:       # range0[k0]: start + k0 * step
            return self.binop(node, "add", r.start, self.binop(node, "mul", self.expr(node.slice, env), r.step))
        # x.shape[k]
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            arr = self.expr(node.value.value, env)
            if not arr.type.is_array:
                self.typing_error(node, f"only arrays have a shape, not {arr.type}")
            k = node.slice
            if not (isinstance(k, ast.Constant) and isinstance(k.value, int)):
                self.unsupported(node, "x.shape[k] with a k that is not a literal integer")
            axis = k.value + arr.type.ndim if k.value < 0 else k.value
            return self.emit(node, "shape", [arr], {"axis": axis})
        arr = self.expr_any(node.value, env)
        if isinstance(arr, Tree):
            return self.tree_index(node, arr, env)
        if isinstance(arr, Zipped):
            k = self.integer(node.slice, env, "indices")
            if arr.is_static():
                return Tree(tuple, [self.tree_index(node, p, env) for p in arr.parts])
            return self.item_at(node, arr, k)
        arr = self.value(node.value, arr)
        if not arr.type.is_array:
            self.typing_error(node, f"only arrays can be indexed, not {arr.type}")
        return self.subscript_value(node, arr, env)      # indexing.py

    def setitem(self, target, value, env, node):
        """x[i, j] = v: a new version of the array; every name bound to the old one sees it."""
        if isinstance(target.value, ast.Attribute) or not isinstance(target.value, ast.Name):
            self.unsupported(node, "writing into this expression", "write into a named array: x[i] = v")
        old = self.read(target.value.id, env, target.value)
        if isinstance(old, Tree):
            return self.tree_setitem(node, target, old, value, env)
        value = self.value(node, value)
        if not old.type.is_array:
            self.typing_error(node, f"only arrays can be written into, '{target.value.id}' is {old.type}")
        entries = self.index_entries(node, target.slice, env, old.type.ndim)       # indexing.py
        if any(e[0] == "v" and e[1].type.is_array for e in entries):
            new = self.advanced_write(node, target, old, value, entries)
        elif any(e[0] != "v" for e in entries) or len(entries) < old.type.ndim:
            spec, bounds = self.basic_spec(node, entries)
            if value.type.is_array:
                (value,) = self.to_float_array_operands(node, value)
            elif old.type.dtype in (F64, F32):
                value = self.b.convert(value, F64)
            new = self.emit(node, "setslice", [old, value] + bounds, {"spec": spec}, name=target.value.id)
        else:
            spec, indices = self.basic_spec(node, entries)
            if old.type.dtype in (F64, F32):
                value = self.b.convert(value, F64)
            new = self.emit(node, "setitem", [old, value] + indices, name=target.value.id)
        for n, v in list(env.items()):
            if v is old:
                env[n] = new

    def is_none(self, node):
        """Whether ``node`` is None or a global bound to it (np.newaxis)."""
        if isinstance(node, ast.Constant):
            return node.value is None
        if self.is_global_name(node):
            return self.resolve_global(node.id, node) is None
        if isinstance(node, ast.Attribute):
            base = self.global_object(node.value)
            return base is not None and hasattr(base, node.attr) and getattr(base, node.attr) is None
        return False

    def integer(self, node, env, what):
        """An index or a slice bound: an int (or a bool)."""
        v = self.expr(node, env)
        if v.type not in (I64, BOOL):
            self.typing_error(node, f"{what} must be integers, got {v.type}")
        return v


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


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
