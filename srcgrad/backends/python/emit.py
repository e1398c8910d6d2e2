"""IR → Python ``ast``: one statement per printed op, in the order of the IR.

Pure ops are written by the expression table (``exprs.EXPR``); the ops that make statements
— returns, loops, branches, writes into arrays, tapes, calls of user code — by the statement
table ``STMT`` below. ``plan.Plan`` has decided beforehand which temporaries are folded into
their use, how reverse sweeps are headed and which loop results keep their init's name.
Names come from the user's variables (``s``, ``s_1``; adjoints ``ds``, ``dx``); a
``# line N: <source>`` comment heads each group of statements from one source line.

Example:
    em = Emitter(fn)
    tree = em.function()       # an ast.FunctionDef
"""
import ast
import linecache

import numpy as np

from ... import runtime
from ...ir.types import F64
from ..callbacks import checked_vjp
from .exprs import EXPR, constant, is_const, range_args
from .syntax import ast_attr, ast_call, ast_name, ast_store
from .indexing import INDEXING_EXPR, INDEXING_STMT
from .undo import UNDO_STMT
from .write_keys import WRITE_KEYS
from .plan import Plan

COMMENT = "__srcgrad_line_"      # a marker statement ``__srcgrad_line_<k>__``: the k-th comment


class Namer:
    """Python names for IR values: the user's name, made unique with _1, _2; t1, t2 otherwise."""

    def __init__(self):
        self.of = {}
        self.used = {"np", "math", "range", "reversed", "len", "float", "int", "bool", "abs", "min", "max",
                     "round", *runtime.__all__}
        self.temp = 0
        self.suffix = {}         # base name -> the next _k to try

    def fresh(self, hint):
        if hint:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "t"
            if base[0].isdigit():
                base = "v" + base
            n, k = base, self.suffix.get(base, 1)
            while n in self.used:
                n, k = f"{base}_{k}", k + 1
            self.suffix[base] = k
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


