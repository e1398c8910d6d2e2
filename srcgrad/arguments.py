"""Arguments in, results out: how a compiled function's Python arguments become the flat
leaves its code takes, and how its flat results become what the user gets back (a gradient
has its argument's type and shape; containers come back as containers).

Example:
    >>> import numpy as np
    >>> like(np.float64(2.0), 1.0), like([1.0, 2.0], np.zeros(2, dtype=np.float32)).dtype
    (2.0, dtype('float32'))
    >>> leaves((1.0, {"w": 2.0, "b": 3.0}))
    [1.0, 2.0, 3.0]
"""
import numpy as np

from .ir.types import is_float, type_of
from .trees import Tree, flatten, leaves_of

CONTAINERS = (tuple, list, dict)      # namedtuples are tuples


def leaves(args):
    """The arguments as the compiled code takes them: each container as its leaves."""
    if not any(isinstance(a, CONTAINERS) for a in args):
        return args
    out = []
    for a in args:
        out += leaves_of(a)
    return out


def float_params(types):
    """The positions of the float leaves among all arguments' leaves."""
    flat = [t for ty in types for t in (ty.leaves() if isinstance(ty, Tree) else [ty])]
    return [k for k, t in enumerate(flat) if is_float(t)]


def leaf_positions(types, k, float_only=False):
    """The positions of argument ``k``'s leaves among all arguments' leaves (its float ones)."""
    start = sum(len(t.leaves()) if isinstance(t, Tree) else 1 for t in types[:k])
    mine = types[k].leaves() if isinstance(types[k], Tree) else [types[k]]
    return [start + j for j, t in enumerate(mine) if not float_only or is_float(t)]


def unit_axes(args):
    """For each leaf of the arguments, the axes of size 1 of an array (None for a number)."""
    return tuple(tuple(k for k, n in enumerate(a.shape) if n == 1) if isinstance(a, np.ndarray) else None
                 for a in leaves(args))


def structure_of(obj):
    tree = flatten(obj)
    return tree.structure() if isinstance(tree, Tree) else None


def like(g, arg):
    """A gradient has its argument's type: float for a number, an array of the same dtype for an array."""
    if isinstance(arg, np.ndarray):
        return np.asarray(g, dtype=arg.dtype).reshape(arg.shape)
    return float(g)


def gradient_like(arg, grads):
    """The gradient for ``arg`` from the iterator of float leaves' gradients: a number or array
    like ``arg``, or a container like it (None where a leaf is not a float)."""
    if not isinstance(arg, CONTAINERS):
        return like(next(grads), arg)
    tree = flatten(arg)
    if not isinstance(tree, Tree):
        return like(next(grads), arg)
    return tree.rebuild([like(next(grads), leaf) if is_float(type_of(leaf)) else None for leaf in tree.leaves()])


def gradient_like_or_none(arg, grads):
    """vjp: the gradient for ``arg`` like ``gradient_like``, None for a number or array that is not a float."""
    if not isinstance(flatten(arg), Tree) and not is_float(type_of(arg)):
        return None
    return gradient_like(arg, grads)


def broadcast_check(name, params, args):
    """numpy's error for arguments whose shapes do not broadcast, before any is read; else
    their broadcast shape."""
    shapes = [np.shape(a) for a in args]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"vectorize({name}): the arguments' shapes cannot be broadcast together: "
                         + ", ".join(f"{p} {s}" for p, s in zip(params, shapes))) from None


__all__ = ["CONTAINERS", "leaves", "float_params", "leaf_positions", "unit_axes", "structure_of", "like",
           "gradient_like", "gradient_like_or_none", "broadcast_check"]
