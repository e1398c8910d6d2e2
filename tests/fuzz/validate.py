"""Translation validation: the IR interpreter (srcgrad/ir/interpret.py) run on the IR before
and after each pass of ``optimize``, on the primal, the reverse-mode and the forward-mode IR,
on forward mode over the gradient (jvp(grad(f)), a second derivative) and over the vjp (the
eager bridge's second derivative).

A pass must not change what the IR computes: the results, the exception raised, and what is
left in the argument arrays must stay the same to the bit (the passes keep Python's order of
operations, so nothing is reassociated). The interpreted primal IR must also agree with
plain Python (the frontend's reading of the source; 1e-12, as numpy's and libm's elementary
functions may differ in the last bit), and the interpreted reverse IR's gradient with the
python backend's.

Example:
    >>> validate(f, (0.5, -1.0, np.array([0.4, -0.9, 1.3])), wrt=(0, 1, 2))
    AssertionError: translation validation: pass 'eliminate_dead_code' changed the reverse-mode IR ...
"""
import inspect
import math

import numpy as np

import srcgrad
from srcgrad.arguments import unit_axes as _unit_axes
from srcgrad.ad.checkpoint import Policy
from srcgrad.ad.forward import forward
from srcgrad.ad.reverse import reverse
from srcgrad.errors import SrcGradError, TypingError, UnsupportedSyntaxError
from srcgrad.frontend.lower import lower
from srcgrad.ir.interpret import clone, interpret
from srcgrad.ir.passes import optimize
from srcgrad.ir.types import is_float, type_of
from srcgrad.ir.vectorize import element_type, vectorize_function
from srcgrad.ir.verifier import IRError, verify


class Outcome:
    """What running a function did: its results or the exception's type, and the arguments after."""

    def __init__(self, run, args):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        self.value, self.error = None, None
        try:
            out = run(args)
            self.value = out if isinstance(out, tuple) else (out,)
        except Exception as e:          # the exception is part of what a program does
            self.error = e
        self.args = args

    def __repr__(self):
        if self.error is not None:
            what = f"raises {type(self.error).__name__}: {self.error}"
        else:
            what = f"returns {self.value!r}"
        arrays = [a for a in self.args if isinstance(a, np.ndarray)]
        return what + (f", leaves the argument arrays {arrays}" if arrays else "")


