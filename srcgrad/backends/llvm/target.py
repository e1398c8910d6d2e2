"""What the lowering needs to know about the machine it compiles for, as one object: its
name, the module's triple and data layout (through an LLVM target machine), the table of
math functions (scalar_math.py), and what it supports. A second target (CUDA: the
``nvptx64-nvidia-cuda`` triple, libdevice's ``__nv_*`` math) is a second object, not a fork
of the lowering.

Example:
    CPU.triple(), CPU.math["sin"]
"""
import ctypes.util

import llvmlite.binding as llvm

from . import vector_math
from .scalar_math import CPU_MATH


class Target:
    """``name``; ``math``: primitive name -> scalar lowering of that math function (the
    lowering looks math primitives up here); ``supports``: features that not every target has
    (``"callbacks"`` into Python and ``"blas"`` calls on the CPU; ``"thread_registers"`` on a
    GPU, where each thread reads its index from special registers); ``triple()``, ``machine()`` (a new LLVM target machine: each
    JIT engine takes ownership of its own; ``machine(quick=True)``: one whose code generator
    does not optimise, for the quick tier of tiers.py), ``target_data()`` (for ABI sizes)."""

    def __init__(self, name, math, supports, triple, machine):
        self.name, self.math, self.supports = name, math, frozenset(supports)
        self._triple, self._machine = triple, machine
        self._target_data = None

    def triple(self):
        return self._triple()

    def machine(self, quick=False):
        return self._machine(opt=0 if quick else 3)

    def target_data(self):
        if self._target_data is None:
            self._target_data = llvm.create_target_data(str(self.machine().target_data))
        return self._target_data

    def __repr__(self):
        return f"<target {self.name}>"


_host_features = []


def _host_machine(opt=3):
    """A new target machine for the host CPU, for the JIT: its code generator at level ``opt``."""
    if not _host_features:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libm = ctypes.util.find_library("m")
        if libm:
            llvm.load_library_permanently(libm)
        _host_features.append(llvm.get_host_cpu_features().flatten())
        vector_math.load(_host_features[0])
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=_host_features[0], opt=opt, jit=True)


CPU = Target("cpu", CPU_MATH, {"callbacks", "blas"}, llvm.get_process_triple, _host_machine)
