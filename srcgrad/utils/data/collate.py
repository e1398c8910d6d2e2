"""Collation: how the ``DataLoader`` turns a list of samples into a batch (``default_collate``)
and converts a single sample when it does not batch (``default_convert``), as PyTorch does.

``default_collate`` stacks tensors along a new first dimension; numpy arrays become tensors
(then stacked), Python floats a float64 tensor, ints an int64 tensor, bools a bool tensor,
numpy scalars a tensor of their dtype; strings and bytes stay a sequence. Dicts, namedtuples,
lists and tuples are collated field by field (a batch of tuples gives a list, as in
PyTorch).

Example:
    >>> import srcgrad as torch
    >>> default_collate([(torch.zeros(2), 1, "a"), (torch.ones(2), 2, "b")])
    [tensor([[0., 0.],
            [1., 1.]]), tensor([1, 2]), ('a', 'b')]
    >>> default_collate([{"x": 0.5}, {"x": 1.5}])
    {'x': tensor([0.5000, 1.5000], dtype=torch.float64)}
"""
import collections.abc
import copy

import numpy as np

from ...eager import creation as _creation, dtypes as _dtypes
from ...eager.ops.shape import stack as _stack
from ...eager.tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_text_or_object(dtype):
    # numpy arrays of bytes, unicode or Python objects have no tensor counterpart
    return dtype.kind in "SaUO"


def _is_numpy_value(x):
    """numpy arrays and scalars, but not numpy's str_/bytes_ (they behave as str/bytes)."""
    return type(x).__module__ == "numpy" and not isinstance(x, (str, bytes))


def default_convert(data):
    """A sample with its numpy arrays and numpy scalars turned into tensors (arrays of
    strings or objects, and Python numbers, are left alone); containers are rebuilt around the
    converted elements (a tuple becomes a list, as in PyTorch).

    >>> default_convert((np.array([1, 2]), 3))
    [tensor([1, 2]), 3]
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _is_text_or_object(data.dtype):
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):        # a namedtuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, items):
    """``items`` in a mapping of the type of ``like`` where that type allows it, else a dict."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)          # keeps the attributes of dict subclasses
            clone.update(items)
            return clone
        return type(like)(items)
    except TypeError:
        return items


def _rebuild_sequence(like, items):
    """``items`` in a sequence of the type of ``like`` where that type allows it, else a list."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return type(like)(items)
    except TypeError:
        return items


# ------------------------------------------------------------------------------ collation


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _is_text_or_object(batch[0].dtype):
        raise TypeError(_ERR.format(batch[0].dtype))
    return collate([_creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    # through a numpy array, so that the scalars' dtype (float32, int16, ...) is kept
    return _creation.as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(batch, dtype=_dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(batch)           # int64; a batch of bools gives a bool tensor


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# Element type -> how to collate a batch of it. An element's exact type is looked up first, then
# the entries in this order by isinstance (bool is found as an int). Users may add entries.
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) with the functions of ``collate_fn_map`` for its
    leaf types, recursing into mappings, namedtuples and sequences.

    >>> collate([[1, 2], [3, 4]], collate_fn_map={int: lambda b, collate_fn_map: sum(b)})
    [4, 6]
    """
    elem = batch[0]
    if collate_fn_map is not None:
        if type(elem) in collate_fn_map:
            return collate_fn_map[type(elem)](batch, collate_fn_map=collate_fn_map)
        for kind, fn in collate_fn_map.items():
            if isinstance(elem, kind):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                                       for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):        # namedtuple
        return type(elem)(*(collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field's values: zip gives tuples, which the str/bytes collation passes through as is
        fields = [collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        return _rebuild_sequence(elem, fields)
    raise TypeError(_ERR.format(type(elem)))


def default_collate(batch):
    """Merge a list of samples into a batch (see the module docstring).

    >>> default_collate([1, 2, 3])
    tensor([1, 2, 3])
    >>> default_collate(["a", "b"])
    ['a', 'b']
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
