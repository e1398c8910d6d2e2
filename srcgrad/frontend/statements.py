"""The statements: assignments (to names, tuples, subscripts; augmented and annotated),
``if``, expression statements (``print``, a list's ``append``, ``np.add.at``), ``assert``,
``return`` and ``continue``, each a handler ``(lw, s, env) -> (env, how it ends)`` found by the
statement's type in lower.py's STATEMENTS table (context.Context.body says how statements
end). The loops are loops.py's, a nested ``def`` is functions.py's.

SSA-style, names map to values in ``env``; an ``if`` yields the names its branches rebind
(or what both return), unless its condition is known while compiling: then only the branch it
takes is lowered (recursion bounded by a constant argument ends so).

Example:
    >>> def f(x):
    ...     if x > 0:
    ...         y = x
    ...     else:
    ...         y = -x        # y is yielded by the `if` op
    ...     return y
"""
import ast
import builtins

from ..ir.core import Builder, Value, if_op
from ..ir.types import BOOL
from ..trees import Tree
from .call_table import check_callee
from .containers import UNKNOWN, Range, describe, flat, iterable, key_value, list_method, range_bounds, refill, \
    static_value, structure
from .expressions import BINOPS, truth
from .indexing import add_at, is_add_at, setitem, subscript
from .scope import LIST_METHODS, assigned_names
from .values import CONTINUE, STATIC_OBJECTS, UNSET, Returned, Unbound, convert_or_zero, join_types, same_static, \
    static_words

# numpy's methods that change an array in place, with the rewrite
_IN_PLACE_METHODS = {"sort": "{0} = np.sort({0})", "fill": "{0}[...] = v, or {0} = np.full({0}.shape, v)",
                     "resize": "make a new array of the size you need (np.zeros(n)) and copy into it",
                     "put": "{0}[idx] = v"}


# ---------------------------------------------------------------------- assignments
def assign_stmt(lw, s, env):
    """``t1 = t2 = value``: each target bound (names, unpacking, ``x[i] = v``)."""
    if _made_up(lw, s, env):
        return env, None
    value = lw.expr_any(s.value, env)
    for t in s.targets:
        assign(lw, t, value, env, s)
    return env, None


def _made_up(lw, s, env):
    """Bind a name desugar made up to what is not one plain value: a return slot before its
    loop (None: UNSET, typed by what the returns store), the sequence of ``for row in x`` (an
    array), the range of a ``for`` with ``break`` (its start, step and trip count). False for
    any other assignment."""
    if not isinstance(s.targets[0], ast.Name):
        return False
    name = s.targets[0].id
    kind = lw.names.kind(name)
    if kind == "retval" and isinstance(s.value, ast.Constant) and s.value.value is None:
        env[name] = Value(UNSET, name)
    elif kind == "iter":
        env[name] = iterable(lw, s.value, env)     # an array, a container, a zip or a range
    elif kind == "range":
        start, stop, step = range_bounds(lw, s.value, env)
        env[name] = Range(start, step, lw.b.emit("range_len", [start, stop, step], name="n"))
    else:
        return False
    return True


def assign(lw, target, value, env, node):
    """Bind ``target`` (a name, a tuple or list of targets, a subscript) to ``value``."""
    if isinstance(target, ast.Name):
        if getattr(value, "name", "") is None and value.owner is not None:
            value.name = target.id
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, Tree) and value.kind is dict:
            value = Tree(tuple, [key_value(lw, k) for k in value.keys])
        starred = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
        if not isinstance(value, Tree) or len(value) < len(target.elts) - len(starred) or (
                not starred and len(value) != len(target.elts)):
            lw.typing_error(node, f"cannot unpack {describe(value)} into {len(target.elts)} names")
        items = list(value.items)
        if starred:           # a, *rest = t: rest is a list
            k = starred[0]
            tail = len(target.elts) - k - 1
            items = items[:k] + [Tree(list, items[k:len(items) - tail])] + items[len(items) - tail:]
        for t, v in zip(target.elts, items):
            assign(lw, t.value if isinstance(t, ast.Starred) else t, v, env, node)
    elif isinstance(target, ast.Subscript):
        setitem(lw, target, value, env, node)
    else:
        lw.unsupported(node, f"assigning to {type(target).__name__}")


