"""Subscripts: which kind of indexing ``x[...]`` is, and its ops.

numpy's basic indexing (ints, slices, ``None``/``np.newaxis``, ``...``) makes a view: the
``slice`` op (or ``index`` for one element); a ``...`` stands for as many ``:`` as the axes
not indexed, a ``None`` for a new axis of length 1. Advanced indexing makes a copy:

- ``x[idx]``, ``X[i, j]`` with int64 index arrays (or literal lists of ints, ``x[[0, 2, 2]]``)
  on the leading axes: ``gather``, shaped as the index arrays broadcast together, then the
  axes not indexed; an int among them counts as an index array of one element (numpy's
  rule), ``X[:, idx]`` of a matrix is ``X.T[idx].T``;
- ``x[mask]`` with a bool array over the leading axes: ``mask_select``, as long as the count
  of True (known at run time only);
- the writes ``x[idx] = v`` (``scatter``: a place named twice keeps the last value, as in
  numpy), ``x[mask] = v`` (``setmask``); ``x[idx] += v`` is read, add, write, so a place named
  twice is added to once (numpy's buffered semantics; ``np.add.at`` accumulates).

The expression handler is ``subscript`` (``x[...]`` of an array, a container, a zip, a range,
``x.shape[k]``), the write ``setitem`` (``x[...] = v``, for statements.py's assignments).

Example (inside the lowering):
    subscript_value(lw, node, arr, env)      # x[1:, None] -> slice op
"""
import ast

import numpy as np

from ..ir.types import BOOL, F32, F64, I64, type_of, user_name
from ..trees import Tree
from .containers import Zipped, item_at, range_of, tree_index, tree_setitem

_FULL = ("s", False, False, False)
_MIXED_HINT = "index arrays work on the leading axes (x[idx], X[i, j], X[idx, 2]), or X[:, idx] of a matrix"


# ---------------------------------------------------------------------- reads and writes
def subscript(lw, node, env):
    """``x[...]``: of a range desugar made up, ``x.shape[k]``, a container, a zip, an array."""
    r = range_of(node.value, env)
    if r is not None:       # range0[k0]: start + k0 * step
        return lw.binop(node, "add", r.start, lw.binop(node, "mul", lw.expr(node.slice, env), r.step))
    # x.shape[k]
    if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        arr = lw.expr(node.value.value, env)
        if not arr.type.is_array:
            lw.typing_error(node, f"only arrays have a shape, not {arr.type}")
        k = node.slice
        if not (isinstance(k, ast.Constant) and isinstance(k.value, int)):
            lw.unsupported(node, "x.shape[k] with a k that is not a literal integer")
        axis = k.value + arr.type.ndim if k.value < 0 else k.value
        return lw.emit(node, "shape", [arr], {"axis": axis})
    arr = lw.expr_any(node.value, env)
    if isinstance(arr, Tree):
        return tree_index(lw, node, arr, env)
    if isinstance(arr, Zipped):
        k = integer(lw, node.slice, env, "indices")
        if arr.is_static():
            return Tree(tuple, [tree_index(lw, node, p, env) for p in arr.parts])
        return item_at(lw, node, arr, k)
    arr = lw.value(node.value, arr)
    if not arr.type.is_array:
        lw.typing_error(node, f"only arrays can be indexed, not {arr.type}")
    return subscript_value(lw, node, arr, env)


def setitem(lw, target, value, env, node):
    """x[i, j] = v: a new version of the array; every name bound to the old one sees it."""
    if isinstance(target.value, ast.Attribute) or not isinstance(target.value, ast.Name):
        lw.unsupported(node, "writing into this expression", "write into a named array: x[i] = v")
    old = lw.read(target.value.id, env, target.value)
    if isinstance(old, Tree):
        return tree_setitem(lw, node, target, old, value, env)
    value = lw.value(node, value)
    if not old.type.is_array:
        lw.typing_error(node, f"only arrays can be written into, '{target.value.id}' is {old.type}")
    entries = index_entries(lw, node, target.slice, env, old.type.ndim)
    if any(e[0] == "v" and e[1].type.is_array for e in entries):
        new = advanced_write(lw, node, target, old, value, entries)
    elif any(e[0] != "v" for e in entries) or len(entries) < old.type.ndim:
        spec, bounds = basic_spec(lw, node, entries)
        if value.type.is_array:
            (value,) = lw.to_float_array_operands(node, value)
        elif old.type.dtype in (F64, F32):
            value = lw.b.convert(value, F64)
        new = lw.emit(node, "setslice", [old, value] + bounds, {"spec": spec}, name=target.value.id)
    else:
        spec, indices = basic_spec(lw, node, entries)
        if old.type.dtype in (F64, F32):
            value = lw.b.convert(value, F64)
        new = lw.emit(node, "setitem", [old, value] + indices, name=target.value.id)
    lw.written_from[new] = old
    for n, v in list(env.items()):
        if v is old:
            env[n] = new


