"""``functional_call``: call a module with some of its parameters and buffers replaced.

The given tensors are put in the module's (and its submodules') ``_parameters`` /
``_buffers`` tables by dotted name for the duration of the call, then the originals are put
back, also when the call raises. A name that is neither a parameter nor a buffer is set as a
plain attribute and removed afterwards.

Example:
    >>> import srcgrad as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> params = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
    >>> functional_call(lin, params, (torch.tensor([1.0, 2.0]),))
    tensor([3.])
"""
from ..eager.tensor import Tensor

_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a list/tuple of dicts with distinct keys)
    standing in for the module's own.

    ``tie_weights``: a tensor registered under several names (tied weights) is replaced under
    all of them when one is given. ``strict``: the names given must be exactly the module's
    parameters and buffers. ``args`` that is not a tuple is the single positional argument.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)

    swaps = _with_tied_names(module, values) if tie_weights else values
    if strict:
        _check_keys(module, swaps)
    originals = _swap_all(module, swaps)
    try:
        return module(*args, **kwargs)
    finally:
        current = _swap_all(module, originals)
        # a module that reassigned one of the given tensors (a buffer updated out of place)
        # hands the new tensor back through the caller's dict, as PyTorch does
        values.update({k: current[k] for k in values if k in current})


def _named_tensors(module):
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def _with_tied_names(module, values):
    """``values`` extended to every other name of a tied tensor that was given under one name."""
    names_of = {}
    for name, t in _named_tensors(module):
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    out = dict(values)
    for name in values:
        if name not in tied:
            continue
        given = [n for n in tied[name] if n in values]
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[name])}, which are tied. "
                             "Consider using tie_weights=False")
        for n in tied[name]:
            out[n] = values[name]
    return out


def _check_keys(module, values):
    valid = {name for name, _ in _named_tensors(module)}
    missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(type(module).__name__, "\n\t".join(msgs)))


def _swap_all(module, values):
    """Put each of ``values`` in place; returns what was there (``_MISSING`` for nothing). On
    an error midway, what was already swapped is put back before raising."""
    originals = {}
    try:
        for name, t in values.items():
            originals[name] = _swap(module, name, t)
    except Exception:
        for name, t in originals.items():
            _swap(module, name, t)
        raise
    return originals


def _swap(module, name, t):
    if t is not _MISSING and t is not None and not isinstance(t, Tensor):
        raise TypeError(f"{t} is not an instance of torch.Tensor")
    prefix, _, attr = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            if t is _MISSING:
                del table[attr]
            else:
                table[attr] = t
            return old
    old = getattr(owner, attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
    if t is not _MISSING:
        setattr(owner, attr, t)
    elif hasattr(owner, attr):
        delattr(owner, attr)
    return old
