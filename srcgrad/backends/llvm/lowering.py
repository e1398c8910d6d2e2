"""The llvm backend's lowering: an IR function to an LLVM function (llvmlite), for a target.

It keeps the value map (IR value -> LLVM value), lowers blocks and regions, and lowers
``if``/``for``/``while`` to basic blocks here; every other op it dispatches by its primitive's
name to the rule of the one table that implements it (Numba's lowering.py + mathimpl.py
habit; registry.py says what a rule is):

- the target's math table (``CPU_MATH``) and ``SCALAR`` (scalar_math.py): numbers, and
  element-wise over arrays with numpy's broadcasting (lazy.elementwise; fusion.py and
  lazy.py compute element-wise chains inside their consumer's loop);
- ``CORE`` (here): constants, asserts, ``range_len`` and control flow;
- ``ARRAY`` (array_ops.py): element access, views, slicing, broadcasting, new arrays;
- ``KERNELS`` (kernels.py): matmul, reductions and their gradients;
- ``TAPES`` (memory.py): the tapes of reverse mode (memory.py also keeps the arena and
  frees per iteration);
- ``UNDO`` (undo.py): reverse mode's undo log of overwritten elements;
- ``CALLS`` (callbacks.py): calls back into Python;
- ``LINALG`` and ``LINALG_SCALAR`` (linalg.py): einsum, np.linalg's factorisations, norm_sqrt;
- ``JOINS`` (joins.py): joining, splitting and building arrays (np.concatenate, diagonals, ...);
- ``SHAPES`` (shapes.py): reshape, transposes, flips, squeeze, expand_dims, astype, np.array([...]).

A rule is a function ``rule(ctx, op, ins)`` of the lowering context ``ctx``, the ``Lowering``
below; the helpers the rules share are functions of ``ctx`` too, in the module named after
what they do: arrays.py (element access, views, new arrays), lazy.py (lazy values),
loops.py (loops inside an op), memory.py (the arena). Errors leave the function through its
exit block with a status (error_codes.py); bounds checks a loop can make before it are made
there (checks.py). jit.py compiles the result.

Example:
    Lowering(fn, module, CPU).build("srcgrad.fn.f.0123")       # the ir.Function
"""
from llvmlite import ir

from ...ir.primitives import PRIMITIVES
from ...ir.types import BOOL, F64, I64
from .array_ops import ARRAY
from .arrays import Lazy, global_array
from .callbacks import CALLS
from .checks import checkable_accesses, versioned_loop
from .error_codes import OK, RANGE_STEP, SITE
from .folding import FoldingBuilder, known
from .fusion import lazy_ops, lazy_positions
from .indexing import INDEXING
from .joins import JOINS
from .kernels import KERNELS
from .lazy import elementwise, stored
from .linalg import LINALG, LINALG_SCALAR
from .loop_memory import frees_each_iteration
from .loops import counted_loop, range_len
from .memory import TAPES, free_all, release_iteration
from .reductions import REDUCTIONS
from .registry import lower
from .scalar_math import SCALAR, checked_int
from .shapes import SHAPES
from .types import BIT, BYTE, INT32, INT64, PTR, ltype
from .undo import UNDO

# the terminators of blocks, lowered by Lowering.block (they are no op of their own)
STRUCTURAL = ("yield", "return")

CORE = {}


def tables(target):
    """The lowering's tables for ``target``: (scalar tables, whose entries lower numbers and
    array elements; op tables, whose entries lower whole ops). Each lowered primitive is a
    key of exactly one of them."""
    return [target.math, SCALAR, LINALG_SCALAR], [CORE, ARRAY, KERNELS, TAPES, UNDO, CALLS, INDEXING, LINALG,
                                                   REDUCTIONS, JOINS, SHAPES]


def _scalar_op(ctx, op, ins):
    """An op of a scalar table: element-wise over arrays, a checked int op, or on numbers."""
    if op.results and op.results[0].type.is_array:
        return elementwise(ctx, op, ins)
    if PRIMITIVES[op.prim].overflows and op.results[0].type is I64:     # OverflowError beyond 64 bits
        return checked_int(ctx, op, ins)
    return ctx.scalar(op.prim, [x.type for x in op.operands], op.results[0].type, ins)


