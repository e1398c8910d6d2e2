"""The CUDA driver API through ctypes: the primary context of device 0, PTX modules (the
driver compiles them for the GPU it has), device memory, copies and kernel launches.

Only ``libcuda.so.1``, which comes with the NVIDIA driver, is needed: nothing to install from
the package index, nothing pinned to a CUDA version (these entry points have not changed for
many releases). ``$SRCGRAD_LIBCUDA`` names another library (the tests' fake one). The
context is the device's primary context, the one CuPy, PyTorch and JAX use in the same
process, so device pointers pass between them.

Example:
    gpu = driver()                       # CudaUnavailable without a driver or a GPU
    gpu.arch                             # 'sm_90' on an H100
    module = gpu.load(ptx_text); function = module.function("srcgrad_kernel")
"""
import ctypes
import os
import threading

from ...errors import SrcGradError

_lock = threading.Lock()
_driver = []

# cuDeviceGetAttribute's attributes
_MULTIPROCESSORS, _MAJOR, _MINOR = 16, 75, 76
# cuModuleLoadDataEx's options: where the driver's JIT writes its errors, and that buffer's size
_ERROR_LOG_BUFFER, _ERROR_LOG_SIZE = 5, 6


class CudaUnavailable(SrcGradError):
    """No CUDA driver or no GPU: kernels cannot run here (their PTX is still made)."""


class CudaError(SrcGradError):
    """A CUDA driver call failed (its name, code and description in the message)."""


class Driver:
    """The loaded driver, with the primary context of device 0 current in the calling thread."""

    def __init__(self, lib):
        self.lib = lib
        self.call("cuInit", 0)
        count = ctypes.c_int()
        self.call("cuDeviceGetCount", ctypes.byref(count))
        if count.value < 1:
            raise CudaUnavailable("srcgrad: the CUDA driver sees no GPU; the PTX was still generated (.ptx)")
        self.device = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(self.device), 0)
        major, minor = self.attribute(_MAJOR), self.attribute(_MINOR)
        self.arch = f"sm_{major}{minor}"
        self.multiprocessors = self.attribute(_MULTIPROCESSORS)
        self.context = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        self.make_current()

    def make_current(self):
        self.call("cuCtxSetCurrent", self.context)

    def attribute(self, which):
        v = ctypes.c_int()
        self.call("cuDeviceGetAttribute", ctypes.byref(v), which, self.device)
        return v.value

    def call(self, name, *args):
        """Call the driver's ``name``; a CudaError naming the call and the error unless it succeeded."""
        status = getattr(self.lib, name)(*args)
        if status:
            raise CudaError(f"srcgrad: {name}: {self.error_words(status)}")

    def error_words(self, status):
        name, words = ctypes.c_char_p(), ctypes.c_char_p()
        self.lib.cuGetErrorName(status, ctypes.byref(name))
        self.lib.cuGetErrorString(status, ctypes.byref(words))
        text = (name.value or b"CUDA_ERROR_UNKNOWN").decode()
        return f"{text} ({status}){': ' + words.value.decode() if words.value else ''}"

    # ------------------------------------------------------------------ modules
    def load(self, ptx):
        """A module from PTX text (the driver compiles it for this GPU); the JIT's log is in
        the error where it fails."""
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(1 << 14)
        options = (ctypes.c_int * 2)(_ERROR_LOG_BUFFER, _ERROR_LOG_SIZE)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(len(log)))
        status = self.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx.encode()), 2, options, values)
        if status:
            raise CudaError(f"srcgrad: cuModuleLoadDataEx: {self.error_words(status)}"
                            f"{chr(10) + log.value.decode(errors='replace') if log.value else ''}")
        return Module(self, module)

    def load_kernel(self, kernel):
        """The launchable function of a launch.Kernel (its PTX loaded as a module)."""
        return self.load(kernel.ptx).function(kernel.name)

    # ------------------------------------------------------------------ memory
    def allocate(self, nbytes):
        ptr = ctypes.c_uint64()
        self.call("cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(max(nbytes, 1)))
        return ptr.value

    def free(self, ptr):
        self.call("cuMemFree_v2", ctypes.c_uint64(ptr))

    def upload(self, dst, host_address, nbytes):
        self.call("cuMemcpyHtoD_v2", ctypes.c_uint64(dst), ctypes.c_void_p(host_address), ctypes.c_size_t(nbytes))

    def download(self, host_address, src, nbytes):
        self.call("cuMemcpyDtoH_v2", ctypes.c_void_p(host_address), ctypes.c_uint64(src), ctypes.c_size_t(nbytes))

    def copy(self, dst, src, nbytes):
        """Device to device (the benchmarks' bandwidth ceiling)."""
        self.call("cuMemcpyDtoD_v2", ctypes.c_uint64(dst), ctypes.c_uint64(src), ctypes.c_size_t(nbytes))

    def synchronize(self):
        self.call("cuCtxSynchronize")

    def timed(self, work):
        """The GPU milliseconds ``work()`` (launches, copies) takes, between two events."""
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self.call("cuEventCreate", ctypes.byref(start), 0)
        self.call("cuEventCreate", ctypes.byref(stop), 0)
        try:
            self.call("cuEventRecord", start, None)
            work()
            self.call("cuEventRecord", stop, None)
            self.call("cuEventSynchronize", stop)
            ms = ctypes.c_float()
            self.call("cuEventElapsedTime", ctypes.byref(ms), start, stop)
            return ms.value
        finally:
            self.call("cuEventDestroy_v2", start)
            self.call("cuEventDestroy_v2", stop)


class Module:
    def __init__(self, driver, handle):
        self.driver, self.handle = driver, handle

    def function(self, name):
        fn = ctypes.c_void_p()
        self.driver.call("cuModuleGetFunction", ctypes.byref(fn), self.handle, name.encode())
        return Function(self.driver, fn)


class Function:
    def __init__(self, driver, handle):
        self.driver, self.handle = driver, handle

    def launch(self, grid, block, params, wait=True):
        """Launch on ``grid`` blocks of ``block`` threads with ``params`` (ctypes values, in the
        kernel's order) and wait for it to finish (``wait``)."""
        pointers = (ctypes.c_void_p * max(len(params), 1))(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p)
                                                             for p in params])
        self.driver.call("cuLaunchKernel", self.handle, grid, 1, 1, block, 1, 1, 0, None, pointers, None)
        self.last = (grid, block, params)         # what a benchmark launches again, timed
        if wait:
            self.driver.synchronize()


