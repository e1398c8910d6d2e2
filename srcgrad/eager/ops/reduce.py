"""Reductions: sum, mean, max/min, norm, prod, var/std, and the non-differentiable ones.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, 3, requires_grad=True)
    >>> x.sum(dim=1).grad_fn
    <SumBackward1 object at 0x...>
"""
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..graph import Node, c_dims, c_int, define_saved
from ..tensor import Tensor, normalise_dim, wrap
from . import dual
from ._core import OUT, needs_grad, record

_max_result = namedtuple("max", ["values", "indices"])
_min_result = namedtuple("min", ["values", "indices"])


def _dims(dim, ndim):
    """A tuple of normalised dims, or None for 'all dims'."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        return tuple(sorted(normalise_dim(d, ndim) for d in dim))
    return (normalise_dim(dim, ndim),)


def _unsqueeze_to(g, shape, dims, keepdim):
    """Put back the reduced dims of ``g`` as size 1, ready to broadcast against ``shape``."""
    if dims is None or keepdim:
        return g if keepdim or len(dual.shape(g)) == len(shape) else dual.reshape(g, (1,) * len(shape))
    kept = tuple(1 if i in dims else s for i, s in enumerate(shape))
    return dual.reshape(g, kept)


class SumBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return dual.expand(g, self.shape)


class SumBackward1(Node):
    __slots__ = ("shape", "dims", "keepdim", "dim")     # dim: the argument as given

    def apply(self, g):
        return dual.expand(_unsqueeze_to(g, self.shape, self.dims, self.keepdim), self.shape)


def _acc_dtype(x, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype).np
    return np.int64 if x._data.dtype.kind in "biu" else None


def sum(x, dim=None, keepdim=False, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints)."""
    d = x._data
    dims = _dims(dim, d.ndim)
    out = np.sum(d, axis=dims, keepdims=keepdim, dtype=_acc_dtype(x, dtype))
    if not needs_grad(x):
        return wrap(out)
    if dim is None:
        t = record(out, SumBackward0, (x,))
        t.grad_fn.shape = d.shape
        return t
    t = record(out, SumBackward1, (x,))
    t.grad_fn.shape, t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.dim = d.shape, dims, keepdim, dim
    return t


def sum_to_size(x, *size):
    from ._core import sum_to
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return sum_to(x, tuple(size))


class MeanBackward0(Node):
    __slots__ = ("shape", "n")

    def apply(self, g):
        return dual.expand(g, self.shape) / self.n


class MeanBackward1(Node):
    __slots__ = ("shape", "dims", "keepdim", "n", "dim")

    def apply(self, g):
        return dual.expand(_unsqueeze_to(g, self.shape, self.dims, self.keepdim), self.shape) / self.n


def mean(x, dim=None, keepdim=False, dtype=None):
    """Mean of all elements, or over ``dim``."""
    d = x._data
    if d.dtype.kind not in "f" and dtype is None:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {x.dtype.name.capitalize() if x.dtype is not dtypes.int64 else 'Long'}")
    dims = _dims(dim, d.ndim)
    out = np.mean(d, axis=dims, keepdims=keepdim, dtype=_acc_dtype(x, dtype))
    if dtype is None:
        out = np.asarray(out, dtype=d.dtype)
    if not needs_grad(x):
        return wrap(out)
    n = d.size if dims is None else int(np.prod([d.shape[i] for i in dims]))
    if dim is None:
        t = record(out, MeanBackward0, (x,))
        t.grad_fn.shape, t.grad_fn.n = d.shape, n
        return t
    t = record(out, MeanBackward1, (x,))
    t.grad_fn.shape, t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.n, t.grad_fn.dim = d.shape, dims, keepdim, n, dim
    return t


class MaxBackward1(Node):     # max() over everything: ties share the gradient evenly
    __slots__ = ()

    def apply(self, g):
        x, y = self.saved()
        xd = dual.data(x)
        mask = (xd == dual.data(y)).astype(xd.dtype)
        return dual.constant(mask, g) * (g / float(mask.sum()))


class MinBackward1(MaxBackward1):
    __slots__ = ()


class MaxBackward0(Node):     # max(dim): the gradient goes to the index that won
    __slots__ = ("shape", "dim", "keepdim", "dim_arg")

    def apply(self, g):
        (indices,) = self.saved()
        indices = dual.data(indices)
        gk = g if self.keepdim else dual.unsqueeze(g, self.dim)
        idx = indices if self.keepdim else np.expand_dims(indices, self.dim)
        if not dual.is_tensor(gk):
            out = np.zeros(self.shape, dtype=np.result_type(gk))
            np.put_along_axis(out, idx, gk, axis=self.dim)
            return out
        return scatter_into_zeros(gk, self.shape, self.dim, idx)


