"""Tuples, lists, dicts and namedtuples in compiled code: values of the frontend only. A
container is a ``Tree`` (srcgrad/trees.py) whose leaves are IR values; its structure (kinds,
keys, lengths) is fixed at compile time, so indexing it with a constant, unpacking it, taking
its ``len``, iterating over it and comprehensions over it happen while lowering, and the IR
sees only the leaves. A list written in place (``l[0] = v``, ``l.append(v)``) gets a new Tree,
and every name bound to the old one is rebound to it, as Python's aliasing would have it.

``zip(...)`` and ``enumerate(...)`` in a ``for`` or a comprehension are ``Zipped`` sequences:
over containers they are iterated while lowering; over arrays and ranges they index their
parts with the loop's counter. ``sum(... for ...)`` and ``np.array([... for ...])`` over a
range or an array known only at run time become a ``for`` loop made up here and lowered
through ``lw.stmt`` (loops.py's handler).

The expression handlers are ``sequence_display``, ``dict_display``, ``list_comprehension``
and ``generator_expr``; ``container_call`` lowers the builtins of containers
(``len``, ``sum``, ``zip``, ...) for functions.call.

Example:
    >>> def f(p, x):
    ...     ws = [p["w"] * x, p["b"]]
    ...     return sum(ws)
"""
import ast
import builtins

import numpy as np

from ..ir.interpret import EVAL
from ..ir.types import BOOL, F64, I64
from ..trees import Tree


class Range:
    """``range(...)`` bound to a name desugar made up (``range0``): not an IR value; its start,
    step and trip count are."""

    def __init__(self, start, step, n):
        self.start, self.step, self.n = start, step, n


def range_of(node, env):
    """The Range ``node`` names, if it is the name of one."""
    v = env.get(node.id) if isinstance(node, ast.Name) else None
    return v if isinstance(v, Range) else None



class Zipped:
    """``zip(a, b, ...)`` (``enumerate(a)`` is ``zip(range, a)``): indexable by a counter.
    ``parts`` are Trees, arrays (IR values) or Ranges."""

    def __init__(self, parts):
        self.parts = parts

    def is_static(self):
        """Whether every part is a container (iterated while lowering)."""
        return all(isinstance(p, Tree) for p in self.parts)


def constant_int(v):
    """The int an IR value holds when it is an int constant, else None."""
    op = getattr(v, "owner", None)
    if op is not None and op.prim == "const" and type(op.attrs["value"]) is int:
        return op.attrs["value"]
    return None


_FOLDABLE = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "not", "and", "or", "add", "sub", "mul", "neg", "abs",
                       "to_bool", "to_f64", "min", "max", "floordiv", "mod", "div"})


def static_value(v, depth=0):
    """The number an IR value holds when it is computed from constants alone by cheap scalar ops
    (``n == 0`` with ``n`` a constant), else UNKNOWN: the frontend decides such an `if` while
    compiling, so recursion bounded by a constant argument ends."""
    op = getattr(v, "owner", None)
    if op is None or v.type.is_array:
        return UNKNOWN
    if op.prim == "const":
        return op.attrs["value"]
    if op.prim not in _FOLDABLE or depth > 16:
        return UNKNOWN
    ins = [static_value(o, depth + 1) for o in op.operands]
    if any(i is UNKNOWN for i in ins):
        return UNKNOWN
    try:
        return EVAL[op.prim](None, op, ins)
    except Exception:       # noqa: BLE001 (not decided while compiling: the op raises at run time)
        return UNKNOWN


def leaf_params(name, t):
    """The parameters a (container) argument is passed as: ``p`` itself, or ``p_w``, ``p_0``, ..."""
    if not isinstance(t, Tree):
        return [(name, t)]
    keys = t.keys if t.keys is not None else range(len(t))
    out = []
    for k, item in zip(keys, t.items):
        part = str(k) if str(k).isidentifier() or isinstance(k, int) else "item"
        out += leaf_params(f"{name}_{part}", item)
    return out


def flat(v):
    """A frontend value's leaves: itself for an IR value."""
    return v.leaves() if isinstance(v, Tree) else [v]


def structure(v):
    """A container's structure (kinds, keys, lengths); None for an IR value."""
    return v.structure() if isinstance(v, Tree) else None


