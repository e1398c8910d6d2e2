"""``autograd.backward`` and ``autograd.grad``: argument checking around the engine.

Example:
    >>> import srcgrad as torch
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> torch.autograd.grad((x ** 2).sum(), x)
    (tensor([6.]),)
"""
from .graph import accumulate_grad, run_backward
from .tensor import Tensor, wrap

import numpy as np


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if g is None:
            if out._rg:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
            g = wrap(np.ones(out._data.shape, dtype=out._data.dtype))
        else:
            if not isinstance(g, Tensor):
                g = wrap(np.asarray(g, dtype=out._data.dtype))
            if g.shape != out.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                                   f"output[{i}] has a shape of {out.shape}.")
            if g.dtype is not out.dtype:
                if g.dtype.is_floating_point != out.dtype.is_floating_point:
                    raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have "
                                       f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                                       f"{g.dtype} and output[{i}] has a dtype of {out.dtype}.")
                g = g.to(out.dtype)
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def _check_roots(outputs):
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward(): element {i} of tensors is a {type(out).__name__}, not a Tensor")
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``.

    >>> import srcgrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> backward([(w * 2).sum()])
    >>> w.grad
    tensor([2., 2.])
    """
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors)
    _check_roots(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grads, create_graph)
    if inputs is not None:
        inputs = _as_list(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        results = run_backward(outputs, roots, retain_graph, create_graph, inputs=inputs, accumulate=False,
                               allow_unused=True)
        for t, g in zip(inputs, results):
            if g is not None:
                accumulate_grad(t, g, False, create_graph)
        return
    run_backward(outputs, roots, retain_graph, create_graph)


def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

    ``Tensor.backward``: tensor.py is below this module, so methods.py binds it to the class.

    >>> import srcgrad as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([4.])
    """
    backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
             inputs=inputs)


# named as the method it is (its bound form prints as <bound method Tensor.backward of ...>)
tensor_backward.__name__, tensor_backward.__qualname__ = "backward", "Tensor.backward"


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated.

    >>> import srcgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> (gx,) = grad((x * x).sum(), [x], create_graph=True)
    >>> gx
    tensor([2., 4.], grad_fn=<AddBackward0>)
    """
    if is_grads_batched:
        raise NotImplementedError("srcgrad.autograd.grad: is_grads_batched=True is not supported; "
                                  "loop over the grad_outputs instead")
    outputs = _as_list(outputs)
    isinstance(inputs, Tensor)
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    _check_roots(outputs)
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grads, create_graph)
    results = run_backward(outputs, roots, retain_graph, create_graph, inputs=inputs, accumulate=False,
                           allow_unused=allow_unused)
    if materialize_grads:
        results = [r if r is not None else wrap(np.zeros_like(t._data)) for r, t in zip(results, inputs)]
    return tuple(results)
