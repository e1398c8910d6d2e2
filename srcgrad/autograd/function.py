"""``srcgrad.autograd.function``: where ``Function`` lives in PyTorch's layout."""
from ..eager.function import Function, FunctionCtx, InplaceFunction, once_differentiable  # noqa: F401