def refill(template, values):
    """``template``'s structure holding the next leaves of the iterator ``values``."""
    return template.refill(values) if isinstance(template, Tree) else next(values)


def describe(v):
    """A frontend value in the user's words, for messages."""
    return v.words() if isinstance(v, Tree) else f"a {v.type}" if hasattr(v, "type") else type(v).__name__


def generator_expr(lw, node, env):
    """A generator expression where a value is needed: refused (sum(...) and np.array take one)."""
    lw.unsupported(node, "a generator expression here", "sum(... for ...) and np.array([...]) take one")


def sequence_display(lw, node, env):
    """A tuple or list display: ``(a, b)``, ``[a, *t]``."""
    items = []
    for e in node.elts:
        if isinstance(e, ast.Starred):        # (*t, x)
            inner = lw.expr_any(e.value, env)
            if not isinstance(inner, Tree) or inner.kind is dict:
                lw.unsupported(e, f"`*` unpacking of {describe(inner)}", "unpack a tuple or a list")
            items.extend(inner.items)
        else:
            items.append(lw.expr_any(e, env))
    return Tree(tuple if isinstance(node, ast.Tuple) else list, items)


def dict_display(lw, node, env):
    """A dict display with constant keys: ``{"w": w, "b": b}``."""
    keys = []
    for k in node.keys:
        if k is None:
            lw.unsupported(node, "`**` in a dict display", "write the keys out")
        keys.append(constant_key(lw, k))
    return Tree(dict, [lw.expr_any(v, env) for v in node.values], keys)


def list_comprehension(lw, node, env):
    """``[elt for ... in ... if ...]`` over sequences known while lowering: a list, unrolled."""
    return Tree(list, comprehension(lw, node, env))


