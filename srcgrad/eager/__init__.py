"""The eager mode: PyTorch-style tensors that record a grad_fn graph (``import srcgrad as torch``).

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> ((x + 2) * (x + 2) * 3).mean()
    tensor(27., grad_fn=<MeanBackward0>)
"""
import functools as _functools

from . import methods as _methods  # noqa: F401  binds the Tensor methods
from .creation import (BoolTensor, Generator, default_generator, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                       arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, logspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn,
                       randint_like, randn_like, randperm, seed, tensor, zeros, zeros_like)
from .dtypes import (bool_ as bool, dtype, float16, float32, float64, get_default_dtype, int8, int16, int32,
                     int64, promote_types, set_default_dtype, uint8)
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, \
    set_grad_enabled
from .ops._core import as_tensor as _as_tensor
from .ops.linalg import addmm, bmm, dot, matmul, mm, mv, outer
from .ops.pointwise import (abs, acos, add, allclose, asin, atan, ceil, clamp, clamp_max, clamp_min, cos, cosh, div,
                            eq, equal, erf, exp, expm1, floor, ge, gt, isfinite, isinf, isnan, le, lerp, log, log1p,
                            log2, log10, logical_not, lt, maximum, minimum, mul, ne, neg, pow, reciprocal, relu,
                            remainder, round, rsqrt, sigmoid, sign, sin, sinh, sqrt, square, sub, tan, tanh, trunc,
                            where, xlogy)
from .ops.reduce import (all, amax, amin, any, argmax, argmin, cumsum, gather, logsumexp, max, mean, min, norm,
                         prod, std, sum, var)
from .ops.shape import (cat, chunk, clone, flatten, flip, narrow, permute, reshape, select, split, squeeze, stack,
                        t, transpose, unbind, unsqueeze)
from .functional import log_softmax, softmax
from .tensor import Size, Tensor, cpu, device
from .tensor_str import set_printoptions

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16


def is_tensor(obj):
    """True for srcgrad tensors."""
    return isinstance(obj, Tensor)


def is_floating_point(t):
    return t.dtype.is_floating_point


def numel(t):
    return t.numel()


def typename(t):
    return t.type()


def detach(t):
    return t.detach()


def _tensors_first(fn, count, name):
    """``fn`` refusing numbers where PyTorch's function takes tensors only: its first
    ``count`` positional arguments (``torch.tanh(0.5)`` is a TypeError there)."""

    @_functools.wraps(fn)
    def checked(*args, **kwargs):
        for k, (a, role) in enumerate(zip(args[:count], ("input", "other"))):
            if not isinstance(a, Tensor):
                raise TypeError(f"{name}(): argument '{role}' (position {k + 1}) must be Tensor, "
                                f"not {type(a).__name__}")
        return fn(*args, **kwargs)
    return checked


for _name in ("abs acos asin atan ceil cos cosh erf exp expm1 floor log log1p log2 log10 neg reciprocal relu "
              "round rsqrt sigmoid sign sin sinh sqrt square tan tanh trunc logical_not isfinite isinf isnan "
              "all amax amin any argmax argmin cumsum logsumexp max mean min norm prod std sum var").split():
    globals()[_name] = _tensors_first(globals()[_name], 1, _name)
for _name in ("maximum", "minimum", "dot", "mm", "mv", "matmul", "bmm", "outer"):
    globals()[_name] = _tensors_first(globals()[_name], 2, _name)


def _number_first(fn):
    """``fn(a, b)`` where ``a`` may be a number, as PyTorch's arithmetic functions allow
    (``torch.add(1.0, t)``, ``torch.div(1.0, 2.0)``)."""

    @_functools.wraps(fn)
    def lifted(a, b, *args, **kwargs):
        if not isinstance(a, Tensor):
            a = _as_tensor(a, like=b) if isinstance(b, Tensor) else tensor(a)
        return fn(a, b, *args, **kwargs)
    return lifted


def _tensor_first_only(fn, name):
    """Comparisons: PyTorch takes no number as the first argument."""

    @_functools.wraps(fn)
    def checked(a, b, *args, **kwargs):
        if not isinstance(a, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(a).__name__}, {type(b).__name__}), but expected one of: (Tensor input, "
                            "Tensor other) (Tensor input, Number other)")
        return fn(a, b, *args, **kwargs)
    return checked


for _name in ("add", "sub", "mul", "div", "remainder"):
    globals()[_name] = _number_first(globals()[_name])
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    globals()[_name] = _tensor_first_only(globals()[_name], _name)

# other names for the same functions (bound after the checks above wrap them)
concat = cat
concatenate = cat
multiply = mul
subtract = sub
divide = div
true_divide = div
absolute = abs
clip = clamp
greater = gt
less = lt

# the names above are this package's interface, re-exported by srcgrad/__init__.py (submodules are not)
__all__ = [_n for _n, _v in list(globals().items()) if not _n.startswith("_") and not isinstance(_v, type(_methods))]
