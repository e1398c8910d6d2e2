"""Elementwise ops, each with its backward node right beside it.

The backward rules use Tensor ops, so with ``create_graph=True`` they are recorded too and
higher-order gradients work.

Example:
    >>> import srcgrad as torch
    >>> x = torch.tensor([0.5], requires_grad=True)
    >>> torch.tanh(x).backward(torch.ones(1)); x.grad
    tensor([0.7864])
"""
import numpy as np

from .. import dtypes, grad_mode
from ..graph import Node, define_saved
from ..tensor import Tensor, wrap
from . import dual
from ._erf import erf as _erf
from ._core import OUT, broadcast_error, needs_grad, operands, record, sum_to, to_float, zero_derivative

_state = grad_mode.state

# ------------------------------------------------------------------------------- binary ops


class AddBackward0(Node):
    __slots__ = ("shapes", "alpha")     # alpha is set only when it is not 1

    def apply(self, g):
        (na, _), (nb, _) = self.next_functions
        sa, sb = self.shapes
        return (sum_to(g, sa) if na is not None else None,
                sum_to(g, sb) if nb is not None else None)


class SubBackward0(Node):
    __slots__ = ("shapes", "alpha")

    def apply(self, g):
        sa, sb = self.shapes
        return (sum_to(g, sa) if self.needs_input_grad(0) else None,
                sum_to(-g, sb) if self.needs_input_grad(1) else None)


class RsubBackward1(Node):     # scalar - tensor
    __slots__ = ()

    def apply(self, g):
        return -g


class MulBackward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g):
        a, b = self.saved()
        (na, _), (nb, _) = self.next_functions
        sa, sb = self.shapes
        return (sum_to(g * b, sa) if na is not None else None,
                sum_to(g * a, sb) if nb is not None else None)


class DivBackward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g):
        a, b = self.saved()
        sa, sb = self.shapes
        ga = gb = None
        if self.needs_input_grad(0):
            ga = sum_to(g / b, sa)
        if self.needs_input_grad(1):
            gb = sum_to(-g * a / (b * b), sb)
        return ga, gb


def _binary(a, b, np_fn, node_cls, save):
    """The hot path of the eager mode: one numpy call, one tensor, one node."""
    bt = b if isinstance(b, Tensor) else None
    if bt is not None and a._data.dtype is bt._data.dtype:
        ad, bd, d = a._data, bt._data, None          # the common case, without the promotion rules
    else:
        ad, bd, d = operands(a, b)
        if ad is NotImplemented:
            return NotImplemented
    try:
        out = np_fn(ad, bd)
    except ValueError:
        raise broadcast_error(ad.shape, np.shape(bd)) from None
    t = wrap(out)
    if not _state.enabled:
        return t
    a_rg = a._rg
    b_rg = bt is not None and bt._rg
    if not (a_rg or b_rg) or (d is not None and not d.is_floating_point):
        return t
    # a is needed only for b's gradient (and b for a's): saving less lets a.mul_(2) go on
    saved = (a if b_rg else None, b if a_rg else None) if save else ()
    node = node_cls((a, bt), saved, t)
    node.shapes = (ad.shape, bd.shape if bt is not None else ())
    t.grad_fn = node
    t._rg = True
    return t


def add(a, b, alpha=1):
    """``a + alpha * b`` with broadcasting."""
    if alpha != 1:
        b = b * alpha
    if not isinstance(a, Tensor):
        a, b = b, a
    t = _binary(a, b, np.add, AddBackward0, False)
    if alpha != 1 and t is not NotImplemented and t.grad_fn is not None:
        t.grad_fn.alpha = alpha
    return t


def sub(a, b, alpha=1):
    if a.dtype is dtypes.bool_ or isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype is dtypes.bool_):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if alpha != 1:
        b = b * alpha
    t = _binary(a, b, np.subtract, SubBackward0, False)
    if alpha != 1 and t is not NotImplemented and t.grad_fn is not None:
        t.grad_fn.alpha = alpha
    return t


def rsub(a, b):
    """``b - a`` for a Python scalar ``b``."""
    if isinstance(b, Tensor):
        return sub(b, a)
    ad, bd, d = operands(a, b)
    if ad is NotImplemented:
        return NotImplemented
    return record(np.subtract(bd, ad), RsubBackward1, (a,))


def mul(a, b):
    if not isinstance(a, Tensor):
        a, b = b, a
    return _binary(a, b, np.multiply, MulBackward0, True)