def constant_key(lw, node):
    """A dict key or a constant index: a literal str or int (or a global bound to one)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    if lw.is_global_name(node):
        obj = lw.resolve_global(node.id, node)
        if isinstance(obj, (str, int)) and not isinstance(obj, bool):
            return obj
    return None


# ---------------------------------------------------------------------- reading
def tree_index(lw, node, tree, env):
    """t[k] (k constant), t[a:b] of a tuple or list, d['key']."""
    sl = node.slice
    if isinstance(sl, ast.Slice) and tree.kind is not dict:
        bounds = [None if p is None else static_int(lw, p, env, "a slice of a list or tuple") for p in
                  (sl.lower, sl.upper, sl.step)]
        kind = tree.kind if tree.kind in (tuple, list) else tuple
        return Tree(kind, tree.items[slice(*bounds)])
    key = constant_key(lw, sl)
    if key is None:
        v = lw.expr_any(sl, env)
        key = v.key if isinstance(v, StrKey) else constant_int(v)
        if key is None:
            lw.unsupported(node, f"an index into {tree.words()} known only at run time",
                           "index with a constant, loop over the container itself (for v in t), or make "
                           "an array of it (np.array(...)) to index at run time")
    if tree.kind is dict:
        if key not in tree.keys:
            lw.typing_error(node, f"KeyError: {key!r} (the dict's keys: {', '.join(map(repr, tree.keys))})"
                            if key is not None else "a dict key must be a constant string or int")
        return tree.items[tree.keys.index(key)]
    if not isinstance(key, int) or not -len(tree) <= key < len(tree):
        lw.typing_error(node, f"IndexError: index {key} is out of range for {tree.words()}")
    return tree.items[key]


def static_int(lw, node, env, what):
    """An int known while lowering (a literal, a constant, len of a container, an unrolled loop's counter)."""
    key = constant_key(lw, node)
    if isinstance(key, int):
        return key
    v = lw.expr(node, env)
    k = constant_int(v)
    if k is None:
        lw.unsupported(node, f"{what} with a value known only at run time",
                       "index with a constant, loop over the container itself (for v in t), or make an "
                       "array of it (np.array(...)) to index at run time")
    return k


def tree_attribute(lw, node, tree):
    """A namedtuple's field."""
    if tree.keys is not None and tree.kind is not dict and node.attr in tree.keys:
        return tree.items[tree.keys.index(node.attr)]
    if tree.kind is dict and node.attr in ("keys", "values", "items"):
        lw.unsupported(node, f"d.{node.attr} outside a `for`", f"loop over it: for ... in d.{node.attr}()")
    lw.unsupported(node, f"the attribute `.{node.attr}` of {tree.words()}")


def tree_binop(lw, node, op, a, b):
    """t1 + t2 (same kind) and [v] * n (n constant)."""
    if op == "add" and isinstance(a, Tree) and isinstance(b, Tree) and a.kind is b.kind and a.keys is None:
        return Tree(a.kind, a.items + b.items)
    if op == "mul":
        tree, n = (a, b) if isinstance(a, Tree) else (b, a)
        count = constant_int(n) if not isinstance(n, Tree) else None
        if tree.keys is None and count is not None:
            return Tree(tree.kind, tree.items * max(count, 0))
        if tree.keys is None and not isinstance(n, Tree):
            lw.unsupported(node, f"repeating {tree.words()} a number of times known only at run time",
                           "for numbers, make an array: np.zeros(n) or np.full(n, v)")
    lw.typing_error(node, f"unsupported operand type(s) for {_SYMBOLS.get(op, op)}: {_py_type(a)!r} and "
                          f"{_py_type(b)!r} (in {ast.unparse(node)})")


# ---------------------------------------------------------------------- writing
def tree_setitem(lw, node, target, old, value, env):
    """l[k] = v, d['key'] = v: a new Tree; every name bound to the old one is rebound to it."""
    if old.kind is tuple or (old.keys is not None and old.kind is not dict):
        lw.typing_error(node, f"'{old.kind.__name__}' object does not support item assignment")
    sub = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    ast.copy_location(sub, target)
    if old.kind is dict:
        key = constant_key(lw, target.slice)
        if key is None:
            k = lw.expr_any(target.slice, env)
            key = k.key if isinstance(k, StrKey) else constant_int(k)
        if key is None:
            lw.unsupported(node, "a dict key known only at run time", "use a constant key")
        if key in old.keys:
            items = list(old.items)
            items[old.keys.index(key)] = value
            new = Tree(dict, items, old.keys)
        else:
            new = Tree(dict, old.items + (value,), old.keys + (key,))
    elif isinstance(target.slice, ast.Slice):
        lw.unsupported(node, "assigning to a slice of a list", "assign the elements one by one")
    else:
        tree_index(lw, sub, old, env)          # checks the index
        k = constant_key(lw, target.slice)
        if k is None:
            k = constant_int(lw.expr(target.slice, env))
        items = list(old.items)
        items[k] = value
        new = Tree(old.kind, items, old.keys)
    _rebind(old, new, env)


def _rebind(old, new, env):
    """Every name bound to ``old`` bound to ``new`` instead (Python's aliasing of a list changed in place)."""
    for n, v in list(env.items()):
        if v is old:
            env[n] = new


def list_method(lw, node, env):
    """l.append(v), l.extend(t), l.insert(k, v), d.update(e) as statements: a new Tree."""
    call = node.value
    old = lw.expr_any(call.func.value, env)
    if not isinstance(old, Tree):
        return False
    name = call.func.attr
    args = [lw.expr_any(a, env) for a in call.args]
    if old.kind is list and name == "append" and len(args) == 1:
        new = Tree(list, old.items + (args[0],))
    elif old.kind is list and name == "extend" and len(args) == 1 and isinstance(args[0], Tree):
        new = Tree(list, old.items + args[0].items)
    elif old.kind is list and name == "insert" and len(args) == 2:
        k = static_int(lw, call.args[0], env, "the place of an insert")
        items = list(old.items)
        items.insert(k, args[1])
        new = Tree(list, items)
    else:
        lw.unsupported(node, f"{old.words()}.{name}(...) as a statement",
                       "append, extend and insert on lists work")
    _rebind(old, new, env)
    return True


# ---------------------------------------------------------------------- builtins on containers
def tree_fold(lw, node, prim, tree, start=None):
    """sum(t) (from 0, as Python), min(t), max(t) of a container of numbers or arrays."""
    items = list(tree.items) if tree.kind is not dict else list(tree.keys)
    if tree.kind is dict:
        lw.unsupported(node, f"{prim} of a dict's keys", "use d.values()")
    if not items and start is None:
        lw.typing_error(node, f"{prim}() of an empty {tree.kind.__name__}")
    out = start
    for v in items:
        if isinstance(v, Tree):
            lw.typing_error(node, f"{prim}() of {tree.words()} holding {v.words()}")
        out = v if out is None else (lw.binop(node, "add", out, v) if prim == "sum" else
                                     lw.emit(node, prim, lw.arithmetic_operands(node, out, v)))
    return out


def container_call(lw, node, fobj, env):
    """len, sum, min, max, list, tuple, zip, enumerate where containers or generators are
    involved; None when the call is not one of those (the call table lowers it)."""
    if fobj in (builtins.zip, builtins.enumerate):
        return iterable(lw, node, env)
    if fobj in (np.array, np.asarray) and len(node.args) == 1 and isinstance(node.args[0], (
            ast.ListComp, ast.GeneratorExp)) and not node.keywords:
        return runtime_array(lw, node, node.args[0], env)
    if fobj not in (builtins.len, builtins.sum, builtins.min, builtins.max, builtins.list, builtins.tuple) \
            or len(node.args) != 1 or node.keywords:
        return None
    arg = node.args[0]
    if fobj is builtins.sum and isinstance(arg, ast.GeneratorExp):
        return generator_sum(lw, node, arg, env)
    if isinstance(arg, ast.GeneratorExp):
        v = Tree(list, comprehension(lw, arg, env))
    else:
        v = iterable(lw, arg, env) if isinstance(arg, ast.Call) else lw.expr_any(arg, env)
    if isinstance(v, Zipped) and fobj is builtins.len:
        return seq_len(lw, node, v)
    if not isinstance(v, Tree):
        if fobj is builtins.sum and hasattr(v, "type") and v.type.is_array:
            return lw.binop(node, "add", lw.b.const(0),
                            lw.emit(node, "sum", [v], {"axis": 0} if v.type.ndim > 1 else {"axis": None}))
        lw.lowered_args[id(arg)] = v          # not a container: the call table lowers the call
        return None
    items = Tree(tuple, [key_value(lw, k) for k in v.keys]) if v.kind is dict else v
    if fobj is builtins.len:
        return lw.b.const(len(v))
    if fobj in (builtins.list, builtins.tuple):
        return Tree(fobj, items.items)
    if fobj is builtins.sum:
        return tree_fold(lw, node, "sum", items, start=lw.b.const(0))
    return tree_fold(lw, node, fobj.__name__, items)


# ---------------------------------------------------------------------- iteration
def iterable(lw, node, env):
    """What a `for` or a comprehension iterates over: a Tree, a Zipped, a Range or an array."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fobj = lw.global_object(node.func)
        if fobj is builtins.zip:
            parts = [iterable(lw, a, env) for a in node.args]
            if len({isinstance(p, Tree) for p in parts}) > 1:
                lw.unsupported(node, "zip of a list or tuple with an array or a range",
                               "zip containers with containers, or arrays with arrays")
            return Zipped(parts)
        if fobj is builtins.enumerate and len(node.args) == 1:
            inner = iterable(lw, node.args[0], env)
            if isinstance(inner, Tree):
                return Zipped([Tree(tuple, [lw.b.const(k) for k in range(len(inner))]), inner])
            return Zipped([Range(lw.b.const(0), lw.b.const(1), seq_len(lw, node, inner)), inner])
        if fobj is builtins.range:
            start, stop, step = range_bounds(lw, node, env)
            ks = [constant_int(v) for v in (start, stop, step)]
            if None not in ks and ks[2] != 0:
                return Tree(tuple, [lw.b.const(k) for k in range(*ks)])
            return Range(start, step, lw.emit(node, "range_len", [start, stop, step], name="n"))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "keys", "values", "items") and not node.args:
        d = lw.expr_any(node.func.value, env)
        if isinstance(d, Tree) and d.kind is dict:
            keys = Tree(tuple, [key_value(lw, k) for k in d.keys])
            return {"keys": keys, "values": Tree(tuple, d.items),
                    "items": Tree(tuple, [Tree(tuple, kv) for kv in zip(keys.items, d.items)])}[node.func.attr]
    v = lw.expr_any(node, env)
    if isinstance(v, Tree) and v.kind is dict:
        return Tree(tuple, [key_value(lw, k) for k in v.keys])
    if isinstance(v, (Tree, Zipped, Range)) or (hasattr(v, "type") and v.type.is_array):
        return v
    lw.typing_error(node, f"cannot iterate over {describe(v)}")


def range_bounds(lw, call, env):
    """(start, stop, step) of a call ``range(...)``, as ints."""
    args = [lw.expr(a, env) for a in call.args]
    for a, node in zip(args, call.args):
        if a.type not in (I64, BOOL):
            lw.typing_error(node, f"range() takes integers, got {a.type}")
    args = [lw.b.convert(a, I64) for a in args]
    if len(args) == 1:
        return lw.b.const(0), args[0], lw.b.const(1)
    if len(args) == 2:
        return args[0], args[1], lw.b.const(1)
    if len(args) != 3:
        lw.unsupported(call, "range() with more than 3 arguments")
    return tuple(args)


def key_value(lw, k):
    """A dict's key as a value: a StrKey for a str, else an int constant."""
    if isinstance(k, str):
        return StrKey(k)
    return lw.b.const(k)


def seq_len(lw, node, seq):
    """The number of items of a runtime sequence (an array's first axis, a Range, a zip of them)."""
    if isinstance(seq, Range):
        return seq.n
    if isinstance(seq, Zipped):
        lens = [seq_len(lw, node, p) for p in seq.parts]
        if None not in map(constant_int, lens):
            return lw.b.const(min(map(constant_int, lens)))
        out = lens[0]
        for n in lens[1:]:
            out = lw.emit(node, "min", [out, n])
        return out
    if isinstance(seq, Tree):
        return lw.b.const(len(seq))
    if seq.type.ndim == 0:
        lw.typing_error(node, "iteration over a 0-d array")
    return lw.emit(node, "shape", [seq], {"axis": 0})


def static_items(lw, node, seq):
    """The items of a sequence known while lowering (a Tree, a zip of Trees), else None."""
    if isinstance(seq, Tree):
        return list(seq.items)
    if isinstance(seq, Zipped) and seq.is_static():
        return [Tree(tuple, group) for group in zip(*(p.items for p in seq.parts))]
    return None


def item_at(lw, node, seq, k):
    """seq[k] for a runtime sequence and an int IR value k."""
    if isinstance(seq, Range):
        return lw.binop(node, "add", seq.start, lw.binop(node, "mul", k, seq.step))
    if isinstance(seq, Zipped):
        return Tree(tuple, [item_at(lw, node, p, k) for p in seq.parts])
    return lw.emit(node, "index" if seq.type.ndim == 1 else "slice", [seq, k],
                   {} if seq.type.ndim == 1 else {"spec": (("i",),)})


def comprehension(lw, node, env):
    """The items of [elt for ... in ... if ...] over sequences known while lowering."""
    out = []

    def walk(gens, env):
        if not gens:
            out.append(lw.expr_any(node.elt, env))
            return
        g = gens[0]
        if g.is_async:
            lw.unsupported(node, "async comprehensions")
        seq = iterable(lw, g.iter, env)
        items = static_items(lw, g.iter, seq)
        if items is None:
            lw.unsupported(node, "a list comprehension over a range or an array known only at run time",
                           "for numbers, make an array: np.array([... for i in range(n)]); or "
                           "sum(... for i in range(n))")
        for item in items:
            inner = dict(env)
            bind_target(lw, g.target, item, inner, node)
            if all(static_truth(lw, c, inner) for c in g.ifs):
                walk(gens[1:], inner)
    walk(node.generators, env)
    return out


def static_truth(lw, node, env):
    """A comprehension's condition, decided while lowering: it may read only constants (the
    counters and keys of the iteration, literals, globals)."""
    scope = {}
    for n in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
        v = env.get(n) if n in lw.locals else lw.resolve_global(n, node)
        if n in lw.locals:
            v = v.key if isinstance(v, StrKey) else v.owner.attrs["value"] if getattr(
                getattr(v, "owner", None), "prim", None) == "const" else UNKNOWN
        if v is UNKNOWN or any(isinstance(c, ast.Call) for c in ast.walk(node)):
            lw.unsupported(node, "a condition in a comprehension that depends on values known only at run "
                                 "time", "write the loop out, or use np.where")
        scope[n] = v
    try:
        return bool(eval(compile(ast.Expression(node), "<condition>", "eval"), {"__builtins__": {}}, scope))
    except Exception as e:          # noqa: BLE001 (the user's condition raising while compiling)
        lw.typing_error(node, f"{type(e).__name__}: {e}")


def bind_target(lw, target, value, env, node):
    """A comprehension's or unrolled loop's target bound to one item (names are local to it)."""
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if not isinstance(value, Tree) or len(value) != len(target.elts):
            lw.typing_error(node, f"cannot unpack {describe(value)} into {len(target.elts)} names")
        for t, v in zip(target.elts, value.items):
            bind_target(lw, t, v, env, node)
    else:
        lw.unsupported(target, "this loop target", "use plain names")


def generator_sum(lw, node, gen, env):
    """sum(elt for ... in ...): added while lowering over containers, else a loop."""
    if len(gen.generators) == 1:
        g = gen.generators[0]
        seq = iterable(lw, g.iter, env)
        if static_items(lw, g.iter, seq) is None:
            return runtime_sum(lw, node, gen, g, seq, env)
    return tree_fold(lw, node, "sum", Tree(list, comprehension(lw, gen, env)), start=lw.b.const(0))


# ---------------------------------------------------------------------- loops made up for run-time sequences
def runtime_sum(lw, node, gen, g, seq, env):
    """sum(elt for target in seq if ...) over a range or an array known only at run time:
    a loop ``acc = 0; for k in range(len(seq)): target = seq[k]; if ...: acc = acc + elt``."""
    acc, seq_name, k = lw.names("total"), lw.names("iter"), lw.names("index")
    lw.locals |= {acc, seq_name, k}

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
    inner = {**env, seq_name: seq, acc: lw.b.const(0)}
    env, _ = lw.stmt(loop, inner)         # the `for` handler (loops.py), through the table
    return env[acc]


def runtime_array(lw, node, gen, env):
    """np.array([elt for target in seq]) over a range or an array known only at run time: an
    array of len(seq) numbers filled by a loop (``out[k] = elt``). None when ``seq`` is known
    while compiling (the container is then built as a list)."""
    if len(gen.generators) != 1:
        return None
    g = gen.generators[0]
    seq = iterable(lw, g.iter, env)
    if static_items(lw, g.iter, seq) is not None:
        return None
    if g.ifs:
        lw.unsupported(node, "np.array of a comprehension with `if` over a range or array known only at run "
                             "time (its length is not known)", "compute the values for every item and "
                                                                "select with np.where")
    probe = {**env}
    bind_target(lw, g.target, item_at(lw, node, seq, lw.b.const(0)), probe, node)
    _, elt = lw.lowered_apart(lambda: lw.expr(gen.elt, probe))       # its type only
    if elt.type.is_array:
        lw.unsupported(node, "np.array of a comprehension of arrays over a range known only at run time",
                       "allocate the 2-D array with np.zeros((n, m)) and fill its rows in a loop")
    out, seq_name, k = lw.names("array"), lw.names("iter"), lw.names("index")
    lw.locals |= {out, seq_name, k}

    def name(n, store=False):
        return ast.copy_location(ast.Name(id=n, ctx=ast.Store() if store else ast.Load()), node)
    put = ast.Assign(targets=[ast.Subscript(value=name(out), slice=name(k), ctx=ast.Store())], value=gen.elt)
    take = ast.Assign(targets=[g.target], value=ast.Subscript(value=name(seq_name), slice=name(k), ctx=ast.Load()))
    count = ast.Call(func=name("len"), args=[name(seq_name)], keywords=[])
    loop = ast.For(target=name(k, True), iter=ast.Call(func=name("range"), args=[count], keywords=[]),
                   body=[ast.copy_location(take, node), ast.copy_location(put, gen.elt)], orelse=[])
    ast.fix_missing_locations(ast.copy_location(loop, node))
    dtype = F64 if elt.type is F64 else elt.type
    start = lw.emit(node, "full", [seq_len(lw, node, seq)], {"value": 0, "dtype": dtype}, name=out)
    env, _ = lw.stmt(loop, {**env, seq_name: seq, out: start})
    return env[out]


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "matmul": "@"}


def _py_type(v):
    if isinstance(v, Tree):
        return v.kind.__name__
    return {"f64": "float", "i64": "int", "bool": "bool"}.get(str(v.type), "numpy.ndarray")


UNKNOWN = object()


class StrKey:
    """A dict's str key met while iterating (for k in d): usable only to index that dict."""

    def __init__(self, key):
        self.key = key