class MinBackward0(MaxBackward0):
    __slots__ = ()


class _ScatterBackward(Node):
    __slots__ = ("dim", "index")

    def apply(self, g):
        if not dual.is_tensor(g):
            return np.take_along_axis(g, self.index, axis=self.dim)
        return gather(g, self.dim, wrap(self.index))


def scatter_into_zeros(src, shape, dim, index):
    """zeros(shape) with ``src`` placed at ``index`` along ``dim`` (differentiable in ``src``)."""
    out = np.zeros(shape, dtype=src._data.dtype)
    np.put_along_axis(out, index, src._data, axis=dim)
    if not needs_grad(src):
        return wrap(out)
    t = record(out, _ScatterBackward, (src,))
    t.grad_fn.dim, t.grad_fn.index = dim, index
    return t


class GatherBackward0(Node):
    __slots__ = ("shape", "dim", "dim_arg")

    def apply(self, g):
        _, index = self.saved()
        index = dual.data(index)
        # several gathers may read one element: their gradients add up
        grid = list(np.indices(index.shape, sparse=True))
        grid[self.dim] = index
        return dual.embed(self.shape, tuple(grid), g, accumulate=True)


def gather(x, dim, index):
    d = normalise_dim(dim, x._data.ndim)
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    out = np.take_along_axis(x._data, idx, axis=d)
    if not needs_grad(x):
        return wrap(out)
    t = record(out, GatherBackward0, (x,), saved=(x, index if isinstance(index, Tensor) else wrap(idx)))
    t.grad_fn.shape, t.grad_fn.dim, t.grad_fn.dim_arg = x._data.shape, d, dim
    return t


