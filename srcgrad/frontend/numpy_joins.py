"""The numpy functions that join, split and build arrays, as entries of the CALLS table
(frontend/call_table.py merges ``JOIN_CALLS``): np.concatenate, np.stack, np.hstack, np.vstack,
np.column_stack, np.split, np.array_split, np.diag, np.diagonal, np.trace, np.eye,
np.identity, np.tril, np.triu, np.linspace, np.roll, np.tile, np.repeat, np.kron, np.hsplit, np.vsplit, np.tri.

Their list arguments (``np.concatenate([a, b])``, ``np.split(x, [2, 5])``) are list or tuple
literals in the source, read here element by element; so every entry lowers its arguments
itself (``raw_args``). np.split gives a Python list of slices (views, as numpy's), which a
tuple assignment unpacks: ``a, b = np.split(x, 2)``.

Example:
    JOIN_CALLS[np.concatenate].lower(lw, node, None, env)      # a 'concat' op's result
"""
import ast

import numpy as np

from ..ir.core import Value
from ..ir.types import BOOL, F32, F64, I64
from ..trees import Tree
from .callee import Callee
from .indexing import integer, is_none

JOINING = {"concatenate", "stack", "hstack", "vstack", "column_stack"}
# the keywords each function accepts (and its arguments by position, in numpy's order)
PARAMETERS = {"concatenate": ("arrays", "axis"), "stack": ("arrays", "axis"), "hstack": ("arrays",),
              "vstack": ("arrays",), "column_stack": ("arrays",), "split": ("ary", "indices_or_sections", "axis"),
              "array_split": ("ary", "indices_or_sections", "axis"), "diag": ("v", "k"),
              "diagonal": ("a", "offset"), "trace": ("a", "offset"), "eye": ("N", "M", "k"), "identity": ("n",),
              "tril": ("m", "k"), "triu": ("m", "k"), "linspace": ("start", "stop", "num", "endpoint"),
              "roll": ("a", "shift", "axis"), "tile": ("A", "reps"), "repeat": ("a", "repeats", "axis"),
              "kron": ("a", "b"), "hsplit": ("ary", "indices_or_sections"), "vsplit": ("ary", "indices_or_sections"),
              "tri": ("N", "M", "k")}
REQUIRED = {"concatenate": 1, "stack": 1, "hstack": 1, "vstack": 1, "column_stack": 1, "split": 2,
            "array_split": 2, "diag": 1, "diagonal": 1, "trace": 1, "eye": 1, "identity": 1, "tril": 1, "triu": 1,
            "linspace": 2, "roll": 2, "tile": 2, "repeat": 2, "kron": 2,
            "hsplit": 2, "vsplit": 2, "tri": 1}


def _arguments(lw, node, name, args=None):
    """The call's arguments by parameter name (ast nodes), refusing unknown keywords, *args
    and a wrong count with numpy's parameter names. Called as an array method (``x.trace()``:
    ``args`` holds x first), the first parameter is x, as a value."""
    params = PARAMETERS[name]
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        lw.unsupported(node, f"*args or **kwargs in a call to np.{name}", "write the arguments out")
    given = node.args if args is None else [args[0]] + list(node.args)
    if len(given) > len(params):
        lw.typing_error(node, f"np.{name} takes at most {len(params)} arguments here ({len(given)} given)")
    got = dict(zip(params, given))
    for kw in node.keywords:
        if kw.arg not in params or kw.arg in got:
            lw.unsupported(node, f"the keyword {kw.arg}= of np.{name}",
                           f"np.{name} takes {', '.join(params)} here")
        got[kw.arg] = kw.value
    missing = [p for p in params[:REQUIRED[name]] if p not in got]
    if missing:
        lw.typing_error(node, f"np.{name} needs its argument {missing[0]}")
    return got


def _literal_int(lw, node, what):
    """A whole number written in the source (``2``, ``-1``): sizes that fix how many results
    or which axis."""
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = -node.operand.value if isinstance(node.operand.value, int) else None
    if not isinstance(value, int) or isinstance(value, bool):
        lw.unsupported(node, f"{what} that is not a literal integer", f"write {what} as a number, such as 0")
    return value


