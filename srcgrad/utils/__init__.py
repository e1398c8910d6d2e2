"""``srcgrad.utils``: PyTorch's ``torch.utils`` for srcgrad, so far its ``data`` package
(datasets, samplers, ``DataLoader`` and collation).

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(6)), batch_size=4)
    >>> [batch[0].tolist() for batch in loader]
    [[0, 1, 2, 3], [4, 5]]
"""
from . import data  # noqa: F401

__all__ = ["data"]