# ---------------------------------------------------------------------- the parts of an index
# (numpy_joins.py and numpy_shapes.py read their None and int arguments with these too)
def is_none(lw, node):
    """Whether ``node`` is None or a global bound to it (np.newaxis)."""
    if isinstance(node, ast.Constant):
        return node.value is None
    if lw.is_global_name(node):
        return lw.resolve_global(node.id, node) is None
    if isinstance(node, ast.Attribute):
        base = lw.global_object(node.value)
        return base is not None and hasattr(base, node.attr) and getattr(base, node.attr) is None
    return False


def integer(lw, node, env, what):
    """An index or a slice bound: an int (or a bool)."""
    v = lw.expr(node, env)
    if v.type not in (I64, BOOL):
        lw.typing_error(node, f"{what} must be integers, got {v.type}")
    return v


# ---------------------------------------------------------------------- basic indexing
def index_entries(lw, node, index, env, ndim):
    """The subscript's entries, left to right: ("n",) for None, ("s", has_start, has_stop,
    has_step, bounds) for a slice, ("v", value) for anything else (a ``...`` becomes the
    slices it stands for)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if sum(map(_is_ellipsis, parts)) > 1:
        lw.unsupported(node, "two `...` in one index (numpy raises IndexError: an index can only have a "
                             "single ellipsis)")
    named = sum(1 for p in parts if not is_none(lw, p) and not _is_ellipsis(p))     # axes indexed
    entries = []
    for p in parts:
        if _is_ellipsis(p):
            entries += [_FULL + ([],)] * max(ndim - named, 0)
        elif is_none(lw, p):
            entries.append(("n",))
        elif isinstance(p, ast.Slice):
            given = (p.lower, p.upper, p.step)
            bounds = [integer(lw, g, env, "slice bounds") for g in given if g is not None]
            entries.append(("s",) + tuple(g is not None for g in given) + (bounds,))
        elif isinstance(p, ast.List):
            entries.append(("v", index_list(lw, p)))
        else:
            entries.append(("v", lw.expr(p, env)))
    return entries


def index_list(lw, node):
    """A literal list in an index, ``x[[0, 2, 2]]``: a constant int64 (or bool) array."""
    try:
        value = np.array(ast.literal_eval(node))
    except (ValueError, SyntaxError):
        value = None
    if value is None or value.dtype.kind not in "biu" and value.size:
        lw.unsupported(node, f"the list {ast.unparse(node)} as an index",
                       "a literal list of ints (x[[0, 2, 2]]) or an int64 array works")
    value = value.astype(np.bool_ if value.dtype.kind == "b" else np.int64)
    value.flags.writeable = False
    return lw.b.emit("const", [], {"value": value, "type": type_of(value)})


def subscript_value(lw, node, arr, env):
    """The value of ``arr[node.slice]``."""
    entries = index_entries(lw, node, node.slice, env, arr.type.ndim)
    if any(e[0] == "v" and e[1].type.is_array for e in entries):
        return advanced_read(lw, node, arr, entries)
    spec, bounds = basic_spec(lw, node, entries)
    if any(s[0] != "i" for s in spec) or len(spec) < arr.type.ndim:
        return lw.emit(node, "slice", [arr] + bounds, {"spec": spec})
    return lw.emit(node, "index", [arr] + bounds)


def basic_spec(lw, node, entries):
    """(spec, operands) of the ``slice`` op: see the primitive."""
    spec, bounds = [], []
    for e in entries:
        if e[0] == "v":
            if e[1].type not in (I64, BOOL):
                lw.typing_error(node, f"array indices must be integers, got {e[1].type}")
            spec.append(("i",))
            bounds.append(e[1])
        else:
            spec.append(e[:4] if e[0] == "s" else e)
            bounds += e[4] if e[0] == "s" else []
    return tuple(spec), bounds


# ---------------------------------------------------------------------- advanced indexing
def index_arrays(lw, node, entries, ndim):
    """("mask", mask) or ("ints", [index arrays]) of an advanced index on the leading axes
    (only whole slices may follow); None for any other mixture."""
    lead = list(entries)
    while lead and lead[-1][0] == "s" and lead[-1][1:4] == (False, False, False):
        lead.pop()
    if not lead or any(e[0] != "v" for e in lead):
        return None
    values = [e[1] for e in lead]
    for v in values:
        if v.type.is_array and v.type.dtype not in (I64, BOOL):
            lw.typing_error(node, "arrays used as indices must be of integer (or boolean) type (numpy's "
                                  f"IndexError), got {user_name(v.type)}: convert it with .astype(np.int64)")
    masks = [v for v in values if v.type.is_array and v.type.dtype is BOOL]
    if masks:
        if len(values) > 1:
            lw.unsupported(node, "a boolean mask combined with other indices",
                           "index with the mask alone: x[mask], X[row_mask]")
        if masks[0].type.ndim > ndim:
            lw.typing_error(node, f"too many indices: a mask of {masks[0].type.ndim} dimensions for an "
                                  f"array of {ndim}")
        return "mask", masks[0]
    if len(values) > ndim:
        lw.typing_error(node, f"too many indices for an array of {ndim} dimensions")
    return "ints", [v if v.type.is_array else one_element(lw, node, v) for v in values]


def one_element(lw, node, i):
    """An int index beside index arrays: an array of one element (numpy broadcasts it so)."""
    if i.type not in (I64, BOOL):
        lw.typing_error(node, f"array indices must be integers, got {i.type}")
    i = lw.b.convert(i, I64)
    return lw.emit(node, "arange", [i, lw.emit(node, "add", [i, lw.b.const(1)]), lw.b.const(1)])


def advanced_read(lw, node, arr, entries):
    """``x[idx]``, ``X[i, j]``, ``x[mask]``, ``X[:, idx]``: a gather or a mask_select (a copy)."""
    found = index_arrays(lw, node, entries, arr.type.ndim)
    if found is None:
        columns = [e for e in entries if e[0] != "s" or e[1:4] != (False, False, False)]
        if arr.type.ndim == 2 and len(entries) == 2 and entries[0][:4] == _FULL and len(columns) == 1 \
                and columns[0][1].type.is_array and columns[0][1].type.ndim == 1:
            # X[:, idx] is X.T[idx].T: idx names columns
            flipped = lw.emit(node, "transpose", [arr])
            cols = advanced_read(lw, node, flipped, [columns[0]])
            return lw.emit(node, "transpose", [cols])
        lw.unsupported(node, "this mixture of index arrays with slices or new axes (numpy's mixed "
                             "advanced indexing)", _MIXED_HINT)
    kind, index = found
    if kind == "mask":
        return lw.emit(node, "mask_select", [arr, index])
    return lw.emit(node, "gather", [arr] + index, {"last_only": False})


def advanced_write(lw, node, target, old, value, entries):
    """``x[idx] = v`` or ``x[mask] = v``: the new version of ``x``."""
    found = index_arrays(lw, node, entries, old.type.ndim)
    if found is None:
        lw.unsupported(node, "writing through this mixture of index arrays with slices or new axes",
                       "write through index arrays on the leading axes (x[idx] = v, X[i, j] = v), or a "
                       "mask (x[mask] = v)")
    kind, index = found
    value = stored_value(lw, node, old, value)
    if kind == "mask":
        if value.type.is_array and value.type.ndim != 1:
            lw.unsupported(node, f"storing an array of {value.type.ndim} dimensions through a mask",
                           "store a number, or a 1-D array of one value per True")
        if index.type.ndim != old.type.ndim:
            lw.unsupported(node, "writing through a mask over some of the axes only",
                           "use a mask of the array's shape")
        return lw.emit(node, "setmask", [old, value, index], name=target.value.id)
    return lw.emit(node, "scatter", [old, value] + index, name=target.value.id)


def stored_value(lw, node, old, value):
    """A value written into ``old``: floats where ``old`` holds floats."""
    if isinstance(value, list):
        lw.unsupported(node, "storing a tuple into an array")
    if value.type.is_array:
        if old.type.dtype in (F64, F32):
            (value,) = lw.to_float_array_operands(node, value)
    elif old.type.dtype in (F64, F32):
        value = lw.b.convert(value, F64)
    return value


def add_at(lw, node, env):
    """The statement ``np.add.at(x, idx, v)``: x[idx] += v where a place named twice is
    added to twice (unlike ``x[idx] += v``); ``x`` is rebound to the new version."""
    if node.keywords or len(node.args) != 3:
        lw.unsupported(node, "np.add.at with other than three positional arguments", "np.add.at(x, idx, v)")
    target = node.args[0]
    if not isinstance(target, ast.Name) or target.id not in lw.locals:
        lw.unsupported(node, "np.add.at into this expression", "add into a named array: np.add.at(x, idx, v)")
    old = lw.read(target.id, env, target)
    if not old.type.is_array:
        lw.typing_error(node, f"np.add.at adds into an array, '{target.id}' is {old.type}")
    entries = index_entries(lw, node, node.args[1], env, old.type.ndim)
    found = index_arrays(lw, node, entries, old.type.ndim)
    if found is None or found[0] == "mask" or not any(e[0] == "v" and e[1].type.is_array for e in entries):
        lw.unsupported(node, f"np.add.at with the index {ast.unparse(node.args[1])}",
                       "give int64 index arrays (np.add.at(x, idx, v), np.add.at(X, (i, j), v)); "
                       "for one element or a slice write x[i] += v")
    value = stored_value(lw, node, old, lw.expr(node.args[2], env))
    new = lw.emit(node, "scatter_add", [old, value] + found[1], name=target.id)
    for n, v in list(env.items()):
        if v is old:
            env[n] = new


def _is_ellipsis(node):
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def is_add_at(fobj):
    """Whether ``fobj`` is np.add.at (a bound method: a new object at each attribute read)."""
    return getattr(fobj, "__self__", None) is np.add and getattr(fobj, "__name__", None) == "at"



