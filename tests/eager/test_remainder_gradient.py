"""x % y on eager tensors differentiates in both operands, as PyTorch (found by the fuzzer:
the divisor's gradient was dropped)."""
import numpy as np
import torch as real_torch

import srcgrad as torch


def _grads(lib, a, b):
    x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
    ((x % y) * 3.0 + (x % 0.7)).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


def test_remainder_gradient_in_both_operands():
    for a, b in [(0.4, -1.16), (-1.3, 0.45), ([0.4, -2.0, 5.5], [1.5, -0.3, 2.0]), ([1.0, 2.0], 0.3)]:
        for mine, theirs in zip(_grads(torch, a, b), _grads(real_torch, a, b)):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_number_remainder_tensor():
    """-2.5 % y: PyTorch has no derivative for it (an error); srcgrad gives -floor(-2.5 / y)."""
    y = torch.tensor(1.16, dtype=torch.float64, requires_grad=True)
    (-2.5 % y).backward()
    assert float(y.grad) == -(-2.5 // 1.16)
