"""Tuples, lists, dicts and namedtuples in compiled code: values of the frontend only. A
container is a ``Tree`` (srcgrad/trees.py) whose leaves are IR values; its structure (kinds,
keys, lengths) is fixed at compile time, so indexing it with a constant, unpacking it, taking
its ``len``, iterating over it and comprehensions over it happen while lowering, and the IR
sees only the leaves. A list written in place (``l[0] = v``, ``l.append(v)``) gets a new Tree,
and every name bound to the old one is rebound to it, as Python's aliasing would have it.

``zip(...)`` and ``enumerate(...)`` in a ``for`` or a comprehension are ``Zipped`` sequences:
over containers they are iterated while lowering; over arrays and ranges they index their
parts with the loop's counter.

Example:
    >>> def f(p, x):
    ...     ws = [p["w"] * x, p["b"]]
    ...     return sum(ws)
"""
import ast
import builtins

import numpy as np

from ..ir.interpret import EVAL
from ..trees import Tree

CONTAINER_NODES = (ast.Tuple, ast.List, ast.Dict, ast.ListComp, ast.GeneratorExp)


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
    return v.structure() if isinstance(v, Tree) else None


def refill(template, values):
    """``template``'s structure holding the next leaves of the iterator ``values``."""
    return template.refill(values) if isinstance(template, Tree) else next(values)


def describe(v):
    """A frontend value in the user's words, for messages."""
    return v.words() if isinstance(v, Tree) else f"a {v.type}" if hasattr(v, "type") else type(v).__name__


