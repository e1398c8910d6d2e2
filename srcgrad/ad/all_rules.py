"""Every derivative rule file, imported once, in no meaningful order: the engines
(ad/reverse.py, ad/forward.py, ad/activity.py) read the full tables from here.

Example:
    >>> from srcgrad.ad.all_rules import TANGENT
    >>> "cumsum" in TANGENT
    True
"""
from . import (array_rules, indexing_rules, join_rules, join_tangents, linalg_rules,  # noqa: F401  (fill the tables)
               linalg_tangents, reduction_rules, rules, second_order, shape_rules, tangent_rules)
from .tables import ADJOINT, ARRAY_ADJOINT, TANGENT

__all__ = ["ADJOINT", "ARRAY_ADJOINT", "TANGENT"]
