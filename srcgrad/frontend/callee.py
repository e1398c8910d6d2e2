"""One entry of the table of calls (call_table.py's CALLS): how a call of a math, numpy or builtin
function lowers. In a module of its own so that each numpy family's module makes its entries
without importing call_table.py (which gathers them).

Example:
    >>> Callee(lambda lw, node, args, env: args[0], arity=1).arity
    1
"""


class Callee:
    """One entry: ``lower(lw, node, args, env)``; ``arity`` when the number of arguments is
    fixed (checked before they are lowered), ``keywords`` the ones it accepts, ``prim`` the
    primitive an elementary function computes, ``shape_first`` when the first argument is a
    shape (``n`` or ``(n, m)``) that ``lower`` reads from the node itself; ``takes_none`` when
    a literal ``None`` argument reaches ``lower`` as None (np.clip(x, None, 1.0)); ``raw_args``
    when ``lower`` reads every argument from the node (list literals: np.concatenate([a, b]))
    and is given None for ``args``; ``static_after``: positional arguments from there on are
    options that ``lower`` reads from the node."""

    __slots__ = ("lower", "arity", "keywords", "prim", "shape_first", "static_after", "takes_none", "raw_args")

    def __init__(self, lower, arity=None, keywords=(), prim=None, shape_first=False, static_after=None,
                 takes_none=False, raw_args=False):
        self.lower, self.arity, self.keywords, self.prim, self.shape_first = lower, arity, keywords, prim, shape_first
        self.static_after, self.takes_none, self.raw_args = static_after, takes_none, raw_args