def div(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        return wrap(np.trunc(div(a, b)._data))
    ad, bd, d = operands(a, b)
    if ad is NotImplemented:
        return NotImplemented
    if ad.dtype.kind != "f":                       # true division of integers gives floats
        fd = dtypes.get_default_dtype().np
        ad, bd = ad.astype(fd), np.asarray(bd).astype(fd)
    try:
        out = np.true_divide(ad, bd)
    except ValueError:
        raise broadcast_error(ad.shape, np.shape(bd)) from None
    bt = b if isinstance(b, Tensor) else None
    if not needs_grad(a, bt):
        return wrap(out)
    # b is needed for both gradients, a only for b's
    t = record(out, DivBackward0, (a, bt), saved=(a if bt is not None and bt._rg else None, b))
    t.grad_fn.shapes = (ad.shape, np.shape(bd))
    return t


def rdiv(a, b):
    """``b / a`` for a Python scalar ``b``: PyTorch records it as reciprocal, then multiply."""
    if isinstance(b, Tensor):
        return div(b, a)
    return mul(reciprocal(a), b)


def floor_divide(a, b):
    ad, bd, d = operands(a, b)
    if ad is NotImplemented:
        return NotImplemented
    return wrap(np.floor_divide(ad, bd))


def remainder(a, b):
    ad, bd, d = operands(a, b)
    if ad is NotImplemented:
        return NotImplemented
    out = np.remainder(ad, bd)
    bt = b if isinstance(b, Tensor) else None
    if ad.dtype.kind != "f" or not needs_grad(a, bt):
        return wrap(out)
    t = record(out, RemainderBackward0, (a, bt), saved=(a, b))
    t.grad_fn.shapes = (ad.shape, np.shape(bd))
    return t


class RemainderBackward0(Node):
    """a % b is a - floor(a / b) * b: d/da is 1, d/db is -floor(a / b) (PyTorch's
    RemainderBackward1; the divisor's gradient was missing, found by the fuzzer)."""
    __slots__ = ("shapes",)

    def apply(self, g):
        a, b = self.saved()
        sa, sb = self.shapes
        ga = sum_to(g, sa) if self.needs_input_grad(0) else None
        gb = sum_to(-g * (a // b), sb) if self.needs_input_grad(1) else None
        return ga, gb


# ----------------------------------------------------------------------------------- pow


class PowBackward0(Node):     # tensor ** scalar
    __slots__ = ("exponent",)

    def apply(self, g):
        (x,) = self.saved()
        e = self.exponent
        if e == 0:
            return g * 0.0
        return g * e * x ** (e - 1)


class PowBackward1(Node):     # tensor ** tensor
    __slots__ = ()

    def apply(self, g):
        x, y, out = self.saved()
        gx = gy = None
        if self.needs_input_grad(0):
            gx = sum_to(g * y * x ** (y - 1), dual.shape(x))
        if self.needs_input_grad(1):
            zero = dual.data(x) == 0
            safe_log = dual.where(zero, 0.0, dual.log(dual.where(zero, 1.0, x)))
            gy = sum_to(g * out * safe_log, dual.shape(y))
        return gx, gy


class PowBackward2(Node):     # scalar ** tensor
    __slots__ = ("base",)

    def apply(self, g):
        _, out = self.saved()       # the exponent is saved (as in PyTorch) but not needed here
        return g * out * float(np.log(self.base))


def pow(x, exponent):
    """``x ** exponent`` for tensors and Python numbers on either side."""
    if not isinstance(x, Tensor):
        return rpow(exponent, x)
    if isinstance(exponent, Tensor):
        xd, ed, d = operands(x, exponent)
        if xd.dtype.kind in "iu" and ed.dtype.kind in "iu" and (ed < 0).any():
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        try:
            out = np.power(xd, ed)
        except ValueError:
            raise broadcast_error(xd.shape, ed.shape) from None
        if not needs_grad(x, exponent) or out.dtype.kind != "f":
            return wrap(out)
        return record(out, PowBackward1, (x, exponent), saved=(x, exponent, OUT))
    xd, ed, d = operands(x, exponent)
    if xd is NotImplemented:
        return NotImplemented
    if xd.dtype.kind in "iu" and np.ndim(ed) == 0 and ed < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    out = np.power(xd, ed)
    if not needs_grad(x) or out.dtype.kind != "f":
        return wrap(out)
    t = record(out, PowBackward0, (x,), saved=(x,))
    t.grad_fn.exponent = exponent
    return t


def rpow(x, base):
    """``base ** x`` for a Python number ``base``."""
    xd, bd, d = operands(x, base)
    if xd is NotImplemented:
        return NotImplemented
    out = np.power(bd, xd)
    if not needs_grad(x) or out.dtype.kind != "f":
        return wrap(out)
    t = record(out, PowBackward2, (x,), saved=(x, OUT))
    t.grad_fn.base = base
    return t


def square(x):
    return pow(x, 2)


# ---------------------------------------------------------------------------- unary ops


def _unary_node(name, rule, saves):
    """A Node class whose ``apply`` is ``rule(g, *saved)``."""
    def apply(self, g):
        return rule(g, *self.saved())
    return type(name, (Node,), {"__slots__": (), "apply": apply, "__doc__": f"Backward of {name}.",
                                "saves": saves[0] if saves else None})


def _unary(np_fn, node_cls, x, float_only=True):
    xd = x._data
    if float_only and xd.dtype.kind != "f":
        xd = to_float(x)
    t = wrap(np_fn(xd))
    if _state.enabled and x._rg:
        saves = node_cls.saves
        t.grad_fn = node_cls((x,), (OUT,) if saves == "out" else ((x,) if saves == "x" else ()), t)
        t._rg = True
    return t


NegBackward0 = _unary_node("NegBackward0", lambda g: -g, ())
ExpBackward0 = _unary_node("ExpBackward0", lambda g, y: g * y, ("out",))
LogBackward0 = _unary_node("LogBackward0", lambda g, x: g / x, ("x",))
Log2Backward0 = _unary_node("Log2Backward0", lambda g, x: g / (x * float(np.log(2.0))), ("x",))
Log10Backward0 = _unary_node("Log10Backward0", lambda g, x: g / (x * float(np.log(10.0))), ("x",))
Log1PBackward0 = _unary_node("Log1PBackward0", lambda g, x: g / (x + 1), ("x",))
Expm1Backward0 = _unary_node("Expm1Backward0", lambda g, y: g * (y + 1), ("out",))
SinBackward0 = _unary_node("SinBackward0", lambda g, x: g * dual.cos(x), ("x",))
CosBackward0 = _unary_node("CosBackward0", lambda g, x: g * -dual.sin(x), ("x",))
TanBackward0 = _unary_node("TanBackward0", lambda g, y: g * (y * y + 1), ("out",))
AsinBackward0 = _unary_node("AsinBackward0", lambda g, x: g / dual.sqrt(1 - x * x), ("x",))
AcosBackward0 = _unary_node("AcosBackward0", lambda g, x: -g / dual.sqrt(1 - x * x), ("x",))
AtanBackward0 = _unary_node("AtanBackward0", lambda g, x: g / (x * x + 1), ("x",))
SinhBackward0 = _unary_node("SinhBackward0", lambda g, x: g * dual.cosh(x), ("x",))
CoshBackward0 = _unary_node("CoshBackward0", lambda g, x: g * dual.sinh(x), ("x",))
TanhBackward0 = _unary_node("TanhBackward0", lambda g, y: g * (1 - y * y), ("out",))
SigmoidBackward0 = _unary_node("SigmoidBackward0", lambda g, y: g * (y * (1 - y)), ("out",))
SqrtBackward0 = _unary_node("SqrtBackward0", lambda g, y: g / (2 * y), ("out",))
RsqrtBackward0 = _unary_node("RsqrtBackward0", lambda g, y: g * (-0.5 * y * y * y), ("out",))
ReciprocalBackward0 = _unary_node("ReciprocalBackward0", lambda g, y: g * -(y * y), ("out",))
AbsBackward0 = _unary_node("AbsBackward0", lambda g, x: zero_derivative(g * dual.sign(x), x), ("x",))
ReluBackward0 = _unary_node("ReluBackward0", lambda g, y: zero_derivative(g * (y > 0), y), ("out",))
ErfBackward0 = _unary_node("ErfBackward0",
                           lambda g, x: g * (2.0 / float(np.sqrt(np.pi))) * dual.exp(-(x * x)), ("x",))


def _sigmoid(d):
    if d.dtype.itemsize >= 4:
        # 1 / (1 + exp(-x)) in place, twice as fast as two branches: exp(-x) overflowing to inf
        # gives exactly 0, right to float32/float64 precision (the true value is below 1e-38)
        with np.errstate(over="ignore"):
            out = np.negative(d, out=np.empty_like(d))      # (an array even for a 0-d d)
            np.exp(out, out=out)
            out += 1
            return np.reciprocal(out, out=out)
    # float16: exp(-|x|) never overflows; the two branches meet at 0
    e = np.exp(-np.abs(d))
    return np.where(d >= 0, 1 / (1 + e), e / (1 + e)).astype(d.dtype, copy=False)


def neg(x):
    if x.dtype is dtypes.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return _unary(np.negative, NegBackward0, x, float_only=False)


def exp(x): return _unary(np.exp, ExpBackward0, x)
def log(x): return _unary(np.log, LogBackward0, x)
def log2(x): return _unary(np.log2, Log2Backward0, x)
def log10(x): return _unary(np.log10, Log10Backward0, x)
def log1p(x): return _unary(np.log1p, Log1PBackward0, x)
def expm1(x): return _unary(np.expm1, Expm1Backward0, x)
def sin(x): return _unary(np.sin, SinBackward0, x)
def cos(x): return _unary(np.cos, CosBackward0, x)
def tan(x): return _unary(np.tan, TanBackward0, x)
def asin(x): return _unary(np.arcsin, AsinBackward0, x)
def acos(x): return _unary(np.arccos, AcosBackward0, x)
def atan(x): return _unary(np.arctan, AtanBackward0, x)
def sinh(x): return _unary(np.sinh, SinhBackward0, x)
def cosh(x): return _unary(np.cosh, CoshBackward0, x)
def tanh(x): return _unary(np.tanh, TanhBackward0, x)
def sigmoid(x): return _unary(_sigmoid, SigmoidBackward0, x)
def sqrt(x): return _unary(np.sqrt, SqrtBackward0, x)
def rsqrt(x): return _unary(lambda d: 1 / np.sqrt(d), RsqrtBackward0, x)
def reciprocal(x): return _unary(np.reciprocal, ReciprocalBackward0, x)
def erf(x): return _unary(_erf, ErfBackward0, x)
def abs(x): return _unary(np.abs, AbsBackward0, x, float_only=False)
def relu(x): return _unary(lambda d: np.maximum(d, 0).astype(d.dtype, copy=False), ReluBackward0, x,
                           float_only=False)


def sign(x):
    return wrap(np.sign(x._data))


def _no_grad_unary(np_fn):
    def op(x):
        out = np_fn(x._data)
        if not needs_grad(x):
            return wrap(out)
        # floor, ceil, round: zero gradient almost everywhere, as in PyTorch
        return record(out, ZeroGradBackward, (x,))
    return op


class ZeroGradBackward(Node):
    __slots__ = ()

    def apply(self, g):
        return g * 0.0


floor = _no_grad_unary(np.floor)
ceil = _no_grad_unary(np.ceil)
round = _no_grad_unary(np.round)
trunc = _no_grad_unary(np.trunc)


# --------------------------------------------------------------------------- comparisons


def _compare(np_fn):
    def op(a, b):
        ad, bd, d = operands(a, b)
        if ad is NotImplemented:
            return NotImplemented
        try:
            return wrap(np_fn(ad, bd))
        except ValueError:
            raise broadcast_error(ad.shape, np.shape(bd)) from None
    return op


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)


def logical_not(x):
    return wrap(np.logical_not(x._data))


def bitwise_and(a, b):
    return wrap(np.bitwise_and(a._data, b._data if isinstance(b, Tensor) else b))


def bitwise_or(a, b):
    return wrap(np.bitwise_or(a._data, b._data if isinstance(b, Tensor) else b))


def bitwise_xor(a, b):
    return wrap(np.bitwise_xor(a._data, b._data if isinstance(b, Tensor) else b))


def invert(x):
    return wrap(np.invert(x._data))


def isnan(x): return wrap(np.isnan(x._data))
def isinf(x): return wrap(np.isinf(x._data))
def isfinite(x): return wrap(np.isfinite(x._data))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(a._data, b._data if isinstance(b, Tensor) else b, rtol, atol, equal_nan))


def equal(a, b):
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))


