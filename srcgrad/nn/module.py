"""``nn.Module``: the base class of layers and models, with PyTorch's registration of
parameters, buffers and submodules by attribute assignment, its traversal methods, hooks,
``state_dict`` and ``repr``.

Example:
    >>> import srcgrad as torch
    >>> class TwoLayer(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = torch.nn.Linear(4, 8)
    ...         self.fc2 = torch.nn.Linear(8, 1)
    ...     def forward(self, x):
    ...         return self.fc2(torch.relu(self.fc1(x)))
    >>> [name for name, _ in TwoLayer().named_parameters()]
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
"""
import itertools
from collections import OrderedDict, namedtuple

import numpy as np

from ..eager import dtypes, grad_mode
from ..eager.tensor import Tensor
from ..eager.versions import bump_version
from .parameter import Buffer, Parameter

_handle_ids = itertools.count()


class RemovableHandle:
    """What ``register_*_hook`` returns: ``remove()`` takes the hook out again."""

    def __init__(self, hooks):
        self.hooks_dict_ref = hooks
        self.id = next(_handle_ids)

    def remove(self):
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_IncompatibleKeys.__name__ = _IncompatibleKeys.__qualname__ = "_IncompatibleKeys"


def _legacy_name(t):
    return "torch." + dtypes.from_numpy_dtype(t._data.dtype)._legacy


def indent(text, spaces):
    """``text`` with every line but the first indented by ``spaces`` (a submodule's repr inside its parent's)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class of every layer and model: subclasses set parameters, buffers and submodules
    as attributes in ``__init__`` (after ``super().__init__()``) and define ``forward``;
    calling the module runs the forward pre-hooks, ``forward`` and the forward hooks.

    >>> import srcgrad as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    >>> sum(p.numel() for p in net.parameters())
    9
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_legacy_name(value) if isinstance(value, Tensor) else type(value).__name__}'"
                                f" as parameter '{name}' (torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                self._forget(name)
                self.register_buffer(name, value, value.persistent)
            else:
                buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name):
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            found = d.get(table)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[table]:
                del self.__dict__[table][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter or None) as the parameter ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_legacy_name(param) if isinstance(param, Tensor) else type(param).__name__}'"
                            f" object to parameter '{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             "explicitly. To express '" + name + "' as a function of another Tensor, compute the value "
                             "in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add ``tensor`` as the buffer ``name``: state that is not a parameter (running means)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add ``module`` (or None) as the submodule ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``"encoder.layers.0"``)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    # ------------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every submodule, depth first; each once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in getattr(mod, table).items():
                if value is None or remove_duplicate and id(value) in seen:
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) for every parameter, each once (a shared one under its first name)."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter of this module and (with ``recurse``) its submodules, for an optimizer."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and gradients
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad`` (None, or zeros in place with ``set_to_none=False``)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = p.grad = g.detach()
                g.zero_()

    # ------------------------------------------------------------------ dtype and device
    def _apply(self, fn):
        """Convert every parameter and buffer with ``fn`` (an array to an array), in place: the
        Parameter objects stay the same, so an optimizer made before still holds them."""
        for module in self.modules():
            for p in module._parameters.values():
                if p is None:
                    continue
                new = fn(p._data)
                if new is not p._data:
                    p._data = new
                    bump_version(p)
                if p._grad is not None:
                    p._grad._data = fn(p._grad._data)
            for name, b in module._buffers.items():
                if b is not None:
                    b._data = fn(b._data)
        return self

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to("cpu")``, ``to(tensor)``: floating parameters and buffers take
        the dtype; devices other than the CPU are refused."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif a is not None:
                device = a
        if device is not None:
            check_device(device)
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
        return self._apply(lambda a: a.astype(dtype.np) if a.dtype.kind == "f" else a)

    def double(self):
        return self._apply(lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a)

    def float(self):
        return self._apply(lambda a: a.astype(np.float32) if a.dtype.kind == "f" else a)

    def half(self):
        return self._apply(lambda a: a.astype(np.float16) if a.dtype.kind == "f" else a)

    def type(self, dst_type):
        return self._apply(lambda a: a.astype(dtypes.to_dtype(dst_type).np))

    def cpu(self):
        return self

    def cuda(self, device=None):
        check_device("cuda")

    # ------------------------------------------------------------------ calling
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before ``forward``; a
        result other than None replaces the arguments."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` after ``forward``; a result other than None replaces the output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` once the gradients with respect to the
        module's tensor inputs are computed; a result other than None replaces grad_input."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` before the module's gradients are computed; a result
        other than None replaces grad_output."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        raise NotImplementedError("srcgrad: Module.register_backward_hook is deprecated in PyTorch; use "
                                  "register_full_backward_hook")

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                got = hook(self, args, kwargs)
                if got is not None:
                    args, kwargs = got
            else:
                got = hook(self, args)
                if got is not None:
                    args = got if isinstance(got, tuple) else (got,)
        hooked = None
        if self._backward_hooks or self._backward_pre_hooks:
            from .backward_hooks import BackwardHooks
            hooked = BackwardHooks(self)
            args = hooked.inputs(args)
        result = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            got = hook(self, args, kwargs, result) if hid in self._forward_hooks_with_kwargs else hook(self, args, result)
            if got is not None:
                result = got
        if hooked is not None:
            result = hooked.outputs(result)
        return result

    _call_impl = __call__

    # ------------------------------------------------------------------ state
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached
        tensors sharing memory with the module's, unless ``keep_vars``)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the tensors of ``state_dict`` into the parameters and buffers of the same names;
        with ``strict``, missing and unexpected keys are an error (PyTorch's message)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        expected = {}
        for prefix, module in self.named_modules():
            pre = prefix + "." if prefix else ""
            for name, p in module._parameters.items():
                if p is not None:
                    expected[pre + name] = (module, name, p)
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    expected[pre + name] = (module, name, b)
        missing = [k for k in expected if k not in state_dict]
        unexpected = [k for k in state_dict if k not in expected]
        errors = []
        for key, (module, name, target) in expected.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {target.shape}.")
                continue
            if assign:
                new = Parameter(value, target.requires_grad) if isinstance(target, Parameter) else value
                setattr(module, name, new) if isinstance(target, Parameter) else module._buffers.__setitem__(name, new)
            else:
                with grad_mode.no_grad():
                    target.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text between the parentheses of this module's repr (its options)."""
        return ""

    def _child_lines(self):
        return [f"({name}): {indent(repr(m), 2)}" for name, m in self._modules.items()]

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = self._child_lines()
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __setstate__(self, state):
        self.__dict__.update(state)

    def share_memory(self):
        return self

    def compile(self, *args, **kwargs):
        from ..devices import compile
        compile(self)


def check_device(device):
    """Raise for any device but the CPU: the eager mode has no other."""
    name = device if isinstance(device, str) else getattr(device, "type", str(device))
    if not str(name).startswith("cpu"):
        raise RuntimeError(f"srcgrad: device {device!r} is not supported: the eager mode runs on the CPU only")


def factory_kwargs(dtype, device):
    """The keyword arguments a layer passes to the creation of its parameters (PyTorch's
    ``factory_kwargs``): the dtype; the device is checked, never stored."""
    if device is not None:
        check_device(device)
    return {"dtype": dtype}


__all__ = ["Module", "RemovableHandle"]
