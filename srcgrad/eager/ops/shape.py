"""Shape ops and indexing: views share memory (and the version counter) with their base.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, 3, requires_grad=True)
    >>> x[0, 1:].grad_fn
    <SliceBackward0 object at 0x...>
"""
import numpy as np

from .. import dtypes
from ..graph import Node, c_int, define_saved
from ..tensor import Tensor, normalise_dim, wrap
from ..versions import bump_version, check_inplace, check_view_graph, version_counter
from . import dual
from ._core import needs_grad, record, sum_to


def _view_of(x, data, node_cls, **attrs):
    """A result that shares ``x``'s memory: same version counter, ``_base`` set."""
    t = record(data, node_cls, (x,))
    t._vc = version_counter(x)
    t._base = x._base if x._base is not None else x
    if t.grad_fn is not None:
        for k, v in attrs.items():
            setattr(t.grad_fn, k, v)
    return t


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


class ViewBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return dual.reshape(g, self.shape)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


def view(x, *shape):
    """The same data seen with another shape; fails where the memory layout does not allow it."""
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("srcgrad: view(dtype) is not supported; use .to(dtype)")
    shape = _infer_shape(_shape_arg(shape), x._data.size)
    try:
        data = np.reshape(x._data, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return _view_of(x, data, ViewBackward0, shape=x._data.shape)


def reshape(x, *shape):
    """Like ``view``, copying when the memory layout requires it."""
    shape = _infer_shape(_shape_arg(shape), x._data.size)
    try:
        data = np.reshape(x._data, shape, copy=False)
    except ValueError:
        t = record(np.reshape(x._data, shape), UnsafeViewBackward0, (x,))
        if t.grad_fn is not None:
            t.grad_fn.shape = x._data.shape
        return t
    return _view_of(x, data, ViewBackward0, shape=x._data.shape)


def flatten(x, start_dim=0, end_dim=-1):
    n = x._data.ndim
    if n == 0:
        return reshape(x, 1)
    s, e = normalise_dim(start_dim, n), normalise_dim(end_dim, n)
    shp = x._data.shape
    return reshape(x, shp[:s] + (-1,) + shp[e + 1:]) if s <= e else x


class TBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return dual.t(g)


def t(x):
    """Transpose of a tensor of at most 2 dims."""
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return _view_of(x, x._data.T, TBackward0)


class PermuteBackward0(Node):
    __slots__ = ("dims", "dims_arg")

    def apply(self, g):
        return dual.permute(g, tuple(int(i) for i in np.argsort(self.dims)))


def permute(x, *dims):
    dims_arg = _shape_arg(dims)
    dims = tuple(normalise_dim(d, x._data.ndim) for d in dims_arg)
    if sorted(dims) != list(range(x._data.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{x._data.ndim} is not equal to len(dims) = {len(dims)}")
    return _view_of(x, np.transpose(x._data, dims), PermuteBackward0, dims=dims, dims_arg=dims_arg)


def T(x):
    """``x.T``: all dims reversed (PyTorch records it as a permute)."""
    n = x._data.ndim
    if n < 2:
        return x
    return permute(x, tuple(range(n - 1, -1, -1)))


class TransposeBackward0(Node):
    __slots__ = ("d0", "d1", "dim0", "dim1")    # dim0, dim1: as given

    def apply(self, g):
        return dual.transpose(g, self.d0, self.d1)


def transpose(x, dim0, dim1):
    n = x._data.ndim
    d0, d1 = normalise_dim(dim0, n), normalise_dim(dim1, n)
    return _view_of(x, np.swapaxes(x._data, d0, d1), TransposeBackward0, d0=d0, d1=d1, dim0=dim0, dim1=dim1)


class SqueezeBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return dual.reshape(g, self.shape)


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ("dim",)     # as given


class SqueezeBackward4(SqueezeBackward0):
    __slots__ = ("dim",)


def squeeze(x, dim=None):
    d = x._data
    if dim is None:
        return _view_of(x, np.squeeze(d), SqueezeBackward0, shape=d.shape)
    if isinstance(dim, (tuple, list)):
        dims = tuple(normalise_dim(i, d.ndim) for i in dim if d.ndim and d.shape[normalise_dim(i, d.ndim)] == 1)
        return _view_of(x, np.squeeze(d, axis=dims), SqueezeBackward4, shape=d.shape, dim=tuple(dim))
    dm = normalise_dim(dim, d.ndim)
    data = np.squeeze(d, axis=dm) if d.ndim and d.shape[dm] == 1 else d.view()
    return _view_of(x, data, SqueezeBackward1, shape=d.shape, dim=dim)


class UnsqueezeBackward0(Node):
    __slots__ = ("dim", "dim_arg")

    def apply(self, g):
        return dual.squeeze(g, self.dim)


def unsqueeze(x, dim):
    dm = normalise_dim(dim, x._data.ndim + 1)
    return _view_of(x, np.expand_dims(x._data, dm), UnsqueezeBackward0, dim=dm, dim_arg=dim)


class ExpandBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return sum_to(g, self.shape)


def expand(x, *sizes):
    """A broadcast view of ``x`` with the given sizes (-1 keeps a size)."""
    sizes = _shape_arg(sizes)
    d = x._data
    if len(sizes) < d.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(d.shape)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({d.ndim})")
    lead = len(sizes) - d.ndim
    target = tuple(d.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    if target == d.shape:
        return _view_of(x, d.view(), ExpandBackward0, shape=d.shape)
    try:
        data = np.broadcast_to(d, target)
    except ValueError:
        for i in range(d.ndim):
            if d.shape[i] != 1 and d.shape[i] != target[i + lead]:
                raise RuntimeError(f"The expanded size of the tensor ({target[i + lead]}) must match the existing "
                                   f"size ({d.shape[i]}) at non-singleton dimension {i + lead}.  Target sizes: "
                                   f"{list(sizes)}.  Tensor sizes: {list(d.shape)}") from None
        raise
    return _view_of(x, data, ExpandBackward0, shape=d.shape)


def expand_as(x, other):
    return expand(x, other.shape)


class CloneBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return g


def clone(x, memory_format=None):
    return record(np.array(x._data, copy=True), CloneBackward0, (x,))


def contiguous(x, memory_format=None):
    if x._data.flags.c_contiguous:
        return x
    return clone(x)


class ToCopyBackward0(Node):
    __slots__ = ("dtype",)

    def apply(self, g):
        return dual.astype(g, self.dtype)


def to(x, *args, **kwargs):
    """A copy with another dtype (device arguments other than 'cpu' are refused)."""
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        else:
            device = a
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"srcgrad's eager tensors live on the CPU; device '{device}' is not available")
    if dtype is None or dtypes.to_dtype(dtype) is x.dtype:
        return clone(x) if copy else x
    dtype = dtypes.to_dtype(dtype)
    out = x._data.astype(dtype.np)
    if not dtype.is_floating_point:
        return wrap(out)
    t = record(out, ToCopyBackward0, (x,))
    if t.grad_fn is not None:
        t.grad_fn.dtype = x.dtype
    return t


# ------------------------------------------------------------------------------ indexing


class _EmbedBackward(Node):
    """The gradient of taking ``index`` (an int or a slice) along ``dim``: zeros elsewhere."""

    __slots__ = ("shape", "dim", "index", "dim_arg")

    def apply(self, g):
        return dual.embed(self.shape, (slice(None),) * self.dim + (self.index,), g)


class SelectBackward0(_EmbedBackward):
    __slots__ = ("index_arg",)


class SliceBackward0(_EmbedBackward):
    __slots__ = ()


class IndexBackward0(Node):
    """Saves the index tensors (as PyTorch does; the numpy ``key`` is what the rule uses)."""

    __slots__ = ("shape", "key")

    def apply(self, g):
        self.saved()      # unpacked as in PyTorch (saved-tensor hooks, in-place checks), not needed here
        # a gather may read one element several times: the gradients add up
        return dual.embed(self.shape, self.key, g, accumulate=True)


def select(x, dim, index):
    d = x._data
    dm = normalise_dim(dim, d.ndim)
    size = d.shape[dm]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dm} with size {size}")
    index_arg = index
    index = index + size if index < 0 else index
    idx = (slice(None),) * dm + (index,)
    return _view_of(x, d[idx], SelectBackward0, shape=d.shape, dim=dm, index=index, dim_arg=dim,
                    index_arg=index_arg)


def narrow(x, dim, start, length):
    dm = normalise_dim(dim, x._data.ndim)
    if start < 0:
        start += x._data.shape[dm]
    return _slice(x, dm, slice(start, start + length), dim)


def _slice(x, dm, s, dim_arg=None):
    d = x._data
    idx = (slice(None),) * dm + (s,)
    return _view_of(x, d[idx], SliceBackward0, shape=d.shape, dim=dm, index=s,
                    dim_arg=dm if dim_arg is None else dim_arg)


def _is_advanced(k):
    if isinstance(k, Tensor):
        return k._data.ndim > 0 or k._data.dtype == np.bool_
    return isinstance(k, (list, np.ndarray)) or (isinstance(k, np.generic) and k.dtype == np.bool_) \
        or isinstance(k, bool)


def _np_key(k):
    if isinstance(k, Tensor):
        return k._data
    if isinstance(k, list):
        return np.asarray([_np_key(i) for i in k]) if any(isinstance(i, Tensor) for i in k) else np.asarray(k)
    return k


def _normalise_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            k = int(k._data)
        out.append(k)
    return tuple(out)


def _index_tensors(npkey):
    """What IndexBackward0 saves: each index array as a tensor (int64, or a bool mask), None for
    the other parts of the key."""
    return tuple(wrap(k.astype(np.int64, copy=False) if k.dtype.kind in "iu" else k)
                 if isinstance(k, np.ndarray) else None for k in npkey)


def getitem(x, key):
    """``x[key]``: ints select, slices slice (both views), lists/tensors gather (a copy)."""
    key = _normalise_key(key)
    if any(_is_advanced(k) for k in key):
        npkey = tuple(_np_key(k) for k in key)
        try:
            out = x._data[npkey]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        t = record(np.array(out, copy=True), IndexBackward0, (x,), saved=_index_tensors(npkey))
        if t.grad_fn is not None:
            t.grad_fn.shape, t.grad_fn.key = x._data.shape, npkey
        return t
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > x._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim}")
    # basic indexing, one step per index as PyTorch records it
    out, dim = x, 0
    for i, k in enumerate(key):
        if k is Ellipsis:
            dim += x._data.ndim - n_real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            if k != slice(None):
                if k.step is not None and k.step <= 0:
                    raise ValueError("step must be greater than zero")
                out = _slice(out, dim, k)
            dim += 1
        elif isinstance(k, (int, np.integer)):
            out = select(out, dim, int(k))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             "are valid indices (got " + type(k).__name__ + ")")
    if out is x:
        out = alias(x)
    return out