class Lowering:
    """The lowering context of one function, ``ctx`` in every rule and helper: the builder
    ``b`` (set by ``build``), the value map ``values`` (``v``), the dispatch of an op to its
    rule (``op``, ``scalar``), and the exits (``fail``, ``guard``, ``raise_at``). The rest is
    state the helpers share, set here and in ``build``: ``func`` and its ``exit_block``,
    ``status``, ``outs``, the call's ``arena``, ``arena_count``, ``errinfo`` and
    ``callback_table`` (memory.py, callbacks.py); ``lazy``, ``memo``, ``strict`` (lazy.py);
    ``trusted`` (checks.py); ``growing``, ``frees`` (memory.py). What the entry stub needs
    afterwards: ``errors`` (the sites' exceptions) and ``callbacks`` (the ops calling Python,
    in the order of the callback table)."""

    def __init__(self, fn, module, target, boundscheck=True):
        self.fn, self.module, self.target = fn, module, target
        self.boundscheck = boundscheck
        self.values = {}
        self.trusted = set()         # accesses whose bounds were checked before their loop
        self.lazy = lazy_ops(fn)      # array ops computed inside their consumer's loop (fusion.py)
        self.memo = {}                # lazy elements computed in the current loop iteration
        self.strict = None            # lazy sum_to parts stored as arrays (lazy.py)
        self.errors = []             # per site: numbers -> the exception to raise (status SITE + k)
        self.callbacks = []          # call_custom(_vjp) ops, in the order of the callback table
        self.uses_blas = None        # where the BLAS the code calls comes from (blas.py), if it calls any
        self.growing = {}      # growing tape value -> (capacity slot, pointer slot)
        self.frees = []        # (pointer, arena slot) of the tapes of the region being lowered
        scalar_tables, op_tables = tables(target)
        self.rules = {name: _scalar_op for table in scalar_tables for name in table}
        self.scalar_rules = {name: rule for table in scalar_tables for name, rule in table.items()}
        for table in op_tables:
            self.rules.update(table)

    # ------------------------------------------------------------------ the function
    def build(self, name):
        """Lower the function as the LLVM function ``name`` of the module; returns it."""
        fn = self.fn
        params = [ir.PointerType(ltype(p.type)) if p.type.is_array else (ltype(p.type) if p.type is not BOOL
                                                                          else BYTE) for p in fn.params]
        outs = [ir.PointerType(ltype(t) if t is not BOOL else BYTE) for t in fn.result_types]
        # the arena (a growing array of every allocation, for Python to free), its count and
        # capacity, error details, and the table of callbacks into Python (backends/callbacks.py)
        extra = [ir.PointerType(PTR), ir.PointerType(INT64), ir.PointerType(INT64), ir.PointerType(PTR)]
        self.func = ir.Function(self.module, ir.FunctionType(INT32, params + outs + extra), name=name)
        entry = self.func.append_basic_block("entry")
        self.b = FoldingBuilder(entry)
        self.exit_block = self.func.append_basic_block("exit")
        self.allocas_block = entry
        self.status = self.b.alloca(INT32, name="status")
        self.b.store(ir.Constant(INT32, OK), self.status)
        for p, arg in zip(fn.params, self.func.args[:len(fn.params)]):
            if p.type.is_array:
                self.values[p] = self.b.load(arg)
            else:
                self.values[p] = self.b.trunc(arg, BIT) if p.type is BOOL else arg
        n_out = len(fn.result_types)
        self.outs = self.func.args[len(fn.params):len(fn.params) + n_out]
        self.arena, self.arena_count, self.errinfo, self.callback_table = self.func.args[len(fn.params) + n_out:]
        self.block(fn.body)
        eb = ir.IRBuilder(self.exit_block)
        eb.ret(eb.load(self.status))
        return self.func

    def declare(self, name, ret, args):
        """The module's function ``name`` (declared on first use: libm, malloc, ...)."""
        f = self.module.globals.get(name)
        if f is None:
            f = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return f

    def module_function(self, name, arg_types, ret, body):
        """The module's internal function ``name`` (made on first use, one copy however many ops call
        it: the compile time of O3 grows faster than a function's size), its code emitted by
        ``body(*args)`` through the helpers, with this context's builder moved into it."""
        f = self.module.globals.get(name)
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(ret, arg_types), name=name)
        f.linkage = "internal"
        f.attributes.add("noinline")
        saved = self.b, self.func
        self.b, self.func = FoldingBuilder(f.append_basic_block("entry")), f
        try:
            body(*f.args)
        finally:
            self.b, self.func = saved
        return f

    def stack_slot(self, t):
        """A stack slot of LLVM type ``t``, made in the entry block (where LLVM promotes it to a
        register)."""
        with self.b.goto_entry_block():
            return self.b.alloca(t)

    def call_intrinsic(self, name, args):
        """A call of the LLVM intrinsic ``name``, overloaded on its first argument's type."""
        f = self.module.declare_intrinsic(name, [a.type for a in args[:1]])
        return self.b.call(f, args)

    # ------------------------------------------------------------------ blocks and ops
    def block(self, block):
        """Lower a block's ops; returns the values it yields (None where it returns)."""
        for op in block.ops:
            if op.prim == "yield":
                return [self.v(x) for x in op.operands]
            if op.prim == "return":
                for v, ptr in zip(op.operands, self.outs):
                    val = self.v(v)
                    self.b.store(self.b.zext(val, BYTE) if v.type is BOOL else val, ptr)
                free_all(self)
                self.b.branch(self.exit_block)
                return None
            self.op(op)
        return None

    def region(self, blk):
        """Lower a region's ops; returns its yielded values. Tapes made in it are freed at its end."""
        saved, self.frees = self.frees, []
        ys = self.block(blk)
        free_all(self)
        self.frees = saved
        return ys

    def v(self, value):
        """The LLVM value of the IR ``value``."""
        return self.values[value]

    def op(self, op):
        """Lower one op: its operands' values (lazy ones stored where the op cannot read them
        element by element), then the rule of its primitive, which gives its result."""
        p = op.prim
        ins = [self.v(x) for x in op.operands] if p not in ("for", "while", "if") else None
        if ins and any(isinstance(v, Lazy) for v in ins):
            keep = lazy_positions(op) | ({PRIMITIVES[p].shape_operand} - {None})
            ins = [v if k in keep else stored(self, x.type, v) for k, (x, v) in enumerate(zip(op.operands, ins))]
        rule = self.rules.get(p)
        if (rule is None or PRIMITIVES[p].scalar_only) and (any(x.type.is_array for x in op.operands) or
                                                   any(r.type.is_array for r in op.results)):
            raise NotImplementedError(f"srcgrad: the llvm backend does not handle the whole-array operation "
                                      f"'{p}' yet; use backend='python' (element-wise array code works)")
        if rule is None:
            raise NotImplementedError(f"srcgrad: the llvm backend has no rule for primitive '{p}' yet; "
                                      "use backend='python'")
        out = rule(self, op, ins)
        if out is not None:
            self.values[op.results[0]] = out

    def scalar(self, p, in_types, out_type, ins, elementwise=False):
        """One scalar primitive on LLVM values, or with ``elementwise`` the element step of a
        whole-array operation (scalar_math.py)."""
        rule = self.scalar_rules[p]
        return rule(self, in_types, out_type, ins, elementwise)

    # ------------------------------------------------------------------ errors
    def fail(self, code):
        """Branch to the exit with an error code (the caller has set up the condition)."""
        self.b.store(ir.Constant(INT32, code), self.status)
        self.b.branch(self.exit_block)

    def guard(self, cond, code, numbers=()):
        """Leave with status ``code`` where ``cond`` holds at run time, the i64 ``numbers``
        first stored in the error slots."""
        if known(cond) == 0:        # never holds (folding.py): no test
            return
        bad = self.func.append_basic_block("error")
        good = self.func.append_basic_block("ok")
        self.b.cbranch(cond, bad, good)
        self.b.position_at_end(bad)
        for k, n in enumerate(numbers):
            n = self.b.zext(n, INT64) if n.type is BIT else n
            self.b.store(n, self.b.gep(self.errinfo, [ir.Constant(INT64, k)]))
        self.fail(code)
        self.b.position_at_end(good)

    def raise_at(self, cond, make, numbers=()):
        """Leave with the exception ``make(numbers)`` where ``cond`` holds at run time; the i64
        ``numbers`` (an index, shapes) are kept for its message."""
        self.errors.append((make, len(numbers)))
        self.guard(cond, SITE + len(self.errors) - 1, numbers)


