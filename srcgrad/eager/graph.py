"""The grad_fn graph: nodes, saved tensors, and the backward engine.

Each differentiable op makes one ``Node`` whose ``next_functions`` point at the nodes of its
inputs (``AccumulateGrad`` for leaves). ``backward()`` counts dependencies, then runs nodes
in reverse creation order once all their gradients have arrived — micrograd's topological
walk, with PyTorch's ordering, hooks and freeing rules. What a node saved reads back under
PyTorch's names (``_saved_self``, ``_raw_saved_self``...: ``define_saved``), and goes through
the pack/unpack hooks of ``autograd.graph.saved_tensors_hooks``.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = (x * 3).sum()
    >>> y.grad_fn.next_functions[0][0].name()
    'MulBackward0'
    >>> y.grad_fn.next_functions[0][0]._saved_other
    tensor(3)
"""
import heapq
import itertools
import threading
import weakref

import numpy as np

from . import grad_mode
from .hooks import HookDict, RemovableHandle
from .tensor import Tensor, legacy_type_name, wrap
from .versions import bump_version, version_counter

# the creation order of nodes: the engine runs the larger numbers first (see run_backward)
sequence_numbers = itertools.count()
OUT = object()   # in a node's ``saved``: stands for the op's own result

FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved tensors after "
             "they have already been freed). Saved intermediate values of the graph are freed when you call "
             ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
             "graph a second time or if you need to access saved tensors after calling backward.")


class _SavedOutput:
    """An op's own result saved for its backward, kept without its grad_fn to avoid a cycle."""

    __slots__ = ("data", "_vc", "requires_grad")

    def __init__(self, t):
        self.data = t._data
        self._vc = version_counter(t)
        self.requires_grad = True   # an output saved by its node is differentiable through that node


# what a node saves with a version: its input tensors and its own result
_versioned = (Tensor, _SavedOutput)

_hook_ids = itertools.count()


class _NodeHooks:
    """The rarely used parts of a node, kept out of the way of the hot path."""

    __slots__ = ("pre", "post", "tensor", "retains", "metadata", "raw")

    def __init__(self):
        self.pre = self.post = self.tensor = self.retains = self.metadata = self.raw = None


NO_EDGE = (None, 0)


