"""The llvm backend: IR → LLVM IR (llvmlite) → native code (see lowering.py).

Example:
    >>> run, llvm_ir = compile_function(ir_function)
    >>> run(1.0, 2.0)
"""
from .lowering import compile_function, symbol_name

__all__ = ["compile_function", "symbol_name"]
