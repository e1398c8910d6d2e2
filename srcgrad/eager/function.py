"""``autograd.Function``: user-defined ops with their own ``forward`` and ``backward``.

Example:
    >>> import srcgrad as torch
    >>> class Exp(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, gy):
    ...         (y,) = ctx.saved_tensors
    ...         return gy * y
    >>> x = torch.tensor([0.0], requires_grad=True)
    >>> Exp.apply(x).grad_fn
    <torch.autograd.function.ExpBackward object at 0x...>
"""
import numpy as np

from . import grad_mode
from .graph import FREED_MSG, Node, gradient_edge, pack_saved_for_backward, raw_saved, sequence_numbers
from .tensor import Tensor, wrap
from .versions import version_of


class FunctionCtx(Node):
    """The ``ctx`` of a custom Function; it is also the node recorded in the graph."""

    __slots__ = ("_fn", "_n_args", "_tensor_pos", "needs_input_grad", "_non_diff", "_dirty",
                 "_materialize", "__dict__")

    def __init__(self):
        self.next_functions = ()
        self._saved = self._versions = ()
        self._seq = 0
        self._hooks = None
        self._non_diff = set()
        self._dirty = ()
        self._materialize = True
        self.n_outputs = 1

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward``; in-place changes to them are detected."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(version_of(t) if t is not None else None for t in tensors)
        pack_saved_for_backward(self)

    def __repr__(self):
        # PyTorch's custom-Function nodes are Python classes of torch.autograd.function
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp`` (forward-mode AD); ``saved_tensors`` gives them back."""
        self.save_for_backward(*tensors)

    takes_tensors = True     # user code: always Tensors

    @property
    def saved_tensors(self):
        return tuple(self.saved(as_tensors=True))

    @property
    def _raw_saved_tensors(self):
        """The saved tensors as ``SavedTensor`` objects (for ``register_hooks``), as in PyTorch."""
        if self._saved is None:
            raise RuntimeError(FREED_MSG)
        return tuple(raw_saved(self, i) for i in range(len(self._saved)))

    def mark_non_differentiable(self, *tensors):
        self._non_diff |= {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def apply(self, *grads):
        if self._materialize:
            grads = tuple(g if g is not None else wrap(np.zeros(s, dtype=d))
                          for g, (s, d) in zip(grads, self._out_meta))
        result = self._fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != self._n_args:
            if len(result) > self._n_args and all(r is None for r in result[self._n_args:]):
                result = result[:self._n_args]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                                   f"(expected {self._n_args}, got {len(result)})")
        out = []
        for pos in self._tensor_pos:
            g = result[pos]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {type(self).__name__} returned a gradient of type {type(g).__name__} "
                                f"at position {pos}; expected a Tensor or None")
            out.append(g)
        return tuple(out)


_node_classes = {}


def node_class(fn_cls):
    """The class of the ctx (and graph node) of the Function subclass ``fn_cls``, named
    ``<Function>Backward`` as in PyTorch; made once per Function."""
    cls = _node_classes.get(fn_cls)
    if cls is None:
        cls = type(fn_cls.__name__ + "Backward", (FunctionCtx,), {"__slots__": ()})
        _node_classes[fn_cls] = cls
    return cls


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will "
                      "raise an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = node_class(cls)()
        ctx._fn = cls
        ctx._n_args = len(args)
        ctx._tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        record = grad_mode.state.enabled and any(ctx.needs_input_grad)
        custom_setup = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if custom_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not record:
            return output
        ctx.next_functions = tuple(gradient_edge(args[i]) for i in ctx._tensor_pos)
        ctx._seq = next(sequence_numbers)
        single = not isinstance(output, tuple)
        outs = (output,) if single else output
        ctx.n_outputs = len(outs)
        ctx._out_meta = []
        dirty = {id(t) for t in ctx._dirty}
        result = []
        for nr, o in enumerate(outs):
            if not isinstance(o, Tensor):
                ctx._out_meta.append(((), np.float32))
                result.append(o)
                continue
            ctx._out_meta.append((o._data.shape, o._data.dtype))
            if id(o) in ctx._non_diff or not o.dtype.is_floating_point:
                result.append(o)
                continue
            if any(o is a for a in args) and id(o) not in dirty:
                o = o.detach()          # an input returned as-is becomes a new output
            o.grad_fn, o._rg, o._output_nr = ctx, True, nr
            result.append(o)
        return result[0] if single else tuple(result)


class InplaceFunction(Function):
    pass


def once_differentiable(fn):
    """Marks a backward that cannot itself be differentiated (accepted for compatibility)."""
    return fn
