"""``srcgrad.autograd.graph``: the ``Node`` base class of every grad_fn, hooks on saved tensors,
and multi-tensor gradient hooks, as in ``torch.autograd.graph``.

Example:
    >>> import srcgrad as torch
    >>> a = torch.ones(3, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
    ...     y = a.sin()          # the pack hook copied the saved input
    >>> y.sum().backward()       # the unpack hook gave it back
    >>> a.grad
    tensor([0.5403, 0.5403, 0.5403])
"""
import contextlib

from ..eager import graph as _graph
from ..eager.graph import Node, SavedTensor  # noqa: F401  (SavedTensor: what _raw_saved_<name> returns)

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook", "Node"]


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs whenever an op saves a tensor for backward,
    and what it returns is kept instead; ``unpack_hook(packed)`` must give the tensor back when
    backward (or ``grad_fn._saved_<name>``) needs it.

    Inputs and outputs of ops are packed, Python numbers are not. When these contexts nest,
    only the innermost pair of hooks applies.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _graph.push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        _graph.pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved for backward in CPU memory. srcgrad's tensors are all on the CPU,
    so as in PyTorch on a CPU tensor, nothing moves: with ``pin_memory=True`` each saved tensor
    is copied (PyTorch copies into a fresh buffer there), without it the tensor itself is kept.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager under which using saved-tensor hooks (entering ``saved_tensors_hooks``, or
    an op saving a tensor while such hooks are set) raises ``RuntimeError(error_message)``."""
    state = _graph.hook_state
    previous = state.disabled
    state.disabled = error_message
    try:
        yield
    finally:
        state.disabled = previous


class _MultiHandle:
    """Removes the per-tensor hooks behind one ``register_multi_grad_hook``."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass for a group of tensors.

    ``mode="all"``: ``fn(grads)`` with the gradient of each tensor (None for those the pass did
    not reach), once all of them are computed; srcgrad calls it when the backward pass ends,
    where PyTorch calls it as soon as the last of them is ready. (Under ``backward(inputs=...)``
    srcgrad gives the leaves their gradients after its pass: each such leaf in ``tensors`` then
    makes a call of its own.) ``mode="any"``: ``fn(grad)`` with the first gradient computed
    among the tensors.

    >>> import srcgrad as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.ones(2, requires_grad=True)
    >>> h = torch.autograd.graph.register_multi_grad_hook((a, b), lambda gs: print([g is not None for g in gs]))
    >>> (a * 2).sum().backward()
    [True, False]
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)

    if mode == "all":
        buffer = []          # this pass's gradients, made on the first one that arrives

        def finish(ok):
            grads = buffer.pop()
            if ok:
                fn(grads)

        def hook_for(i):
            def inner(grad):
                if buffer:
                    buffer[0][i] = grad
                    return
                buffer.append([None] * len(tensors))
                buffer[0][i] = grad
                _graph.queue_final_callback(finish)
            return inner

        handles = tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors))
    else:
        ran = [False]

        def reset(ok):
            ran[0] = False

        def inner(grad):
            if ran[0]:
                return
            ran[0] = True
            _graph.queue_final_callback(reset)
            fn(grad)

        handles = tuple(t.register_hook(inner) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