def aug_assign_stmt(lw, s, env):
    """``x += v`` (and the other operators): ``x = x + v``, also of ``x[i]``."""
    op = BINOPS.get(type(s.op))
    if isinstance(s.target, ast.Subscript):
        if op is None:
            lw.unsupported(s, f"the operator {type(s.op).__name__}=")
        old = subscript(lw, s.target, env)
        assign(lw, s.target, lw.binop(s, op, old, lw.expr(s.value, env)), env, s)
        return env, None
    if not isinstance(s.target, ast.Name):
        lw.unsupported(s, f"augmented assignment to {type(s.target).__name__}")
    if op is None:
        lw.unsupported(s, f"the operator {type(s.op).__name__}=")
    cur = lw.read(s.target.id, env, s.target)
    env[s.target.id] = lw.binop(s, op, cur, lw.expr(s.value, env), name=s.target.id)
    return env, None


def ann_assign_stmt(lw, s, env):
    """``x: float = v``: ``x = v`` (an annotation without a value is refused)."""
    if s.value is None:
        lw.unsupported(s, "the statement `AnnAssign`")
    assign(lw, s.target, lw.expr_any(s.value, env), env, s)
    return env, None


# ---------------------------------------------------------------------- other simple statements
def expr_stmt(lw, s, env):
    """An expression statement: ``print(...)`` (does nothing), a list's ``append``/``extend``/
    ``insert``, ``np.add.at``; anything else would throw its value away, and is refused."""
    call = s.value if isinstance(s.value, ast.Call) else None
    if call is not None and isinstance(call.func, ast.Name) and call.func.id == "print" \
            and lw.resolve_global("print", call.func) is builtins.print:
        return env, None     # print is allowed and does nothing in compiled code
    if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr in LIST_METHODS and \
            not lw.is_global_name(call.func.value) and list_method(lw, s, env):
        return env, None
    if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr in _IN_PLACE_METHODS and \
            not lw.is_global_name(call.func.value):
        name = ast.unparse(call.func.value)
        lw.unsupported(s, f"{ast.unparse(call)}, which changes {name} in place",
                       _IN_PLACE_METHODS[call.func.attr].format(name))
    if call is not None:
        fobj = lw.global_object(call.func)
        if is_add_at(fobj):          # np.add.at(x, idx, v): frontend/indexing.py
            add_at(lw, call, env)
            return env, None
        if fobj is not None:
            check_callee(lw, call, fobj, ast.unparse(call.func))
    lw.unsupported(s, "an expression statement (its value would be thrown away)",
                   "assign the value to a variable, or remove the line")


def assert_stmt(lw, s, env):
    """``assert test, "message"``: an ``assert`` op, which raises AssertionError with the message."""
    if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str):
        msg = s.msg.value
    else:
        msg = ast.unparse(s.msg) if s.msg is not None else f"assert {ast.unparse(s.test)}"
    lw.emit(s, "assert", [truth(lw, s.test, env)], {"message": msg})
    return env, None


def return_stmt(lw, s, env):
    """``return value``: the statements end with the values returned (a Returned)."""
    if s.value is None:
        lw.unsupported(s, "`return` without a value", "return the result")
    value = lw.expr_any(s.value, env)       # `return g(x)` returns all the values g returns
    for leaf in flat(value):
        lw.value(s.value, leaf)
    return env, Returned(flat(value), value if isinstance(value, Tree) else None)


def continue_stmt(lw, s, env):
    """``continue``: the statements of the loop's iteration end here (CONTINUE)."""
    return env, CONTINUE


def break_stmt(lw, s, env):
    """``break`` where desugar left one: outside a loop (desugar turns those in loops into flags)."""
    lw.unsupported(s, "`break` outside a loop")


# ---------------------------------------------------------------------- if
def if_stmt(lw, s, env):
    """``if``: an ``if`` op yielding the names both branches bind (or what both return); only
    the branch taken when the condition is known while compiling."""
    cond = truth(lw, s.test, env)
    decided = static_value(cond)
    if decided is not UNKNOWN:      # a condition on constants only: the other branch is never lowered
        return lw.body(s.body if decided else s.orelse, dict(env))
    # names made up for a loop inside a branch (its flags, counters) stay in that branch
    assigned = [n for n in assigned_names(s.body + s.orelse) if n in env or lw.names.kind(n) is None]
    (then, (tenv, tret)), (other, (eenv, eret)) = (lw.lowered_apart(lambda: lw.body(stmts, dict(env)))
                                                   for stmts in (s.body, s.orelse))
    ending, tret, eret = _branch_endings(lw, s, tret, eret)
    if tret is not None:            # both branches return
        if _shape_of(tret) != _shape_of(eret):
            lw.typing_error(s, f"the branches return different things: {_words(tret)} and {_words(eret)}")
        results = _if_op(lw, s, cond, (then, other), [tret, eret], ["result"] * len(tret))
        return env, Returned(results, tret.tree)
    names, same = _merged_names(lw, s, assigned, env, tenv, eenv)
    yields = [[v for n in names for v in flat(branch[n])] for branch in (tenv, eenv)]
    values = iter(_if_op(lw, s, cond, (then, other), yields, [n for n in names for _ in flat(tenv[n])]))
    for n in names:
        env[n] = refill(tenv[n], values)
    for n in assigned:     # bound on one path only
        if n not in names and n not in same and (n in tenv or n in eenv):
            env[n] = Unbound(n)
    return env, ending