class Node:
    """A backward function of the graph; subclasses are named as in PyTorch (``MulBackward0``).

    Subclasses implement ``apply(self, *grads)`` returning one gradient (or None) per entry of
    ``next_functions``; gradients are Tensors so that ``create_graph=True`` records them.
    ``saved`` may hold the op's inputs, Python constants, and last ``OUT`` for the op's
    result ``out`` (kept as data only, so the result and its node do not form a cycle).
    """

    __slots__ = ("next_functions", "_saved", "_versions", "_seq", "_hooks", "__weakref__")
    n_outputs = 1
    takes_tensors = False   # True for nodes whose apply needs Tensors even on the fast path
    _pack_order = None      # the order PyTorch packs (and unpacks) the saved values in; see define_saved
    _array_slots = ()       # positions of numpy arrays that PyTorch saves as tensors; see define_saved

    def __init__(self, inputs, saved=(), out=None):
        edges = []
        for t in inputs:
            if t is None or not t._rg:
                edges.append(NO_EDGE)
            else:
                fn = t.grad_fn
                edges.append((fn, t._output_nr) if fn is not None else (grad_accumulator(t), 0))
        self.next_functions = tuple(edges)
        self._seq = next(sequence_numbers)
        self._hooks = None
        if saved:
            if saved[-1] is OUT:      # by convention the op's own result is saved last
                saved = saved[:-1] + (_SavedOutput(out),)
            self._saved = saved
            # None and constants (Python scalars) have no version
            self._versions = tuple([(0 if s._vc is None else s._vc[0]) if isinstance(s, _versioned) else None
                                    for s in saved])
            if _default_hooks:      # inside saved_tensors_hooks: the hooks pack what was just saved
                _pack_with_default_hooks(self, out)
        else:
            self._saved = self._versions = ()

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def _hook_state(self):
        if self._hooks is None:
            self._hooks = _NodeHooks()
        return self._hooks

    @property
    def metadata(self):
        h = self._hook_state()
        if h.metadata is None:
            h.metadata = {}
        return h.metadata

    def needs_input_grad(self, i):
        return self.next_functions[i][0] is not None

    def saved(self, as_tensors=None):
        """The saved values, checked against in-place changes since they were saved.

        Plain numpy arrays on an ordinary backward pass; Tensors when the pass is recorded
        (``create_graph=True``) or when ``as_tensors`` is set.
        """
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MSG)
        tensors = grad_mode.state.enabled if as_tensors is None else as_tensors
        if type(saved) is _HookedSaved:
            return _saved_values(self, tensors)
        # (one entry at a time this is _saved_value below, inlined: backward's hot path)
        out = []
        for s, v in zip(saved, self._versions):
            if v is None:
                out.append(s)
            elif type(s) is _SavedOutput:
                if s._vc[0] != v:
                    raise RuntimeError(_modified_msg(s.data, s._vc[0], v, f"output 0 of {self._short_name()}"))
                out.append(_tensor_from_saved_output(s, self) if tensors else s.data)
            else:
                if (0 if s._vc is None else s._vc[0]) != v:
                    origin = None
                    if s.grad_fn is not None:
                        origin = f"output {s._output_nr} of {s.grad_fn._short_name()}"
                    raise RuntimeError(_modified_msg(s._data, s._vc[0], v, origin))
                out.append(s if tensors else s._data)
        return out

    def _short_name(self):
        name = type(self).__name__
        return name[:name.rfind("Backward")] if "Backward" in name else name

    def release(self):
        if self._saved:
            self._saved = None

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        return self._add_hook("post", fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        return self._add_hook("pre", fn)

    def _register_tensor_hook(self, output_nr, fn):
        return self._add_hook("tensor", (output_nr, fn))

    def _add_hook(self, kind, fn):
        h = self._hook_state()
        hooks = getattr(h, kind)
        if hooks is None:
            hooks = HookDict()
            setattr(h, kind, hooks)
        key = next(_hook_ids)
        hooks[key] = fn
        return RemovableHandle(hooks, key)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()
        self._seq = float("inf")  # run as soon as ready, like PyTorch
        self._saved = self._versions = ()
        self._hooks = None
        self.variable = variable


def gradient_edge(t):
    """The (node, output_nr) a gradient for tensor ``t`` flows into; (None, 0) if none."""
    if t is None or not t._rg:
        return NO_EDGE
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (grad_accumulator(t), 0)


def grad_accumulator(t):
    """The leaf's AccumulateGrad node, shared by every op that uses the leaf."""
    ref = t._accum
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accum = weakref.ref(acc)
    return acc


def _tensor_from_saved_output(s, node):
    t = wrap(s.data)
    t._vc = s._vc
    if s.requires_grad:
        t.grad_fn = node
        t._rg = True
    return t


def _modified_msg(data, now, expected, origin):
    desc = f"[{legacy_type_name(data)} [{', '.join(str(d) for d in data.shape)}]]"
    if origin:
        desc += f", which is {origin},"
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {desc} is at version {now}; expected version {expected} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


# ---------------------------------------------------------------------------------------------
# saved tensors: pack/unpack hooks, and PyTorch's ``_saved_<name>`` / ``_raw_saved_<name>``

class _HookState(threading.local):
    """Saved-tensor hooks are per thread, as in PyTorch."""

    def __init__(self):
        self.stack = []          # (pack, unpack) of each open saved_tensors_hooks, innermost last
        self.disabled = None     # the error message while disable_saved_tensors_hooks is on


hook_state = _HookState()
_default_hooks = []   # the open (pack, unpack) pairs of all threads: Node.__init__'s one cheap check

_HOOKS_FREED_MSG = ("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
                    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
                    "retain_graph=True if you need to backward through the graph a second time or if you need to "
                    "access saved variables after calling backward.")


class _HookedSaved(tuple):
    """A node's saved values once some of them went through a pack hook (``saved`` then takes
    the slow path that calls the unpack hooks)."""

    __slots__ = ()


class _Packed:
    """One saved value after its pack hook: what the hook returned, and what is needed to give
    the unpacked tensor back its place in the graph."""

    __slots__ = ("packed", "unpack_hook", "kind", "grad_fn", "output_nr", "requires_grad", "accum")

    def __init__(self, kind, unpack_hook):
        self.kind = kind              # "input", "output" (the node's result), "number" or "array"
        self.unpack_hook = unpack_hook
        self.grad_fn = self.accum = None
        self.output_nr = 0
        self.requires_grad = False


def push_saved_tensors_hooks(pack_hook, unpack_hook):
    if hook_state.disabled is not None:
        raise RuntimeError(hook_state.disabled)
    pair = (pack_hook, unpack_hook)
    hook_state.stack.append(pair)
    _default_hooks.append(pair)


def pop_saved_tensors_hooks():
    _default_hooks.remove(hook_state.stack.pop())


def _pack_with_default_hooks(node, out):
    stack = hook_state.stack
    if not stack:
        return              # the hooks are another thread's
    if hook_state.disabled is not None:
        raise RuntimeError(hook_state.disabled)
    pack, unpack = stack[-1]
    saved = list(node._saved)
    packed = False
    for i in _pack_order(node):
        s = saved[i]
        # PyTorch packs tensors only: not Python numbers, nor the None of an unneeded input
        if isinstance(s, _versioned):
            if type(s) is _SavedOutput:
                # the hook sees the result as the caller will: with this node as its grad_fn
                out.grad_fn = node
                out._rg = True
            saved[i] = _pack(node, s, out if type(s) is _SavedOutput else s, pack, unpack)
            packed = True
        elif type(s) is np.ndarray and i in type(node)._array_slots:
            # a statistic kept as an array (batch_norm's mean...) that PyTorch saves as a tensor
            saved[i] = _pack(node, s, wrap(s), pack, unpack)
            packed = True
    if packed:
        node._saved = _HookedSaved(saved)


def pack_saved_for_backward(node):
    """Apply the innermost ``saved_tensors_hooks`` to what a custom Function's ctx just saved:
    for ``FunctionCtx.save_for_backward`` to call (the ops' nodes pack in ``Node.__init__``)."""
    if _default_hooks:
        _pack_with_default_hooks(node, None)


def _pack_order(node):
    order = type(node)._pack_order
    return order if order is not None else range(len(node._saved))


def _pack(node, s, tensor, pack, unpack):
    """``s`` (an entry of ``node._saved``) packed by ``pack(tensor)``."""
    if type(s) is _SavedOutput:
        p = _Packed("output", unpack)
    elif isinstance(s, _versioned):
        p = _Packed("input", unpack)
        p.grad_fn, p.output_nr, p.requires_grad, p.accum = s.grad_fn, s._output_nr, s._rg, s._accum
    else:
        p = _Packed("array" if isinstance(s, np.ndarray) else "number", unpack)
    # as in PyTorch the hook runs without grad mode: ops in it record nothing (and save nothing)
    enabled = grad_mode.state.enabled
    grad_mode.state.enabled = False
    try:
        p.packed = pack(tensor)
    finally:
        grad_mode.state.enabled = enabled
    return p


def _unpack(node, p):
    """The tensor an unpack hook gives back, with the autograd identity of the saved one."""
    r = p.unpack_hook(p.packed)
    if not isinstance(r, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(r).__name__}")
    t = wrap(r._data)
    t._vc = version_counter(r)
    if p.kind == "output":
        t.grad_fn, t._rg = node, True
    elif p.grad_fn is not None:
        t.grad_fn, t._rg, t._output_nr = p.grad_fn, True, p.output_nr
    elif p.requires_grad:
        # a leaf: gradients through the unpacked tensor reach the leaf's own AccumulateGrad
        t._rg, t._accum = True, p.accum
    return t


def _saved_value(node, i, tensors):
    """Entry ``i`` of the node's saved values, checked and unpacked: an array, or a Tensor when
    ``tensors``; constants as they were saved."""
    s = node._saved[i]
    if type(s) is _Packed:
        t = _unpack(node, s)
        if s.kind == "number":
            return t._data.item()
        if s.kind == "array":
            return t._data
        return t if tensors else t._data
    v = node._versions[i]
    if v is None:
        return s
    if type(s) is _SavedOutput:
        if s._vc[0] != v:
            raise RuntimeError(_modified_msg(s.data, s._vc[0], v, f"output 0 of {node._short_name()}"))
        return _tensor_from_saved_output(s, node) if tensors else s.data
    if (0 if s._vc is None else s._vc[0]) != v:
        origin = None
        if s.grad_fn is not None:
            origin = f"output {s._output_nr} of {s.grad_fn._short_name()}"
        raise RuntimeError(_modified_msg(s._data, s._vc[0], v, origin))
    return s if tensors else s._data


def _saved_values(node, tensors):
    """All saved values of a node some of whose values were packed: unpacked in PyTorch's order."""
    out = [None] * len(node._saved)
    for i in _pack_order(node):
        out[i] = _saved_value(node, i, tensors)
    return out


def _saved_tensor(node, i):
    """What ``node._saved_<name>`` shows for saved entry ``i``: a Tensor, or None."""
    saved = node._saved
    if saved is None:
        if node._versions[i] is None and i not in type(node)._array_slots:
            return None          # nothing (or a number) was saved there: nothing was freed
        raise RuntimeError(FREED_MSG)
    s = saved[i]
    if s is None:
        return None
    value = _saved_value(node, i, True)
    if type(s) is _Packed:
        return value if s.kind in ("input", "output") else _number_tensor(value)
    return _number_tensor(value) if node._versions[i] is None else value


def _number_tensor(value):
    """A saved constant as PyTorch shows it: Python numbers are 0-d tensors of its 'wrapped
    number' dtypes (float64, int64, bool)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, bool):
        return wrap(np.asarray(value))
    if isinstance(value, int):
        return wrap(np.asarray(value, dtype=np.int64))
    if isinstance(value, float):
        return wrap(np.asarray(value, dtype=np.float64))
    return wrap(np.asarray(value))


class SavedTensor:
    """A tensor saved by a node, as ``grad_fn._raw_saved_<name>`` returns it (PyTorch's
    ``torch._C._autograd.SavedTensor``).

    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x.pow(2)
    >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 1, lambda t: t)
    """

    __slots__ = ("_node", "_index")

    def __init__(self, node, index):
        self._node, self._index = node, index

    def register_hooks(self, *hooks):
        """Pack the saved tensor now with ``pack_hook``; ``unpack_hook`` gives it back when used."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            got = ", ".join(repr(h) for h in hooks)
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                            "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                            f"Invoked with: {self!r}" + (f", {got}" if got else ""))
        node, i = self._node, self._index
        saved = node._saved
        if saved is None:
            raise RuntimeError(_HOOKS_FREED_MSG)
        s = saved[i]
        if s is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if type(s) is _Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        # as PyTorch, the pack hook sees the saved tensor without its autograd identity (detached);
        # unpacking gives that identity back
        tensor = _saved_tensor(node, i).detach()
        entries = list(saved)
        entries[i] = _pack(node, s, tensor, *hooks)
        node._saved = _HookedSaved(entries)

    @property
    def data(self):
        """What is stored: the pack hook's result once hooks are set, else the tensor."""
        saved = self._node._saved
        if saved is None or saved[self._index] is None:
            return None
        s = saved[self._index]
        if type(s) is _Packed:
            return s.packed
        if type(s) is _SavedOutput:
            return wrap(s.data)
        return _number_tensor(s)

    def unpack(self):
        """The saved tensor, through the unpack hook if one is set (as ``_saved_<name>``)."""
        return _saved_tensor(self._node, self._index)

    @property
    def unpack_hook(self):
        s = self._node._saved[self._index] if self._node._saved is not None else None
        return s.unpack_hook if type(s) is _Packed else None

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


