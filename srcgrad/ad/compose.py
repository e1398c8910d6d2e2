"""Hessians, Hessian-vector products and Jacobians as IR functions: a loop over basis vectors
around a derivative compiled in place, so the whole matrix is built in one native call.

- ``hvp_function(gradient, wrt)``: forward mode over the gradient's IR with tangents for the
  ``wrt`` parameters only, returning the tangents of the gradient: ``H v`` without forming H.
- ``hessian_function(primal, hvp, wrt)``: for each ``x_j`` of ``wrt``, ``for k in
  range(x_j.size)``: ``H e_k`` (the HVP with ``v_j = e_k``, the other directions 0) is column k
  of every block ``H_ij``; each block is stored by rows and transposed at the end (a view), then
  shaped ``x_i.shape + x_j.shape``. A float ``x_j`` needs no loop: its direction is 1.0.
- ``jacobian_function(primal, derivative, wrt, mode)``: ``"fwd"``, columns from the jvp
  (``derivative`` is forward(primal, wrt)); ``"rev"``, rows from the vjp (``derivative`` is
  reverse(primal, cotangents=True)), whose forward sweep runs again for each row.

Example:
    h = hessian_function(primal, hvp_function(gradient, [0]), [0])    # H(x), (n, n)
"""
from ..errors import TypingError
from ..ir.core import Block, Builder, Function, Value, current, for_op, if_op
from ..ir.inline import inline
from ..ir.memory import Buffers
from ..ir.types import I64
from ..trees import Tree
from .forward import forward
from .reverse import reverse


def hvp_function(gradient, wrt):
    """(params..., v for each ``wrt`` position) -> H v for each, from ``gradient`` (the IR of
    grad(f, wrt), returning one gradient per ``wrt`` position)."""
    fn = forward(gradient, wrt)
    ret = fn.body.terminator
    ret.operands = ret.operands[len(gradient.result_types):]     # the tangents of the gradient
    fn.name = gradient.name[:-len("_grad")] + "_hvp" if gradient.name.endswith("_grad") else fn.name
    return fn


def _shape(b, x):
    return [b.emit("shape", [x], {"axis": a}, name="n") for a in range(x.type.ndim)]


def _flat(b, v, size):
    """``v`` as a vector of ``size`` elements (a number stays a number)."""
    if not v.type.is_array or v.type.ndim == 1:
        return v
    return b.emit("reshape", [v, size])


def _basis(b, x, size, k):
    """e_k shaped like ``x``, of its dtype."""
    e = b.emit("full", [size], {"value": 0.0, "dtype": x.type.dtype}, name="e")
    e = b.emit("setitem", [e, b.const(1.0), k], name="e")
    return e if x.type.ndim == 1 else b.emit("reshape", [e] + _shape(b, x), name="e")


def _columns(b, derivative, args, xs, j, outs_like, direction):
    """Run ``derivative`` once per basis vector of ``xs[j]`` (once, with 1.0, for a float) on
    the arguments ``args()`` (made where it runs); ``direction(e)`` gives its extra arguments.
    Returns, for each output, the matrix whose row k is the output for e_k (the output itself
    for a float ``xs[j]``)."""
    x = xs[j]
    if not x.type.is_array:
        return inline(derivative, args() + direction(b.const(1.0)))
    size = b.emit("size", [x], name="n")
    rows = [b.emit("full", [size] + ([b.emit("size", [o])] if o.type.is_array else []),
                   {"value": 0.0, "dtype": o.type.dtype if o.type.is_array else x.type.dtype}, name="rows")
            for o in outs_like]
    nb = Block([Value(I64, "k")] + [Value(r.type, "rows") for r in rows])
    with Builder(nb) as bb:
        k = nb.args[0]
        outs = inline(derivative, args() + direction(_basis(bb, x, size, k)))
        new = []
        for r, o in zip(nb.args[1:], outs):
            if o.type.is_array:
                new.append(bb.emit("setslice", [r, _flat(bb, o, bb.emit("size", [o])), k], {"spec": (("i",),)},
                                   name="rows"))
            else:
                new.append(bb.emit("setitem", [r, o, k], name="rows"))
        bb.yield_(new)
    loop = for_op(b.const(0), size, b.const(1), rows, nb, [r.type for r in rows], b.loc, ["rows"] * len(rows))
    return b.append(loop)


def _block(b, rows, out, x):
    """d out / d x from the matrix whose row k is d out / d x_k: transposed, shaped
    ``out.shape + x.shape``."""
    if not x.type.is_array:
        return rows
    if not out.type.is_array:
        return rows if x.type.ndim == 1 else b.emit("reshape", [rows] + _shape(b, x))
    cols = b.emit("transpose", [rows])
    if out.type.ndim == 1 and x.type.ndim == 1:
        return cols
    return b.emit("reshape", [cols] + _shape(b, out) + _shape(b, x))


def hessian_function(primal, hvp, wrt, single):
    """(params...) -> the Hessian of ``primal`` in the ``wrt`` parameters: one block, or a tuple
    of tuples of blocks (``single``: one parameter, its block alone)."""
    fn = Function(primal.name + "_hessian", [(p.name, p.type) for p in primal.params], primal.loc)
    fn.derivative = True
    xs = [fn.params[k] for k in wrt]
    with Builder(fn.body) as b:
        args = _at_entry(b, primal, list(fn.params))
        blocks = [[None] * len(wrt) for _ in wrt]
        for j in range(len(wrt)):
            def direction(e, j=j):
                return [e if i == j else _zero(x) for i, x in enumerate(xs)]
            rows = _columns(b, hvp, args, xs, j, xs, direction)
            for i in range(len(wrt)):
                blocks[i][j] = _block(b, rows[i], xs[i], xs[j])
        if args.copies:
            inline(primal, list(fn.params))     # the argument arrays as a call of the function leaves them
        b.ret([blk for row in blocks for blk in row])
    if not single:
        fn.result_tree = Tree(tuple, [Tree(tuple, [None] * len(wrt)) for _ in wrt])
    return fn


