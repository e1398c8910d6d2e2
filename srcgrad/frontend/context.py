"""What every lowering function takes first, as ``lw``: the one function being lowered (its
source position, its locals, the names made up for it, the builder of the block ops go into)
and the few helpers all of them use.

The lowering itself is modules of plain functions ``handler(lw, node, env)``: statements.py,
expressions.py, containers.py, indexing.py, loops.py, functions.py, and the call tables
(calls.py and the numpy_*.py families, gathered by call_table.py). A handler reaches the
handlers of other modules only through ``lw.stmt``, ``lw.expr`` and ``lw.body``, which look the
handler up by the node's type in the tables (``Tables``) that lower.py builds and hands to the
Context: so the handler modules import only what is below them, never each other in a circle.

Members, all a newcomer needs to read a handler:

- state: ``fn``, ``fdef``, ``file``, ``first`` (the function and where its source is),
  ``globals``, ``closure`` (and its ``cells``), ``locals`` (the names the body binds),
  ``names`` (FreshNames: the names desugar and the loops make up), ``b`` (the Builder of the
  current block), ``lowered_args``, ``recursive_calls``, ``stack``, ``params``, ``unit_axes``,
  ``written_from``, ``tables``;
- where and errors: ``loc``, ``unsupported``, ``typing_error``, ``emit`` (an op at a node's
  line, its type errors said there);
- names: ``read`` (a local), ``resolve_global``, ``global_attribute`` (both noted for reads.py),
  ``global_object``, ``is_global_name``;
- dispatch: ``expr_any``, ``expr`` (checked by ``value`` to be a number or an array),
  ``stmt``, ``body``, and ``lowered_apart`` (ops into a block of their own), ``for_call`` (the
  context of a function compiled in place at a call);
- arithmetic on operands: ``to_float_array_operands``, ``arithmetic_operands``, ``coerce``,
  ``number_of``, ``binop``, ``negate``.

Example:
    >>> import ast
    >>> from srcgrad.ir.core import Function
    >>> from srcgrad.ir.types import F64
    >>> from srcgrad.frontend.lower import TABLES
    >>> def f(x):
    ...     return x * 2.0 + 1.0
    >>> lw = Context(f, ast.parse("def f(x):\\n    return x * 2.0 + 1.0").body[0], "<doc>", 1, TABLES)
    >>> fn = Function("f", [("x", F64)])
    >>> with Builder(fn.body) as lw.b:
    ...     y = lw.expr(lw.fdef.body[0].value, {"x": fn.params[0]})
    >>> [op.prim for op in fn.body.ops]
    ['const', 'mul', 'const', 'add']
"""
import ast
import builtins
from typing import NamedTuple

from ..errors import TypingError, UnsupportedSyntaxError
from ..ir.core import Block, Builder, Loc
from ..ir.types import BOOL, F64, I64, unify, user_name
from ..trees import Tree
from .desugar import check_returns, desugar
from .dtypes import DType
from .names import FreshNames
from .reads import record_attribute, record_name
from .numpy_linalg import matmul_any_rank
from .scope import assigned_names, comprehension_names
from .values import Unbound


class Tables(NamedTuple):
    """The dispatch tables, AST node type -> handler ``(lw, node, env)``: ``statements`` return
    ``(env, how they end)`` (see ``Context.body``), ``expressions`` the value."""
    statements: dict
    expressions: dict


# What to write instead of a construct the frontend refuses (statements and expressions): only
# node types without a handler (tests/compiler/test_errors.py checks)
WHAT_INSTEAD = {
    ast.ClassDef: "define the class outside and pass plain numbers or arrays in",
    ast.Try: "check inputs before calling the compiled function",
    ast.With: "move the `with` block outside the compiled function",
    ast.Global: "pass the value in as an argument and return the new one",
    ast.Nonlocal: "pass the value in as an argument and return the new one",
    ast.Yield: "return the values (a tuple) instead of yielding them",
    ast.YieldFrom: "return the values (a tuple) instead of yielding them",
    ast.Delete: "leave the variable; it goes out of scope on return",
    ast.Raise: "write `assert condition, \"message\"` instead: an assert compiles, and raises AssertionError "
               "with its message",
    ast.Import: "import at module level; the compiled function reads module globals",
    ast.ImportFrom: "import at module level; the compiled function reads module globals",
}

# expressions the frontend refuses, by the words a user knows them by
WORDS = {
    ast.Yield: "`yield`", ast.YieldFrom: "`yield from`", ast.Await: "`await`",
    ast.NamedExpr: "the assignment expression `:=`", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.Set: "sets", ast.JoinedStr: "f-strings", ast.Starred: "`*` unpacking",
}


