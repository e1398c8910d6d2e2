"""Every primitive of the IR has an entry in every table keyed by primitive (type rule,
derivative rule, tangent rule; the interpreter's in test_interpret.py), and one program
(primitive_cases.py) that makes it appear, checked for its value against Python, its gradient
against finite differences and the two backends against each other."""
import numpy as np
import pytest

import srcgrad
from srcgrad.ad.array_rules import ARRAY_ADJOINT
from srcgrad.ad.rules import ADJOINT
from srcgrad.ad.tangent_rules import TANGENT
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
    for k, gp, gn in zip(ks, py, native):
        np.testing.assert_allclose(gn, gp, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gp, numeric_gradient(fn, args, k), rtol=1e-6, atol=1e-8)

