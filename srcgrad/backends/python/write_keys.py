"""The subscript through which each kind of write (``Primitive.key``) changes its array, as
the python backend prints it: the write itself (emit.py, indexing.py) and the undo log's save
of what it overwrites (undo.py) print the same one.

Example:
    >>> import ast
    >>> ast.unparse(subscript([ast.Name("i"), ast.Name("j")]))
    '(i, j)'
"""
import ast


def subscript(ins):
    """One index as itself, several as a tuple (``x[i]``, ``x[i, j]``)."""
    return ins[0] if len(ins) == 1 else ast.Tuple(elts=list(ins), ctx=ast.Load())


def _elements(em, op, idx):
    return subscript([em.value(i) for i in idx])


def _slice(em, op, bounds):
    return em.slice_key(op, [em.value(b) for b in bounds])


# an element's indices, a mask, or int index arrays are printed as they are; a slice from its bounds
WRITE_KEYS = {"item": _elements, "slice": _slice, "mask": _elements, "indices": _elements}

__all__ = ["WRITE_KEYS", "subscript"]