def _saved_property(i):
    def get(node):
        return _saved_tensor(node, i)
    return property(get)


def raw_saved(node, i):
    """The node's ``SavedTensor`` for entry ``i``, the same object each time (as in PyTorch)."""
    h = node._hook_state()
    if h.raw is None:
        h.raw = {}
    st = h.raw.get(i)
    if st is None:
        st = h.raw[i] = SavedTensor(node, i)
    return st


def _raw_saved_property(i):
    def get(node):
        return raw_saved(node, i)
    return property(get)


def _saved_all_property(raw):
    def get(node):
        return tuple((raw_saved if raw else _saved_tensor)(node, i) for i in range(len(node._versions)))
    return property(get)


def define_saved(cls, pack_order=None, arrays=(), **fields):
    """Give the node class ``cls`` PyTorch's ``_saved_<name>`` attributes.

    Each field is either an int, the position of a tensor in the node's saved values (it also
    gets ``_raw_saved_<name>``, a ``SavedTensor``), ``...`` for all the saved values as a tuple
    (a list of tensors in PyTorch, such as ``indices``), or a function of the node returning the
    value (``lambda n: n.shape`` for ``self_sym_sizes``). ``pack_order`` lists the positions in
    the order PyTorch packs and unpacks them, when that is not the saved order (PyTorch's order:
    the saved inputs by name, then the saved outputs). ``arrays`` lists the positions holding
    numpy arrays (statistics computed by the forward pass) that PyTorch saves as tensors:
    saved_tensors_hooks pack them, and they read as freed after backward, as in PyTorch (other
    arrays a node keeps for itself stay out of the hooks' sight).

    >>> define_saved(MulBackward0, pack_order=(1, 0), self=0, other=1)  # doctest: +SKIP
    """
    for name, spec in fields.items():
        if callable(spec):
            setattr(cls, "_saved_" + name, property(spec))
        elif spec is Ellipsis:
            setattr(cls, "_saved_" + name, _saved_all_property(False))
            setattr(cls, "_raw_saved_" + name, _saved_all_property(True))
        else:
            setattr(cls, "_saved_" + name, _saved_property(spec))
            setattr(cls, "_raw_saved_" + name, _raw_saved_property(spec))
    if pack_order is not None:
        cls._pack_order = tuple(pack_order)
    cls._array_slots = tuple(arrays)


