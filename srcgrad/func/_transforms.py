"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``
of ``srcgrad.func``, on top of the eager autograd (see _level.py for how they nest).

``jvp`` and ``jacfwd`` use the double-vjp trick of eager/double_vjp.py (J v as the vjp,
with respect to a zero cotangent ``u``, of the vjp ``Jᵀu``): the function is run once, and
each further tangent costs one backward pass. ``jacrev`` and ``jacfwd`` compute their
Jacobians row by row (column by column) that way, not with vmap.

Example:
    >>> import srcgrad.eager as torch
    >>> x = torch.tensor([1.0, 2.0])
    >>> grad(lambda x: (x ** 3).sum())(x)
    tensor([ 3., 12.])
    >>> jacfwd(jacrev(lambda x: (x ** 3).sum()))(x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""
import functools

import numpy as np

from ..eager import grad_mode
from ..eager.creation import from_numpy, zeros, zeros_like
from ..eager.double_vjp import Linearization
from ..eager.ops.shape import stack
from ..eager.tensor import Tensor
from ._level import Level, check_aux
from ._pytree import flatten, pprint, tree_map, unflatten
from ._vmap import check_randomness_arg, rng_state, RANDOM_IN_ERROR_MODE

_JVP = "jvp(f, primals, tangents)"
_VJP = "vjp(f, *primals)"


# ---------------------------------------------------------------------------------- argnums


def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _argnums_positions(argnums, num_args):
    """The positions ``argnums`` names, as a tuple, with PyTorch's checks."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return (_wrap_argnum(argnums, num_args),)
    positions = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if not positions:
        raise RuntimeError("argnums must be non-empty")
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return positions


def _differentiable_args(level, args, argnums):
    """``args`` with the ones at ``argnums`` (None: all) made differentiable by ``level``;
    the flat list of those tensors and the structure of the tuple of those arguments."""
    positions = range(len(args)) if argnums is None else _argnums_positions(argnums, len(args))
    args = list(args)
    for i in positions:
        args[i] = tree_map(level.differentiable, args[i])
    flat, spec = flatten(tuple(args[i] for i in positions))
    return tuple(args), flat, spec


def _per_argnums(flat, spec, argnums):
    """Results for the differentiated arguments: the argument's own structure for an int
    ``argnums``, a tuple of them for a tuple."""
    tree = unflatten(flat, spec)
    return tree[0] if isinstance(argnums, int) else tree


# ---------------------------------------------------------------------------------- checks


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_tensor_outputs(flat_out, api):
    if (len(flat_out) == 1 and flat_out[0] is None) or not flat_out:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _check_float_outputs(flat_out):
    for o in flat_out:
        if not o.is_floating_point():
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")


def _check_tensor_list(flat, argname):
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(t)}")


def _one_hot(like, k):
    """A tensor shaped and typed like ``like``, zero but for a one at flat index ``k``."""
    a = np.zeros(like.numel(), dtype=like.detach().numpy().dtype)
    a[k] = 1
    return from_numpy(a.reshape(tuple(like.shape)))


# ---------------------------------------------------------------------------------- reverse mode


def grad_and_value(func, argnums=0, has_aux=False):
    """``func`` turned into a function returning ``(gradient, value)`` of its scalar output
    with respect to the arguments at ``argnums`` (``(gradient, (value, aux))`` with
    ``has_aux``).

    >>> import srcgrad.eager as torch
    >>> grad_and_value(lambda x: (x * x).sum())(torch.tensor([3.0]))
    (tensor([6.]), tensor(9.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = Level()
        with grad_mode.enable_grad():
            args, flat_in, spec = _differentiable_args(level, args, argnums)
            output = func(*args, **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   "APIs instead?")
            grads = level.grads([output], flat_in, retain_graph=None)
        grads = _per_argnums([level.unwrap(g) for g in grads], spec, argnums)
        value = level.unwrap(output)
        if has_aux:
            return grads, (value, check_aux(aux, level.unwrap))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func`` turned into a function returning the gradient of its scalar output with
    respect to the arguments at ``argnums`` (``(gradient, aux)`` with ``has_aux``).
    Composes with itself and the other transforms: ``grad(grad(f))`` is the second derivative.

    >>> import srcgrad.eager as torch
    >>> grad(grad(lambda x: x ** 3))(torch.tensor(2.0))
    tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _vjp_setup(func, args, argnums, has_aux):
    """Run ``func`` with the arguments at ``argnums`` differentiable, with vjp's checks."""
    level = Level()
    with grad_mode.enable_grad():
        args, flat_in, in_spec = _differentiable_args(level, args, argnums)
        out = func(*args)
        out, aux = _split_aux(out, has_aux, _VJP)
        flat_out, out_spec = flatten(out)
        _check_tensor_outputs(flat_out, _VJP)
        _check_float_outputs(flat_out)
    if has_aux:
        aux = check_aux(aux, level.unwrap)
    return level, flat_in, in_spec, flat_out, out_spec, aux


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (plus ``aux`` with ``has_aux``): ``vjp_fn(cotangents)``
    returns the vector-Jacobian products for all primals, as a tuple shaped like ``primals``.

    >>> import srcgrad.eager as torch
    >>> out, vjp_fn = vjp(torch.sin, torch.tensor([0.0]))
    >>> vjp_fn(torch.tensor([2.0]))
    (tensor([2.]),)
    """
    level, flat_in, in_spec, flat_out, out_spec, aux = _vjp_setup(func, primals, None, has_aux)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = grad_mode.is_grad_enabled()
        flat_cot, cot_spec = flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {pprint(cot_spec)}, primal output: {pprint(out_spec)}")
        # no graph is needed when nothing from outside could reach the results
        create_graph = create_graph and level.connected(flat_out + flat_cot)
        res = level.grads(flat_out, flat_in, flat_cot, retain_graph=retain_graph, create_graph=create_graph)
        return unflatten([level.unwrap(r, create_graph) for r in res], in_spec)

    output = unflatten([level.unwrap(o) for o in flat_out], out_spec)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """``func`` turned into a function returning its Jacobian with respect to the arguments at
    ``argnums``, by reverse mode: one block ``out.shape + arg.shape`` per output and argument,
    nested as the outputs, then as the arguments (a tuple for a tuple ``argnums``).
    ``chunk_size`` is checked but rows are always computed one at a time.

    >>> import srcgrad.eager as torch
    >>> jacrev(lambda x: x * x)(torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        level, flat_in, in_spec, flat_out, out_spec, aux = _vjp_setup(func, args, argnums, has_aux)
        per_output = []
        for out in flat_out:
            blocks = _jacobian_rows(level, out, flat_in)
            per_output.append(_per_argnums([level.unwrap(b) for b in blocks], in_spec, argnums))
        jac = unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def _jacobian_rows(level, out, inputs):
    """The blocks d out / d input, one vjp per element of ``out``."""
    n = out.numel()
    if n == 0 or not out.requires_grad:
        return [zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype) for x in inputs]
    rows = [[] for _ in inputs]
    for k in range(n):
        for r, g in zip(rows, level.grads([out], inputs, [_one_hot(out, k)])):
            r.append(g)
    return [stack(r).reshape(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, inputs)]


# ---------------------------------------------------------------------------------- forward mode


def _linearize(level, outputs, inputs):
    """``outputs`` linearised at ``inputs`` (a Linearization) with this level's gradients: the
    cotangents are the level's own leaves, and ``push`` keeps a graph only where the level
    says (``create_graph=None``)."""
    cotangents = [level.new_leaf(zeros_like(o)) if o.requires_grad else None for o in outputs]
    return Linearization(outputs, inputs, cotangents, functools.partial(level.grads, fill_zeros=False))


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` (plus ``aux`` with ``has_aux``): the Jacobian-vector
    product, computed by the double-vjp trick (eager/double_vjp.py). ``primals`` must be a tuple
    and ``tangents`` a tuple of the same structure and shapes.

    >>> import srcgrad.eager as torch
    >>> jvp(lambda x: x ** 2, (torch.tensor([3.0]),), (torch.tensor([1.0]),))
    (tensor([9.]), tensor([6.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = flatten(primals)
    flat_t, t_spec = flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    _check_tensor_list(flat_p, "primals")
    _check_tensor_list(flat_t, "tangents")
    for p, t in zip(flat_p, flat_t):
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    level = Level()
    with grad_mode.enable_grad():
        duals = [level.differentiable(p) for p in flat_p]
        out = func(*unflatten(duals, p_spec))
        out, aux = _split_aux(out, has_aux, _JVP)
        flat_out, out_spec = flatten(out)
        _check_tensor_outputs(flat_out, _JVP)
        tangents_out = _linearize(level, flat_out, duals).push(flat_t, create_graph=None)
    res = []
    for o, t in zip(flat_out, tangents_out):
        if t is None:
            if strict:
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                   "inputs. This is not allowed with strict=True.")
            t = zeros_like(o)
        res.append(level.unwrap(t))
    primals_out = unflatten([level.unwrap(o) for o in flat_out], out_spec)
    tangents_out = unflatten(res, out_spec)
    if has_aux:
        return primals_out, tangents_out, check_aux(aux, level.unwrap)
    return primals_out, tangents_out


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``func`` turned into a function returning its Jacobian with respect to the arguments at
    ``argnums``, column by column with Jacobian-vector products; same layout as ``jacrev``.
    ``randomness="error"`` raises if ``func`` draws random numbers.

    >>> import srcgrad.eager as torch
    >>> jacfwd(torch.sin)(torch.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        check_randomness_arg(randomness)
        level = Level()
        with grad_mode.enable_grad():
            args, flat_in, in_spec = _differentiable_args(level, args, argnums)
            before = rng_state()
            out = func(*args)
            if randomness == "error" and rng_state() != before:
                raise RuntimeError(RANDOM_IN_ERROR_MODE)
            out, aux = _split_aux(out, has_aux, _JVP)
            flat_out, out_spec = flatten(out)
            _check_tensor_outputs(flat_out, _JVP)
            lin = _linearize(level, flat_out, flat_in)
            # columns[i][j]: the Jacobian-vector products of output j along each element of input i
            blocks = [[None] * len(flat_in) for _ in flat_out]
            for i, x in enumerate(flat_in):
                cols = [[] for _ in flat_out]
                for k in range(x.numel()):
                    tangents = [None] * len(flat_in)
                    tangents[i] = _one_hot(x, k)
                    for c, t, o in zip(cols, lin.push(tangents, create_graph=None), flat_out):
                        c.append(zeros_like(o) if t is None else t)
                for j, (c, o) in enumerate(zip(cols, flat_out)):
                    shape = tuple(o.shape) + tuple(x.shape)
                    blocks[j][i] = stack(c, -1).reshape(shape) if c else zeros(shape, dtype=o.dtype)
        per_output = [_per_argnums([level.unwrap(b) for b in row], in_spec, argnums) for row in blocks]
        jac = unflatten(per_output, out_spec)
        return (jac, check_aux(aux, level.unwrap)) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """``func`` turned into a function returning its Hessian with respect to the arguments at
    ``argnums``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> import srcgrad.eager as torch
    >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
