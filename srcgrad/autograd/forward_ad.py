"""``torch.autograd.forward_ad`` for the eager mode (srcgrad/eager/forward_ad.py).

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(torch.tensor(2.0), torch.tensor(1.0)).exp()
    ...     fwAD.unpack_dual(y).tangent
    tensor(7.3891)
"""
from ..eager.forward_ad import (UnpackedDualTensor, dual_level, enter_dual_level, exit_dual_level,  # noqa: F401
                                make_dual, unpack_dual)
