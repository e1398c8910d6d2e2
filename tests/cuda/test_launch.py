"""The launcher of vectorize(..., target="cuda") on the host stand-in (HostDevice: the same
kernel compiled for the CPU): broadcasting and strides, float32, int and bool results,
numbers only, empty arrays, the element function's errors, and what a kernel cannot do."""
import subprocess
import sys

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.cuda.host_device import HostDevice
from srcgrad.backends.cuda.launch import use_device
from srcgrad.backends.cuda.ptx import CudaCompileError
from tests.cuda.launch_programs import calls_python, checked, int_division, mixed, three_results


def on_host(fun, *args, threads=4):
    with use_device(HostDevice(threads=threads)):
        return srcgrad.vectorize(fun, target="cuda")(*args)


def test_broadcast_and_strided_arguments_read_the_right_elements():
    x = np.arange(24.0).reshape(4, 6)[:, ::2]           # strided, 4 x 3
    y = np.linspace(0.0, 1.0, 3)                         # broadcast along axis 0
    for args in ((x, y, 2, True), (x, y[None, :], 2, False), (x.T.copy().T, 0.5, 3, True)):
        np.testing.assert_array_equal(on_host(mixed, *args), srcgrad.vectorize(mixed)(*args))


def test_float32_arrays_give_float32_results_computed_in_float64():
    x = np.linspace(0.0, 1.0, 9, dtype=np.float32)
    got = on_host(mixed, x, x[::-1].copy(), 1, True)
    want = srcgrad.vectorize(mixed)(x, x[::-1].copy(), 1, True)
    assert got.dtype == np.float32 and want.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_several_results_of_float_bool_and_int():
    x, y = np.linspace(0.0, 1.0, 7), np.linspace(1.0, 0.0, 7)
    got = on_host(three_results, x, y)
    want = srcgrad.vectorize(three_results)(x, y)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_numbers_only_and_empty_arrays():
    assert on_host(mixed, 2.0, 3.0, 1, True) == srcgrad.vectorize(mixed)(2.0, 3.0, 1, True) == 7.0
    empty = on_host(mixed, np.zeros((0, 3)), 1.0, 1, True)
    assert empty.shape == (0, 3) and empty.dtype == np.float64


def test_many_elements_over_few_threads_cover_every_element():
    x = np.linspace(-1.0, 1.0, 10_001)
    np.testing.assert_array_equal(on_host(mixed, x, 0.25, 2, True, threads=7), x * 0.25 + 2)


def test_a_failing_element_raises_what_the_cpu_raises():
    with pytest.raises(AssertionError, match="x must stay below 0.75"):
        on_host(checked, np.linspace(0.0, 1.0, 5))
    with pytest.raises(ZeroDivisionError):
        srcgrad.vectorize(int_division)(np.ones(3), 0)
    with pytest.raises(ZeroDivisionError):
        on_host(int_division, np.ones(3), 0)
    np.testing.assert_array_equal(on_host(int_division, np.ones(3), 2), np.full(3, 3.0))


def test_shapes_that_do_not_broadcast_are_named():
    with pytest.raises(AssertionError, match=r"vectorize\(mixed\): argument 'y' cannot be broadcast"):
        on_host(mixed, np.ones(3), np.ones(4), 1, True)


def test_what_a_kernel_cannot_do_is_said_at_compile_time():
    with pytest.raises(CudaCompileError, match="cannot call back into Python"):
        on_host(calls_python, np.ones(3))
    with pytest.raises(TypeError, match="is a GPU kernel: it is called, not transformed"):
        srcgrad.grad(srcgrad.vectorize(mixed, target="cuda"))(1.0, 2.0, 1, True)
    with pytest.raises(ValueError, match="backend='python' runs on the CPU only"):
        srcgrad.vectorize(mixed, target="cuda", backend="python")
    with pytest.raises(RuntimeError, match=r"compiled for the CPU; vectorize\(f, target='cuda'\) makes PTX"):
        f = srcgrad.vectorize(mixed)
        f(1.0, 2.0, 1, True)
        f.ptx


def test_an_intrinsic_nvptx_cannot_lower_is_an_error_not_an_abort():
    """NVPTX kills the process on llvm.sin; the check before code generation must raise first
    (in a child process, so that a regression cannot take pytest down)."""
    script = ("from tests.cuda.launch_programs import sine_kernel_module\n"
              "from srcgrad.backends.cuda.ptx import ptx, CudaCompileError\n"
              "try:\n    ptx(sine_kernel_module(), 'srcgrad_kernel', 'sm_90')\n"
              "except CudaCompileError as e:\n    print('raised:', e)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=_root())
    assert done.returncode == 0, done.stderr
    assert "raised: srcgrad: no CUDA lowering for llvm.sin.f64" in done.stdout


def _root():
    import os
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cache_keeps_the_ptx_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path))
    from srcgrad.backends.cuda.launch import Kernel
    from srcgrad.ir.types import F64, I64, BOOL, ArrayType
    element = srcgrad.jit(mixed).as_primal([F64, F64, I64, BOOL])
    types = [ArrayType(F64, 1), F64, I64, BOOL]
    with use_device(HostDevice()):
        first = Kernel(element, types, cache=True)
        again = Kernel(element, types, cache=True)
        plain = Kernel(element, types)
    assert not first.from_cache and again.from_cache and not plain.from_cache
    assert again.ptx == first.ptx == plain.ptx and again.llvm_ir == first.llvm_ir
    assert any(tmp_path.iterdir())
