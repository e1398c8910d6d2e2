"""The CUDA target object of the llvm lowering: the ``nvptx64-nvidia-cuda`` triple and data
layout, an NVPTX target machine for one GPU architecture (``sm_90``), and the math table:
libdevice's ``__nv_*`` functions where the CPU calls LLVM's intrinsics or libm (NVPTX cannot
lower ``llvm.sin`` and most other math intrinsics; it aborts the process instead of raising,
so ptx.py checks the optimised module before code generation).

Element functions compute in float64 on every target (float32 arrays are read into doubles
and written back rounded, as on the CPU), so only the double versions are called.

Example:
    t = cuda_target("sm_90")
    t.triple(), t.math["sin"]
"""
import functools
import threading

import llvmlite.binding as llvm

from ..llvm.scalar_math import CPU_MATH, power
from ..llvm.target import Target
from ..llvm.types import DOUBLE

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_90"          # the reference GPU (H100), where no device says otherwise

_lock = threading.Lock()
_initialised = []


def initialise():
    """LLVM's NVPTX target and its assembly printer (the native target alone does not have them)."""
    with _lock:
        if not _initialised:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialised.append(True)


def libdevice_call(name):
    """A math function as a call of libdevice's ``__nv_<name>`` on doubles."""
    def lower(ctx, in_types, out_type, ins, elementwise):
        return ctx.b.call(ctx.declare("__nv_" + name, DOUBLE, [DOUBLE] * len(ins)), ins)
    return lower


# the CPU's table with each function from libdevice; ** of floats through __nv_pow (NVPTX
# cannot lower llvm.pow), of ints as on the CPU
CUDA_MATH = {name: libdevice_call(name) for name in CPU_MATH if name != "pow"}
CUDA_MATH["pow"] = power(libdevice_call("pow"))
LIBDEVICE_FUNCTIONS = sorted("__nv_" + name for name in CPU_MATH)


@functools.lru_cache(maxsize=None)
def cuda_target(arch=DEFAULT_ARCH):
    """The CUDA target for GPUs of architecture ``arch`` (``sm_80``, ``sm_90``, ...)."""
    if not (isinstance(arch, str) and arch.startswith("sm_") and arch[3:].rstrip("af").isdigit()):
        raise ValueError(f"a CUDA architecture is named like 'sm_90', not {arch!r}")

    def machine(opt=3):
        initialise()
        return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features="", opt=opt)
    return Target(f"cuda ({arch})", CUDA_MATH, {"thread_registers"}, lambda: TRIPLE, machine)
