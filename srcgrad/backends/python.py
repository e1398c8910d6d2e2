"""The python backend: IR → Python ``ast`` → source text (astor) → a compiled function.

The source is meant to be read: one op a statement, loops as loops, constants written in
place, and names taken from the user's variables (``s``, ``s_1``; adjoints ``ds``, ``dx``).

Example:
    >>> src = to_source(fn)        # fn: an IR Function
    >>> f = compile_function(fn)   # a Python callable
"""
import ast
import math

import astor
import numpy as np

from ..ir.types import F32, F64, I64
from . import runtime
from .callbacks import checked_vjp

_BIN = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "div": ast.Div, "floordiv": ast.FloorDiv,
        "mod": ast.Mod, "pow": ast.Pow}
_CMP = {"lt": ast.Lt, "le": ast.LtE, "gt": ast.Gt, "ge": ast.GtE, "eq": ast.Eq, "ne": ast.NotEq}
# numpy's functions: NaN and infinities propagate as in numpy; erf only exists in math
_NP_FUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
             "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "expm1": "expm1", "log": "log",
             "log1p": "log1p", "log2": "log2", "log10": "log10", "sqrt": "sqrt", "atan2": "arctan2",
             "hypot": "hypot"}
_MATH_FUNCS = {"erf": "erf", "floor": "floor", "ceil": "ceil"}
_BUILTIN_FUNCS = {"round": "round"}


def _name(n):
    return ast.Name(id=n, ctx=ast.Load())


def _store(n):
    return ast.Name(id=n, ctx=ast.Store())


def _call(fn, args):
    return ast.Call(func=fn, args=args, keywords=[])


def _attr(mod, name):
    return ast.Attribute(value=_name(mod), attr=name, ctx=ast.Load())


class _Namer:
    """Python names for IR values: the user's name, made unique with _1, _2; t1, t2 otherwise."""

    def __init__(self, reserved=()):
        self.of = {}
        self.used = set(reserved) | {"np", "math", "range", "len", "float", "int", "bool", "abs", "min", "max",
                                     "round", "_sum_to", "_broadcast_like", "_reduce_grad", "_power",
                                     "_int_power"}
        self.temp = 0

    def fresh(self, hint):
        if hint:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "t"
            if base[0].isdigit():
                base = "v" + base
            n, k = base, 1
            while n in self.used:
                n, k = f"{base}_{k}", k + 1
        else:
            self.temp += 1
            n = f"t{self.temp}"
            while n in self.used:
                self.temp += 1
                n = f"t{self.temp}"
        self.used.add(n)
        return n

    def name(self, v):
        n = self.of.get(v)
        if n is None:
            n = self.of[v] = self.fresh(v.name)
        return n

    def alias(self, v, n):
        self.of[v] = n


