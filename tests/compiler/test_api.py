"""grad / value_and_grad / jit as calls and decorators, wrt forms, one specialisation per
signature, gradient types, show and the command line."""
import math
import subprocess
import sys

import numpy as np
import pytest

import srcgrad

from .programs import array_loop, for_accumulator


def f(x, w):
    return math.sin(x) * w + w * w


def test_decorator_forms_and_wrt():
    @srcgrad.grad
    def g1(x, w):
        return f(x, w)

    @srcgrad.grad(wrt="w")
    def g2(x, w):
        return f(x, w)

    assert g1(0.5, 2.0) == pytest.approx(math.cos(0.5) * 2.0)
    assert g2(0.5, 2.0) == pytest.approx(math.sin(0.5) + 4.0)
    both = srcgrad.grad(f, wrt=(0, 1))(0.5, 2.0)
    assert isinstance(both, tuple) and both[1] == pytest.approx(math.sin(0.5) + 4.0)
    assert srcgrad.grad(f, wrt=-1)(0.5, 2.0) == pytest.approx(math.sin(0.5) + 4.0)
    value, g = srcgrad.value_and_grad(f, wrt=0)(0.5, 2.0)
    assert value == pytest.approx(f(0.5, 2.0)) and g == pytest.approx(math.cos(0.5) * 2.0)


def test_gradient_has_the_argument_type():
    x = np.array([0.5, -1.0, 2.0])
    gx, gw = srcgrad.grad(array_loop, wrt=(0, 1))(x, 0.7)
    assert isinstance(gx, np.ndarray) and gx.shape == x.shape and gx.dtype == x.dtype
    assert type(gw) is float


def test_one_specialisation_per_signature():
    df = srcgrad.grad(for_accumulator)
    df(0.3, 10)
    df(0.5, 20)
    assert len(df._cache) == 1
    df(0.5, True)                 # bool is another signature
    assert len(df._cache) == 2
    g = srcgrad.grad(array_loop)
    g(np.ones(3), 0.5)
    g(np.ones(7), 0.5)            # shape is not part of the signature
    assert len(g._cache) == 1


def test_ir_and_adjoint_source_are_shown():
    df = srcgrad.grad(f)
    df(0.5, 2.0)
    assert "func f(%x: f64, %w: f64)" in df.ir and "func f_grad(" in df.ir
    assert df.adjoint_source.startswith("from srcgrad.runtime import np\n\n\ndef f_grad(x, w):")
    assert "dx" in df.adjoint_source
    namespace = {}
    exec(df.adjoint_source, namespace)          # runs as printed: it imports what it calls
    assert namespace["f_grad"](0.5, 2.0) == df(0.5, 2.0)


def test_show(capsys):
    df = srcgrad.grad(f)
    df(0.5, 2.0)
    srcgrad.show(df)
    assert "def f_grad" in capsys.readouterr().out
    srcgrad.show(df, stage="ir")
    assert "func f(" in capsys.readouterr().out
    with pytest.raises(ValueError):
        srcgrad.show(df, stage="nope")


def test_compile_time_is_shown_by_stage(capsys):
    df = srcgrad.grad(f, backend="llvm")
    df(0.5, 2.0)
    stages = df.specialisation.timings
    # the Python source is made when it is asked for (or runs), not for a first call on llvm
    assert list(stages) == ["frontend", "derivative", "llvm lowering", "llvm optimisation", "machine code"]
    assert all(t >= 0.0 for t in stages.values())
    assert "def " in df.adjoint_source and list(stages)[-1] == "python source"
    srcgrad.show(df, "stages")
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["frontend", "derivative", "llvm", "llvm", "machine", "python", "total"]
    total = float(lines[-1].split()[1])
    assert total == pytest.approx(sum(stages.values()) * 1e3, abs=0.2)
    py = srcgrad.jit(f, backend="python")
    py(0.5, 2.0)
    assert list(py.specialisation.timings) == ["frontend", "python source"]     # no derivative, no llvm


def test_a_function_only_inlined_is_never_built_for_itself():
    inner = srcgrad.jit(f, backend="llvm")
    outer = srcgrad.grad(inner)
    assert outer(0.5, 2.0) == pytest.approx(srcgrad.grad(f)(0.5, 2.0), rel=1e-15)
    spec = next(iter(inner._cache.values()))
    assert spec._compile is not None         # its IR was read; no native code was made
    assert inner(0.5, 2.0) == f(0.5, 2.0) and spec._compile is None


def test_jit_gives_the_same_results():
    fast = srcgrad.jit(for_accumulator)
    assert fast(0.3, 25) == pytest.approx(for_accumulator(0.3, 25), rel=1e-15)


def test_command_line_show(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import math\n\ndef g(x, y):\n    return math.sin(x) * y\n")
    out = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:g", "--stage", "adjoint", "--wrt", "0,1"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("from srcgrad.runtime import np\n\n\ndef g_grad(x, y):")
    out = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:g", "--stage", "ir"],
                         capture_output=True, text=True, check=True).stdout
    assert "func g(%x: f64, %y: f64) -> f64" in out
    out = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:g", "--stage", "stages"],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0].startswith("frontend") and out.splitlines()[-1].startswith("total")


def test_command_line_lists_the_primitives():
    out = subprocess.run([sys.executable, "-m", "srcgrad", "primitives", "sum_to", "setitem"],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0].startswith("sum_to: g summed over broadcast dims")
    assert "may_alias, shape_operand=1" in out and "writes=0, key=item" in out, out
    everything = subprocess.run([sys.executable, "-m", "srcgrad", "primitives"], capture_output=True, text=True,
                                check=True).stdout
    assert "(no description)" not in everything
    bad = subprocess.run([sys.executable, "-m", "srcgrad", "primitives", "sine"], capture_output=True, text=True)
    assert bad.returncode != 0 and "no primitive named sine" in bad.stderr


def test_float32_arrays_compute_in_float64_and_get_float32_gradients():
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    g = srcgrad.grad(array_loop)(x, 0.7)
    assert g.dtype == np.float32 and g.shape == (3,)
    expected = srcgrad.grad(array_loop)(x.astype(np.float64), 0.7)
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    from .programs import whole_arrays
    gx = srcgrad.grad(whole_arrays)(x, 0.7)
    assert gx.dtype == np.float32


def test_command_line_llvm_stage(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import math\n\ndef g(x, y):\n    return math.sin(x) * y\n")
    out = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:g", "--stage", "llvm"],
                         capture_output=True, text=True, check=True).stdout
    assert "define" in out and "g_grad" in out


def test_the_compiled_object_says_which_backend_ran(monkeypatch):
    """The default backend falls back from llvm to python where llvm has no lowering yet; the
    object says so (issue 28), and backend="llvm" raises instead."""
    from srcgrad.backends import llvm as llvm_backend

    def scaled(x):
        return 3.0 * x

    f = srcgrad.jit(scaled)
    assert f.backend == "auto"
    assert f(2.0) == 6.0 and f.backend == "llvm"

    def no_lowering(*args, **kwargs):
        raise NotImplementedError("srcgrad: the llvm backend has no rule for primitive 'mul' yet")

    monkeypatch.setattr(llvm_backend, "compile_tiers", no_lowering)
    srcgrad.reuse.forget()          # else jit(scaled) is f again, compiled already
    g = srcgrad.jit(scaled)
    assert g(2.0) == 6.0 and g.backend == "python"
    with pytest.raises(NotImplementedError, match="no rule"):
        srcgrad.jit(scaled, backend="llvm")(2.0)
