"""Python source → SSA IR with structured control flow, specialised on argument types: the
statements (expressions.py lowers the expressions in them).

The source is read (source.py) and desugared (desugar.py: loop exits as flags) first; then
each statement lowers into ops, SSA-style: names map to values in an ``env``, an ``if`` or a
loop yields the names it rebinds. Names resolve as Python resolves them: parameters and
assigned names are locals; everything else is read once, at compile time, from the closure
or the module globals. ``math`` and ``numpy`` are recognised by identity, not by name.

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

from ..custom import custom_vjp
from ..errors import UnsupportedSyntaxError
from ..ir.core import Builder, Function, Value, if_op
from ..ir.types import BOOL
from .call_table import check_callee
from .desugar import check_returns, desugar
from ..trees import Tree
from .containers import UNKNOWN, Range, describe, flat, leaf_params, refill, static_value, structure
from .expressions import BINOPS, WHAT_INSTEAD, Expressions, Unbound
from .functions import Functions
from .indexing import is_add_at
from .loops import STATIC_OBJECTS, _LIST_METHODS, UNSET, Loops, _assigned_names, _convert, _join, same_static, static_words
from .names import FreshNames
from .numpy_shapes import refuse_layout_dependent_writes
from .source import source_of     # re-exported: api.py imports it from here


class Returned(list):
    """The leaves a `return` returns, with ``tree``: the container they came in (None for one value)."""

    def __init__(self, leaves, tree=None):
        super().__init__(leaves)
        self.tree = tree

    def value(self):
        """The returned value as the frontend holds it: a Tree or one IR value."""
        return self.tree.refill(iter(self)) if self.tree is not None else self[0]


class _ContinueMarker:
    def __repr__(self):
        return "CONTINUE"


CONTINUE = _ContinueMarker()


def lower(fn, arg_types, name=None, unit_axes=None):
    """The IR Function of ``fn`` specialised on ``arg_types`` (a list of compiler types) and, if
    given, ``unit_axes``: for each leaf parameter, the axes of size 1 of an array argument
    (``x.squeeze()`` of an argument needs them; else it raises NeedsUnitAxes)."""
    if isinstance(fn, custom_vjp):
        return _lower_custom(fn, arg_types, name)
    src, file, first = source_of(fn)
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise UnsupportedSyntaxError(f"srcgrad compiles functions defined with `def`, not {type(fdef).__name__}")
    return _Lowerer(fn, fdef, file, first).run(arg_types, name, unit_axes)


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


# numpy's methods that change an array in place, with the rewrite
_IN_PLACE_METHODS = {"sort": "{0} = np.sort({0})", "fill": "{0}[...] = v, or {0} = np.full({0}.shape, v)",
                     "resize": "make a new array of the size you need (np.zeros(n)) and copy into it",
                     "put": "{0}[idx] = v"}


def _comprehension_names(stmts):
    """The names comprehensions bind (local to each comprehension, as in Python 3)."""
    return {n.id for stmt in stmts for c in ast.walk(stmt) if isinstance(c, ast.comprehension)
            for n in ast.walk(c.target) if isinstance(n, ast.Name)}


class _Lowerer(Loops, Functions, Expressions):
    """Lowers one function's body (a callee's, inlined, has its own)."""

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
        self.locals = set(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p) | set(_assigned_names(fdef.body)) \
            | _comprehension_names(fdef.body)
        self.b = None
        self.lowered_args = {}      # id(argument node) -> its value, lowered by container_call
        self.recursive_calls = [0]      # shared with the functions it calls (functions.py)
        self.stack = (fn,)     # functions being compiled, to refuse recursion
        self.params = ()            # the leaf parameters' values (shared with the functions it calls)
        self.unit_axes = None       # parameter value -> its axes of size 1, when specialised on them

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
                                 WHAT_INSTEAD[type(node)])

    def run(self, arg_types, name, unit_axes=None):
        self.check_def()
        a = self.fdef.args
        # in inspect.signature's order; api.py binds defaults and keywords, *args as a tuple, **kwargs a dict
        params = [p.arg for p in a.posonlyargs + a.args + [a.vararg] + a.kwonlyargs + [a.kwarg] if p is not None]
        if len(params) != len(arg_types):
            raise TypeError(f"{self.fdef.name}() takes {len(params)} arguments but {len(arg_types)} were given")
        leaves = []           # a container argument is passed as its leaves, named after its place
        for p, t in zip(params, arg_types):
            leaves += leaf_params(p, t)
        fn = Function(name or self.fdef.name, leaves, self.loc(self.fdef))
        self.params = frozenset(fn.params)
        if unit_axes is not None:
            self.unit_axes = {v: u for v, u in zip(fn.params, unit_axes) if u is not None}
        values = iter(fn.params)
        env = {p: refill(t, values) for p, t in zip(params, arg_types)}
        self.b = Builder(fn.body)
        with self.b:
            env, ret = self.body(self.fdef.body, env)
            if ret is None:
                self.unsupported(self.fdef, "a function without a `return` of a value",
                                 "end the function with `return <value>`")
            self.b.ret(list(ret))
        fn.result_tree = ret.tree
        fn.arg_trees = list(arg_types)
        refuse_layout_dependent_writes(fn)      # numpy_shapes.py: a reshape's view-or-copy must not show
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
        for leaf in flat(value):
            self.value(node, leaf)
        return Returned(flat(value), value if isinstance(value, Tree) else None)

    def stmt(self, s, env):
        if self.made_up(s, env):
            return env, None
        if isinstance(s, ast.Assign):
            value = self.expr_any(s.value, env)
            for t in s.targets:
                self.assign(t, value, env, s)
            return env, None
        if isinstance(s, ast.AugAssign):
            op = BINOPS.get(type(s.op))
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
        if isinstance(s, ast.FunctionDef):
            return self.define(s, env), None
        if isinstance(s, ast.For):
            return self.for_stmt(s, env), None
        if isinstance(s, ast.While):
            return self.while_stmt(s, env), None
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and s.value.func.id == "print" \
                    and self.resolve_global("print", s.value.func) is builtins.print:
                return env, None     # print is allowed and does nothing in compiled code
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) and \
                    s.value.func.attr in _LIST_METHODS and not self.is_global_name(s.value.func.value) and \
                    self.list_method(s, env):
                return env, None
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) and \
                    s.value.func.attr in _IN_PLACE_METHODS and not self.is_global_name(s.value.func.value):
                name = ast.unparse(s.value.func.value)
                self.unsupported(s, f"{ast.unparse(s.value)}, which changes {name} in place",
                                 _IN_PLACE_METHODS[s.value.func.attr].format(name))
            if isinstance(s.value, ast.Call):
                fobj = self.global_object(s.value.func)
                if is_add_at(fobj):          # np.add.at(x, idx, v): frontend/indexing.py
                    self.add_at(s.value, env)
                    return env, None
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
        hint = WHAT_INSTEAD.get(type(s))
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
            env[name] = self.iterable(s.value, env)     # an array, a container, a zip or a range
        elif kind == "range":
            start, stop, step = self.range_bounds(s.value, env)
            env[name] = Range(start, step, self.b.emit("range_len", [start, stop, step], name="n"))
        else:
            return False
        return True

    def assign(self, target, value, env, node):
        if isinstance(target, ast.Name):
            if getattr(value, "name", "") is None and value.owner is not None:
                value.name = target.id
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Tree) and value.kind is dict:
                value = Tree(tuple, [self.key_value(k) for k in value.keys])
            starred = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if not isinstance(value, Tree) or len(value) < len(target.elts) - len(starred) or (
                    not starred and len(value) != len(target.elts)):
                self.typing_error(node, f"cannot unpack {describe(value)} into {len(target.elts)} names")
            items = list(value.items)
            if starred:           # a, *rest = t: rest is a list
                k = starred[0]
                tail = len(target.elts) - k - 1
                items = items[:k] + [Tree(list, items[k:len(items) - tail])] + items[len(items) - tail:]
            for t, v in zip(target.elts, items):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v, env, node)
        elif isinstance(target, ast.Subscript):
            self.setitem(target, value, env, node)
        else:
            self.unsupported(node, f"assigning to {type(target).__name__}")

    # ------------------------------------------------------------------ if
    def if_stmt(self, s, env):
        cond = self.truth(s.test, env)
        decided = static_value(cond)
        if decided is not UNKNOWN:      # a condition on constants only: the other branch is never lowered
            return self.body(s.body if decided else s.orelse, dict(env))
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
            if _shape_of(tret) != _shape_of(eret):
                self.typing_error(s, f"the branches return different things: {_words(tret)} and {_words(eret)}")
            yields = [tret, eret]
            names = leaf_names = ["result"] * len(tret)
        else:
            names = [n for n in assigned if isinstance(tenv.get(n), object) and tenv.get(n) is not None
                     and eenv.get(n) is not None and not isinstance(tenv[n], Unbound)
                     and not isinstance(eenv[n], Unbound)]
            for n in names:
                if isinstance(tenv[n], STATIC_OBJECTS) or isinstance(eenv[n], STATIC_OBJECTS):
                    if not same_static(tenv[n], eenv[n]):
                        what = static_words(tenv[n] if isinstance(tenv[n], STATIC_OBJECTS) else eenv[n])
                        self.unsupported(s, f"{what} '{n}' that an `if` defines or rebinds",
                                         f"choose {what[2:]}s before the `if` (or in an `if` decided while compiling)"
                                         if what == "a dtype" else
                                         "define the functions before the `if` and choose which one to call in it")
            same = [n for n in names if isinstance(tenv[n], STATIC_OBJECTS)]
            names = [n for n in names if n not in same]
            for n in same:
                env[n] = tenv[n]
            for n in names:
                if structure(tenv[n]) != structure(eenv[n]):
                    self.typing_error(s, f"'{n}' is {describe(tenv[n])} in one branch and {describe(eenv[n])} "
                                         "in the other")
            leaf_names = [n for n in names for _ in flat(tenv[n])]
            yields = [[v for n in names for v in flat(tenv[n])], [v for n in names for v in flat(eenv[n])]]
        types = []
        for k, (a, c) in enumerate(zip(*yields)):
            a, c = self.value(s, a), self.value(s, c)
            t = _join(a.type, c.type)
            if t is None:
                self.typing_error(s, f"'{leaf_names[k]}' is {a.type} in one branch and {c.type} in the other")
            # a return slot no branch stores into (an `if` decided while compiling removed the
            # store) stays unused: typed as a bool, as after a loop (loops.py)
            types.append(BOOL if t is UNSET else t)
        for block, ys in ((then, yields[0]), (other, yields[1])):
            with Builder(block, self.loc(s)) as bb:
                bb.yield_([_convert(bb, v, t) for v, t in zip(ys, types)])
        results = self.b.append(if_op(cond, then, other, types, self.loc(s), leaf_names))
        if tret is not None:
            return env, Returned(results, tret.tree)
        values = iter(results)
        for n in names:
            env[n] = refill(tenv[n], values)
        for n in assigned:     # bound on one path only
            if n not in names and n not in same and (n in tenv or n in eenv):
                env[n] = Unbound(n)
        return env, ending

def _shape_of(ret):
    return ret.tree.structure() if ret.tree is not None else len(ret)


def _words(ret):
    return ret.tree.words() if ret.tree is not None else "one value"


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


def _may_end(stmts):
    """True when some path through ``stmts`` ends in a return, continue or break of this
    level (one inside a nested loop belongs to that loop)."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Continue, ast.Break)):
            return True
        if isinstance(s, ast.If) and (_may_end(s.body) or _may_end(s.orelse)):
            return True
    return False
