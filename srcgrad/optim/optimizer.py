"""``Optimizer``: the base class of srcgrad's ``torch.optim`` optimizers.

It holds the parameter groups (dicts of tensors and per-group options), the per-parameter
state, and PyTorch's ``state_dict`` layout. Subclasses implement ``step``, which updates the
parameters' numpy arrays in place (no graph is recorded) and bumps their version counters as
an in-place op does.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.ones(3, requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 0.8000, 0.8000], requires_grad=True)
"""
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from ..eager.grad_mode import enable_grad
from ..eager.tensor import Tensor, wrap
from ..eager.versions import bump_version

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a default that every parameter group must give itself."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    if module in ("", "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


class Optimizer:
    """Base class: ``Optimizer(params, defaults)``.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups, each with ``'params'`` and any per-group options); ``defaults`` fills the options a
    group does not set.

    >>> import srcgrad as torch
    >>> w, b = torch.ones(2, requires_grad=True), torch.zeros(1, requires_grad=True)
    >>> opt = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.01}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.01]
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._scratch, self._views = {}, {}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ pickling, printing
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # the options a state pickled by an older version may lack, with their defaults
    _restored_defaults = {}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._scratch, self._views = {}, {}
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._restored_defaults.items():
                group.setdefault(key, value)

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ------------------------------------------------------------------ parameter groups
    def add_param_group(self, param_group):
        """Add a dict of parameters (and options) to ``param_groups``, e.g. layers unfrozen
        while fine-tuning. Options it does not give come from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)

        tensors, names = [], []
        for p in params:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients, stepping
    def zero_grad(self, set_to_none=True):
        """Reset every parameter's ``.grad``: to None (the default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    if not g._data.flags.writeable:      # e.g. a broadcast view: give it its own zeros
                        g._data = np.zeros(g._data.shape, g._data.dtype)
                    else:
                        g._data[...] = 0
                    bump_version(g)

    def step(self, closure=None):
        """One update of every parameter that has a ``.grad`` (each group by the subclass's
        ``_update_group``); returns ``closure()``'s loss if given."""
        loss = self._closure_loss(closure)
        with np.errstate(all="ignore"):      # like PyTorch, inf and nan results pass silently
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        # the closure recomputes the loss and its gradients, so it needs grad mode whatever the caller's
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _buffers(self, like, count):
        """``count`` scratch arrays shaped and typed like ``like``: views into flat arrays shared
        by all parameters of that dtype, so that a step allocates nothing."""
        key = (like.shape, like.dtype, count)
        views = self._views.get(key)
        if views is None:
            n, dtype = like.size, like.dtype
            flat = self._scratch.get(dtype)
            if flat is None or len(flat) < count or flat[0].size < n:
                size = max(n, flat[0].size if flat else 0)
                flat = self._scratch[dtype] = [np.empty(size, dtype) for _ in range(max(count, len(flat or ())))]
                # views of the old arrays stay valid but would no longer be shared
                self._views.clear()
            views = self._views[key] = [b[:n].reshape(like.shape) for b in flat[:count]]
        return views

    # ------------------------------------------------------------------ state_dict
    def state_dict(self):
        """The optimizer's state as ``{'state': {index: {...}}, 'param_groups': [...]}``: each
        parameter is replaced by its index in the order of ``param_groups``. The state tensors
        are the optimizer's own (not copies), as in PyTorch: deep-copy to keep a snapshot."""
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()``: the options of each group and the state of each parameter,
        matched by position. Floating state tensors take their parameter's dtype; 'step' is kept."""
        from copy import deepcopy
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_id = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                         chain.from_iterable(g["params"] for g in groups)))

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in by_id:
                p = by_id[k]
                state[p] = _cast_state(p, v)
            else:
                state[k] = v

        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})


def _cast_state(p, value, key=None):
    """A parameter's saved state, with tensors in the parameter's dtype (except 'step'). A tensor
    that already has it is used as is (not copied), as PyTorch does."""
    if isinstance(value, Tensor):
        if key == "step" or value._data.dtype == p._data.dtype or not p.is_floating_point():
            return value
        return wrap(value._data.astype(p._data.dtype))
    if isinstance(value, dict):
        return {k: _cast_state(p, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(p, v) for v in value)
    return value
