"""The eager ``Tensor``: a numpy array with PyTorch's autograd attributes.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = (x * 3).mean()
    >>> out.backward()
    >>> x.grad
    tensor([[0.7500, 0.7500],
            [0.7500, 0.7500]])
"""
import numbers
import warnings
import weakref

import numpy as np

from . import dtypes
from .hooks import HookDict, RemovableHandle
from .versions import version_counter, version_of

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information.")

_LEAF_RG_MSG = ("you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n


# (here rather than in creation.py, as every tensor's .device is this one)
class device:
    """The only device of the eager mode: ``device(type='cpu')``."""

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type = type.type
        if str(type).split(":")[0] != "cpu":
            raise RuntimeError(f"srcgrad's eager tensors live on the CPU; device '{type}' is not available")
        self.type, self.index = "cpu", None

    def __repr__(self):
        return "device(type='cpu')"

    def __str__(self):
        return "cpu"

    def __eq__(self, other):
        return str(other) == "cpu"

    def __hash__(self):
        return hash("cpu")


cpu = device("cpu")


class _TensorHooks:
    __slots__ = ("pre", "post_acc")

    def __init__(self):
        self.pre = HookDict()
        self.post_acc = HookDict()


def legacy_type_name(data):
    return "torch." + dtypes.from_numpy_dtype(data.dtype)._legacy


class _BuiltinMethod:
    """A method that prints as PyTorch's C-implemented ones do:
    ``<built-in method retain_grad of Tensor object at 0x...>``."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self.fn
        return _BoundBuiltin(self.fn, obj)


class _BoundBuiltin:
    """A ``_BuiltinMethod`` bound to a tensor: behaves as a bound method (``__self__``,
    ``__func__``, ``__name__``, equality and hash) and prints as PyTorch's."""

    __slots__ = ("__func__", "__self__")

    def __init__(self, fn, obj):
        self.__func__, self.__self__ = fn, obj

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)

    @property
    def __doc__(self):
        return self.__func__.__doc__

    def __getattr__(self, name):
        # a class cannot hold __name__ / __qualname__ for its instances (they describe the class)
        if name == "__name__":
            return self.__func__.__name__
        if name == "__qualname__":
            return "Tensor." + self.__func__.__name__
        raise AttributeError(f"'builtin_function_or_method' object has no attribute '{name}'")

    def __eq__(self, other):
        if not isinstance(other, _BoundBuiltin):
            return NotImplemented
        return self.__self__ is other.__self__ and self.__func__ is other.__func__

    def __hash__(self):
        return hash((id(self.__self__), self.__func__))

    def __repr__(self):
        return (f"<built-in method {self.__func__.__name__} of {type(self.__self__).__name__} object at "
                f"{hex(id(self.__self__))}>")


_new = object.__new__
_ndarray = np.ndarray


