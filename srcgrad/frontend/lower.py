"""Python source → SSA IR with structured control flow, specialised on argument types.

Names resolve as Python resolves them: parameters and assigned names are locals; everything
else is read once, at compile time, from the closure or the module globals. ``math`` and
``numpy`` are recognised by identity, not by name.

Example:
    >>> def f(x):
    ...     s = 0.0
    ...     for i in range(3):
    ...         s += x * i
    ...     return s
    >>> print(lower(f, [F64]))      # doctest: +SKIP
"""
import ast
import builtins
import inspect

import numpy as np

from ..custom import custom_vjp
from ..errors import TypingError, UnsupportedSyntaxError
from ..ir.core import Block, Builder, Function, Loc, Value, for_op, if_op, while_op
from ..ir.primitives import PRIMITIVES
from ..ir.types import BOOL, F32, F64, I64, Type, type_of, unify, user_name
from .calls import KEYWORD_SPELLINGS, callee, check_callee
from .desugar import break_guard, check_returns, desugar
from .names import FreshNames
from .source import source_of     # re-exported: api.py imports it from here

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

_WHAT_INSTEAD = {
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
    ast.Raise: "check inputs before calling the compiled function",
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


class _ContinueMarker:
    def __repr__(self):
        return "CONTINUE"


CONTINUE = _ContinueMarker()


class _Range:
    """``range(...)`` bound to a name desugar made up (``range0``): not an IR value; its start,
    step and trip count are."""

    def __init__(self, start, step, n):
        self.start, self.step, self.n = start, step, n


def _range_of(node, env):
    """The _Range ``node`` names, if it is the name of one."""
    v = env.get(node.id) if isinstance(node, ast.Name) else None
    return v if isinstance(v, _Range) else None


class _Unbound:
    """A name assigned on some paths only: reading it is an error (Python's UnboundLocalError)."""

    def __init__(self, name):
        self.name = name


def lower(fn, arg_types, name=None):
    """The IR Function of ``fn`` specialised on ``arg_types`` (a list of compiler types)."""
    if isinstance(fn, custom_vjp):
        return _lower_custom(fn, arg_types, name)
    src, file, first = source_of(fn)
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise UnsupportedSyntaxError(f"srcgrad compiles functions defined with `def`, not {type(fdef).__name__}")
    return _Lowerer(fn, fdef, file, first).run(arg_types, name)


def _lower_custom(fobj, arg_types, name):
    """A custom_vjp function on its own: one call op."""
    params = list(inspect.signature(fobj.fun).parameters)
    if len(params) != len(arg_types):
        raise TypeError(f"{fobj.__name__}() takes {len(params)} arguments but {len(arg_types)} were given")
    fn = Function(name or fobj.__name__, list(zip(params, arg_types)))
    result_types = lower(fobj.fun, arg_types).result_types
    with Builder(fn.body) as b:
        out = b.emit("call_custom", fn.params, {"fn": fobj, "result_types": result_types},
                     result_types=result_types, name="y")
        b.ret(out if isinstance(out, list) else [out])
    return fn


def _assigned_names(stmts):
    """Every name a list of statements may bind (assignment targets, for targets)."""
    out = []
    for node in stmts:
        for sub in ast.walk(node):
            targets = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
                targets = [sub.target]
            elif isinstance(sub, ast.For):
                targets = [sub.target]
            for t in targets:
                while isinstance(t, ast.Subscript):      # x[i] = v makes a new version of x
                    t = t.value
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id not in out:
                        out.append(n.id)
    return out


class _Lowerer:
    def __init__(self, fn, fdef, file, first):
        self.fn, self.fdef, self.file, self.first = fn, fdef, file, first
        self.globals = fn.__globals__
        self.closure = {}
        if fn.__closure__:
            for n, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.closure[n] = cell.cell_contents
                except ValueError:
                    pass
        self.names = FreshNames(fdef)
        desugar(fdef, self.names, self.calls_range)
        a = fdef.args
        self.locals = set(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs) | set(_assigned_names(fdef.body))
        self.b = None
        self.stack = (fn,)     # functions being compiled, to refuse recursion

    # ------------------------------------------------------------------ helpers
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

    # ------------------------------------------------------------------ entry
    def check_def(self):
        """Refuse what makes a `def` something other than a plain function, before its body
        could be compiled as if it were one (an `async def` returns a coroutine, a `def` with
        `yield` a generator, whatever its `return` says)."""
        if isinstance(self.fdef, ast.AsyncFunctionDef):
            self.unsupported(self.fdef, "`async def` (calling it makes a coroutine, not a value)",
                             "define the function with a plain `def`")
        for node in _own_nodes(self.fdef.body):
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                word = "yield from" if isinstance(node, ast.YieldFrom) else "yield"
                self.unsupported(node, f"generators (`{word}` makes {self.fdef.name} a generator)",
                                 _WHAT_INSTEAD[type(node)])

    def run(self, arg_types, name):
        self.check_def()
        a = self.fdef.args
        if a.vararg or a.kwarg:
            self.unsupported(self.fdef, "*args and **kwargs", "give every argument a name of its own")
        params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]     # api.py binds defaults and keywords
        if len(params) != len(arg_types):
            raise TypeError(f"{self.fdef.name}() takes {len(params)} arguments but {len(arg_types)} were given")
        fn = Function(name or self.fdef.name, list(zip(params, arg_types)), self.loc(self.fdef))
        env = dict(zip(params, fn.params))
        self.b = Builder(fn.body)
        with self.b:
            env, ret = self.body(self.fdef.body, env)
            if ret is None:
                self.unsupported(self.fdef, "a function without a `return` of a value",
                                 "end the function with `return <value>`")
            self.b.ret(ret)
        return fn

    # ------------------------------------------------------------------ statements
    def body(self, stmts, env):
        """Lower statements; returns (env, how they end): None when control falls through, the
        returned values for a `return`, CONTINUE when the loop iteration ends here."""
        stmts = [s for s in stmts if not _is_docstring_or_pass(s)]
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if isinstance(s, (ast.For, ast.While)):
                check_returns(s)        # desugar left a `return` in a loop only where it is malformed
            k += 1
            if isinstance(s, ast.Return):
                if s.value is None:
                    self.unsupported(s, "`return` without a value", "return the result")
                return env, self.returned(s.value, env)
            if isinstance(s, ast.Continue):
                return env, CONTINUE
            if isinstance(s, ast.If) and k < len(stmts) and _may_end([s]) and \
                    not (_ends(s.body) and _ends(s.orelse or [])):
                # an early return or continue (here or in an `if` nested in it): the statements
                # after the `if` belong to each branch that may fall through
                rest = stmts[k:]
                new = ast.If(test=s.test, body=s.body + ([] if _ends(s.body) else rest),
                             orelse=(s.orelse or []) + ([] if _ends(s.orelse or []) else rest))
                ast.copy_location(new, s)
                return self.if_stmt(new, env)
            env, ret = self.stmt(s, env)
            if ret is not None:
                return env, ret
        return env, None

    def returned(self, node, env):
        value = self.expr_any(node, env)       # `return g(x)` returns all the values g returns
        return value if isinstance(value, list) else [value]

    def stmt(self, s, env):
        if self.made_up(s, env):
            return env, None
        if isinstance(s, ast.Assign):
            value = self.expr_any(s.value, env)
            for t in s.targets:
                self.assign(t, value, env, s)
            return env, None
        if isinstance(s, ast.AugAssign):
            op = _BINOPS.get(type(s.op))
            if isinstance(s.target, ast.Subscript):
                if op is None:
                    self.unsupported(s, f"the operator {type(s.op).__name__}=")
                old = self.subscript(s.target, env)
                self.assign(s.target, self.binop(s, op, old, self.expr(s.value, env)), env, s)
                return env, None
            if not isinstance(s.target, ast.Name):
                self.unsupported(s, f"augmented assignment to {type(s.target).__name__}")
            if op is None:
                self.unsupported(s, f"the operator {type(s.op).__name__}=")
            cur = self.read(s.target.id, env, s.target)
            env[s.target.id] = self.binop(s, op, cur, self.expr(s.value, env), name=s.target.id)
            return env, None
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            self.assign(s.target, self.expr_any(s.value, env), env, s)
            return env, None
        if isinstance(s, ast.If):
            return self.if_stmt(s, env)
        if isinstance(s, ast.For):
            return self.for_stmt(s, env), None
        if isinstance(s, ast.While):
            return self.while_stmt(s, env), None
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and s.value.func.id == "print" \
                    and self.resolve_global("print", s.value.func) is builtins.print:
                return env, None     # print is allowed and does nothing in compiled code
            if isinstance(s.value, ast.Call):
                fobj = self.global_object(s.value.func)
                if fobj is not None:
                    check_callee(self, s.value, fobj, ast.unparse(s.value.func))
            self.unsupported(s, "an expression statement (its value would be thrown away)",
                             "assign the value to a variable, or remove the line")
        if isinstance(s, ast.Assert):
            if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str):
                msg = s.msg.value
            else:
                msg = ast.unparse(s.msg) if s.msg is not None else f"assert {ast.unparse(s.test)}"
            self.emit(s, "assert", [self.truth(s.test, env)], {"message": msg})
            return env, None
        if isinstance(s, (ast.Break, ast.Continue)):
            self.unsupported(s, f"`{type(s).__name__.lower()}` outside a loop")
        hint = _WHAT_INSTEAD.get(type(s))
        self.unsupported(s, f"the statement `{type(s).__name__}`", hint)

    def made_up(self, s, env):
        """Bind a name desugar made up to what is not one plain value: a return slot before its
        loop (None: UNSET, typed by what the returns store), the sequence of ``for row in x`` (an
        array), the range of a ``for`` with ``break`` (its start, step and trip count). False for
        any other statement."""
        if not (isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)):
            return False
        name = s.targets[0].id
        kind = self.names.kind(name)
        if kind == "retval" and isinstance(s.value, ast.Constant) and s.value.value is None:
            env[name] = Value(UNSET, name)
        elif kind == "iter":
            arr = self.expr(s.value, env)
            if not arr.type.is_array:
                self.unsupported(s.value, "a `for` loop over anything but range(...) or an array",
                                 "loop over indices: for i in range(n): ...")
            env[name] = arr
        elif kind == "range":
            start, stop, step = self.range_bounds(s.value, env)
            env[name] = _Range(start, step, self.b.emit("range_len", [start, stop, step], name="n"))
        else:
            return False
        return True

    def assign(self, target, value, env, node):
        if isinstance(target, ast.Name):
            if isinstance(value, list):
                self.unsupported(node, "assigning a tuple to one name", "unpack it: a, b = ...")
            if value.name is None and value.owner is not None:
                value.name = target.id
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, list) or len(value) != len(target.elts):
                self.unsupported(node, "unpacking something other than a tuple of the same length")
            for t, v in zip(target.elts, value):
                self.assign(t, v, env, node)
        elif isinstance(target, ast.Subscript):
            self.setitem(target, value, env, node)
        else:
            self.unsupported(node, f"assigning to {type(target).__name__}")

    def setitem(self, target, value, env, node):
        """x[i, j] = v: a new version of the array; every name bound to the old one sees it."""
        if isinstance(value, list):
            self.unsupported(node, "storing a tuple into an array element")
        if isinstance(target.value, ast.Attribute) or not isinstance(target.value, ast.Name):
            self.unsupported(node, "writing into this expression", "write into a named array: x[i] = v")
        old = self.read(target.value.id, env, target.value)
        if not old.type.is_array:
            self.typing_error(node, f"only arrays can be written into, '{target.value.id}' is {old.type}")
        idx = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        self.refuse_new_axis(idx)
        if any(isinstance(i, ast.Slice) for i in idx) or len(idx) < old.type.ndim:
            spec, bounds = self.slice_spec(idx, env)
            if value.type.is_array:
                (value,) = self.to_float_array_operands(node, value)
            elif old.type.dtype in (F64, F32):
                value = self.b.convert(value, F64)
            new = self.emit(node, "setslice", [old, value] + bounds, {"spec": spec}, name=target.value.id)
            for n, v in list(env.items()):
                if v is old:
                    env[n] = new
            return
        indices = []
        for i in idx:
            v = self.expr(i, env)
            if v.type not in (I64, BOOL):
                self.typing_error(i, f"array indices must be integers, got {v.type}")
            indices.append(v)
        if old.type.dtype in (F64, F32):
            value = self.b.convert(value, F64)
        new = self.emit(node, "setitem", [old, value] + indices, name=target.value.id)
        for n, v in list(env.items()):
            if v is old:
                env[n] = new

    def refuse_new_axis(self, idx):
        for i in idx:
            if self.is_none(i):
                self.unsupported(i, f"a new axis in an index ({ast.unparse(i)}, as in x[:, np.newaxis]): srcgrad has "
                                    "no reshape yet",
                                 "write the broadcast out: np.outer(x, y) for x[:, None] * y, or a loop over the "
                                 "elements into an array made with np.zeros((n, m))")

    def is_none(self, node):
        """Whether ``node`` is None or a global bound to it (np.newaxis)."""
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.Name) and node.id not in self.locals:
            return self.resolve_global(node.id, node) is None
        if isinstance(node, ast.Attribute):
            base = self.global_object(node.value)
            return base is not None and hasattr(base, node.attr) and getattr(base, node.attr) is None
        return False

    def slice_spec(self, idx, env):
        """(spec, bound values) of a subscript with slices: see the 'slice' primitive."""
        spec, bounds = [], []
        for i in idx:
            if isinstance(i, ast.Slice):
                parts = (i.lower, i.upper, i.step)
                spec.append(("s",) + tuple(p is not None for p in parts))
                for p in parts:
                    if p is not None:
                        v = self.expr(p, env)
                        if v.type not in (I64, BOOL):
                            self.typing_error(p, f"slice bounds must be integers, got {v.type}")
                        bounds.append(v)
            else:
                v = self.expr(i, env)
                if v.type not in (I64, BOOL):
                    self.typing_error(i, f"array indices must be integers, got {v.type}")
                spec.append(("i",))
                bounds.append(v)
        return tuple(spec), bounds

    def read(self, name, env, node):
        v = env.get(name)
        if isinstance(v, _Unbound) or (v is None and name in self.locals):
            raise UnsupportedSyntaxError(
                f"the variable '{name}' may be used before it has a value on some path through the code",
                self.loc(node), f"give '{name}' a value before the `if` or loop that sets it")
        return v

    # ------------------------------------------------------------------ if
    def if_stmt(self, s, env):
        cond = self.truth(s.test, env)
        # names made up for a loop inside a branch (its flags, counters) stay in that branch
        assigned = [n for n in _assigned_names(s.body + s.orelse) if n in env or self.names.kind(n) is None]
        (then, (tenv, tret)), (other, (eenv, eret)) = (self.lowered_apart(lambda: self.body(stmts, dict(env)))
                                                       for stmts in (s.body, s.orelse))
        ending = None
        if tret is CONTINUE and eret is CONTINUE:
            ending = CONTINUE
        if tret is CONTINUE or eret is CONTINUE:
            if isinstance(tret, list) or isinstance(eret, list):
                self.unsupported(s, "`return` inside a loop (yet)", "set a variable and return after the loop")
            tret = eret = None
        if (tret is None) != (eret is None):       # nothing follows the `if` to return a value
            self.unsupported(s, "a path through the function that ends without `return` (Python would return None)",
                             "return a value on every path")
        if tret is not None:
            yields = [tret, eret]
            names = ["result"] * len(tret)
            if len(tret) != len(eret):
                self.unsupported(s, "branches that return different numbers of values")
        else:
            names = [n for n in assigned if isinstance(tenv.get(n), object) and tenv.get(n) is not None
                     and eenv.get(n) is not None and not isinstance(tenv[n], _Unbound)
                     and not isinstance(eenv[n], _Unbound)]
            yields = [[tenv[n] for n in names], [eenv[n] for n in names]]
        types = []
        for k, (a, c) in enumerate(zip(*yields)):
            t = _join(a.type, c.type)
            if t is None:
                self.typing_error(s, f"'{names[k]}' is {a.type} in one branch and {c.type} in the other")
            types.append(t)
        for block, ys in ((then, yields[0]), (other, yields[1])):
            with Builder(block, self.loc(s)) as bb:
                bb.yield_([_convert(bb, v, t) for v, t in zip(ys, types)])
        results = self.b.append(if_op(cond, then, other, types, self.loc(s), names))
        if tret is not None:
            return env, results
        for n, r in zip(names, results):
            env[n] = r
        for n in assigned:     # bound on one path only
            if n not in names and (n in tenv or n in eenv):
                env[n] = _Unbound(n)
        return env, ending

    def truth(self, node, env):
        v = self.expr(node, env)
        self.scalar_truth(node, v, "a condition")
        if v.type is not BOOL:
            v = self.emit(node, "to_bool", [v])
        return v

    # ------------------------------------------------------------------ loops
    def _carried(self, body_stmts, env, exclude=()):
        names = [n for n in _assigned_names(body_stmts) if n in env and not isinstance(env[n], _Unbound)
                 and n not in exclude]
        return names

    def widened(self, carried, env, lower_regions):
        """Lower a loop's regions until its carried types are a fixpoint: ``lower_regions(types)``
        lowers them once with the carried variables at ``types`` and returns (regions, the types
        the body leaves them at). A body may widen a type (s = 0 then s += 0.5: an int that
        becomes a float is a float throughout), and one widening may feed the next (e = d;
        d = c; ...); each round widens at least one type up bool < int < float, so this ends
        after at most two rounds per carried name. Returns (types, init values, regions)."""
        types = [env[n].type for n in carried]
        while True:
            regions, new_types = lower_regions(types)
            if new_types == types:
                return types, [_convert(self.b, env[n], t) for n, t in zip(carried, types)], regions
            types = new_types

    def for_stmt(self, s, env):
        """A `for` over a range without `break` (desugar rewrote the others)."""
        if s.orelse:
            self.unsupported(s, "`for ... else`")
        if not isinstance(s.target, ast.Name):
            self.unsupported(s.target, "a loop variable that is not a plain name")
        start, stop, step = self.range_bounds(s.iter, env)
        var = s.target.id
        carried = self._carried(s.body, env, exclude=(var,))

        def lower_regions(types):
            index, args = Value(I64, var), [Value(t, n) for n, t in zip(carried, types)]
            benv = {**env, var: index, **dict(zip(carried, args))}
            body, new_types = self.lowered_apart(lambda: self.loop_body(s, benv, carried, types), Block([index] + args))
            return [body], new_types
        types, inits, (body,) = self.widened(carried, env, lower_regions)
        env = self.after_loop(for_op(start, stop, step, inits, body, types, self.loc(s), carried), s, env, carried)
        env[var] = _Unbound(var)
        return env

    def range_bounds(self, call, env):
        """(start, stop, step) of a call ``range(...)``, as ints."""
        args = [self.expr(a, env) for a in call.args]
        for a, node in zip(args, call.args):
            if a.type not in (I64, BOOL):
                self.typing_error(node, f"range() takes integers, got {a.type}")
        args = [self.b.convert(a, I64) for a in args]
        if len(args) == 1:
            return self.b.const(0), args[0], self.b.const(1)
        if len(args) == 2:
            return args[0], args[1], self.b.const(1)
        if len(args) != 3:
            self.unsupported(call, "range() with more than 3 arguments")
        return tuple(args)

    def while_stmt(self, s, env):
        if s.orelse:
            self.unsupported(s, "`while ... else`")
        carried = self._carried(s.body, env)

        def lower_regions(types):
            targs, bargs = ([Value(t, n) for n, t in zip(carried, types)] for _ in range(2))
            tenv, benv = {**env, **dict(zip(carried, targs))}, {**env, **dict(zip(carried, bargs))}
            test, _ = self.lowered_apart(lambda: self.b.yield_([self.loop_test(s, tenv)]), Block(targs))
            body, new_types = self.lowered_apart(lambda: self.loop_body(s, benv, carried, types), Block(bargs))
            return [test, body], new_types
        types, inits, (test, body) = self.widened(carried, env, lower_regions)
        return self.after_loop(while_op(inits, test, body, types, self.loc(s), carried), s, env, carried)

    def loop_body(self, s, benv, carried, types):
        """Lower one pass over a loop body whose carried variables have ``types``; it yields
        them when the body keeps their types. Returns the types widened by the body."""
        benv, ret = self.body(s.body, benv)
        if isinstance(ret, list):
            self.unsupported(s, "`return` inside a loop (yet)", "set a variable and return after the loop")
        outs = [self.read(n, benv, s) for n in carried]
        # a value still unset after the body (a return it never reaches) is typed as a bool
        new_types = [BOOL if t is UNSET else t for t in (_join(t, o.type) for t, o in zip(types, outs))]
        if new_types == types:
            self.b.yield_([_convert(self.b, o, t) for o, t in zip(outs, types)])
        for k, t in enumerate(new_types):
            if t is None:
                self.typing_error(s, f"'{carried[k]}' changes type in the loop from {types[k]} to {outs[k].type}")
        return new_types

    def after_loop(self, op, s, env, carried):
        """Append the loop op; its results become the carried names' values. Names first bound in
        the body are unbound after it (zero trips)."""
        env = dict(env)
        env.update(zip(carried, self.b.append(op)))
        for n in _assigned_names(s.body):
            if n not in carried and n not in env:
                env[n] = _Unbound(n)
        return env

    def loop_test(self, s, env):
        """A while loop's condition; under a break flag, the condition is not evaluated once set."""
        flag, test = break_guard(s.test, self.names)
        if flag is None:
            return self.truth(test, env)
        then = Block()
        with Builder(then, self.loc(s)) as bb:
            bb.yield_([bb.const(False)])
        other, _ = self.lowered_apart(lambda: self.b.yield_([self.truth(test, env)]), loc=self.loc(s))
        return self.b.append(if_op(self.read(flag.id, env, s), then, other, [BOOL], self.loc(s)))[0]

    # ------------------------------------------------------------------ expressions
    def expr_any(self, node, env):
        """An expression that may be a tuple (for unpacking)."""
        if isinstance(node, ast.Tuple):
            return [self.expr(e, env) for e in node.elts]
        if isinstance(node, ast.Call):
            return self.call(node, env)
        return self.expr(node, env)

    def expr(self, node, env):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)) and not isinstance(node.value, complex):
                return self.b.const(node.value)
            self.unsupported(node, f"the constant {node.value!r}", "use numbers only")
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.read(node.id, env, node)
            return self.constant(self.resolve_global(node.id, node), node)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                self.unsupported(node, f"the operator {type(node.op).__name__}")
            return self.binop(node, op, self.expr(node.left, env), self.expr(node.right, env))
        if isinstance(node, ast.UnaryOp):
            v = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                if v.type.is_array:
                    (v,) = self.to_float_array_operands(node, v)
                return self.emit(node, "neg", [self.b.convert(v, I64) if v.type is BOOL else v])
            if isinstance(node.op, ast.UAdd):
                return self.b.convert(v, I64) if v.type is BOOL else v
            if isinstance(node.op, ast.Not):
                self.scalar_truth(node, v, "`not`")
                return self.emit(node, "not", [self.b.convert(v, BOOL)])
            self.unsupported(node, "the operator ~")
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _CMPOPS:
                    self.unsupported(node, f"the comparison {type(op).__name__}")
            return self.compare_chain(node, 0, self.expr(node.left, env), env)
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, node.values, env)
        if isinstance(node, ast.IfExp):
            return self.if_expr(node, env)
        if isinstance(node, ast.Call):
            value = self.call(node, env)
            if isinstance(value, list):
                self.unsupported(node, f"using the {len(value)} values {ast.unparse(node.func)} returns as one value",
                                 f"unpack them first (one name per value: a, b, ... = {ast.unparse(node)})")
            return value
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.Attribute) and node.attr in ("T", "size") and not (
                isinstance(node.value, ast.Name) and node.value.id not in self.locals):
            arr = self.expr(node.value, env)
            if not arr.type.is_array:
                self.typing_error(node, f"only arrays have .{node.attr}, not {arr.type}")
            return self.emit(node, "transpose" if node.attr == "T" else "size", [arr])
        if isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id not in self.locals:
                obj = self.resolve_global(base.id, base)
                if hasattr(obj, node.attr):
                    return self.constant(getattr(obj, node.attr), node)
            self.unsupported(node, f"the attribute `.{node.attr}` here", "x.shape[k] and module constants work")
        hint = _WHAT_INSTEAD.get(type(node))
        self.unsupported(node, _WORDS.get(type(node), f"the expression `{type(node).__name__}`"), hint)

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

    def scalar_truth(self, node, v, where):
        if v.type.is_array:
            self.typing_error(node, f"an array has no single truth value for {where} (numpy raises ValueError): "
                                    "test one element, or a reduction such as np.max(x) > 0")

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
            if op == "matmul":
                return self.emit(node, "matmul", self.to_float_array_operands(node, a, b), name=name)
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
        self.unsupported(node, f"using {type(obj).__name__} {getattr(obj, '__name__', '')!s} as a value",
                         "numbers and arrays can be used as values; functions can be called")

    def call(self, node, env):
        if len(node.args) == 1 and _range_of(node.args[0], env) is not None:
            return _range_of(node.args[0], env).n          # len(range0)
        fobj = self.global_object(node.func)
        plain_function = inspect.isfunction(fobj) and not isinstance(fobj, custom_vjp)
        if node.keywords and not plain_function and not (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in KEYWORD_SPELLINGS):
            self.unsupported(node, "keyword arguments in calls (yet)")
        if fobj is None and isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            arr = self.expr(node.func.value, env)
            if not arr.type.is_array:
                self.typing_error(node, f".copy() needs an array, got {arr.type}")
            return self.emit(node, "copy", [arr])
        called = ast.unparse(node.func)         # the user's spelling: np.linalg.det, math.gamma
        if fobj is None:
            self.unsupported(node, f"calling {called}", "call math/numpy functions, plain module-level functions "
                                                         "or x.copy(); for an array method write the numpy function: "
                                                         "np.sum(x), not x.sum()")
        check_callee(self, node, fobj, called)
        entry = callee(fobj)
        if entry is not None:
            args = [self.expr(a, env) for a in node.args[1 if entry.shape_first else 0:]]
            return entry.lower(self, node, [None] + args if entry.shape_first else args, env)
        args = [self.expr(a, env) for a in node.args]
        if isinstance(fobj, custom_vjp):
            return self.custom_call(node, fobj, args)
        if inspect.isfunction(fobj):
            return self.inline(node, fobj, args, {k.arg: self.expr(k.value, env) for k in node.keywords})
        self.unsupported(node, f"calling {called} with these arguments (yet)",
                         "math/numpy elementary functions, abs, min, max, float, int, bool, len and plain "
                         "Python functions work")

    def global_object(self, node):
        """What a name or a dotted name (np.linalg.det) of module level is bound to at compile
        time; None for anything that reads a local."""
        if isinstance(node, ast.Name) and node.id not in self.locals:
            return self.resolve_global(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.global_object(node.value)
            return None if base is None else getattr(base, node.attr, None)
        return None

    def custom_call(self, node, fobj, args):
        """A call to a ``custom_vjp`` function: kept as a call; its vjp gives the gradient."""
        if fobj.vjp is None:
            self.unsupported(node, f"calling custom_vjp function {fobj.__name__} before its vjp is defined",
                             f"decorate its derivative with @{fobj.__name__}.defvjp")
        result_types = lower(fobj.fun, [a.type for a in args]).result_types
        self.b.loc = self.loc(node)
        out = self.b.emit("call_custom", args, {"fn": fobj, "result_types": result_types},
                          result_types=result_types)
        return out

    def inline(self, node, fobj, args, keywords=None):
        """A call to a plain Python function: its body is compiled in place (and so differentiated).
        Arguments bind to parameters as in Python: by position, by keyword, else the default
        (read at compile time, like a global)."""
        if fobj in self.stack:
            self.unsupported(node, f"recursion ({fobj.__name__} calls itself)", "write the recursion as a loop")
        src, file, first = source_of(fobj)
        fdef = ast.parse(src).body[0]
        sub = _Lowerer(fobj, fdef, file, first)
        sub.stack = self.stack + (fobj,)
        sub.b = self.b
        sub.check_def()
        a = fdef.args
        if a.vararg or a.kwarg:
            sub.unsupported(fdef, "*args and **kwargs in a called function", "give every argument a name of its own")
        try:
            bound = inspect.signature(fobj).bind(*args, **(keywords or {}))
        except TypeError as e:
            self.typing_error(node, f"{fobj.__name__}(): {e}")
        values = {}
        for name, p in inspect.signature(fobj).parameters.items():
            values[name] = bound.arguments[name] if name in bound.arguments else self.constant(p.default, node)
        _, ret = sub.body(fdef.body, values)
        if ret is None:
            sub.unsupported(fdef, "a called function that returns nothing", "return a value")
        return ret[0] if len(ret) == 1 else list(ret)

    def subscript(self, node, env):
        r = _range_of(node.value, env)
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
        arr = self.expr(node.value, env)
        if not arr.type.is_array:
            self.typing_error(node, f"only arrays can be indexed, not {arr.type}")
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.refuse_new_axis(idx)
        if any(isinstance(i, ast.Slice) for i in idx) or len(idx) < arr.type.ndim:
            spec, bounds = self.slice_spec(idx, env)
            return self.emit(node, "slice", [arr] + bounds, {"spec": spec})
        indices = []
        for k, i in enumerate(idx):
            v = self.expr(i, env)
            if v.type not in (I64, BOOL):
                self.typing_error(i, f"array indices must be integers, got {v.type}")
            indices.append(v)
        return self.emit(node, "index", [arr] + indices, {"wrap": True})


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


def _is_docstring_or_pass(s):
    return isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                       and isinstance(s.value.value, str))


