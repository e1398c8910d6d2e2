"""Containers of numbers and arrays: tuples, lists, dicts and namedtuples, nested, as JAX's
pytrees are but with no registry to learn. A ``Tree`` is a container's structure with its
leaves: at run time (api.py) the leaves are the user's numbers and arrays, in a signature
their compiler types, in the frontend their IR values. The IR itself never sees a container:
arguments, results and locals are flattened to their leaves, in a fixed order (dict keys in
insertion order, as Python iterates them).

Example:
    >>> t = flatten({"w": 1.0, "b": (2.0, 3)})
    >>> t.leaves()
    [1.0, 2.0, 3]
    >>> t.rebuild([4.0, 5.0, 6])
    {'w': 4.0, 'b': (5.0, 6)}
"""


class Tree:
    """A tuple, list, dict or namedtuple: ``kind`` is ``tuple``, ``list``, ``dict`` or the
    namedtuple class; ``keys`` the dict keys or namedtuple fields (None for tuple and list);
    ``items`` the children (leaves or Trees). Immutable: a write makes a new Tree."""

    __slots__ = ("kind", "keys", "items")

    def __init__(self, kind, items, keys=None):
        self.kind, self.items, self.keys = kind, tuple(items), None if keys is None else tuple(keys)

    def __eq__(self, other):
        return isinstance(other, Tree) and (self.kind, self.keys, self.items) == (other.kind, other.keys, other.items)

    def __hash__(self):
        return hash((self.kind, self.keys, self.items))

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Tree({self.words()}: {list(self.items)!r})"

    def words(self):
        """The container in the user's words: ``a tuple of 2``, ``a dict with keys 'w', 'b'``."""
        if self.kind is dict:
            return "a dict with keys " + ", ".join(repr(k) for k in self.keys) if self.keys else "an empty dict"
        if self.keys is not None:
            return f"a {self.kind.__name__}"
        return f"a {self.kind.__name__} of {len(self.items)}"

    def leaves(self):
        """The leaves, depth first, in the container's order."""
        out = []
        for item in self.items:
            out.extend(item.leaves() if isinstance(item, Tree) else [item])
        return out

    def structure(self):
        """What two Trees must share to hold values of one another's places: kinds, keys and
        lengths, all the way down (not the leaves)."""
        return (self.kind, self.keys, tuple(i.structure() if isinstance(i, Tree) else None for i in self.items))

    def map(self, fn):
        """The same structure with ``fn(leaf)`` for each leaf."""
        return Tree(self.kind, [i.map(fn) if isinstance(i, Tree) else fn(i) for i in self.items], self.keys)

    def refill(self, leaves):
        """The same structure (as a Tree) with the leaves taken in order from the iterator ``leaves``."""
        return Tree(self.kind, [i.refill(leaves) if isinstance(i, Tree) else next(leaves) for i in self.items],
                    self.keys)

    def rebuild(self, leaves):
        """The Python container of this structure holding ``leaves`` (a list, in order)."""
        return self._build(iter(leaves))

    def _build(self, it):
        items = [i._build(it) if isinstance(i, Tree) else next(it) for i in self.items]
        if self.kind is dict:
            return dict(zip(self.keys, items))
        if self.kind in (tuple, list):
            return self.kind(items)
        return self.kind(*items)        # a namedtuple


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def flatten(obj):
    """``obj`` as a Tree when it is a tuple, list, dict or namedtuple (nested), else ``obj``."""
    if isinstance(obj, dict):
        return Tree(dict, [flatten(v) for v in obj.values()], list(obj.keys()))
    if is_namedtuple_class(type(obj)):
        return Tree(type(obj), [flatten(v) for v in obj], type(obj)._fields)
    if isinstance(obj, (tuple, list)):
        return Tree(type(obj) if type(obj) in (tuple, list) else tuple, [flatten(v) for v in obj])
    return obj


def leaves_of(obj):
    """The leaves of ``obj`` (itself when it is not a container)."""
    t = flatten(obj)
    return t.leaves() if isinstance(t, Tree) else [t]
