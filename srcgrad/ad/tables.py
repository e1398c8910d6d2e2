"""The derivative tables, keyed by primitive, and the decorators that fill them. The rule
files (ad/rules.py and the families' ``*_rules.py``, ``*_tangents.py``) import only this
module for the tables; ad/all_rules.py imports every rule file, and the engines read the
tables from there, so no table is complete or not depending on which module came first.

- ``ADJOINT[prim](g, *operands, out)``: reverse mode, one thunk per operand (ad/rules.py), or
  None where there is no derivative; only primitives whose record says ``adjoint="rule"``;
- ``ARRAY_ADJOINT[prim](rev, op, g, adj, mapping)``: reverse mode of array reads, writes and
  calls, ``adjoint="structural"`` (ad/array_rules.py);
- ``TANGENT[prim](op, ts, xs, out)``: forward mode (ad/tangent_rules.py).

Every lookup is strict: a missing entry is a KeyError naming the primitive.

Example:
    >>> from srcgrad.ad.all_rules import ADJOINT
    >>> ADJOINT["floor"] is None, callable(ADJOINT["sin"])
    (True, True)
"""
from ..ir.primitives import table_entry

ADJOINT = {}
ARRAY_ADJOINT = {}
TANGENT = {}


def adjoint_rule(*names):
    """Put a reverse-mode rule into ``ADJOINT`` under each of ``names``."""
    return table_entry(ADJOINT, *names)


def no_derivative(*names):
    """Say that ``names`` have no derivative (piecewise constant, integer-valued, not numbers)."""
    table_entry(ADJOINT, *names)(None)


def array_rule(*names):
    """Put a reverse-mode rule of an array read, write or call into ``ARRAY_ADJOINT``."""
    return table_entry(ARRAY_ADJOINT, *names)


def tangent_rule(*names):
    """Put a forward-mode rule into ``TANGENT`` under each of ``names``."""
    return table_entry(TANGENT, *names)


__all__ = ["ADJOINT", "ARRAY_ADJOINT", "TANGENT", "adjoint_rule", "array_rule", "no_derivative", "tangent_rule"]
