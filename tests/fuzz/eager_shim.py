"""``math`` and ``np`` for running a generated program on srcgrad's eager tensors: the same
source, its numbers replaced by 0-d tensors, gives the eager gradient to compare with the
compiled one. Functions the eager mode lacks are written from those it has."""
import types

import srcgrad as torch


def _as_tensor(v):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=torch.float64)


def _numbers_too(fn):
    """math.f takes numbers: so does its shim (as 0-d float64 tensors)."""
    return lambda *args: fn(*[_as_tensor(a) for a in args])


def _atan2(a, b):
    if float(b) <= 0.0:
        raise NotImplementedError("atan2 with b <= 0 in the eager shim")
    return torch.atan(_as_tensor(a) / b)


math = types.SimpleNamespace(
    sin=_numbers_too(torch.sin), cos=_numbers_too(torch.cos), tanh=_numbers_too(torch.tanh),
    exp=_numbers_too(torch.exp), atan=_numbers_too(torch.atan), log1p=_numbers_too(torch.log1p),
    sqrt=_numbers_too(torch.sqrt), atan2=_atan2)

np = types.SimpleNamespace(
    zeros=lambda n: torch.zeros(n, dtype=torch.float64), empty=lambda n: torch.zeros(n, dtype=torch.float64),
    zeros_like=torch.zeros_like, ones_like=torch.ones_like, exp=torch.exp,
    sum=torch.sum, mean=torch.mean, dot=torch.dot, tanh=torch.tanh, sin=torch.sin,
    max=lambda x: torch.max(x), min=lambda x: torch.min(x),
    maximum=lambda a, b: torch.maximum(_as_tensor(a), _as_tensor(b)))
