"""Every primitive of the IR has an entry in every table keyed by primitive (type rule,
derivative rule, tangent rule; the interpreter's in test_interpret.py), and one program
(primitive_cases.py) that makes it appear, checked for its value against Python, its gradient
against finite differences and the two backends against each other."""
import zlib

import numpy as np
import pytest

import srcgrad
from srcgrad.ad.array_rules import ARRAY_ADJOINT
from srcgrad.ad.rules import ADJOINT
from srcgrad.ad.second_order import NO_TANGENT
from srcgrad.ad.tangent_rules import ELEMENTWISE, TANGENT
from srcgrad.ir.core import walk_ops
from srcgrad.ir.primitives import PRIMITIVES

from .primitive_cases import CASES
from .test_gradients import numeric_gradient

def test_every_table_has_every_primitive():
    """A "structural" derivative is not one contribution per operand: region ops are handled
    by the engines (ad/reverse.py, ad/forward.py); array reads, writes and calls need a rule in
    ad/array_rules.py and one in ad/tangent_rules.py."""
    for name, prim in PRIMITIVES.items():
        assert callable(prim.type_rule), name
        assert name in ADJOINT, f"no derivative rule (ad/rules.py) for {name}"
        if ADJOINT[name] == "structural" and not prim.region_op:
            assert name in ARRAY_ADJOINT, f"no reverse rule (ad/array_rules.py) for {name}"
            assert name in TANGENT, f"no tangent rule (ad/tangent_rules.py) for {name}"
    assert set(ARRAY_ADJOINT) <= {n for n, r in ADJOINT.items() if r == "structural"}


def test_every_primitive_has_a_case():
    """The backends' lowerings are chains of cases: each primitive's program, compiled with
    backend="python" and backend="llvm" (no fallback) in test_primitive_case, is their check."""
    assert not sorted(set(PRIMITIVES) - set(CASES)), "add a program to tests/compiler/primitive_cases.py"


def _appears(prim, compiled):
    """Whether an op of ``prim`` is in the compiled function's IR or its derivative's."""
    spec = compiled._spec()
    return any(op.prim == prim for fn in (spec.ir, spec.code_ir) for op in walk_ops(fn.body))


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitive_case(name):
    fn, args, wrt = CASES[name]
    want = fn(*_copy(args))
    texts = []
    for backend in ("python", "llvm"):
        jitted = srcgrad.jit(fn, backend=backend)
        assert jitted(*_copy(args)) == pytest.approx(want, rel=1e-12, abs=1e-14), backend
        texts.append(jitted)
    grads = {}
    for backend in ("python", "llvm"):
        g = srcgrad.grad(fn, wrt=wrt, backend=backend)
        grads[backend] = g(*_copy(args))
        texts.append(g)
    assert any(_appears(name, t) for t in texts), f"{name} appears in neither the IR nor its gradient's"
    ks = wrt if isinstance(wrt, tuple) else (wrt,)
    py, native = (grads[b] if isinstance(wrt, tuple) else (grads[b],) for b in ("python", "llvm"))
    numeric = {k: numeric_gradient(fn, args, k) for k in ks}
    for k, gp, gn in zip(ks, py, native):
        np.testing.assert_allclose(gn, gp, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gp, numeric[k], rtol=1e-6, atol=1e-8)
    _check_jvp(name, fn, args, numeric)


# primitives whose programs forward mode refuses by design, with a TypingError saying so
REVERSE_ONLY = {"call_custom", *NO_TANGENT}


def _check_jvp(name, fn, args, numeric):
    """Forward mode along a random direction: the tangent is <numeric gradient, direction>
    (issue 28: a tangent rule found by default once gave 1.0 where the answer was 6.0)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    tangents = [np.zeros_like(a, dtype=float) if isinstance(a, np.ndarray) else 0.0 for a in args]
    for k in numeric:
        tangents[k] = rng.standard_normal(np.shape(args[k])) if isinstance(args[k], np.ndarray) else rng.standard_normal()
    try:
        _, tangent = srcgrad.jvp(fn, _copy(args), tuple(tangents))
    except srcgrad.TypingError:
        assert name in REVERSE_ONLY, f"jvp refuses the program of {name}"
        return
    want = sum(float(np.sum(numeric[k] * tangents[k])) for k in numeric)
    assert tangent == pytest.approx(want, rel=1e-6, abs=1e-8), f"jvp of {name}'s program"


def test_every_differentiable_primitive_has_a_tangent_rule():
    """Forward mode looks rules up strictly (ad/forward.py): a primitive it may meet has its
    entry, the elementwise ones listed by name (tangent_rules.ELEMENTWISE), or is refused."""
    for name, prim in PRIMITIVES.items():
        rule = ADJOINT[name]
        if callable(rule) or (rule == "structural" and not prim.region_op):
            assert name in TANGENT, f"no tangent rule (ad/tangent_rules.py) for {name}"
        elif rule == "twice" and name not in TANGENT:
            # made by reverse mode only: refused, or the engine's own (tapes; undo_save has no result)
            assert name in NO_TANGENT or name in ("tape_put", "tape_get", "undo_save"), name
    assert set(ELEMENTWISE) <= set(TANGENT)


def test_a_missing_tangent_rule_is_a_failed_lookup_by_name(monkeypatch):
    """Without cumsum's entry, a default once gave jvp = 1.0 (its transposed adjoint) for 6.0."""
    x = np.ones(3)
    assert srcgrad.jvp(cumulative, (x,), (x,))[1] == 6.0
    monkeypatch.delitem(TANGENT, "cumsum")
    with pytest.raises(KeyError, match="cumsum"):
        srcgrad.jvp(cumulative_twice, (x,), (x,))


def cumulative(x):
    return np.sum(np.cumsum(x))


def cumulative_twice(x):           # another function: the first one's jvp is compiled already
    return 2.0 * np.sum(np.cumsum(x))

