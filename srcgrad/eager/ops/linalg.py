"""Matrix products: mm, mv, dot, bmm, addmm, and ``matmul`` dispatching between them as PyTorch does.

Example:
    >>> import srcgrad as torch
    >>> w = torch.ones(5, 3, requires_grad=True)
    >>> torch.matmul(torch.ones(5), w).grad_fn
    <SqueezeBackward4 object at 0x...>
"""
import numpy as np

from ..graph import Node, define_saved
from ..tensor import Tensor
from . import dual
from ._core import needs_grad, record


def _same_dtype(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name.replace('float32', 'float')}"
                           f" != {b.dtype.name.replace('float32', 'float')}")


def _saved_pair(a, b):
    # each side is needed only for the other's gradient; saving less lets in-place ops go on
    return (a if needs_grad(b) else None, b if needs_grad(a) else None)


class MmBackward0(Node):
    __slots__ = ("rhs_transposed", "layouts")    # layouts: both operands' shape and strides, the itemsize

    def apply(self, g):
        a, b = self.saved()
        return (dual.mm(g, dual.t(b)) if self.needs_input_grad(0) else None,
                dual.mm_grad_rhs(a, g, self.rhs_transposed) if self.needs_input_grad(1) else None)


def mm(a, b):
    """Matrix product of two 2-D tensors."""
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} and "
                           f"{b._data.shape[0]}x{b._data.shape[1]})")
    _same_dtype(a, b, "mm")
    t = record(dual.matmul2d(a._data, b._data), MmBackward0, (a, b), saved=_saved_pair(a, b))
    if t.grad_fn is not None:
        t.grad_fn.rhs_transposed = _is_transposed(b)
        t.grad_fn.layouts = (a._data.shape, a._data.strides, b._data.shape, b._data.strides, a._data.itemsize)
    return t


def _is_transposed(t):
    """True for a matrix laid out column by column (such as ``W.t()``)."""
    flags = t._data.flags
    return flags.f_contiguous and not flags.c_contiguous


class MvBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        m, v = self.saved()
        return (dual.mm(dual.unsqueeze(g, 1), dual.unsqueeze(v, 0)) if self.needs_input_grad(0) else None,
                dual.mv(dual.t(m), g) if self.needs_input_grad(1) else None)


def mv(m, v):
    if m._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {m._data.ndim}, {v._data.ndim}")
    if m._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({m._data.shape[0]}), mat ({m._data.shape[0]}x"
                           f"{m._data.shape[1]}), vec ({v._data.shape[0]})")
    _same_dtype(m, v, "mv")
    return record(m._data @ v._data, MvBackward0, (m, v), saved=_saved_pair(m, v))


class DotBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        a, b = self.saved()
        return (g * b if self.needs_input_grad(0) else None,
                g * a if self.needs_input_grad(1) else None)


def dot(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and src "
                           f"[{b._data.shape[0]}] to have the same number of elements, but got "
                           f"{a._data.shape[0]} and {b._data.shape[0]} elements respectively")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.name.capitalize()} "
                           f"and {b.dtype.name.capitalize()}")
    return record(np.dot(a._data, b._data), DotBackward0, (a, b), saved=_saved_pair(a, b))


class BmmBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        a, b = self.saved()
        return (dual.bmm(g, dual.transpose(b, 1, 2)) if self.needs_input_grad(0) else None,
                dual.bmm(dual.transpose(a, 1, 2), g) if self.needs_input_grad(1) else None)


def bmm(a, b):
    if a._data.ndim != 3 or b._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a._data.ndim != 3 else "batch2 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a._data.shape[0]}, "
                           f"{a._data.shape[2]}] but got: [{b._data.shape[0]}, {b._data.shape[1]}].")
    return record(np.matmul(a._data, b._data), BmmBackward0, (a, b), saved=_saved_pair(a, b))


class AddmmBackward0(Node):
    __slots__ = ("bias_shape", "rhs_transposed", "layouts")

    def apply(self, g):
        m1, m2 = self.saved()
        return (dual.sum_to(g, self.bias_shape) if self.needs_input_grad(0) else None,
                dual.mm(g, dual.t(m2)) if self.needs_input_grad(1) else None,
                dual.mm_grad_rhs(m1, g, self.rhs_transposed) if self.needs_input_grad(2) else None)


