"""The grad_fn graph: nodes, saved tensors, and the backward engine.

Each differentiable op makes one ``Node`` whose ``next_functions`` point at the nodes of its
inputs (``AccumulateGrad`` for leaves). ``backward()`` counts dependencies, then runs nodes
in reverse creation order once all their gradients have arrived — micrograd's topological
walk, with PyTorch's ordering, hooks and freeing rules.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = (x * 3).sum()
    >>> y.grad_fn.next_functions[0][0].name()
    'MulBackward0'
"""
import heapq
import itertools
import weakref

import numpy as np

from . import grad_mode

_seq = itertools.count()

FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved tensors after "
             "they have already been freed). Saved intermediate values of the graph are freed when you call "
             ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
             "graph a second time or if you need to access saved tensors after calling backward.")


class _SavedOutput:
    """An op's own result saved for its backward, kept without its grad_fn to avoid a cycle."""

    __slots__ = ("data", "_vc", "requires_grad")

    def __init__(self, t):
        self.data = t._data
        self._vc = t._vc
        self.requires_grad = True   # an output saved by its node is differentiable through that node


class _RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks, key):
        self._hooks = weakref.ref(hooks) if hooks is not None else None
        self._key = key

    def remove(self):
        hooks = self._hooks() if self._hooks else None
        if hooks is not None:
            hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that a weakref can point at (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


_hook_ids = itertools.count()


class Node:
    """A backward function of the graph; subclasses are named as in PyTorch (``MulBackward0``).

    Subclasses implement ``apply(self, *grads)`` returning one gradient (or None) per entry of
    ``next_functions``; gradients are Tensors so that ``create_graph=True`` records them.
    """

    __slots__ = ("next_functions", "_saved", "_versions", "_seq", "_pre_hooks", "_post_hooks",
                 "_tensor_hooks", "_retains", "_metadata", "__weakref__")
    n_outputs = 1

    def __init__(self, inputs, saved=()):
        self.next_functions = tuple(_edge(t) for t in inputs)
        self._seq = next(_seq)
        self._pre_hooks = self._post_hooks = self._tensor_hooks = self._retains = self._metadata = None
        if saved:
            self._saved = saved
            # constants (Python scalars) may sit among the saved tensors; they have no version
            self._versions = tuple(getattr(getattr(s, "_vc", None), "v", None) for s in saved)
        else:
            self._saved = self._versions = ()

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def needs_input_grad(self, i):
        return self.next_functions[i][0] is not None

    def saved(self):
        """The saved tensors, checked against in-place changes since they were saved."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MSG)
        out = []
        for s, v in zip(saved, self._versions):
            if v is None:
                out.append(s)
            elif type(s) is _SavedOutput:
                if s._vc.v != v:
                    raise RuntimeError(_modified_msg(s.data, s._vc.v, v,
                                                     f"output 0 of {self._short_name()}"))
                out.append(_tensor_from_saved_output(s, self))
            else:
                if s._vc.v != v:
                    origin = None
                    if s.grad_fn is not None:
                        origin = f"output {s._output_nr} of {s.grad_fn._short_name()}"
                    raise RuntimeError(_modified_msg(s._data, s._vc.v, v, origin))
                out.append(s)
        return out

    def _short_name(self):
        name = type(self).__name__
        return name[:name.rfind("Backward")] if "Backward" in name else name

    def release(self):
        if self._saved:
            self._saved = None

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        key = next(_hook_ids)
        self._post_hooks[key] = fn
        return _RemovableHandle(self._post_hooks, key)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        key = next(_hook_ids)
        self._pre_hooks[key] = fn
        return _RemovableHandle(self._pre_hooks, key)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_hooks is None:
            self._tensor_hooks = _HookDict()
        key = next(_hook_ids)
        self._tensor_hooks[key] = (output_nr, fn)
        return _RemovableHandle(self._tensor_hooks, key)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()
        self._seq = float("inf")  # run as soon as ready, like PyTorch
        self._saved = self._versions = ()
        self._pre_hooks = self._post_hooks = self._tensor_hooks = self._retains = self._metadata = None
        self.variable = variable


def _edge(t):
    """The (node, output_nr) a gradient for tensor ``t`` flows into; (None, 0) if none."""
    if t is None or not t._rg:
        return (None, 0)
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
    from .tensor import Tensor
    t = Tensor._make(s.data)
    t._vc = s._vc
    if s.requires_grad:
        t.grad_fn = node
        t._rg = True
    return t


def _modified_msg(data, now, expected, origin):
    from .tensor import legacy_type_name
    desc = f"[{legacy_type_name(data)} [{', '.join(str(d) for d in data.shape)}]]"
    if origin:
        desc += f", which is {origin},"
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {desc} is at version {now}; expected version {expected} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


# ---------------------------------------------------------------------------------------------
# the engine


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Propagate ``root_grads`` from the ``roots`` (tensors) back through the graph.

    With ``accumulate`` the leaves' ``.grad`` receive the result (``Tensor.backward``);
    otherwise the gradients of ``inputs`` are returned (``autograd.grad``).
    """
    root_edges = [_edge(r) for r in roots]
    capture = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            capture.setdefault(_edge(t), []).append(i)

    deps = {}
    order = []
    stack = [e[0] for e in root_edges if e[0] is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    needed = None
    if inputs is not None and not accumulate:
        needed = _nodes_needed(order, {e[0] for e in capture if e[0] is not None})

    buffers = {}   # node -> [grad per output]
    fresh = {}     # node -> [True if the grad array is ours to keep without a copy]
    for (node, nr), g in zip(root_edges, root_grads):
        if node is not None:
            _add_to_buffer(buffers, fresh, node, nr, g, False)

    results = [None] * (len(inputs) if inputs is not None else 0)
    heap = []
    tick = itertools.count()
    for node in {e[0] for e in root_edges if e[0] is not None}:
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node._seq, next(tick), node))

    prev_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            grads = buffers.pop(node, None)
            fr = fresh.pop(node, None)
            if grads is None:
                grads = [None] * node.n_outputs
                fr = [False] * node.n_outputs
            if node._tensor_hooks:
                grads, fr = _run_tensor_hooks(node, grads, fr)
            if node._retains:
                _retain_grads(node, grads)
            if capture:
                for nr, g in enumerate(grads):
                    for i in capture.get((node, nr), ()):
                        results[i] = g
            if node._pre_hooks:
                for hook in tuple(node._pre_hooks.values()):
                    r = hook(tuple(grads))
                    if r is not None:
                        grads, fr = list(r), [False] * len(r)

            if needed is not None and node not in needed:
                outs = None
            elif isinstance(node, AccumulateGrad):
                if accumulate and grads[0] is not None:
                    _accumulate(node.variable, grads[0], fr[0], create_graph)
                outs = ()
            elif all(g is None for g in grads):
                outs = None
            else:
                outs = node.apply(*grads)
                if type(outs) is not tuple:
                    outs = (outs,)
                if node._post_hooks:
                    for hook in tuple(node._post_hooks.values()):
                        r = hook(outs, tuple(grads))
                        if r is not None:
                            outs = tuple(r)
                if not retain_graph:
                    node.release()

            in_arrays = [g._data for g in grads if g is not None]
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                g = outs[i] if outs else None
                if g is not None:
                    d = g._data
                    is_fresh = d.base is None and not any(d is a for a in in_arrays)
                    _add_to_buffer(buffers, fresh, nxt, nr, g, is_fresh)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    heapq.heappush(heap, (-nxt._seq, next(tick), nxt))
    finally:
        grad_mode.state.enabled = prev_mode

    if inputs is not None:
        for i, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used "
                                   "in the graph. Set allow_unused=True if this is the desired behavior.")
    return results


