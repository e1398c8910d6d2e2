"""``nn.utils``: gradient clipping and parameter/vector conversion.

Example:
    >>> import srcgrad as torch
    >>> model = torch.nn.Linear(3, 1)
    >>> model(torch.ones(2, 3)).sum().backward()
    >>> total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    >>> bool(sum(p.grad.pow(2).sum() for p in model.parameters()).sqrt() <= 1.0 + 1e-6)
    True
"""
from . import clip_grad  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
