"""Forward-mode AD for eager tensors (``torch.autograd.forward_ad``): a dual tensor carries a
tangent, and every op on it gives its result the tangent J·t.

Each op's J·t comes from the backward rule the op already has (ops/dual.py), by the
double-vjp identity (double_vjp.py): the vjp ``u ↦ Jᵀu`` is linear in u, so J·t = ∂/∂u ⟨Jᵀu, t⟩.
The op is run once more on fresh leaves with its backward recorded (``create_graph``), and the
tangent is the gradient of ⟨Jᵀu, t⟩ with respect to u. That costs a few times the op, only while a dual
level is open: entering the level puts a thin wrapper around the Tensor methods and the
``srcgrad``/``nn.functional`` functions, leaving it takes the wrappers away, so the eager
mode's speed outside forward AD is untouched. Tangents that require grad are
differentiated through (forward over reverse).

Only one level at a time, as in PyTorch. Ops called from code that kept a reference to a
function before the level opened (``from srcgrad import sin`` at import time) run unwrapped
and give no tangent.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
    ...     fwAD.unpack_dual((x * x).sum()).tangent
    tensor(2.)
"""
import collections
import functools
import itertools
import threading

from . import grad_mode
from .autograd_api import grad as autograd_grad
from .double_vjp import Linearization
from .patching import Patches
from .tensor import Tensor, wrap

_levels = itertools.count()
_patch_lock = threading.Lock()
_open = [0]             # dual levels open, all threads together: the wrappers stay while > 0
_patches = Patches()    # the wrappers in place while a dual level is open

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def _level():
    return getattr(grad_mode.state, "dual", None)


def enter_dual_level():
    """Open a dual level (``dual_level`` is the context manager for it); returns its number."""
    if _level() is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = next(_levels)
    grad_mode.state.dual = level
    with _patch_lock:
        if _open[0] == 0:
            _wrap_ops()
        _open[0] += 1
    return level


def exit_dual_level(*, level=None):
    """Close the open dual level: tangents made in it are no longer seen."""
    current = _level()
    if current is None or level is not None and level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    grad_mode.state.dual = None
    with _patch_lock:
        _open[0] -= 1
        if _open[0] == 0:
            _unwrap_ops()


