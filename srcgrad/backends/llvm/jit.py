"""The llvm backend's JIT driver: an IR function lowered for a target (lowering.py),
optimised with LLVM's O3 pipeline, compiled by MCJIT (or its object code loaded from the
disk cache, disk_cache.py), and wrapped in the Python entry stub; a large function's first
calls run a quick build while the O3 one is made on another thread (tiers.py, compile_tiers).

The compiled function is ``i32 f(args..., T* out0, T* out1, ..., arena, count, error, callbacks)``:
it writes its results through the pointers and returns 0, or an error code that the entry
stub turns into the exception the python backend would raise (error_codes.py).

Example:
    run, llvm_ir = compile_function(ir_function)
    run(1.0, 2.0)
"""
import ctypes
import hashlib
import time

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ...ir.memory import Buffers
from ..callbacks import CallState, make_bridge
from ..marshal import array_struct, ctype_of, element_strided, result_value
from .arena import Allocations
from .block_cache import use_block_cache
from .disk_cache import DiskCache
from .error_codes import CALLBACK, ERR_SLOTS, exception_for
from .lowering import Lowering
from .runtime import load as load_runtime
from . import tiers
from .target import CPU
from .vector_math import enabled as vector_math_enabled, vectorise_math


def symbol_name(fn):
    """The compiled function's symbol: ``srcgrad.fn.<name>.<hash of its IR>``. The dots keep it
    apart from every C symbol (libm's ``exp``, which LLVM calls for ``llvm.exp``; ``malloc``;
    ``main``), the prefix from srcgrad's own helpers (``srcgrad.rt.*``), and the hash from
    another function of the same name (the hash is deterministic, so cached object code
    still defines the symbol that is looked up)."""
    digest = hashlib.sha256(str(fn).encode()).hexdigest()[:16]
    readable = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in fn.name)    # résumé: r_sum_
    return f"srcgrad.fn.{readable}.{digest}"


def compile_function(fn, boundscheck=True, cache=False, target=CPU, timings=None):
    """(a Python callable running ``fn`` natively, the optimised LLVM IR text). Without
    ``boundscheck``, array indices are trusted (faster; an index out of range is undefined).
    With ``cache``, object code is kept on disk (disk_cache.py) and reused. ``timings`` (a
    dict) gets the seconds of each stage: "llvm lowering", "llvm optimisation", "machine code"."""
    timings = {} if timings is None else timings
    low, text, entry, hit = _prepare(fn, boundscheck, cache, target, timings)
    return _build(fn, low, text, entry, hit, target, timings)


def compile_tiers(fn, boundscheck=True, cache=False, target=CPU, timings=None):
    """(run, llvm_ir, later): ``compile_function``'s pair and None, or for a large function
    (tiers.py) the quick tier's callable, None, and ``later``, the O3 build on a thread of its
    own (a tiers.Build whose result is compile_function's pair)."""
    timings = {} if timings is None else timings
    low, text, entry, hit = _prepare(fn, boundscheck, cache, target, timings)
    if hit is not None or not tiers.wanted(text):
        return (*_build(fn, low, text, entry, hit, target, timings), None)
    run = _quick(fn, low, text, target, timings)
    later = tiers.Build(lambda: _build(fn, low, text, entry, None, target, timings, background=True))
    return run, None, later


def compile_quick(fn, boundscheck=True, target=CPU, timings=None):
    """The quick tier's callable alone (tiers.py): ``fn`` built without LLVM's O3 pipeline."""
    timings = {} if timings is None else timings
    low, text, _, _ = _prepare(fn, boundscheck, False, target, timings)
    return _quick(fn, low, text, target, timings)


def _prepare(fn, boundscheck, cache, target, timings):
    """(the lowering, the text of its verified module, the disk cache's entry or None, what
    the entry holds or None)."""
    clock = time.perf_counter()
    low, text = _lower(fn, target, boundscheck)
    timings["llvm lowering"] = time.perf_counter() - clock
    options = f"boundscheck={boundscheck}, vector_math={vector_math_enabled()}, allocator=block_cache+realloc"
    if low.uses_blas:           # the symbols it calls: another BLAS could be found another time
        options += f", blas={low.uses_blas}"
    entry = DiskCache.for_code(str(fn), options=options) if cache else None
    return low, text, entry, entry.load() if entry is not None else None


def _build(fn, low, text, entry, hit, target, timings, background=False):
    """compile_function's pair: ``text`` through O3 (or the object code of ``hit``) to machine
    code. In the ``background`` (tiers.py): stopping between stages when the interpreter
    exits, its stages timed as "... (background)"."""
    after = " (background)" if background else ""
    clock = time.perf_counter()
    mod = _parsed(text)
    if hit is None:
        mod, text = vectorise_math(mod, _optimise(mod, target.machine()))
    else:
        text = hit[1]
    timings["llvm optimisation" + after], clock = time.perf_counter() - clock, time.perf_counter()
    tiers.check()
    load_runtime()                # the block cache's symbols, which the code calls
    engine = llvm.create_mcjit_compiler(mod, target.machine())
    if entry is not None:
        if hit is not None:
            engine.set_object_cache(getbuffer_func=lambda m: hit[0])       # no code generation
        else:
            engine.set_object_cache(notify_func=lambda m, data: entry.store(bytes(data), text))
    engine.finalize_object()
    timings[("machine code" if hit is None else "machine code (from the disk cache)") + after] = \
        time.perf_counter() - clock
    return _callable(fn, low, engine, from_cache=hit is not None), text


