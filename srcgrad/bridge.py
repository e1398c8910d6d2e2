"""Compiled functions called on eager tensors (API.md §2): ``srcgrad.jit(f)(x)`` with srcgrad
Tensors runs the native code on the tensors' data and, where an input requires grad and grad
mode is on, records one node, ``CompiledFunctionBackward``, whose backward runs the compiled
vjp (numpy in, numpy out: no Python per element). Float32 tensors give float32 results.
Saved inputs are version-checked: changing one in place before ``backward()`` is PyTorch's
error. ``create_graph=True`` through the node, and other compiled objects (``grad(f)``...)
called on tensors that require grad, are clear errors for now.

Example:
    >>> f = srcgrad.jit(energy)
    >>> y = f(torch.tensor([0.1, 0.2], requires_grad=True))
    >>> y.grad_fn
    <CompiledFunctionBackward object at 0x...>
"""
import numpy as np

from .eager import grad_mode
from .eager.function import Function
from .eager.tensor import Tensor, _wrap


def has_tensor(args, kwargs):
    return any(isinstance(a, Tensor) for a in args) or any(isinstance(a, Tensor) for a in kwargs.values())


def call_on_tensors(compiled, args, kwargs):
    """``compiled(*args, **kwargs)`` where some arguments are Tensors."""
    args = compiled._bind(args, kwargs)
    needs = grad_mode.state.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if compiled.kind != "jit":
        if needs:
            raise RuntimeError(f"srcgrad.{compiled.kind}({compiled.fun.__name__}) was called on tensors that require "
                               "grad: the eager graph goes through srcgrad.jit functions only (their backward runs the "
                               "compiled vjp); call it on .detach()ed tensors, or compile the function with srcgrad.jit")
        return _to_tensors(compiled._call(tuple(_data(a) for a in args)), _float32(args))
    return CompiledFunction.apply(compiled, *args)


def _data(a):
    return a.detach().numpy() if isinstance(a, Tensor) else a


def _float32(args):
    return any(isinstance(a, Tensor) and a._data.dtype == np.float32 for a in args)


def _to_tensors(out, float32):
    if isinstance(out, tuple):
        return tuple(_to_tensors(o, float32) for o in out)
    arr = np.asarray(out)
    if float32 and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return _wrap(arr)


class CompiledFunction(Function):
    """One node of the eager graph for a call of a compiled function."""

    @staticmethod
    def forward(ctx, compiled, *args):
        arrays = tuple(_data(a) for a in args)
        # the vjp needs the inputs as they were: copies, since the call below may write into them
        ctx.compiled, ctx.arrays = compiled, tuple(a.copy() if isinstance(a, np.ndarray) else a for a in arrays)
        ctx.float32 = _float32(args)
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        out = compiled._call(arrays)
        return _to_tensors(out, ctx.float32)

    @staticmethod
    def backward(ctx, *grads):
        if grad_mode.state.enabled:
            raise RuntimeError("create_graph=True through a srcgrad.jit function (CompiledFunctionBackward) is not "
                               "supported yet: its backward runs compiled code, which the eager graph cannot see")
        ctx.saved_tensors       # PyTorch's error where a saved input was changed in place since
        from .api import vjp
        primals = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in ctx.arrays)
        _, pullback = vjp(ctx.compiled.fun, *primals, backend=None if ctx.compiled.backend == "auto"
                          else ctx.compiled.backend)
        cotangents = [g.detach().numpy().astype(np.float64) if g is not None else None for g in grads]
        got = pullback(*cotangents)
        got = got if isinstance(got, tuple) else (got,)
        out = [None]          # the compiled object itself
        for a, g in zip(ctx.arrays, got):
            if g is None:
                out.append(None)
                continue
            arr = np.asarray(g)
            if isinstance(a, np.ndarray) and a.dtype == np.float32:
                arr = arr.astype(np.float32)
            out.append(_wrap(arr))
        return tuple(out)


__all__ = ["has_tensor", "call_on_tensors", "CompiledFunction"]