class Emitter:
    def __init__(self, fn):
        self.fn = fn
        self.plan = Plan(fn)
        self.names = Namer()
        self.pending = {}        # folded value -> its expression, until its one use takes it
        self.externals = {}      # name -> Python object the generated code calls
        self.sites = []          # (ast.Subscript, op) of every array index, for IndexError messages
        self.comments = []       # the text of each ``# line N`` marker, by number
        self.line = None         # (file, line) of the statements being written

    # ------------------------------------------------------------------ values and names
    def value(self, v):
        """The expression for value ``v``: folded expressions and constants are written in place."""
        if v in self.pending:
            return self.pending.pop(v)
        if isinstance(v, int):
            return constant(v)
        op = v.owner
        if op is not None and op.prim == "const":
            c = op.attrs["value"]
            return ast_name(self.external_value(v, c)) if isinstance(c, np.ndarray) else constant(c)
        return ast_name(self.names.name(v))

    def external_value(self, v, value):
        """A constant array: passed into the generated code's namespace under a name."""
        name = self.names.of.get(v)
        if name is None:
            name = self.names.name(v) if v.name else self.names.fresh("const")
            self.names.alias(v, name)
            self.externals[name] = value
        return name

    def external(self, obj):
        """The name the generated code calls ``obj`` by: its own name unless a variable, a
        builtin the code uses or another callee has it already."""
        for name, known in self.externals.items():
            if known is obj:
                return name
        name = self.names.fresh(getattr(obj, "__name__", "") or "fun")
        self.externals[name] = obj
        return name

    def assign(self, v, expr):
        return ast.Assign(targets=[ast_store(self.names.name(v))], value=expr, lineno=0)

    def assign_results(self, op, expr):
        """``r = expr`` or ``r1, r2 = expr`` for the results of ``op``."""
        targets = [ast_store(self.names.name(r)) for r in op.results]
        target = targets[0] if len(targets) == 1 else ast.Tuple(elts=targets, ctx=ast.Store())
        return ast.Assign(targets=[target], value=expr, lineno=0)

    def coalesce(self, block, results, carried_args=None):
        """Name a value the block yields after the result it becomes (``s = s + t`` rather than
        ``s_1 = s + t; s = s_1``) when, in a loop, the old value of that name is not read after
        the value is computed (reads of the value itself then read the same name)."""
        plan = self.plan
        ys = block.yielded
        position = {op: k for k, op in enumerate(block.ops)}
        for j, (y, r) in enumerate(zip(ys, results)):
            if y.owner not in position or y in self.names.of:
                continue
            target = self.names.name(r)
            later = {v for k, v in enumerate(ys) if k != j}     # the yield reads the others afterwards
            for op in block.ops[position[y.owner] + 1:-1]:
                later |= plan.leaves(op)
            if y.owner.prim in ("for", "while"):
                # a loop's carried variable takes its result's name before the loop runs: its body
                # must not read the old value of that name (un = u.copy(); for ...: un[i] = u[i])
                later |= plan.leaves(y.owner)
            if carried_args is not None and carried_args[j] in later:
                continue
            if any(self.names.of.get(v, self.names.of.get(plan.name_source(v))) == target for v in later):
                continue      # the name still holds a value that is read further down
            self.names.alias(y, target)

    # ------------------------------------------------------------------ statements
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

    def block(self, block, yield_to=None, ops=None):
        """The statements of ``block`` (or of its ``ops``), a ``# line N`` comment heading each
        group that comes from one line of the user's source (a nested block continues the line
        of the statement that holds it; a helper compiled in place is under the line calling it)."""
        out = []
        for op in block.ops if ops is None else ops:
            before, loc = self.line, self.plan.loc(op)
            # an inlined helper's ops are grouped under the user's line that calls it
            loc = loc and loc.outermost()
            here = before if loc is None else (loc.file, loc.line)
            self.line = here
            stmts = self.op(op, yield_to)
            self.line = here if stmts else before
            if stmts and here != before:
                out.append(self.comment(loc))
            out.extend(stmts)
        return out

    def comment(self, loc):
        """A marker statement that ``source.py`` prints as ``# line N: <the line>``."""
        text = linecache.getline(loc.file, loc.line).strip()
        self.comments.append(f"# line {loc.line}: {text}" if text else f"# line {loc.line}")
        return ast.Expr(value=ast_name(f"{COMMENT}{len(self.comments) - 1}__"))

    def op(self, op, yield_to):
        if op in self.plan.skipped:
            return []
        p = op.prim
        if p in STMT:
            return STMT[p](self, op, yield_to)
        expr = self.expr(op, [self.value(v) for v in op.operands])
        if op.results[0] in self.plan.folded:
            self.pending[op.results[0]] = expr
            return []
        return [self.assign(op.result, expr)]

    def expr(self, op, ins):
        rule = EXPR.get(op.prim)
        if rule is None:
            raise NotImplementedError(f"python backend: no rule for primitive '{op.prim}'")
        return rule(self, op, ins)

    def site(self, subscript, op):
        self.sites.append((subscript, op))
        return subscript

    def slice_key(self, op, parts_in):
        """The subscript of a slice op: ``a:b``, ``j``, ``::s`` per axis."""
        it = iter(parts_in)
        parts = []
        for s in op.attrs["spec"]:
            if s[0] == "i":
                parts.append(next(it))
            elif s[0] == "n":
                parts.append(ast.Constant(None))
            else:
                lo, hi, st = (next(it) if has else None for has in s[1:])
                parts.append(ast.Slice(lower=lo, upper=hi, step=st))
        return parts[0] if len(parts) == 1 else ast.Tuple(elts=parts, ctx=ast.Load())

    def out(self, v):
        """Returned floats are Python floats, as the user's own function would give."""
        if v.type is F64 and not (v.owner is not None and v.owner.prim == "const"):
            return ast_call(ast_name("float"), [self.value(v)])
        return self.value(v)

    def assign_many(self, targets, values):
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
            return [ast.Assign(targets=[ast.Tuple(elts=[ast_store(tn) for tn, _ in pairs], ctx=ast.Store())],
                               value=ast.Tuple(elts=[e for _, e in pairs], ctx=ast.Load()), lineno=0)]
        return [ast.Assign(targets=[ast_store(tn)], value=e, lineno=0) for tn, e in pairs]

    def share_names(self, op):
        """Results named after the value they replace, where the plan found that safe."""
        for j, r in enumerate(op.results):
            v = self.plan.share.get((op, j))
            if v is not None and r not in self.names.of:     # (not when an enclosing if named it)
                self.names.alias(r, self.names.name(v))

    def carry_names(self, op, blocks):
        """A loop's results, and the block arguments that carry them, share one Python name:
        the init's name where the plan found it unused after the loop."""
        self.share_names(op)
        for blk, args in blocks:
            for a, r in zip(args, op.results):
                self.names.alias(a, self.names.name(r))


