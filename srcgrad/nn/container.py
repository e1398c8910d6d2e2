"""``Sequential``, ``ModuleList`` and ``ModuleDict``: modules holding modules, registered under
their index or key so that ``parameters()`` and ``state_dict`` see them.

Example:
    >>> import srcgrad as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    >>> net[0]
    Linear(in_features=2, out_features=4, bias=True)
"""
from collections import OrderedDict

from .module import Module, indent


def _index(n, idx, kind):
    if not isinstance(idx, int):
        raise TypeError(f"{kind} indices must be integers or slices, not {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output. Built from modules, or
    from an OrderedDict of them (their names become the keys)."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(len(self), idx, "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(len(self), idx, "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(len(self), idx, "Sequential")]]):
            del self._modules[key]
        # keep the keys 0, 1, ... in order, as PyTorch does
        items = list(self._modules.items())
        self._modules.clear()
        self._modules.update((str(i), m) for i, (_, m) in enumerate(items))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(mods))
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v


def _grouped_child_lines(modules):
    """ModuleList's repr lines, runs of equal reprs folded into ``(0-2): 3 x Linear(...)``."""
    lines, items = [], [(k, indent(repr(m), 2)) for k, m in modules.items()]
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1][1] == items[i][1]:
            j += 1
        if j > i:
            lines.append(f"({items[i][0]}-{items[j][0]}): {j - i + 1} x {items[i][1]}")
        else:
            lines.append(f"({items[i][0]}): {items[i][1]}")
        i = j + 1
    return lines


class ModuleList(Module):
    """A list of modules, registered under their indices (it has no ``forward``)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(len(self), idx, "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(len(self), idx, "ModuleList")), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(len(self), idx, "ModuleList")]]):
            del self._modules[key]
        mods = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(mods))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)) or isinstance(modules, str):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def _child_lines(self):
        return _grouped_child_lines(self._modules)

    def forward(self, *args):
        raise NotImplementedError('Module [ModuleList] is missing the required "forward" function')


class ModuleDict(Module):
    """A dict of modules, registered under their keys (in insertion order)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        pairs = modules.items() if hasattr(modules, "items") else modules
        for j, pair in enumerate(pairs):
            if not hasattr(modules, "items") and len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def forward(self, *args):
        raise NotImplementedError('Module [ModuleDict] is missing the required "forward" function')


class ParameterList(Module):
    """A list of parameters, registered under their indices."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def __getitem__(self, idx):
        return self._parameters[str(_index(len(self), idx, "ParameterList"))]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value):
        from .parameter import Parameter
        self.register_parameter(str(len(self)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"({k}): Parameter containing: [{p.type()} of size {'x'.join(map(str, p.shape))}]"
                         for k, p in self._parameters.items())


__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList"]
