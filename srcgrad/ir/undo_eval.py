"""The meaning of the undo log (ad/reverse.py): a list of (array, key, old values), one entry a
saved write; the interpreter's entries (merged into interpret.EVAL) and ``rewind``, which the
python backend's generated code calls too.

Example:
    >>> log = []; x = np.arange(3.0)
    >>> log.append((x, (1,), x[1])); x[1] = 9.0
    >>> rewind(log, 0); x
    array([0., 1., 2.])
"""
import numpy as np

from .indexing_eval import _key as _array_key
from .interpret_keys import index_key, slice_key
from .primitives import PRIMITIVES

# how each kind of write (Primitive.key) makes its numpy key from its op and index operands
_KEYS = {
    "item": lambda op, idx: index_key(idx),
    "slice": slice_key,
    "mask": lambda op, idx: np.asarray(idx[0], dtype=bool),
    "indices": lambda op, idx: _array_key(idx),
}


def write_key(write, op, idx):
    """The numpy key through which write ``write`` (a primitive name) with index operands
    ``idx`` writes: ints, slices, index arrays or a mask."""
    return _KEYS[PRIMITIVES[write].key](op, idx)


def rewind(log, height):
    """Put back what the writes since the log had ``height`` entries overwrote, latest first."""
    while len(log) > height:
        arr, key, old = log.pop()
        arr[key] = old


def _save(it, op, ins):
    arr, log, *idx = ins
    key = write_key(op.attrs["write"], op, idx)
    old = arr[key]
    log.append((arr, key, old.copy() if isinstance(old, np.ndarray) else old))


def _rewind(it, op, ins):
    rewind(ins[0], int(ins[1]))


UNDO_EVAL = {
    "undo_new": lambda it, op, ins: [],
    "undo_mark": lambda it, op, ins: len(ins[0]),
    "undo_save": _save,
    "undo_rewind": _rewind,
}