def alias(x):
    """A new tensor over ``x``'s data with ``x`` as its history (grad_fn ``AliasBackward0``):
    ``x[...]``, and ``t.new(x)`` (creation.py)."""
    return _view_of(x, x._data.view(), AliasBackward0)


class AliasBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return g


class IndexPutBackward0(Node):
    __slots__ = ("key", "accumulate", "vshape")

    def apply(self, g):
        gs = None
        if self.needs_input_grad(0):
            gs = g if self.accumulate else masked_zero(g, self.key)
        gv = sum_to(g[self.key], self.vshape) if self.needs_input_grad(1) else None
        return gs, gv


def index_put(x, key, value, accumulate=False):
    """Out-of-place ``x`` with ``value`` written (or added) at ``key``."""
    npkey = key if isinstance(key, tuple) else (key,)
    npkey = tuple(_np_key(k) for k in npkey)
    v = value if isinstance(value, Tensor) else wrap(np.asarray(value, dtype=x._data.dtype))
    data = np.array(x._data, copy=True)
    if accumulate:
        np.add.at(data, npkey, v._data)
    else:
        data[npkey] = v._data
    t = record(data, IndexPutBackward0, (x, v))
    if t.grad_fn is not None:
        t.grad_fn.key, t.grad_fn.accumulate, t.grad_fn.vshape = npkey, accumulate, v._data.shape
    return t


