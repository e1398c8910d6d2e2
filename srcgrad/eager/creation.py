"""Creating tensors: ``tensor``, ``ones``, ``randn``, ... and the random generator.

Example:
    >>> import srcgrad as torch
    >>> torch.tensor([[1, 2], [3, 4]], dtype=torch.float32)
    tensor([[1., 2.],
            [3., 4.]])
"""
import warnings

import numpy as np

from . import dtypes
from .tensor import Size, Tensor, cpu, legacy_data, to_array, wrap
from .versions import bump_version, check_inplace

_rng = [np.random.default_rng()]


class Generator:
    """``torch.Generator``: a stream of random numbers of its own (numpy's PCG64 underneath),
    for the ``generator=`` arguments of ``rand``, ``randperm``, ``random_split``, samplers...

    >>> import srcgrad as torch
    >>> g = torch.Generator().manual_seed(42)
    >>> torch.randperm(4, generator=g)
    tensor([3, 2, 1, 0])
    """

    def __init__(self, device="cpu"):
        self.manual_seed(int(np.random.SeedSequence().entropy % (2 ** 63)))

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._set(np.random.default_rng(self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (``set_state`` takes it back)."""
        import pickle
        return tensor(np.frombuffer(pickle.dumps(self.numpy().bit_generator.state), dtype=np.uint8).copy())

    def set_state(self, new_state):
        import pickle
        rng = np.random.default_rng()
        rng.bit_generator.state = pickle.loads(new_state._data.tobytes())
        self._set(rng)
        return self

    @property
    def device(self):
        return cpu

    def numpy(self):
        return self._rng

    def _set(self, rng):
        self._rng = rng

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


class _DefaultGenerator(Generator):
    """The generator behind ``rand``, ``randn``... when no ``generator=`` is given."""

    def __init__(self):
        self._seed = None

    def numpy(self):
        return _rng[0]

    def _set(self, rng):
        _rng[0] = rng

    def initial_seed(self):
        return self._seed if self._seed is not None else 0


default_generator = _DefaultGenerator()


def numpy_rng(generator=None):
    """The numpy generator behind a ``generator=`` argument (None: the default one)."""
    if generator is None:
        return _rng[0]
    if isinstance(generator, Generator):
        return generator.numpy()
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")


def manual_seed(seed):
    """Seed the generator behind ``rand``, ``randn`` and friends (numbers differ from PyTorch's)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def _infer_dtype(data, arr):
    """PyTorch's dtype for ``tensor(data)``: numpy arrays keep theirs, Python floats use the default."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return dtypes.from_numpy_dtype(arr.dtype)
    kind = arr.dtype.kind
    if kind == "f":
        return dtypes.get_default_dtype()
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        return dtypes.int64
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (a number, nested lists, a numpy array or a Tensor).

    >>> tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    _check_device(device)
    arr = to_array(data)
    d = dtypes.to_dtype(dtype) if dtype is not None else (
        data.dtype if isinstance(data, Tensor) else _infer_dtype(data, arr))
    t = wrap(np.array(arr, dtype=d.np, copy=True))
    if requires_grad:
        _set_requires_grad(t)
    return t


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or dtypes.to_dtype(dtype) is data.dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(arr):
    """A tensor sharing memory with the numpy array ``arr``."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    dtypes.from_numpy_dtype(arr.dtype)
    return wrap(arr)


def _legacy(d):
    def make(*args, **kwargs):
        return wrap(legacy_data(args, kwargs, d))
    make.__name__ = d._legacy
    make.__doc__ = f"Legacy constructor of {d!r} tensors, as ``torch.{d._legacy}``."
    return make


FloatTensor = _legacy(dtypes.float32)
DoubleTensor = _legacy(dtypes.float64)
LongTensor = _legacy(dtypes.int64)
IntTensor = _legacy(dtypes.int32)
BoolTensor = _legacy(dtypes.bool_)
ByteTensor = _legacy(dtypes.uint8)
HalfTensor = _legacy(dtypes.float16)


def _check_device(device):
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"srcgrad's eager tensors live on the CPU; device '{device}' is not available")


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    for s in size:
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a sequence of ints, got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _finish(arr, requires_grad, device):
    _check_device(device)
    t = wrap(arr)
    if requires_grad:
        _set_requires_grad(t)
    return t


def _set_requires_grad(t):
    if not t.dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._rg = True


def _float_dtype(dtype):
    return dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _finish(np.zeros(_size(size), dtype=_float_dtype(dtype).np), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``."""
    return _finish(np.ones(_size(size), dtype=_float_dtype(dtype).np), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(_size(size), dtype=_float_dtype(dtype).np), requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, dtype=dtypes.to_dtype(dtype).np), requires_grad, device)


def _like(x, dtype):
    return dtypes.to_dtype(dtype).np if dtype is not None else x._data.dtype


def zeros_like(x, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.zeros(x._data.shape, dtype=_like(x, dtype)), requires_grad, device)


def ones_like(x, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.ones(x._data.shape, dtype=_like(x, dtype)), requires_grad, device)


def empty_like(x, dtype=None, device=None, requires_grad=False, memory_format=None):
    return zeros_like(x, dtype, device, requires_grad)


def full_like(x, fill_value, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.full(x._data.shape, fill_value, dtype=_like(x, dtype)), requires_grad, device)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    d = _float_dtype(dtype).np
    return _finish(numpy_rng(generator).random(_size(size)).astype(d), requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    d = _float_dtype(dtype).np
    return _finish(numpy_rng(generator).standard_normal(_size(size)).astype(d), requires_grad, device)


def rand_like(x, dtype=None, requires_grad=False):
    return rand(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad)


def randn_like(x, dtype=None, requires_grad=False):
    return randn(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad)


_RANDINT_SIGNATURES = (
    " * (int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = "
    "None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = "
    "False)\n"
    " * (int low, int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = "
    "None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")

_RANDINT_LIKE_SIGNATURES = "".join(
    f" * (Tensor input, {args}, *, {gen}torch.memory_format memory_format = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    for args in ("int low, int high", "Tensor high", "int high") for gen in ("torch.Generator generator, ", ""))

# the C type PyTorch names in its bounds errors of randint
_C_TYPES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
            "int64": "long int"}


def _invalid_args(name, args, kwargs, signatures):
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                     f"one of:\n{signatures}")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _random_ints(low, high, shape, d, generator=None):
    """Uniform integers in [low, high) as dtype ``d``, with PyTorch's checks of the bounds."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if not d.is_floating_point:
        lo, hi = (0, 1) if d.np == np.bool_ else (np.iinfo(d.np).min, np.iinfo(d.np).max)
        if low < lo:
            raise RuntimeError(f"from is out of bounds for {_C_TYPES[np.dtype(d.np).name]}")
        if high - 1 > hi:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPES[np.dtype(d.np).name]}")
    return numpy_rng(generator).integers(low, high, size=shape).astype(d.np)


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
            pin_memory=False, requires_grad=False):
    """Uniform random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (int64 unless ``dtype`` is given).

    >>> randint(3, 10, (2,)).shape
    torch.Size([2])
    """
    kwargs = {k: v for k, v in (("low", low), ("high", high), ("size", size)) if v is not None}
    invalid = _invalid_args("randint", args, kwargs, _RANDINT_SIGNATURES)
    # bind the arguments to one of PyTorch's two overloads: (high, size) and (low, high, size)
    if size is None:
        if len(args) == 3 and low is None and high is None:
            low, high, size = args
        elif len(args) == 2 and low is None and high is None:
            high, size = args
        else:
            raise invalid
    elif len(args) == 2 and low is None and high is None:
        low, high = args
    elif len(args) == 1 and high is None and low is None:
        high = args[0]
    elif len(args) == 1 and high is not None and low is None:
        low = args[0]
    elif args or high is None:
        raise invalid
    two_args = low is None
    if not _is_int(high) or (low is not None and not _is_int(low)):
        if two_args:
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not {type(high).__name__}")
        raise invalid
    if not isinstance(size, (tuple, list, Size)) or not all(_is_int(n) for n in size):
        if two_args:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(size).__name__}")
        raise invalid
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    return _finish(_random_ints(0 if low is None else int(low), int(high), _size((tuple(size),)), d, generator),
                   requires_grad, device)


