"""The ways every generated program is checked, used by the CI tests and by the long run
(``python -m tests.fuzz``): the llvm backend against the python backend (1e-12) and plain
Python (the value, and what is left in the argument arrays), the gradient against finite
differences, forward mode against reverse mode (the dot-product test ⟨vjp(1), t⟩ = jvp(t)),
the compiled gradient against the eager one where the program runs on eager tensors, the
checkpointed gradient (``checkpoint=``) against the taped one, second derivatives (also by double
backward through ``srcgrad.jit(f)`` on eager tensors), and translation validation
(validate.py: the IR interpreted before and after each pass)."""
import ast
import importlib.util
import inspect
import itertools
import math
import re
import zlib

import numpy as np
import pytest
from hypothesis import assume

import srcgrad
from srcgrad import threads
from srcgrad.backends.cuda.host_device import HostDevice
from srcgrad.backends.llvm import compile_quick
from srcgrad.backends.cuda.launch import use_device
from srcgrad.arguments import leaves
from srcgrad.ir.core import walk_ops

from .programs import SPECIAL_POINTS
from .validate import same, validate

_EDGES = {p for points in SPECIAL_POINTS.values() for p in points}

_count = itertools.count()
V = np.array([0.4, -0.9, 1.3])


def load(source, folder, eager=False):
    """The function a program's source ends with (``f``, or one named like ``sin``), written to a
    file (the compiler reads source files). With ``eager``, ``math`` and ``np`` are the eager shim's."""
    if eager:
        source = source.replace("import math\n\nimport numpy as np\n",
                                "import math as compiled_math\n\nfrom tests.fuzz.eager_shim import math, np\n")
        # the @srcgrad.jit helper is compiled (Python's math), and called on tensors (bridge.py)
        source = source.replace("def jitted(a, b):\n    return math.", "def jitted(a, b):\n    return compiled_math.")
        # x += e on a tensor changes it in place (and every name bound to it); on a float it
        # binds a new number: write what Python does to numbers
        source = re.sub(r"(?m)^(\s*)([a-z]\w*) ([-+*])= (.*)$", r"\1\2 = \2 \3 (\4)", source)
    path = folder / f"prog_{next(_count)}{'_eager' if eager else ''}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    entry = [d.name for d in ast.parse(source).body if isinstance(d, ast.FunctionDef)][-1]
    return getattr(mod, entry)


def _shifted(f, x, y, v, i, d):
    if i == 0:
        return f(x + d, y, v.copy())
    if i == 1:
        return f(x, y + d, v.copy())
    w = v.copy()
    w[i - 2] += d
    return f(x, y, w)


def eager_gradient(source, folder, x, y):
    """The eager mode's gradient of the program at (x, y, V), or None where the program does
    not run on eager tensors (a documented eager limitation, say in-place changes of views)."""
    import srcgrad as torch
    entry = source[source.rindex("\ndef "):]        # f itself (the helpers are defined in every program)
    if any(f"{name}(" in entry for name in ("dsquash", "dhelper", "dlooped", "vsquash")):
        return None         # compiled functions called on tensors: only jit's go into the eager graph (bridge.py)
    try:
        f = load(source, folder, eager=True)
        tx, ty = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, y))
        tv = torch.tensor(V, dtype=torch.float64, requires_grad=True)
        out = f(tx, ty, tv)
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            return None
        out.backward()
    except (RuntimeError, NotImplementedError, TypeError, AttributeError):
        return None
    return [0.0 if t.grad is None else float(t.grad) for t in (tx, ty)] + \
        (list(tv.grad.numpy()) if tv.grad is not None else [0.0] * 3)


def _near(a, b, rel=1e-12, abs_=1e-12):
    return pytest.approx(b, rel=rel, abs=abs_, nan_ok=True) == a


def _same_arrays(got, expected, source, what):
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13,
                               err_msg=f"{what}: the argument array after the call is not what Python left\n{source}")


