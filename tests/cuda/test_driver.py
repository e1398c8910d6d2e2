"""The CUDA launch path without a GPU: the no-driver error, and the ctypes driver against a fake
libcuda.so built here (tests/cuda/fake_libcuda.c): module load errors with the JIT's log, the
kernel's parameters in order, the grid, device arrays in and out, and a failing element's
status raised as the CPU raises it."""
import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.cuda import driver as cuda_driver
from srcgrad.backends.cuda.driver import CudaError, CudaUnavailable
from srcgrad.backends.cuda.launch import BLOCK, DeviceArray, to_device
from srcgrad.backends.llvm.error_codes import SITE
from tests.cuda.launch_programs import checked, identity

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def fresh_driver(monkeypatch):
    """The driver loaded anew in the test (and forgotten after it)."""
    monkeypatch.setattr(cuda_driver, "_driver", [])
    return monkeypatch


@pytest.fixture
def fake(fresh_driver, tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("needs a C compiler for the fake libcuda")
    lib = tmp_path / "libcuda_fake.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", os.path.join(HERE, "fake_libcuda.c"), "-o", str(lib)],
                   check=True)
    fresh_driver.setenv("SRCGRAD_LIBCUDA", str(lib))
    return ctypes.CDLL(str(lib))


def test_without_a_driver_calling_says_so_and_the_ptx_is_still_made(fresh_driver):
    fresh_driver.setenv("SRCGRAD_LIBCUDA", "/nonexistent/libcuda.so.1")
    v = srcgrad.vectorize(srcgrad.grad(identity), target="cuda")
    with pytest.raises(CudaUnavailable, match=r"no CUDA driver: could not load /nonexistent/libcuda.so.1 .*"
                                              r"The PTX was still generated \(.ptx\)"):
        v(np.ones(3))
    assert ".target sm_90" in v.ptx and ".entry srcgrad_kernel" in v.ptx
    assert isinstance(CudaUnavailable("x"), srcgrad.SrcGradError)


def test_a_driver_without_a_gpu_says_so(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_NO_DEVICE", "1")
    with pytest.raises(CudaUnavailable, match="sees no GPU"):
        srcgrad.vectorize(identity, target="cuda")(np.ones(3))


def test_the_kernel_gets_its_parameters_in_order_and_a_grid_for_n(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_IDENTITY", "1")
    x = np.linspace(0.0, 1.0, 1000)
    got = srcgrad.vectorize(identity, target="cuda")(x)
    np.testing.assert_array_equal(got, x)                   # out0 <- x over n, through the parameters
    grid, block = ctypes.c_uint(), ctypes.c_uint()
    fake.fake_last_launch(ctypes.byref(grid), ctypes.byref(block))
    assert (grid.value, block.value) == (-(-1000 // BLOCK), BLOCK)
    big = np.zeros(100_000)
    srcgrad.vectorize(identity, target="cuda")(big)
    fake.fake_last_launch(ctypes.byref(grid), ctypes.byref(block))
    assert grid.value == 32 * 2                            # at most 32 blocks a multiprocessor: grid-stride


def test_device_arrays_go_in_and_stay_on_the_device(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_IDENTITY", "1")
    host = np.linspace(0.0, 1.0, 7)

    class OnDevice:        # what CuPy or PyTorch hand over (the fake's device memory is host memory)
        __cuda_array_interface__ = {"shape": (7,), "typestr": "<f8", "data": (host.ctypes.data, False),
                                    "version": 3, "strides": None}
    got = srcgrad.vectorize(identity, target="cuda")(OnDevice())
    assert isinstance(got, DeviceArray) and got.shape == (7,) and got.dtype == np.float64
    assert got.__cuda_array_interface__["typestr"] == "<f8"
    np.testing.assert_array_equal(got.copy_to_host(), host)


def test_to_device_copies_a_numpy_array_there_and_back(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_IDENTITY", "1")
    host = np.arange(12.0)[::2]                             # not contiguous: copied in C order
    on_device = to_device(host)
    assert on_device.shape == (6,) and on_device.dtype == np.float64
    np.testing.assert_array_equal(on_device.copy_to_host(), host)
    got = srcgrad.vectorize(identity, target="cuda")(on_device)
    assert isinstance(got, DeviceArray)                     # a device argument keeps the result there
    np.testing.assert_array_equal(got.copy_to_host(), host)


def test_a_failing_element_raises_what_the_cpu_raises(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_STATUS", str(SITE))      # the first error site: the assert
    with pytest.raises(AssertionError, match="x must stay below 0.75"):
        srcgrad.vectorize(checked, target="cuda")(np.ones(3))


def test_a_module_the_driver_rejects_shows_its_log(fake, fresh_driver):
    fresh_driver.setenv("FAKE_CUDA_BAD_PTX", "1")
    with pytest.raises(CudaError, match=r"cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX \(218\)(.|\n)*a fake JIT log"):
        srcgrad.vectorize(identity, target="cuda")(np.ones(3))


def test_the_gpu_benchmark_runs_end_to_end_on_the_fake_driver(fake, monkeypatch):
    """benchmarks/cuda_vectorize.py is ready for a GPU: its every step, on the fake (which
    computes nothing, so the check of G1's values is left out)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks"))
    try:
        import cuda_vectorize as bench
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(bench, "CASES", {k: (f, extra, None) for k, (f, extra, _) in bench.CASES.items()})
    text = bench.table(*bench.run(2000, 2), 2000)
    assert "| G1 x*x | 0.500 |" in text and "launch overhead" in text and "driver JIT" in text
