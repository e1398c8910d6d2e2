"""Every primitive of the IR has an entry in every table keyed by primitive, as its record
says (ir/primitive_table.py): type rule, meaning (interpret.EVAL), derivative (ad/tables.py),
tangent, the python backend's EXPR/STMT, the llvm backend's registries; and one program
(primitive_cases.py) that makes it appear, checked for its value against Python, its gradient
against finite differences, its jvp, and the two backends against each other. These checks
are static, so a primitive missing from a table fails here by name."""
import math
import zlib

import numpy as np
import pytest

import srcgrad
from srcgrad.ad.all_rules import ADJOINT, ARRAY_ADJOINT, TANGENT
from srcgrad.ad.second_order import NO_SECOND_ADJOINT, NO_TANGENT
from srcgrad.ad.tangent_rules import ELEMENTWISE
from srcgrad.backends import python as python_backend
from srcgrad.backends.llvm.lowering import STRUCTURAL, tables
from srcgrad.backends.llvm.target import CPU
from srcgrad.ir.core import walk_ops
from srcgrad.ir.interpret import EVAL
from srcgrad.ir.primitive_table import ADJOINT_KINDS, WRITE_KEYS
from srcgrad.ir.primitives import PRIMITIVES

from .primitive_cases import CASES
from .test_gradients import numeric_gradient

KINDS = {kind: sorted(n for n, p in PRIMITIVES.items() if p.adjoint == kind) for kind in ADJOINT_KINDS}


def test_every_primitive_has_a_type_rule_and_a_meaning():
    for name, prim in PRIMITIVES.items():
        assert callable(prim.type_rule), name
        assert name in EVAL, f"no interpreter rule (ir/interpret.py EVAL) for {name}"
    assert set(EVAL) <= set(PRIMITIVES)


def test_adjoint_holds_the_rule_primitives_only_each_a_function_or_none():
    """``adjoint="rule"``: ADJOINT[name] is the rule, or None where there is no derivative."""
    assert sorted(ADJOINT) == KINDS["rule"], "ADJOINT's keys are the primitives whose record says adjoint='rule'"
    for name, rule in ADJOINT.items():
        assert rule is None or callable(rule), name


def test_every_structural_primitive_has_an_engine_or_an_array_rule():
    """Region ops are the engines' (ad/reverse.py, ad/forward.py); array reads, writes and calls
    have a rule in ad/array_rules.py or ad/indexing_rules.py, and one in TANGENT."""
    for name in KINDS["structural"]:
        if not PRIMITIVES[name].region_op:
            assert name in ARRAY_ADJOINT, f"no reverse rule (ad/array_rules.py) for {name}"
            assert name in TANGENT, f"no tangent rule (ad/tangent_rules.py) for {name}"
    assert sorted(ARRAY_ADJOINT) == sorted(n for n in KINDS["structural"] if not PRIMITIVES[n].region_op)


def test_every_refused_primitive_says_why():
    assert KINDS["refused"] == sorted(NO_SECOND_ADJOINT), "adjoint='refused' needs its reason in NO_SECOND_ADJOINT"
    assert set(NO_TANGENT) <= set(NO_SECOND_ADJOINT)


def test_writes_have_their_key_and_the_facts_agree():
    for name, prim in PRIMITIVES.items():
        assert (prim.key in WRITE_KEYS) == (prim.writes is not None), name
        assert not prim.accumulates or prim.writes is not None, name
        assert not prim.scalar_only or not prim.elementwise, name
    # the writes the user's code makes, whose overwritten elements the undo log keeps
    assert sorted(n for n, p in PRIMITIVES.items() if p.user_write) == \
        ["scatter", "scatter_add", "setitem", "setmask", "setslice"]


def test_the_python_backend_has_one_entry_per_primitive():
    missing = sorted(set(PRIMITIVES) - set(python_backend.EXPR) - set(python_backend.STMT))
    assert not missing, f"the python backend has no entry (exprs.EXPR or emit.STMT) for {missing}"
    assert not set(python_backend.EXPR) & set(python_backend.STMT)
    assert set(python_backend.EXPR) | set(python_backend.STMT) <= set(PRIMITIVES), "an entry for no primitive"


def test_the_llvm_backend_has_one_lowering_per_primitive():
    every = [t for group in tables(CPU) for t in group]
    for name in PRIMITIVES:
        found = [k for k, table in enumerate(every) if name in table]
        assert len(found) == (0 if name in STRUCTURAL else 1), f"llvm lowerings of {name}: {found} (want one)"
    for table in every:
        assert not sorted(set(table) - set(PRIMITIVES)), "an llvm lowering for no primitive"
    assert set(STRUCTURAL) <= set(PRIMITIVES)


def test_every_primitive_has_a_case():
    """Each primitive's program, compiled with backend="python" and backend="llvm" (no fallback)
    in test_primitive_case, checks what its table entries do."""
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
        if prim.adjoint == "rule" and ADJOINT[name] is not None or prim.adjoint == "structural" and not prim.region_op:
            assert name in TANGENT, f"no tangent rule (ad/tangent_rules.py) for {name}"
        elif prim.adjoint == "refused" and name not in TANGENT:
            # made by reverse mode only: refused, or the engine's own (tapes; undo_save has no result)
            assert name in NO_TANGENT or name in ("tape_put", "tape_get", "undo_save"), name
    assert set(ELEMENTWISE) <= set(TANGENT)
    assert set(TANGENT) <= set(PRIMITIVES)


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



def test_a_missing_adjoint_rule_is_a_failed_lookup_by_name(monkeypatch):
    monkeypatch.delitem(ADJOINT, "sinh")
    with pytest.raises(KeyError, match="sinh"):
        srcgrad.grad(hyperbolic_sine)(0.5)


def hyperbolic_sine(x):
    return math.sinh(x) * x
