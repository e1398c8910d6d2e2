"""``srcgrad.utils.data``: PyTorch's ``torch.utils.data`` for srcgrad tensors — datasets,
samplers, ``DataLoader`` and collation, with PyTorch's defaults, errors and batches.

Differences from PyTorch: shuffling draws from srcgrad's global generator (seeded by
``srcgrad.manual_seed``; a ``numpy.random.Generator`` passed as ``generator=`` is used
instead, any other object is accepted and ignored), so the orders are repeatable but not
PyTorch's; ``num_workers > 0`` loads in the calling process (see ``dataloader``); DataPipes
and ``DistributedSampler`` are not provided.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.utils.data import DataLoader, Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def __getitem__(self, i):
    ...         return torch.tensor([float(i)]), i * i
    >>> x, y = next(iter(DataLoader(Squares(), batch_size=3)))
    >>> x.shape, y
    (torch.Size([3, 1]), tensor([0, 1, 4]))
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)


class DistributedSampler(Sampler):
    """Not provided: srcgrad runs in one process, without ``torch.distributed``."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("srcgrad.utils.data.DistributedSampler is not supported: srcgrad's eager mode "
                                  "runs in one process, without torch.distributed")


__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
