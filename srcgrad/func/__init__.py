"""``srcgrad.func``: PyTorch's ``torch.func`` transforms for eager tensors — ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and
``functional_call``.

They are built on the eager autograd: each transform differentiates fresh copies of its
inputs and keeps its results attached to enclosing transforms (_level.py), so they compose
(``grad(grad(f))``, ``jacfwd(jacrev(f))``, ``vmap(grad(f))``). Forward mode uses the
double-vjp trick (_transforms.py); ``vmap`` runs ``func`` once per example (_vmap.py).

(Not to be confused with ``srcgrad.grad`` and ``srcgrad.jacobian``, the compiler's transforms
of plain numpy functions.)

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.func import grad, vmap
    >>> x = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> vmap(grad(lambda row: (row ** 2).sum()))(x)
    tensor([[0., 2.],
            [4., 6.]])
"""
from ._functional_call import functional_call
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]