# second derivatives (check_second_order, check_matrices) compile three to five more functions
# per program: CI's bounded run (test_fuzz.py) checks them on one program in SECOND_ORDER_EVERY
# (drawn from the source's text), the long runs (python -m tests.fuzz) on all, the regression
# programs where they are second-order ones (``second_order``)
SECOND_ORDER_EVERY = 1


def _second_order_for(source):
    return zlib.crc32(source.encode()) % SECOND_ORDER_EVERY == 0


def check_program(source, folder, x, y, fuzzing=True, second_order=None):
    """All the checks of one scalar program at (x, y, V); returns whether the eager check ran.
    While ``fuzzing``, a point unfit for finite differences makes hypothesis draw another;
    otherwise (a regression program at its point, or a feature's edge point such as 0.0, where
    kinks and jumps sit) that coordinate's difference is skipped."""
    f = load(source, folder)
    left = V.copy()
    value = f(x, y, left)                # what Python returns, and leaves in v
    jitted = {backend: srcgrad.jit(f, backend=backend) for backend in ("llvm", "python")}
    for backend in ("llvm", "python"):
        w = V.copy()
        assert _near(jitted[backend](x, y, w), value), source
        _same_arrays(w, left, source, f"jit, backend={backend}")
    if "scale" in inspect.signature(f).parameters:       # a default value, and keywords
        for backend in ("llvm", "python"):
            w, wp = V.copy(), V.copy()
            got = jitted[backend](x, y, v=w, scale=0.5)
            assert _near(got, f(x, y, v=wp, scale=0.5)), source
            _same_arrays(w, wp, source, f"jit with keywords, backend={backend}")
    try:
        w = V.copy()
        native_grad = srcgrad.grad(f, wrt=(0, 1, 2))
        gx, gy, gv = native_grad(x, y, w)
    except (srcgrad.UnsupportedSyntaxError, srcgrad.TypingError) as e:
        if "cannot differentiate this yet" in str(e) or _not_twice(e):      # a documented limitation
            validate(f, (x, y, V.copy()), derivatives=False)     # the passes on the primal IR still
            assume(False)
        raise
    _same_arrays(w, left, source, "grad")
    v = V.copy()
    # 1. the two backends compute the same numbers
    python_grad = srcgrad.grad(f, wrt=(0, 1, 2), backend="python")
    px, py, pv = python_grad(x, y, v.copy())
    assert _near(gx, px, abs_=1e-13) and _near(gy, py, abs_=1e-13), source
    np.testing.assert_allclose(gv, pv, rtol=1e-12, atol=1e-13, err_msg=source)
    qx, qy, qv = quick_tier(native_grad, (x, y, v.copy()))
    assert _near(qx, px, abs_=1e-13) and _near(qy, py, abs_=1e-13), f"quick tier\n{source}"
    np.testing.assert_allclose(qv, pv, rtol=1e-12, atol=1e-13, err_msg=f"quick tier\n{source}")
    # 2. finite differences
    at_edge = x in _EDGES or y in _EDGES
    # zero_points' math.sqrt((a - a) ** 2.0) and math.sqrt(a * a): sqrt's infinite slope at 0
    # times a zero derivative is NaN wherever a - a or a is 0, as in PyTorch
    infinite_slope = _INFINITE_SLOPE in source
    eps = 1e-6
    for i, g in enumerate([gx, gy] + list(gv)):
        if math.isnan(g) and (at_edge or infinite_slope):
            continue        # sqrt(a * a) at a = 0: an infinite derivative times 0 is NaN, as in PyTorch
        if at_edge and ("!= 0.0 else" in source or ") == 0.0 or" in source):
            continue        # (a % b if b != 0.0 else a) at b = sin(0.0), (c if y == 0.0 or ... else y * 0.5)
                            # at y = 0.0: the branch taken at an isolated point, which finite differences
                            # never see
        right = (_shifted(f, x, y, v, i, eps) - value) / eps
        left_ = (value - _shifted(f, x, y, v, i, -eps)) / eps
        if not abs(right - left_) < 1e-4 * (1 + abs(right)):      # at a branch boundary or a big kink
            if fuzzing and not at_edge:
                assume(False)
            continue
        # at a small kink (max(x, y) with x == y) the gradient is one of the one-sided derivatives
        assert any(g == pytest.approx(d, rel=1e-4, abs=1e-5) for d in ((right + left_) / 2, right, left_)), source
    # 3. forward and reverse mode agree: <vjp(1), t> = jvp(t)
    t = np.array([0.2, 0.1, -0.5])
    given = t.copy()
    _, ydot = srcgrad.jvp(f, (x, y, v.copy()), (0.3, -1.1, given))
    # the tangent array is the caller's: it stays as it was
    np.testing.assert_array_equal(given, t, err_msg=f"jvp changed the caller's tangent array\n{source}")
    reverse = 0.3 * gx - 1.1 * gy + float(np.dot(gv, t))
    # sqrt's infinite slope at 0 times a zero derivative is NaN in whichever mode meets it: jvp
    # multiplies it by the zero tangent of sqrt((buf[2]) * (buf[2])) where reverse mode sends
    # it into the adjoint of np.zeros, which goes nowhere (as PyTorch's forward and reverse modes)
    if not (infinite_slope and math.isnan(ydot) != math.isnan(reverse)):
        assert _near(ydot, reverse, rel=1e-9), source
    # 4. the eager mode, where the program runs on tensors
    eager = eager_gradient(source, folder, x, y)
    # at x == y, Python's max/min on tensors hand the whole gradient to one operand, while the
    # compiled max/min split it at a tie as torch.maximum does (ad/rules.py): no comparison there
    if eager is not None and x != y:
        compiled = [gx, gy] + list(gv)
        if infinite_slope:
            # a zero gradient times sqrt's infinite slope at 0: NaN in the eager mode (as PyTorch),
            # 0 in compiled reverse mode (docs/compiler.md); compare where both are numbers
            both = [(e, c) for e, c in zip(eager, compiled) if not (math.isnan(e) or math.isnan(c))]
            eager, compiled = [p[0] for p in both], [p[1] for p in both]     # (none left: all NaN in one)
        np.testing.assert_allclose(eager, compiled, rtol=1e-9, atol=1e-12, err_msg=source)
    # 5. second derivatives: jvp(grad(f)) against differences of the gradient
    # (at a feature's edge point, 0.0 say, a branch taken at that point alone: no differences)
    if second_order or second_order is None and _second_order_for(source):
        check_second_order(f, (x, y, V.copy()), (0.3, -1.1, np.array([0.2, 0.1, -0.5])), python_grad, source,
                           differences=not at_edge)
        check_vectorized(source, folder, x, y)
    # 6. x as a numpy scalar and as a 0-d array: the same numbers (or, for the 0-d array, a clear refusal)
    check_zero_d(f, x, y, value, (gx, gy, gv), source)
    # 7. checkpointing gives the taped gradient
    slots = checkpoint_slots(source)
    check_checkpointed(f, (x, y, V.copy()), (0, 1, 2), slots, python_grad, (px, py, pv), source)
    # 8. translation validation: every pass keeps what the IR does
    validate(f, (x, y, V.copy()), wrt=(0, 1, 2), python_grad=(px, py, pv), checkpoint=slots)
    return eager is not None


