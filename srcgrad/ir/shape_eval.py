"""What the shape primitives compute (shape_primitives.py), in numpy's own words: the
reference semantics the interpreter runs and the python backend writes out.

Example:
    >>> restride(np.ones((2, 3)), "permute", (1, 0)).shape
    (3, 2)
"""
import numpy as np

from .types import NUMPY_DTYPES



def restride(x, kind, axes):
    """The view ``restride`` makes: a permutation, a flip, a squeeze or an expand_dims of ``x``."""
    if kind == "permute":
        return np.transpose(x, axes)
    if kind == "flip":
        return np.flip(x, axes)
    if kind == "squeeze":
        return np.squeeze(x, axis=axes)
    return np.expand_dims(x, axes)


def inverse_restride(kind, axes):
    """(kind, axes) of the restride that undoes ``kind, axes``: the adjoint's.

    >>> inverse_restride("permute", (2, 0, 1))
    ('permute', (1, 2, 0))
    """
    if kind == "permute":
        return "permute", tuple(int(k) for k in np.argsort(axes))
    return {"flip": "flip", "squeeze": "expand", "expand": "squeeze"}[kind], axes


SHAPE_EVAL = {
    "reshape": lambda it, op, ins: np.reshape(ins[0], tuple(int(n) for n in ins[1:])),     # a view where numpy's is
    "restride": lambda it, op, ins: restride(ins[0], op.attrs["kind"], op.attrs["axes"]),
    "astype": lambda it, op, ins: ins[0].astype(NUMPY_DTYPES[op.attrs["dtype"]]),
    "pack": lambda it, op, ins: np.array(ins, dtype=NUMPY_DTYPES[op.attrs["dtype"]]).reshape(op.attrs["shape"]),
    "stack": lambda it, op, ins: np.array(ins, dtype=NUMPY_DTYPES[op.attrs["dtype"]]),
}
