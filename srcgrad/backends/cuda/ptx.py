"""PTX from a kernel module: libdevice linked in, everything but the kernel internalised (so
O3 drops what it does not call), LLVM's O3, then PTX from the NVPTX backend; and ``ptxas``,
which assembles PTX for an architecture (the tests' and the driver's check that it is valid).

NVPTX aborts the whole process on an operation it cannot lower (``llvm.sin``: "Cannot select"),
so the optimised module is checked first: a call of a function that is neither defined nor
one of the intrinsics NVPTX lowers becomes a Python error naming it.

Example:
    text, llvm_ir = ptx(module, "srcgrad_kernel", "sm_90")
    assemble(text, "sm_90")          # ptxas's report; raises where ptxas rejects it
"""
import os
import re
import shutil
import subprocess
import tempfile

import llvmlite.binding as llvm

from ...errors import SrcGradError
from .libdevice import trimmed
from .target import cuda_target
from .toolkit import roots

# intrinsics NVPTX lowers (CUDA.md §1: sqrt, fabs, floor, ceil, trunc, round, fma, copysign,
# minnum, maxnum were tried one by one), the integer and memory ones LLVM itself introduces,
# and the thread registers; anything else is refused before code generation
_LOWERED = ("llvm.nvvm.", "llvm.sqrt.", "llvm.fabs.", "llvm.floor.", "llvm.ceil.", "llvm.trunc.", "llvm.round.",
            "llvm.rint.", "llvm.nearbyint.", "llvm.roundeven.", "llvm.fma.", "llvm.fmuladd.", "llvm.copysign.",
            "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.", "llvm.umax.", "llvm.umin.",
            "llvm.smax.", "llvm.smin.", "llvm.abs.", "llvm.ctlz.", "llvm.cttz.", "llvm.ctpop.", "llvm.memset.",
            "llvm.memcpy.", "llvm.memmove.", "llvm.lifetime.", "llvm.assume", "llvm.sadd.with.overflow.",
            "llvm.ssub.with.overflow.", "llvm.smul.with.overflow.", "llvm.uadd.with.overflow.",
            "llvm.usub.with.overflow.", "llvm.umul.with.overflow.", "llvm.fshl.", "llvm.fshr.", "llvm.bswap.",
            "llvm.is.fpclass.", "llvm.experimental.noalias.scope.decl", "llvm.bitreverse.")
_ALLOCATING = ("malloc", "calloc", "realloc", "free")


class CudaCompileError(SrcGradError, NotImplementedError):
    """Code the CUDA target cannot compile (said before LLVM could abort the process)."""


def ptx(module, kernel, arch):
    """(the PTX text of ``kernel`` in ``module``, an llvmlite.ir module for the CUDA target;
    the optimised LLVM IR it came from)."""
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    if any(f.is_declaration and f.name.startswith("__nv_") for f in mod.functions):
        lib = llvm.parse_bitcode(trimmed())
        lib.triple, lib.data_layout = mod.triple, mod.data_layout
        mod.link_in(lib)
    for f in mod.functions:
        if not f.is_declaration and f.name != kernel:
            f.linkage = "internal"
    machine = cuda_target(arch).machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(machine, pto)
    pb.getModulePassManager().run(mod, pb)      # NVVMReflect resolves libdevice's __nvvm_reflect here
    check_lowerable(mod)
    return machine.emit_assembly(mod), str(mod)


def check_lowerable(mod):
    """Raise CudaCompileError naming each called function NVPTX could not lower (it would abort)."""
    calls = [line for line in str(mod).splitlines() if not line.startswith("declare")]
    missing = sorted(f.name for f in mod.functions if f.is_declaration and not f.name.startswith(_LOWERED)
                     and _called(calls, f.name))
    if not missing:
        return
    allocating = [m for m in missing if m in _ALLOCATING]
    if allocating:
        raise CudaCompileError("srcgrad: the CUDA target maps functions of numbers; this one makes arrays "
                               f"(it calls {', '.join(allocating)}), which a kernel cannot allocate")
    raise CudaCompileError(f"srcgrad: no CUDA lowering for {', '.join(missing)}")


def _called(lines, name):
    """Whether a line of the module (its declarations left out) calls ``name``: O3 leaves the
    declarations of functions it no longer calls (``free``, once the arena code is gone)."""
    pattern = re.compile(r'@"?' + re.escape(name) + r'"?\(')
    return any(pattern.search(line) for line in lines)


def ptxas_path():
    """The ptxas to assemble with: on PATH, else in a toolkit or wheel folder (toolkit.py)."""
    found = shutil.which("ptxas")
    if found:
        return found
    return next((p for root in roots() for p in [os.path.join(root, "bin", "ptxas")] if os.path.isfile(p)), None)


def assemble(text, arch):
    """ptxas's verbose report on ``text`` assembled for ``arch`` (registers, stack, spills);
    a SrcGradError with ptxas's messages where it rejects the PTX, or where there is no ptxas."""
    tool = ptxas_path()
    if tool is None:
        raise SrcGradError("srcgrad: ptxas was not found (install the CUDA toolkit, or pip install 'srcgrad[cuda]')")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "kernel.ptx")
        with open(source, "w") as f:
            f.write(text)
        done = subprocess.run([tool, f"-arch={arch}", "-v", source, "-o", os.path.join(tmp, "kernel.cubin")],
                              capture_output=True, text=True)
    if done.returncode:
        raise SrcGradError(f"srcgrad: ptxas rejected the PTX for {arch}:\n{done.stderr.strip()}")
    return done.stderr + done.stdout
