"""Running a vectorize kernel: the arguments' broadcast shape and strides, copies to and from
the device, the launch, and the element function's errors raised as the CPU raises them.

Arguments are numbers, numpy arrays (copied to the device and the results back) or device
arrays: objects with ``__cuda_array_interface__`` (CuPy, PyTorch CUDA tensors, Numba device
arrays), read where they are. Where any argument is a device array the results stay on the
device, as ``DeviceArray`` objects (``__cuda_array_interface__``, ``.copy_to_host()``), so
that CuPy or PyTorch take them without a copy (``cupy.asarray(r)``, ``torch.as_tensor(r,
device="cuda")``). Without CuPy or PyTorch, ``to_device(array)`` puts a numpy array on the
GPU, to be read there by kernel after kernel (the GPU benchmark times kernels that way).

A device is the CUDA driver (driver.py) or, in the tests, ``HostDevice`` (host_device.py),
which runs the same kernel compiled for the CPU.

Example:
    kernel = Kernel(element_ir, types, boundscheck=True)
    kernel.ptx                  # for the GPU of this process (sm_90 where there is none)
    out = kernel.run(current_device(), [x, 0.5], "f", ["x", "a"])
"""
import contextlib
import ctypes

import numpy as np

from ...ir.types import BOOL, F32, F64, I64, NUMPY_DTYPES
from ..llvm.disk_cache import DiskCache
from ..llvm.error_codes import ERR_SLOTS, exception_for
from .driver import CudaUnavailable, driver
from .kernel import kernel_module
from .ptx import CudaCompileError, assemble, ptx, ptxas_path
from .target import DEFAULT_ARCH, cuda_target

BLOCK = 256            # threads a block; the grid is at most 32 blocks a multiprocessor (grid-stride loop)
_TYPESTR = {"<f8": F64, "<f4": F32, "<i8": I64, "|b1": BOOL}


_devices = []           # a stand-in device (use_device), innermost last


def current_device():
    """The device kernels run on: the CUDA driver's GPU, or the stand-in of ``use_device``."""
    return _devices[-1] if _devices else driver()


@contextlib.contextmanager
def use_device(device):
    """Run kernels on ``device`` (host_device.HostDevice in the tests) inside the ``with``."""
    _devices.append(device)
    try:
        yield device
    finally:
        _devices.remove(device)


def device_arch():
    """(the architecture of this process's GPU, True), or (sm_90, the reference H100, False)
    where there is none."""
    try:
        arch = getattr(current_device(), "arch", None)
    except CudaUnavailable:
        arch = None
    return (arch, True) if arch else (DEFAULT_ARCH, False)


def device_array_type(a):
    """(dtype, shape) of an object with ``__cuda_array_interface__``, or None for anything else."""
    face = getattr(a, "__cuda_array_interface__", None)
    if face is None:
        return None
    dtype = _TYPESTR.get(face["typestr"])
    return dtype, tuple(face["shape"])


class DeviceArray:
    """An array in GPU memory that a kernel wrote: ``shape``, ``dtype``, ``.copy_to_host()``, and
    ``__cuda_array_interface__`` for CuPy, PyTorch and Numba. Its memory is freed with it."""

    def __init__(self, device, pointer, shape, dtype):
        self.device, self.pointer, self.shape, self.dtype = device, pointer, tuple(shape), np.dtype(dtype)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.pointer, False), "version": 3,
                "strides": None}

    def copy_to_host(self):
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            self.device.download(out.ctypes.data, self.pointer, out.nbytes)
        return out

    def __del__(self):
        try:
            self.device.free(self.pointer)
        except Exception:          # noqa: BLE001 - at interpreter exit the driver may be gone
            pass

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"


def to_device(array, device=None):
    """A DeviceArray holding a copy of the numpy ``array`` (C order), on ``device`` (this
    process's GPU by default): an argument vectorize reads in place, whose results stay on the
    device."""
    device = device or current_device()
    host = np.ascontiguousarray(array)
    out = DeviceArray(device, device.allocate(host.nbytes), host.shape, host.dtype)
    if host.nbytes:
        device.upload(out.pointer, host.ctypes.data, host.nbytes)
    return out


class Kernel:
    """The kernel of an element function for arguments of ``types``: its PTX for this process's
    GPU, its Layout (kernel.py) and the element function's error sites."""

    def __init__(self, element, types, boundscheck=True, arch=None, cache=False):
        self.element, self.types, self.boundscheck = element, list(types), boundscheck
        self.arch, on_gpu = (arch, False) if arch else device_arch()
        try:
            module, self.name, self.layout, self.errors = kernel_module(element, types, cuda_target(self.arch),
                                                                        boundscheck)
        except NotImplementedError as e:           # a custom_vjp's call back into Python, say
            if isinstance(e, CudaCompileError):
                raise
            raise CudaCompileError(str(e)) from None
        entry = DiskCache.for_code(str(module), options=f"ptx for {self.arch}") if cache else None
        hit = entry.load() if entry is not None else None
        if hit is not None:
            self.ptx, self.llvm_ir = hit[0].decode(), hit[1]
        else:
            self.ptx, self.llvm_ir = ptx(module, self.name, self.arch)
            if entry is not None:
                entry.store(self.ptx.encode(), self.llvm_ir)
        self.from_cache = hit is not None
        # without a GPU to load it, ptxas checks the PTX where it is installed (a GPU's driver
        # checks it when it loads the module)
        self.ptxas_report = assemble(self.ptx, self.arch) if not on_gpu and ptxas_path() else None
        self._functions = {}          # device -> its loaded function

    def function(self, device):
        if device not in self._functions:
            self._functions[device] = device.load_kernel(self)
        return self._functions[device]

    def run(self, device, args, fname, names):
        """Run on ``device`` over ``args``; the results as the CPU's vectorize returns them
        (numbers where no argument is an array)."""
        return _Call(self, device, args, fname, names).run()