def _axis(lw, node, given, rank, default=0, none_ok=False):
    """The axis keyword as a literal, counted from the front (None only where ``none_ok``)."""
    if given is None:
        return default
    if none_ok and is_none(lw, given):
        return None
    axis = _literal_int(lw, given, "the axis")
    if not -rank <= axis < rank:
        lw.typing_error(given, f"axis {axis} is out of bounds for array of dimension {rank}")
    return axis + rank if axis < 0 else axis


def _int(lw, node, env, what):
    return integer(lw, node, env, what)


def _array(lw, node, env, name):
    x = node if isinstance(node, Value) else lw.expr(node, env)
    if not x.type.is_array:
        lw.typing_error(node, f"np.{name} needs an array here, got {x.type}")
    return x


# ---------------------------------------------------------------------- joining
def _listed_arrays(lw, node, seq, env, name):
    """The arrays of a join: a list or tuple (written out, or a container value: ``parts``, a
    comprehension over a container)."""
    given = lw.expr_any(seq, env)
    if not isinstance(given, Tree) or given.kind is dict:
        lw.unsupported(node, f"np.{name} of something other than a list or tuple of arrays",
                       f"list the arrays in the call: np.{name}([a, b])")
    if not given.items:
        lw.typing_error(node, f"np.{name} needs at least one array")
    elts = seq.elts if isinstance(seq, (ast.List, ast.Tuple)) and len(seq.elts) == len(given) else [seq] * len(given)
    xs = []
    for k, (e, x) in enumerate(zip(elts, given.items)):
        x = lw.value(e, x)
        if not x.type.is_array:
            lw.typing_error(e, f"np.{name} joins arrays; the element at index {k} is a {x.type} (numpy refuses "
                               "zero-dimensional arrays here); make it an array: np.full(1, v)")
        xs.append(x)
    return xs


def _same_rank(lw, node, xs, expand, name):
    ranks = [x.type.ndim + e for x, e in zip(xs, expand)]
    for k, r in enumerate(ranks):
        if r != ranks[0]:
            if name == "stack":
                lw.typing_error(node, "all input arrays must have the same shape")
            lw.typing_error(node, f"all the input arrays must have same number of dimensions, but the array at index "
                                  f"0 has {ranks[0]} dimension(s) and the array at index {k} has {r} dimension(s)")
    return ranks[0]


def _joiner(name):
    """np.concatenate / np.stack / np.hstack / np.vstack / np.column_stack: one 'concat' op,
    operand k given a new axis where ``expand[k]`` (a vector as a row of np.vstack, a column
    of np.column_stack, every operand of np.stack)."""
    def lower(lw, node, args, env):
        got = _arguments(lw, node, name)
        xs = _listed_arrays(lw, node, got["arrays"], env, name)
        ndims = [x.type.ndim for x in xs]
        if name == "concatenate":
            expand = (False,) * len(xs)
            axis = _axis(lw, node, got.get("axis"), max(ndims), none_ok=True)
            if axis is None:        # flattened first: np.repeat(x, 1) is x.ravel() (a copy, C order)
                xs = [lw.emit(node, "repeat", [x, lw.b.const(1)], {"axis": None}) if x.type.ndim > 1 else x
                      for x in xs]
            axis = axis or 0
        elif name == "stack":
            expand = (True,) * len(xs)
            axis = _axis(lw, node, got.get("axis"), ndims[0] + 1)
        elif name == "hstack":
            expand, axis = (False,) * len(xs), 0 if ndims[0] == 1 else 1
        elif name == "vstack":
            expand, axis = tuple(n == 1 for n in ndims), 0
        else:
            expand, axis = tuple(n == 1 for n in ndims), 1
        _same_rank(lw, node, xs, expand, name)
        return lw.emit(node, "concat", xs, {"axis": axis, "expand": expand, "fn": name})
    return lower


# ---------------------------------------------------------------------- splitting
def _whole_then(axis, last):
    return ((("s", False, False, False),) * axis) + (last,)