def same(a, b, rel=0.0, signed_zeros=True):
    """Whether two results are equal: to the bit (NaN equals NaN, -0.0 differs from 0.0 unless
    not ``signed_zeros``) with ``rel`` 0, else within ``rel`` (relative, with as much absolute
    slack near zero)."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b) and \
            all(same(x, y, rel, signed_zeros) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or (rel == 0 and a.dtype != b.dtype):
            return False
        if rel == 0:
            if a.dtype.kind != "f":
                return bool(np.array_equal(a, b))
            signs = np.signbit(a) == np.signbit(b) if signed_zeros else True
            return bool(np.all((a == b) & signs | (np.isnan(a) & np.isnan(b))))
        return bool(np.allclose(a, b, rtol=rel, atol=rel, equal_nan=True))
    if type(a) is not type(b) and rel == 0 and not (isinstance(a, float) and isinstance(b, float)):
        return False
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if rel == 0:
            return a == b and (not signed_zeros or math.copysign(1.0, a) == math.copysign(1.0, b))
        return a == b or abs(a - b) <= rel * max(1.0, abs(a), abs(b))
    return a == b


def same_outcome(a, b, rel=0.0, signed_zeros=True):
    if (a.error is None) != (b.error is None):
        return False
    if a.error is not None:
        return type(a.error) is type(b.error)
    return same(a.value, b.value, rel, signed_zeros) and same(a.args, b.args, rel, signed_zeros)


def _interpreted(ir):
    return lambda args: interpret(ir, args)


# Passes allowed to reassociate floating-point sums (DESIGN.md: moving results at rounding
# level only): a reverse sweep run forwards adds the adjoint contributions in the other order.
REASSOCIATING = {"run_accumulations_forward": 1e-12}


def check_passes(ir, args, stage):
    """Run ``optimize`` on ``ir`` (in place), interpreting it after each pass; an AssertionError
    names the first pass that changed the outcome, with the IR before and after it. Each pass is
    compared with the IR just before it: to the bit, or within REASSOCIATING's tolerance. In
    derivative code the sign of a zero may change: fold_constants drops ``0.0 + g`` where 0.0 is
    the zero an adjoint starts from (``-0.0 + 0.0`` is 0.0; a zero derivative's sign is no result)."""
    signed_zeros = stage == "primal"
    reference = Outcome(_interpreted(ir), args)
    last = [str(ir), reference]

    def after_pass(name, fn):
        before, expected = last
        try:
            verify(fn)
        except IRError as e:
            raise AssertionError(f"translation validation: pass '{name}' left malformed {stage} IR: {e}\n"
                                 f"IR before:\n{before}\nIR after:\n{fn}") from None
        got = Outcome(_interpreted(fn), args)
        if not same_outcome(expected, got, REASSOCIATING.get(name, 0.0), signed_zeros):
            raise AssertionError(f"translation validation: pass '{name}' changed what the {stage} IR does at "
                                 f"{_show(args)}\nbefore it: {expected}\nafter it:  {got}\n"
                                 f"IR before:\n{before}\nIR after:\n{fn}")
        last[:] = [str(fn), got]

    optimize(ir, after_pass)
    return reference


def _show(args):
    return "(" + ", ".join(repr(a) for a in args) + ")"


def _tangent(a):
    if isinstance(a, np.ndarray):
        return np.linspace(0.3, -0.4, a.size).reshape(a.shape)
    return 0.7


def _validate_checkpointed(primal, args, wrt, slots, taped):
    """The checkpointed reverse-mode IR through the passes, and its results the taped IR's."""
    try:
        ir = verify(reverse(clone(primal), wrt, with_value=True, checkpoint=Policy(slots=slots)))
    except UnsupportedSyntaxError as e:
        if "checkpoint=" in str(e):         # a write into an array a loop replaces (docs/compiler.md)
            return
        raise
    got = check_passes(ir, args, "checkpointed reverse-mode")
    if not same_outcome(got, taped, signed_zeros=False):
        raise AssertionError(f"checkpoint={slots}: the interpreted reverse-mode IR does not give the taped one's "
                             f"results at {_show(args)}\ncheckpointed: {got}\ntaped: {taped}\nIR:\n{ir}")


def validate(fn, args, wrt=None, plain_python=True, python_grad=None, derivatives=True, checkpoint=None):
    """Translation validation of ``fn`` at ``args`` (see the module's doc): the primal IR, the
    reverse-mode IR for ``wrt`` (argument indices; None skips it) and, with ``derivatives``,
    the forward-mode IR. With ``checkpoint`` (a number of snapshots), the checkpointed
    reverse-mode IR too, whose results must be the taped one's to the bit (both before the
    passes, which may run a taped reverse loop forwards).
    ``python_grad``: the python backend's gradient at ``args`` where the caller has it already.
    Returns the interpreted primal's Outcome."""
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()          # the compiled function takes the defaults as arguments too
    args = tuple(bound.args)
    types = [type_of(a) for a in args]
    # specialised on the arguments' axes of size 1 too, as api.py does for x.squeeze()
    primal = verify(lower(fn, types, unit_axes=_unit_axes(args)))
    # the IR as the frontend wrote it means what the Python source does
    ref = Outcome(_interpreted(clone(primal)), args)
    if plain_python:
        python = Outcome(lambda a: fn(*a), args)
        if not same_outcome(python, ref, rel=1e-12):
            raise AssertionError(f"the IR of {fn.__name__} does not do what Python does at {_show(args)}\n"
                                 f"Python: {python}\nthe IR: {ref}\nIR:\n{primal}")
    check_passes(primal, args, "primal")
    if ref.error is not None:
        return ref
    floats = [k for k, t in enumerate(types) if is_float(t)]
    if wrt is not None:
        wrt = [wrt] if isinstance(wrt, int) else list(wrt)
        adjoint = verify(reverse(clone(primal), wrt, with_value=True))
        rev = check_passes(adjoint, args, "reverse-mode")
        if not same(rev.value[0], ref.value[0]) or not same(rev.args, ref.args):
            raise AssertionError(f"the reverse-mode IR's value is not the primal's at {_show(args)}\n"
                                 f"primal: {ref}\nreverse mode: {rev}\nIR:\n{adjoint}")
        expected = Outcome(lambda a: python_grad if python_grad is not None else
                           srcgrad.grad(fn, wrt=tuple(wrt), backend="python")(*a), args)
        if expected.error is not None or not same(tuple(np.asarray(g, dtype=np.float64) for g in rev.value[1:]),
                    tuple(np.asarray(g, dtype=np.float64) for g in expected.value), rel=1e-12):
            raise AssertionError(f"the interpreted reverse-mode IR's gradient is not the python backend's at "
                                 f"{_show(args)}\ninterpreted: {rev}\npython backend: {expected}\nIR:\n{adjoint}")
        if checkpoint is not None:
            _validate_checkpointed(primal, args, wrt, checkpoint, rev)
    if derivatives and floats and all(is_float(v.type) for v in primal.body.ops[-1].operands):
        try:
            tangents_ir = verify(forward(clone(primal)))
        except SrcGradError:        # what forward mode refuses (a custom_vjp inside, say)
            return ref
        tangents = tuple(_tangent(args[k]) for k in floats)
        check_passes(tangents_ir, args + tangents, "forward-mode")
        if wrt is not None:
            _validate_second_order(primal, args, wrt, tangents)
            _validate_forward_over_vjp(primal, args, floats, ref.value, tangents)
    return ref


def _validate_forward_over_vjp(primal, args, floats, outputs, tangents):
    """The eager bridge's second derivative (api.py's "vjp_jvp": forward mode over the
    optimised vjp, with tangents for the float arguments; bridge.py) through the passes."""
    vjp = verify(optimize(verify(reverse(clone(primal), floats, cotangents=True)), keep_errors=False))
    try:
        second = verify(forward(vjp, floats))
    except (TypingError, UnsupportedSyntaxError) as e:
        if "made by a first derivative" in str(e) or "cannot differentiate the derivative" in str(e):
            return
        raise
    cotangents = tuple(_tangent(o) for o in outputs)
    check_passes(second, args + cotangents + tangents, "forward-over-vjp")


def _validate_second_order(primal, args, wrt, tangents):
    """jvp(grad(f))'s IR (forward mode over the optimised gradient, as api.py builds it) through
    the passes; what cannot be differentiated twice yet is a clear TypingError, skipped here."""
    gradient = verify(optimize(verify(reverse(clone(primal), wrt, with_value=False)), keep_errors=False))
    try:
        second = verify(forward(gradient))
    except (TypingError, UnsupportedSyntaxError) as e:
        # ad/second_order.py: NO_TANGENT; mutation.py: a read the check cannot prove current
        if "made by a first derivative" in str(e) or "cannot differentiate the derivative" in str(e):
            return
        raise
    check_passes(second, args + tangents, "forward-over-reverse")
    _validate_reverse_over_reverse(gradient, args, wrt)


def _validate_reverse_over_reverse(gradient, args, wrt):
    """Reverse mode over the gradient's IR (vjp(grad(f)), as grad(grad(f)) builds it, through
    the gradient's tapes: ad/tape_rules.py) through the passes."""
    try:
        second = verify(reverse(clone(gradient), list(wrt), cotangents=True))
    except (TypingError, UnsupportedSyntaxError) as e:
        if "made by a first derivative" in str(e) or "cannot differentiate the derivative" in str(e):
            return
        raise
    check_passes(second, args + tuple(_tangent(args[k]) for k in wrt), "reverse-over-reverse")


def validate_vectorized(fn, args):
    """vectorize(fn)'s IR (ir/vectorize.py around the optimised IR of ``fn`` for the elements'
    types) through the passes, and its interpreted results numpy.vectorize's of plain Python."""
    types = [type_of(a) for a in args]
    scalar = verify(optimize(verify(lower(fn, [element_type(t) for t in types]))))
    ir = verify(vectorize_function(scalar, types, fn.__name__))
    got = check_passes(ir, args, "vectorized")
    expected = Outcome(lambda a: np.vectorize(fn)(*a), args)
    if not same_outcome(expected, got, rel=1e-12):
        raise AssertionError(f"vectorize({fn.__name__}): the interpreted IR does not do what numpy.vectorize of "
                             f"Python does at {_show(args)}\nnumpy.vectorize: {expected}\nthe IR: {got}\nIR:\n{ir}")
    return got
