"""``parameters_to_vector`` and ``vector_to_parameters``.

Example:
    >>> import srcgrad as torch
    >>> model = torch.nn.Linear(3, 1)
    >>> v = torch.nn.utils.parameters_to_vector(model.parameters())
    >>> v.shape                          # 3 weights and a bias
    torch.Size([4])
    >>> torch.nn.utils.vector_to_parameters(torch.zeros(4), model.parameters())
    >>> model.bias
    Parameter containing:
    tensor([0.], requires_grad=True)
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