def masked_zero(g, key):
    """``g`` with the positions at ``key`` set to zero (differentiable)."""
    mask = np.ones(dual.shape(g), dtype=np.result_type(dual.data(g)))
    mask[key] = 0
    return g * dual.constant(mask, g)


class CopySlices(Node):
    """The grad_fn of a tensor after ``x[key] = value``."""

    __slots__ = ("key", "vshape")

    def apply(self, g):
        gs = masked_zero(g, self.key) if self.needs_input_grad(0) else None
        gv = sum_to(g[self.key], self.vshape) if self.needs_input_grad(1) else None
        return gs, gv


def setitem(x, key, value):
    """``x[key] = value``, recorded as ``CopySlices`` when gradients flow through it."""
    check_inplace(x, view_of_leaf=True)
    key = _normalise_key(key)
    npkey = tuple(_np_key(k) for k in key)
    vt = value if isinstance(value, Tensor) else None
    vdata = value._data if vt is not None else value
    try:
        x._data[npkey] = vdata
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(vdata))} cannot be broadcast "
                           f"to indexing result of shape {list(x._data[npkey].shape)}") from None
    bump_version(x)
    if needs_grad(x, vt):
        check_view_graph(x)
        node = CopySlices((x, vt))
        node.key, node.vshape = npkey, (vt._data.shape if vt is not None else ())
        x.grad_fn, x._rg, x._output_nr = node, True, 0


