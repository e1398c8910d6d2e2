"""The reference semantics of numpy's advanced indexing (integer index arrays, boolean masks):
the interpreter's entries for them (merged into interpret.EVAL), computed by numpy itself.

Example:
    INDEXING_EVAL["gather"](None, op, [np.arange(5.0), np.array([4, -1])])     # array([4., 4.])
"""
import numpy as np


def _key(idx):
    return tuple(np.asarray(i, dtype=np.int64) for i in idx)


def _gather(it, op, ins):
    arr, *idx = ins
    out = np.array(arr[_key(idx)])                  # a copy, raising numpy's IndexError
    if op.attrs.get("last_only"):
        # the adjoint of x[idx] = v: only the last of the entries naming one place was stored
        lead = arr.shape[:len(idx)]
        wrapped = [np.where(i < 0, i + n, i) for i, n in zip(np.broadcast_arrays(*_key(idx)), lead)]
        places = np.ravel_multi_index(wrapped, lead).reshape(-1) if lead else np.zeros(1, np.int64)
        later = set()
        rows = out.reshape((places.size,) + arr.shape[len(idx):])
        for k in range(places.size - 1, -1, -1):
            if int(places[k]) in later:
                rows[k] = 0
            later.add(int(places[k]))
    return out


def _scatter(it, op, ins):
    arr, v, *idx = ins
    arr[_key(idx)] = v              # numpy: a repeated place keeps the last value
    return arr


def _scatter_add(it, op, ins):
    arr, v, *idx = ins
    np.add.at(arr, _key(idx), v)
    return arr


def _mask_select(it, op, ins):
    arr, mask = ins
    return arr[np.asarray(mask, dtype=bool)]


def _setmask(it, op, ins):
    arr, v, mask = ins
    arr[np.asarray(mask, dtype=bool)] = v
    return arr


INDEXING_EVAL = {"gather": _gather, "scatter": _scatter, "scatter_add": _scatter_add, "mask_select": _mask_select,
                 "setmask": _setmask}