def _callable(fn, low, engine, from_cache):
    """The entry stub of the function ``engine`` has built, keeping the machine code alive as
    long as the callable."""
    run = _entry_stub(fn, engine.get_function_address(low.symbol), low)
    run._engine = engine
    run.from_cache = from_cache
    return run


def _quick(fn, low, text, target, timings):
    """The quick tier's callable (tiers.py): ``text`` through SROA, instcombine and simplifycfg,
    and the code generator without optimisation."""
    clock = time.perf_counter()
    mod = _parsed(text)
    passes = llvm.create_new_function_pass_manager()
    passes.add_sroa_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    builder = llvm.create_pass_builder(target.machine(quick=True), llvm.create_pipeline_tuning_options(speed_level=0))
    for f in mod.functions:
        if not f.is_declaration:
            passes.run(f, builder)
    use_block_cache(mod)
    timings["llvm optimisation (quick tier)"], clock = time.perf_counter() - clock, time.perf_counter()
    load_runtime()
    engine = llvm.create_mcjit_compiler(mod, target.machine(quick=True))
    engine.finalize_object()
    timings["machine code (quick tier)"] = time.perf_counter() - clock
    return _callable(fn, low, engine, from_cache=False)


def _lower(fn, target, boundscheck):
    """(the lowering, with what the entry stub needs from it; the text of its LLVM module)."""
    machine = target.machine()
    name = symbol_name(fn)          # (it prints the whole function: once)
    module = ir.Module(name=name)
    module.triple = target.triple()
    module.data_layout = str(machine.target_data)
    low = Lowering(fn, module, target, boundscheck)
    low.symbol = name
    low.build(name)
    return low, str(module)


def _parsed(text):
    """The verified LLVM module of ``text``."""
    mod = llvm.parse_assembly(text)
    mod.verify()
    return mod


def _optimise(mod, machine):
    """Run LLVM's O3 pipeline with both vectorisers on ``mod``, then point its malloc, calloc,
    realloc and free at the block cache (block_cache.py); returns its text."""
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(machine, pto)
    pm = pb.getModulePassManager()
    pm.run(mod, pb)
    use_block_cache(mod)
    return str(mod)


def _entry_stub(fn, address, low):
    """The Python callable running the compiled ``fn`` at ``address``: it passes numbers and
    arrays (as structs over numpy's memory, no copy), the arena, the error slots and the
    callback table; raises the exception of a failing status; and frees what the call
    allocated except the arrays it returns to numpy."""
    in_types = [ctype_of(p.type) for p in fn.params]
    out_types = [ctype_of(t) for t in fn.result_types]
    cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.POINTER(t) if issubclass(t, ctypes.Structure) else t
                                               for t in in_types],
                             *[ctypes.POINTER(t) for t in out_types],
                             ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
                             ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p))(address)
    errors = list(low.errors)
    bridges = [make_bridge(op) for op in low.callbacks]
    table = (ctypes.c_void_p * max(len(bridges), 1))(*[ctypes.cast(f, ctypes.c_void_p) for f in bridges])
    param_types = [p.type for p in fn.params]
    kinds = list(fn.result_types)
    written = [k for k, p in enumerate(fn.params) if p in Buffers(fn).written]
    checked = []

    def run(*given):
        if written and any(not given[k].flags.writeable for k in written):
            # numpy raises where a read-only argument is written, if that write is reached:
            # the python backend does exactly that (compiled code would write into it)
            if not checked:
                from .. import python as python_backend
                checked.append(python_backend.compile_function(fn))
            return checked[0](*given)
        args = [element_strided(a) if t.is_array else a for a, t in zip(given, param_types)]
        call_args, arrays = _passed(args, param_types, in_types)
        outs = [t() for t in out_types]
        taken = None
        arena = ctypes.c_void_p(None)            # allocated and grown by the compiled code
        count = (ctypes.c_int64 * 2)()           # slots used, capacity
        err = (ctypes.c_int64 * ERR_SLOTS)()
        passed = (*call_args, *[ctypes.byref(o) for o in outs], ctypes.byref(arena), count, err, table)
        try:
            if bridges:
                with CallState() as state:
                    status = cfunc(*passed)
                    if status == CALLBACK:
                        raise state.error
            else:                                # no callback can fail: no state to keep
                status = cfunc(*passed)
            if status:
                raise exception_for(status, errors, err)
            taken = Allocations(arena, count[0])
            vals = [result_value(o, k, arrays, taken) for o, k in zip(outs, kinds)]
        finally:
            (taken if taken is not None else Allocations(arena, count[0])).release()
            _copy_back(given, args)
        return vals[0] if len(vals) == 1 else tuple(vals)

    run._bridges = bridges
    return run


def _passed(args, param_types, in_types):
    """(the arguments as the compiled function takes them: numbers, and arrays by reference to
    their structs; the arrays that are not empty, each with its data pointer)."""
    call_args, arrays = [], []
    for a, t, ct in zip(args, param_types, in_types):
        if t.is_array:
            s = array_struct(ct, a)
            call_args.append(ctypes.byref(s))
            if a.size:
                arrays.append((a, s.data))
        else:
            call_args.append(a)
    return call_args, arrays


def _copy_back(given, args):
    """Writes into a copied argument (element_strided) reach the caller's array."""
    for a, copy in zip(given, args):
        if copy is not a and getattr(a, "flags", None) is not None and a.flags.writeable:
            np.copyto(a, copy)