def c_int(v):
    """An int argument as PyTorch shows it in ``_saved_<name>``: negative ones read back as
    unsigned 64-bit numbers (``dim=-1`` shows as 18446744073709551615)."""
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return tuple(c_int(d) for d in v)
    v = int(v)
    return v + 2 ** 64 if v < 0 else v


def c_dims(dim):
    """A ``dim`` argument of a reduction as PyTorch saves it: always a tuple (None stays None)."""
    if dim is None:
        return None
    return c_int(tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))


# ---------------------------------------------------------------------------------------------
# callbacks at the end of a backward pass (register_multi_grad_hook)

_final_callbacks = []
_passes_running = [0]


def queue_final_callback(fn):
    """Run ``fn(ok)`` when the backward pass now running ends (``ok``: it completed); at once
    when none is running (``backward(inputs=...)`` accumulates into the leaves after its pass)."""
    if _passes_running[0] == 0:
        fn(True)
    else:
        _final_callbacks.append(fn)


def _run_final_callbacks(start, ok):
    todo = _final_callbacks[start:]
    del _final_callbacks[start:]
    for fn in todo:
        fn(ok)


# ---------------------------------------------------------------------------------------------
# the engine


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Propagate ``root_grads`` from the ``roots`` (tensors) back through the graph.

    With ``accumulate`` the leaves' ``.grad`` receive the result (``Tensor.backward``);
    otherwise the gradients of ``inputs`` are returned (``autograd.grad``). Without
    ``create_graph`` gradients travel as numpy arrays (see ops/dual.py); with it, as Tensors.

    Order: a node is created after the nodes of its inputs, so its sequence number is larger
    than theirs. Running the largest waiting sequence number first therefore runs every node
    after all the nodes that feed it — no dependency count is needed. Leaves accumulate last.
    """
    arrays = not create_graph
    capture, needed = _captured(roots, inputs, accumulate)

    buffers = {}    # node -> [grad per output]; a node waits in the heap once it has one
    fresh = {}      # node -> [True if the grad array is ours to keep without a copy]
    leaves = {}     # AccumulateGrad -> None, in the order gradients reached them
    heap = []
    send = _sender(buffers, fresh, leaves, heap)
    for r, g in zip(roots, root_grads):
        node, nr = gradient_edge(r)
        if node is not None:
            send(node, nr, g._data if arrays else g, False)

    results = [None] * (len(inputs) if inputs is not None else 0)
    prev_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    n_callbacks = len(_final_callbacks)   # those queued from here on belong to this pass
    ok = False
    _passes_running[0] += 1
    try:
        _run_nodes(heap, buffers, fresh, send, capture, needed, results, inputs, arrays, retain_graph)
        for acc in leaves:
            finish_leaf(acc, buffers.pop(acc), fresh.pop(acc), capture, results, inputs, accumulate, create_graph)
        ok = True
    finally:
        grad_mode.state.enabled = prev_mode
        _passes_running[0] -= 1
        if len(_final_callbacks) > n_callbacks:
            _run_final_callbacks(n_callbacks, ok)

    if inputs is not None:
        _refuse_unused(results, allow_unused)
    return results


def _sender(buffers, fresh, leaves, heap):
    """``send(node, output_nr, grad, is_fresh)``: add a gradient into the node's buffer; a node
    that receives its first one waits in the heap (a leaf in ``leaves``)."""
    heappush = heapq.heappush

    def send(nxt, nr, g, is_fresh):
        buf = buffers.get(nxt)
        if buf is None:
            buffers[nxt] = buf = [None] * nxt.n_outputs
            fresh[nxt] = [False] * nxt.n_outputs
            if type(nxt) is AccumulateGrad:
                leaves[nxt] = None
            else:
                heappush(heap, (-nxt._seq, nxt))
        prev = buf[nr]
        if prev is None:
            buf[nr] = g
            fresh[nxt][nr] = is_fresh
        else:
            buf[nr] = prev + g
            fresh[nxt][nr] = True
    return send


def _run_nodes(heap, buffers, fresh, send, capture, needed, results, inputs, arrays, retain_graph):
    """Run the waiting nodes, largest sequence number first, sending their outputs on; the
    leaves are left in their buffers.

    (One function for the whole loop, the eager mode's hot path: calling a helper per node
    for its backward and for passing its outputs on cost 3-5% of a backward pass in
    benchmarks/eager_overhead.py's op chain.)"""
    heappop = heapq.heappop
    while heap:
        node = heappop(heap)[1]
        grads = buffers.pop(node)
        fr = fresh.pop(node)
        hooks = node._hooks
        if hooks is not None:
            grads, fr = _run_node_pre_hooks(node, hooks, grads, fr, arrays)
        if capture:
            _capture(capture, node, grads, results, inputs, arrays)
            if needed is not None and node not in needed:
                continue
        # the node's backward, inline rather than a call per node: the engine's hot path
        if node.n_outputs == 1:
            g = grads[0]
            if g is None:
                continue
            if arrays and node.takes_tensors:
                outs = _apply_with_tensors(node, grads)
            else:
                outs = node.apply(g)
                if type(outs) is not tuple:
                    outs = (outs,)
        elif all(g is None for g in grads):
            continue
        elif arrays and node.takes_tensors:
            outs = _apply_with_tensors(node, grads)
        else:
            outs = node.apply(*grads)
            if type(outs) is not tuple:
                outs = (outs,)
        if hooks is not None and hooks.post:
            outs = _run_post_hooks(hooks.post, outs, grads, arrays)
        if not retain_graph and node._saved:
            node._saved = None

        # an output that is (a view of) a shared incoming gradient, or that goes to two inputs, is
        # shared: a leaf receiving it copies it before it could ever update it in place
        owners = {id(_root(g if arrays else g._data)) for g, f in zip(grads, fr) if g is not None and not f}
        for (nxt, nr), g in zip(node.next_functions, outs):
            if nxt is not None and g is not None:
                owner = id(_root(g if arrays else g._data))
                is_fresh = owner not in owners
                owners.add(owner)
                send(nxt, nr, g, is_fresh)


def _refuse_unused(results, allow_unused):
    """autograd.grad's error for an input that the graph did not reach (None in ``results``)."""
    for i, r in enumerate(results):
        if r is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used "
                               "in the graph. Set allow_unused=True if this is the desired behavior.")