def _part(lw, node, x, axis, start, stop):
    """x[..., start:stop] along ``axis`` (None: from the start / to the end): a view."""
    bounds = [v for v in (start, stop) if v is not None]
    spec = _whole_then(axis, ("s", start is not None, stop is not None, False))
    return lw.emit(node, "slice", [x] + bounds, {"spec": spec})


def _splitter(name):
    """np.split / np.array_split into a literal number of parts, or at listed indices."""
    def lower(lw, node, args, env):
        got = _arguments(lw, node, name)
        x = _array(lw, got["ary"], env, name)
        if name == "vsplit" and x.type.ndim < 2:
            lw.typing_error(node, "vsplit only works on arrays of 2 or more dimensions")
        axis = _axis(lw, node, got.get("axis"), x.type.ndim)
        if name == "hsplit":
            axis = 0 if x.type.ndim == 1 else 1
        how = got["indices_or_sections"]
        if isinstance(how, (ast.List, ast.Tuple)):
            cuts = [_int(lw, e, env, f"the indices of np.{name}") for e in how.elts]
            ends = [None] + cuts + [None]
            return [_part(lw, node, x, axis, a, b) for a, b in zip(ends[:-1], ends[1:])]
        sections = _literal_int(lw, how, f"the number of sections of np.{name}")
        if sections <= 0:
            lw.typing_error(how, "number sections must be larger than 0." if name == "array_split"
                            else f"np.split into {sections} sections")
        n = lw.emit(node, "shape", [x], {"axis": axis})
        b = lw.b
        if name != "array_split":
            size = lw.emit(node, "split_size", [n], {"sections": sections})
            starts = [lw.emit(node, "mul", [b.const(i), size]) if i else b.const(0) for i in range(sections + 1)]
        else:       # the first n % sections parts are one longer
            each = lw.emit(node, "floordiv", [n, b.const(sections)])
            extra = lw.emit(node, "mod", [n, b.const(sections)])
            starts = [b.const(0)] + [lw.emit(node, "add", [lw.emit(node, "mul", [b.const(i), each]),
                                                           lw.emit(node, "min", [b.const(i), extra])])
                                     for i in range(1, sections + 1)]
        return [_part(lw, node, x, axis, a, c) for a, c in zip(starts[:-1], starts[1:])]
    return lower


# ---------------------------------------------------------------------- diagonals and triangles
def _offset(lw, node, env, given, what="offset"):
    return lw.b.const(0) if given is None else _int(lw, given, env, f"the {what} of a diagonal")


def _diag(lw, node, args, env):
    """np.diag(v, k): a matrix with vector v on diagonal k, or the diagonal k of a matrix."""
    got = _arguments(lw, node, "diag")
    v = _array(lw, got["v"], env, "diag")
    k = _offset(lw, node, env, got.get("k"))
    if v.type.ndim == 2:
        return lw.emit(node, "diagonal", [v, k])
    if v.type.ndim != 1:
        lw.typing_error(node, "Input must be 1- or 2-d.")
    size = lw.emit(node, "add", [lw.emit(node, "shape", [v], {"axis": 0}), lw.emit(node, "abs", [k])])
    return lw.emit(node, "diag_embed", [v, size, size, k])


def _matrix(lw, node, env, given, name):
    x = _array(lw, given, env, name)
    if x.type.ndim != 2:
        lw.typing_error(node, f"np.{name} takes a matrix here, got an array of {x.type.ndim} dimension(s)")
    return x


def _diagonal(lw, node, args, env):
    """np.diagonal(x, offset): a copy (numpy's is a read-only view)."""
    got = _arguments(lw, node, "diagonal", args)
    x = _matrix(lw, node, env, got["a"], "diagonal")
    return lw.emit(node, "diagonal", [x, _offset(lw, node, env, got.get("offset"))])


def _trace(lw, node, args, env):
    """np.trace(x, offset): the sum of a diagonal."""
    got = _arguments(lw, node, "trace", args)
    x = _matrix(lw, node, env, got["a"], "trace")
    if x.type.dtype is not F64:      # summed as floats, as np.sum of an int array is in compiled code
        (x,) = lw.to_float_array_operands(node, x)
    d = lw.emit(node, "diagonal", [x, _offset(lw, node, env, got.get("offset"))])
    return lw.emit(node, "sum", [d], {"axis": None})


