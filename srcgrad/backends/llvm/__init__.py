"""The llvm backend: IR -> LLVM IR (llvmlite) -> native code, JIT-compiled with LLVM's O3
pipeline for the host CPU.

It handles every primitive of the IR: f64/i64/bool values, arithmetic with Python's
semantics, math functions, ``if``/``for``/``while``, asserts, the tapes and undo log of
reverse mode, and arrays: they arrive as (data pointer, shape, strides) (backends/marshal.py), so any numpy
array, non-contiguous included, is used without a copy; element reads and writes are
bounds-checked; whole-array operations are loop nests; new arrays are allocated natively
and handed to numpy on return; ``custom_vjp`` functions are called back in Python.

The package, by job: jit.py (the driver, entry stub, symbol names), lowering.py (the
lowering context: the value map, control flow, errors, and the dispatch to the tables of
scalar_math.py, array_ops.py, kernels.py, memory.py, undo.py, callbacks.py, indexing.py,
linalg.py, reductions.py, joins.py, shapes.py), the helpers the rules share, functions of
that context (arrays.py: element access, views, new arrays; loops.py; memory.py: the arena),
target.py (triple, data layout, math table), error_codes.py, fusion.py + lazy.py
(element-wise chains computed in their consumer's loop), checks.py (bounds checks hoisted
before a loop), loop_memory.py (freeing per iteration), disk_cache.py (``cache=True``).

Example:
    run, llvm_ir = compile_function(ir_function)
    run(1.0, 2.0)
"""
from .arena import empty
from .jit import compile_function, compile_quick, compile_tiers, symbol_name

__all__ = ["compile_function", "compile_quick", "compile_tiers", "symbol_name", "empty"]
