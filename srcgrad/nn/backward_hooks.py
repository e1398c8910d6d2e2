"""A module's full backward hooks: identity nodes around its call, one on its tensor inputs
and one on its outputs, so that the engine hands them ``grad_output`` (first) and then
``grad_input``, as PyTorch's ``BackwardHookFunctionBackward`` nodes do.

Example:
    >>> import srcgrad as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> handle = lin.register_full_backward_hook(lambda m, gin, gout: print(gout[0].shape))
    >>> lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
    torch.Size([1, 1])
"""
from ..eager import grad_mode
from ..eager.function import Function
from ..eager.tensor import Tensor


class BackwardHookFunction(Function):
    """The identity on tensors; its backward calls ``ctx.on_grads`` with the incoming grads."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        return tuple(t.detach() if isinstance(t, Tensor) else t for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


class BackwardHooks:
    """The hooks of one call of ``module``."""

    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0
        self.inputs_hooked = False

    def inputs(self, args):
        positions = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(positions)
        if not (grad_mode.state.enabled and any(args[k].requires_grad for k in positions)):
            return args
        self.inputs_hooked = True
        out = BackwardHookFunction.apply(self._on_grad_input, *[args[k] for k in positions])
        out = out if isinstance(out, tuple) else (out,)
        args = list(args)
        for k, t in zip(positions, out):
            args[k] = t
        return tuple(args)

    def outputs(self, result):
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, tuple) or not grad_mode.state.enabled or \
                not any(isinstance(o, Tensor) and o.requires_grad for o in outs):
            return result
        got = BackwardHookFunction.apply(self._on_grad_output, *outs)
        got = got if isinstance(got, tuple) else (got,)
        return got[0] if single else got

    def _on_grad_output(self, grads):
        for hook in list(self.module._backward_pre_hooks.values()):
            new = hook(self.module, grads)
            if new is not None:
                grads = new if isinstance(new, tuple) else (new,)
        self.grad_output = grads
        if not self.inputs_hooked:         # no input requires grad: the hooks see None for each
            self._call_hooks((None,) * self.n_inputs)
        return grads

    def _on_grad_input(self, grads):
        return self._call_hooks(grads)

    def _call_hooks(self, grad_input):
        for hook in list(self.module._backward_hooks.values()):
            new = hook(self.module, grad_input, self.grad_output)
            if new is not None:
                grad_input = new if isinstance(new, tuple) else (new,)
        return grad_input