class _Emitter:
    def __init__(self, fn):
        self.fn = fn
        self.names = _Namer()
        self.uses = {}
        _count_uses(fn.body, self.uses)
        self.externals = {}      # name -> Python object the generated code calls
        self.sites = []          # (ast.Subscript, op) of every array index, for IndexError messages

    def external_value(self, v, value):
        """A constant array: passed into the generated code's namespace under a name."""
        name = self.names.of.get(v)
        if name is None:
            name = self.names.name(v) if v.name else self.names.fresh("const")
            self.names.alias(v, name)
            self.externals[name] = value
        return name

    def fresh_name(self, hint):
        return self.names.fresh(hint)

    def external(self, obj):
        """The name the generated code calls ``obj`` by: its own name unless a variable, a
        builtin the code uses or another callee has it already."""
        for name, known in self.externals.items():
            if known is obj:
                return name
        name = self.names.fresh(getattr(obj, "__name__", "") or "fun")
        self.externals[name] = obj
        return name

    def coalesce(self, block, results, carried_args=None):
        """Name a value the block yields after the result it becomes (``s = s + t`` rather than
        ``s_1 = s + t; s = s_1``) when nothing else uses it and, in a loop, the old value of
        that name is not read after the value is computed."""
        ys = block.ops[-1].operands
        position = {op: k for k, op in enumerate(block.ops)}
        for j, (y, r) in enumerate(zip(ys, results)):
            if y.owner not in position or self.uses.get(y, 0) != 1 or y in self.names.of:
                continue
            target = self.names.name(r)
            later = {v for k, v in enumerate(ys) if k != j}     # the yield reads the others afterwards
            for op in block.ops[position[y.owner] + 1:-1]:
                later |= _all_operands(op)
            if carried_args is not None and carried_args[j] in later:
                continue
            if any(self.names.of.get(v) == target for v in later):
                continue      # the name still holds a value that is read further down
            self.names.alias(y, target)

    def value(self, v):
        """The expression for value ``v``: constants are written in place."""
        op = v.owner
        if op is not None and op.prim == "const" and isinstance(op.attrs["value"], np.ndarray):
            return _name(self.external_value(v, op.attrs["value"]))
        if op is not None and op.prim == "const":
            c = op.attrs["value"]
            if isinstance(c, float) and not math.isfinite(c):
                return _call(_name("float"), [ast.Constant(repr(c))])
            if isinstance(c, (int, float)) and c < 0:
                return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-c))
            return ast.Constant(c)
        return _name(self.names.name(v))

    def assign(self, v, expr):
        return ast.Assign(targets=[_store(self.names.name(v))], value=expr, lineno=0)

    def function(self):
        fn = self.fn
        args = [ast.arg(arg=self.names.name(p), annotation=None) for p in fn.params]
        body = self.block(fn.body)
        # named last, so that a function called ``abs`` or ``np`` does not hide the builtin or
        # module its own code calls (it becomes ``abs_1``)
        name = self.names.fresh(fn.name)
        return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=args, vararg=None,
                                                                kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                                defaults=[]),
                               body=body or [ast.Pass()], decorator_list=[], returns=None, lineno=0)

    def block(self, block, yield_to=None):
        out = []
        for op in block.ops:
            out.extend(self.op(op, yield_to))
        return out

    def op(self, op, yield_to):
        p = op.prim
        ins = [self.value(v) for v in op.operands]
        if p == "const":
            return []
        if p == "return":
            vals = [self._out(v) for v in op.operands]
            return [ast.Return(value=vals[0] if len(vals) == 1 else ast.Tuple(elts=vals, ctx=ast.Load()))]
        if p == "yield":
            return self._assign_many(yield_to, op.operands)
        if p == "if":
            return self._if(op, ins)
        if p == "for":
            return self._for(op, ins)
        if p == "while":
            return self._while(op)
        if p == "assert":
            return [ast.Assert(test=ins[0], msg=ast.Constant(op.attrs["message"]))]
        if p == "tape_new":
            if op.operands:
                e = ast.BinOp(left=ast.List(elts=[ast.Constant(None)], ctx=ast.Load()), op=ast.Mult(), right=ins[0])
            else:
                e = ast.List(elts=[], ctx=ast.Load())
            return [self.assign(op.result, e)]
        if p == "tape_put":
            tape, k, *vals = ins
            item = vals[0] if len(vals) == 1 else ast.Tuple(elts=vals, ctx=ast.Load())
            if op.attrs.get("append"):
                return [ast.Expr(value=_call(ast.Attribute(value=tape, attr="append", ctx=ast.Load()), [item]))]
            target = ast.Subscript(value=tape, slice=k, ctx=ast.Store())
            return [ast.Assign(targets=[target], value=item, lineno=0)]
        if p == "tape_get":
            tape, k = ins
            targets = [_store(self.names.name(r)) for r in op.results]
            tgt = targets[0] if len(targets) == 1 else ast.Tuple(elts=targets, ctx=ast.Store())
            return [ast.Assign(targets=[tgt], value=ast.Subscript(value=tape, slice=k, ctx=ast.Load()), lineno=0)]
        if p == "call_custom":
            fn = op.attrs["fn"]
            call = _call(_name(self.external(fn.fun)), ins)
            targets = [_store(self.names.name(r)) for r in op.results]
            tgt = targets[0] if len(targets) == 1 else ast.Tuple(elts=targets, ctx=ast.Store())
            return [ast.Assign(targets=[tgt], value=call, lineno=0)]
        if p == "call_custom_vjp":
            fn = op.attrs["fn"]
            call = _call(_name(self.external(checked_vjp(op))), ins)
            if len(op.attrs["targets"]) == 1:
                picked = ast.Subscript(value=call, slice=ast.Constant(op.attrs["targets"][0]), ctx=ast.Load())
                return [ast.Assign(targets=[_store(self.names.name(op.results[0]))], value=picked, lineno=0)]
            everything = _store(self.fresh_name("cotangents"))
            out = [ast.Assign(targets=[everything], value=call, lineno=0)]
            for r, k in zip(op.results, op.attrs["targets"]):
                out.append(ast.Assign(targets=[_store(self.names.name(r))],
                                      value=ast.Subscript(value=_name(everything.id), slice=ast.Constant(k),
                                                          ctx=ast.Load()), lineno=0))
            return out
        if p in ("setslice", "slice_add"):
            arr, v, *bounds = op.operands
            self.names.alias(op.result, self.names.name(arr))
            target = self.site(ast.Subscript(value=_name(self.names.name(arr)), slice=self.slice_key(op, bounds),
                                             ctx=ast.Store()), op)
            if p == "slice_add":
                return [ast.AugAssign(target=target, op=ast.Add(), value=self.value(v))]
            return [ast.Assign(targets=[target], value=self.value(v), lineno=0)]
        if p == "setitem":
            # arrays are updated in place: the new version is the same array, under the same name
            arr, v, *idx = op.operands
            self.names.alias(op.result, self.names.name(arr))
            key = self.value(idx[0]) if len(idx) == 1 else ast.Tuple(elts=[self.value(i) for i in idx],
                                                                      ctx=ast.Load())
            target = self.site(ast.Subscript(value=_name(self.names.name(arr)), slice=key, ctx=ast.Store()), op)
            return [ast.Assign(targets=[target], value=self.value(v), lineno=0)]
        if p == "index_add":
            # adjoint arrays are updated in place: the result is the same array, under the same name
            arr, g, *idx = op.operands
            self.names.alias(op.result, self.names.name(arr))
            key = self.value(idx[0]) if len(idx) == 1 else ast.Tuple(elts=[self.value(i) for i in idx],
                                                                      ctx=ast.Load())
            target = self.site(ast.Subscript(value=_name(self.names.name(arr)), slice=key, ctx=ast.Store()), op)
            return [ast.AugAssign(target=target, op=ast.Add(), value=self.value(g))]
        return [self.assign(op.result, self.expr(op, ins))]

    def site(self, subscript, op):
        self.sites.append((subscript, op))
        return subscript

    def slice_key(self, op, bounds):
        """The subscript of a slice op: ``a:b``, ``j``, ``::s`` per axis."""
        it = iter(bounds)
        parts = []
        for s in op.attrs["spec"]:
            if s[0] == "i":
                parts.append(self.value(next(it)))
            else:
                lo, hi, st = (self.value(next(it)) if has else None for has in s[1:])
                parts.append(ast.Slice(lower=lo, upper=hi, step=st))
        return parts[0] if len(parts) == 1 else ast.Tuple(elts=parts, ctx=ast.Load())

    def _out(self, v):
        """Returned floats are Python floats, as the user's own function would give."""
        if v.type is F64 and not (v.owner is not None and v.owner.prim == "const"):
            return _call(_name("float"), [self.value(v)])
        return self.value(v)

    def expr(self, op, ins):
        p = op.prim
        if p == "pow" and op.results[0].type is F64 and not _integral(op.operands[1]):
            return _call(_name("_power"), ins)      # a negative base would give a complex number
        if p == "pow" and op.results[0].type is I64 and not _integral(op.operands[1]):
            return _call(_name("_int_power"), ins)  # a negative exponent would give a float
        if p in _BIN:
            return ast.BinOp(left=ins[0], op=_BIN[p](), right=ins[1])
        if p in _CMP:
            return ast.Compare(left=ins[0], ops=[_CMP[p]()], comparators=[ins[1]])
        if p == "neg":
            return ast.UnaryOp(op=ast.USub(), operand=ins[0])
        if p == "not":
            return ast.UnaryOp(op=ast.Not(), operand=ins[0])
        if p in ("and", "or"):
            return ast.BoolOp(op=ast.And() if p == "and" else ast.Or(), values=ins)
        array = op.results and op.results[0].type.is_array
        if p in ("abs", "min", "max"):
            if array:
                return _call(_attr("np", {"abs": "abs", "min": "minimum", "max": "maximum"}[p]), ins)
            return _call(_name(p), ins)
        if p == "sum":
            kw = [] if op.attrs.get("axis") is None else [ast.keyword(arg="axis", value=ast.Constant(op.attrs["axis"]))]
            return ast.Call(func=_attr("np", "sum"), args=ins, keywords=kw)
        if p == "size":
            return ast.Attribute(value=ins[0], attr="size", ctx=ast.Load())
        if p == "matmul":
            return ast.BinOp(left=ins[0], op=ast.MatMult(), right=ins[1])
        if p == "transpose":
            return ast.Attribute(value=ins[0], attr="T", ctx=ast.Load())
        if p == "outer":
            return _call(_attr("np", "outer"), ins)
        if p == "copy":
            return _call(ast.Attribute(value=ins[0], attr="copy", ctx=ast.Load()), [])
        if p == "sum_to":
            return _call(_name("_sum_to"), ins)
        if p == "broadcast_like":
            args = ins + ([ast.Constant(op.attrs["axis"])] if op.attrs.get("axis") is not None else [])
            return _call(_name("_broadcast_like"), args)
        if p in _NP_FUNCS:
            return _call(_attr("np", _NP_FUNCS[p]), ins)
        if p in _MATH_FUNCS:
            return _call(_attr("math", _MATH_FUNCS[p]), ins)
        if p in _BUILTIN_FUNCS:
            return _call(_name(_BUILTIN_FUNCS[p]), ins)
        if p == "select":
            if array:
                return _call(_attr("np", "where"), ins)
            return ast.IfExp(test=ins[0], body=ins[1], orelse=ins[2])
        if p == "to_f64" and array:
            return _call(ast.Attribute(value=ins[0], attr="astype", ctx=ast.Load()), [_attr("np", "float64")])
        if p in ("prod", "amax", "amin"):
            kw = [] if op.attrs.get("axis") is None else [ast.keyword(arg="axis", value=ast.Constant(op.attrs["axis"]))]
            return ast.Call(func=_attr("np", {"prod": "prod", "amax": "max", "amin": "min"}[p]), args=ins, keywords=kw)
        if p == "reduce_grad":
            args = ins + [ast.Constant(op.attrs["of"]), ast.Constant(op.attrs.get("axis"))]
            return _call(_name("_reduce_grad"), args)
        if p == "arange":
            return _call(_attr("np", "arange"), ins)
        if p in ("to_f64", "to_i64", "to_bool"):
            return _call(_name({"to_f64": "float", "to_i64": "int", "to_bool": "bool"}[p]), ins)
        if p == "slice":
            return self.site(ast.Subscript(value=ins[0], slice=self.slice_key(op, op.operands[1:]), ctx=ast.Load()), op)
        if p == "index":
            key = ins[1] if len(ins) == 2 else ast.Tuple(elts=ins[1:], ctx=ast.Load())
            element = self.site(ast.Subscript(value=ins[0], slice=key, ctx=ast.Load()), op)
            if op.operands[0].type.dtype is F32:      # compiled code computes in float64
                return _call(_name("float"), [element])
            return element
        if p == "shape":
            return ast.Subscript(value=ast.Attribute(value=ins[0], attr="shape", ctx=ast.Load()),
                                 slice=ast.Constant(op.attrs["axis"]), ctx=ast.Load())
        if p == "zeros_like":
            return _call(_attr("np", "zeros_like"), ins)
        if p == "full":
            shape = ins[0] if len(ins) == 1 else ast.Tuple(elts=ins, ctx=ast.Load())
            value = op.attrs["value"]
            if value == 0:
                return _call(_attr("np", "zeros"), [shape])
            if value == 1:
                return _call(_attr("np", "ones"), [shape])
            return _call(_attr("np", "full"), [shape, ast.Constant(value)])
        if p == "range_len":
            return _call(_name("len"), [_call(_name("range"), ins)])
        raise NotImplementedError(f"python backend: no rule for primitive '{p}'")

    def _assign_many(self, targets, values):
        """Assign values to the targets as one parallel move (``a, b = b, a`` when they overlap)."""
        pairs = []
        for t, v in zip(targets, values):
            tn = self.names.name(t)
            e = self.value(v)
            if not (isinstance(e, ast.Name) and e.id == tn):
                pairs.append((tn, e))
        names = {tn for tn, _ in pairs}
        reads = {n.id for _, e in pairs for n in ast.walk(e) if isinstance(n, ast.Name)}
        if len(pairs) > 1 and names & reads:
            return [ast.Assign(targets=[ast.Tuple(elts=[_store(tn) for tn, _ in pairs], ctx=ast.Store())],
                               value=ast.Tuple(elts=[e for _, e in pairs], ctx=ast.Load()), lineno=0)]
        return [ast.Assign(targets=[_store(tn)], value=e, lineno=0) for tn, e in pairs]

    def _if(self, op, ins):
        for blk in op.regions:
            self.coalesce(blk, op.results)
        then = self.block(op.regions[0], op.results) or [ast.Pass()]
        other = self.block(op.regions[1], op.results)
        return [ast.If(test=ins[0], body=then, orelse=other)]

    def _for(self, op, ins):
        start, stop, step, *init = ins
        body = op.regions[0]
        i, *args = body.args
        for a, r in zip(args, op.results):      # carried values share one Python name
            self.names.alias(a, self.names.name(r))
        self.coalesce(body, op.results, args)
        pre = self._assign_many(op.results, op.operands[3:])
        rng = [stop] if _is_zero(op.operands[0]) and _is_one(op.operands[2]) else (
            [start, stop] if _is_one(op.operands[2]) else [start, stop, step])
        loop = ast.For(target=_store(self.names.name(i)), iter=_call(_name("range"), rng),
                       body=self.block(body, op.results) or [ast.Pass()], orelse=[], lineno=0)
        return pre + [loop]

    def _while(self, op):
        cond, body = op.regions
        for blk in (cond, body):
            for a, r in zip(blk.args, op.results):
                self.names.alias(a, self.names.name(r))
        self.coalesce(body, op.results, body.args)
        pre = self._assign_many(op.results, op.operands)
        cond_ops = cond.ops[:-1]
        test = self.value(cond.ops[-1].operands[0])
        body_stmts = self.block(body, op.results) or [ast.Pass()]
        if not cond_ops:
            return pre + [ast.While(test=test, body=body_stmts, orelse=[])]
        head = []
        for o in cond_ops:
            head.extend(self.op(o, None))
        stop = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Break()], orelse=[])
        return pre + [ast.While(test=ast.Constant(True), body=head + [stop] + body_stmts, orelse=[])]


