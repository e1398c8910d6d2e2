"""The table of Tensor methods and operators: each name bound to its op function.

Keeping the binding in one table makes it easy to see what the eager mode offers and to
check each name against PyTorch's Tensor (tests/eager/test_ops_table.py).

This module gathers the ops: tensor.py, graph.py and creation.py are below them, and the ops'
derivative rules (ops/dual.py) call Tensor methods, so whatever those need from above is bound
here — the methods, ``Tensor.backward`` (the engine's) and the ops that dual.py calls on Tensors.
"""
import numpy as np

from .. import devices
from . import autograd_api
from . import creation as cr
from . import functional as fn
from .ops import dual
from .ops import inplace as _ip
from .ops import linalg, pointwise as pw, reduce as rd, shape as sh
from .tensor import Tensor


def _swap(fn):
    """The reflected operator: ``2 // x`` calls ``x.__rfloordiv__(2)``."""
    from .ops._core import as_tensor
    return lambda a, b: fn(as_tensor(b, like=a), a)


def _dtype_method(d):
    from . import dtypes
    dt = getattr(dtypes, d)
    return lambda self, memory_format=None: sh.to(self, dt)


def _shape_method(fn):
    return lambda self, *shape: fn(self, *shape)


OPERATORS = {
    "__add__": pw.add, "__radd__": pw.add, "__iadd__": _ip.inplace(pw.add, np.add),
    "__sub__": pw.sub, "__rsub__": pw.rsub, "__isub__": _ip.inplace(pw.sub, np.subtract),
    "__mul__": pw.mul, "__rmul__": pw.mul, "__imul__": _ip.inplace(pw.mul, np.multiply),
    "__truediv__": pw.div, "__rtruediv__": pw.rdiv, "__itruediv__": _ip.inplace(pw.div, np.true_divide),
    "__floordiv__": pw.floor_divide, "__rfloordiv__": _swap(pw.floor_divide),
    "__mod__": pw.remainder, "__rmod__": _swap(pw.remainder),
    "__pow__": pw.pow, "__rpow__": pw.rpow, "__ipow__": _ip.inplace(pw.pow),
    "__matmul__": linalg.matmul, "__rmatmul__": _swap(linalg.matmul),
    "__neg__": pw.neg, "__pos__": lambda x: x, "__abs__": pw.abs, "__invert__": pw.invert,
    "__eq__": pw.eq, "__ne__": pw.ne, "__lt__": pw.lt, "__le__": pw.le, "__gt__": pw.gt, "__ge__": pw.ge,
    "__and__": pw.bitwise_and, "__or__": pw.bitwise_or, "__xor__": pw.bitwise_xor,
    "__getitem__": sh.getitem, "__setitem__": sh.setitem,
}

