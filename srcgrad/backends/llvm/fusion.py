"""Which array ops the llvm backend leaves lazy: computed element by element inside the loop
of the one op that finally consumes them, instead of into a temporary array.

``np.sum(np.log1p(np.exp(-y * (X @ w))))`` written op by op makes five temporary arrays and
reads ``X`` in a loop of its own; with lazy values it is one loop over the rows of ``X``
(each row's dot product, then the element-wise chain, then the sum). Lazy ops are:

- element-wise ops (not float32 results, which storing would round);
- ``A @ w`` with ``A`` 2-d and ``w`` 1-d (each element a dot product of a row of ``A``), unless
  ``A`` is a transpose (its rows are columns in memory: ``@`` walks them better itself);
- ``sum_to(g, like)`` of equal ranks (the identity when the shapes are equal, which the
  consumer checks at run time, computing everything the plain way otherwise);
- ``broadcast_like`` of a number (every element is that number).

A value is lazy when all its uses are by lazy ops or by *roots* — ops that evaluate an
operand element by element exactly once per element: element-wise ops, ``sum``, ``sum_to``,
``@`` with a 1-d operand walked along the summed axis, and the value of a slice write
(``x[1:] = v``, ``x[1:] += v``) — and those uses lead to exactly one root (so memoising the
elements within one iteration of the root's loop computes each once). Reading the operands
later must give the same numbers: nothing between the op and its root may be a loop, a
branch or an effect (a custom call, the undo log), and no in-place write there, nor the root's
own, may reach a buffer the op reads (arguments may be one buffer, so a write into one
excludes reading another). The adjoint's ``dx = dx1 + dx2`` between slice accumulations into
other arrays is so computed in the loop of the write that finally reads it.

Example:
    lazy = lazy_ops(fn)          # a set of Ops
"""
from ...ir.core import walk_blocks, walk_ops
from ...ir.memory import EXTERN, Buffers
from ...ir.primitives import PRIMITIVES
from ...ir.types import F32, F64



def _writes(op):
    """Whether ``op`` may change memory: an in-place write, or an effect (a tape store, user code,
    the undo log's ``undo_save`` and ``undo_rewind``: a rewind writes old values back into arrays).
    ``undo_mark`` only reads the log, and is never lazy, so it stays where it is."""
    prim = PRIMITIVES[op.prim]
    return prim.writes is not None or prim.effect and op.prim not in ("assert", "yield", "return")


def _elementwise_array(op):
    return PRIMITIVES[op.prim].elementwise and op.results and op.results[0].type.is_array


def is_row_dot(op):
    """``A @ w`` with A 2-d and w 1-d."""
    return op.prim == "matmul" and [v.type.ndim for v in op.operands] == [2, 1]


def _candidate(op):
    if _elementwise_array(op):
        return op.results[0].type.dtype is not F32
    if is_row_dot(op):          # not X.T @ v: a dot product along a column of X per element
        a = op.operands[0].owner
        return op.results[0].type.dtype is F64 and (a is None or a.prim != "transpose")
    if op.prim == "sum_to":
        return equal_rank_sum_to(op)
    if op.prim == "broadcast_like":
        return not op.operands[0].type.is_array and op.attrs.get("axis") is None
    return False


def equal_rank_sum_to(op):
    """``sum_to(g, like)`` of equal ranks, neither float32: the identity where the shapes are
    equal at run time, which the llvm backend computes as ``g``'s elements (lazy.SumTo)."""
    g, like = (v.type for v in op.operands)
    return g.is_array and g.ndim == like.ndim and F32 not in (g.dtype, like.dtype)


def lazy_positions(op):
    """The operand positions where ``op`` reads a lazy value element by element."""
    if _elementwise_array(op):
        return set(range(len(op.operands)))
    if op.prim == "sum_to":
        return {0} if op.operands[0].type.is_array else set()
    if op.prim in ("setslice", "slice_add"):
        return {1} if op.operands[1].type.is_array else set()
    if op.prim == "sum":
        return {0} if op.attrs.get("axis") is None or op.operands[0].type.ndim == 1 else set()
    if op.prim == "matmul":
        ndims = [v.type.ndim for v in op.operands]
        # the 1-d operand, read once per element along the summed axis (a matmul that is
        # itself lazy reads it once per row instead: lazy_ops refuses that)
        return {1} if ndims == [2, 1] else ({0} if ndims == [1, 2] else set())
    return set()


def lazy_ops(fn):
    """The ops of ``fn`` left lazy (see the module doc)."""
    uses = {}
    for op in walk_ops(fn.body):
        shape_only = PRIMITIVES[op.prim].shape_operand
        for k, v in enumerate(op.operands):
            if k != shape_only:
                uses.setdefault(v, []).append((op, k))
    lazy = set()
    buffers = None
    for block in walk_blocks(fn.body):
        position = {op: at for at, op in enumerate(block.ops)}
        roots = {}                     # lazy op -> the one op that evaluates it
        for at in reversed(range(len(block.ops))):
            op = block.ops[at]
            if not _candidate(op):
                continue
            found = set()
            for user, k in uses.get(op.results[0], []):
                if user not in position or k not in lazy_positions(user) or (user in lazy and is_row_dot(user)):
                    found = None
                    break
                found.add(roots[user] if user in lazy else user)
            if not found or len(found) != 1:
                continue
            (root,) = found
            between = block.ops[at + 1:position[root]]
            if any(o.regions or (_writes(o) and PRIMITIVES[o.prim].writes is None) for o in between):
                continue
            writers = [o for o in between + [root] if _writes(o)]
            if writers and buffers is None:
                buffers = Buffers(fn)
            if any(_may_overlap(op, o, buffers) for o in writers):
                continue
            lazy.add(op)
            roots[op] = root
    return lazy


def _may_overlap(op, writer, buffers):
    """Whether ``op``, computed late (in its root's loop), may read memory that ``writer`` (an
    in-place write between ``op`` and its root, or the root itself: ``x[1:] = x[:-1] * 2``
    must read every element before it writes one) writes into. Arguments, and memory of
    unknown origin, may be one buffer."""
    written = buffers.of(writer.operands[PRIMITIVES[writer.prim].writes])
    shared = buffers.params | {EXTERN}
    for v in op.operands:
        read = buffers.of(v)
        if read & written or (read & shared and written & shared):
            return True
    return False