def _count_uses(block, uses):
    for op in block.ops:
        for v in op.operands:
            uses[v] = uses.get(v, 0) + 1
        for r in op.regions:
            _count_uses(r, uses)


def _all_operands(op):
    out = set(op.operands)
    for r in op.regions:
        for o in r.ops:
            out |= _all_operands(o)
    return out


def _integral(v):
    """Whether ``v`` is a constant whole number (then ``x ** v`` is real for every float x)."""
    return v.owner is not None and v.owner.prim == "const" and float(v.owner.attrs["value"]).is_integer()


def _is_zero(v):
    return v.owner is not None and v.owner.prim == "const" and v.owner.attrs["value"] == 0


def _is_one(v):
    return v.owner is not None and v.owner.prim == "const" and v.owner.attrs["value"] == 1


def generate(fn):
    """(readable Python source of IR function ``fn``, the objects its code calls by name)."""
    return _generate(fn)[:2]


def _generate(fn):
    em = _Emitter(fn)
    tree = ast.Module(body=[em.function()], type_ignores=[])
    return astor.to_source(tree), em.externals, em, tree


def _index_sites(fn, source):
    """{line of ``source``: [(the index as printed there, its op)]} — ``source`` generated from
    ``fn`` again, the printed tree matched node for node with the emitted one."""
    again, _, em, tree = _generate(fn)
    if again != source:
        return {}
    printed = {}
    for made, read in zip(ast.walk(tree), ast.walk(ast.parse(source))):
        if type(made) is not type(read):
            return {}
        printed[id(made)] = read
    sites = {}
    for node, op in em.sites:
        read = printed.get(id(node))
        if read is not None:
            sites.setdefault(read.lineno, []).append((read, op))
    return sites


