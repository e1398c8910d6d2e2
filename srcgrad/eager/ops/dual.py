"""The vocabulary of derivative rules: each function works on numpy arrays and on Tensors.

The engine hands rules plain arrays for an ordinary ``backward()`` — the fast path, no graph
is recorded — and Tensors under ``create_graph=True``, where the same rule, running through
Tensor ops, records the backward pass for higher-order gradients. So every rule is written
once, with operators (``g * y``) and the functions below (``dual.cos(x)``).

Example:
    >>> import numpy as np
    >>> sum_to(np.ones((2, 3)), (3,))
    array([2., 2., 2.])
"""
import numpy as np

from ..tensor import Tensor, wrap

# On Tensors the functions below call Tensor methods (``g.sum()``), except for these ops, which
# PyTorch has as functions only: ``where`` (ops/pointwise.py), ``index_put``, ``cat`` and ``stack``
# (ops/shape.py). Those modules' rules use this one, so it cannot import them: methods.py, which
# gathers the ops and binds the Tensor methods, puts them here too.
TENSOR_OPS = {}


def is_tensor(x):
    return isinstance(x, Tensor)


def data(x):
    """The numpy values of an array or a Tensor."""
    return x._data if isinstance(x, Tensor) else x


def shape(x):
    return x._data.shape if isinstance(x, Tensor) else np.shape(x)


def sum_to(g, shape):
    """Reduce a broadcast gradient ``g`` back to ``shape`` (the input's shape)."""
    gshape = g._data.shape if isinstance(g, Tensor) else g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    if isinstance(g, Tensor):
        if dims:
            g = g.sum(dims, keepdim=True)
        return g.reshape(shape) if lead else g
    if dims:
        g = np.asarray(g).sum(axis=dims, keepdims=True)
    return g.reshape(shape) if lead else g


def expand(g, shape):
    return g.expand(shape) if isinstance(g, Tensor) else np.broadcast_to(g, shape)


def reshape(g, shape):
    return g.reshape(shape) if isinstance(g, Tensor) else np.reshape(g, shape)


def sum(g, dims=None, keepdim=False):
    if isinstance(g, Tensor):
        return g.sum(dims, keepdim=keepdim) if dims is not None else g.sum()
    return np.asarray(g).sum(axis=dims, keepdims=keepdim)


def mean(x, dims=None, keepdim=False):
    if isinstance(x, Tensor):
        return x.mean(dims, keepdim=keepdim) if dims is not None else x.mean()
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=x.dtype)


def _unary(np_fn, method):
    def fn(x):
        return getattr(x, method)() if isinstance(x, Tensor) else np_fn(x)
    fn.__name__ = method
    return fn


exp = _unary(np.exp, "exp")
log = _unary(np.log, "log")
sin = _unary(np.sin, "sin")
cos = _unary(np.cos, "cos")
sinh = _unary(np.sinh, "sinh")
cosh = _unary(np.cosh, "cosh")
sqrt = _unary(np.sqrt, "sqrt")
abs = _unary(np.abs, "abs")
sign = _unary(np.sign, "sign")
log1p = _unary(np.log1p, "log1p")


def sigmoid(x):
    if isinstance(x, Tensor):
        return x.sigmoid()
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def clamp_min(x, m):
    return x.clamp(min=m) if isinstance(x, Tensor) else np.maximum(x, m)


def where(cond, a, b):
    """``cond`` is a boolean numpy array; ``a``/``b`` arrays, Tensors or numbers."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return TENSOR_OPS["where"](wrap(cond), a, b)
    return np.where(cond, a, b)


def t(a):
    return a.t() if isinstance(a, Tensor) else a.T


def transpose(a, d0, d1):
    return a.transpose(d0, d1) if isinstance(a, Tensor) else np.swapaxes(a, d0, d1)


def permute(a, dims):
    return a.permute(dims) if isinstance(a, Tensor) else np.transpose(a, dims)


def squeeze(a, dim):
    return a.squeeze(dim) if isinstance(a, Tensor) else np.squeeze(a, axis=dim)


def unsqueeze(a, dim):
    return a.unsqueeze(dim) if isinstance(a, Tensor) else np.expand_dims(a, dim)


def matmul2d(a, b):
    """``a @ b`` for two numpy matrices, in the faster of two equivalent BLAS calls.

    OpenBLAS is markedly faster on an output with more rows than columns; when the result
    is wide, computing its transpose ``(bᵀ aᵀ)ᵀ`` gives the same numbers (each entry is the
    same dot product) up to 2.5× sooner — e.g. a linear layer on a small batch (see
    benchmarks/RESULTS.md).
    """
    if a.shape[0] < b.shape[1]:
        return (b.T @ a.T).T
    return a @ b


def mm(a, b):
    return a.mm(b) if isinstance(a, Tensor) or isinstance(b, Tensor) else matmul2d(a, b)


def mm_grad_rhs(a, g, rhs_transposed):
    """``a.T @ g`` — the gradient of ``b`` in ``a @ b`` — in ``b``'s memory order: transposed
    when ``b`` is a transposed view. For ``x @ W.t()`` that makes ``W.grad`` C-contiguous like
    ``W``, so the optimizer's ``W -= lr * W.grad`` is a plain sweep over memory."""
    if isinstance(a, Tensor) or isinstance(g, Tensor):
        return a.t().mm(g)
    return (g.T @ a).T if rhs_transposed else a.T @ g


def bmm(a, b):
    return a.bmm(b) if isinstance(a, Tensor) or isinstance(b, Tensor) else np.matmul(a, b)


def mv(a, v):
    return a.mv(v) if isinstance(a, Tensor) or isinstance(v, Tensor) else a @ v


def astype(g, dtype):
    """``dtype``: a srcgrad dtype."""
    return g.to(dtype) if isinstance(g, Tensor) else np.asarray(g).astype(dtype.np)


def constant(values, like):
    """A constant (non-differentiable) array in the form ``like`` is in."""
    return wrap(values) if isinstance(like, Tensor) else values


def embed(shape, idx, g, accumulate=False):
    """zeros(shape) with ``g`` written (or added) at ``idx``; differentiable in ``g``."""
    if isinstance(g, Tensor):
        return TENSOR_OPS["index_put"](zeros(shape, g), idx, g, accumulate=accumulate)
    out = np.zeros(shape, dtype=np.result_type(g))
    if accumulate:
        np.add.at(out, idx, g)
    else:
        out[idx] = g
    return out


def getitem(g, idx):
    return g[idx]


def cat(parts, dim):
    if any(isinstance(p, Tensor) for p in parts):
        return TENSOR_OPS["cat"]([p if isinstance(p, Tensor) else wrap(np.asarray(p)) for p in parts], dim)
    return np.concatenate(parts, axis=dim)


def stack(parts, dim):
    if any(isinstance(p, Tensor) for p in parts):
        return TENSOR_OPS["stack"]([p if isinstance(p, Tensor) else wrap(np.asarray(p)) for p in parts], dim)
    return np.stack(parts, axis=dim)


def zeros(shape, like):
    z = np.zeros(shape, dtype=like._data.dtype if isinstance(like, Tensor) else np.result_type(like))
    return wrap(z) if isinstance(like, Tensor) else z


def flip(g, dims):
    return g.flip(dims) if isinstance(g, Tensor) else np.flip(g, dims)


def cumsum(g, dim):
    return g.cumsum(dim) if isinstance(g, Tensor) else np.cumsum(g, axis=dim)
