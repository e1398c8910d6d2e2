"""``vmap`` for eager tensors, by the per-example fallback.

``vmap(func, in_dims, out_dims)(*args)`` calls ``func`` once per example: on each index ``b``
of the mapped dimension it passes ``arg.select(in_dim, b)`` for the mapped arguments (the
others unchanged), then stacks each output along its ``out_dim``. The numbers, shapes and
errors are PyTorch's; the cost is a Python loop over the batch, not one batched kernel.
Selecting and stacking are ordinary differentiable ops, so ``vmap`` composes with the
autograd transforms both ways (``vmap(grad(f))``, ``grad(lambda x: vmap(f)(x).sum())``).

Differences that follow from running per example:

* an output with ``out_dim=None`` must not depend on the mapped inputs: it is returned from
  the first example if it is the same object, or equal, in every example (PyTorch refuses
  such an output when it is batched, whatever its values);
* ``randomness="different"`` draws separately per example, ``"same"`` rewinds the random
  generator before each example, and ``"error"`` raises once ``func`` has drawn a number;
* ``chunk_size`` is checked and otherwise ignored; a mapped dimension of size 0 is refused.

Example:
    >>> import srcgrad.eager as torch
    >>> x, w = torch.ones(3, 2), torch.tensor([1.0, 2.0])
    >>> vmap(torch.dot, in_dims=(0, None))(x, w)
    tensor([3., 3., 3.])
"""
import functools

import numpy as np

from ..eager.ops.shape import stack
from ..eager.tensor import Tensor
from ._pytree import broadcast_prefix, flatten, unflatten

RANDOM_IN_ERROR_MODE = ("vmap: called random operation while in randomness error mode. Please either use the "
                        "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
                        "vmap")


def check_randomness_arg(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _generator():
    from ..eager import creation
    return creation.numpy_rng()


def rng_state():
    """The eager random generator's identity and state (changes when a number is drawn)."""
    g = _generator()
    return None if g is None else (id(g), g.bit_generator.state)


def _set_rng_state(state):
    g = _generator()
    if g is not None and state is not None and id(g) == state[0]:
        g.bit_generator.state = state[1]


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs (see the module docstring for how).

    ``in_dims``: an int, or a tuple with one entry per positional argument, each an int,
    None (not mapped) or a nested tuple/list/dict matching that argument's structure.
    ``out_dims``: where the mapped dimension goes in each output, likewise.

    >>> import srcgrad.eager as torch
    >>> vmap(lambda row: row.sum(), in_dims=1)(torch.ones(2, 3))
    tensor([2., 2., 2.])
    """
    check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if batch_size == 0:
            raise RuntimeError("vmap: srcgrad runs func once per example and cannot map over a dimension of size 0")
        start = rng_state()
        results = []
        for b in range(batch_size):
            if randomness == "same":
                _set_rng_state(start)
            sliced = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
            results.append(func(*unflatten(sliced, spec), **kwargs))
            if b == 0 and randomness == "error" and rng_state() != start:
                raise RuntimeError(RANDOM_IN_ERROR_MODE)
        return _combine(results, out_dims, func)
    return wrapped


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for d in flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _process_inputs(in_dims, args, func):
    """The batch size, one in_dim per flattened argument (normalised), the flat arguments and
    their structure, with PyTorch's checks."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                             f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    sizes = [a.size(d) for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _combine(results, out_dims, func):
    """The per-example outputs joined: stacked along each output's out_dim."""
    name = _name(func)
    flat0, spec = flatten(results[0])
    flats = [flat0] + [flatten(r)[0] for r in results[1:]]

    def incompatible():
        return ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                          f"structure of `outputs`. out_dims has structure {flatten(out_dims)[1]} but outputs has "
                          f"structure {spec}.")

    if isinstance(results[0], Tensor):
        # a single tensor output takes an int, None or a one-element tuple
        if isinstance(out_dims, int) or out_dims is None:
            flat_out_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_out_dims = list(out_dims)
        else:
            raise incompatible()
    else:
        flat_out_dims = broadcast_prefix(out_dims, spec)
        if flat_out_dims is None:
            raise incompatible()
    outs = []
    for k, d in enumerate(flat_out_dims):
        values = [f[k] for f in flats]
        first = values[0]
        if d is None:
            if isinstance(first, Tensor) and not _unbatched(values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            outs.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. Did you "
                             "mean to set out_dims= to None for output?")
        n = first.dim() + 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        outs.append(stack(values, d))
    return unflatten(outs, spec)


def _unbatched(values):
    """Whether an output is the same in every example (so it cannot depend on the batch)."""
    first = values[0]
    if all(v is first for v in values):
        return True
    a = first.detach().numpy()
    nan = first.is_floating_point()
    return all(isinstance(v, Tensor) and v.shape == first.shape and np.array_equal(v.detach().numpy(), a, equal_nan=nan)
               for v in values[1:])
