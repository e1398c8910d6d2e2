"""numpy's shapes and views: reshape, ravel, flatten, copy, squeeze, expand_dims, transpose,
swapaxes, moveaxis, flip(lr/ud), astype, asarray and the array literal np.array([...]).

Their arguments are read from the source itself (a shape ``(n, m)`` or ``y.shape``, an axis
that must be a constant, a dtype such as ``np.float32`` or ``y.dtype``), so these calls are
lowered here, before the frontend lowers arguments as values (``lower_shape_call``).

Views: transposes, flips, squeeze and expand_dims are views of their array, as in numpy.
``reshape`` (and ravel) is a view when its array is C-contiguous and a copy otherwise; numpy
can view a few other layouts too, so a function that writes in place into memory a reshape
shares is refused (``refuse_layout_dependent_writes``) unless the reshaped array is a fresh
one (np.zeros, x.copy(), ...), where both are views.

Example:
    >>> import numpy as np
    >>> import srcgrad
    >>> def f(x):
    ...     return np.sum(np.flip(x.reshape(2, 3), 1)[0])
    >>> srcgrad.grad(f)(np.ones(6))
    array([1., 1., 1., 0., 0., 0.])
"""
import ast

import numpy as np

from ..errors import UnsupportedSyntaxError
from ..ir.memory import Buffers
from ..ir.primitives import PRIMITIVES
from ..ir.types import BOOL, I64
from ..trees import Tree
from .dtypes import DTYPE_VALUES, dtype_of
from .indexing import integer
from .numpy_literals import array_literal



# ---------------------------------------------------------------------- reading arguments
def constant_int(lw, node, env, what):
    """An int known at compile time (a literal or a global): axes are part of the type."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -constant_int(lw, node.operand, env, what)
    v = lw.expr(node, env)
    op = v.owner
    if v.type is not I64 or op is None or op.prim != "const":
        lw.unsupported(node, f"{what} that is not a constant integer", f"write {what} as a literal, e.g. 0 or -1")
    return op.attrs["value"]


def constant_ints(lw, node, env, what):
    """An int or a tuple of ints known at compile time (a list: the tuple)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(constant_int(lw, e, env, what) for e in node.elts)
    obj = lw.global_object(node)
    if isinstance(obj, tuple) and all(isinstance(k, int) for k in obj):
        return obj
    return (constant_int(lw, node, env, what),)


def shape_sizes(lw, node, env):
    """The sizes a shape argument gives: ``n``, ``(n, m)``, ``[n, m]``, ``y.shape``, a global
    tuple or a local one, as int values (``np.zeros(x.shape)``, ``x.reshape(y.shape)``).

    Example::

        shape_sizes(lw, ast.parse("(n, 2)", mode="eval").body, env)      # [%n, const 2]
    """
    if isinstance(node, (ast.Tuple, ast.List)):
        sizes = [lw.expr(e, env) for e in node.elts]
    elif isinstance(node, ast.Attribute) and node.attr == "shape" and not lw.is_global_name(node.value):
        arr = lw.expr(node.value, env)
        if not arr.type.is_array:
            lw.typing_error(node, f"only arrays have a shape, not {arr.type}")
        sizes = [lw.emit(node, "shape", [arr], {"axis": k}) for k in range(arr.type.ndim)]
    elif isinstance(lw.global_object(node), tuple):
        sizes = [lw.b.const(k) for k in lw.global_object(node)]
    else:
        v = lw.expr_any(node, env)          # a number, or a local tuple (s = x.shape)
        sizes = list(v.items) if isinstance(v, Tree) and v.kind is not dict else [v]
        if any(isinstance(k, Tree) or not hasattr(k, "type") for k in sizes):
            lw.typing_error(node, f"{ast.unparse(node)} is not a shape (an int or a tuple of ints)")
    for v in sizes:
        if v.type not in (I64, BOOL):
            lw.typing_error(node, f"array sizes must be integers, got {v.type}")
    return sizes


def _normal_axes(lw, node, axes, ndim, what):
    """Axes counted from the front (-1 is the last), each once, each in range."""
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            lw.typing_error(node, f"{what}: axis {a} is out of bounds for an array of {ndim} dimensions")
        out.append(a + ndim if a < 0 else a)
    if len(set(out)) != len(out):
        lw.typing_error(node, f"{what}: repeated axis in {tuple(axes)}")
    return tuple(out)


def _array_arg(lw, node, x, what):
    if not x.type.is_array:
        lw.typing_error(node, f"{what} needs an array, got {x.type} (srcgrad has no 0-d arrays)")
    return x