# ---------------------------------------------------------------------- CORE
@lower(CORE, "const")
def _const(ctx, op, ins):
    t = op.results[0].type
    value = op.attrs["value"]
    if hasattr(value, "shape"):
        return global_array(ctx, t, value)
    return ir.Constant(ltype(t), int(value) if t is not F64 else float(value))


@lower(CORE, "assert")
def _assert(ctx, op, ins):
    message = op.attrs["message"]
    ctx.raise_at(ctx.b.not_(ins[0]), lambda err: AssertionError(message))


@lower(CORE, "range_len")
def _range_len(ctx, op, ins):
    """len(range(start, stop, step)) of the op's operands (loops.range_len)."""
    return range_len(ctx, *ins)


@lower(CORE, "if")
def _if(ctx, op, ins):
    b = ctx.b
    cond = ctx.v(op.cond)
    then_bb = ctx.func.append_basic_block("then")
    else_bb = ctx.func.append_basic_block("else")
    merge = ctx.func.append_basic_block("endif")
    b.cbranch(cond, then_bb, else_bb)
    incoming = []
    for blk, bb in ((op.then, then_bb), (op.orelse, else_bb)):
        b.position_at_end(bb)
        ys = ctx.region(blk)
        incoming.append((ys, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    for j, r in enumerate(op.results):
        phi = b.phi(ltype(r.type))
        for ys, bb in incoming:
            phi.add_incoming(ys[j], bb)
        ctx.values[r] = phi


@lower(CORE, "for")
def _for(ctx, op, ins):
    """A counted loop; an innermost one whose accesses can be checked before it is emitted
    twice (checks.py), and one that allocates frees per iteration (loop_memory.py)."""
    b = ctx.b
    start, stop, step = (ctx.v(x) for x in op.bounds)
    inits = [ctx.v(x) for x in op.inits]
    if not isinstance(step, ir.Constant):
        ctx.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), RANGE_STEP)
    mark = b.load(ctx.arena_count) if frees_each_iteration(op) else None

    def iteration(i, carried):
        ctx.values[op.index] = i
        ctx.values.update(zip(op.carried, carried))
        ys = ctx.region(op.body)
        _mark_reductions(op, ys)
        release_iteration(ctx, mark, op.body, ys)
        return ys

    accesses = checkable_accesses(op) if ctx.boundscheck else []
    if accesses:
        outs = versioned_loop(ctx, accesses, start, stop, step, inits, iteration)
    else:
        outs = counted_loop(ctx, start, stop, step, inits, iteration)
    ctx.values.update(zip(op.results, outs))