def _extreme(x, dim, keepdim, np_fn, arg_fn, full_cls, dim_cls, result):
    d = x._data
    if dim is None:
        if d.size == 0:
            raise RuntimeError(f"{np_fn.__name__}(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        out = np_fn(d)
        if not needs_grad(x):
            return wrap(out)
        return record(out, full_cls, (x,), saved=(x, OUT))
    if isinstance(dim, Tensor):      # max(a, b): the elementwise maximum
        from .pointwise import maximum, minimum
        return (maximum if np_fn is np.max else minimum)(x, dim)
    dm = normalise_dim(dim, d.ndim)
    idx = arg_fn(d, axis=dm, keepdims=keepdim)
    values = np.take_along_axis(d, idx if keepdim else np.expand_dims(idx, dm), axis=dm)
    if not keepdim:
        values = np.squeeze(values, axis=dm)
    indices = wrap(idx.astype(np.int64))
    if not needs_grad(x):
        return result(wrap(values), indices)
    t = record(values, dim_cls, (x,), saved=(indices,))
    t.grad_fn.shape, t.grad_fn.dim, t.grad_fn.keepdim, t.grad_fn.dim_arg = d.shape, dm, keepdim, dim
    return result(t, indices)


def max(x, dim=None, keepdim=False):
    """The largest element, or ``(values, indices)`` along ``dim``."""
    return _extreme(x, dim, keepdim, np.max, np.argmax, MaxBackward1, MaxBackward0, _max_result)


def min(x, dim=None, keepdim=False):
    return _extreme(x, dim, keepdim, np.min, np.argmin, MinBackward1, MinBackward0, _min_result)


def amax(x, dim=None, keepdim=False):
    if dim is None:
        return max(x)
    return max(x, dim, keepdim).values


def amin(x, dim=None, keepdim=False):
    if dim is None:
        return min(x)
    return min(x, dim, keepdim).values


def argmax(x, dim=None, keepdim=False):
    d = x._data
    if dim is None:
        return wrap(np.asarray(np.argmax(d), dtype=np.int64))
    return wrap(np.argmax(d, axis=normalise_dim(dim, d.ndim), keepdims=keepdim).astype(np.int64))


def argmin(x, dim=None, keepdim=False):
    d = x._data
    if dim is None:
        return wrap(np.asarray(np.argmin(d), dtype=np.int64))
    return wrap(np.argmin(d, axis=normalise_dim(dim, d.ndim), keepdims=keepdim).astype(np.int64))


class LinalgVectorNormBackward0(Node):
    __slots__ = ("dims", "keepdim", "p", "dim")

    def apply(self, g):
        x, y = self.saved()
        shape = dual.shape(x)
        yk = _unsqueeze_to(y, shape, self.dims, self.keepdim)
        gk = _unsqueeze_to(g, shape, self.dims, self.keepdim)
        p = self.p
        zero = dual.data(yk) == 0
        if p == 2:
            # the norm is not differentiable at 0; PyTorch uses the subgradient 0 there
            return gk * dual.where(zero, 0.0, x / dual.where(zero, 1.0, yk))
        if p == 1:
            return gk * dual.sign(x)
        safe = dual.where(zero, 1.0, yk)
        return gk * x * dual.abs(x) ** (p - 2) / safe ** (p - 1)


def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm (2 by default) of all elements, or along ``dim``."""
    if p == "fro" or p is None:
        p = 2
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.name.capitalize() if x.dtype is not dtypes.int64 else 'Long'}")
    dims = _dims(dim, d.ndim)
    if p == 2:
        out = np.sqrt(np.sum(d * d, axis=dims, keepdims=keepdim))
    elif p == float("inf"):
        out = np.max(np.abs(d), axis=dims, keepdims=keepdim)
    elif p == 1:
        out = np.sum(np.abs(d), axis=dims, keepdims=keepdim)
    else:
        out = np.sum(np.abs(d) ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
    out = np.asarray(out, dtype=d.dtype)
    if not needs_grad(x):
        return wrap(out)
    if p == float("inf"):
        raise NotImplementedError("srcgrad: the gradient of the infinity norm is not supported; use "
                                  "x.abs().max() instead")
    t = record(out, LinalgVectorNormBackward0, (x,), saved=(x, OUT))
    t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.p, t.grad_fn.dim = dims, keepdim, p, dim
    return t


class ProdBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        x, _ = self.saved()          # the result is saved (as in PyTorch) but not needed here
        d = dual.data(x)
        if dual.is_tensor(g):
            # create_graph: the product of the others, built from differentiable ops
            from .pointwise import where
            n = d.size
            others = where(wrap(np.eye(n, dtype=bool)), 1.0, x.reshape(1, n).expand(n, n)).prod(1)
            return g * others.reshape(d.shape)
        # product of all the other elements, exact even when some are zero
        flat = d.reshape(-1)
        left = np.concatenate(([1], np.cumprod(flat)[:-1])).astype(d.dtype)
        right = np.concatenate((np.cumprod(flat[::-1])[::-1][1:], [1])).astype(d.dtype)
        return g * (left * right).reshape(d.shape)


def prod(x, dim=None, keepdim=False, dtype=None):
    d = x._data
    if dim is not None:
        # along one dim: a product of slices keeps the gradient rule simple
        dm = normalise_dim(dim, d.ndim)
        parts = [x.select(dm, i) for i in range(d.shape[dm])]
        out = parts[0]
        for p in parts[1:]:
            out = out * p
        return out.unsqueeze(dm) if keepdim else out
    out = np.prod(d, dtype=_acc_dtype(x, dtype))
    if not needs_grad(x):
        return wrap(out)
    return record(out, ProdBackward0, (x,), saved=(x, OUT))


class VarBackward0(Node):
    __slots__ = ("dims", "keepdim", "n", "correction", "dim", "correction_arg")

    def apply(self, g):
        (x,) = self.saved()
        shape = dual.shape(x)
        mu = dual.mean(x, self.dims, keepdim=True)
        gk = _unsqueeze_to(g, shape, self.dims, self.keepdim)
        return gk * (x - mu) * (2.0 / (self.n - self.correction))


class StdBackward0(Node):
    __slots__ = ("dims", "keepdim", "n", "correction", "dim", "correction_arg")

    def apply(self, g):
        x, y = self.saved()
        shape = dual.shape(x)
        mu = dual.mean(x, self.dims, keepdim=True)
        gk = _unsqueeze_to(g, shape, self.dims, self.keepdim)
        yk = _unsqueeze_to(y, shape, self.dims, self.keepdim)
        return gk * (x - mu) / (yk * (self.n - self.correction))


def _correction_arg(dim, unbiased, correction):
    """The correction PyTorch's ``_saved_correction`` shows: None unless a correction, an
    ``unbiased`` flag or a ``dim`` was given (then it picked the overload that takes them)."""
    if correction is not None:
        return correction
    if unbiased is None and dim is None:
        return None
    return 1 if unbiased is None or unbiased else 0


def _variance(x, dim, unbiased, keepdim, correction):
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    d = x._data
    dims = _dims(dim, d.ndim)
    n = d.size if dims is None else int(np.prod([d.shape[i] for i in dims]))
    v = np.var(d, axis=dims, ddof=correction, keepdims=keepdim)
    return np.asarray(v, dtype=d.dtype), dims, n, correction


def var(x, dim=None, unbiased=None, keepdim=False, correction=None):
    """Variance (Bessel-corrected by default), of all elements or along ``dim``."""
    c, dims, n, correction_used = _variance(x, dim, unbiased, keepdim, correction)
    t = record(c, VarBackward0, (x,), saved=(x,))
    if t.grad_fn is not None:
        t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.n, t.grad_fn.correction = dims, keepdim, n, correction_used
        t.grad_fn.dim, t.grad_fn.correction_arg = dim, _correction_arg(dim, unbiased, correction)
    return t


def std(x, dim=None, unbiased=None, keepdim=False, correction=None):
    c, dims, n, correction_used = _variance(x, dim, unbiased, keepdim, correction)
    t = record(np.sqrt(c), StdBackward0, (x,), saved=(x, OUT))
    if t.grad_fn is not None:
        t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.n, t.grad_fn.correction = dims, keepdim, n, correction_used
        t.grad_fn.dim, t.grad_fn.correction_arg = dim, _correction_arg(dim, unbiased, correction)
    return t


def all(x, dim=None, keepdim=False):
    d = x._data
    if dim is None:
        return wrap(np.asarray(np.all(d)))
    return wrap(np.all(d, axis=normalise_dim(dim, d.ndim), keepdims=keepdim))


def any(x, dim=None, keepdim=False):
    d = x._data
    if dim is None:
        return wrap(np.asarray(np.any(d)))
    return wrap(np.any(d, axis=normalise_dim(dim, d.ndim), keepdims=keepdim))


def cumsum(x, dim):
    dm = normalise_dim(dim, x._data.ndim)
    out = np.cumsum(x._data, axis=dm)
    if not needs_grad(x):
        return wrap(out)
    t = record(out, CumsumBackward0, (x,))
    t.grad_fn.dim, t.grad_fn.dim_arg = dm, dim
    return t


class CumsumBackward0(Node):
    __slots__ = ("dim", "dim_arg")

    def apply(self, g):
        return dual.flip(dual.cumsum(dual.flip(g, self.dim), self.dim), self.dim)


class LogsumexpBackward0(Node):
    __slots__ = ("dims", "keepdim", "dim")

    def apply(self, g):
        x, y = self.saved()
        shape = dual.shape(x)
        yk = _unsqueeze_to(y, shape, self.dims, self.keepdim)
        return _unsqueeze_to(g, shape, self.dims, self.keepdim) * dual.exp(x - yk)


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) along ``dim``, without overflow."""
    d = x._data
    dims = _dims(dim, d.ndim)
    m = np.max(d, axis=dims, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        out = np.squeeze(out, axis=dims)
    t = record(out.astype(d.dtype, copy=False), LogsumexpBackward0, (x,), saved=(x, OUT))
    if t.grad_fn is not None:
        t.grad_fn.dims, t.grad_fn.keepdim, t.grad_fn.dim = dims, keepdim, dim
    return t


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_dim, ...: see graph.define_saved; dims show as given, negative ones as PyTorch does)


def _sizes(n):
    return tuple(n.shape)


define_saved(SumBackward0, self_sym_sizes=_sizes)
define_saved(SumBackward1, dim=lambda n: c_dims(n.dim), keepdim=lambda n: n.keepdim, self_sym_sizes=_sizes)
define_saved(MeanBackward0, self_sym_numel=lambda n: n.n, self_sym_sizes=_sizes)
define_saved(MeanBackward1, dim=lambda n: c_dims(n.dim), keepdim=lambda n: n.keepdim,
             self_sym_numel=lambda n: int(np.prod(n.shape)), self_sym_sizes=_sizes)
define_saved(MaxBackward1, self=0, result=1)
define_saved(MaxBackward0, dim=lambda n: c_int(n.dim_arg), indices=0, keepdim=lambda n: n.keepdim,
             self_sym_sizes=_sizes)
define_saved(GatherBackward0, pack_order=(1, 0), dim=lambda n: c_int(n.dim_arg), index=1, self=0,
             sparse_grad=lambda n: False)
define_saved(LinalgVectorNormBackward0, self=0, result=1, dim=lambda n: c_dims(n.dim), keepdim=lambda n: n.keepdim,
             ord=lambda n: n.p)
define_saved(ProdBackward0, self=0, result=1)
define_saved(VarBackward0, self=0, correction=lambda n: n.correction_arg, dim=lambda n: c_dims(n.dim),
             keepdim=lambda n: n.keepdim)
define_saved(StdBackward0, self=0, result=1, correction=lambda n: n.correction_arg, dim=lambda n: c_dims(n.dim),
             keepdim=lambda n: n.keepdim)
define_saved(CumsumBackward0, dim=lambda n: c_int(n.dim_arg))
define_saved(LogsumexpBackward0, self=0, result=1, dim=lambda n: c_dims(n.dim), keepdim=lambda n: n.keepdim)