# -------------------------------------------------------------------- where, max, clamp


class WhereBackward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g):
        c = dual.data(self.saved()[0])
        sa, sb = self.shapes
        return (sum_to(dual.where(c, g, 0.0), sa) if self.needs_input_grad(0) else None,
                sum_to(dual.where(c, 0.0, g), sb) if self.needs_input_grad(1) else None)


def where(cond, a, b):
    """Elementwise ``a if cond else b``."""
    c = cond._data if isinstance(cond, Tensor) else np.asarray(cond)
    at = a if isinstance(a, Tensor) else None
    bt = b if isinstance(b, Tensor) else None
    ts = [t for t in (at, bt) if t is not None]
    d = dtypes.result_type(ts, [s for s in (a, b) if not isinstance(s, Tensor)])
    ad = np.asarray(a._data if at is not None else a, dtype=d.np)
    bd = np.asarray(b._data if bt is not None else b, dtype=d.np)
    out = np.where(c, ad, bd)
    if not needs_grad(at, bt):
        return wrap(out)
    t = record(out, WhereBackward0, (at, bt), saved=(cond if isinstance(cond, Tensor) else wrap(c),))
    t.grad_fn.shapes = (ad.shape, bd.shape)
    return t


class MaximumBackward0(Node):
    __slots__ = ("sign",)

    def apply(self, g):
        a, b = self.saved()
        # ties share the gradient half and half, as in PyTorch
        ad, bd = dual.data(a), dual.data(b)
        wa = dual.constant(np.where(ad == bd, 0.5, (ad > bd) if self.sign > 0 else (ad < bd)).astype(ad.dtype), g)
        return (sum_to(g * wa, ad.shape) if self.needs_input_grad(0) else None,
                sum_to(g * (1 - wa), bd.shape) if self.needs_input_grad(1) else None)


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def _extremum(a, b, np_fn, cls, sign):
    b = b if isinstance(b, Tensor) else wrap(np.asarray(b, dtype=a._data.dtype))
    ad, bd, d = operands(a, b)
    try:
        out = np_fn(ad, bd)
    except ValueError:
        raise broadcast_error(ad.shape, bd.shape) from None
    if not needs_grad(a, b):
        return wrap(out)
    t = record(out, cls, (a, b), saved=(a, b))
    t.grad_fn.sign = sign
    return t