def _branch_endings(lw, s, tret, eret):
    """(how the `if` ends, then's and else's returned values): CONTINUE when both branches
    continue; a branch that continues is one that falls through, and cannot be beside one
    that returns; one branch cannot return where the other falls through."""
    ending = CONTINUE if tret is CONTINUE and eret is CONTINUE else None
    if tret is CONTINUE or eret is CONTINUE:
        if isinstance(tret, list) or isinstance(eret, list):
            lw.unsupported(s, "`return` inside a loop (yet)", "set a variable and return after the loop")
        tret = eret = None
    if (tret is None) != (eret is None):       # nothing follows the `if` to return a value
        lw.unsupported(s, "a path through the function that ends without `return` (Python would return None)",
                       "return a value on every path")
    return ending, tret, eret


def _merged_names(lw, s, assigned, env, tenv, eenv):
    """(the names the `if` yields, the static ones): of the names the branches assign, those
    both bind. A function or dtype (known while compiling, never yielded) must be the same
    object in both, and is bound in ``env`` directly; a container must keep its structure."""
    names = [n for n in assigned if tenv.get(n) is not None and eenv.get(n) is not None
             and not isinstance(tenv[n], Unbound) and not isinstance(eenv[n], Unbound)]
    for n in names:
        if isinstance(tenv[n], STATIC_OBJECTS) or isinstance(eenv[n], STATIC_OBJECTS):
            if not same_static(tenv[n], eenv[n]):
                what = static_words(tenv[n] if isinstance(tenv[n], STATIC_OBJECTS) else eenv[n])
                lw.unsupported(s, f"{what} '{n}' that an `if` defines or rebinds",
                               f"choose {what[2:]}s before the `if` (or in an `if` decided while compiling)"
                               if what == "a dtype" else
                               "define the functions before the `if` and choose which one to call in it")
    same = [n for n in names if isinstance(tenv[n], STATIC_OBJECTS)]
    names = [n for n in names if n not in same]
    for n in same:
        env[n] = tenv[n]
    for n in names:
        if structure(tenv[n]) != structure(eenv[n]):
            lw.typing_error(s, f"'{n}' is {describe(tenv[n])} in one branch and {describe(eenv[n])} "
                               "in the other")
    return names, same


def _if_op(lw, s, cond, blocks, yields, leaf_names):
    """Append the ``if`` op whose ``blocks`` yield ``yields`` (one list per branch), at the
    types they join to; its results."""
    types = _yield_types(lw, s, yields, leaf_names)
    for block, ys in zip(blocks, yields):
        with Builder(block, lw.loc(s)) as bb:
            bb.yield_([convert_or_zero(bb, v, t) for v, t in zip(ys, types)])
    return lw.b.append(if_op(cond, *blocks, types, lw.loc(s), leaf_names))


def _yield_types(lw, s, yields, leaf_names):
    """The type each pair of values the branches yield joins to (int and float: float)."""
    types = []
    for k, (a, c) in enumerate(zip(*yields)):
        a, c = lw.value(s, a), lw.value(s, c)
        t = join_types(a.type, c.type)
        if t is None:
            lw.typing_error(s, f"'{leaf_names[k]}' is {a.type} in one branch and {c.type} in the other")
        # a return slot no branch stores into (an `if` decided while compiling removed the
        # store) stays unused: typed as a bool, as after a loop (loops.py)
        types.append(BOOL if t is UNSET else t)
    return types


def _shape_of(ret):
    return ret.tree.structure() if ret.tree is not None else len(ret)


def _words(ret):
    return ret.tree.words() if ret.tree is not None else "one value"
