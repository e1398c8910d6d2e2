"""srcgrad: automatic differentiation for Python.

Two ways in: the source-transforming compiler (``srcgrad.grad``, ``jit``, ``vjp``, ``jvp``,
``vectorize``, ... on plain Python/numpy functions: their IR, readable adjoint source and
native code), and the eager mode: tensors with ``requires_grad``, ``grad_fn`` and
``backward()``, with PyTorch's names and semantics, so that ``import srcgrad as torch`` runs
PyTorch autograd tutorials. docs/compiler.md and docs/eager.md describe both.

Names shared by the two: ``srcgrad.grad``, ``jacobian``, ``hessian``, ``jvp``, ``vjp`` are
the compiler's (decorators on Python functions); ``srcgrad.autograd.grad``,
``srcgrad.autograd.functional`` and ``srcgrad.func`` are the eager mode's, as in PyTorch.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 2.])
"""
from . import autograd, func, nn, optim, utils, viz  # noqa: F401
from .eager import *  # noqa: F401,F403  the PyTorch-compatible eager names
from .allocator import empty_cache, memory_cached, set_cache_limit  # noqa: F401
from .threads import get_num_threads, set_num_threads  # noqa: F401  (vectorize on several threads)
from .api import grad, hessian, hvp, jacfwd, jacobian, jacrev, jit, jvp, show, value_and_grad, vectorize, vjp
from .custom import custom_vjp  # noqa: F401  (a hand-written derivative for the compiler)
from .errors import SrcGradError, TypingError, UnsupportedSyntaxError  # noqa: F401
from .devices import accelerator, compile, cuda, distributed  # noqa: F401  (CPU only: PyTorch's device queries)
from .serialization import load, save  # noqa: F401
from . import backends as _backends, devices as _devices
from .eager import patching as _patching
_backends.mps = _devices.mps          # torch.backends.mps.is_available() in device selection
_patching.reexported_by(__name__)     # the profiler's and forward AD's wrappers go on its eager names too

from .version import __version__  # noqa: E402,F401