def maximum(a, b): return _extremum(a, b, np.maximum, MaximumBackward0, 1)
def minimum(a, b): return _extremum(a, b, np.minimum, MinimumBackward0, -1)


class ClampBackward1(Node):
    __slots__ = ("min", "max")      # as given: numbers, arrays or None

    def apply(self, g):
        (x,) = self.saved()
        d = dual.data(x)
        mask = np.ones(d.shape, dtype=d.dtype)
        if self.min is not None:
            mask = mask * (d >= _clamp_bound(self.min))
        if self.max is not None:
            mask = mask * (d <= _clamp_bound(self.max))
        return g * dual.constant(mask.astype(d.dtype, copy=False), g)


def _clamp_bound(b):
    return b._data if isinstance(b, Tensor) else b


def clamp(x, min=None, max=None):
    """Limit every element to [min, max]; the gradient is 0 where it was clipped."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    d = x._data
    lo = min._data if isinstance(min, Tensor) else min
    hi = max._data if isinstance(max, Tensor) else max
    out = np.clip(d, lo, hi).astype(d.dtype, copy=False)
    if not needs_grad(x):
        return wrap(out)
    t = record(out, ClampBackward1, (x,), saved=(x,))
    t.grad_fn.min, t.grad_fn.max = min, max
    return t


def clamp_min(x, m): return clamp(x, min=m)
def clamp_max(x, m): return clamp(x, max=m)


def float_power(x, e):
    return pow(x.double(), e)


def lerp(a, b, w):
    return a + (b - a) * w


def xlogy(x, y):
    return where(x == 0, 0.0, x * log(y))


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_self, ...: see graph.define_saved; pack_order is the order PyTorch packs them in)


def _alpha(n):
    return getattr(n, "alpha", 1)


define_saved(AddBackward0, alpha=_alpha)
define_saved(SubBackward0, alpha=_alpha)
define_saved(RsubBackward1, alpha=lambda n: 1)
define_saved(MulBackward0, pack_order=(1, 0), self=0, other=1)
define_saved(DivBackward0, pack_order=(1, 0), self=0, other=1)
define_saved(RemainderBackward0, pack_order=(1, 0), self=0, other=1)
define_saved(PowBackward0, self=0, exponent=lambda n: n.exponent)
define_saved(PowBackward1, pack_order=(1, 0, 2), self=0, exponent=1, result=2)
define_saved(PowBackward2, self=lambda n: n.base, exponent=0, result=1)
define_saved(MaximumBackward0, pack_order=(1, 0), self=0, other=1)
define_saved(WhereBackward0, condition=0)
define_saved(ClampBackward1, self=0, min=lambda n: n.min, max=lambda n: n.max)
for _cls in (LogBackward0, Log2Backward0, Log10Backward0, Log1PBackward0, SinBackward0, CosBackward0, AsinBackward0,
             AcosBackward0, AtanBackward0, SinhBackward0, CoshBackward0, AbsBackward0, ErfBackward0):
    define_saved(_cls, self=0)
for _cls in (ExpBackward0, Expm1Backward0, TanBackward0, TanhBackward0, SigmoidBackward0, SqrtBackward0,
             RsqrtBackward0, ReciprocalBackward0, ReluBackward0):
    define_saved(_cls, result=0)
