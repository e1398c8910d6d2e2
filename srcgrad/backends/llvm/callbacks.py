"""Calls from compiled code back into Python (``custom_vjp`` functions and their rules): the
llvm side of backends/callbacks.py. A call goes through the callback table the entry stub
passes in, with the operands and results as arrays of pointers to stack cells.

``CALLS`` holds the rules of the call primitives.

Example:
    CALLS["call_custom"](ctx, op, ins)
"""
from llvmlite import ir

from ...ir.types import BOOL
from .error_codes import CALLBACK
from .registry import lower
from .types import BIT, BYTE, INT32, INT64, PTR, ltype

CALLS = {}


@lower(CALLS, "call_custom", "call_custom_vjp")
def _call_python(ctx, op, ins):
    """A call of the user's Python function: the k-th call op of the function goes through
    entry k of the table (``ctx.callbacks`` lists the ops in that order, for the entry stub to
    make their bridges)."""
    if "callbacks" not in ctx.target.supports:
        raise NotImplementedError(f"srcgrad: compiled code for {ctx.target.name} cannot call back into Python "
                                  f"(a custom_vjp function)")
    b = ctx.b
    index = len(ctx.callbacks)
    ctx.callbacks.append(op)

    def cells(types):
        vector = ctx.stack_slot(ir.ArrayType(PTR, max(len(types), 1)))
        out = [ctx.stack_slot(BYTE if t is BOOL else ltype(t)) for t in types]
        for k, cell in enumerate(out):
            b.store(b.bitcast(cell, PTR), b.gep(vector, [ir.Constant(INT32, 0), ir.Constant(INT32, k)]))
        return b.bitcast(vector, ir.PointerType(PTR)), out

    argv, arg_cells = cells([v.type for v in op.operands])
    for v, cell, value in zip(op.operands, arg_cells, ins):
        b.store(b.zext(value, BYTE) if v.type is BOOL else value, cell)
    resv, res_cells = cells([r.type for r in op.results])
    fnty = ir.FunctionType(INT32, [ir.PointerType(PTR), ir.PointerType(PTR)])
    target = b.load(b.gep(ctx.callback_table, [ir.Constant(INT64, index)]))
    status = b.call(b.bitcast(target, fnty.as_pointer()), [argv, resv])
    ctx.guard(b.icmp_signed("!=", status, ir.Constant(INT32, 0)), CALLBACK)
    for r, cell in zip(op.results, res_cells):
        value = b.load(cell)
        ctx.values[r] = b.trunc(value, BIT) if r.type is BOOL else value