METHODS = {
    # arithmetic
    "add": pw.add, "sub": pw.sub, "subtract": pw.sub, "mul": pw.mul, "multiply": pw.mul, "div": pw.div,
    "divide": pw.div, "true_divide": pw.div, "floor_divide": pw.floor_divide, "remainder": pw.remainder,
    "pow": pw.pow, "neg": pw.neg, "negative": pw.neg, "reciprocal": pw.reciprocal, "square": pw.square,
    "matmul": linalg.matmul, "mm": linalg.mm, "mv": linalg.mv, "dot": linalg.dot, "bmm": linalg.bmm,
    "outer": linalg.outer, "ger": linalg.outer,
    # elementwise functions
    "exp": pw.exp, "log": pw.log, "log2": pw.log2, "log10": pw.log10, "log1p": pw.log1p, "expm1": pw.expm1,
    "sin": pw.sin, "cos": pw.cos, "tan": pw.tan, "asin": pw.asin, "acos": pw.acos, "atan": pw.atan,
    "softmax": fn.softmax, "log_softmax": fn.log_softmax,
    "sinh": pw.sinh, "cosh": pw.cosh, "tanh": pw.tanh, "sigmoid": pw.sigmoid, "relu": pw.relu,
    "abs": pw.abs, "sqrt": pw.sqrt, "rsqrt": pw.rsqrt, "erf": pw.erf, "sign": pw.sign,
    "floor": pw.floor, "ceil": pw.ceil, "round": pw.round, "trunc": pw.trunc,
    "clamp": pw.clamp, "clip": pw.clamp, "clamp_min": pw.clamp_min, "clamp_max": pw.clamp_max,
    "maximum": pw.maximum, "minimum": pw.minimum, "where": lambda self, cond, other: pw.where(cond, self, other),
    "lerp": pw.lerp, "xlogy": pw.xlogy,
    # comparisons and logic
    "eq": pw.eq, "ne": pw.ne, "lt": pw.lt, "le": pw.le, "gt": pw.gt, "ge": pw.ge,
    "greater": pw.gt, "less": pw.lt, "equal": pw.equal, "allclose": pw.allclose,
    "logical_not": pw.logical_not, "isnan": pw.isnan, "isinf": pw.isinf, "isfinite": pw.isfinite,
    # reductions
    "sum": rd.sum, "mean": rd.mean, "max": rd.max, "min": rd.min, "amax": rd.amax, "amin": rd.amin,
    "argmax": rd.argmax, "argmin": rd.argmin, "norm": rd.norm, "prod": rd.prod, "var": rd.var, "std": rd.std,
    "all": rd.all, "any": rd.any, "cumsum": rd.cumsum, "logsumexp": rd.logsumexp, "gather": rd.gather,
    "sum_to_size": rd.sum_to_size,
    # shapes and copies
    "view": sh.view, "reshape": sh.reshape, "flatten": sh.flatten, "t": sh.t, "permute": sh.permute,
    "transpose": sh.transpose, "squeeze": sh.squeeze, "unsqueeze": sh.unsqueeze, "expand": sh.expand,
    "expand_as": sh.expand_as, "view_as": lambda self, other: sh.view(self, other.shape),
    "reshape_as": lambda self, other: sh.reshape(self, other.shape),
    "clone": sh.clone, "contiguous": sh.contiguous, "to": sh.to, "select": sh.select, "narrow": sh.narrow,
    "split": sh.split, "chunk": sh.chunk, "unbind": sh.unbind, "flip": sh.flip,
    "float": _dtype_method("float32"), "double": _dtype_method("float64"), "half": _dtype_method("float16"),
    "long": _dtype_method("int64"), "int": _dtype_method("int32"), "bool": _dtype_method("bool_"),
    "cpu": lambda self: self, "cuda": devices.tensor_cuda,
    # new tensors in this one's dtype
    "new": cr.new_method(sh.alias), "new_zeros": cr.new_zeros, "new_ones": cr.new_ones,
    "new_empty": cr.new_empty, "new_full": cr.new_full, "new_tensor": cr.new_tensor,
    # in place
    "zero_": _ip.zero_, "fill_": _ip.fill_, "copy_": _ip.copy_,
    "add_": _ip.inplace(pw.add, np.add), "sub_": _ip.inplace(pw.sub, np.subtract),
    "mul_": _ip.inplace(pw.mul, np.multiply), "div_": _ip.inplace(pw.div, np.true_divide), "pow_": _ip.inplace(pw.pow), "neg_": _ip.inplace(pw.neg),
    "exp_": _ip.inplace(pw.exp), "log_": _ip.inplace(pw.log), "sqrt_": _ip.inplace(pw.sqrt),
    "tanh_": _ip.inplace(pw.tanh), "sigmoid_": _ip.inplace(pw.sigmoid), "relu_": _ip.inplace(pw.relu),
    "abs_": _ip.inplace(pw.abs), "sin_": _ip.inplace(pw.sin), "cos_": _ip.inplace(pw.cos),
    "clamp_": _ip.inplace(pw.clamp), "clamp_min_": _ip.inplace(pw.clamp_min),
    "clamp_max_": _ip.inplace(pw.clamp_max), "square_": _ip.inplace(pw.square),
    "reciprocal_": _ip.inplace(pw.reciprocal),
    "uniform_": lambda self, a=0.0, b=1.0, *, generator=None: cr.uniform_(self, a, b),
    "normal_": lambda self, mean=0.0, std=1.0, *, generator=None: cr.normal_(self, mean, std),
}

PROPERTIES = {"T": sh.T, "mT": lambda x: sh.transpose(x, -2, -1), "H": sh.T}

for _name, _fn in {**OPERATORS, **METHODS}.items():
    setattr(Tensor, _name, _fn)
for _name, _fn in PROPERTIES.items():
    setattr(Tensor, _name, property(_fn))

# not in the tables above: the profiler times backward's nodes, not backward itself, and forward
# AD wraps the tables' ops only
Tensor.backward = autograd_api.tensor_backward

# the ops that dual.py's rules call on Tensors and that are no Tensor methods
dual.TENSOR_OPS.update(where=pw.where, index_put=sh.index_put, cat=sh.cat, stack=sh.stack)
