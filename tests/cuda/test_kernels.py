"""vectorize(..., target="cuda") without a GPU: every scalar test program's kernel and one per
math primitive (the function and its gradient) as PTX that ptxas assembles for sm_90 and
sm_80, and their values from the same kernel compiled for the CPU (host_device.HostDevice)
against the CPU's vectorize."""
import numpy as np
import pytest

import srcgrad
from srcgrad.backends.cuda.host_device import HostDevice
from srcgrad.backends.cuda.launch import Kernel, use_device
from srcgrad.backends.cuda.ptx import ptxas_path
from srcgrad.ir.types import type_of
from tests.compiler.programs import CASES
from tests.cuda import math_programs

SCALAR = {name: case for name, case in CASES.items() if all(isinstance(a, (int, float)) for a in case[1])}
MATH = {f.__name__: (f, (0.45,), 0) for f in math_programs.UNARY}
MATH.update({f.__name__: (f, (0.6, 0.35), (0, 1)) for f in math_programs.BINARY})


def points(args):
    """A grid around a program's point: float arguments as 5 values each (the first along axis 0,
    a second along axis 1, so both broadcast), ints as they are."""
    out, axis = [], 0
    for a in args:
        if isinstance(a, float):
            spread = a + np.linspace(-0.05, 0.05, 5) * max(abs(a), 1.0)
            out.append(spread if axis == 0 else spread[:, None])
            axis += 1
        else:
            out.append(a)
    return out


def pairs(fun, wrt):
    """{kind: (vectorize on cuda, vectorize on the cpu)} of the function and of its gradient."""
    return {"jit": (srcgrad.vectorize(fun, target="cuda"), srcgrad.vectorize(fun)),
            "grad": (srcgrad.vectorize(srcgrad.grad(fun, wrt=wrt), target="cuda"),
                     srcgrad.vectorize(srcgrad.grad(fun, wrt=wrt)))}


def as_list(r):
    return list(r) if isinstance(r, tuple) else [r]


def makes_arrays(fun, args):
    """Whether the function itself makes arrays per element (np.zeros(2) inside, say)."""
    from srcgrad.transforms import first_allocation
    return first_allocation(srcgrad.jit(fun).as_primal([type_of(a) for a in args])) is not None


@pytest.mark.parametrize("name", sorted(SCALAR) + sorted(MATH))
def test_kernels_compute_what_the_cpu_computes_and_assemble(name):
    """Values on the host stand-in against the CPU's vectorize; the PTX (made for sm_90 here,
    with no GPU) assembled by ptxas when the kernel was made, and again for sm_80."""
    fun, args, wrt = SCALAR.get(name) or MATH[name]
    grid = points(args)
    if makes_arrays(fun, args):
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="a GPU kernel maps a function of numbers"):
            srcgrad.vectorize(fun, target="cuda")(*grid)
        return
    for kind, (on_gpu, on_cpu) in pairs(fun, wrt).items():
        with use_device(HostDevice(threads=3)):
            got = on_gpu(*grid)
        want = on_cpu(*grid)
        for g, w in zip(as_list(got), as_list(want)):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15, err_msg=f"{name} {kind}")
        assert ".target sm_90" in on_gpu.ptx and ".entry srcgrad_kernel" in on_gpu.ptx
        if ptxas_path() is not None:
            older = Kernel(on_gpu._spec().ir, [type_of(p) for p in grid], arch="sm_80")
            assert ".target sm_80" in older.ptx
            assert "registers" in older.ptxas_report, (name, kind)       # ptxas ran as the kernel was made


def test_kernels_are_assembled_when_made_without_a_gpu():
    if ptxas_path() is None:
        pytest.skip("needs ptxas (the test extra brings it)")
    fun, args, wrt = MATH["sin"]
    element = srcgrad.jit(fun).as_primal([type_of(a) for a in args])
    with use_device(HostDevice()):
        kernel = Kernel(element, [type_of(np.ones(3))])
    assert kernel.arch == "sm_90" and "registers" in kernel.ptxas_report
