"""The LLVM types of the IR's types: f64 as double, i64, bool as i1 (a byte in memory and at
the function's boundary), an array as {data pointer, shape, strides} with strides counted in
elements, a tape as a pointer to structs of its items, reverse mode's undo log as a pointer to
its stack struct (``UNDO_LOG_STRUCT``).

Example:
    >>> print(ltype(ArrayType(F64, 2)))
    {i8*, [2 x i64], [2 x i64]}
"""
from llvmlite import ir

from ...ir.types import BOOL, F32, F64, I64, ArrayType, TapeType, UndoLogType

DOUBLE, INT64, BIT, BYTE, INT32 = ir.DoubleType(), ir.IntType(64), ir.IntType(1), ir.IntType(8), ir.IntType(32)
PTR = ir.PointerType(BYTE)
ELEMENT_SIZE = {F64: 8, F32: 4, I64: 8, BOOL: 1}
# the undo log (undo.py): {count, capacity, entries, the entries' arena slot}, one struct in the
# function's stack frame; an entry: {element address, its old bits, its size in bytes}
UNDO_LOG_STRUCT = ir.LiteralStructType([INT64, INT64, PTR, INT64])
UNDO_ENTRY = ir.LiteralStructType([PTR, INT64, INT64])


def ltype(t):
    """The LLVM type of values of IR type ``t``."""
    if t is F64:
        return DOUBLE
    if t is I64:
        return INT64
    if t is BOOL:
        return BIT
    if isinstance(t, TapeType):
        return ir.PointerType(ir.LiteralStructType([ltype(i) for i in t.items]))
    if isinstance(t, UndoLogType):
        # a pointer to the one stack struct: every op on the log, in any loop or branch, reads
        # and updates the same count, capacity and data, so nothing is carried or merged (a
        # growing tape keeps its capacity and pointer in stack slots the same way)
        return ir.PointerType(UNDO_LOG_STRUCT)
    if isinstance(t, ArrayType):
        n = ir.ArrayType(INT64, t.ndim)
        return ir.LiteralStructType([PTR, n, n])      # data, shape, strides (in elements)
    raise NotImplementedError(f"srcgrad: the llvm backend has no type for {t}")


def element_type(t):
    """The LLVM type of an array's elements (numpy's bool is one byte)."""
    return {F64: DOUBLE, F32: ir.FloatType(), I64: INT64, BOOL: BYTE}[t.dtype]
