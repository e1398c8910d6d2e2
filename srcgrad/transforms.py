"""The transformations as a table: ``TRANSFORMS[kind]`` is one record per kind of compiled
object (``grad``, ``value_and_grad``, ``jit``, ``vjp``, ``jvp``, ``hessian``, ``hvp``,
``jacobian``, ``vectorize``, and the eager bridge's ``vjp_jvp``), saying how its code is
built from the primal IR (``specialise``), how it is called (``call``), what a call returns
(``results``) and what it returns when another transformation takes it as its primal
(``primal_results``, grad of grad). srcgrad/compiled.py's ``Compiled`` does the rest, the
same for every kind; srcgrad/api.py's functions only make ``Compiled`` objects.

Example:
    >>> sorted(TRANSFORMS)[:4]
    ['grad', 'hessian', 'hvp', 'jacobian']
    >>> TRANSFORMS["grad"].number_result, TRANSFORMS["jit"].has_wrt
    (True, False)
"""
import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import threads
from .ad.compose import hessian_function, hvp_function, jacobian_function
from .ad.forward import forward
from .ad.reverse import reverse
from .arguments import (CONTAINERS, broadcast_check, float_params, gradient_like, gradient_like_or_none, leaves, like,
                        structure_of)
from .backends import llvm as llvm_backend
from .backends import python as python_backend
from .errors import TypingError, UnsupportedSyntaxError
from .ir.core import walk_ops
from .ir.types import NUMPY_DTYPES, ArrayType, TapeType, UndoLogType, is_float
from .ir.vectorize import element_type, vectorize_function
from .pipeline import pipeline
from .specialisation import Specialisation
from .trees import Tree, flatten


def _no_primal_results(c, types, spec):
    """The code's results are what the object returns: nothing to say."""


def _default_call(c, args, kwargs):
    return c.call_bound(c.bind(args, kwargs))


def _as_returned(c, spec, args, out):
    return spec.results(out)


@dataclass(frozen=True)
class Transform:
    """One kind of compiled object.

    - ``specialise(c, types, units)``: the ``Specialisation`` of ``c`` for argument types ``types``
      (``units``: the size-1 axes of the arguments, for a function that squeezes them);
    - ``call(c, args, kwargs)``: a call of ``c``; ``results(c, spec, args, out)``: what it returns,
      from the compiled code's flat results ``out``;
    - ``primal_results(c, types, spec)``: sets ``spec.code_ir.result_tree`` where the code's
      results come back in a container when another transformation inlines it;
    - ``has_wrt``: takes ``wrt=``; ``number_result``: the function must return one float (a 0-d
      array's number is taken); ``takes_extra``: called with cotangents, tangents or a direction
      after the arguments, so it cannot be another transformation's primal.
    """
    specialise: Callable
    call: Callable = _default_call
    results: Callable = _as_returned
    primal_results: Callable = _no_primal_results
    has_wrt: bool = True
    number_result: bool = False
    takes_extra: bool = False


def _from_primal(code):
    """A ``specialise`` that builds the code from the primal IR by ``code(c, ir, types)``, which
    returns the code's IR and the container its results come back in."""
    def specialise(c, types, units):
        ir = c.primal_ir(types, units)
        clock = time.perf_counter()
        code_ir, result_tree = code(c, ir, types)
        if code_ir is not ir:
            c._timings["derivative"] = time.perf_counter() - clock
        return c.build(ir, code_ir, result_tree)
    return specialise


# ---------------------------------------------------------------------- the code of each kind
def _jit_code(c, ir, types):
    return ir, ir.result_tree


def _gradient_code(c, ir, types):
    code_ir = reverse(ir, c.wrt_leaves(types), with_value=c.kind == "value_and_grad", checkpoint=c.checkpoint)
    return pipeline(code_ir, keep_errors=False), ir.result_tree


def _hvp_ir(ir, wrt):
    """(x, v) -> H v: forward mode over the gradient in ``wrt``."""
    gradient = pipeline(reverse(ir, wrt, with_value=False), keep_errors=False)
    return pipeline(hvp_function(gradient, wrt), keep_errors=False)


def _hvp_code(c, ir, types):
    return _hvp_ir(ir, c.wrt_leaves(types, containers=False)), ir.result_tree


def _hessian_code(c, ir, types):
    wrt = c.wrt_leaves(types, containers=False)
    code_ir = hessian_function(ir, _hvp_ir(ir, wrt), wrt, c.single)
    return pipeline(code_ir, keep_errors=False), code_ir.result_tree