def _keywords(lw, node, what, allowed):
    """The call's keywords by name; one not in ``allowed`` is refused, naming it."""
    kws = {}
    for kw in node.keywords:
        if kw.arg not in allowed:
            lw.unsupported(node, f"the keyword {kw.arg}= of {what}",
                           f"{what} takes {', '.join(k + '=' for k in allowed)}" if allowed else None)
        kws[kw.arg] = kw.value
    return kws


def _order_c(lw, node, kws, what):
    order = kws.get("order")
    if order is not None and not (isinstance(order, ast.Constant) and order.value == "C"):
        lw.unsupported(node, f"{what} with order={ast.unparse(order)}", "only order='C' (the default) is supported")


# ---------------------------------------------------------------------- the calls
def _reshape(lw, node, x, args, kws, env, what):
    _order_c(lw, node, kws, what)
    shape = kws.get("shape", kws.get("newshape"))
    if shape is not None:
        args = args + [shape]
    if not args:
        lw.typing_error(node, f"{what} needs the new shape")
    sizes = shape_sizes(lw, args[0], env) if len(args) == 1 else \
        [integer(lw, a, env, "array sizes") for a in args]
    return lw.emit(node, "reshape", [x] + [lw.b.convert(s, I64) for s in sizes])


def _ravel(lw, node, x, args, kws, env, what):
    _order_c(lw, node, kws, what)
    if args:
        lw.typing_error(node, f"{what} takes no arguments but the array")
    flat = lw.emit(node, "reshape", [x, lw.emit(node, "size", [x])])
    return lw.emit(node, "copy", [flat]) if what.endswith("flatten()") else flat


def _copy(lw, node, x, args, kws, env, what):
    _order_c(lw, node, kws, what)
    return lw.emit(node, "copy", [x])


def _restride(lw, node, x, kind, axes):
    if kind == "permute" and axes == tuple(range(x.type.ndim)):
        return x        # numpy hands back a view of x; unchanged strides: x itself reads the same
    return lw.emit(node, "restride", [x], {"kind": kind, "axes": axes})


class NeedsUnitAxes(UnsupportedSyntaxError):
    """``x.squeeze()`` of an argument of a function not specialised on its arguments' axes of
    size 1: api.py compiles it again with them (any other caller shows the refusal)."""


def _squeeze(lw, node, x, args, kws, env, what):
    axis = args[0] if args else kws.get("axis")
    if axis is None or isinstance(axis, ast.Constant) and axis.value is None:
        axes = _unit_axes(lw, node, x, what)
    else:
        axes = _normal_axes(lw, node, constant_ints(lw, axis, env, "the axis"), x.type.ndim, what)
    if len(axes) == x.type.ndim:
        lw.unsupported(node, f"{what} of every axis (a 0-d array)", "index the element: x[0] or x[0, 0]")
    return _restride(lw, node, x, "squeeze", tuple(sorted(axes)))


def _unit_axes(lw, node, x, what):
    """The axes ``squeeze()`` without axis= removes: known for an argument (the function is then
    specialised on its arguments' axes of size 1), refused for an array computed inside."""
    hint = "name the axes of size 1: " + ("np.squeeze(x, axis=0)" if what.startswith("np.") else "x.squeeze(axis=0)")
    while x in lw.written_from:     # an argument written into keeps its shape
        x = lw.written_from[x]
    if lw.unit_axes is not None and x in lw.unit_axes:
        return lw.unit_axes[x]
    words = f"{what} without axis= of an array computed in the function (its rank would depend on sizes known " \
            "only when it runs; squeeze() without axis= works on the function's arguments)"
    if lw.unit_axes is None and x in lw.params:
        raise NeedsUnitAxes(f"srcgrad does not support {words}", lw.loc(node), hint)
    lw.unsupported(node, words, hint)


def _expand_dims(lw, node, x, args, kws, env, what):
    axis = args[0] if args else kws.get("axis")
    if axis is None:
        lw.typing_error(node, f"{what} needs the axis")
    axes = constant_ints(lw, axis, env, "the axis")
    axes = _normal_axes(lw, node, axes, x.type.ndim + len(axes), what)
    return _restride(lw, node, x, "expand", tuple(sorted(axes)))


def _transpose(lw, node, x, args, kws, env, what):
    axes = kws.get("axes")
    if len(args) == 1:
        axes = args[0]
    n = x.type.ndim
    if len(args) > 1:
        perm = tuple(constant_int(lw, a, env, "an axis") for a in args)
    elif axes is not None and not (isinstance(axes, ast.Constant) and axes.value is None):
        perm = constant_ints(lw, axes, env, "the axes")
    else:
        perm = tuple(reversed(range(n)))
    if len(perm) != n:
        lw.typing_error(node, f"{what}: axes {perm} don't match an array of {n} dimensions")
    return _restride(lw, node, x, "permute", _normal_axes(lw, node, perm, n, what))