def _signatures(lib):
    c = ctypes
    p, i, u = c.c_void_p, c.c_int, c.c_uint
    table = {
        "cuInit": [u], "cuDeviceGetCount": [p], "cuDeviceGet": [p, i], "cuDeviceGetAttribute": [p, i, i],
        "cuDevicePrimaryCtxRetain": [p, i], "cuCtxSetCurrent": [p], "cuCtxSynchronize": [],
        "cuModuleLoadDataEx": [p, c.c_char_p, u, p, p], "cuModuleGetFunction": [p, p, c.c_char_p],
        "cuMemAlloc_v2": [p, c.c_size_t], "cuMemFree_v2": [c.c_uint64],
        "cuMemcpyHtoD_v2": [c.c_uint64, p, c.c_size_t], "cuMemcpyDtoH_v2": [p, c.c_uint64, c.c_size_t],
        "cuLaunchKernel": [p, u, u, u, u, u, u, u, p, p, p], "cuGetErrorName": [i, p], "cuGetErrorString": [i, p],
    }
    # for the benchmarks only (events, device copies): a driver without them still runs kernels
    optional = {"cuMemcpyDtoD_v2": [c.c_uint64, c.c_uint64, c.c_size_t], "cuEventCreate": [p, u],
                "cuEventRecord": [p, p], "cuEventSynchronize": [p], "cuEventElapsedTime": [p, p, p],
                "cuEventDestroy_v2": [p]}
    for name, args in list(table.items()) + [(n, a) for n, a in optional.items() if hasattr(lib, n)]:
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, c.c_int


def driver():
    """The process's CUDA driver (loaded at the first call), or CudaUnavailable saying why not."""
    with _lock:
        if not _driver:
            name = os.environ.get("SRCGRAD_LIBCUDA") or "libcuda.so.1"
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                raise CudaUnavailable(f"srcgrad: no CUDA driver: could not load {name} ({e}). The PTX was still "
                                      "generated (.ptx); install the NVIDIA driver to run it") from None
            try:
                _signatures(lib)
            except AttributeError as e:
                raise CudaUnavailable(f"srcgrad: {name} is not a CUDA driver library ({e})") from None
            try:
                _driver.append(Driver(lib))
            except CudaError as e:         # cuInit without a GPU: CUDA_ERROR_NO_DEVICE
                raise CudaUnavailable(f"{e}; the PTX was still generated (.ptx)") from None
        _driver[0].make_current()
        return _driver[0]