# ------------------------------------------------------------------------- joining


class CatBackward0(Node):
    __slots__ = ("dim", "sizes", "dim_arg")

    def apply(self, g):
        out, start = [], 0
        for s in self.sizes:
            out.append(g[(slice(None),) * self.dim + (slice(start, start + s),)])
            start += s
        return tuple(out)


def cat(tensors, dim=0):
    """Join tensors along an existing dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = dtypes.result_type(tensors)
    dm = normalise_dim(dim, tensors[0]._data.ndim)
    try:
        out = np.concatenate([t._data.astype(d.np, copy=False) for t in tensors], axis=dm)
    except ValueError:
        shapes = [list(t.shape) for t in tensors]
        raise RuntimeError(f"Sizes of tensors must match except in dimension {dm}. Got shapes {shapes}") from None
    r = record(out, CatBackward0, tensors)
    if r.grad_fn is not None:
        r.grad_fn.dim, r.grad_fn.sizes, r.grad_fn.dim_arg = dm, [t._data.shape[dm] for t in tensors], dim
    return r


class StackBackward0(Node):
    __slots__ = ("dim", "n", "dim_arg")

    def apply(self, g):
        return tuple(g[(slice(None),) * self.dim + (i,)] for i in range(self.n))


def stack(tensors, dim=0):
    """Join tensors along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    d = dtypes.result_type(tensors)
    dm = normalise_dim(dim, tensors[0]._data.ndim + 1)
    out = np.stack([t._data.astype(d.np, copy=False) for t in tensors], axis=dm)
    r = record(out, StackBackward0, tensors)
    if r.grad_fn is not None:
        r.grad_fn.dim, r.grad_fn.n, r.grad_fn.dim_arg = dm, len(tensors), dim
    return r


class _SplitBackward(Node):
    """One node for all pieces of a split; pieces with no gradient count as zeros."""

    __slots__ = ("shape", "dim", "bounds", "n_outputs", "dim_arg", "split")

    def apply(self, *grads):
        like = next(g for g in grads if g is not None)
        pieces = [g if g is not None else dual.zeros(self._piece_shape(i), like) for i, g in enumerate(grads)]
        return dual.cat(pieces, self.dim)

    def _piece_shape(self, i):
        shape = list(self.shape)
        shape[self.dim] = self.bounds[i + 1] - self.bounds[i]
        return shape


class SplitBackward0(_SplitBackward):
    __slots__ = ()


class SplitWithSizesBackward0(_SplitBackward):
    __slots__ = ()


class UnbindBackward0(Node):
    __slots__ = ("shape", "dim", "n_outputs", "dim_arg")

    def apply(self, *grads):
        like = next(g for g in grads if g is not None)
        shape = list(self.shape)
        del shape[self.dim]
        return dual.stack([g if g is not None else dual.zeros(shape, like) for g in grads], self.dim)


def _multi_view(x, pieces, node_cls, **attrs):
    """Several views of ``x`` that share one multi-output node."""
    outs = [wrap(p) for p in pieces]
    node = None
    if needs_grad(x):
        node = node_cls((x,))
        node.n_outputs = len(pieces)
        for k, v in attrs.items():
            setattr(node, k, v)
    base = x._base if x._base is not None else x
    for i, o in enumerate(outs):
        o._vc, o._base = version_counter(x), base
        if node is not None:
            o.grad_fn, o._rg, o._output_nr = node, True, i
    return tuple(outs)


