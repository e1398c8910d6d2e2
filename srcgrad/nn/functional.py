"""``srcgrad.nn.functional``: losses and activations for eager tensors.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.nn.functional as F
    >>> F.mse_loss(torch.ones(2), torch.zeros(2))
    tensor(1.)
"""
from ..eager.functional import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401
                                dropout, l1_loss, leaky_relu, linear, log_softmax, mse_loss, nll_loss, one_hot,
                                relu, sigmoid, softmax, softplus, tanh)
