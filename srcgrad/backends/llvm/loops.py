"""Loops and branches of the llvm backend that the rules emit inside one op: counted loops,
loop nests over every index of a shape, a run-time two-way branch, and the reassociable sum
step of a reduction (so that LLVM may vectorise the loop).

The IR's own ``for``/``while``/``if`` are lowered in lowering.py, through these. Each
function takes the lowering context first (lowering.Lowering: its builder ``b``).

Example (inside a rule):
    each_index(ctx, shape, lambda idx: store_element(ctx, t, result, idx, value))
"""
from llvmlite import ir

from .error_codes import RANGE_STEP
from .types import INT64


def range_len(ctx, start, stop, step):
    """len(range(start, stop, step)) (step != 0)."""
    b = ctx.b
    ctx.guard(b.icmp_signed("==", step, ir.Constant(INT64, 0)), RANGE_STEP)
    up = b.icmp_signed(">", step, ir.Constant(INT64, 0))
    empty = b.select(up, b.icmp_signed(">=", start, stop), b.icmp_signed("<=", start, stop))
    # the distance and the step's size as unsigned numbers: exact even across the whole i64 range
    span = b.select(up, b.sub(stop, start), b.sub(start, stop))
    mag = b.select(up, step, b.neg(step))
    partial = b.icmp_unsigned("!=", b.urem(span, mag), ir.Constant(INT64, 0))
    n = b.add(b.udiv(span, mag), b.zext(partial, INT64))
    return b.select(empty, ir.Constant(INT64, 0), n)


def counted_loop(ctx, start, stop, step, inits, body, name="for"):
    """Emit ``for i in range(start, stop, step)`` carrying ``inits``; ``body(i, carried)``
    emits one iteration and returns the new carried values. Returns the values after the loop.
    A step other than ±1 counts iterations instead (i = start + k * step), so that ``i + step``
    cannot overflow past ``stop`` near the ends of the 64-bit range."""
    b = ctx.b
    if not (isinstance(step, ir.Constant) and step.constant in (1, -1)):
        one = ir.Constant(INT64, 1)
        return counted_loop(ctx, ir.Constant(INT64, 0), range_len(ctx, start, stop, step), one, inits,
                            lambda k, carried: body(b.add(start, b.mul(k, step)), carried), name)
    pre = b.block
    head = ctx.func.append_basic_block(f"{name}.head")
    loop = ctx.func.append_basic_block(f"{name}.body")
    done = ctx.func.append_basic_block(f"{name}.end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(INT64)
    i.add_incoming(start, pre)
    phis = []
    for v in inits:
        phi = b.phi(v.type)
        phi.add_incoming(v, pre)
        phis.append(phi)
    b.cbranch(b.icmp_signed("<" if step.constant > 0 else ">", i, stop), loop, done)
    b.position_at_end(loop)
    ys = body(i, phis)
    latch = b.block
    i.add_incoming(b.add(i, step), latch)
    for phi, y in zip(phis, ys):
        phi.add_incoming(y, latch)
    b.branch(head)
    b.position_at_end(done)
    return phis


def each_index(ctx, shape, body):
    """Emit nested loops over all indices of ``shape`` calling ``body(indices)``."""
    if not shape:
        body([])
        return
    zero, one = ir.Constant(INT64, 0), ir.Constant(INT64, 1)

    def iteration(i, carried):
        each_index(ctx, shape[1:], lambda rest: body([i] + rest))
        return []
    counted_loop(ctx, zero, shape[0], one, [], iteration, name="each")


def choose(ctx, cond, then, otherwise):
    """Emit ``then()`` where ``cond`` holds at run time, ``otherwise()`` where it does not."""
    with ctx.b.if_else(cond) as (yes, no):
        with yes:
            then()
        with no:
            otherwise()


def sum_step(ctx, acc, x):
    """acc + x inside a reduction: reassociable, so LLVM may vectorise the loop."""
    out = ctx.b.fadd(acc, x)
    out.flags.append("reassoc")
    return out