class Tensor:
    """A multi-dimensional array that records the ops applied to it when it requires grad.

    ``Tensor(data)`` is PyTorch's legacy constructor: it always makes a tensor of the default
    dtype. Prefer ``srcgrad.tensor(data, dtype=..., requires_grad=...)``.

    >>> Tensor([[5, 6], [7, 8]])
    tensor([[5., 6.],
            [7., 8.]])
    """

    # The four attributes every tensor sets live in slots; the rarely set ones fall back to the
    # class defaults below until assigned (into __dict__), which keeps creating a tensor cheap.
    # ``_vc`` is the version counter, a one-element list shared by a tensor and its views; it
    # is made on first need (version_counter), as most intermediate tensors never need one.
    __slots__ = ("_data", "grad_fn", "_rg", "_vc", "__weakref__", "__dict__")
    _output_nr = 0
    _grad = None
    _base = None
    _accum = None
    _hooks = None
    __array_priority__ = 1000   # ndarray <op> Tensor defers to the Tensor's reflected operator

    def __init__(self, *args, **kwargs):
        # wrap() builds tensors internally without calling __init__; this is the user-facing path
        init_leaf(self, legacy_data(args, kwargs, dtypes.get_default_dtype()))

    # -------------------------------------------------------------------- autograd attributes
    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(bool(value))

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of a leaf in place and return it.

        >>> t = Tensor([1.0]).requires_grad_()
        """
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_LEAF_RG_MSG)
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        node = self.grad_fn
        retains = node._hooks.retains if node is not None and node._hooks is not None else None
        return retains is not None and self._output_nr in retains and retains[self._output_nr]() is self

    @_BuiltinMethod
    def retain_grad(self):
        """Keep ``.grad`` of this non-leaf tensor after ``backward()``."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        h = self.grad_fn._hook_state()
        if h.retains is None:
            h.retains = {}
        h.retains[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """``hook(grad)`` runs when the gradient of this tensor is computed; it may return a new one.

        >>> x = Tensor([1.0]).requires_grad_()
        >>> h = x.register_hook(lambda g: g * 2)
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = _TensorHooks()
        key = id(hook), len(self._hooks.pre)
        self._hooks.pre[key] = hook
        return RemovableHandle(self._hooks.pre, key)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a leaf's ``.grad`` has been accumulated."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._hooks is None:
            self._hooks = _TensorHooks()
        key = id(hook), len(self._hooks.post_acc)
        self._hooks.post_acc[key] = hook
        return RemovableHandle(self._hooks.post_acc, key)

    # backward() is the engine's (autograd_api.py, above this module): methods.py binds it

    def detach(self):
        """A tensor sharing this one's data (and version counter) that records no history."""
        t = wrap(self._data)
        t._vc = version_counter(self)
        return t

    def detach_(self):
        if self._base is not None and self._base._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self):
        """The tensor's values without history (changes to it are not tracked)."""
        return wrap(self._data)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def _version(self):
        return version_of(self)

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _is_view(self):
        return self._base is not None

    # ------------------------------------------------------------------------ plain metadata
    @property
    def dtype(self):
        return dtypes.FROM_NUMPY[self._data.dtype]

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[normalise_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    def stride(self, dim=None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[normalise_dim(dim, self._data.ndim)]

    def is_contiguous(self):
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def is_cuda(self):
        return False

    @property
    def device(self):
        return cpu

    def type(self, dtype=None):
        if dtype is None:
            return legacy_type_name(self._data)
        return self.to(_dtype_from_type_name(dtype))

    # ------------------------------------------------------------------------ conversions
    def numpy(self, force=False):
        """The values as a numpy array sharing memory with the tensor."""
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data

    def item(self):
        """The single value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self):
        from .tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data.copy(), self._rg))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment.")
        t = wrap(self._data.copy())
        t._rg = self._rg
        if self._grad is not None:
            t._grad = wrap(self._grad._data.copy())
        memo[id(self)] = t
        return t


def _rebuild(data, requires_grad):
    t = wrap(data)
    t._rg = requires_grad
    return t


def init_leaf(t, data):
    """Make ``t``, a tensor made without ``__init__`` (``Tensor.__new__``, as nn.Parameter
    does), a leaf holding the array ``data``."""
    t._data = data
    t.grad_fn = None
    t._rg = False
    t._vc = None


def wrap(data):
    """A new leaf tensor around a numpy array (0-d results of numpy come back as scalars)."""
    t = _new(Tensor)
    if type(data) is not _ndarray:
        data = np.asarray(data)
    t._data = data
    t.grad_fn = None
    t._rg = False
    t._vc = None
    return t


# ------------------------------------------------------------- the data of a new tensor

def to_array(data):
    """The numpy array of ``data`` (a number, nested lists or tuples of numbers and one-element
    tensors, a numpy array or a Tensor), refusing what has no numeric dtype."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        if any(isinstance(d, Tensor) for d in data):
            if any(d._data.size != 1 for d in data if isinstance(d, Tensor)):
                raise ValueError("only one element tensors can be converted to Python scalars")
            data = [d.item() if isinstance(d, Tensor) else to_array(d) for d in data]
    try:
        arr = np.asarray(data)
    except ValueError:
        raise ValueError("expected sequence of equal-length lists, got a ragged list") from None
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    return arr


def legacy_data(args, kwargs, dtype):
    """The array behind ``Tensor(...)``/``FloatTensor(...)``: sizes make an uninitialised tensor
    (zeros here), a sequence is copied."""
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got unexpected keyword "
                        f"{sorted(kwargs)}")
    if not args:
        return np.zeros((0,), dtype=dtype.np)
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return np.zeros(tuple(args), dtype=dtype.np)
    if len(args) == 1:
        if isinstance(args[0], Tensor):
            return args[0]._data
        if isinstance(args[0], Size):           # a Size is sizes; other tuples are data
            return np.zeros(tuple(args[0]), dtype=dtype.np)
        if isinstance(args[0], numbers.Number):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        return np.array(to_array(args[0]), dtype=dtype.np)
    raise TypeError("new(): invalid combination of arguments")


def normalise_dim(d, ndim):
    """Normalise a possibly negative dim, with PyTorch's error for one out of range."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


_TYPE_NAMES = {"torch." + d._legacy: d for d in dtypes.ALL}


def _dtype_from_type_name(t):
    if isinstance(t, str):
        if t not in _TYPE_NAMES:
            raise ValueError(f"invalid type: '{t}'")
        return _TYPE_NAMES[t]
    return dtypes.to_dtype(t)
