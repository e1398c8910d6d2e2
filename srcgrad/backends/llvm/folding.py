"""The lowering's IR builder, which folds what is known while the IR is built: integer
arithmetic and comparisons of constants, ``x * 1``, ``x + 0``, ``x - 0``, ``false | c``,
``true & c``, a ``select`` or a branch on a constant, a field read back from the struct it
was just put in, a bitcast to the same type.

Why: the lowering of an array op works on shapes and strides that are often constants (a
broadcast of rank 1, a loop starting at 0, a unit step), and a third of the instructions it
wrote were such folds, which LLVM then undid; each one costs the lowering, the module's
text, its parsing and every pass (compile time, docs/compiler.md "Two tiers"). Only folds
exact for every value are made: integer results that fit their width, no floating point.

Example:
    >>> from llvmlite import ir
    >>> from srcgrad.backends.llvm.folding import FoldingBuilder
    >>> f = ir.Function(ir.Module(), ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "f")
    >>> b = FoldingBuilder(f.append_basic_block())
    >>> b.mul(ir.Constant(ir.IntType(64), 1), f.args[0]) is f.args[0]
    True
    >>> b.icmp_signed("<", ir.Constant(ir.IntType(64), 2), ir.Constant(ir.IntType(64), 3))
    <ir.Constant type='i1' value=1>
"""
import operator

from llvmlite import ir

_BIT = ir.IntType(1)
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def known(v):
    """The value of ``v`` as a signed Python int where it is an integer constant, else None."""
    if not (isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType)) or type(v.constant) not in (int, bool):
        return None
    width = v.type.width
    n = int(v.constant) & ((1 << width) - 1)
    return n - (1 << width) if width > 1 and n >= 1 << (width - 1) else n


def _constant(t, n):
    """``n`` as a constant of integer type ``t``, or None where it does not fit."""
    if t.width == 1:
        return ir.Constant(t, int(bool(n)))
    return ir.Constant(t, n) if -(1 << (t.width - 1)) <= n < 1 << (t.width - 1) else None


class FoldingBuilder(ir.IRBuilder):
    """An ``ir.IRBuilder`` that returns a known value instead of an instruction where it can."""

    def _arithmetic(self, op, lhs, rhs):
        a, c = known(lhs), known(rhs)
        if a is not None and c is not None and lhs.type == rhs.type and lhs.type.width > 1:
            folded = _constant(lhs.type, op(a, c))
            if folded is not None:
                return folded
        return None

    def add(self, lhs, rhs, name="", flags=()):
        if known(lhs) == 0 and lhs.type == rhs.type:
            return rhs
        if known(rhs) == 0 and lhs.type == rhs.type:
            return lhs
        folded = self._arithmetic(operator.add, lhs, rhs)
        return folded if folded is not None else super().add(lhs, rhs, name, flags)

    def sub(self, lhs, rhs, name="", flags=()):
        if known(rhs) == 0 and lhs.type == rhs.type:
            return lhs
        folded = self._arithmetic(operator.sub, lhs, rhs)
        return folded if folded is not None else super().sub(lhs, rhs, name, flags)

    def mul(self, lhs, rhs, name="", flags=()):
        if lhs.type == rhs.type and isinstance(lhs.type, ir.IntType) and lhs.type.width > 1:
            if known(lhs) == 1:
                return rhs
            if known(rhs) == 1:
                return lhs
            if known(lhs) == 0 or known(rhs) == 0:
                return ir.Constant(lhs.type, 0)
        folded = self._arithmetic(operator.mul, lhs, rhs)
        return folded if folded is not None else super().mul(lhs, rhs, name, flags)

    def smul_with_overflow(self, lhs, rhs, name=""):
        a, c = known(lhs), known(rhs)
        if lhs.type == rhs.type and (a == 1 or c == 1 or (a is not None and c is not None)):
            if a is not None and c is not None:
                product, overflows = _constant(lhs.type, a * c), False
                if product is None:
                    return super().smul_with_overflow(lhs, rhs, name)
            else:
                product, overflows = (rhs if a == 1 else lhs), False
            pair = ir.LiteralStructType([lhs.type, _BIT])
            return self.insert_value(self.insert_value(ir.Constant(pair, ir.Undefined), product, 0),
                                     ir.Constant(_BIT, int(overflows)), 1)
        return super().smul_with_overflow(lhs, rhs, name)

    def or_(self, lhs, rhs, name="", flags=()):
        folded = self._logic(lhs, rhs, identity=0)
        return folded if folded is not None else super().or_(lhs, rhs, name, flags)

    def and_(self, lhs, rhs, name="", flags=()):
        folded = self._logic(lhs, rhs, identity=1)
        return folded if folded is not None else super().and_(lhs, rhs, name, flags)

    @staticmethod
    def _logic(lhs, rhs, identity):
        """``lhs | rhs`` (``identity`` 0) or ``lhs & rhs`` (1) of two i1 values where one is
        known: the other one, or the known absorbing value; else None."""
        if lhs.type == rhs.type == _BIT:
            for x, y in ((lhs, rhs), (rhs, lhs)):
                if known(x) == identity:
                    return y
                if known(x) is not None:
                    return ir.Constant(_BIT, 1 - identity)
        return None

    def icmp_signed(self, cmpop, lhs, rhs, name=""):
        a, c = known(lhs), known(rhs)
        if a is not None and c is not None and lhs.type == rhs.type:
            return ir.Constant(_BIT, int(_COMPARE[cmpop](a, c)))
        return super().icmp_signed(cmpop, lhs, rhs, name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        c = known(cond)
        if c is not None and cond.type == _BIT and lhs.type == rhs.type:
            return lhs if c else rhs
        return super().select(cond, lhs, rhs, name, flags)

    def cbranch(self, cond, truebr, falsebr):
        c = known(cond)
        if c is not None and cond.type == _BIT:
            return self.branch(truebr if c else falsebr)
        return super().cbranch(cond, truebr, falsebr)

    def bitcast(self, value, typ, name=""):
        if value.type == typ:
            return value
        return super().bitcast(value, typ, name)

    def extract_value(self, agg, idx, name=""):
        path = list(idx) if isinstance(idx, (list, tuple)) else [idx]
        v = agg
        while isinstance(v, ir.InsertValue):
            put = list(v.indices)
            if put == path[:len(put)]:      # the field (or a part of it) this insertvalue put there
                rest = path[len(put):]
                return v.value if not rest else self.extract_value(v.value, rest, name)
            if path == put[:len(path)]:     # a struct of which one part was put: no shortcut
                break
            v = v.aggregate
        return super().extract_value(agg, idx, name)


__all__ = ["FoldingBuilder", "known"]
