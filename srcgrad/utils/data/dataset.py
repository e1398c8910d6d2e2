"""Datasets: PyTorch's ``Dataset`` protocol and its ready-made datasets, with PyTorch's errors.

A map-style dataset answers ``len(ds)`` and ``ds[i]``; an iterable-style one
(``IterableDataset``) yields its samples from ``iter(ds)``.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(torch.arange(10), torch.arange(10) * 2)
    >>> ds[3]
    (tensor(3), tensor(6))
    >>> [len(part) for part in random_split(ds, [0.7, 0.3])]
    [7, 3]
"""
import bisect
import math
import warnings
from typing import Generic, TypeVar

from . import _random

T_co = TypeVar("T_co", covariant=True)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).
    ``a + b`` concatenates two datasets. ``Generic`` lets ``Dataset[int]`` be subclassed, as
    in PyTorch.

    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> both = Squares() + Squares()
    >>> len(both), both[5]
    (8, 1)
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    # No default __len__: without one, len(ds) is Python's TypeError, which is what callers expect.

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """An iterable-style dataset: subclasses define ``__iter__``. ``a + b`` chains two of them.

    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension: ``ds[i]`` is
    ``(t[i] for t in tensors)`` as a tuple.

    >>> import srcgrad as torch
    >>> ds = TensorDataset(torch.zeros(3, 2), torch.tensor([0, 1, 2]))
    >>> len(ds), ds[2][1]
    (3, tensor(2))
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of the same length side by side: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {'x': a[i], 'y': b[i]}``.

    >>> StackDataset([1, 2], "ab")[1]
    (2, 'b')
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        # one batched fetch per part that offers it (__getitems__), one item at a time otherwise
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, d in parts:
            batched = getattr(d, "__getitems__", None)
            if callable(batched):
                items = batched(indices)
                if len(items) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                                     f"got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns[key] = items
        if named:
            return [{k: columns[k][j] for k in columns} for j in range(len(indices))]
        return [tuple(columns[k][j] for k in columns) for j in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after the other; ``cumulative_sizes`` holds the running lengths.

    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    @staticmethod
    def cumsum(sequence):
        sizes, total = [], 0
        for d in sequence:
            total += len(d)
            sizes.append(total)
        return sizes

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        # the first dataset whose running total exceeds idx holds it
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other, chained lazily.

    >>> class Letters(IterableDataset):
    ...     def __init__(self, s):
    ...         self.s = s
    ...     def __iter__(self):
    ...         return iter(self.s)
    >>> list(ChainDataset([Letters("ab"), Letters("c")]))
    ['a', 'b', 'c']
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(ds, idx)[i] == ds[idx[i]]``.

    >>> s = Subset("abcdef", [5, 0, 2])
    >>> len(s), s[0], s.__getitems__([1, 2])
    (3, 'f', ['a', 'c'])
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        # The DataLoader fetches batches through __getitems__; a subclass that changes only
        # __getitem__ would be bypassed silently, so PyTorch refuses it: so do we.
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        batched = getattr(self.dataset, "__getitems__", None)
        if callable(batched):
            return batched([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths, or of
    fractions summing to 1 (``floor(f * len)`` each, the remainder handed out one by one from
    the first split on). The order comes from srcgrad's generator (see ``_random``).

    >>> [len(s) for s in random_split(range(10), [0.5, 0.25, 0.25])]
    [6, 2, 2]
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, n in enumerate(lengths):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.permutation(sum(lengths), generator)
    splits, start = [], 0
    for n in lengths:
        splits.append(Subset(dataset, order[start:start + n]))
        start += n
    return splits
