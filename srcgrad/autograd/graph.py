"""``srcgrad.autograd.graph``: the Node base class of every grad_fn."""
from ..eager.graph import Node  # noqa: F401
