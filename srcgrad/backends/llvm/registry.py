"""How the lowering's tables are filled: ``@lower(TABLE, "name", ...)`` over a function
``rule(ctx, op, ins)`` that emits ``op`` through the lowering context ``ctx`` (lowering.py)
from its operands' LLVM values ``ins`` (None for region ops, which lower their own regions).
The rule returns the value of the op's one result, or None when it has no result or binds
its results itself (``ctx.values[r] = ...``).

Example:
    @lower(ARRAY, "transpose")
    def _transpose(ctx, op, ins): ...
"""


from ...ir.primitives import table_entry as lower

__all__ = ["lower"]
