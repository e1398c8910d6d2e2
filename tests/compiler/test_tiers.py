"""The quick tier of a large function and the O3 build that replaces it (backends/llvm/tiers.py):
the same numbers and errors from both, the swap, the stages, a failed build, exit and fork."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad.backends.llvm import tiers

PROGRAM = textwrap.dedent("""
    import math
    import numpy as np

    def rotation(a, b):
        ca, sa, cb, sb = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
        return np.array([[cb, 0.0, sb], [sa * sb, ca, -sa * cb], [-ca * sb, sa, ca * cb]])

    def objective(theta, pts, k):
        q = pts @ rotation(theta[0], theta[1]).T + theta[2:5]
        r = np.sum(q * q, axis=1)
        total = 0.0
        for i in range(k):
            if r[i] > 1.0:
                total += math.sqrt(r[i])
            else:
                total += 0.5 * r[i] * r[i]
        return total + np.sum(np.tanh(q)) + pts[k, 0] * theta[0]
""")


@pytest.fixture
def objective(tmp_path):
    path = tmp_path / "objective.py"         # a real file: the compiler reads the function's source
    path.write_text(PROGRAM)
    namespace = {}
    exec(compile(PROGRAM, str(path), "exec"), namespace)
    return namespace["objective"]


@pytest.fixture
def always(monkeypatch):
    monkeypatch.setenv("SRCGRAD_TIERS", "always")


def _args():
    rng = np.random.default_rng(0)
    return rng.standard_normal(5), rng.standard_normal((40, 3)), 30


def test_the_quick_tier_runs_first_and_the_o3_build_replaces_it(objective, always):
    g = srcgrad.grad(objective)
    first = g(*_args())
    spec = g.specialisation
    quick = spec.run
    expected = srcgrad.grad(objective, backend="python")(*_args())
    np.testing.assert_allclose(first, expected, rtol=1e-12, atol=1e-14)
    assert "define" in spec.llvm_ir             # waits for the O3 build, which is then swapped in
    assert not spec.building and spec.run is not quick
    np.testing.assert_allclose(g(*_args()), expected, rtol=1e-12, atol=1e-14)
    assert spec.backend == "llvm"


def test_the_stages_show_both_builds_and_the_total_to_the_first_call(objective, always):
    g = srcgrad.grad(objective)
    g(*_args())
    g.specialisation.llvm_ir
    stages = g.stages
    assert "llvm optimisation (quick tier)" in stages and "machine code (quick tier)" in stages
    assert "llvm optimisation (background)" in stages and "machine code (background)" in stages
    lines = stages.splitlines()
    total = [k for k, line in enumerate(lines) if line.startswith("total")]
    assert total and all("background" in line for line in lines[total[0] + 1:])


def test_both_tiers_raise_the_same_error(objective, always):
    g = srcgrad.grad(objective)
    theta, pts, _ = _args()
    with pytest.raises(IndexError) as quick:
        g(theta, pts, 40)                        # pts[40, 0]: past the end, in the quick tier
    g.specialisation.llvm_ir
    with pytest.raises(IndexError) as optimised:
        g(theta, pts, 40)
    assert str(quick.value) == str(optimised.value) and "objective.py" in str(quick.value)


def test_a_failed_o3_build_warns_and_the_quick_tier_goes_on(objective, always, monkeypatch):
    from srcgrad.backends.llvm import jit

    def fails(mod, machine):
        raise RuntimeError("no O3 today")
    monkeypatch.setattr(jit, "_optimise", fails)
    g = srcgrad.grad(objective)
    first = g(*_args())
    with pytest.warns(RuntimeWarning, match="no O3 today"):
        g.specialisation.llvm_ir
    np.testing.assert_array_equal(g(*_args()), first)


def test_small_functions_are_built_once_unless_told(monkeypatch):
    def f(x):
        return x * x
    monkeypatch.setenv("SRCGRAD_TIERS", "auto")
    g = srcgrad.grad(f)
    assert g(3.0) == 6.0 and g.specialisation._later is None
    assert not tiers.wanted("\n" * (tiers.QUICK_MIN_LINES - 1)) and tiers.wanted("\n" * tiers.QUICK_MIN_LINES)
    monkeypatch.setenv("SRCGRAD_TIERS", "off")
    assert not tiers.wanted("\n" * tiers.QUICK_MIN_LINES)
    monkeypatch.setenv("SRCGRAD_TIERS", "sometimes")
    with pytest.raises(ValueError, match="SRCGRAD_TIERS"):
        tiers.wanted("")


def test_by_default_a_function_is_tiered_by_the_size_of_its_module(objective, monkeypatch):
    monkeypatch.setenv("SRCGRAD_TIERS", "auto")
    monkeypatch.setattr(tiers, "QUICK_MIN_LINES", 500)      # the objective's module is larger
    g = srcgrad.grad(objective)
    g(*_args())
    assert g.specialisation._later is not None and "define" in g.specialisation.llvm_ir
    def square(x):
        return x * x
    h = srcgrad.grad(square)
    assert h(3.0) == 6.0 and h.specialisation._later is None


def test_another_function_compiles_while_a_build_runs(objective, always):
    g = srcgrad.grad(objective)
    g(*_args())

    def h(x):
        return np.sum(np.exp(x))
    x = np.linspace(0.0, 1.0, 7)
    np.testing.assert_allclose(srcgrad.grad(h)(x), np.exp(x), rtol=1e-12)
    assert "define" in g.specialisation.llvm_ir


def _run(tmp_path, body):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM + textwrap.dedent(body))
    env = dict(os.environ, SRCGRAD_TIERS="always")
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)


def test_the_interpreter_exits_cleanly_during_a_build(tmp_path):
    done = _run(tmp_path, """
        import srcgrad
        rng = np.random.default_rng(0)
        g = srcgrad.grad(objective)
        print(g(rng.standard_normal(5), rng.standard_normal((40, 3)), 30).shape)
    """)
    assert done.returncode == 0 and done.stdout.strip() == "(5,)", done.stderr
    assert done.stderr == ""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_fork_waits_for_the_build_in_progress_and_the_child_builds_the_queued_ones(tmp_path):
    done = _run(tmp_path, """
        import os, warnings
        import srcgrad
        warnings.simplefilter("ignore", DeprecationWarning)   # fork with a thread running (3.12+)
        rng = np.random.default_rng(0)
        args = rng.standard_normal(5), rng.standard_normal((40, 3)), 30
        g = srcgrad.grad(objective)
        first = g(*args)
        h = srcgrad.jit(objective)
        h(*args)                                # queued behind g's build
        pid = os.fork()
        if pid == 0:
            ok = "define" in g.specialisation.llvm_ir and np.allclose(g(*args), first, rtol=1e-12)
            ok = ok and "define" in h.specialisation.llvm_ir
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), "define" in g.specialisation.llvm_ir)
    """)
    assert done.returncode == 0 and done.stdout.split() == ["0", "True"], done.stderr
