"""The IR interpreter (srcgrad/ir/interpret.py) and translation validation (tests/fuzz/validate.py)
on every program of programs.py: the interpreted IR does what Python does, every pass keeps
what the primal, reverse- and forward-mode IR do, and the interpreted gradient is the python
backend's."""
import importlib.util
import inspect

import numpy as np
import pytest

from srcgrad.frontend.lower import lower
from srcgrad.ir import passes
from srcgrad.ir.interpret import clone, interpret
from srcgrad.ir.types import F64, I64, ArrayType
from tests.fuzz.validate import validate

from .programs import CASES


def _wrt(fn, wrt):
    params = list(inspect.signature(fn).parameters)
    return [params.index(w) if isinstance(w, str) else w for w in ([wrt] if isinstance(wrt, (int, str)) else wrt)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_translation_validation(name):
    fn, args, wrt = CASES[name]
    validate(fn, args, _wrt(fn, wrt))


def _load(tmp_path, name, source):
    """The module of ``source`` (the frontend reads functions' source files)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_python_semantics_of_numbers(tmp_path):
    mod = _load(tmp_path, "numbers_prog", "def f(x, y, n):\n"
                "    return x // y + x % y + (-7) // n + (-7) % n + (-x) % 3.0 + x ** 2.0\n"
                "def g(x, y):\n"
                "    return x / y\n")
    for x, y, n in [(5.5, -2.0, 3), (-5.5, 2.0, -3), (-0.0, 1.5, 2), (1e150, -1e-300, 7), (7.0, float("inf"), 2)]:
        assert interpret(lower(mod.f, [F64, F64, I64]), [x, y, n]) == mod.f(x, y, n)
    with pytest.raises(ZeroDivisionError):
        interpret(lower(mod.g, [F64, F64]), [1.0, 0.0])
    with pytest.raises(OverflowError):          # compiled code would wrap: the interpreter says so
        interpret(lower(mod.f, [F64, F64, I64]), [1.0, 1.0, 2**63])


def test_in_place_writes_alias(tmp_path):
    """A write through one name is seen through every alias: a view, the caller's array."""
    mod = _load(tmp_path, "alias_prog", "def f(v):\n"
                "    w = v[1:]\n"
                "    w[0] = 5.0\n"
                "    v[2] = w[0] + 1.0\n"
                "    return v[1] + w[1]\n")
    v, w = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    ir = lower(mod.f, [ArrayType(F64, 1)])
    assert interpret(ir, [v]) == mod.f(w) == 11.0
    np.testing.assert_array_equal(v, w)
    assert str(clone(ir)) == str(ir)


def test_validation_names_the_pass_that_breaks_a_program(tmp_path, monkeypatch):
    """A pass that drops in-place writes (as a CSE merging two np.zeros would lose one) is caught
    after that pass, by name, with the IR before and after it."""
    def drop_writes(fn):
        subst = {}
        kept = []
        for op in fn.body.ops:
            op.operands = [subst.get(v, v) for v in op.operands]
            if op.prim == "setitem":
                subst[op.results[0]] = op.operands[0]
            else:
                kept.append(op)
        fn.body.ops = kept
        return fn

    monkeypatch.setattr(passes, "PIPELINE", passes.PIPELINE + (("drop_writes", drop_writes),))
    mod = _load(tmp_path, "writes_prog", "import numpy as np\n\n\ndef f(x):\n"
                "    c = np.zeros(3)\n    c[0] = x\n    return c[0] * x\n")
    with pytest.raises(AssertionError, match=r"pass 'drop_writes' changed what the primal IR does(.|\n)*"
                                             r"IR before:(.|\n)*setitem(.|\n)*IR after:"):
        validate(mod.f, (0.5,), [0])


_MORE = '''import math

import numpy as np
import srcgrad


@srcgrad.custom_vjp
def softplus(x):
    return math.log1p(math.exp(x))


@softplus.defvjp
def softplus_vjp(x, y, gy):
    return (gy / (1.0 + math.exp(-x)),)


def custom(x, y):
    s = 0.0
    for i in range(3):
        s += softplus(x * i) * y
    return s + np.sum(np.arange(3.0) * x) + round(x * 3.0)


def view_writes(a, b):
    c = np.outer(a, b)
    d = c.T
    d[0, 1] = 5.0
    return np.sum(np.prod(c, axis=1) + np.max(c, axis=1)) + np.sum(c[1:, ::-1], axis=0)[0]


def reductions(a, b):
    c = np.outer(a, b)
    e = np.prod(c, axis=1) + np.max(c, axis=1) + np.sum(c[1:, ::-1], axis=0)[0]
    return np.sum(e) + np.min(a) * np.dot(a, a) + np.sum(c.T @ a)
'''


def test_custom_vjp_views_and_reductions(tmp_path):
    """call_custom and call_custom_vjp, a write through a transpose seen by the array it views,
    prod/max gradients (with a zero and ties) — interpreted, validated, against Python."""
    mod = _load(tmp_path, "more_prog", _MORE)
    validate(mod.custom, (0.7, 1.3), [0, 1])
    a, b = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3])
    validate(mod.view_writes, (a, b), None, derivatives=False)
    validate(mod.reductions, (a, b), [0, 1])
    validate(mod.reductions, (np.array([0.5, 0.0, 2.0]), np.array([1.5, 1.5])), [0, 1])
