"""Loops, lowered: ``for`` over a range (a ``for`` op of the IR, or run while lowering when its
body indexes a container with the counter) and ``while``. A loop carries the variables its
body rebinds, a container as its leaves, their types widened to a fixpoint. (The loops the
frontend makes up for ``sum(... for ...)`` and ``np.array([... for ...])`` over run-time
ranges are containers.py's; they come here through ``lw.stmt``.)

The statement handlers are ``for_stmt`` and ``while_stmt``, each returning (env, None).

Example:
    >>> def f(x, n):
    ...     s = 0
    ...     for i in range(n):
    ...         s += x * i          # s is an int widened to a float: a float throughout
    ...     return s
"""
import ast

from ..ir.core import Block, Builder, Value, for_op, if_op, while_op
from ..ir.types import BOOL, I64
from ..trees import Tree
from .containers import Zipped, constant_int, describe, flat, leaf_params, range_bounds, refill, structure
from .desugar import break_guard
from .expressions import truth
from .scope import LIST_METHODS, assigned_names
from .values import STATIC_OBJECTS, UNSET, Unbound, convert_or_zero, join_types, same_static, static_words


def for_stmt(lw, s, env):
    """A `for` over a range without `break` (desugar rewrote the others): a ``for`` op, or the
    body run while lowering (``static_trips``)."""
    if s.orelse:
        lw.unsupported(s, "`for ... else`")
    if not isinstance(s.target, ast.Name):
        lw.unsupported(s.target, "a loop variable that is not a plain name")
    start, stop, step = range_bounds(lw, s.iter, env)
    var = s.target.id
    trips = _static_trips(lw, s, (start, stop, step), env)
    if trips is not None:
        return _unrolled(lw, s, trips, env), None
    carried = _carried(lw, s.body, env, exclude=(var,))

    def lower_regions(types):
        index, args = Value(I64, var), [Value(t, n) for n, t in zip(carried.leaf_names, types)]
        benv = {**env, var: index, **carried.bind(args)}
        body, new_types = lw.lowered_apart(lambda: _loop_body(lw, s, benv, carried, types), Block([index] + args))
        return [body], new_types
    types, inits, (body,) = _widened(lw, carried, env, lower_regions)
    env = _after_loop(lw, for_op(start, stop, step, inits, body, types, lw.loc(s), carried.leaf_names), s, env,
                     carried)
    env[var] = Unbound(var)
    return env, None


def while_stmt(lw, s, env):
    """A `while` loop: a ``while`` op (desugar turned its `break`s into a flag in the test)."""
    if s.orelse:
        lw.unsupported(s, "`while ... else`")
    carried = _carried(lw, s.body, env)

    def lower_regions(types):
        targs, bargs = ([Value(t, n) for n, t in zip(carried.leaf_names, types)] for _ in range(2))
        tenv, benv = {**env, **carried.bind(targs)}, {**env, **carried.bind(bargs)}
        test, _ = lw.lowered_apart(lambda: lw.b.yield_([_loop_test(lw, s, tenv)]), Block(targs))
        body, new_types = lw.lowered_apart(lambda: _loop_body(lw, s, benv, carried, types), Block(bargs))
        return [test, body], new_types
    types, inits, (test, body) = _widened(lw, carried, env, lower_regions)
    return _after_loop(lw, while_op(inits, test, body, types, lw.loc(s), carried.leaf_names), s, env, carried), None


def _carried(lw, body_stmts, env, exclude=()):
    """The variables a loop carries, flattened: a container carries each of its leaves."""
    names = [n for n in assigned_names(body_stmts) if n in env and not isinstance(env[n], Unbound)
             and n not in exclude and not isinstance(env[n], STATIC_OBJECTS)]
    return _Carried(names, env)


def _widened(lw, carried, env, lower_regions):
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
            return types, [convert_or_zero(lw.b, v, t) for v, t in zip(carried.inits, types)], regions
        types = new_types


def _static_trips(lw, s, bounds, env):
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
                node.func.attr in LIST_METHODS and isinstance(node.func.value, ast.Name) and \
                isinstance(env.get(node.func.value.id), Tree):
            return range(*ks)          # a list that grows: its length must be known while compiling
    return None


def _unrolled(lw, s, trips, env):
    """A `for` over a container, run while lowering: the body once per item."""
    var = s.target.id
    env = dict(env)
    for k in trips:
        env[var] = lw.b.const(k, name=var)
        env, ret = lw.body(s.body, env)
        if isinstance(ret, list):
            lw.unsupported(s, "`return` inside a loop over a list or tuple",
                           "set a variable and return after the loop")
    if not trips:
        env[var] = Unbound(var)
    return env


def _loop_body(lw, s, benv, carried, types):
    """Lower one pass over a loop body whose carried variables have ``types``; it yields
    them when the body keeps their types. Returns the types widened by the body."""
    before = dict(benv)
    benv, ret = lw.body(s.body, benv)
    if isinstance(ret, list):
        lw.unsupported(s, "`return` inside a loop (yet)", "set a variable and return after the loop")
    for n in assigned_names(s.body):
        old, new = before.get(n), benv.get(n)
        if (isinstance(old, STATIC_OBJECTS) or isinstance(new, STATIC_OBJECTS)) and old is not None \
                and not isinstance(old, Unbound) and not same_static(old, new):
            lw.unsupported(s, f"{static_words(old if isinstance(old, STATIC_OBJECTS) else new)} '{n}' that a "
                              "loop rebinds", "choose it before the loop (or in an `if` decided while "
                                              "compiling); a loop can only change numbers and arrays")
    outs = carried.leaves(benv, lw, s)
    # a value still unset after the body (a return it never reaches) is typed as a bool
    new_types = [BOOL if t is UNSET else t for t in (join_types(t, o.type) for t, o in zip(types, outs))]
    if new_types == types:
        lw.b.yield_([convert_or_zero(lw.b, o, t) for o, t in zip(outs, types)])
    for k, t in enumerate(new_types):
        if t is None:
            lw.typing_error(s, f"'{carried.leaf_names[k]}' changes type in the loop from {types[k]} to "
                               f"{outs[k].type}")
    return new_types


def _after_loop(lw, op, s, env, carried):
    """Append the loop op; its results become the carried names' values. Names first bound in
    the body are unbound after it (zero trips)."""
    env = dict(env)
    env.update(carried.bind(lw.b.append(op)))
    for n in assigned_names(s.body):
        if n not in carried.names and n not in env:
            env[n] = Unbound(n)
    return env


def _loop_test(lw, s, env):
    """A while loop's condition; under a break flag, the condition is not evaluated once set."""
    flag, test = break_guard(s.test, lw.names)
    if flag is None:
        return truth(lw, test, env)
    then = Block()
    with Builder(then, lw.loc(s)) as bb:
        bb.yield_([bb.const(False)])
    other, _ = lw.lowered_apart(lambda: lw.b.yield_([truth(lw, test, env)]), loc=lw.loc(s))
    return lw.b.append(if_op(lw.read(flag.id, env, s), then, other, [BOOL], lw.loc(s)))[0]


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
        """The carried leaves' values in ``env`` after the body; a container must keep its structure."""
        out = []
        for n, t in zip(self.names, self.templates):
            v = lw.read(n, env, s)
            if structure(v) != structure(t):
                lw.typing_error(s, f"'{n}' is {describe(t)} before the loop and {describe(v)} after its body: a "
                                   "container keeps its structure through a loop whose trip count is known only "
                                   "at run time", )
            out += flat(v)
        return out