def _mark_reductions(for_op, ys):
    """A carried float updated as ``s = s + x`` is a sum: let LLVM reassociate it, so the loop
    can be vectorised (results move at rounding level only, within the backends' 1e-12: docs/reliability.md)."""
    for a, y, inst in zip(for_op.carried, for_op.body.yielded, ys):
        op = y.owner
        if a.type is F64 and op is not None and op.prim == "add" and a in op.operands and \
                isinstance(inst, ir.Instruction) and inst.opname == "fadd":
            inst.flags.append("reassoc")


@lower(CORE, "while")
def _while(ctx, op, ins):
    b = ctx.b
    test, body = op.test, op.body
    inits = [ctx.v(x) for x in op.inits]
    mark = b.load(ctx.arena_count) if frees_each_iteration(op) else None
    pre = b.block
    head = ctx.func.append_basic_block("while.head")
    loop = ctx.func.append_basic_block("while.body")
    done = ctx.func.append_basic_block("while.end")
    b.branch(head)
    b.position_at_end(head)
    phis = []
    for v, a in zip(inits, test.args):
        phi = b.phi(ltype(a.type))
        phi.add_incoming(v, pre)
        phis.append(phi)
    ctx.values.update(zip(test.args, phis))
    (go,) = ctx.region(test)
    b.cbranch(go, loop, done)
    b.position_at_end(loop)
    ctx.values.update(zip(op.carried, phis))
    ys = ctx.region(body)
    release_iteration(ctx, mark, body, ys)
    latch = b.block
    for phi, y in zip(phis, ys):
        phi.add_incoming(y, latch)
    b.branch(head)
    b.position_at_end(done)
    ctx.values.update(zip(op.results, phis))