class Context:
    """The lowering of one function's body (a callee compiled in place has its own, ``for_call``)."""

    def __init__(self, fn, fdef, file, first, tables):
        self.fn, self.fdef, self.file, self.first = fn, fdef, file, first
        self.tables = tables
        self.statements, self.expressions = tables      # looked up once per node: kept at hand
        self.globals = fn.__globals__
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))     # to read them again (reads.py)
        self.closure = {}
        for n, cell in self.cells.items():
            try:
                self.closure[n] = cell.cell_contents
            except ValueError:          # an empty cell (a name the enclosing function binds later)
                pass
        self.names = FreshNames(fdef)
        desugar(fdef, self.names, self._calls_range)
        a = fdef.args
        self.locals = set(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p) \
            | set(assigned_names(fdef.body)) | comprehension_names(fdef.body)
        self.b = None
        self.lowered_args = {}      # id(argument node) -> its value, lowered by container_call
        self.recursive_calls = [0]      # shared with the functions it calls (functions.py)
        self.stack = (fn,)     # functions being compiled, to refuse recursion
        self.params = ()            # the leaf parameters' values (shared with the functions it calls)
        self.unit_axes = None       # parameter value -> its axes of size 1, when specialised on them
        self.written_from = {}      # an array written into (x[i] = v) -> the one it was: same shape
        self.call_site = None       # the user's call that compiles this function in place (for_call)

    def for_call(self, fn, fdef, file, first, called, node):
        """The context of a function compiled in place at the call ``node`` in this one: its own
        names, this one's tables, builder, parameters and count of recursive calls; ``called``
        (the function or the nested def) joins the stack of functions being compiled. Its ops
        are located in its own lines, with the user's call (``Loc.call``) beside them."""
        sub = Context(fn, fdef, file, first, self.tables)
        sub.call_site = self.call_site or self.loc(node)
        sub.stack = self.stack + (called,)
        sub.recursive_calls = self.recursive_calls
        sub.params, sub.unit_axes, sub.written_from = self.params, self.unit_axes, self.written_from
        sub.b = self.b
        return sub

    # ------------------------------------------------------------------ where, and errors
    def loc(self, node):
        """The user's source position of ``node``."""
        return Loc(self.file, self.first + node.lineno - 1, node.col_offset, self.fdef.name, self.call_site)

    def unsupported(self, node, what, hint=None):
        """Refuse ``what`` at ``node``'s line (UnsupportedSyntaxError), with what to write instead."""
        raise UnsupportedSyntaxError(f"srcgrad does not support {what}", self.loc(node), hint)

    def typing_error(self, node, message):
        """Raise TypingError at ``node``'s line."""
        raise TypingError(message, self.loc(node))

    def emit(self, node, prim, operands, attrs=None, name=None):
        """An op made from ``node``: located at its line, a type error said there."""
        self.b.loc = self.loc(node)
        try:
            return self.b.emit(prim, operands, attrs, name=name)
        except TypingError as e:
            self.typing_error(node, e.plain)

    # ------------------------------------------------------------------ names
    def read(self, name, env, node):
        """The value of the local ``name``; refused where it may be unbound."""
        v = env.get(name)
        if isinstance(v, Unbound) or (v is None and name in self.locals):
            raise UnsupportedSyntaxError(
                f"the variable '{name}' may be used before it has a value on some path through the code",
                self.loc(node), f"give '{name}' a value before the `if` or loop that sets it")
        return v

    def resolve_global(self, name, node):
        """What a name that is not a local is bound to: in the closure, the module, the builtins
        (noted, as the compiled code freezes it: reads.py)."""
        if name in self.closure:
            value = self.closure[name]
        elif name in self.globals:
            value = self.globals[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            raise UnsupportedSyntaxError(f"the name '{name}' is not defined", self.loc(node))
        record_name(self.cells, self.globals, name, value)
        return value

    def global_attribute(self, obj, attr, default=None):
        """``obj.attr`` of a module-level object (noted, as resolve_global notes a name)."""
        value = getattr(obj, attr, default)
        record_attribute(obj, attr, value)
        return value

    def global_object(self, node):
        """What a name or a dotted name (np.linalg.det) of module level is bound to at compile
        time; None for anything that reads a local."""
        if self.is_global_name(node):
            return self.resolve_global(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.global_object(node.value)
            return None if base is None else self.global_attribute(base, node.attr)
        return None

    def is_global_name(self, node):
        """Whether ``node`` names a global (read at compile time, its attributes too)."""
        return isinstance(node, ast.Name) and node.id not in self.locals

    def _calls_range(self, name):
        """Whether ``name`` (an ast.Name, called) is the builtin range, as desugar asks."""
        try:
            return self.resolve_global(name.id, name) is builtins.range
        except UnsupportedSyntaxError:
            return False        # said when the call is lowered

    # ------------------------------------------------------------------ dispatch
    def expr_any(self, node, env):
        """The value of an expression, by the handler of its node type: an IR value, or a value
        of the frontend only (a container, a function, a dtype)."""
        handler = self.expressions.get(type(node))
        if handler is None:
            self.unsupported(node, WORDS.get(type(node), f"the expression `{type(node).__name__}`"),
                             WHAT_INSTEAD.get(type(node)))
        return handler(self, node, env)

    def expr(self, node, env):
        """An expression whose value is a number or an array."""
        return self.value(node, self.expr_any(node, env))

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

    def stmt(self, s, env):
        """Lower one statement by the handler of its node type; returns (env, how it ends), as ``body``."""
        handler = self.statements.get(type(s))
        if handler is None:
            self.unsupported(s, f"the statement `{type(s).__name__}`", WHAT_INSTEAD.get(type(s)))
        # ops a handler makes without a node of their own (a conversion, a loop's counter) are
        # located at their statement, not at the one before
        self.b.loc = self.loc(s)
        return handler(self, s, env)

    def body(self, stmts, env):
        """Lower statements; returns (env, how they end): None when control falls through, the
        returned values (a Returned) for a `return`, CONTINUE when the loop iteration ends here."""
        stmts = [s for s in stmts if not _is_docstring_or_pass(s)]
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if isinstance(s, (ast.For, ast.While)):
                check_returns(s)        # desugar left a `return` in a loop only where it is malformed
            k += 1
            if isinstance(s, ast.If) and k < len(stmts) and _may_end([s]) and \
                    not (_ends(s.body) and _ends(s.orelse or [])):
                # an early return or continue (here or in an `if` nested in it): the statements
                # after the `if` belong to each branch that may fall through
                rest = stmts[k:]
                new = ast.If(test=s.test, body=s.body + ([] if _ends(s.body) else rest),
                             orelse=(s.orelse or []) + ([] if _ends(s.orelse or []) else rest))
                ast.copy_location(new, s)
                return self.stmt(new, env)
            env, ret = self.stmt(s, env)
            if ret is not None:
                return env, ret
        return env, None

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

    # ------------------------------------------------------------------ arithmetic on operands
    def coerce(self, node, a, b):
        """Two operands at their common type (arrays: as floats)."""
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

    def arithmetic_operands(self, node, a, b):
        """Scalar operands of arithmetic at their common type; bools compute as ints, as in Python
        (True + True is 2), and as the type rules say."""
        a, b = self.coerce(node, a, b)
        if a.type is BOOL:
            return [self.b.convert(a, I64), self.b.convert(b, I64)]
        return [a, b]

    def number_of(self, node, x, what):
        """``x`` where Python wants a number (``float(x)``, ``math.sin(x)``): a 0-d array's
        element, as numpy converts it; an array of another rank is numpy's TypeError."""
        if not x.type.is_array:
            return x
        if x.type.ndim == 0:
            return self.emit(node, "index", [x])
        self.typing_error(node, f"{what} of a {x.type.ndim}-d {user_name(x.type)}: only 0-dimensional arrays can be "
                                "converted to Python scalars (numpy raises TypeError); index one element")

    def binop(self, node, op, a, b, name=None):
        """``a op b`` (op: a primitive's name, add ... matmul) with Python's rules on numbers and
        numpy's on arrays."""
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

    def negate(self, node, v):
        """-v: arrays compute as floats, a bool as an int (Python's -True is -1)."""
        if v.type.is_array:
            (v,) = self.to_float_array_operands(node, v)
        return self.emit(node, "neg", [self.b.convert(v, I64) if v.type is BOOL else v])


def _is_docstring_or_pass(s):
    return isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                       and isinstance(s.value.value, str))


def _ends(stmts):
    """True when every path through ``stmts`` ends in a return, continue or break."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Continue, ast.Break)):
            return True
        if isinstance(s, ast.If) and s.orelse and _ends(s.body) and _ends(s.orelse):
            return True
    return False


def _may_end(stmts):
    """True when some path through ``stmts`` ends in a return, continue or break of this
    level (one inside a nested loop belongs to that loop)."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Continue, ast.Break)):
            return True
        if isinstance(s, ast.If) and (_may_end(s.body) or _may_end(s.orelse)):
            return True
    return False