class dual_level:
    """``with dual_level():`` — make_dual and unpack_dual work inside; tangents end with it.

    >>> import srcgrad as torch
    >>> import srcgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(torch.tensor(1.0), torch.tensor(2.0))
    ...     t = fwAD.unpack_dual(x * 3.0).tangent
    >>> t
    tensor(6.)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _tangent(t, level):
    fw = t.__dict__.get("_fw") if isinstance(t, Tensor) else None
    return fw[1] if fw is not None and fw[0] == level else None


def _attach(t, tangent, level):
    t.__dict__["_fw"] = (level, tangent)
    return t


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` (same shape) as its forward gradient."""
    current = _level()
    if current is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    with _suspended():
        out = tensor.view(tensor.shape) if tensor.requires_grad else wrap(tensor._data)
    return _attach(out, tangent, current)


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of ``tensor`` without its tangent, and the tangent (None
    where it has none at the open level)."""
    current = _level()
    tangent = _tangent(tensor, current) if current is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = tensor.view(tensor.shape) if tensor.requires_grad else wrap(tensor._data)
    return UnpackedDualTensor(primal, tangent)


class _suspended:
    """Ops inside run as plain ops (the wrapper's own work, and the op it wraps)."""

    def __enter__(self):
        self.level = _level()
        grad_mode.state.dual = None

    def __exit__(self, *exc):
        grad_mode.state.dual = self.level
        return False


def _duals(args, kwargs, level):
    """(path, tensor, tangent) for every dual tensor among the arguments (lists and tuples too)."""
    found = []
    for key, a in itertools.chain(enumerate(args), kwargs.items()):
        if isinstance(a, (list, tuple)):
            found += [((key, j), x, _tangent(x, level)) for j, x in enumerate(a) if _tangent(x, level) is not None]
        elif _tangent(a, level) is not None:
            found.append(((key, None), a, _tangent(a, level)))
    return found


def _replace(args, kwargs, new):
    args, kwargs = list(args), dict(kwargs)
    for (key, j), value in new.items():
        holder = args if isinstance(key, int) else kwargs
        if j is None:
            holder[key] = value
        else:
            seq = list(holder[key])
            seq[j] = value
            holder[key] = type(holder[key])(seq) if isinstance(holder[key], tuple) else seq
    return args, kwargs


def _float_outputs(out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _jvp(fn, args, kwargs, duals):
    """The tangents (J·t) of ``fn``'s float outputs, by the double-vjp identity (None for an
    output that does not depend on a dual argument). Where grad mode is on and an argument or
    a tangent requires grad, the tangents are recorded as functions of them (forward over
    reverse: a Hessian-vector product is the gradient of a tangent)."""
    outer = grad_mode.state.enabled and (any(t.requires_grad for _, _, t in duals) or _any_requires_grad(args, kwargs))
    with grad_mode.enable_grad():
        # a dual argument that requires grad is differentiated as it is, so that its tangent
        # stays a function of it; the others through a fresh leaf
        leaves = {path: x if outer and x.requires_grad else x.detach().requires_grad_() for path, x, _ in duals}
        a, k = _replace(args, kwargs, leaves)
        outs = _float_outputs(fn(*a, **k))
        live = [o for o in outs if o.requires_grad]
        if not live:
            return [None] * len(outs)
        us = [wrap(o._data * 0).requires_grad_() for o in live]
        # one entry per tensor: a dual tensor passed twice (x * x) is one input of the graph,
        # whose vjp already sums both uses
        unique = {}
        for (path, _, t) in duals:
            unique.setdefault(id(leaves[path]), (leaves[path], t))
        inputs = [leaf for leaf, _ in unique.values()]
        # autograd.grad casts each tangent to its vjp's dtype (both are floating point)
        tangents = Linearization(live, inputs, us, _grad_allow_unused).push([t for _, t in unique.values()],
                                                                           create_graph=outer)
        # an output the duals reach with a zero derivative has a zero tangent
        tangents = [t if t is not None else wrap(o._data * 0) for t, o in zip(tangents, live)]
    it = iter(tangents)
    return [next(it) if o.requires_grad else None for o in outs]


def _grad_allow_unused(outputs, inputs, grad_outputs, create_graph):
    return autograd_grad(outputs, inputs, grad_outputs, create_graph=create_graph, allow_unused=True)


def _any_requires_grad(args, kwargs):
    for a in itertools.chain(args, kwargs.values()):
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) and x.requires_grad for x in a):
            return True
    return False


