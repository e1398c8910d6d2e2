"""``math`` and ``np`` for running a generated program on srcgrad's eager tensors: the same
source, its numbers replaced by 0-d tensors, gives the eager gradient to compare with the
compiled one. Functions the eager mode lacks are written from those it has."""
import types

import srcgrad as torch


def _atan2(a, b):
    if float(b) <= 0.0:
        raise NotImplementedError("atan2 with b <= 0 in the eager shim")
    return torch.atan(a / b)


def _as_tensor(v):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=torch.float64)


math = types.SimpleNamespace(
    sin=torch.sin, cos=torch.cos, tanh=torch.tanh, exp=torch.exp, atan=torch.atan, log1p=torch.log1p,
    sqrt=torch.sqrt, atan2=_atan2)

np = types.SimpleNamespace(
    zeros=lambda n: torch.zeros(n, dtype=torch.float64),
    sum=torch.sum, mean=torch.mean, dot=torch.dot, tanh=torch.tanh, sin=torch.sin,
    max=lambda x: torch.max(x), min=lambda x: torch.min(x),
    maximum=lambda a, b: torch.maximum(_as_tensor(a), _as_tensor(b)))
