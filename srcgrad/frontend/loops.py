"""Loops, lowered: ``for`` over a range (a ``for`` op of the IR, or run while lowering when its
body indexes a container with the counter), ``while``, and the loops the frontend makes up
for ``sum(... for ...)`` and ``np.array([... for ...])`` over run-time ranges. A loop carries
the variables its body rebinds, a container as its leaves, their types widened to a fixpoint.

Example:
    >>> def f(x, n):
    ...     s = 0
    ...     for i in range(n):
    ...         s += x * i          # s is an int widened to a float: a float throughout
    ...     return s
"""
import ast

from ..ir.core import Block, Builder, Value, for_op, if_op, while_op
from ..ir.types import BOOL, F64, I64, Type, unify
from ..trees import Tree
from .containers import Zipped, constant_int, describe, flat, leaf_params, refill, structure
from .desugar import break_guard
from .expressions import Unbound
from .functions import FunctionRef, NestedFunction
from .dtypes import DType

_LIST_METHODS = ("append", "extend", "insert")
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
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub.name not in out:
                out.append(sub.name)
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call) and isinstance(
                    sub.value.func, ast.Attribute) and sub.value.func.attr in _LIST_METHODS:
                targets = [sub.value.func.value]           # l.append(v) makes a new version of l
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call) and sub.value.args and \
                    isinstance(sub.value.func, ast.Attribute) and sub.value.func.attr == "at":
                targets = sub.value.args[:1]        # np.add.at(x, idx, v) makes a new version of x
            for t in targets:
                while isinstance(t, ast.Subscript):      # x[i] = v makes a new version of x
                    t = t.value
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id not in out:
                        out.append(n.id)
    return out


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


# values known only while compiling: they are never carried or merged, only passed along
STATIC_OBJECTS = (NestedFunction, FunctionRef, DType)


def same_static(a, b):
    """Whether two functions or dtypes are the same one (a nested def read twice, a global read twice)."""
    if isinstance(a, NestedFunction) and isinstance(b, NestedFunction):
        return a.fdef is b.fdef
    if isinstance(a, FunctionRef) and isinstance(b, FunctionRef):
        return a.obj is b.obj
    return a is b


def static_words(v):
    return "a dtype" if isinstance(v, DType) else "a function"


