"""``parameters_to_vector`` and ``vector_to_parameters``.

Example:
    >>> v = torch.nn.utils.parameters_to_vector(model.parameters())
"""
from ...eager.ops.shape import cat


def parameters_to_vector(parameters):
    """Every parameter flattened, concatenated in order."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Write consecutive slices of ``vec`` into the parameters' data."""
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