def _own_nodes(stmts):
    """The nodes of a function body, without those of functions and classes defined in it."""
    for node in stmts:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(ast.iter_child_nodes(node))


def _ends(stmts):
    """True when every path through ``stmts`` ends in a return, continue or break."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Continue, ast.Break)):
            return True
        if isinstance(s, ast.If) and s.orelse and _ends(s.body) and _ends(s.orelse):
            return True
    return False


# The type of the values a `return` inside a loop stores before any is stored: they take
# the type of what is returned (an int, an array), as if the first assignment were before
# the loop; where one is read unset, it reads a zero of that type (the flag says it is unused).
UNSET = Type("unset", None)


def _join(a, b):
    """``unify`` with UNSET below every type."""
    return b if a is UNSET else a if b is UNSET else unify(a, b)


def _convert(b, v, t):
    """``v`` converted to ``t`` by builder ``b``; an UNSET value becomes a zero of type ``t``."""
    if v.type is not UNSET:
        return b.convert(v, t)
    if t.is_array:
        return b.emit("full", [b.const(0)] * t.ndim, {"value": 0.0, "dtype": t.dtype})
    return b.const(0, t)


def _may_end(stmts):
    """True when some path through ``stmts`` ends in a return, continue or break of this
    level (one inside a nested loop belongs to that loop)."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Continue, ast.Break)):
            return True
        if isinstance(s, ast.If) and (_may_end(s.body) or _may_end(s.orelse)):
            return True
    return False
