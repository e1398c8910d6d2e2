"""Samplers: iterables of dataset indices (or of lists of indices, ``BatchSampler``) that the
``DataLoader`` reads, with PyTorch's argument checks and messages.

The random ones draw from srcgrad's generator when iterated, so ``srcgrad.manual_seed`` makes
an epoch's order repeatable (the numbers differ from PyTorch's); see ``_random`` for what a
``generator=`` argument does.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.utils.data import BatchSampler, RandomSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> _ = torch.manual_seed(0)
    >>> sorted(RandomSampler(range(5)))
    [0, 1, 2, 3, 4]
"""
import itertools
from typing import Generic, TypeVar

import numpy as np

from ...eager import creation as _creation, dtypes as _dtypes
from . import _random

T_co = TypeVar("T_co", covariant=True)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


def _is_positive_int(n):
    return isinstance(n, int) and not isinstance(n, bool) and n > 0


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (and ``__len__`` where known).

    >>> class Evens(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(0, self.n, 2))
    >>> list(Evens(5))
    [0, 2, 4]
    """

    def __iter__(self):
        raise NotImplementedError

    # No default __len__ (as in Dataset): len() of a sampler without one is Python's TypeError.


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random order of ``range(len(data_source))``; with ``replacement=True``, ``num_samples``
    independent uniform draws. Without replacement and ``num_samples > len``, whole
    permutations follow one another (then a part of one).

    >>> len(list(RandomSampler(range(4), replacement=True, num_samples=10)))
    10
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # read at each use: the data source may grow or shrink between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        rng = _random.numpy_rng(self.generator)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order.

    >>> sorted(SubsetRandomSampler([7, 3, 5]))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``range(len(weights))`` drawn with probabilities proportional
    to ``weights`` (as ``torch.multinomial``): with replacement by default; without, no index
    repeats and zero-weight indices come only after all the others.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = _creation.as_tensor(weights, dtype=_dtypes.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement,
                                _random.numpy_rng(self.generator))

    def __len__(self):
        return self.num_samples


def _multinomial(w, k, replacement, rng):
    """``torch.multinomial(w, k, replacement)`` as a list, with its errors."""
    if not replacement and k > len(w):
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if w.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        return rng.choice(len(w), size=k, replace=True, p=w / w.sum()).tolist()
    # Without replacement: each index gets the key E / w with E ~ Exp(1); the k smallest keys
    # are a weighted draw without replacement. Zero weights sort last, in a random order.
    e = rng.exponential(size=len(w))
    keys = e / np.where(w > 0, w, 1.0)
    return np.lexsort((keys, w == 0))[:k].tolist()


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` (any iterable) into lists of ``batch_size``; the last,
    shorter one is dropped if ``drop_last``.

    >>> list(BatchSampler(range(7), 3, drop_last=True))
    [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