def randint_like(input, *args, low=None, high=None, generator=None, dtype=None, layout=None, device=None,
                 pin_memory=False, requires_grad=False, memory_format=None):
    """Random integers in [low, high) shaped like ``input``, in its dtype unless ``dtype`` is given:
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    bounds = list(args) + [v for v in (low, high) if v is not None]
    if len(args) == 1 and low is not None:
        bounds = [low, args[0]]
    bounds = [int(b.item()) if isinstance(b, Tensor) else b for b in bounds]
    if len(bounds) not in (1, 2) or (len(bounds) == 1 and low is not None) or not all(_is_int(b) for b in bounds):
        kwargs = {k: v for k, v in (("low", low), ("high", high)) if v is not None}
        raise _invalid_args("randint_like", (input,) + args, kwargs, _RANDINT_LIKE_SIGNATURES)
    lo, hi = (0, bounds[0]) if len(bounds) == 1 else bounds
    d = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    return _finish(_random_ints(int(lo), int(hi), input._data.shape, d, generator), requires_grad, device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    return _finish(numpy_rng(generator).permutation(n).astype(d.np), requires_grad, device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The identity matrix."""
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype).np), requires_grad, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """``arange(5)`` -> int64 0..4; a float bound makes a default-dtype float tensor."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    d = dtypes.to_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(np.ceil((end - start) / step))
    return _finish((start + step * np.arange(max(n, 0), dtype=np.float64)).astype(d.np), requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    return _finish(np.linspace(start, end, steps, dtype=np.float64).astype(_float_dtype(dtype).np),
                   requires_grad, device)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    return _finish(np.logspace(start, end, steps, base=base).astype(_float_dtype(dtype).np), requires_grad, device)


def uniform_(t, a=0.0, b=1.0, *, generator=None):
    """Fill ``t`` in place with samples of U(a, b) (``nn.init.uniform_`` and ``w.uniform_(-1, 1)``)."""
    check_inplace(t)
    t._data[...] = numpy_rng(generator).uniform(a, b, t._data.shape)
    bump_version(t)
    return t


def normal_(t, mean=0.0, std=1.0, *, generator=None):
    """Fill ``t`` in place with samples of N(mean, std²)."""
    check_inplace(t)
    t._data[...] = numpy_rng(generator).normal(mean, std, t._data.shape)
    bump_version(t)
    return t


# ------------------------------------------------------------------------------------ Tensor.new*

_NEW_SIGNATURES = (" * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
                   " * (tuple of ints size, *, torch.device device = None)\n"
                   " * (object data, *, torch.device device = None)\n")

# the C++ names of the dtypes in PyTorch's TensorOptions messages
_OPTION_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
                 "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "bool": "bool"}


def _options(d):
    return (f"TensorOptions(dtype={_OPTION_TYPES[np.dtype(d.np).name]}, device=cpu, layout=Strided, requires_grad="
            "false (default), pinned_memory=false (default), memory_format=(nullopt))")


def new_method(alias):
    """``Tensor.new``, given ``alias(t)``, the op that makes a tensor sharing ``t``'s data and
    history (ops/shape.py's: the ops are above this module, so methods.py hands it in)."""

    def tensor_new(self, *args, device=None, **kwargs):
        """``x.new(*sizes)`` (uninitialised: zeros here), ``x.new(data)`` or ``x.new(tensor)``, in
        ``x``'s dtype: PyTorch's legacy constructor on a tensor."""
        _check_device(device)
        if kwargs:
            raise _invalid_args("new", args, kwargs, _NEW_SIGNATURES)
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if other.dtype is not self.dtype:
                raise TypeError(f"expected {_options(self.dtype)} (got {_options(other.dtype)})")
            return alias(other)     # an alias, as in PyTorch
        return wrap(legacy_data(args, {}, self.dtype))
    return tensor_new


def _new_size(name, size):
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _size(size)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
    """Zeros of the given size, in this tensor's dtype unless ``dtype`` is given."""
    size = _new_size("new_zeros", size or ((kw.pop("size"),) if "size" in kw else ()))
    return _finish(np.zeros(size, dtype=_like(self, dtype)), requires_grad, device)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
    """Ones of the given size, in this tensor's dtype unless ``dtype`` is given."""
    size = _new_size("new_ones", size or ((kw.pop("size"),) if "size" in kw else ()))
    return _finish(np.ones(size, dtype=_like(self, dtype)), requires_grad, device)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
    """An uninitialised tensor of the given size (zeros here), in this tensor's dtype unless given."""
    size = _new_size("new_empty", size or ((kw.pop("size"),) if "size" in kw else ()))
    return _finish(np.zeros(size, dtype=_like(self, dtype)), requires_grad, device)


def new_full(self, size=None, fill_value=None, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, in this tensor's dtype unless given."""
    if size is None:
        raise TypeError('new_full() missing 1 required positional arguments: "size"')
    if fill_value is None:
        raise TypeError('new_full() missing 1 required positional arguments: "fill_value"')
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    return _finish(np.full(_size((tuple(size),)), fill_value, dtype=_like(self, dtype)), requires_grad, device)


def new_tensor(self, data=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A copy of ``data`` as a new leaf tensor, in this tensor's dtype unless ``dtype`` is given."""
    if data is None:
        raise TypeError('new_tensor() missing 1 required positional arguments: "data"')
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data._data
    return tensor(data, dtype=dtype if dtype is not None else self.dtype, device=device, requires_grad=requires_grad)
