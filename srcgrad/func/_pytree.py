"""Nested containers of tensors ("pytrees") for the ``srcgrad.func`` transforms.

Tuples, lists, dicts (plain and ``OrderedDict``) and namedtuples are containers; anything
else, ``None`` included, is a leaf. ``Spec`` records a container's shape and prints as
PyTorch's ``TreeSpec`` does, so that error messages read the same.

Example:
    >>> leaves, spec = flatten({"w": 1, "b": (2, 3)})
    >>> leaves
    [1, 2, 3]
    >>> unflatten([4, 5, 6], spec)
    {'w': 4, 'b': (5, 6)}
    >>> pprint(spec)
    "{'w': *, 'b': (*, *)}"
"""
from collections import OrderedDict


def _is_namedtuple(x):
    return isinstance(x, tuple) and type(x) is not tuple and hasattr(type(x), "_fields")


def _is_node(x):
    return type(x) in (tuple, list, dict, OrderedDict) or _is_namedtuple(x)


class Spec:
    """The structure of a pytree: ``kind`` is None for a leaf, else the container's type;
    ``context`` the dict keys (a list) or the namedtuple class; ``children`` their Specs."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind=None, context=None, children=()):
        self.kind, self.context, self.children = kind, context, list(children)

    def is_leaf(self):
        return self.kind is None

    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves() for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, Spec) and self.kind is other.kind and self.context == other.context
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, len(self.children)))

    def __repr__(self, indent=0):
        # PyTorch's TreeSpec layout: children after the first on their own, indented lines
        if self.kind is None:
            return "*"
        name = "namedtuple" if isinstance(self.context, type) else self.kind.__name__
        indent += 2
        parts = [c.__repr__(indent) for c in self.children]
        body = (",\n" + " " * indent).join(parts)
        return f"TreeSpec({name}, {self.context}, [{body}])"


LEAF = Spec()


def flatten(tree):
    """``(leaves, spec)``: the leaves depth first, in the containers' own order."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves):
    if not _is_node(x):
        leaves.append(x)
        return LEAF
    if isinstance(x, dict):
        keys = list(x.keys())
        return Spec(type(x), keys, [_flatten(x[k], leaves) for k in keys])
    context = type(x) if _is_namedtuple(x) else None
    return Spec(type(x), context, [_flatten(v, leaves) for v in x])


def unflatten(leaves, spec):
    """The pytree of structure ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec.kind is None:
        return next(it)
    values = [_unflatten(it, c) for c in spec.children]
    if spec.kind in (dict, OrderedDict):
        return spec.kind(zip(spec.context, values))
    if isinstance(spec.context, type):
        return spec.context(*values)
    return spec.kind(values)


def tree_map(fn, tree):
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec):
    """The leaves of ``prefix`` repeated over the subtrees of ``spec`` they stand for (an
    ``in_dims`` of 0 for a tuple of two tensors is [0, 0]), or None when ``prefix`` is not
    a prefix of ``spec``'s structure. Dicts match by key."""
    out = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix, spec, out):
    if not _is_node(prefix):
        out.extend([prefix] * spec.num_leaves())
        return True
    if spec.kind is None or type(prefix) is not spec.kind or len(prefix) != len(spec.children):
        return False
    if isinstance(prefix, dict):
        if set(prefix.keys()) != set(spec.context):
            return False
        return all(_broadcast(prefix[k], c, out) for k, c in zip(spec.context, spec.children))
    return all(_broadcast(p, c, out) for p, c in zip(prefix, spec.children))


class _Star:
    def __repr__(self):
        return "*"


def pprint(spec):
    """The structure written as a value with ``*`` for each leaf: ``(*, [*, *])``."""
    return repr(unflatten([_Star()] * spec.num_leaves(), spec))