class Containers:
    """The container half of the expressions (a mixin of expressions.Expressions)."""

    def container(self, node, env):
        """A tuple, list or dict display, or a list comprehension (unrolled while lowering)."""
        if isinstance(node, (ast.Tuple, ast.List)):
            items = []
            for e in node.elts:
                if isinstance(e, ast.Starred):        # (*t, x)
                    inner = self.expr_any(e.value, env)
                    if not isinstance(inner, Tree) or inner.kind is dict:
                        self.unsupported(e, f"`*` unpacking of {describe(inner)}", "unpack a tuple or a list")
                    items.extend(inner.items)
                else:
                    items.append(self.expr_any(e, env))
            return Tree(tuple if isinstance(node, ast.Tuple) else list, items)
        if isinstance(node, ast.Dict):
            keys = []
            for k in node.keys:
                if k is None:
                    self.unsupported(node, "`**` in a dict display", "write the keys out")
                keys.append(self.constant_key(k))
            return Tree(dict, [self.expr_any(v, env) for v in node.values], keys)
        return Tree(list, self.comprehension(node, env))

    def constant_key(self, node):
        """A dict key or a constant index: a literal str or int (or a global bound to one)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) is int:
            return -node.operand.value
        if self.is_global_name(node):
            obj = self.resolve_global(node.id, node)
            if isinstance(obj, (str, int)) and not isinstance(obj, bool):
                return obj
        return None

    # ------------------------------------------------------------------ reading
    def tree_index(self, node, tree, env):
        """t[k] (k constant), t[a:b] of a tuple or list, d['key']."""
        sl = node.slice
        if isinstance(sl, ast.Slice) and tree.kind is not dict:
            bounds = [None if p is None else self.static_int(p, env, "a slice of a list or tuple") for p in
                      (sl.lower, sl.upper, sl.step)]
            kind = tree.kind if tree.kind in (tuple, list) else tuple
            return Tree(kind, tree.items[slice(*bounds)])
        key = self.constant_key(sl)
        if key is None:
            v = self.expr_any(sl, env)
            key = v.key if isinstance(v, StrKey) else constant_int(v)
            if key is None:
                self.unsupported(node, f"an index into {tree.words()} known only at run time",
                                 "index with a constant, loop over the container itself (for v in t), or make "
                                 "an array of it (np.array(...)) to index at run time")
        if tree.kind is dict:
            if key not in tree.keys:
                self.typing_error(node, f"KeyError: {key!r} (the dict's keys: {', '.join(map(repr, tree.keys))})"
                                  if key is not None else "a dict key must be a constant string or int")
            return tree.items[tree.keys.index(key)]
        if not isinstance(key, int) or not -len(tree) <= key < len(tree):
            self.typing_error(node, f"IndexError: index {key} is out of range for {tree.words()}")
        return tree.items[key]

    def static_int(self, node, env, what):
        """An int known while lowering (a literal, a constant, len of a container, an unrolled loop's counter)."""
        key = self.constant_key(node)
        if isinstance(key, int):
            return key
        v = self.expr(node, env)
        k = constant_int(v)
        if k is None:
            self.unsupported(node, f"{what} with a value known only at run time",
                             "index with a constant, loop over the container itself (for v in t), or make an "
                             "array of it (np.array(...)) to index at run time")
        return k

    def tree_attribute(self, node, tree):
        """A namedtuple's field."""
        if tree.keys is not None and tree.kind is not dict and node.attr in tree.keys:
            return tree.items[tree.keys.index(node.attr)]
        if tree.kind is dict and node.attr in ("keys", "values", "items"):
            self.unsupported(node, f"d.{node.attr} outside a `for`", f"loop over it: for ... in d.{node.attr}()")
        self.unsupported(node, f"the attribute `.{node.attr}` of {tree.words()}")

    def tree_binop(self, node, op, a, b):
        """t1 + t2 (same kind) and [v] * n (n constant)."""
        if op == "add" and isinstance(a, Tree) and isinstance(b, Tree) and a.kind is b.kind and a.keys is None:
            return Tree(a.kind, a.items + b.items)
        if op == "mul":
            tree, n = (a, b) if isinstance(a, Tree) else (b, a)
            count = constant_int(n) if not isinstance(n, Tree) else None
            if tree.keys is None and count is not None:
                return Tree(tree.kind, tree.items * max(count, 0))
            if tree.keys is None and not isinstance(n, Tree):
                self.unsupported(node, f"repeating {tree.words()} a number of times known only at run time",
                                 "for numbers, make an array: np.zeros(n) or np.full(n, v)")
        self.typing_error(node, f"unsupported operand type(s) for {_SYMBOLS.get(op, op)}: {_py_type(a)!r} and "
                                f"{_py_type(b)!r} (in {ast.unparse(node)})")

    # ------------------------------------------------------------------ writing
    def tree_setitem(self, node, target, old, value, env):
        """l[k] = v, d['key'] = v: a new Tree; every name bound to the old one is rebound to it."""
        if old.kind is tuple or (old.keys is not None and old.kind is not dict):
            self.typing_error(node, f"'{old.kind.__name__}' object does not support item assignment")
        sub = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        ast.copy_location(sub, target)
        if old.kind is dict:
            key = self.constant_key(target.slice)
            if key is None:
                k = self.expr_any(target.slice, env)
                key = k.key if isinstance(k, StrKey) else constant_int(k)
            if key is None:
                self.unsupported(node, "a dict key known only at run time", "use a constant key")
            if key in old.keys:
                items = list(old.items)
                items[old.keys.index(key)] = value
                new = Tree(dict, items, old.keys)
            else:
                new = Tree(dict, old.items + (value,), old.keys + (key,))
        elif isinstance(target.slice, ast.Slice):
            self.unsupported(node, "assigning to a slice of a list", "assign the elements one by one")
        else:
            self.tree_index(sub, old, env)          # checks the index
            k = self.constant_key(target.slice)
            if k is None:
                k = constant_int(self.expr(target.slice, env))
            items = list(old.items)
            items[k] = value
            new = Tree(old.kind, items, old.keys)
        self.rebind(old, new, env)

    def rebind(self, old, new, env):
        for n, v in list(env.items()):
            if v is old:
                env[n] = new

    def list_method(self, node, env):
        """l.append(v), l.extend(t), l.insert(k, v), d.update(e) as statements: a new Tree."""
        call = node.value
        old = self.expr_any(call.func.value, env)
        if not isinstance(old, Tree):
            return False
        name = call.func.attr
        args = [self.expr_any(a, env) for a in call.args]
        if old.kind is list and name == "append" and len(args) == 1:
            new = Tree(list, old.items + (args[0],))
        elif old.kind is list and name == "extend" and len(args) == 1 and isinstance(args[0], Tree):
            new = Tree(list, old.items + args[0].items)
        elif old.kind is list and name == "insert" and len(args) == 2:
            k = self.static_int(call.args[0], env, "the place of an insert")
            items = list(old.items)
            items.insert(k, args[1])
            new = Tree(list, items)
        else:
            self.unsupported(node, f"{old.words()}.{name}(...) as a statement",
                             "append, extend and insert on lists work")
        self.rebind(old, new, env)
        return True

    # ------------------------------------------------------------------ builtins on containers
    def tree_len(self, tree):
        return self.b.const(len(tree))

    def tree_fold(self, node, prim, tree, start=None):
        """sum(t) (from 0, as Python), min(t), max(t) of a container of numbers or arrays."""
        items = list(tree.items) if tree.kind is not dict else list(tree.keys)
        if tree.kind is dict:
            self.unsupported(node, f"{prim} of a dict's keys", "use d.values()")
        if not items and start is None:
            self.typing_error(node, f"{prim}() of an empty {tree.kind.__name__}")
        out = start
        for v in items:
            if isinstance(v, Tree):
                self.typing_error(node, f"{prim}() of {tree.words()} holding {v.words()}")
            out = v if out is None else (self.binop(node, "add", out, v) if prim == "sum" else
                                         self.emit(node, prim, self.arithmetic_operands(node, out, v)))
        return out

    def container_call(self, node, fobj, env):
        """len, sum, min, max, list, tuple, zip, enumerate where containers or generators are
        involved; None when the call is not one of those (the call table lowers it)."""
        if fobj in (builtins.zip, builtins.enumerate):
            return self.iterable(node, env)
        if fobj in (np.array, np.asarray) and len(node.args) == 1 and isinstance(node.args[0], (
                ast.ListComp, ast.GeneratorExp)) and not node.keywords:
            return self.runtime_array(node, node.args[0], env)
        if fobj not in (builtins.len, builtins.sum, builtins.min, builtins.max, builtins.list, builtins.tuple) \
                or len(node.args) != 1 or node.keywords:
            return None
        arg = node.args[0]
        if fobj is builtins.sum and isinstance(arg, ast.GeneratorExp):
            return self.generator_sum(node, arg, env)
        if isinstance(arg, ast.GeneratorExp):
            v = Tree(list, self.comprehension(arg, env))
        else:
            v = self.iterable(arg, env) if isinstance(arg, ast.Call) else self.expr_any(arg, env)
        if isinstance(v, Zipped) and fobj is builtins.len:
            return self.seq_len(node, v)
        if not isinstance(v, Tree):
            if fobj is builtins.sum and hasattr(v, "type") and v.type.is_array:
                return self.binop(node, "add", self.b.const(0),
                                  self.emit(node, "sum", [v], {"axis": 0} if v.type.ndim > 1 else {"axis": None}))
            self.lowered_args[id(arg)] = v          # not a container: the call table lowers the call
            return None
        items = Tree(tuple, [self.key_value(k) for k in v.keys]) if v.kind is dict else v
        if fobj is builtins.len:
            return self.b.const(len(v))
        if fobj in (builtins.list, builtins.tuple):
            return Tree(fobj, items.items)
        if fobj is builtins.sum:
            return self.tree_fold(node, "sum", items, start=self.b.const(0))
        return self.tree_fold(node, fobj.__name__, items)

    # ------------------------------------------------------------------ iteration
    def iterable(self, node, env):
        """What a `for` or a comprehension iterates over: a Tree, a Zipped, a Range or an array."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            fobj = self.global_object(node.func)
            if fobj is builtins.zip:
                parts = [self.iterable(a, env) for a in node.args]
                if len({isinstance(p, Tree) for p in parts}) > 1:
                    self.unsupported(node, "zip of a list or tuple with an array or a range",
                                     "zip containers with containers, or arrays with arrays")
                return Zipped(parts)
            if fobj is builtins.enumerate and len(node.args) == 1:
                inner = self.iterable(node.args[0], env)
                if isinstance(inner, Tree):
                    return Zipped([Tree(tuple, [self.b.const(k) for k in range(len(inner))]), inner])
                return Zipped([Range(self.b.const(0), self.b.const(1), self.seq_len(node, inner)), inner])
            if fobj is builtins.range:
                start, stop, step = self.range_bounds(node, env)
                ks = [constant_int(v) for v in (start, stop, step)]
                if None not in ks and ks[2] != 0:
                    return Tree(tuple, [self.b.const(k) for k in range(*ks)])
                return Range(start, step, self.emit(node, "range_len", [start, stop, step], name="n"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "keys", "values", "items") and not node.args:
            d = self.expr_any(node.func.value, env)
            if isinstance(d, Tree) and d.kind is dict:
                keys = Tree(tuple, [self.key_value(k) for k in d.keys])
                return {"keys": keys, "values": Tree(tuple, d.items),
                        "items": Tree(tuple, [Tree(tuple, kv) for kv in zip(keys.items, d.items)])}[node.func.attr]
        v = self.expr_any(node, env)
        if isinstance(v, Tree) and v.kind is dict:
            return Tree(tuple, [self.key_value(k) for k in v.keys])
        if isinstance(v, (Tree, Zipped, Range)) or (hasattr(v, "type") and v.type.is_array):
            return v
        self.typing_error(node, f"cannot iterate over {describe(v)}")

    def key_value(self, k):
        if isinstance(k, str):
            return StrKey(k)
        return self.b.const(k)

    def seq_len(self, node, seq):
        """The number of items of a runtime sequence (an array's first axis, a Range, a zip of them)."""
        if isinstance(seq, Range):
            return seq.n
        if isinstance(seq, Zipped):
            lens = [self.seq_len(node, p) for p in seq.parts]
            if None not in map(constant_int, lens):
                return self.b.const(min(map(constant_int, lens)))
            out = lens[0]
            for n in lens[1:]:
                out = self.emit(node, "min", [out, n])
            return out
        if isinstance(seq, Tree):
            return self.b.const(len(seq))
        if seq.type.ndim == 0:
            self.typing_error(node, "iteration over a 0-d array")
        return self.emit(node, "shape", [seq], {"axis": 0})

    def static_items(self, node, seq):
        """The items of a sequence known while lowering (a Tree, a zip of Trees), else None."""
        if isinstance(seq, Tree):
            return list(seq.items)
        if isinstance(seq, Zipped) and seq.is_static():
            return [Tree(tuple, group) for group in zip(*(p.items for p in seq.parts))]
        return None

    def item_at(self, node, seq, k):
        """seq[k] for a runtime sequence and an int IR value k."""
        if isinstance(seq, Range):
            return self.binop(node, "add", seq.start, self.binop(node, "mul", k, seq.step))
        if isinstance(seq, Zipped):
            return Tree(tuple, [self.item_at(node, p, k) for p in seq.parts])
        return self.emit(node, "index" if seq.type.ndim == 1 else "slice", [seq, k],
                         {} if seq.type.ndim == 1 else {"spec": (("i",),)})

    def comprehension(self, node, env):
        """The items of [elt for ... in ... if ...] over sequences known while lowering."""
        out = []

        def walk(gens, env):
            if not gens:
                out.append(self.expr_any(node.elt, env))
                return
            g = gens[0]
            if g.is_async:
                self.unsupported(node, "async comprehensions")
            seq = self.iterable(g.iter, env)
            items = self.static_items(g.iter, seq)
            if items is None:
                self.unsupported(node, "a list comprehension over a range or an array known only at run time",
                                 "for numbers, make an array: np.array([... for i in range(n)]); or "
                                 "sum(... for i in range(n))")
            for item in items:
                inner = dict(env)
                self.bind_target(g.target, item, inner, node)
                if all(self.static_truth(c, inner) for c in g.ifs):
                    walk(gens[1:], inner)
        walk(node.generators, env)
        return out

    def static_truth(self, node, env):
        """A comprehension's condition, decided while lowering: it may read only constants (the
        counters and keys of the iteration, literals, globals)."""
        scope = {}
        for n in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            v = env.get(n) if n in self.locals else self.resolve_global(n, node)
            if n in self.locals:
                v = v.key if isinstance(v, StrKey) else v.owner.attrs["value"] if getattr(
                    getattr(v, "owner", None), "prim", None) == "const" else UNKNOWN
            if v is UNKNOWN or any(isinstance(c, ast.Call) for c in ast.walk(node)):
                self.unsupported(node, "a condition in a comprehension that depends on values known only at run "
                                       "time", "write the loop out, or use np.where")
            scope[n] = v
        try:
            return bool(eval(compile(ast.Expression(node), "<condition>", "eval"), {"__builtins__": {}}, scope))
        except Exception as e:          # noqa: BLE001 (the user's condition raising while compiling)
            self.typing_error(node, f"{type(e).__name__}: {e}")

    def bind_target(self, target, value, env, node):
        """A comprehension's or unrolled loop's target bound to one item (names are local to it)."""
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, Tree) or len(value) != len(target.elts):
                self.typing_error(node, f"cannot unpack {describe(value)} into {len(target.elts)} names")
            for t, v in zip(target.elts, value.items):
                self.bind_target(t, v, env, node)
        else:
            self.unsupported(target, "this loop target", "use plain names")

    def generator_sum(self, node, gen, env):
        """sum(elt for ... in ...): added while lowering over containers, else a loop."""
        if len(gen.generators) == 1:
            g = gen.generators[0]
            seq = self.iterable(g.iter, env)
            if self.static_items(g.iter, seq) is None:
                return self.runtime_sum(node, gen, g, seq, env)
        return self.tree_fold(node, "sum", Tree(list, self.comprehension(gen, env)), start=self.b.const(0))


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