def addmm(bias, m1, m2, beta=1, alpha=1):
    """``beta * bias + alpha * (m1 @ m2)``; what ``linear`` records for a 2-D input."""
    if beta != 1 or alpha != 1:
        return bias * beta + mm(m1, m2) * alpha
    if m1._data.ndim != 2 or m2._data.ndim != 2 or m1._data.shape[1] != m2._data.shape[0]:
        return bias + mm(m1, m2)   # gives mm's error message
    out = dual.matmul2d(m1._data, m2._data)
    out += bias._data
    t = record(out, AddmmBackward0, (bias, m1, m2), saved=_saved_pair(m1, m2))
    if t.grad_fn is not None:
        t.grad_fn.bias_shape = bias._data.shape
        t.grad_fn.rhs_transposed = _is_transposed(m2)
        t.grad_fn.layouts = (m1._data.shape, m1._data.strides, m2._data.shape, m2._data.strides, m1._data.itemsize)
    return t


def matmul(a, b):
    """Matrix product with PyTorch's dispatch by the operands' dims (dot, mv, mm, batched)."""
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        return NotImplemented
    na, nb = a._data.ndim, b._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 1 and nb == 2:
        if a._data.shape[0] != b._data.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{a._data.shape[0]} and "
                               f"{b._data.shape[0]}x{b._data.shape[1]})")
        out = mm(a.unsqueeze(0), b).squeeze([0])
        if out.grad_fn is not None:
            out.grad_fn.dim = 0       # PyTorch's matmul saves this squeeze's dim as an int
        return out
    if na == 2 and nb == 2:
        return mm(a, b)
    if nb <= 2 and na >= 3:
        # fold the batch dims of a into its rows: one mm
        k = a._data.shape[-1]
        lead = a._data.shape[:-1]
        bb = b if nb == 2 else b.unsqueeze(1)
        out = mm(a.reshape(-1, k), bb)
        return _unsafe_view(out, lead + ((bb._data.shape[1],) if nb == 2 else ()))
    return _batched(a, b)


def _unsafe_view(x, shape):
    from .shape import UnsafeViewBackward0
    t = record(np.reshape(x._data, shape), UnsafeViewBackward0, (x,))
    if t.grad_fn is not None:
        t.grad_fn.shape = x._data.shape
    return t


def _batched(a, b):
    """N-d @ N-d: broadcast the batch dims, then one bmm."""
    va = a.unsqueeze(0) if a._data.ndim == 1 else a
    vb = b.unsqueeze(-1) if b._data.ndim == 1 else b
    ba, bb = va._data.shape[:-2], vb._data.shape[:-2]
    try:
        batch = np.broadcast_shapes(ba, bb)
    except ValueError:
        from ._core import broadcast_error
        raise broadcast_error(ba, bb) from None
    (n, k), (k2, m) = va._data.shape[-2:], vb._data.shape[-2:]
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(batch))}, {k}] but got: [{int(np.prod(batch))}, {k2}].")
    ea = va.expand(batch + (n, k)).reshape(-1, n, k)
    eb = vb.expand(batch + (k, m)).reshape(-1, k, m)
    out_shape = batch + ((n,) if a._data.ndim > 1 else ()) + ((m,) if b._data.ndim > 1 else ())
    return _unsafe_view(bmm(ea, eb), out_shape)


def outer(a, b):
    """Outer product of two vectors (recorded as a broadcast multiply, as in PyTorch)."""
    return a.reshape(-1, 1) * b


# ------------------------------------------------------------------ saved values, PyTorch's names
# (grad_fn._saved_mat2, ...: see graph.define_saved)


def _layout(k, strides):
    """Operand ``k``'s sizes, or its strides in elements; PyTorch saves an operand's strides only
    when that operand needs a gradient (an empty tuple otherwise)."""
    def get(n):
        shape, byte_strides = n.layouts[2 * k], n.layouts[2 * k + 1]
        if not strides:
            return tuple(shape)
        if n.next_functions[k + (1 if type(n) is AddmmBackward0 else 0)][0] is None:
            return ()
        return tuple(st // n.layouts[4] for st in byte_strides)
    return get


define_saved(MmBackward0, pack_order=(1, 0), self=0, mat2=1,
             self_sym_sizes=_layout(0, False), self_sym_strides=_layout(0, True),
             mat2_sym_sizes=_layout(1, False), mat2_sym_strides=_layout(1, True))
define_saved(AddmmBackward0, mat1=0, mat2=1, alpha=lambda n: 1, beta=lambda n: 1,
             mat1_sym_sizes=_layout(0, False), mat1_sym_strides=_layout(0, True),
             mat2_sym_sizes=_layout(1, False), mat2_sym_strides=_layout(1, True))
define_saved(MvBackward0, self=0, vec=1)
define_saved(DotBackward0, self=0, tensor=1)
define_saved(BmmBackward0, pack_order=(1, 0), self=0, mat2=1)
