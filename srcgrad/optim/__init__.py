"""``srcgrad.optim``: PyTorch's ``torch.optim`` for srcgrad tensors (SGD, Adam, AdamW, RMSprop,
Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, LBFGS and the ``lr_scheduler`` module), with the
same update formulas, options, state_dict layout, errors and printing. A step updates the
parameters' numpy arrays in place.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Adam([w], lr=0.1)
    >>> sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    >>> for _ in range(10):
    ...     opt.zero_grad()
    ...     loss = (w * w).sum()
    ...     loss.backward()
    ...     opt.step()
    ...     sched.step()
"""
from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "LBFGS", "lr_scheduler"]