def _nodes_needed(order, targets):
    """The nodes from which some capture target is reachable; only those need to run."""
    needed = set(targets)
    changed = True
    while changed:   # a fixed point: the graph is small next to the work each node does
        changed = False
        for node in order:
            if node not in needed and any(n in needed for n, _ in node.next_functions if n is not None):
                needed.add(node)
                changed = True
    return needed


def _add_to_buffer(buffers, fresh, node, nr, g, is_fresh):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node.n_outputs
        fresh[node] = [False] * node.n_outputs
    prev = buf[nr]
    if prev is None:
        buf[nr] = g
        fresh[node][nr] = is_fresh
    else:
        buf[nr] = prev + g
        fresh[node][nr] = True


def _run_tensor_hooks(node, grads, fr):
    grads, fr = list(grads), list(fr)
    for nr, fn in tuple(node._tensor_hooks.values()):
        if grads[nr] is not None:
            r = fn(grads[nr])
            if r is not None:
                grads[nr], fr[nr] = r, False
    return grads, fr


def _retain_grads(node, grads):
    for nr, ref in node._retains.items():
        t = ref()
        if t is None or grads[nr] is None:
            continue
        g = grads[nr]
        if t._grad is None:
            t._grad = g if grad_mode.state.enabled else g.detach().clone()
        elif grad_mode.state.enabled:
            t._grad = t._grad + g
        else:
            t._grad = t._grad + g.detach()


def _accumulate(var, g, is_fresh, create_graph):
    """AccumulateGrad: add ``g`` into ``var.grad`` as PyTorch does (in place when it can)."""
    hooks = var._hooks
    if hooks is not None and hooks.pre:
        for fn in tuple(hooks.pre.values()):
            r = fn(g)
            if r is not None:
                g, is_fresh = r, False
    if g.dtype is not var.dtype:
        g = g.to(var.dtype)
    if g.shape != var.shape:
        g = g.expand(var.shape) if g.dim() <= var.dim() else g.sum_to_size(var.shape)
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
        elif is_fresh and not g._rg:
            var._grad = g
        else:
            from .tensor import Tensor
            var._grad = Tensor._make(np.array(g._data, copy=True))
    elif create_graph or old._rg:
        var._grad = old + g
    else:
        np.add(old._data, g._data, out=old._data, casting="unsafe")
        old._vc.v += 1
    if hooks is not None and hooks.post_acc:
        for fn in tuple(hooks.post_acc.values()):
            fn(var)