class _Call:
    def __init__(self, kernel, device, args, fname, names):
        self.kernel, self.device, self.args, self.fname, self.names = kernel, device, args, fname, names
        self.owned = []               # device buffers this call allocated for its inputs
        self.on_device = any(device_array_type(a) is not None for a in args)

    def run(self):
        layout = self.kernel.layout
        shapes = [self._shape(a) for a in self.args]
        shape = self._broadcast(shapes)
        n = int(np.prod(shape)) if shape else 1
        outs = [self._new_output(shape, d) for d in layout.out_dtypes]
        try:
            if n:
                self._launch(shape, shapes, n, outs)
        finally:
            for ptr in self.owned:
                self.device.free(ptr)
        results = [o if self.on_device else o.copy_to_host() for o in outs]
        if layout.rank == 0:
            results = [r.copy_to_host()[()] if self.on_device else r[()] for r in results]
            results = [bool(r) if d is BOOL else (int(r) if d is I64 else float(r))
                       for r, d in zip(results, layout.out_dtypes)]
        return results[0] if len(results) == 1 else tuple(results)

    def _shape(self, a):
        found = device_array_type(a)
        return found[1] if found is not None else np.shape(a)

    def _broadcast(self, shapes):
        """numpy's broadcast shape, or the CPU vectorize's error naming the argument and axis."""
        rank = self.kernel.layout.rank
        out = []
        for axis in range(rank):
            lengths = [(name, s[axis - (rank - len(s))]) for name, s, t in zip(self.names, shapes, self.kernel.types)
                       if t.is_array and axis - (rank - len(s)) >= 0]
            n = next((m for _, m in lengths if m != 1), 1)
            for name, m in lengths:
                if m not in (1, n):
                    raise AssertionError(f"vectorize({self.fname}): argument '{name}' cannot be broadcast with the "
                                         f"others (axis {axis - (rank - len(shapes[self.names.index(name)]))} is "
                                         f"neither 1 nor their length)")
            out.append(n)
        return tuple(out)

    def _new_output(self, shape, dtype):
        nbytes = int(np.prod(shape)) * np.dtype(NUMPY_DTYPES[dtype]).itemsize         # np.prod(()) is 1: a number's slot
        return DeviceArray(self.device, self.device.allocate(nbytes), shape, NUMPY_DTYPES[dtype])

    def _upload(self, host):
        ptr = self.device.allocate(host.nbytes)
        self.owned.append(ptr)
        if host.nbytes:
            self.device.upload(ptr, host.ctypes.data, host.nbytes)
        return ptr

    def _array(self, a, t):
        """(device pointer, element strides) of an array argument."""
        face = getattr(a, "__cuda_array_interface__", None)
        if face is None:
            host = np.ascontiguousarray(a, dtype=NUMPY_DTYPES[t.dtype])
            return self._upload(host), [s // host.itemsize for s in host.strides]
        if _TYPESTR.get(face["typestr"]) is not t.dtype:
            raise TypeError(f"vectorize({self.fname}): a device array of {face['typestr']} where the kernel was "
                            f"made for {np.dtype(NUMPY_DTYPES[t.dtype]).str}")
        itemsize = np.dtype(NUMPY_DTYPES[t.dtype]).itemsize
        shape = tuple(face["shape"])
        strides = face.get("strides")
        if strides is None:                      # C-contiguous
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= n
        else:
            strides = [s // itemsize for s in strides]
        return face["data"][0], strides

    def _launch(self, shape, shapes, n, outs):
        rank = self.kernel.layout.rank
        errors = np.zeros(1 + ERR_SLOTS, np.int64)
        errors_ptr = self._upload(errors)
        given, per_axis, flat = [], [], True
        for a, t, s in zip(self.args, self.kernel.types, shapes):
            if not t.is_array:
                given.append(ctypes.c_int8(bool(a)) if t is BOOL else
                             ctypes.c_int64(int(a)) if t is I64 else ctypes.c_double(float(a)))
                continue
            ptr, strides = self._array(a, t)
            given.append(ctypes.c_uint64(ptr))
            lead = rank - len(s)
            per_axis.append([0 if axis < lead or s[axis - lead] == 1 else strides[axis - lead] for axis in range(rank)])
            contiguous = all(st == int(np.prod(s[k + 1:])) for k, st in enumerate(strides) if s[k] != 1)
            flat = flat and tuple(s) == shape and contiguous
        params = [ctypes.c_uint64(errors_ptr)] + [ctypes.c_uint64(o.pointer) for o in outs] + given
        params += [ctypes.c_int64(m) for m in shape] + [ctypes.c_int64(st) for axis in per_axis for st in axis]
        params += [ctypes.c_int64(n), ctypes.c_int32(int(flat))]
        grid = max(1, min(-(-n // BLOCK), 32 * self.device.multiprocessors))
        self.kernel.function(self.device).launch(grid, BLOCK, params)
        self.device.download(errors.ctypes.data, errors_ptr, errors.nbytes)
        if errors[0]:
            raise exception_for(int(errors[0]), self.kernel.errors, [int(v) for v in errors[1:]])
