"""The IR stage: printer output, the verifier, the passes, and the primitive table being the
single source every other table is keyed by."""
import pytest

import srcgrad

from srcgrad.backends import python as python_backend
from srcgrad.frontend.lower import lower
from srcgrad.ir.core import Block, Builder, Function, Op, cos, sin
from srcgrad.ir.passes import optimize
from srcgrad.ir.types import F64, I64
from srcgrad.ir.verifier import IRError, verify


from .programs import CASES, for_accumulator


def test_printer_shows_regions_and_user_names():
    text = str(lower(for_accumulator, [F64, I64]))
    assert text.startswith("func for_accumulator(%x: f64, %n: i64) -> f64 {")
    assert "for %i = " in text and "iter(%s." in text and "yield %s." in text
    assert text.rstrip().endswith("}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_frontend_output_verifies_before_and_after_the_passes(name):
    from srcgrad.ir.types import type_of
    fn, args, _ = CASES[name]
    ir = verify(lower(fn, [type_of(a) for a in args]))
    verify(optimize(ir))


def test_verifier_rejects_use_outside_scope_and_missing_terminator():
    fn = Function("f", [("x", F64)])
    inner = Block()
    with Builder(inner) as b:
        y = b.emit("mul", [fn.params[0], fn.params[0]])
        b.yield_([y])
    with Builder(fn.body) as b:
        cond = b.emit("gt", [fn.params[0], 0.0])
        other = Block()
        with Builder(other) as bb:
            bb.yield_([fn.params[0]])
        b.block.ops.append(Op("if", [cond], [F64], {"result_types": [F64]}, [inner, other]))
        b.ret([y])            # y lives inside the then-region only
    with pytest.raises(IRError, match="outside the scope"):
        verify(fn)
    g = Function("g", [("x", F64)])
    with Builder(g.body) as b:
        b.emit("sin", [g.params[0]])
    with pytest.raises(IRError, match="must end in 'return'"):
        verify(g)


def test_values_build_ops_like_math():
    fn = Function("f", [("x", F64)])
    with Builder(fn.body) as b:
        x = fn.params[0]
        b.ret([sin(x) * 2.0 - cos(x) / x])
    verify(fn)
    assert [op.prim for op in fn.body.ops] == ["sin", "const", "mul", "cos", "div", "sub", "return"]


def test_passes_fold_constants_and_remove_dead_code():
    fn = Function("f", [("x", F64)])
    with Builder(fn.body) as b:
        x = fn.params[0]
        two = b.emit("add", [1.0, 1.0])
        b.emit("sin", [x])                       # dead
        y = b.emit("mul", [x, 1.0])              # x * 1 -> x
        z = b.emit("sub", [b.emit("mul", [y, two]), 0.0])     # x - 0.0 -> x (x + 0.0 is not x at -0.0)
        b.ret([z])
    optimize(verify(fn))
    assert [op.prim for op in fn.body.ops] == ["const", "mul", "return"]
    assert python_backend.compile_function(fn)(3.0) == 6.0


def test_passes_keep_nan_semantics():
    fn = Function("f", [("x", F64)])
    with Builder(fn.body) as b:
        b.ret([b.emit("mul", [fn.params[0], 0.0])])
    optimize(fn)
    import math
    assert math.isnan(python_backend.compile_function(fn)(float("nan")))


def test_common_subexpressions_are_computed_once():
    def f(x):
        return (x * x + 1.0) * (x * x + 1.0)
    ir = optimize(lower(f, [F64]))
    assert sum(op.prim == "mul" for op in ir.body.ops) == 2


def _sweep_steps(fn):
    from srcgrad.ir.passes import _walk
    return [op.operands[2].owner.attrs["value"] for op in _walk(fn.body)
            if op.prim == "for" and op.attrs.get("reverse_sweep")]


def test_reverse_sweeps_that_only_accumulate_run_forwards():
    import numpy as np

    def weighted(x, w):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * w[i]
        return s
    g = srcgrad.grad(weighted, wrt=(0, 1), backend="python")
    x, w = np.arange(5.0), np.arange(5.0) + 1.0
    dx, dw = g(x, w)
    np.testing.assert_array_equal(dx, w)
    np.testing.assert_array_equal(dw, x)
    assert _sweep_steps(g._spec().code_ir) == [1]
    assert "for i in range(" in g.adjoint_source and "reversed(" not in g.adjoint_source


def test_reverse_sweeps_with_a_chain_between_iterations_stay_backwards():
    def power(x, n):
        p = 1.0
        for i in range(n):
            p = p * x + 1.0
        return p
    g = srcgrad.grad(power, backend="python")
    assert g(2.0, 3) == 3 * 4.0 + 2 * 2.0 + 1.0
    assert _sweep_steps(g._spec().code_ir) == [-1]


def test_values_needed_only_for_their_shape_are_not_computed():
    import numpy as np

    def loss(x):
        return np.sum(np.log1p(np.exp(x)))
    g = srcgrad.grad(loss, backend="python")
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(g(x), 1.0 / (1.0 + np.exp(-x)), rtol=1e-14)
    code = [line for line in g.adjoint_source.splitlines() if not line.strip().startswith("#")]
    assert not any("log1p" in line for line in code)      # (the # line comment shows the source)

    def square(y):
        return np.sum(y * y)
    g = srcgrad.grad(square, backend="python")
    np.testing.assert_allclose(g(x), 2.0 * x, rtol=1e-15)
    code = [line for line in g.adjoint_source.splitlines() if not line.strip().startswith("#")]
    assert not any("y * y" in line for line in code)      # an operand twice still has its shape


def _loops(fn):
    from srcgrad.ir.passes import _walk
    return [op for op in _walk(fn.body) if op.prim == "for"]


def test_value_and_grad_walks_a_loop_once():
    import math

    def b1(x, n):
        s = 0.0
        for i in range(n):
            s += math.sin(x * i) * math.exp(-1e-3 * i)
        return s + x * x
    for backend in ("python", "llvm"):
        vg = srcgrad.value_and_grad(b1, backend=backend)
        value, grad = vg(0.3, 50)
        assert value == pytest.approx(b1(0.3, 50), rel=1e-13)
        assert grad == pytest.approx(srcgrad.grad(b1, backend=backend)(0.3, 50), rel=1e-13)
        assert len(_loops(vg._spec().code_ir)) == 1
        assert vg._spec().code_ir.__str__().count("exp") == 1          # shared by both sweeps


def test_loops_that_read_each_other_or_may_raise_stay_apart():
    import numpy as np

    def chained(x, n):
        s = 0.0
        for i in range(n):
            s += x * i
        t = 0.0
        for i in range(n):
            t += s * i
        return t

    def indexed(v, n):
        s = 0.0
        for i in range(n):
            s += v[i]
        t = 0.0
        for i in range(n):
            t += v[i] * v[i]
        return s + t
    f = srcgrad.jit(chained, backend="python")
    assert f(0.5, 4) == chained(0.5, 4)
    assert len(_loops(f._spec().code_ir)) == 2
    g = srcgrad.jit(indexed, backend="python")
    with pytest.raises(IndexError):
        g(np.ones(3), 5)
    assert len(_loops(g._spec().code_ir)) == 2