def _jacobian_code(c, ir, types):
    results = ir.result_types
    if len(results) != 1 or not is_float(results[0]):
        raise TypingError(f"jacobian needs a function returning one float or float array; "
                          f"{c.fun.__name__} returns {', '.join(str(t) for t in results)}")
    code_ir = jacobian_function(ir, c.wrt_leaves(types, containers=False), c.mode, c.single)
    return pipeline(code_ir, keep_errors=False), code_ir.result_tree


def _jacobian_call(c, args, kwargs):
    """A jacobian called directly. With ``mode="auto"`` the mode is chosen here, for this call's
    sizes (forward mode where the inputs have no more elements than the output, as the compiled
    choice does), and only that mode is compiled: the one function with both modes and a
    run-time branch, which a jacobian compiled into other code keeps, costs both to compile.
    The output's size comes from running the function itself (jit), once per new set of array
    shapes and int arguments (what sizes depend on); a stale choice would be slower, never wrong."""
    args = c.bind(args, kwargs)
    if c.mode != "auto" or any(isinstance(a, CONTAINERS) for a in args):
        return c.call_bound(args)
    key = tuple(np.shape(a) if isinstance(a, np.ndarray) else a if isinstance(a, (int, np.integer)) else type(a)
                for a in args)
    mode = c.chosen_modes.get(key)
    if mode is None:
        # on copies: a function that writes into its argument must find it as the caller left it
        out = c.by_mode("jit").call_bound(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        inputs = sum(np.size(args[k]) for k in c.wrt)
        mode = c.chosen_modes[key] = "fwd" if isinstance(out, np.ndarray) and inputs <= out.size else "rev"
    try:
        chosen = c.by_mode(mode)
        result = chosen.call_bound(args)
    except TypingError:
        # the mode cannot go through this function (reverse mode through a gradient with a loop,
        # forward mode through a custom_vjp): the other one, as the compiled choice does
        chosen = c.by_mode("rev" if mode == "fwd" else "fwd")
        result = chosen.call_bound(args)
        c.chosen_modes[key] = chosen.mode
    c._last = chosen._last
    return result


def _vjp_code(c, ir, types):
    code_ir = reverse(ir, float_params(types), cotangents=True, checkpoint=c.checkpoint)
    return pipeline(code_ir, keep_errors=False), ir.result_tree


def _jvp_code(c, ir, types):
    return pipeline(forward(ir), keep_errors=False), ir.result_tree


def _vjp_jvp_code(c, ir, types):
    """The eager bridge's second derivative (bridge.py): forward mode over the vjp, with tangents
    for the float arguments: (args, cotangents, w) -> (f, J^T ct, J w, H_ct w)."""
    floats = float_params(types)
    pullback = pipeline(reverse(ir, floats, cotangents=True), keep_errors=False)
    return pipeline(forward(pullback, floats), keep_errors=False), ir.result_tree


# ---------------------------------------------------------------------- calls and results
def _gradients(c, spec, args, out):
    """grad: the gradient per ``wrt`` argument, like it; value_and_grad: (value, gradient)."""
    out = out if isinstance(out, tuple) else (out,)
    value, grads = (None, iter(out)) if c.kind == "grad" else (out[0], iter(out[1:]))
    per_arg = [gradient_like(args[i], grads) for i in c.wrt]
    g = per_arg[0] if c.single else tuple(per_arg)
    return (value, g) if c.kind == "value_and_grad" else g


def _gradient_primal_results(c, types, spec):
    for k in c.wrt:
        if isinstance(types[k], Tree):
            raise TypeError(f"a gradient with respect to a container argument ('{c.params[k]}') "
                            "cannot be transformed again yet; pass its leaves as separate arguments")
    grads = None if c.single else Tree(tuple, [None] * len(c.wrt))
    spec.code_ir.result_tree = grads if c.kind == "grad" else Tree(tuple, [spec.result_tree, grads])


def _extra_call(c, args, kwargs):
    """vjp and jvp objects (made by srcgrad.vjp, srcgrad.jvp): the arguments, then the flat
    cotangents or tangents."""
    n = len(c.params)
    return c.call_with_extra(args[:n], args[n:])


def _hvp_call(c, args, kwargs):
    """hvp(f)(*args, v): one direction per ``wrt`` argument (a tuple of them for a tuple ``wrt``)."""
    if kwargs or len(args) != len(c.params) + 1:
        raise TypeError(f"hvp of {c.fun.__name__} takes its {len(c.params)} arguments, then the "
                        f"direction v ({len(args)} given)")
    args, v = args[:-1], args[-1]
    vs = (v,) if c.single else tuple(v)
    if len(vs) != len(c.wrt):
        raise TypeError(f"hvp of {c.fun.__name__}: {len(c.wrt)} directions for wrt={tuple(c.wrt)}, "
                        f"got {len(vs)}")
    vs = [like(d, args[k]) for d, k in zip(vs, c.wrt)]
    out = c.call_with_extra(args, vs)
    out = out if isinstance(out, tuple) else (out,)
    hv = [like(h, args[k]) for h, k in zip(out, c.wrt)]
    return hv[0] if c.single else tuple(hv)


# ---------------------------------------------------------------------- vectorize
def first_allocation(fn):
    """The first op of an IR function that makes an array, a tape or an undo log (memory a GPU
    thread lacks), or None."""
    return next((op for op in walk_ops(fn.body)
                 if any(isinstance(r.type, (ArrayType, TapeType, UndoLogType)) for r in op.results)), None)


def _vectorize_specialise(c, types, units):
    """The function of numbers compiled for the arguments' element types, in a loop over
    their broadcast shape (ir/vectorize.py), or as a GPU kernel (target="cuda")."""
    for k, t in enumerate(types):
        if isinstance(t, Tree):
            raise TypingError(f"vectorize maps a function of numbers over arrays; argument "
                              f"'{c.params[k]}' is {t.words()}")
    elements = [element_type(t) for t in types]
    ir = c.primal_ir(elements)            # vectorize(grad(f)): the gradient, per element
    if c.target == "cuda":
        if first_allocation(ir) is not None and getattr(c.fun, "kind", None) in ("grad", "value_and_grad"):
            ir = c.fun.forward_gradient(elements)     # a kernel has no tapes: forward mode, per input
        return _kernel(c, ir, types)
    code_ir = pipeline(vectorize_function(ir, list(types), c.fun.__name__), keep_errors=False)
    spec = c.build(ir, code_ir, ir.result_tree)
    if any(isinstance(t, ArrayType) for t in types):
        spec.in_blocks = _once(lambda: c.build(ir, pipeline(vectorize_function(ir, list(types), c.fun.__name__,
                                                                              into=True), keep_errors=False), None))
    return spec


def _once(make):
    """``make()``'s result, made at the first call of what this returns (once across threads)."""
    lock, made = threading.Lock(), []

    def get():
        with lock:
            if not made:
                made.append(make())
        return made[0]
    return get


def _kernel(c, ir, types):
    from .backends.cuda.launch import Kernel, current_device      # the CUDA target loads only when used
    made = first_allocation(ir)
    if made is not None:
        raise UnsupportedSyntaxError(
            f"vectorize({c.fun.__name__}, target='cuda'): a GPU kernel maps a function of numbers and "
            f"cannot make arrays, tapes or logs per element; this line makes one ({made.prim})", made.loc,
            hint="compute with numbers only there, or use target='cpu'")
    kernel = Kernel(ir, list(types), c.boundscheck, cache=c.cache)
    name, params = c.fun.__name__, list(c.params)
    return Specialisation(ir, ir, python_backend.generate(ir)[0],
                          lambda *args: kernel.run(current_device(), args, name, params), "cuda",
                          kernel.llvm_ir, kernel.ptx)


def _vectorize_call(c, args, kwargs):
    args = c.bind(args, kwargs)
    spec = c.specialisation_for(args)
    if c.target == "cpu":             # the cuda launcher checks, for device arrays too
        shape = broadcast_check(c.fun.__name__, c.params, args)
        # a large call runs in blocks at every thread count, one thread too: the same blocks, so
        # the same bits however many threads there are (threads.py)
        if c.requested_backend != "python" and math.prod(shape) >= threads.PARALLEL_MIN \
                and max(shape, default=0) > 1:
            return _vectorize_in_blocks(spec, args, shape)
    return spec.results(spec.run(*leaves(args)))


def _vectorize_in_blocks(spec, args, shape):
    """The call in blocks of its first axis longer than 1, shared out among the threads: each
    block's part of the results filled by the code of ``vectorize_function(into=True)``
    (srcgrad/threads.py)."""
    code = spec.in_blocks()
    n = len(args)
    outs = [llvm_backend.empty(shape, NUMPY_DTYPES[p.type.dtype]) for p in code.code_ir.params[n:]]
    rank = len(shape)
    axis = next(a for a, length in enumerate(shape) if length > 1)
    # an argument is cut where it has the axis (numpy lines its axes up with the last ones) at its length
    cut = [isinstance(a, np.ndarray) and a.ndim >= rank - axis and a.shape[axis - (rank - a.ndim)] > 1
           for a in args]

    def part(a, lo, hi, ndim):
        return a[(slice(None),) * (axis - (rank - ndim)) + (slice(lo, hi),)]

    def work(lo, hi):
        code.run(*[part(a, lo, hi, a.ndim) if c else a for a, c in zip(args, cut)],
                 *[part(o, lo, hi, rank) for o in outs])
    if code.backend == "python":            # (llvm fell back: one thread, as the GIL would make it anyway)
        work(0, shape[axis])
    else:
        threads.run_blocks(work, shape[axis], max(1, threads.BLOCK // max(1, math.prod(shape[axis + 1:]))))
    return spec.results(outs[0] if len(outs) == 1 else tuple(outs))


TRANSFORMS = {
    "jit": Transform(_from_primal(_jit_code), has_wrt=False),
    "grad": Transform(_from_primal(_gradient_code), results=_gradients, primal_results=_gradient_primal_results,
                      number_result=True),
    "value_and_grad": Transform(_from_primal(_gradient_code), results=_gradients,
                                primal_results=_gradient_primal_results, number_result=True),
    "hvp": Transform(_from_primal(_hvp_code), call=_hvp_call, number_result=True, takes_extra=True),
    "hessian": Transform(_from_primal(_hessian_code), number_result=True),
    "jacobian": Transform(_from_primal(_jacobian_code), call=_jacobian_call),
    "vjp": Transform(_from_primal(_vjp_code), call=_extra_call, has_wrt=False, takes_extra=True),
    "jvp": Transform(_from_primal(_jvp_code), call=_extra_call, has_wrt=False, takes_extra=True),
    "vjp_jvp": Transform(_from_primal(_vjp_jvp_code), call=_extra_call, has_wrt=False, takes_extra=True),
    "vectorize": Transform(_vectorize_specialise, call=_vectorize_call, has_wrt=False),
}


# ---------------------------------------------------------------------- vjp and jvp at a point
def pullback_at(c, primals):
    """``srcgrad.vjp``'s result for the vjp object ``c`` at ``primals``: (outputs, pullback)."""
    given = len(primals)
    primals = c.bind(primals, {})        # parameters not given take their defaults
    out = c.sibling("jit")(*primals)
    tree = flatten(out)
    outs = tree.leaves() if isinstance(tree, Tree) else [out]

    def pullback(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        ct_tree = flatten(ct)
        if isinstance(tree, Tree):
            if not isinstance(ct_tree, Tree) or ct_tree.structure() != tree.structure():
                raise TypeError(f"pullback takes a cotangent of the outputs' structure ({tree.words()}), got "
                                f"{ct_tree.words() if isinstance(ct_tree, Tree) else type(ct).__name__}")
            cts = ct_tree.leaves()
        else:
            if len(cotangents) != 1:
                raise TypeError(f"pullback takes one cotangent per output (1), got {len(cotangents)}")
            cts = [ct]
        cts = [like(ct, o) for ct, o in zip(cts, outs)]
        res = c.call_with_extra(primals, cts)
        grads = iter(res[len(outs):])
        return tuple(gradient_like_or_none(primals[k], grads) for k in range(given))

    return out, Pullback(pullback, c)


class Pullback:
    """The pullback of ``vjp``: call it with the output cotangent(s); ``.ir`` and
    ``.adjoint_source`` show the compiled vector-Jacobian product."""

    def __init__(self, fn, compiled):
        self._fn, self._compiled = fn, compiled

    def __call__(self, *cotangents):
        return self._fn(*cotangents)

    @property
    def ir(self):
        return self._compiled.ir

    def ir_text(self, locs=False):
        return self._compiled.ir_text(locs)

    @property
    def adjoint_source(self):
        return self._compiled.adjoint_source


def tangents_at(c, primals, tangents):
    """``srcgrad.jvp``'s result for the jvp object ``c``: (outputs, output tangents)."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    given = len(primals)
    primals = c.bind(primals, {})        # parameters not given take their defaults, tangent 0
    tangents += tuple(np.zeros_like(p) if isinstance(p, np.ndarray) else 0.0 for p in primals[given:])
    for k, (p, t) in enumerate(zip(primals, tangents)):
        if structure_of(p) != structure_of(t):
            raise TypeError(f"jvp: the tangent of argument {k} has another structure than the argument")
    floats = float_params(c.signature(primals))
    flat, flat_tangents = leaves(primals), leaves(tangents)
    tans = [like(flat_tangents[k], flat[k]) for k in floats]
    res = c.call_with_extra(primals, tans)
    res = res if isinstance(res, tuple) else (res,)
    n = len(res) // 2
    outs, touts = res[:n], res[n:]
    touts = tuple(like(t, o) for t, o in zip(touts, outs))
    tree = c.specialisation.result_tree
    if tree is not None:
        return tree.rebuild(list(outs)), tree.rebuild(list(touts))
    return outs[0], touts[0]


__all__ = ["TRANSFORMS", "Transform", "Pullback", "first_allocation", "pullback_at", "tangents_at"]
