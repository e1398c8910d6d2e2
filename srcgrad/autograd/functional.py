"""``torch.autograd.functional`` for eager tensors: ``vjp``, ``jvp``, ``jacobian``,
``hessian``, ``vhp`` and ``hvp`` of a function of tensors, with PyTorch's signatures, return
structures and errors.

``inputs`` is a tensor or a tuple of tensors, and results follow it: a tuple for tuple inputs
(or outputs), a bare tensor otherwise; Jacobian blocks are ``out.shape + in.shape``, nested as
``jac[i][j]`` for output i and input j when both are tuples. Results are detached unless
``create_graph=True``. Inputs the function does not use get zeros, or raise with
``strict=True``.

``jvp``, ``hvp`` and ``jacobian(strategy="forward-mode")`` use the double-vjp trick of
eager/double_vjp.py (a vjp with a cotangent ``u`` is linear in ``u``; differentiating it with
respect to ``u`` along ``v`` gives ``J v``), with this module's ``_grad``. ``vectorize=True`` is
accepted and gives the same numbers as the row-by-row loop it runs.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""
import functools

import numpy as np

from ..eager import grad_mode
from ..eager.autograd_api import grad as _autograd_grad
from ..eager.creation import from_numpy, zeros, zeros_like
from ..eager.double_vjp import Linearization
from ..eager.ops.shape import stack
from ..eager.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---------------------------------------------------------------------------------- helpers


def _as_tuple(x, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)`` with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i} has type {type(el)}" if is_tuple else \
                f"the given {arg_name} has type {type(el)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where}.")
    return is_tuple, items


def _unpack(res, was_tuple):
    """Undo ``_as_tuple``: ``was_tuple`` is one flag, or (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _prepare(tensors, create_graph, need_graph):
    """New tensor objects for ``tensors`` (so that the function's own captured tensors are not
    mistaken for the inputs): aliases that keep the caller's graph under ``create_graph``,
    else detached copies (requiring grad when ``need_graph``)."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(res, create_graph):
    """Detach results (nested tuples of tensors) unless the caller asked for their graph."""
    if isinstance(res, Tensor):
        return res if create_graph else res.detach()
    return tuple(_finish(r, create_graph) for r in res)


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


def _check_requires_grad(tensors, kind, strict):
    """strict mode: every tensor must exist and depend on the inputs (``kind`` picks the message)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is independent "
                               "of the input. This is not allowed in strict mode. You should ensure that your function "
                               "is thrice differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in strict "
                               "mode. You should ensure that your function is twice differentiable and that the "
                               "jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs must "
                           "be computed in a differentiable manner from the input when running in strict mode.")


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that exist and require grad; None for unused inputs
    (and for all of them when no output is differentiable)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    gos = [g for _, g in pairs]
    with grad_mode.enable_grad():
        res = _autograd_grad([o for o, _ in pairs], list(inputs), None if all(g is None for g in gos) else gos,
                             retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    # autograd.grad can hand back a gradient promoted past its input's dtype (float32 input,
    # int64 factor): PyTorch casts it back
    return tuple(r.to(x.dtype) if r is not None and r.dtype != x.dtype else r for r, x in zip(res, inputs))


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients replaced by zeros shaped like ``refs`` (strict mode: an error instead)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _one_hot(like, k):
    a = np.zeros(like.numel(), dtype=like.detach().numpy().dtype)
    a[k] = 1
    return from_numpy(a.reshape(tuple(like.shape)))


def _v_or_default(v, refs, refs_are_tuple, create_graph, fn_name, none_msg):
    """The tuple of vectors ``v`` checked against ``refs``; None is allowed for one one-element ref."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, refs, refs_are_tuple)
        return v
    if len(refs) != 1 or refs[0].numel() != 1:
        raise RuntimeError(none_msg)
    return None


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a single "
                  "element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor with a "
                 "single element.")


# ---------------------------------------------------------------------------------- products


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product, one gradient per input.

    >>> import srcgrad as torch
    >>> vjp(lambda x: x * 3, torch.ones(2), torch.tensor([1.0, 2.0]))
    (tensor([3., 3.]), tensor([3., 6.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_default(v, outputs, outputs_tuple, create_graph, "vjp", _V_NONE_OUTPUT)
    grads = _grad(outputs, inputs, v, create_graph=create_graph)
    res = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(res, create_graph), inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, one tensor per output, by the
    double-vjp trick.

    >>> import srcgrad as torch
    >>> jvp(lambda x: x ** 2, torch.tensor([3.0]), torch.tensor([1.0]))
    (tensor([9.]), tensor([6.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        outputs = func(*inputs)
        outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # the first vjp is linear in these cotangents; their values never matter, zeros are safe
        cotangents = tuple(zeros_like(o, requires_grad=o.is_floating_point()) for o in outputs)
        lin = Linearization(outputs, inputs, cotangents, _grad)
        # strict mode looks at the first vjps themselves, before those without a graph are dropped
        _check_requires_grad(lin.vjps, "grad_inputs", strict)
    grads = lin.push(v, create_graph=create_graph)
    res = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(res, create_graph), outputs_tuple)


# ---------------------------------------------------------------------------------- jacobian


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: one block ``out.shape + in.shape`` per output
    and input (a tensor, a tuple, or a tuple of tuples indexed [output][input]).
    ``strategy="forward-mode"`` (which, as in PyTorch, needs ``vectorize=True``) builds it
    column by column with Jacobian-vector products; ``"reverse-mode"`` row by row.

    >>> import srcgrad as torch
    >>> jacobian(lambda x, y: x * y, (torch.tensor([2.0]), torch.tensor([3.0])))
    (tensor([[3.]]), tensor([[2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                                      '"forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)

    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = tuple(_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    return _unpack(_finish(jac, create_graph), (outputs_tuple, inputs_tuple))


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """The blocks d out_i / d inputs, one vjp per element of ``out``."""
    rows = [[] for _ in inputs]
    for k in range(out.numel()):
        grads = _grad((out,), inputs, (_one_hot(out, k),), create_graph=create_graph, retain_graph=True)
        for j, (r, g, x) in enumerate(zip(rows, grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This "
                                       "is not allowed in strict mode.")
                g = zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode when create_graph=True.")
            r.append(g)
    return tuple(stack(r).reshape(tuple(out.shape) + tuple(x.shape)) if r else
                 zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype) for r, x in zip(rows, inputs))


def _jacobian_forward(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with grad_mode.enable_grad():
        inputs = _prepare(inputs, False, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        cotangents = tuple(zeros_like(o, requires_grad=o.is_floating_point()) for o in outputs)
        # retain_graph: one backward pass per column goes through the same graph
        lin = Linearization(outputs, inputs, cotangents, functools.partial(_grad, retain_graph=True))
        cols = [[[] for _ in inputs] for _ in outputs]
        for j, (g, x) in enumerate(zip(lin.vjps, inputs)):
            for k in range(x.numel()):
                jv = (None,) * len(outputs)
                if g is not None:
                    tangents = [None] * len(inputs)
                    tangents[j] = _one_hot(x, k)
                    jv = lin.push(tangents, create_graph=False)
                for i, (t, o) in enumerate(zip(jv, outputs)):
                    cols[i][j].append(zeros_like(o) if t is None else t)
    # lists, not tuples, where both inputs and outputs are tuples: PyTorch's forward mode returns those
    jac = [[(stack(c, -1).reshape(tuple(o.shape) + tuple(x.shape)) if c else
             zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype)).detach() for c, x in zip(cols[i], inputs)]
           for i, o in enumerate(outputs)]
    return _unpack(jac, (outputs_tuple, inputs_tuple))


# ---------------------------------------------------------------------------------- second order


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: the Jacobian of its gradient,
    blocks ``in_i.shape + in_j.shape`` (a tuple of tuples for tuple inputs).

    >>> import srcgrad as torch
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))


def _scalar_output_and_jac(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: the vector-Hessian product of the scalar function ``func``.

    >>> import srcgrad as torch
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        outputs_tuple, outputs, jac = _scalar_output_and_jac(func, inputs, "vhp", strict)
    grads = _grad(jac, inputs, v, create_graph=create_graph)
    res = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(res, create_graph), inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``: the Hessian-vector product of the scalar function ``func``, by
    the double-vjp trick (equal to ``vhp`` for functions twice continuously differentiable).

    >>> import srcgrad as torch
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
    (tensor(9.), tensor([6., 0.]))
    """
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        outputs_tuple, outputs, jac = _scalar_output_and_jac(func, inputs, "hvp", strict)
        # the gradient's Jacobian-vector product: its cotangents are shaped as the inputs
        grad_jac = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        lin = Linearization(jac, inputs, grad_jac, _grad)
    grads = lin.push(v, create_graph=create_graph)
    res = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return _unpack(_finish(outputs, create_graph), outputs_tuple), _unpack(_finish(res, create_graph), inputs_tuple)