def _out_of_bounds(read, op, values):
    """The IndexError of an index that ``read`` (a printed subscript of ``op``) makes with the
    variables ``values``, or None where it is in bounds."""
    def value(node):
        if isinstance(node, ast.Name):
            return values.get(node.id)
        return ast.literal_eval(node)
    if not isinstance(read.value, ast.Name):
        return None
    arr = values.get(read.value.id)
    parts = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    for axis, part in enumerate(parts):
        if isinstance(part, ast.Slice) or axis >= np.ndim(arr):
            continue
        i, n = value(part), np.shape(arr)[axis]
        if isinstance(i, (int, np.integer, bool, np.bool_)) and not -n <= int(i) < n:
            name = op.attrs.get("array") or op.operands[0].name or "array"
            where = f" ({op.loc})" if op.loc is not None else ""
            return IndexError(f"index {int(i)} is out of bounds for axis {axis} of '{name}' with size {n}{where}")
    return None


def _index_error(fn, source, filename, error):
    """numpy's IndexError from the generated code, said as the llvm backend says it: the
    user's array (also for the adjoint arrays of gradient code), the index, the size and the
    source line. None where the error is not an out-of-bounds index of the code's arrays."""
    tb, frame = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return None
    for read, op in _index_sites(fn, source).get(line, []):
        try:
            better = _out_of_bounds(read, op, frame.f_locals)
        except (ValueError, TypeError):      # an index that is not a plain variable or number
            better = None
        if better is not None:
            return better
    return None


def to_source(fn):
    """Readable Python source of IR function ``fn``."""
    return generate(fn)[0]


def compile_function(fn, source=None, externals=None):
    """A Python callable running IR function ``fn``."""
    if source is None:
        source, externals = generate(fn)
    namespace = {"np": np, "math": math, "_sum_to": runtime.sum_to, "_broadcast_like": runtime.broadcast_like,
                 "_reduce_grad": runtime.reduce_grad, "_power": runtime.power, "_int_power": runtime.int_power,
                 **(externals or {})}
    filename = f"<srcgrad {fn.name}>"
    exec(compile(source, filename, "exec"), namespace)
    compiled = namespace[ast.parse(source).body[0].name]

    def run(*args):
        try:
            return compiled(*args)
        except IndexError as e:
            better = _index_error(fn, source, filename, e)
            if better is None:
                raise
            e.__traceback__ = None      # frees the frame of the generated code
        raise better

    run.__wrapped__ = compiled
    return run