def _captured(roots, inputs, accumulate):
    """{edge of an input: its positions in ``inputs``}, and for ``autograd.grad`` the nodes
    between the roots and those inputs (the only ones that need to run), else None."""
    capture = {}
    needed = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            capture.setdefault(gradient_edge(t), []).append(i)
        if not accumulate:
            needed = _nodes_needed([gradient_edge(r)[0] for r in roots], {e[0] for e in capture if e[0] is not None})
    return capture, needed


# (looked up as a module global by run_backward: the profiler times the leaves by replacing it)
def finish_leaf(acc, grads, fr, capture, results, inputs, accumulate, create_graph):
    """A leaf's hooks, then its gradient captured (autograd.grad) or accumulated into .grad."""
    arrays = not create_graph
    if acc._hooks is not None:
        grads, fr = _run_node_pre_hooks(acc, acc._hooks, grads, fr, arrays)
    if capture:
        _capture(capture, acc, grads, results, inputs, arrays)
    if accumulate and grads[0] is not None:
        accumulate_grad(acc.variable, grads[0], fr[0], create_graph)


def _capture(capture, node, grads, results, inputs, arrays):
    """Keep the gradients arriving for ``inputs[i]`` in ``results[i]``, in the input's dtype: a
    float32 input used with float64 tensors gets a float32 gradient, as from PyTorch's engine
    (and as ``backward()`` accumulates it)."""
    for nr, g in enumerate(grads):
        for i in capture.get((node, nr), ()):
            if g is None:
                results[i] = None
                continue
            dtype = inputs[i]._data.dtype
            if arrays:
                results[i] = wrap(g if g.dtype == dtype else g.astype(dtype))
            else:
                results[i] = g if g._data.dtype == dtype else g.to(inputs[i].dtype)