def split(x, split_size, dim=0):
    """Pieces of ``split_size`` along ``dim`` (or of the sizes in a list), as views."""
    d = x._data
    dm = normalise_dim(dim, d.ndim)
    n = d.shape[dm]
    if isinstance(split_size, int):
        bounds = list(range(0, n, split_size)) + [n] if n else [0, 0]
        cls = SplitBackward0
    else:
        if sum(split_size) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {dm}), but got split_sizes={list(split_size)}")
        bounds = [0] + [int(b) for b in np.cumsum(split_size)]
        cls = SplitWithSizesBackward0
    pieces = [d[(slice(None),) * dm + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]
    return _multi_view(x, pieces, cls, shape=d.shape, dim=dm, bounds=bounds, dim_arg=dim,
                       split=split_size if isinstance(split_size, int) else tuple(split_size))


def chunk(x, chunks, dim=0):
    n = x._data.shape[normalise_dim(dim, x._data.ndim)]
    return split(x, max(-(-n // chunks), 1), dim)


def unbind(x, dim=0):
    d = x._data
    dm = normalise_dim(dim, d.ndim)
    pieces = [d[(slice(None),) * dm + (i,)] for i in range(d.shape[dm])]
    return _multi_view(x, pieces, UnbindBackward0, shape=d.shape, dim=dm, dim_arg=dim)


class FlipBackward0(Node):
    __slots__ = ("dims", "dims_arg")

    def apply(self, g):
        return dual.flip(g, self.dims)


def flip(x, dims):
    dims_arg = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = tuple(normalise_dim(d, x._data.ndim) for d in dims_arg)
    t = record(np.flip(x._data, dims).copy(), FlipBackward0, (x,))
    if t.grad_fn is not None:
        t.grad_fn.dims, t.grad_fn.dims_arg = dims, dims_arg
    return t


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_dim, ...: see graph.define_saved; dims show as given, negative ones as PyTorch does)

_INT64_MAX = 2 ** 63 - 1


def _sizes(n):
    return tuple(n.shape)


for _cls in (ViewBackward0, SqueezeBackward0, ExpandBackward0):
    define_saved(_cls, self_sym_sizes=_sizes)
define_saved(SqueezeBackward1, dim=lambda n: c_int(n.dim), self_sym_sizes=_sizes)
define_saved(SqueezeBackward4, dim=lambda n: c_int(n.dim), self_sym_sizes=_sizes)
define_saved(PermuteBackward0, dims=lambda n: c_int(n.dims_arg))
define_saved(TransposeBackward0, dim0=lambda n: c_int(n.dim0), dim1=lambda n: c_int(n.dim1))
define_saved(UnsqueezeBackward0, dim=lambda n: c_int(n.dim_arg))
define_saved(SelectBackward0, dim=lambda n: c_int(n.dim_arg), index=lambda n: c_int(n.index_arg),
             self_sym_sizes=_sizes)
define_saved(SliceBackward0, dim=lambda n: c_int(n.dim_arg),
             start=lambda n: c_int(0 if n.index.start is None else n.index.start),
             end=lambda n: c_int(_INT64_MAX if n.index.stop is None else n.index.stop),
             step=lambda n: 1 if n.index.step is None else n.index.step, self_sym_sizes=_sizes)
define_saved(IndexBackward0, indices=..., self_sym_sizes=_sizes)
define_saved(CatBackward0, dim=lambda n: c_int(n.dim_arg))
define_saved(StackBackward0, dim=lambda n: c_int(n.dim_arg))
define_saved(SplitBackward0, dim=lambda n: c_int(n.dim_arg), self_sym_sizes=_sizes, split_size=lambda n: n.split)
define_saved(SplitWithSizesBackward0, dim=lambda n: c_int(n.dim_arg), self_sym_sizes=_sizes,
             split_sizes=lambda n: n.split)
define_saved(UnbindBackward0, dim=lambda n: c_int(n.dim_arg))
define_saved(FlipBackward0, dims=lambda n: c_int(n.dims_arg))
