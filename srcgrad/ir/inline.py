"""Compiling one IR function in place inside another: its ops copied into the current block
with its parameters bound to values there, so that the optimisation passes and the backends
see one function (a Hessian's loop around an HVP, a compiled function called from another).

Example:
    with Builder(block):
        outs = inline(gradient_fn, [x, w])      # the gradient's results, as values of block
"""
from .core import Block, Builder, Op, Value, current


def inline(fn, args):
    """Copy the body of IR Function ``fn`` into the current block with its parameters bound to
    ``args``; returns the values it returns."""
    mapping = dict(zip(fn.params, args))
    _copy_ops(fn.body.ops[:-1], mapping)
    return [mapping[v] for v in fn.body.terminator.operands]


def _copy_ops(ops, mapping):
    for op in ops:
        regions = []
        for blk in op.regions:
            nb = Block([Value(a.type, a.name) for a in blk.args])
            inner = dict(mapping)
            inner.update(zip(blk.args, nb.args))
            with Builder(nb):
                _copy_ops(blk.ops, inner)
            regions.append(nb)
        new = Op(op.prim, [mapping[v] for v in op.operands], [r.type for r in op.results], dict(op.attrs),
                 regions, op.loc, names=[r.name for r in op.results])
        current().block.ops.append(new)
        mapping.update(zip(op.results, new.results))


__all__ = ["inline"]