def _apply_with_tensors(node, grads):
    """Nodes written for Tensors (custom Functions) get Tensors on the array path too."""
    outs = node.apply(*[None if g is None else wrap(g) for g in grads])
    outs = outs if type(outs) is tuple else (outs,)
    return tuple(None if o is None else o._data for o in outs)


def _root(a):
    """The array that owns the memory of ``a`` (``a`` itself unless it is a view). An array
    over memory that compiled code handed over (its base an owner object, not an array:
    backends/marshal.py) owns its memory."""
    base = a.base
    while isinstance(base, np.ndarray):
        a, base = base, base.base
    return a


def _as_tensor(g, arrays):
    return wrap(g) if arrays and g is not None else g


def _as_grad(t, arrays):
    """A hook's result back into the engine's form (array or Tensor)."""
    if t is None:
        return None
    return t._data if arrays else t


def _run_node_pre_hooks(node, hooks, grads, fr, arrays):
    grads, fr = list(grads), list(fr)
    if hooks.tensor:
        for nr, fn in tuple(hooks.tensor.values()):
            if grads[nr] is not None:
                r = fn(_as_tensor(grads[nr], arrays))
                fr[nr] = False      # the hook may have kept the gradient it saw
                if r is not None:
                    grads[nr] = _as_grad(r, arrays)
    if hooks.retains:
        _retain_grads(hooks.retains, grads, arrays)
    if hooks.pre:
        for hook in tuple(hooks.pre.values()):
            r = hook(tuple(_as_tensor(g, arrays) for g in grads))
            fr = [False] * len(grads)
            if r is not None:
                grads = [_as_grad(x, arrays) for x in r]
    return grads, fr


