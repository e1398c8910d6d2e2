"""Compiled functions called on eager tensors (API.md §2): ``srcgrad.jit(f)(x)`` with srcgrad
Tensors runs the native code on the tensors' data and, where an input requires grad and grad
mode is on, records one node, ``CompiledFunctionBackward``, whose backward runs the compiled
vjp (numpy in, numpy out: no Python per element). Float32 tensors give float32 results.
Saved inputs are version-checked: changing one in place before ``backward()`` is PyTorch's
error. With ``create_graph=True`` the node's backward records ``CompiledVjpBackward``, whose
own backward is forward mode over the compiled vjp (second derivatives: ``gradgradcheck``,
Hessian-vector products, gradient penalties); a third derivative through it, and other
compiled objects (``grad(f)``...) called on tensors that require grad, are clear errors.

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> import srcgrad as torch
    >>> def energy(x):
    ...     return np.sum(x * x)
    >>> f = srcgrad.jit(energy)
    >>> y = f(torch.tensor([0.1, 0.2], requires_grad=True))
    >>> y.grad_fn
    <torch.autograd.function.CompiledFunctionBackward object at 0x...>
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> f(x).backward()                  # the compiled vjp
    >>> x.grad
    tensor([2., 4.])
"""
import numpy as np

from .arguments import like
from .eager import grad_mode
from .eager.function import Function
from .eager.tensor import Tensor, wrap
from .ir.types import is_float, type_of
from .transforms import pullback_at
from .trees import leaves_of


def has_tensor(args, kwargs):
    return any(isinstance(a, Tensor) for a in args) or any(isinstance(a, Tensor) for a in kwargs.values())


def call_on_tensors(compiled, args, kwargs):
    """``compiled(*args, **kwargs)`` where some arguments are Tensors."""
    args = compiled.bind(args, kwargs)
    needs = grad_mode.state.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if compiled.kind != "jit":
        if needs:
            raise RuntimeError(f"srcgrad.{compiled.kind}({compiled.fun.__name__}) was called on tensors that require "
                               "grad: the eager graph goes through srcgrad.jit functions only (their backward runs the "
                               "compiled vjp); call it on .detach()ed tensors, or compile the function with srcgrad.jit")
        return _to_tensors(compiled.call_bound(tuple(_data(a) for a in args)), _float32(args))
    return CompiledFunction.apply(compiled, *args)


def _data(a):
    """A tensor's data as compiled code takes it: its array, or its number for a 0-d tensor
    (a condition on a scalar tensor, ``if x > 0:``, is a condition on a number)."""
    if not isinstance(a, Tensor):
        return a
    arr = a.detach().numpy()
    return arr.item() if arr.ndim == 0 else arr


def _float32(args):
    return any(isinstance(a, Tensor) and a._data.dtype == np.float32 for a in args)


def _to_tensors(out, float32):
    if isinstance(out, tuple):
        return tuple(_to_tensors(o, float32) for o in out)
    arr = np.asarray(out)
    if float32 and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return wrap(arr)


class CompiledFunction(Function):
    """One node of the eager graph for a call of a compiled function."""

    @staticmethod
    def forward(ctx, compiled, *args):
        arrays = tuple(_data(a) for a in args)
        # the vjp needs the inputs as they were: copies, since the call below may write into them
        ctx.compiled, ctx.arrays = compiled, _copies(arrays)
        ctx.positions = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.dtypes = [a._data.dtype if isinstance(a, Tensor) else None for a in args]
        ctx.save_for_backward(*[args[k] for k in ctx.positions])
        out = compiled.call_bound(arrays)
        ctx.outputs = leaves_of(out)
        return _to_tensors(out, _float32(args))

    @staticmethod
    def backward(ctx, *grads):
        tensors = ctx.saved_tensors       # PyTorch's error where a saved input was changed in place since
        if not grad_mode.state.enabled:
            got = _vector_jacobian(ctx.compiled, ctx.arrays, ctx.dtypes, [g.detach().numpy() for g in grads])
            return (None,) + tuple(wrap(g) if g is not None else None for g in got)
        # create_graph=True: the vjp is itself a node, so that it can be differentiated again
        inputs = list(ctx.arrays)
        for k, t in zip(ctx.positions, tensors):
            inputs[k] = t
        out = CompiledVjp.apply(ctx.compiled, (ctx.arrays, ctx.dtypes, ctx.outputs), *inputs, *grads)
        return (None,) + (out if isinstance(out, tuple) else (out,))


