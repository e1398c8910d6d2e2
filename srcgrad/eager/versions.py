"""In-place changes: the checks an in-place op passes first, and the version counters that let
a node notice that a tensor it saved was changed since.

A tensor's counter is a one-element list shared with its views (``t._vc``), made on first need:
most intermediate tensors never need one. ``Node`` records the count of each saved tensor, and
``saved()`` compares it again when backward reads the tensor (graph.py).

This module sits below tensor.py, graph.py, creation.py and the ops, which all change tensors
in place or check for it, so that none of them needs another of them for it.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2)
    >>> v = x[0]                   # a view shares x's counter
    >>> bump_version(x)
    >>> version_of(x), version_of(v)
    (1, 1)
"""
from . import grad_mode


def version_counter(t):
    """The version counter of ``t``'s storage (shared with its views), made on first need."""
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    return vc


def version_of(t):
    vc = t._vc
    return 0 if vc is None else vc[0]


def bump_version(t):
    """Count one in-place change of ``t``'s storage."""
    vc = t._vc
    if vc is None:
        t._vc = [1]
    else:
        vc[0] += 1


def check_inplace(x, view_of_leaf=False):
    """PyTorch refuses in-place changes to leaves that require grad while grad mode is on."""
    if not grad_mode.state.enabled:
        return
    if x.grad_fn is None and x._rg:
        if view_of_leaf or x._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = x._base
    if base is not None and base.grad_fn is None and base._rg:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def check_view_graph(x):
    base = x._base
    if base is not None and (base._rg or x._rg):
        raise RuntimeError("srcgrad: an in-place change of a view of a tensor that requires grad is not supported "
                           "(PyTorch rewrites the base's history here). Change the base tensor itself, or use "
                           "out-of-place ops: y = torch.cat(...) or y = x.clone(); y[idx] = value")