def check_zero_d(f, x, y, value, grads, source):
    """``f`` called with ``x`` as np.float64 and as a 0-d array (as numpy functions take them):
    the value and gradient it gives for the float, or, for the 0-d array only, a clear
    TypingError/UnsupportedSyntaxError (a 0-d array is an array to the compiler: a condition on
    it, say). The gradient in a 0-d array is a 0-d array."""
    for given in (np.float64(x), np.array(x)):
        try:
            got = srcgrad.jit(f)(given, y, V.copy())
            g = srcgrad.grad(f, wrt=(0, 1, 2))(given, y, V.copy())
        except (srcgrad.TypingError, srcgrad.UnsupportedSyntaxError) as e:
            assert isinstance(given, np.ndarray), f"{e}\n{source}"      # a numpy scalar is a number
            continue
        assert _near(float(got), value), f"{type(given).__name__} x: {got} where a float x gives {value}\n{source}"
        assert np.shape(g[0]) == np.shape(given), source
        assert _near(float(g[0]), grads[0], abs_=1e-13) and _near(g[1], grads[1], abs_=1e-13), \
            f"{type(given).__name__} x: gradient {g[:2]} where a float x gives {grads[:2]}\n{source}"
        np.testing.assert_allclose(g[2], grads[2], rtol=1e-12, atol=1e-13, err_msg=source)