def _run_post_hooks(post, outs, grads, arrays):
    for hook in tuple(post.values()):
        r = hook(tuple(_as_tensor(o, arrays) for o in outs), tuple(_as_tensor(g, arrays) for g in grads))
        if r is not None:
            outs = tuple(_as_grad(x, arrays) for x in r)
    return outs


def _nodes_needed(roots, targets):
    """The nodes from which some capture target is reachable; only those need to run."""
    order, stack, seen = [], [n for n in roots if n is not None], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    needed = set(targets)
    for node in sorted(order, key=lambda n: n._seq):   # inputs before the nodes that use them
        if node not in needed and any(n in needed for n, _ in node.next_functions if n is not None):
            needed.add(node)
    return needed


def _retain_grads(retains, grads, arrays):
    for nr, ref in retains.items():
        t = ref()
        if t is None or grads[nr] is None:
            continue
        g = grads[nr]
        if arrays:
            g = wrap(np.array(g, copy=True))
            t._grad = g if t._grad is None else t._grad + g
        elif t._grad is None:
            t._grad = g
        else:
            t._grad = t._grad + g


def accumulate_grad(var, g, is_fresh, create_graph):
    """AccumulateGrad: add ``g`` (an array, or a Tensor under create_graph) into ``var.grad``,
    in place when it can, as PyTorch does."""
    hooks = var._hooks
    if hooks is not None and hooks.pre:
        for fn in tuple(hooks.pre.values()):
            r = fn(g if isinstance(g, Tensor) else wrap(g))
            is_fresh = False        # the hook may have kept the gradient it saw
            if r is not None:
                g = r if create_graph else r._data
    dtype = var._data.dtype
    if isinstance(g, Tensor):
        if g._data.dtype != dtype:
            g = g.to(var.dtype)
        if g._data.shape != var._data.shape:
            g = g.sum_to_size(var.shape) if g.dim() > var.dim() else g.expand(var.shape)
    else:
        g = np.asarray(g)
        if g.dtype != dtype:
            g, is_fresh = g.astype(dtype), True
        if g.shape != var._data.shape:
            g, is_fresh = np.broadcast_to(g, var._data.shape), False
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
        else:
            var._grad = wrap(g if is_fresh and g.flags.writeable else np.array(g, copy=True))
    elif create_graph or old._rg:
        var._grad = old + (g if isinstance(g, Tensor) else wrap(g))
    else:
        np.add(old._data, g, out=old._data, casting="unsafe")
        bump_version(old)
    if hooks is not None and hooks.post_acc:
        for fn in tuple(hooks.post_acc.values()):
            fn(var)