class Loops:
    """The loop statements (a mixin of lower._Lowerer)."""

    def _carried(self, body_stmts, env, exclude=()):
        """The variables a loop carries, flattened: a container carries each of its leaves."""
        names = [n for n in _assigned_names(body_stmts) if n in env and not isinstance(env[n], Unbound)
                 and n not in exclude and not isinstance(env[n], STATIC_OBJECTS)]
        return _Carried(names, env)

    def widened(self, carried, env, lower_regions):
        """Lower a loop's regions until its carried types are a fixpoint: ``lower_regions(types)``
        lowers them once with the carried variables at ``types`` and returns (regions, the types
        the body leaves them at). A body may widen a type (s = 0 then s += 0.5: an int that
        becomes a float is a float throughout), and one widening may feed the next (e = d;
        d = c; ...); each round widens at least one type up bool < int < float, so this ends
        after at most two rounds per carried name. Returns (types, init values, regions)."""
        types = [v.type for v in carried.inits]
        while True:
            regions, new_types = lower_regions(types)
            if new_types == types:
                return types, [_convert(self.b, v, t) for v, t in zip(carried.inits, types)], regions
            types = new_types

    def for_stmt(self, s, env):
        """A `for` over a range without `break` (desugar rewrote the others)."""
        if s.orelse:
            self.unsupported(s, "`for ... else`")
        if not isinstance(s.target, ast.Name):
            self.unsupported(s.target, "a loop variable that is not a plain name")
        start, stop, step = self.range_bounds(s.iter, env)
        var = s.target.id
        trips = self.static_trips(s, (start, stop, step), env)
        if trips is not None:
            return self.unrolled(s, trips, env)
        carried = self._carried(s.body, env, exclude=(var,))

        def lower_regions(types):
            index, args = Value(I64, var), [Value(t, n) for n, t in zip(carried.leaf_names, types)]
            benv = {**env, var: index, **carried.bind(args)}
            body, new_types = self.lowered_apart(lambda: self.loop_body(s, benv, carried, types), Block([index] + args))
            return [body], new_types
        types, inits, (body,) = self.widened(carried, env, lower_regions)
        env = self.after_loop(for_op(start, stop, step, inits, body, types, self.loc(s), carried.leaf_names), s, env,
                              carried)
        env[var] = Unbound(var)
        return env

    def static_trips(self, s, bounds, env):
        """The values of a `for`'s counter when the loop must run while lowering: its range is
        constant and its body indexes (or writes) a container with the counter. Else None."""
        ks = [constant_int(v) for v in bounds]
        if None in ks or ks[2] == 0:
            return None
        var = s.target.id
        for node in (n for stmt in s.body for n in ast.walk(stmt)):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                    isinstance(env.get(node.value.id), (Tree, Zipped)) and \
                    any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(node.slice)):
                return range(*ks)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in _LIST_METHODS and isinstance(node.func.value, ast.Name) and \
                    isinstance(env.get(node.func.value.id), Tree):
                return range(*ks)          # a list that grows: its length must be known while compiling
        return None

    def unrolled(self, s, trips, env):
        """A `for` over a container, run while lowering: the body once per item."""
        var = s.target.id
        env = dict(env)
        for k in trips:
            env[var] = self.b.const(k, name=var)
            env, ret = self.body(s.body, env)
            if isinstance(ret, list):
                self.unsupported(s, "`return` inside a loop over a list or tuple",
                                 "set a variable and return after the loop")
        if not trips:
            env[var] = Unbound(var)
        return env

    def runtime_sum(self, node, gen, g, seq, env):
        """sum(elt for target in seq if ...) over a range or an array known only at run time:
        a loop ``acc = 0; for k in range(len(seq)): target = seq[k]; if ...: acc = acc + elt``."""
        acc, seq_name, k = self.names("total"), self.names("iter"), self.names("index")
        self.locals |= {acc, seq_name, k}

        def name(n, store=False):
            return ast.copy_location(ast.Name(id=n, ctx=ast.Store() if store else ast.Load()), node)
        add = ast.Assign(targets=[name(acc, True)], value=ast.BinOp(left=name(acc), op=ast.Add(), right=gen.elt))
        body = [ast.copy_location(add, gen.elt)]
        for cond in reversed(g.ifs):
            body = [ast.copy_location(ast.If(test=cond, body=body, orelse=[]), cond)]
        take = ast.Assign(targets=[g.target], value=ast.Subscript(value=name(seq_name), slice=name(k), ctx=ast.Load()))
        count = ast.Call(func=name("len"), args=[name(seq_name)], keywords=[])
        loop = ast.For(target=name(k, True), iter=ast.Call(func=name("range"), args=[count], keywords=[]),
                       body=[ast.copy_location(take, node)] + body, orelse=[])
        ast.fix_missing_locations(ast.copy_location(loop, node))
        inner = {**env, seq_name: seq, acc: self.b.const(0)}
        return self.for_stmt(loop, inner)[acc]

    def runtime_array(self, node, gen, env):
        """np.array([elt for target in seq]) over a range or an array known only at run time: an
        array of len(seq) numbers filled by a loop (``out[k] = elt``). None when ``seq`` is known
        while compiling (the container is then built as a list)."""
        if len(gen.generators) != 1:
            return None
        g = gen.generators[0]
        seq = self.iterable(g.iter, env)
        if self.static_items(g.iter, seq) is not None:
            return None
        if g.ifs:
            self.unsupported(node, "np.array of a comprehension with `if` over a range or array known only at run "
                                   "time (its length is not known)", "compute the values for every item and "
                                                                      "select with np.where")
        probe = {**env}
        self.bind_target(g.target, self.item_at(node, seq, self.b.const(0)), probe, node)
        _, elt = self.lowered_apart(lambda: self.expr(gen.elt, probe))       # its type only
        if elt.type.is_array:
            self.unsupported(node, "np.array of a comprehension of arrays over a range known only at run time",
                             "allocate the 2-D array with np.zeros((n, m)) and fill its rows in a loop")
        out, seq_name, k = self.names("array"), self.names("iter"), self.names("index")
        self.locals |= {out, seq_name, k}

        def name(n, store=False):
            return ast.copy_location(ast.Name(id=n, ctx=ast.Store() if store else ast.Load()), node)
        put = ast.Assign(targets=[ast.Subscript(value=name(out), slice=name(k), ctx=ast.Store())], value=gen.elt)
        take = ast.Assign(targets=[g.target], value=ast.Subscript(value=name(seq_name), slice=name(k), ctx=ast.Load()))
        count = ast.Call(func=name("len"), args=[name(seq_name)], keywords=[])
        loop = ast.For(target=name(k, True), iter=ast.Call(func=name("range"), args=[count], keywords=[]),
                       body=[ast.copy_location(take, node), ast.copy_location(put, gen.elt)], orelse=[])
        ast.fix_missing_locations(ast.copy_location(loop, node))
        dtype = F64 if elt.type is F64 else elt.type
        start = self.emit(node, "full", [self.seq_len(node, seq)], {"value": 0, "dtype": dtype}, name=out)
        return self.for_stmt(loop, {**env, seq_name: seq, out: start})[out]

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
            targs, bargs = ([Value(t, n) for n, t in zip(carried.leaf_names, types)] for _ in range(2))
            tenv, benv = {**env, **carried.bind(targs)}, {**env, **carried.bind(bargs)}
            test, _ = self.lowered_apart(lambda: self.b.yield_([self.loop_test(s, tenv)]), Block(targs))
            body, new_types = self.lowered_apart(lambda: self.loop_body(s, benv, carried, types), Block(bargs))
            return [test, body], new_types
        types, inits, (test, body) = self.widened(carried, env, lower_regions)
        return self.after_loop(while_op(inits, test, body, types, self.loc(s), carried.leaf_names), s, env, carried)

    def loop_body(self, s, benv, carried, types):
        """Lower one pass over a loop body whose carried variables have ``types``; it yields
        them when the body keeps their types. Returns the types widened by the body."""
        before = dict(benv)
        benv, ret = self.body(s.body, benv)
        if isinstance(ret, list):
            self.unsupported(s, "`return` inside a loop (yet)", "set a variable and return after the loop")
        for n in _assigned_names(s.body):
            old, new = before.get(n), benv.get(n)
            if (isinstance(old, STATIC_OBJECTS) or isinstance(new, STATIC_OBJECTS)) and old is not None \
                    and not isinstance(old, Unbound) and not same_static(old, new):
                self.unsupported(s, f"{static_words(old if isinstance(old, STATIC_OBJECTS) else new)} '{n}' that a "
                                    "loop rebinds", "choose it before the loop (or in an `if` decided while "
                                                    "compiling); a loop can only change numbers and arrays")
        outs = carried.leaves(benv, self, s)
        # a value still unset after the body (a return it never reaches) is typed as a bool
        new_types = [BOOL if t is UNSET else t for t in (_join(t, o.type) for t, o in zip(types, outs))]
        if new_types == types:
            self.b.yield_([_convert(self.b, o, t) for o, t in zip(outs, types)])
        for k, t in enumerate(new_types):
            if t is None:
                self.typing_error(s, f"'{carried.leaf_names[k]}' changes type in the loop from {types[k]} to "
                                     f"{outs[k].type}")
        return new_types

    def after_loop(self, op, s, env, carried):
        """Append the loop op; its results become the carried names' values. Names first bound in
        the body are unbound after it (zero trips)."""
        env = dict(env)
        env.update(carried.bind(self.b.append(op)))
        for n in _assigned_names(s.body):
            if n not in carried.names and n not in env:
                env[n] = Unbound(n)
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


class _Carried:
    """The variables a loop carries, as the loop op sees them: each number or array, a
    container's leaves one by one (its structure must stay the same through the loop)."""

    def __init__(self, names, env):
        self.names = names
        self.templates = [env[n] for n in names]
        self.inits = [v for n in names for v in flat(env[n])]
        self.leaf_names = [leaf for n, t in zip(names, self.templates) for leaf, _ in leaf_params(n, t)]

    def bind(self, values):
        """name -> value (a container rebuilt) for the leaves ``values``."""
        it = iter(values)
        return {n: refill(t, it) for n, t in zip(self.names, self.templates)}

    def leaves(self, env, lw, s):
        out = []
        for n, t in zip(self.names, self.templates):
            v = lw.read(n, env, s)
            if structure(v) != structure(t):
                lw.typing_error(s, f"'{n}' is {describe(t)} before the loop and {describe(v)} after its body: a "
                                   "container keeps its structure through a loop whose trip count is known only "
                                   "at run time", )
            out += flat(v)
        return out