def _swapaxes(lw, node, x, args, kws, env, what):
    if len(args) != 2:
        lw.typing_error(node, f"{what} takes two axes")
    a, b = (_normal_axes(lw, node, [constant_int(lw, k, env, "an axis")], x.type.ndim, what)[0] for k in args)
    perm = list(range(x.type.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _restride(lw, node, x, "permute", tuple(perm))


def _moveaxis(lw, node, x, args, kws, env, what):
    args = args + [kws[k] for k in ("source", "destination") if k in kws]
    if len(args) != 2:
        lw.typing_error(node, f"{what} takes the source and destination axes")
    n = x.type.ndim
    src = _normal_axes(lw, node, constant_ints(lw, args[0], env, "the source"), n, what)
    dst = _normal_axes(lw, node, constant_ints(lw, args[1], env, "the destination"), n, what)
    if len(src) != len(dst):
        lw.typing_error(node, f"{what}: source and destination must have the same number of elements")
    order = [k for k in range(n) if k not in src]       # numpy's own construction
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _restride(lw, node, x, "permute", tuple(order))


def _flip(axis_default):
    def lower(lw, node, x, args, kws, env, what):
        n = x.type.ndim
        if axis_default is not None and n < axis_default + 1:
            lw.typing_error(node, f"{what} needs an array of at least {axis_default + 1} dimensions, got {n}")
        axis = args[0] if args else kws.get("axis")
        if axis_default is not None:
            axes = (axis_default,)
        elif axis is None or isinstance(axis, ast.Constant) and axis.value is None:
            axes = tuple(range(n))
        else:
            axes = _normal_axes(lw, node, constant_ints(lw, axis, env, "the axis"), n, what)
        return lw.emit(node, "restride", [x], {"kind": "flip", "axes": tuple(sorted(axes))})
    return lower


def _astype(lw, node, x, args, kws, env, what):
    dtype = args[0] if args else kws.get("dtype")
    if dtype is None or len(args) > 1:
        lw.typing_error(node, f"{what} takes the dtype")
    copy = kws.get("copy")
    if copy is not None and not (isinstance(copy, ast.Constant) and copy.value is True):
        lw.unsupported(node, f"{what} with copy={ast.unparse(copy)}", "astype always copies here, as by default")
    dt = dtype_of(lw, dtype, env)
    if dt is x.type.dtype:
        return lw.emit(node, "copy", [x])
    return lw.emit(node, "astype", [x], {"dtype": dt})


def _asarray(lw, node, x, args, kws, env, what):
    """np.asarray(x) of an array is x itself (numpy's: the same object); with a dtype of another
    element type, a converted copy."""
    if "dtype" not in kws:
        return x
    dt = dtype_of(lw, kws["dtype"], env)
    return x if dt is x.type.dtype else lw.emit(node, "astype", [x], {"dtype": dt})


_FUNCTIONS = {np.reshape: ("reshape", _reshape, ("shape", "newshape", "order")),
              np.ravel: ("ravel", _ravel, ("order",)),
              np.copy: ("copy", _copy, ("order",)),
              np.squeeze: ("squeeze", _squeeze, ("axis",)),
              np.expand_dims: ("expand_dims", _expand_dims, ("axis",)),
              np.transpose: ("transpose", _transpose, ("axes",)),
              np.swapaxes: ("swapaxes", _swapaxes, ()),
              np.moveaxis: ("moveaxis", _moveaxis, ("source", "destination")),
              np.flip: ("flip", _flip(None), ("axis",)),
              np.fliplr: ("fliplr", _flip(1), ()),
              np.flipud: ("flipud", _flip(0), ()),
              np.asarray: ("asarray", _asarray, ("dtype",))}
_METHODS = {"reshape": (_reshape, ("shape", "order")), "ravel": (_ravel, ("order",)),
            "flatten": (_ravel, ("order",)), "squeeze": (_squeeze, ("axis",)),
            "transpose": (_transpose, ()), "swapaxes": (_swapaxes, ()), "astype": (_astype, ("dtype", "copy"))}
SHAPE_METHODS = tuple(_METHODS)


def lower_shape_call(lw, node, fobj, env):
    """The value of a call this module lowers (see the module doc), or None for other calls.

    Example::

        lower_shape_call(lw, ast.parse("x.reshape(2, 3)", mode="eval").body, None, env)    # a reshape op
    """
    func = node.func
    try:
        entry = _FUNCTIONS.get(fobj)
    except TypeError:            # unhashable
        entry = None
    if fobj is np.dtype:         # np.dtype('float32'), np.dtype(x.dtype): a dtype value
        if len(node.args) != 1 or node.keywords:
            lw.unsupported(node, "np.dtype with these arguments", "np.dtype(np.float32) or np.dtype('float32')")
        return DTYPE_VALUES[dtype_of(lw, node.args[0], env)]
    if fobj is np.array:
        return array_literal(lw, node, _keywords(lw, node, "np.array", ("dtype",)), env)
    if entry is not None:
        name, lower, allowed = entry
        what = f"np.{name}"
        kws = _keywords(lw, node, what, allowed)
        if not node.args:
            lw.typing_error(node, f"{what} needs an array")
        x = lw.expr_any(node.args[0], env) if name == "asarray" else lw.expr(node.args[0], env)
        if isinstance(x, Tree):         # np.asarray([a, b]) is np.array([a, b])
            return array_literal(lw, node, kws, env, tree=x)
        if name == "asarray" and not x.type.is_array:
            lw.unsupported(node, "np.asarray of a number (a 0-d array: srcgrad has no 0-d arrays)",
                           "use the number itself, or np.array([x]) for an array of one element")
        return lower(lw, node, _array_arg(lw, node, x, what), list(node.args[1:]), kws, env, what)
    if isinstance(func, ast.Attribute) and func.attr in _METHODS and (
            fobj is None or isinstance(getattr(fobj, "__self__", None), np.ndarray)):
        x = lw.expr(func.value, env)
        what = f"x.{func.attr}()"
        if not x.type.is_array:
            lw.typing_error(node, f"{what} needs an array, got {x.type}")
        lower, allowed = _METHODS[func.attr]
        return lower(lw, node, x, list(node.args), _keywords(lw, node, what, allowed), env, what)
    return None


# ---------------------------------------------------------------------- in-place writes
_FRESH = ("full", "arange", "copy", "zeros_like", "pack", "stack")


def _fresh(v):
    """Whether ``v`` is certainly a C-contiguous array of its own (then a reshape is a view on
    every backend, as in numpy)."""
    op = v.owner
    if op is not None and op.prim == "reshape":
        return _fresh(op.operands[0])
    return op is not None and op.prim in _FRESH


def _ops_in_loops(block, loops=()):
    """(op, the loops around it) for every op of ``block``, in program order."""
    for op in block.ops:
        yield op, loops
        inner = loops + (op,) if op.prim in ("for", "while") else loops
        for r in op.regions:
            yield from _ops_in_loops(r, inner)


def refuse_layout_dependent_writes(fn):
    """Refuse a function that writes in place, after a reshape (or ravel) of an array of
    unknown layout, into memory the two share: numpy's result is a view or a copy depending on
    the layout, so whether the write shows through the other name would too. Writes before
    the reshape (not in a loop around it) are fine, and so is a reshape only copied.

    Example::

        refuse_layout_dependent_writes(lower(f, types))     # f: y = x.reshape(6); y[0] = 1.0
        # UnsupportedSyntaxError: ... writing in place into an array that shares memory with a reshape ...
    """
    ops = list(_ops_in_loops(fn.body))
    uses = {}
    for op, _ in ops:
        for v in op.operands:
            uses.setdefault(v, []).append(op.prim)
    reshapes = [(k, op, loops) for k, (op, loops) in enumerate(ops) if op.prim == "reshape"
                and not _fresh(op.operands[0]) and set(uses.get(op.results[0], [])) != {"copy"}]
    if not reshapes:
        return
    buffers = Buffers(fn)
    writes = [(k, op, loops) for k, (op, loops) in enumerate(ops) if PRIMITIVES[op.prim].writes is not None]
    for k, op, loops in reshapes:
        shared = buffers.of(op.operands[0])
        for j, w, w_loops in writes:
            if (j > k or set(loops) & set(w_loops)) and buffers.of(w.operands[PRIMITIVES[w.prim].writes]) & shared:
                raise UnsupportedSyntaxError(
                    "srcgrad does not support writing in place into an array that shares memory with a reshape "
                    "(x.reshape, np.ravel) of an array whose memory layout is not known, after the reshape: "
                    "numpy's result is a view for some layouts and a copy for others", w.loc,
                    "reshape a copy (x.copy().reshape(...), x.flatten()) and write into that, or reshape a new "
                    "array (np.zeros(n * m).reshape(n, m))")


__all__ = ["lower_shape_call", "shape_sizes", "refuse_layout_dependent_writes", "SHAPE_METHODS"]