# zero_points' math.sqrt((a - a) ** 2.0) and math.sqrt(a * a): an infinite slope at 0
_INFINITE_SLOPE = "math.sqrt(("


def _dot(a, b):
    return sum(float(np.sum(np.asarray(x) * np.asarray(y))) for x, y in zip(a, b))


def _not_twice(error):
    """Whether ``error`` is what srcgrad says where a derivative cannot be differentiated again
    yet (docs/compiler.md, "Composition and second derivatives")."""
    return "made by a first derivative" in str(error) or "cannot differentiate the derivative" in str(error)


def check_second_order(f, args, tangents, gradient, source, eps=1e-6, differences=True):
    """jvp(grad(f)) at ``args`` in the direction ``tangents``: the same gradient as ``gradient``
    (the python backend's, to rounding) and, where the gradient is smooth along the direction,
    the central difference of ``gradient`` (one-sided differences that disagree mean a kink or
    a branch boundary, where there is no second derivative to compare with)."""
    backend = gradient.backend
    try:
        grads, hv = srcgrad.jvp(srcgrad.grad(f, wrt=tuple(range(len(args))), backend=backend), _copies(args),
                                tangents, backend=backend)
    except (srcgrad.TypingError, srcgrad.UnsupportedSyntaxError) as e:
        if _not_twice(e):      # not differentiable twice yet (docs/compiler.md)
            return
        raise
    for a, b in zip(grads, gradient(*_copies(args))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=f"jvp(grad(f))'s gradient\n{source}")
    # H is symmetric: <H t, u> = <t, H u> for a second direction u
    u = tuple(np.cos(np.arange(np.size(t)) + 1.0).reshape(np.shape(t)) if isinstance(t, np.ndarray) else 0.8
              for t in tangents)
    _, hu = srcgrad.jvp(srcgrad.grad(f, wrt=tuple(range(len(args))), backend=backend), _copies(args), u,
                        backend=backend)
    left, right = _dot(hv, u), _dot(tangents, hu)
    if not (math.isnan(left) or math.isnan(right)):
        assert left == pytest.approx(right, rel=1e-8, abs=1e-10), f"<H t, u> against <t, H u>\n{source}"

    check_bridge(f, args, tangents, hv, source)

    def at(s):
        return [np.asarray(g, dtype=float) for g in gradient(*_copies(
            tuple(a + s * t for a, t in zip(args, tangents))))]
    if not isinstance(args[0], np.ndarray):
        _check_reverse_over_reverse(f, args, backend, source)
    if not differences:
        return
    mid, plus, minus = at(0.0), at(eps), at(-eps)
    # a jump of the gradient at the point itself (a tie of max(x, y), split in two) leaves the
    # one-sided differences equal, but its central difference grows as the step shrinks
    near_plus, near_minus = at(eps / 4), at(-eps / 4)
    for h, m, p, q, p4, q4 in zip(hv, mid, plus, minus, near_plus, near_minus):
        right, left = (p - m) / eps, (m - q) / eps
        if not np.all(np.isfinite(right)) or not np.allclose(right, left, rtol=1e-3, atol=1e-4):
            continue
        if not np.allclose((p - q) / (2 * eps), (p4 - q4) / (eps / 2), rtol=1e-3, atol=1e-3):
            continue
        if _INFINITE_SLOPE in source and np.any(np.isnan(h)):
            continue    # sqrt's infinite slope at 0 times a zero derivative: NaN, as in the first derivative
        np.testing.assert_allclose(h, (p - q) / (2 * eps), rtol=1e-4, atol=1e-4,
                                   err_msg=f"jvp(grad(f)) against differences of the gradient\n{source}")