def _forward(fn):
    """``fn`` giving its outputs tangents where an argument is dual (at the open level)."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        level = _level()
        if level is None:
            return fn(*args, **kwargs)
        duals = _duals(args, kwargs, level)
        if not duals:
            with _suspended():
                return fn(*args, **kwargs)
        with _suspended():
            out = fn(*args, **kwargs)
            tangents = _jvp(fn, args, kwargs, duals)
        for o, t in zip(_float_outputs(out), tangents):
            if t is not None:
                _attach(o, t, level)
        return out
    return op


def _inplace(fn, twin):
    """An in-place op ``x.op_(...)``: the tangent of the out-of-place ``twin`` goes to x."""
    @functools.wraps(fn)
    def op(x, *args, **kwargs):
        level = _level()
        if level is None:
            return fn(x, *args, **kwargs)
        duals = _duals((x,) + args, kwargs, level)
        if not duals:
            with _suspended():
                return fn(x, *args, **kwargs)
        with _suspended():
            tangents = _jvp(twin, (x,) + args, kwargs, duals) if twin is not None else [None]
            out = fn(x, *args, **kwargs)
        t = tangents[0] if tangents else None
        if t is not None:
            _attach(x, t.reshape(x.shape) if tuple(t.shape) != tuple(x.shape) else t, level)
        else:
            x.__dict__.pop("_fw", None)
        return out
    return op


def _setitem(fn):
    """``x[idx] = value``: x's tangent is its old one (or 0) with value's tangent (or 0) at idx."""
    @functools.wraps(fn)
    def op(x, idx, value):
        level = _level()
        tx, tv = (_tangent(x, level), _tangent(value, level)) if level is not None else (None, None)
        if tx is None and tv is None:
            with _suspended():
                return fn(x, idx, value)
        with _suspended():
            out = fn(x, idx, value)
            new = tx.clone() if tx is not None else wrap(x._data * 0)
            new[idx] = tv if tv is not None else 0.0
        _attach(x, new, level)
        return out
    return op


def _function_apply(apply):
    """``Function.apply`` on dual tensors: the tangents from the Function's own ``jvp`` where it
    defines one, else from its ``backward`` by the double-vjp identity."""
    def op(cls, *args, **kwargs):
        level = _level()
        duals = _duals(args, kwargs, level) if level is not None else []
        if not duals:
            return apply(cls, *args, **kwargs)
        from .function import Function, node_class
        if cls.jvp is Function.jvp:
            with _suspended():
                out = apply(cls, *args, **kwargs)
                tangents = _jvp(lambda *a, **k: apply(cls, *a, **k), args, kwargs, duals)
        else:
            with _suspended():
                out = apply(cls, *args, **kwargs)
                ctx = node_class(cls)()
                with grad_mode.no_grad():
                    cls.forward(ctx, *[a.detach() if isinstance(a, Tensor) else a for a in args], **kwargs)
                    given = [_tangent(a, level) if isinstance(a, Tensor) else None for a in args]
                    got = cls.jvp(ctx, *given)
            tangents = list(got) if isinstance(got, tuple) else [got]
        for o, t in zip(_float_outputs(out), tangents):
            if t is not None:
                _attach(o, t, level)
        return out
    return op


def _wrap_ops():
    """Put the wrappers around the Tensor methods and the module functions."""
    from .. import eager
    from ..nn import functional as F
    from . import methods
    from .ops import conv, norm, padding, pooling  # noqa: F401  (nn.functional's lazily loaded names, now loaded)
    from .patching import REEXPORTS
    table = {**methods.OPERATORS, **methods.METHODS}
    for name, fn in table.items():
        current = getattr(Tensor, name)
        if name == "__setitem__":
            new = _setitem(current)
        elif name.endswith("_") and not name.startswith("__") or name.startswith("__i"):
            twin = table.get(name[:-1]) if name.endswith("_") else table.get("__" + name[3:])
            new = _inplace(current, twin)
        else:
            new = _forward(current)
        _patches.put(Tensor, name, new)
    from .function import Function
    _patches.put(Function, "apply", classmethod(_function_apply(Function.__dict__["apply"].__func__)))
    for name, fn in methods.PROPERTIES.items():
        _patches.put(Tensor, name, property(_forward(fn)))
    lazy = [name for group in ("_CONV", "_POOLING", "_PADDING", "_NORM") for name in getattr(F, group, ())]
    for owner in (*REEXPORTS, eager, F):
        for name in list(getattr(owner, "__all__", None) or dir(owner)) + lazy:
            fn = getattr(owner, name, None)
            if callable(fn) and not isinstance(fn, type) and _is_op(fn) and (owner, name) not in _patches:
                _patches.put(owner, name, _forward(fn))


def _is_op(fn):
    module = getattr(fn, "__module__", "") or ""
    return module.startswith(("srcgrad.eager.ops", "srcgrad.eager.functional", "srcgrad.nn.functional"))


def _unwrap_ops():
    _patches.undo()


__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor"]
