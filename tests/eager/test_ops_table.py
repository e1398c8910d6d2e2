"""eager/methods.py's tables against PyTorch: every method, operator and property srcgrad binds
on Tensor is one that torch.Tensor has, under the same name, and each is bound as the table says."""
import torch

from srcgrad.eager import methods
from srcgrad.eager.tensor import Tensor


def test_every_bound_name_is_a_pytorch_tensor_name():
    bound = {**methods.OPERATORS, **methods.METHODS, **methods.PROPERTIES}
    missing = sorted(name for name in bound if not hasattr(torch.Tensor, name))
    assert not missing, f"not methods of torch.Tensor: {missing}"


def test_the_tables_are_what_tensor_has():
    for name, fn in {**methods.OPERATORS, **methods.METHODS}.items():
        assert Tensor.__dict__[name] is fn, name
    for name, fn in methods.PROPERTIES.items():
        assert Tensor.__dict__[name].fget is fn, name