def _eye(name):
    """np.eye(N, M, k) and np.identity(n): ones on diagonal k of an N×M matrix of zeros."""
    def lower(lw, node, args, env):
        got = _arguments(lw, node, name)
        b = lw.b
        n = _int(lw, got["N" if name == "eye" else "n"], env, f"the size of np.{name}")
        m = n if got.get("M") is None or is_none(lw, got["M"]) else _int(lw, got["M"], env, "the size of np.eye")
        k = _offset(lw, node, env, got.get("k"))
        # the length of diagonal k: min(n + min(k, 0), m - max(k, 0)), at least 0
        rows = lw.emit(node, "add", [n, lw.emit(node, "min", [k, b.const(0)])])
        cols = lw.emit(node, "sub", [m, lw.emit(node, "max", [k, b.const(0)])])
        length = lw.emit(node, "max", [lw.emit(node, "min", [rows, cols]), b.const(0)])
        ones = lw.emit(node, "full", [length], {"value": 1.0, "dtype": F64})
        return lw.emit(node, "diag_embed", [ones, n, m, k])
    return lower


def _triangle(name):
    """np.tril / np.triu: x where j <= i + k (tril) or j >= i + k (triu), zeros elsewhere."""
    def lower(lw, node, args, env):
        got = _arguments(lw, node, name)
        x = _matrix(lw, node, env, got["m"], name)
        if x.type.dtype is F32:
            (x,) = lw.to_float_array_operands(node, x)      # whole-array code computes in float64
        k = _offset(lw, node, env, got.get("k"))
        if name == "triu":
            k = lw.emit(node, "sub", [k, lw.b.const(1)])
        shape = [lw.emit(node, "shape", [x], {"axis": a}) for a in (0, 1)]
        mask = lw.emit(node, "tri", shape + [k])
        zero = lw.b.const({F64: 0.0, I64: 0, BOOL: False}[x.type.dtype])
        return lw.emit(node, "select", [mask, x, zero] if name == "tril" else [mask, zero, x])
    return lower


# ---------------------------------------------------------------------- linspace, roll
def _linspace(lw, node, args, env):
    """np.linspace(start, stop, num=50, endpoint=True) of numbers."""
    got = _arguments(lw, node, "linspace")
    ends = [lw.expr(got[p], env) for p in ("start", "stop")]
    for p, v in zip(("start", "stop"), ends):
        if v.type not in (F64, I64, BOOL):
            lw.typing_error(got[p], f"np.linspace takes numbers for start and stop here, got {v.type} for {p}")
    num = lw.b.const(50) if got.get("num") is None else _int(lw, got["num"], env, "np.linspace's num")
    endpoint = True
    if got.get("endpoint") is not None:
        e = got["endpoint"]
        if not (isinstance(e, ast.Constant) and isinstance(e.value, bool)):
            lw.unsupported(e, "np.linspace's endpoint that is not True or False written out")
        endpoint = e.value
    return lw.emit(node, "linspace", [lw.b.convert(v, F64) for v in ends] + [num], {"endpoint": endpoint})


def _listed(node):
    return node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]


def _roll(lw, node, args, env):
    """np.roll(x, shift, axis=None|k): shifts and axes may be tuples written out (one roll per
    axis; a single shift or axis is used for each of the others); without an axis, the
    flattened array rolls by the shifts' sum."""
    got = _arguments(lw, node, "roll")
    x = _array(lw, got["a"], env, "roll")
    shifts = [_int(lw, e, env, "np.roll's shift") for e in _listed(got["shift"])]
    given = got.get("axis")
    if given is None or is_none(lw, given):
        total = shifts[0]
        for s in shifts[1:]:
            total = lw.emit(node, "add", [total, s])
        return lw.emit(node, "roll", [x, total], {"axis": None})
    axes = [_axis(lw, node, e, x.type.ndim) for e in _listed(given)]
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        lw.typing_error(node, "np.roll's shift and axis must have the same length (or one of them 1)")
    shifts, axes = shifts * (len(axes) if len(shifts) == 1 else 1), axes * (len(shifts) if len(axes) == 1 else 1)
    for s, a in zip(shifts, axes):
        x = lw.emit(node, "roll", [x, s], {"axis": a})
    return x


