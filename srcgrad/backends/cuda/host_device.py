"""A stand-in for a GPU that runs on the CPU: the same kernel (kernel.py) compiled for the host
by MCJIT, its "threads" run one after another, "device memory" in host memory. The tests run
every vectorize kernel through it, so the kernel's indexing, broadcasting, conversions, error
reporting and the launcher's copies are checked on machines without a GPU; only the math
differs from the GPU's (libm and LLVM's intrinsics here, libdevice there).

Example:
    out = kernel.run(HostDevice(threads=3), [x, 0.5], "f", ["x", "a"])
"""
import ctypes

import llvmlite.binding as llvm
import numpy as np

from ..llvm.target import CPU
from .kernel import kernel_module


class HostDevice:
    """``threads`` host calls of the kernel make up its grid (each takes every threads-th element)."""

    def __init__(self, threads=3):
        self.threads = threads
        self.multiprocessors = 1
        self.memory = {}               # address -> the numpy buffer behind it
        self.engines = []

    def allocate(self, nbytes):
        buf = np.zeros(max(nbytes, 1), np.uint8)
        self.memory[buf.ctypes.data] = buf
        return buf.ctypes.data

    def free(self, ptr):
        del self.memory[ptr]

    def upload(self, dst, host_address, nbytes):
        ctypes.memmove(dst, host_address, nbytes)

    def download(self, host_address, src, nbytes):
        ctypes.memmove(host_address, src, nbytes)

    def load_kernel(self, kernel):
        module, name, layout, errors = kernel_module(kernel.element, kernel.types, CPU, kernel.boundscheck)
        mod = llvm.parse_assembly(str(module))
        mod.verify()
        machine = CPU.machine()
        pb = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=2))
        pb.getModulePassManager().run(mod, pb)
        engine = llvm.create_mcjit_compiler(mod, CPU.machine())
        engine.finalize_object()
        self.engines.append(engine)
        return _HostFunction(self, engine.get_function_address(name))


class _HostFunction:
    def __init__(self, device, address):
        self.device, self.address = device, address

    def launch(self, grid, block, params):
        """The grid's threads, one host call each (the first index and the stride as the last two arguments)."""
        fn = ctypes.CFUNCTYPE(None, *[type(p) for p in params], ctypes.c_int64, ctypes.c_int64)(self.address)
        for t in range(self.device.threads):
            fn(*params, t, self.device.threads)