# ------------------------------------------------------------------ the statement table


def _const(em, op, yield_to):
    return []


def _return(em, op, yield_to):
    vals = [em.out(v) for v in op.operands]
    return [ast.Return(value=vals[0] if len(vals) == 1 else ast.Tuple(elts=vals, ctx=ast.Load()))]


def _yield(em, op, yield_to):
    return em.assign_many(yield_to, op.operands)


def _assert(em, op, yield_to):
    return [ast.Assert(test=em.value(op.operands[0]), msg=ast.Constant(op.attrs["message"]))]


def _if(em, op, yield_to):
    em.share_names(op)
    for blk in op.regions:
        em.coalesce(blk, op.results)
    test = em.value(op.cond)
    then = em.block(op.then, op.results)
    other = em.block(op.orelse, op.results)
    if not then and other:
        return [ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=other, orelse=[])]
    nested = [s for s in other if not is_comment(s)]
    if len(nested) == 1 and isinstance(nested[0], ast.If):
        other = nested          # printed as ``elif``, the user's line itself
    return [ast.If(test=test, body=then or [ast.Pass()], orelse=other)]


def is_comment(stmt):
    """Whether ``stmt`` is the marker of a ``# line N`` comment (``Emitter.comment``)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) and stmt.value.id.startswith(COMMENT)


def _for(em, op, yield_to):
    header = em.plan.headers.get(op)
    em.carry_names(op, [(op.body, op.carried)])
    em.coalesce(op.body, op.results, op.carried)
    pre = em.assign_many(op.results, op.inits)
    if header is None:
        target = em.names.name(op.index)
        bounds = [em.value(v) for v in op.bounds]
        loop_range = ast_call(ast_name("range"), range_args(op.bounds, bounds))
        head = []
    else:
        target, loop_range, head = _reverse_header(em, header)
    body = head + em.block(op.body, op.results)
    em.names.used.discard(target)      # the name is free again after the loop
    return pre + [ast.For(target=ast_store(target), iter=loop_range, body=body or [ast.Pass()], orelse=[], lineno=0)]


def _reverse_header(em, h):
    """(loop variable, ``reversed(range(...))``, statements computing the tape position)."""
    if h.hint and h.target not in em.names.of:
        em.names.alias(h.target, em.names.fresh(h.hint))
    target = em.names.name(h.target)
    bounds = [em.value(b) for b in h.bounds]
    args = range_args(h.bounds, bounds) if len(h.bounds) == 3 else bounds
    loop_range = ast_call(ast_name("range"), args)
    if h.backwards:
        loop_range = ast_call(ast_name("reversed"), [loop_range])
    head = []
    uses = em.plan.uses.get(h.k, 0)
    if h.derive is not None and uses:
        start, step = h.derive
        k = ast_name(target)
        if not is_const(start, 0):
            k = ast.BinOp(left=k, op=ast.Sub(), right=em.value(start))
        if not is_const(step, 1):
            k = ast.BinOp(left=k, op=ast.FloorDiv(), right=em.value(step))
        if uses == 1:
            em.pending[h.k] = k
        else:
            head.append(em.assign(h.k, k))
    return target, loop_range, head


def _while(em, op, yield_to):
    cond, body = op.test, op.body
    em.carry_names(op, [(cond, cond.args), (body, body.args)])
    em.coalesce(body, op.results, body.args)
    pre = em.assign_many(op.results, op.inits)
    head = em.block(cond, None, cond.ops[:-1])
    test = em.value(cond.yielded[0])
    body_stmts = em.block(body, op.results) or [ast.Pass()]
    if not head:
        return pre + [ast.While(test=test, body=body_stmts, orelse=[])]
    stop = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Break()], orelse=[])
    return pre + [ast.While(test=ast.Constant(True), body=head + [stop] + body_stmts, orelse=[])]


def _tape_new(em, op, yield_to):
    if op.operands:
        e = ast.BinOp(left=ast.List(elts=[ast.Constant(None)], ctx=ast.Load()), op=ast.Mult(),
                      right=em.value(em.plan.tape_size(op)))
    else:
        e = ast.List(elts=[], ctx=ast.Load())
    return [em.assign(op.result, e)]


def _tape_put(em, op, yield_to):
    tape, k, *vals = op.operands
    items = [em.value(v) for v in vals]
    item = items[0] if len(items) == 1 else ast.Tuple(elts=items, ctx=ast.Load())
    if op.attrs.get("append"):
        return [ast.Expr(value=ast_call(ast_attr(em.value(tape), "append"), [item]))]
    target = ast.Subscript(value=em.value(tape), slice=em.value(k), ctx=ast.Store())
    return [ast.Assign(targets=[target], value=item, lineno=0)]


def _tape_get(em, op, yield_to):
    tape, k = op.operands
    return [em.assign_results(op, ast.Subscript(value=em.value(tape), slice=em.value(k), ctx=ast.Load()))]


def _call_custom(em, op, yield_to):
    call = ast_call(ast_name(em.external(op.attrs["fn"].fun)), [em.value(v) for v in op.operands])
    return [em.assign_results(op, call)]


def _call_custom_vjp(em, op, yield_to):
    call = ast_call(ast_name(em.external(checked_vjp(op))), [em.value(v) for v in op.operands])
    targets = op.attrs["targets"]
    if len(targets) == 1:
        picked = ast.Subscript(value=call, slice=ast.Constant(targets[0]), ctx=ast.Load())
        return [em.assign(op.results[0], picked)]
    everything = em.names.fresh("cotangents")
    out = [ast.Assign(targets=[ast_store(everything)], value=call, lineno=0)]
    for r, k in zip(op.results, targets):
        out.append(em.assign(r, ast.Subscript(value=ast_name(everything), slice=ast.Constant(k), ctx=ast.Load())))
    return out


def _write(augmented, key):
    """An in-place write ``a[key] = v`` (``a[key] += v``): the new version of the array is the
    same array, under the same name; ``key(em, op, index operands)`` gives the subscript."""
    def emit(em, op, yield_to):
        arr, v, *rest = op.operands
        em.names.alias(op.result, em.names.name(arr))
        value = em.value(v)
        place = ast.Subscript(value=ast_name(em.names.name(arr)), slice=key(em, op, rest), ctx=ast.Store())
        target = em.site(place, op)
        if augmented:
            return [ast.AugAssign(target=target, op=ast.Add(), value=value)]
        return [ast.Assign(targets=[target], value=value, lineno=0)]
    return emit


STMT = {
    "const": _const, "return": _return, "yield": _yield, "assert": _assert,
    "if": _if, "for": _for, "while": _while,
    "tape_new": _tape_new, "tape_put": _tape_put, "tape_get": _tape_get,
    "call_custom": _call_custom, "call_custom_vjp": _call_custom_vjp,
    "setitem": _write(False, WRITE_KEYS["item"]), "index_add": _write(True, WRITE_KEYS["item"]),
    "setslice": _write(False, WRITE_KEYS["slice"]), "slice_add": _write(True, WRITE_KEYS["slice"]),
}
# numpy's advanced indexing (indexing.py): x[idx], x[mask] and their writes
EXPR.update(INDEXING_EXPR)
STMT.update(INDEXING_STMT)
STMT.update(UNDO_STMT)          # the reverse sweep's undo log (undo.py)