def _tri(lw, node, args, env):
    """np.tri(N, M=None, k=0): ones at and below diagonal k, as float64."""
    got = _arguments(lw, node, "tri")
    n = _int(lw, got["N"], env, "the size of np.tri")
    m = n if got.get("M") is None or is_none(lw, got["M"]) else _int(lw, got["M"], env, "the size of np.tri")
    return lw.emit(node, "to_f64", [lw.emit(node, "tri", [n, m, _offset(lw, node, env, got.get("k"))])])


def _tile(lw, node, args, env):
    """np.tile(x, reps): reps an int or a tuple or list of ints written out."""
    got = _arguments(lw, node, "tile")
    x = _array(lw, got["A"], env, "tile")
    given = got["reps"].elts if isinstance(got["reps"], (ast.Tuple, ast.List)) else [got["reps"]]
    reps = [_int(lw, e, env, "np.tile's repetitions") for e in given]
    reps = [lw.b.const(1)] * (x.type.ndim - len(reps)) + reps       # numpy pads with 1s in front
    return lw.emit(node, "tile", [x] + reps)


def _repeat(lw, node, args, env):
    """np.repeat(x, r, axis=None|k) with one int count or an int vector of counts."""
    got = _arguments(lw, node, "repeat", args)
    x = _array(lw, got["a"], env, "repeat")
    if isinstance(got["repeats"], (ast.Tuple, ast.List)):
        lw.unsupported(got["repeats"], "np.repeat with counts written as a list", "pass an int array of counts")
    r = lw.expr(got["repeats"], env)
    axis = _axis(lw, node, got.get("axis"), x.type.ndim, default=None, none_ok=True)
    if r.type.is_array:         # a count per element (numpy's broadcasting of one count too)
        if r.type.ndim != 1 or r.type.dtype is not I64:
            lw.typing_error(got["repeats"], f"np.repeat's counts must be a vector of ints, got {r.type}")
        return lw.emit(node, "repeat_each", [x, r], {"axis": axis})
    if r.type not in (I64, BOOL):
        lw.typing_error(got["repeats"], f"np.repeat's count must be an integer, got {r.type}")
    return lw.emit(node, "repeat", [x, r], {"axis": axis})


def _kron(lw, node, args, env):
    """np.kron(a, b) of two vectors or two matrices: ints stay ints, floats compute in float64."""
    got = _arguments(lw, node, "kron")
    a, b = (_array(lw, got[p], env, "kron") for p in ("a", "b"))
    if a.type.ndim != b.type.ndim or a.type.ndim not in (1, 2):
        lw.typing_error(node, f"np.kron takes two vectors or two matrices here, got {a.type} and {b.type}")
    if BOOL in (a.type.dtype, b.type.dtype):
        lw.typing_error(node, "np.kron of bools (numpy's result is a bool there); convert them first: a * 1.0")
    if not a.type.dtype is b.type.dtype is I64:
        a, b = lw.to_float_array_operands(node, a, b)
    return lw.emit(node, "kron", [a, b])


def _entries():
    lowerings = {**{n: _joiner(n) for n in JOINING}, "split": _splitter("split"),
                 "array_split": _splitter("array_split"), "diag": _diag, "diagonal": _diagonal, "trace": _trace,
                 "eye": _eye("eye"), "identity": _eye("identity"), "tril": _triangle("tril"),
                 "triu": _triangle("triu"), "linspace": _linspace, "roll": _roll, "tile": _tile, "repeat": _repeat,
                 "kron": _kron, "hsplit": _splitter("hsplit"), "vsplit": _splitter("vsplit"), "tri": _tri}
    return {getattr(np, n): Callee(f, keywords=PARAMETERS[n], raw_args=True) for n, f in lowerings.items()}


JOIN_CALLS = _entries()
# x.repeat(2), x.diagonal(1), x.trace(): the numpy function with x as its first argument
JOIN_METHODS = {"repeat": np.repeat, "diagonal": np.diagonal, "trace": np.trace}
