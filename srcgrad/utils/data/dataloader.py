"""``DataLoader``: iterate over a dataset in batches, with PyTorch's arguments, defaults,
argument-conflict errors and ``len()``.

Loading always happens in the calling process. With ``num_workers > 0`` that process plays
the one worker of the loader: the batches are the same as PyTorch's for a map-style dataset
(PyTorch's workers return them in sampler order too), ``worker_init_fn(0)`` runs when an
iterator starts (once for all epochs with ``persistent_workers=True``), and while the loader
fetches, ``get_worker_info()`` gives ``WorkerInfo(id=0, num_workers=1, ...)`` so that an
``IterableDataset`` that splits its stream between workers yields all of it, once. Nothing
is run in parallel; ``timeout``, ``prefetch_factor``, ``multiprocessing_context`` and
``in_order`` are checked as PyTorch checks them and otherwise unused, and the global random
state is not reseeded per worker. ``pin_memory=True`` warns as PyTorch does on a machine
without an accelerator, and does nothing (srcgrad tensors live on the CPU).

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(5.0), torch.arange(5)), batch_size=2)
    >>> len(loader)
    3
    >>> for x, y in loader:
    ...     print(x, y)
    tensor([0., 1.]) tensor([0, 1])
    tensor([2., 3.]) tensor([2, 3])
    tensor([4.]) tensor([4])
"""
import math
import multiprocessing
import warnings
from dataclasses import dataclass

from . import _random
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "WorkerInfo", "get_worker_info", "default_collate", "default_convert"]


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` tells code run for a loader with ``num_workers > 0``."""
    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None     # the WorkerInfo while a num_workers > 0 loader runs dataset code, else None


def get_worker_info():
    """``None`` outside a loader's worker; see the module docstring for ``num_workers > 0``.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable-style dataset: ``None`` forever (the dataset decides where
    the stream ends)."""

    def __iter__(self):
        while True:
            yield None


# attributes that fix the batches: PyTorch refuses to change them once the loader exists
_FIXED_ATTRIBUTES = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def _checked_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """PyTorch's checks of the worker options; returns ``prefetch_factor`` (2 by default with
    workers)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                         "multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _checked_sampling_options(iterable, batch_size, shuffle, sampler, batch_sampler, drop_last):
    """PyTorch's checks of the options that choose the samples and batches (``iterable``: the
    dataset is an IterableDataset); returns ``(shuffle, batch_size, drop_last)`` as the loader
    keeps them (a ``batch_sampler`` makes its own batches: no batch_size, no drop_last)."""
    if iterable:
        # the dataset alone decides what comes out, and in which order
        if shuffle not in {False, None}:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                             f"shuffle={shuffle}")
        if sampler is not None:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                             f"sampler={sampler}")
        if batch_sampler is not None:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                             f"got batch_sampler={batch_sampler}")
    else:
        shuffle = bool(shuffle)
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        batch_size, drop_last = None, False
    elif batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                         "drop_last")
    return shuffle, batch_size, drop_last


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` samples collated by ``collate_fn``
    (``default_collate``), in order or shuffled (``shuffle=True``, from srcgrad's generator),
    or in the order of a ``sampler``/``batch_sampler``. ``batch_size=None`` yields single
    samples converted by ``default_convert``. See the module docstring for ``num_workers``.

    >>> loader = DataLoader(list(range(10)), batch_size=4, drop_last=True)
    >>> [b.tolist() for b in loader]
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        prefetch_factor = _checked_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        shuffle, batch_size, drop_last = _checked_sampling_options(self._iterable, batch_size, shuffle, sampler,
                                                                   batch_sampler, drop_last)
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None     # len(loader) of an IterableDataset, for a warning
        self._iterator = None

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in _FIXED_ATTRIBUTES:
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator reads: lists of indices when batching, single indices otherwise."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = _SingleProcessDataLoaderIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        n = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return n


class _SingleProcessDataLoaderIter:
    """One pass over a ``DataLoader``: fetches and collates each batch when asked."""

    def __init__(self, loader):
        if loader.num_workers == 0 and loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_workers = loader.num_workers
        self._worker = None
        if loader.num_workers > 0:
            seed = int(_random.numpy_rng(loader.generator).integers(2 ** 63))
            self._worker = WorkerInfo(id=0, num_workers=1, seed=seed, dataset=loader.dataset)
            if loader.worker_init_fn is not None:
                self._as_worker(loader.worker_init_fn, 0)
        self._reset(loader)

    def _reset(self, loader):
        """Start a new epoch (a persistent iterator is reused from one epoch to the next)."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_reported = loader._IterableDataset_len_called
        self._ended = False
        self._dataset_iter = self._as_worker(iter, self._dataset) if self._iterable else None

    def _as_worker(self, fn, *args):
        """``fn(*args)`` with ``get_worker_info()`` answering as in a worker (num_workers > 0)."""
        global _worker_info
        if self._worker is None:
            return fn(*args)
        outer, _worker_info = _worker_info, self._worker
        try:
            return fn(*args)
        finally:
            _worker_info = outer

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def __next__(self):
        index = next(self._sampler_iter)                    # StopIteration ends the epoch
        data = self._as_worker(self._fetch, index)          # so can an exhausted IterableDataset
        self._num_yielded += 1
        if self._iterable and self._len_reported is not None and self._num_yielded > self._len_reported:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._len_reported}(when "
                   f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def _fetch(self, index):
        if self._iterable:
            return self._collate_fn(self._next_samples(index))
        if not self._auto_collation:
            return self._collate_fn(self._dataset[index])
        batched = getattr(self._dataset, "__getitems__", None)
        samples = batched(index) if batched else [self._dataset[i] for i in index]
        return self._collate_fn(samples)

    def _next_samples(self, index):
        """The next sample of an IterableDataset, or the next ``len(index)`` of them when batching."""
        if self._ended:
            raise StopIteration
        if not self._auto_collation:
            return next(self._dataset_iter)
        samples = []
        for _ in index:
            try:
                samples.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not samples or (self._drop_last and len(samples) < len(index)):
            raise StopIteration
        return samples
