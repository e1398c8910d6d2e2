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

# set by tensor.py, which imports this module: (Tensor, _SavedOutput), version_counter, bump_version
_versioned = ()
_version_counter = _bump_version = None
_seq = itertools.count()
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
        self._vc = _version_counter(t)
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


class _NodeHooks:
    """The rarely used parts of a node, kept out of the way of the hot path."""

    __slots__ = ("pre", "post", "tensor", "retains", "metadata")

    def __init__(self):
        self.pre = self.post = self.tensor = self.retains = self.metadata = None


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

    def __init__(self, inputs, saved=(), out=None):
        edges = []
        for t in inputs:
            if t is None or not t._rg:
                edges.append(NO_EDGE)
            else:
                fn = t.grad_fn
                edges.append((fn, t._output_nr) if fn is not None else (grad_accumulator(t), 0))
        self.next_functions = tuple(edges)
        self._seq = next(_seq)
        self._hooks = None
        if saved:
            if saved[-1] is OUT:      # by convention the op's own result is saved last
                saved = saved[:-1] + (_SavedOutput(out),)
            self._saved = saved
            # None and constants (Python scalars) have no version
            self._versions = tuple([(0 if s._vc is None else s._vc[0]) if isinstance(s, _versioned) else None
                                    for s in saved])
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
            hooks = _HookDict()
            setattr(h, kind, hooks)
        key = next(_hook_ids)
        hooks[key] = fn
        return _RemovableHandle(hooks, key)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()
        self._seq = float("inf")  # run as soon as ready, like PyTorch
        self._saved = self._versions = ()
        self._hooks = None
        self.variable = variable


def _edge(t):
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

    (Over 80 lines on purpose: the loop over nodes is the eager mode's hot path, and calling a
    helper per node for its backward and for passing its outputs on cost 3-5% of a backward
    pass in benchmarks/eager_overhead.py's op chain.)

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
    heappop, heappush = heapq.heappop, heapq.heappush

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

    for r, g in zip(roots, root_grads):
        node, nr = _edge(r)
        if node is not None:
            send(node, nr, g._data if arrays else g, False)

    results = [None] * (len(inputs) if inputs is not None else 0)
    prev_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    try:
        while heap:
            node = heappop(heap)[1]
            grads = buffers.pop(node)
            fr = fresh.pop(node)
            hooks = node._hooks
            if hooks is not None:
                grads, fr = _run_node_pre_hooks(node, hooks, grads, fr, arrays)
            if capture:
                _capture(capture, node, grads, results, arrays)
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

        for acc in leaves:
            _finish_leaf(acc, buffers.pop(acc), fresh.pop(acc), capture, results, accumulate, create_graph)
    finally:
        grad_mode.state.enabled = prev_mode

    if inputs is not None:
        for i, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used "
                                   "in the graph. Set allow_unused=True if this is the desired behavior.")
    return results


def _captured(roots, inputs, accumulate):
    """{edge of an input: its positions in ``inputs``}, and for ``autograd.grad`` the nodes
    between the roots and those inputs (the only ones that need to run), else None."""
    capture = {}
    needed = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            capture.setdefault(_edge(t), []).append(i)
        if not accumulate:
            needed = _nodes_needed([_edge(r)[0] for r in roots], {e[0] for e in capture if e[0] is not None})
    return capture, needed


def _finish_leaf(acc, grads, fr, capture, results, accumulate, create_graph):
    """A leaf's hooks, then its gradient captured (autograd.grad) or accumulated into .grad."""
    arrays = not create_graph
    if acc._hooks is not None:
        grads, fr = _run_node_pre_hooks(acc, acc._hooks, grads, fr, arrays)
    if capture:
        _capture(capture, acc, grads, results, arrays)
    if accumulate and grads[0] is not None:
        _accumulate(acc.variable, grads[0], fr[0], create_graph)


def _capture(capture, node, grads, results, arrays):
    from .tensor import _wrap
    for nr, g in enumerate(grads):
        for i in capture.get((node, nr), ()):
            results[i] = _wrap(g) if arrays and g is not None else g


def _apply_with_tensors(node, grads):
    """Nodes written for Tensors (custom Functions) get Tensors on the array path too."""
    from .tensor import _wrap
    outs = node.apply(*[None if g is None else _wrap(g) for g in grads])
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
    from .tensor import _wrap
    return _wrap(g) if arrays and g is not None else g


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
    from .tensor import _wrap
    for nr, ref in retains.items():
        t = ref()
        if t is None or grads[nr] is None:
            continue
        g = grads[nr]
        if arrays:
            g = _wrap(np.array(g, copy=True))
            t._grad = g if t._grad is None else t._grad + g
        elif t._grad is None:
            t._grad = g
        else:
            t._grad = t._grad + g


def _accumulate(var, g, is_fresh, create_graph):
    """AccumulateGrad: add ``g`` (an array, or a Tensor under create_graph) into ``var.grad``,
    in place when it can, as PyTorch does."""
    from .tensor import Tensor, _wrap
    hooks = var._hooks
    if hooks is not None and hooks.pre:
        for fn in tuple(hooks.pre.values()):
            r = fn(g if isinstance(g, Tensor) else _wrap(g))
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
            var._grad = _wrap(g if is_fresh and g.flags.writeable else np.array(g, copy=True))
    elif create_graph or old._rg:
        var._grad = old + (g if isinstance(g, Tensor) else _wrap(g))
    else:
        np.add(old._data, g, out=old._data, casting="unsafe")
        _bump_version(old)
    if hooks is not None and hooks.post_acc:
        for fn in tuple(hooks.post_acc.values()):
            fn(var)
