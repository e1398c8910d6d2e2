"""Which element-wise array ops the llvm backend fuses into the loop of their one consumer.

``np.exp(-y * z) + 1.0`` written op by op makes three temporary arrays; when a temporary
is read by exactly one element-wise op (and otherwise only for its shape), its elements
are computed inside that op's loop instead, and no array is made. Broadcasting composes,
so the fused element is the scalar rule applied to the producer's own operands at the
consumer's (right-aligned) index.

A producer is fused only when nothing between it and the point where its value is finally
stored can write to an array (element writes, slice writes, loops, branches, custom calls),
so reading its operands later gives the same numbers; float32 results are never fused
(storing rounds them to float32, and the python backend rounds there too).

Example:
    >>> fused = fusable_ops(fn)          # a set of Ops
"""
from ..ir.passes import _SHAPE_ONLY, _walk
from ..ir.primitives import PRIMITIVES
from ..ir.types import F32

_WRITES = {"setitem", "index_add", "setslice", "slice_add", "call_custom_vjp", "tape_put"}


def _elementwise_array(op):
    return PRIMITIVES[op.prim].elementwise and op.results and op.results[0].type.is_array


def _value_uses(fn):
    """How often each value is read other than for its shape."""
    uses = {}
    for op in _walk(fn.body):
        shape_only = _SHAPE_ONLY.get(op.prim)
        for k, v in enumerate(op.operands):
            if k != shape_only:
                uses[v] = uses.get(v, 0) + 1
    return uses


def fusable_ops(fn):
    """The element-wise ops of ``fn`` whose result need not be stored (see the module doc)."""
    uses = _value_uses(fn)
    fused = set()
    for block in [fn.body] + [r for op in _walk(fn.body) for r in op.regions]:
        stored_at = {}                     # op -> index in block where its elements are computed
        for at in reversed(range(len(block.ops))):
            op = block.ops[at]
            stored_at[op] = at
            if not _elementwise_array(op) or op.results[0].type.dtype is F32 or uses.get(op.results[0]) != 1:
                continue
            r = op.results[0]
            consumer = next((c for c in block.ops[at + 1:] if r in c.operands), None)
            if consumer is None or not _elementwise_array(consumer):
                continue
            end = stored_at[consumer]
            if any(o.regions or o.prim in _WRITES for o in block.ops[at + 1:end]):
                continue
            fused.add(op)
            stored_at[op] = end
    return fused