def jacobian_function(primal, wrt, mode, single):
    """(params...) -> d f / d x_j for each ``wrt`` position (shape ``out.shape + x_j.shape``),
    ``primal`` returning one float or float array: by columns from forward mode (``"fwd"``), by
    rows from reverse mode (``"rev"``), or (``"auto"``) forward mode where the inputs have no
    more elements than the output, decided at run time."""
    out_type = primal.result_types[0]
    fn = Function(primal.name + "_jacobian", [(p.name, p.type) for p in primal.params], primal.loc)
    fn.derivative = True
    params = list(fn.params)
    xs = [params[k] for k in wrt]
    with Builder(fn.body) as b:
        args = _at_entry(b, primal, params)
        y = inline(primal, params)[0]       # (which leaves the argument arrays as the function does)
        if mode == "auto" and out_type.is_array:
            inputs = [b.emit("size", [x]) if x.type.is_array else b.const(1) for x in xs]
            total = inputs[0]
            for n in inputs[1:]:
                total = b.emit("add", [total, n])
            cond = b.emit("le", [total, b.emit("size", [y])], name="forward")
            regions, built = [], []
            for m in ("fwd", "rev"):
                blk = Block([])
                try:
                    with Builder(blk) as bb:
                        bb.yield_(_jacobian_blocks(bb, primal, args, xs, wrt, y, m))
                except TypingError:
                    # one mode cannot go through this function (reverse mode through a gradient
                    # with a loop, forward mode through a custom_vjp: ad/second_order.py)
                    continue
                regions.append(blk)
                built.append(m)
            if len(regions) == 2:
                types = [v.type for v in regions[0].ops[-1].operands]
                blocks = b.append(if_op(cond, regions[0], regions[1], types, b.loc, ["jacobian"] * len(types)))
            else:           # the mode that works (or, where none does, forward mode's error)
                blocks = _jacobian_blocks(b, primal, args, xs, wrt, y, built[0] if built else "fwd")
        else:
            blocks = _jacobian_blocks(b, primal, args, xs, wrt, y, "rev" if mode == "auto" else mode)
        b.ret(list(blocks))
    if not single:
        fn.result_tree = Tree(tuple, [None] * len(wrt))
    return fn


def with_value(primal, derivatives):
    """(params...) -> (primal's result, derivatives' results...): value_and_grad from a
    function of the derivatives alone (``jacobian_function``), both inlined."""
    fn = Function(primal.name + "_value_and_derivatives", [(p.name, p.type) for p in primal.params], primal.loc)
    fn.derivative = True
    with Builder(fn.body) as b:
        b.ret(inline(primal, list(fn.params))[:1] + inline(derivatives, list(fn.params)))
    return fn


def _jacobian_blocks(b, primal, args, xs, wrt, y, mode):
    if mode == "fwd":
        jvp = forward(primal, wrt)
        ret = jvp.body.terminator
        ret.operands = ret.operands[1:]         # the output's tangent
        out = []
        for j, x in enumerate(xs):
            def direction(e, j=j):
                return [e if i == j else _zero(v) for i, v in enumerate(xs)]
            rows = _columns(b, jvp, args, xs, j, [y], direction)[0]
            out.append(_block(b, rows, y, x))
        return out
    vjp = reverse(primal, wrt, cotangents=True)
    ret = vjp.body.terminator
    ret.operands = ret.operands[1:]             # the vector-Jacobian products
    rows = _columns(b, vjp, args, [y], 0, xs, lambda e: [e])
    return [_rows_block(b, r, y, x) for r, x in zip(rows, xs)]


def _rows_block(b, rows, out, x):
    """d out / d x from the matrix whose row k is d out_k / d x: shaped ``out.shape + x.shape``."""
    if not out.type.is_array:
        return rows
    if out.type.ndim == 1 and (not x.type.is_array or x.type.ndim == 1):
        return rows
    return b.emit("reshape", [rows] + _shape(b, out) + (_shape(b, x) if x.type.is_array else []))


class _Arguments:
    """The arguments each run of a derivative in the loop takes: the parameters, except that an
    array the function writes into is a fresh copy of its value on entry (``copies``), so every
    run starts from the point the matrix is taken at."""

    def __init__(self, params, copies):
        self.params, self.copies = params, copies

    def __call__(self):
        return [current().emit("copy", [self.copies[k]]) if k in self.copies else p
                for k, p in enumerate(self.params)]


def _at_entry(b, primal, params):
    buffers = Buffers(primal)
    written = [k for k, p in enumerate(primal.params) if p.type.is_array and buffers.of(p) & buffers.written]
    return _Arguments(params, {k: b.emit("copy", [params[k]], name=params[k].name) for k in written})


def _zero(x):
    """A zero direction for ``x`` (made where it is used: inside the loop, a fresh array)."""
    return current().emit("zeros_like", [x]) if x.type.is_array else current().const(0.0)


__all__ = ["hvp_function", "hessian_function", "jacobian_function"]
