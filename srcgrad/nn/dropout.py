"""``Dropout`` and ``Flatten``/``Unflatten``.

Example:
    >>> import srcgrad as torch
    >>> torch.nn.Dropout(p=0.2)
    Dropout(p=0.2, inplace=False)
"""
from . import functional as F
from .module import Module


class Dropout(Module):
    """In training, zeroes each element with probability p and scales the rest by 1/(1-p);
    in eval mode, the identity."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Flattens dimensions start_dim..end_dim into one (the batch dimension 0 stays)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        shape = list(input.shape)
        d = self.dim % len(shape)
        return input.reshape(*shape[:d], *self.unflattened_size, *shape[d + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = ["Dropout", "Flatten", "Unflatten"]