def check_bridge(f, args, tangents, hv, source):
    """``srcgrad.jit(f)`` called on eager tensors (bridge.py): the gradient by
    ``autograd.grad(..., create_graph=True)`` through CompiledFunctionBackward, then H t by a
    second backward through CompiledVjpBackward, against ``hv`` = jvp(grad(f)) (which checked H t
    against differences of the gradient)."""
    import srcgrad as torch
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in _copies(args)]
    try:
        out = srcgrad.jit(f)(*tensors)
    except (srcgrad.TypingError, srcgrad.UnsupportedSyntaxError):
        return      # refused on scalar tensors' numbers as on floats (check_zero_d covers what is refused)
    grads = torch.autograd.grad(out, tensors, create_graph=True, allow_unused=True)
    dot = sum((g * torch.tensor(t, dtype=torch.float64)).sum() for g, t in zip(grads, tangents) if g is not None)
    if not isinstance(dot, torch.Tensor) or not dot.requires_grad:
        return      # f does not depend on its arguments' values
    got = torch.autograd.grad(dot, tensors, allow_unused=True)
    for g, h in zip(got, hv):
        g = np.zeros_like(h, dtype=float) if g is None else g.numpy()
        nan = np.isnan(g) | np.isnan(h)
        if _INFINITE_SLOPE in source:
            g, h = np.where(nan, 0.0, g), np.where(nan, 0.0, h)     # sqrt's infinite slope at 0 times 0
        np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-11,
                                   err_msg=f"H t by double backward through srcgrad.jit(f) on tensors\n{source}")


def _check_reverse_over_reverse(f, args, backend, source):
    """grad(grad(f, wrt=0), wrt=(0, 1)) is the first column's top of the Hessian, which
    jvp(grad(f)) in the direction e_0 gives too (rounding apart); where reverse mode cannot go
    through the gradient (a loop's tape, an undo log) the error says so."""
    try:
        d2 = srcgrad.grad(srcgrad.grad(f, wrt=0, backend=backend), wrt=(0, 1), backend=backend)(*_copies(args))
    except (srcgrad.TypingError, srcgrad.UnsupportedSyntaxError) as e:
        if _not_twice(e):
            return
        raise
    e0 = tuple(1.0 if k == 0 else np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 for k, a in enumerate(args))
    _, column = srcgrad.jvp(srcgrad.grad(f, wrt=(0, 1), backend=backend), _copies(args), e0, backend=backend)
    for a, b in zip(d2, column):
        # sqrt's infinite slope at 0 times a zero derivative is NaN in whichever mode meets it
        nan = math.isnan(a) or math.isnan(b)
        if not (nan and (_INFINITE_SLOPE in source or math.isnan(a) and math.isnan(b))):
            assert a == pytest.approx(b, rel=1e-9, abs=1e-11), f"grad(grad(f)) against jvp(grad(f))\n{source}"


def check_matrices(f, args, gradient, source):
    """hessian and jacobian, whose loops over basis vectors run the derivatives checked above:
    the Hessian blocks of the last two arguments (a vector and a float) times a direction are
    hvp's; the Jacobian of the (scalar) function is its gradient, in every mode."""
    try:
        (hbb, hbs), (hsb, hss) = srcgrad.hessian(f, wrt=(2, 3))(*_copies(args))
        hb, hs = srcgrad.hvp(f, wrt=(2, 3))(*_copies(args), (np.array([0.5, -1.0, 0.25]), 2.0))
    except (srcgrad.TypingError, srcgrad.UnsupportedSyntaxError) as e:
        if _not_twice(e):      # not differentiable twice yet (docs/compiler.md)
            return
        raise
    np.testing.assert_allclose(hbb @ np.array([0.5, -1.0, 0.25]) + hbs * 2.0, hb, rtol=1e-9, atol=1e-10,
                               err_msg=f"hessian against hvp\n{source}")
    assert hsb @ np.array([0.5, -1.0, 0.25]) + hss * 2.0 == pytest.approx(hs, rel=1e-9, abs=1e-10), source
    for mode in ("fwd", "rev", "auto"):      # auto: the mode chosen from a run of f (on copies)
        jac = srcgrad.jacobian(f, wrt=(0, 1, 2, 3), mode=mode)(*_copies(args))
        for a, b in zip(jac, gradient):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"jacobian, mode={mode}\n{source}")


