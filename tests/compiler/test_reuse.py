"""srcgrad.grad(f) asked again gives the object it gave, compiled once (issue 29 point 5), unless
what its compiled code froze (globals, closure cells, module attributes, helpers) has changed:
then a new object, compiled afresh, gives the new value (srcgrad/reuse.py, frontend/reads.py)."""
import types

import numpy as np
import pytest

import srcgrad
from srcgrad import reuse

SCALE = 2.0
TABLE = np.array([1.0, 2.0, 3.0])
CFG = types.ModuleType("cfg")
CFG.power = 2.0


def scaled(x):
    return SCALE * x * x


def weighted(x):
    return np.sum(TABLE * x)


def configured(x):
    return x ** CFG.power


def helper(x):
    return 3.0 * x


def calls_helper(x):
    return helper(x) * x


compiled_helper = srcgrad.jit(helper)


def calls_compiled_helper(x):
    return compiled_helper(x) * x


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    reuse.forget()
    yield
    reuse.forget()


def test_asked_again_in_a_loop_the_same_object_compiled_once():
    first = srcgrad.grad(scaled)
    for _ in range(5):
        g = srcgrad.grad(scaled)
        assert g is first and g(1.5) == 6.0
    assert len(first._cache) == 1


def test_other_options_or_kinds_are_other_objects():
    g = srcgrad.grad(scaled)
    assert srcgrad.grad(scaled, backend="python") is not g
    assert srcgrad.grad(scaled, boundscheck=False) is not g
    assert srcgrad.value_and_grad(scaled) is not g
    assert srcgrad.jit(scaled) is not g
    assert srcgrad.grad(scaled, wrt=(0,)) is not g
    assert srcgrad.grad(scaled, wrt=[0]) is srcgrad.grad(scaled, wrt=(0,))


def test_a_changed_global_number_gives_a_new_object(monkeypatch):
    g = srcgrad.grad(scaled)
    assert g(1.0) == 4.0
    monkeypatch.setitem(globals(), "SCALE", 5.0)
    h = srcgrad.grad(scaled)
    assert h is not g and h(1.0) == 10.0
    assert g(1.0) == 4.0                # the object made before keeps its frozen copy, as documented
    assert srcgrad.grad(scaled) is h


def test_negative_zero_is_a_change(monkeypatch):
    monkeypatch.setitem(globals(), "SCALE", 0.0)
    g = srcgrad.grad(scaled)
    g(1.0)
    monkeypatch.setitem(globals(), "SCALE", -0.0)
    assert srcgrad.grad(scaled) is not g


def test_a_global_array_written_in_place_gives_a_new_object():
    g = srcgrad.jit(weighted)
    assert g(np.ones(3)) == 6.0
    TABLE[0] = 10.0
    try:
        h = srcgrad.jit(weighted)
        assert h is not g and h(np.ones(3)) == 15.0
    finally:
        TABLE[0] = 1.0


def test_a_module_attribute_changed_gives_a_new_object(monkeypatch):
    g = srcgrad.grad(configured)
    assert g(3.0) == pytest.approx(6.0)
    monkeypatch.setattr(CFG, "power", 3.0)
    h = srcgrad.grad(configured)
    assert h is not g and h(3.0) == pytest.approx(27.0)


def test_a_redefined_helper_gives_a_new_object(monkeypatch):
    g = srcgrad.grad(calls_helper)
    assert g(2.0) == 12.0              # d/dx 3x^2
    monkeypatch.setitem(globals(), "helper", lambda x: 5.0 * x)
    h = srcgrad.grad(calls_helper)
    assert h is not g and h(2.0) == 20.0


def test_a_compiled_helper_whose_global_changed_gives_a_new_object(monkeypatch):
    outer = srcgrad.grad(calls_compiled_helper)
    assert outer(2.0) == 12.0
    assert srcgrad.grad(calls_compiled_helper) is outer
    monkeypatch.setattr(compiled_helper, "_reads", {})     # as if the helper read nothing
    assert srcgrad.grad(calls_compiled_helper) is outer
    monkeypatch.setattr(compiled_helper, "reads_unchanged", lambda seen=None: False)
    assert srcgrad.grad(calls_compiled_helper) is not outer


def test_closure_cells_rebound_give_a_new_object():
    k = 2.0

    def f(x):
        return k * x

    g = srcgrad.grad(f)
    assert g(1.0) == 2.0
    k = 7.0
    h = srcgrad.grad(f)
    assert h is not g and h(1.0) == 7.0


def test_a_new_def_each_time_is_a_new_object_with_its_closure():
    results = []
    for n in (1.0, 2.0, 3.0):
        def f(x):
            return n * x * x
        results.append(srcgrad.grad(f)(1.0))
    assert results == [2.0, 4.0, 6.0]


def test_replaced_code_gives_a_new_object():
    def f(x):
        return x * x

    g = srcgrad.grad(f)
    assert g(3.0) == 6.0
    def cube(x):
        return x * x * x

    f.__code__ = cube.__code__
    h = srcgrad.grad(f)
    assert h is not g and h(3.0) == 27.0


def test_grad_of_grad_asked_again_is_the_same_object():
    hh = srcgrad.grad(srcgrad.grad(scaled))
    assert srcgrad.grad(srcgrad.grad(scaled)) is hh and hh(1.0) == 4.0


def test_vjp_reuses_and_sees_changes(monkeypatch):
    out, pull = srcgrad.vjp(scaled, 1.0)
    assert pull(1.0) == (4.0,)
    first = srcgrad.compiled.compiled_for(scaled, "vjp", None)
    assert srcgrad.compiled.compiled_for(scaled, "vjp", None) is first
    monkeypatch.setitem(globals(), "SCALE", 5.0)
    out, pull = srcgrad.vjp(scaled, 1.0)
    assert out == 5.0 and pull(1.0) == (10.0,)


def test_only_the_most_recent_are_kept(monkeypatch):
    monkeypatch.setattr(reuse, "SIZE", 2)
    a = srcgrad.grad(scaled)
    b = srcgrad.grad(weighted)
    assert srcgrad.grad(scaled) is a           # a is the most recent now
    srcgrad.grad(configured)                   # b is forgotten
    assert srcgrad.grad(scaled) is a and srcgrad.grad(weighted) is not b
    assert len(reuse._RECENT) == 2


def test_the_decorator_is_shared_too():
    deco = srcgrad.grad(wrt=0)
    assert deco(scaled) is deco(scaled) is srcgrad.grad(scaled, wrt=0)