class CompiledVjp(Function):
    """``create_graph=True`` through a compiled call: the vector-Jacobian product ``J(x)^T ct`` as
    a node of the graph, a function of the call's inputs ``x`` and the cotangents ``ct``. Its
    backward, for directions ``w`` (one per input), is one compiled call of forward mode over
    the compiled vjp: d/dct <w, J^T ct> = J w, and d/dx <w, J^T ct> = H w, H the Hessian of
    <ct, f> (symmetric). A third derivative through it is a clear error."""

    @staticmethod
    def forward(ctx, compiled, call, *inputs_and_cotangents):
        arrays, dtypes, outputs = call           # CompiledFunction's record of the call
        n = len(arrays)
        inputs, cotangents = inputs_and_cotangents[:n], inputs_and_cotangents[n:]
        ctx.compiled, ctx.arrays, ctx.dtypes, ctx.outputs = compiled, arrays, dtypes, outputs
        ctx.cotangents = [c.detach().numpy() for c in cotangents]
        ctx.positions = {k for k, a in enumerate(inputs_and_cotangents) if isinstance(a, Tensor)}
        ctx.save_for_backward(*[a for a in inputs_and_cotangents if isinstance(a, Tensor)])
        got = _vector_jacobian(compiled, arrays, dtypes, ctx.cotangents)
        return tuple(wrap(g) if g is not None and isinstance(a, Tensor) else None for g, a in zip(got, inputs))

    @staticmethod
    def backward(ctx, *ws):
        inputs = ctx.saved_tensors      # PyTorch's error where a saved input was changed in place since
        grads = CompiledVjp._second(ctx, ws)
        if grad_mode.state.enabled:
            # create_graph=True once more: the results are right, and differentiating them again
            # is the error (PyTorch's once_differentiable), raised only if someone does
            why = (f"a third derivative through a srcgrad.jit function ({ctx.compiled.fun.__name__}) is not "
                   "supported: its second derivative (forward mode over the compiled vjp) runs compiled code, "
                   "which the eager graph cannot see")
            grads = tuple(DelayedError.apply(why, g, *inputs) if g is not None else None for g in grads)
        return grads

    @staticmethod
    def _second(ctx, ws):
        n, arrays = len(ctx.arrays), _copies(ctx.arrays)
        # a direction for every float leaf: w where the input is a tensor, 0 for the other arguments
        directions, owner = [], []
        for k, a in enumerate(arrays):
            w = ws[k] if k in ctx.positions and ws[k] is not None else None
            for leaf in leaves_of(a):
                if is_float(type_of(leaf)):
                    directions.append(like(w.detach().numpy() if w is not None else np.zeros_like(leaf), leaf))
                    owner.append(k if w is not None else None)
        cts = [like(c, o) for c, o in zip(ctx.cotangents, ctx.outputs)]
        second = ctx.compiled.sibling("vjp_jvp")
        res = second.call_with_extra(arrays, cts + directions)
        res = res if isinstance(res, tuple) else (res,)
        n_out, n_float = len(cts), len(directions)
        jw, hw = res[n_out + n_float:2 * n_out + n_float], res[2 * n_out + n_float:]
        grads = [None] * n
        for k, h in zip(owner, hw):
            if k is not None:
                grads[k] = wrap(_cast(h, ctx.dtypes[k]))
        ct_grads = [wrap(_cast(j, c.dtype)) if n + i in ctx.positions else None
                    for i, (j, c) in enumerate(zip(jw, ctx.cotangents))]
        return (None, None) + tuple(grads) + tuple(ct_grads)


class DelayedError(Function):
    """The identity on ``g``, whose backward raises ``why``: a gradient that is right but cannot
    be differentiated again. ``inputs`` are what ``g`` was computed from: it requires grad where
    they do."""

    @staticmethod
    def forward(ctx, why, g, *inputs):
        ctx.why = why
        return g.detach()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ctx.why)


def _copies(arrays):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in arrays)


def _cast(g, dtype):
    """A derivative as an array of a tensor's float ``dtype`` (float32 inputs get float32 gradients)."""
    return np.asarray(g, dtype=dtype if dtype is not None and dtype.kind == "f" else None)


def _vector_jacobian(compiled, arrays, dtypes, cotangents):
    """The compiled vjp of ``compiled`` at ``arrays`` (not changed) for the output cotangents:
    one array per argument (of the argument tensor's dtype), None for one that is not a float."""
    _, pullback = pullback_at(compiled.sibling("vjp"), _copies(arrays))
    got = pullback(*[np.asarray(c, dtype=np.float64) for c in cotangents])
    got = got if isinstance(got, tuple) else (got,)
    return [_cast(g, d) if g is not None else None for d, g in zip(dtypes, got)]


__all__ = ["has_tensor", "call_on_tensors", "CompiledFunction", "CompiledVjp"]