def check_vectorized(source, folder, x, y):
    """srcgrad.vectorize of the program in x and y (v fixed) over a grid of points around (x, y),
    broadcast from a row and a column: each value plain Python's at that point, and the
    vectorized gradient the python backend's gradient there."""
    entry = [d.name for d in ast.parse(source).body if isinstance(d, ast.FunctionDef)][-1]
    f = load(source + f"\n\ndef vectorized_probe(x, y):\n    return {entry}(x, y, np.array({V.tolist()}))\n", folder)
    xs, ys = np.array([x, x + 0.125]), np.array([[y], [y - 0.25]])
    try:
        expected = np.array([[f(a, b) for a in xs] for b in ys[:, 0]], dtype=np.float64)
    except (ArithmeticError, ValueError):
        return              # the program raises at a point of the grid: the checks above cover raising
    np.testing.assert_allclose(srcgrad.vectorize(f)(xs, ys), expected, rtol=1e-12, atol=1e-13,
                               err_msg=f"vectorize against Python\n{source}")
    try:
        gx, gy = srcgrad.vectorize(srcgrad.grad(f, wrt=(0, 1)))(xs, ys)
    except (srcgrad.UnsupportedSyntaxError, srcgrad.TypingError) as e:
        if "cannot differentiate this yet" in str(e) or _not_twice(e):
            return
        raise
    pointwise = srcgrad.grad(f, wrt=(0, 1), backend="python")
    for r, b in enumerate(ys[:, 0]):
        for c, a in enumerate(xs):
            px, py = pointwise(float(a), float(b))
            assert _near(gx[r, c], px, rel=1e-10) and _near(gy[r, c], py, rel=1e-10), \
                f"vectorize(grad(f)) at ({a}, {b}): {gx[r, c]}, {gy[r, c]}; grad there: {px}, {py}\n{source}"
    for kernel, cpu in ((f, expected), (srcgrad.grad(f, wrt=(0, 1)), (gx, gy))):
        check_cuda_kernel(kernel, (xs, ys), cpu, source)
        check_in_blocks(kernel, (xs, ys), cpu, source)


def check_in_blocks(fun, args, expected, source):
    """``vectorize`` of a large call (threads.py, here with its threshold and block lowered to
    a row): on one thread and on three the same bits, and the whole call's numbers."""
    saved = threads.PARALLEL_MIN, threads.BLOCK, srcgrad.get_num_threads()
    threads.PARALLEL_MIN, threads.BLOCK = 1, 1
    try:
        got = []
        for n in (1, 3):
            srcgrad.set_num_threads(n)
            out = srcgrad.vectorize(fun)(*args)
            got.append(out if isinstance(out, tuple) else (out,))
    finally:
        threads.PARALLEL_MIN, threads.BLOCK = saved[:2]
        srcgrad.set_num_threads(saved[2])
    for one, three, whole in zip(*got, expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_array_equal(one, three, err_msg=f"vectorize in blocks, 1 and 3 threads\n{source}")
        np.testing.assert_allclose(one, whole, rtol=1e-12, atol=1e-13, err_msg=f"vectorize in blocks\n{source}")


def check_cuda_kernel(fun, args, expected, source):
    """``vectorize(fun, target="cuda")`` on the host stand-in (the same kernel compiled for the
    CPU): the CPU's values, or, where the function makes arrays per element (most fuzz programs
    read their array ``v``), the clear error naming that line, never a crash or an abort."""
    with use_device(HostDevice(threads=3)):
        try:
            got = srcgrad.vectorize(fun, target="cuda")(*args)
        except srcgrad.UnsupportedSyntaxError as e:
            assert "a GPU kernel maps a function of numbers" in str(e) and "line" in str(e), f"{e}\n{source}"
            return
    for g, w in zip(got if isinstance(got, tuple) else [got], expected if isinstance(expected, tuple) else [expected]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13, err_msg=f"vectorize(target='cuda')\n{source}")


def checkpoint_slots(source):
    """A number of snapshots for ``checkpoint=``, 1 to 4, drawn from the program's text."""
    return 1 + zlib.crc32(source.encode()) % 4


def check_checkpointed(f, args, wrt, slots, plain, taped, source):
    """``grad(f, checkpoint=slots)`` gives ``taped``, what ``plain`` (the gradient without it,
    already called) gave: to the bit, but to rounding where the taped gradient runs a reverse
    loop forwards (docs/compiler.md)."""
    backend = plain.backend
    try:
        g = srcgrad.grad(f, wrt=wrt, checkpoint=slots, backend=backend)
        got = g(*_copies(args))
    except srcgrad.UnsupportedSyntaxError as e:
        if "checkpoint=" in str(e):         # a write into an array a loop replaces: refused (docs/compiler.md)
            return
        raise
    exact = not any(op.attrs.get("counted_up") for op in walk_ops(plain._spec().code_ir.body))
    # libmvec (docs/compiler.md): a loop's element may meet a vector lane in one gradient and the
    # scalar remainder in the other, where the loop was compiled again in another context
    exact &= backend == "python" or not any("@_ZGV" in c.llvm_ir for c in (plain, g))
    for a, b in zip(got, taped):
        if exact:
            assert same(np.asarray(a), np.asarray(b), signed_zeros=False), \
                f"checkpoint={slots}, backend={backend}: {a} against {b} without it\n{source}"
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=f"checkpoint={slots}\n{source}")


