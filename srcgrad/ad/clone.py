"""Copying primal IR into a derivative function: the step both modes start from."""
from ..ir.core import Block, Op, Value, current


def fresh_block(block, extra=()):
    """An empty block with arguments like ``block``'s (same types and names), plus ``extra``."""
    return Block([Value(a.type, a.name) for a in block.args] + list(extra))


def clone_op(op, mapping, regions=()):
    """Append a copy of ``op`` with operands read through ``mapping`` to the current block, and
    map its results to the copy's."""
    new = Op(op.prim, [mapping[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs),
             regions, op.loc, names=[r.name for r in op.results])
    current().block.ops.append(new)
    mapping.update(zip(op.results, new.results))
    return new


def zero_like(v, mapping, name=None):
    """A zero derivative for the primal value ``v``: ``zeros_like`` of its copy, or ``0.0``."""
    b = current()
    if v.type.is_array:
        return b.emit("zeros_like", [mapping[v]], name=name)
    return b.const(0.0, name=name)


__all__ = ["fresh_block", "clone_op", "zero_like"]


def write_whole(dst, src, name):
    """Append ``dst[...] = src``: every element of array ``dst`` written in place (the new
    version of ``dst`` is returned)."""
    spec = (("s", False, False, False),) * dst.type.ndim
    return current().emit("setslice", [dst, src], {"spec": spec}, name=name)
