"""Hostile input (issue 5): each gets a clear error or numpy's answer on both backends — never
a crash, an internal traceback or a wrong answer. Unsupported constructs and out-of-bounds
indices have their own tests (test_errors.py, test_gradients.py); huge allocations are in
test_llvm_memory.py."""
import importlib
import math
import sys
import threading

import numpy as np
import pytest

import srcgrad

BACKENDS = ["python", "llvm"]


def weighted(x, v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] * x
    return s + np.sum(v)


def ranged(x, a, b, step):
    t = 0.0
    for i in range(a, b, step):
        t += x
    return t


def stops_early(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
        if i > 3:
            break
    return s


def root(x):
    return math.sqrt(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args, error, text", [
    (("a", np.ones(3)), srcgrad.TypingError, "argument 'x' of weighted is a str"),
    ((1.0, [1.0, 2.0]), srcgrad.TypingError, "v is a list of 2, where a number or an array is needed"),
    ((None, np.ones(3)), srcgrad.TypingError, "is a NoneType"),
    ((1j, np.ones(3)), srcgrad.TypingError, "is a complex"),
    ((1.0, np.ones(3, np.int32)), srcgrad.TypingError, "of dtype int32"),
    ((1.0, np.ones(3, np.float16)), srcgrad.TypingError, "of dtype float16"),
    ((1.0, np.ones(3, complex)), srcgrad.TypingError, "of dtype complex128"),
    ((1.0, np.array([1.0, None])), srcgrad.TypingError, "of dtype object"),
    ((1.0, np.ones((2, 2))), srcgrad.TypingError, "'s' changes type in the loop"),        # a rank the code
    ((1.0, np.array(1.0)), srcgrad.TypingError, "axis 0 is out of range"),                # does not fit
    ((1.0,), TypeError, "weighted(): missing a required argument: 'v'"),         # bound as Python binds them
    ((1.0, np.ones(3), 2.0), TypeError, "weighted(): too many positional arguments"),
    ((True, np.ones(3)), srcgrad.TypingError, "cannot take the gradient with respect to argument 'x' of type bool"),
])
def test_wrong_arguments_are_clear_errors(backend, args, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        srcgrad.grad(weighted, backend=backend)(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_inf_and_empty_arrays_behave_as_numpy(backend):
    g = srcgrad.value_and_grad(weighted, wrt=(0, 1), backend=backend)
    value, (gx, gv) = g(float("nan"), np.ones(3))
    assert math.isnan(value) and gx == 3.0 and np.isnan(gv).all()
    value, (gx, gv) = g(1.0, np.array([np.inf, 1.0]))
    assert value == np.inf and gx == np.inf and gv.tolist() == [2.0, 2.0]
    value, (gx, gv) = g(2.0, np.zeros(0))
    assert value == 0.0 and gx == 0.0 and gv.shape == (0,)
    with np.errstate(all="ignore"):
        assert math.isnan(srcgrad.jit(root, backend=backend)(-1.0))          # numpy's sqrt, not ValueError
        assert srcgrad.grad(root, backend=backend)(0.0) == np.inf


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_bounds_at_the_ends_of_64_bit_integers(backend):
    f = srcgrad.jit(ranged, backend=backend)
    for a, b, step in [(0, 2**63 - 1, 2**62), (2**63 - 1, -2**63, -2**62), (0, 10, 3), (10, 0, -3), (0, 10, -1),
                       (0, 0, 1)]:
        assert f(1.0, a, b, step) == len(range(a, b, step))
    with pytest.raises(OverflowError, match="beyond the 64-bit integers"):
        f(1.0, 0, 2**64, 1)
    with pytest.raises(ValueError, match="must not be zero"):
        f(1.0, 0, 3, 0)
    # break ends the loop: a huge trip count costs nothing
    assert srcgrad.jit(stops_early, backend=backend)(1.5, 2**62) == stops_early(1.5, 2**62)
    assert srcgrad.grad(stops_early, backend=backend)(1.5, 2**62) == 10.0


def test_a_source_file_edited_after_decoration_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "edited_after.py").write_text("def f(x):\n    return x * x\n")
    module = importlib.import_module("edited_after")
    g = srcgrad.grad(module.f)
    (tmp_path / "edited_after.py").write_text("def f(x):\n    return x * x * x\n")
    assert g(3.0) == 6.0


def test_a_source_file_edited_before_decoration_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "edited_before.py").write_text("def f(x):\n    return x * x\n")
    module = importlib.import_module("edited_before")
    (tmp_path / "edited_before.py").write_text("def f(x):\n    return x + 1.0\n")
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="has changed since it was imported"):
        srcgrad.grad(module.f)(3.0)
    sys.modules.pop("edited_before")


def test_functions_without_a_source_file_name_inspect_getsource():
    namespace = {}
    exec("def f(x):\n    return x * x\n", namespace)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="inspect.getsource failed"):
        srcgrad.grad(namespace["f"])(1.0)


def test_eight_threads_compile_once_and_agree(monkeypatch):
    from srcgrad import api
    compiled = []
    original = api.Compiled._specialise

    def counting(self, types):
        compiled.append(types)
        return original(self, types)
    monkeypatch.setattr(api.Compiled, "_specialise", counting)
    g = srcgrad.grad(weighted, wrt=(0, 1))
    v = np.arange(1.0, 6.0)
    start = threading.Barrier(8)
    results, errors = [], []

    def work():
        start.wait()
        try:
            for _ in range(20):
                results.append(g(0.5, v))
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(compiled) == 1 and len(results) == 160
    for gx, gv in results:
        assert gx == 15.0 and (gv == 1.5).all()