def check_array_program(source, folder, second_order=None):
    """A whole-array program: llvm against python, values and gradients (and second
    derivatives, on the programs ``_second_order_for`` draws, or as ``second_order`` says)."""
    f = load(source, folder)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(5) * 0.5, rng.standard_normal(3) * 0.5, 0.7)
    left = _copies(args)
    expected = f(*left)                 # what Python returns, and leaves in the argument arrays
    for backend in ("llvm", "python"):
        given = _copies(args)
        assert srcgrad.jit(f, backend=backend)(*given) == pytest.approx(expected, rel=1e-11), source
        for a, b in zip(given[:3], left[:3]):
            _same_arrays(a, b, source, f"jit, backend={backend}")
    given = _copies(args)
    native_grad = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="llvm")
    try:
        native = native_grad(*given)
    except srcgrad.UnsupportedSyntaxError as e:
        if "cannot differentiate this yet" in str(e):     # a documented limitation (a view read after a
            validate(f, _copies(args), derivatives=False)  # write through another name): the primal's passes
            assume(False)
        raise
    for a, b in zip(given[:3], left[:3]):
        _same_arrays(a, b, source, "grad")
    python = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="python")(*_copies(args))
    for a, b in zip(native, python):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=source)
    for a, b in zip(quick_tier(native_grad, _copies(args)), python):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"quick tier\n{source}")
    t = (np.linspace(-0.5, 0.5, 15).reshape(5, 3), np.linspace(0.3, -0.2, 5), np.array([0.1, -0.4, 0.2]), -0.6)
    if second_order or second_order is None and _second_order_for(source):
        try:
            check_second_order(f, args, t, native_grad, source)
            check_matrices(f, args, native, source)
        except TypeError as e:
            # a documented limitation (docs/compiler.md): squeeze() without axis= is compiled per
            # set of unit axes, so such a function is not transformed again
            if "squeezes an argument without axis=" not in str(e):
                raise
    slots = checkpoint_slots(source)
    check_checkpointed(f, args, (0, 1, 2, 3), slots, native_grad, native, source)
    validate(f, _copies(args), wrt=(0, 1, 2, 3), python_grad=python, checkpoint=slots)


def quick_tier(compiled, args):
    """What the quick tier of a large function (backends/llvm/tiers.py) computes for the
    specialisation ``compiled`` ran last, at ``args``."""
    spec = compiled.specialisation
    args = compiled.bind(args, {})              # with the defaults, as a call binds them
    run = compile_quick(spec.code_ir, compiled.boundscheck)
    return compiled.transform.results(compiled, spec, args, run(*leaves(args)))


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
