"""One application of a ``srcgrad.func`` transform on the eager autograd: the differentiable
copies of its inputs, and which of its results must stay attached to an outer graph.

PyTorch's functorch keeps a stack of "levels". Here each transform makes its own inputs
differentiable instead:

* an input that does not require grad becomes a fresh leaf (``detach().requires_grad_()``);
* an input that already requires grad while the outer graph records (it belongs to an
  enclosing transform, or to the user's own ``backward``) becomes an alias of it
  (``view_as``). Differentiating with respect to the alias gives the partial derivative
  through this argument only, and the alias's history keeps the result differentiable for
  the enclosing transform.

A result whose history reaches only this level's fresh leaves is detached (the user sees a
plain tensor, as with torch.func); one that reaches a tensor from outside keeps its graph, so
that ``grad(grad(f))`` works. Gradients are computed with ``create_graph=True`` only when that
can happen: grad mode was on when the transform was called and the outputs (or the vectors
they are multiplied with) reach a tensor from outside. At the top level with plain inputs the
backward pass is an ordinary one.

Example:
    >>> import srcgrad.eager as torch
    >>> level = Level()
    >>> x = level.differentiable(torch.tensor([1.0, 2.0]))
    >>> (g,) = level.grads([(x * x).sum()], [x])
    >>> level.unwrap(g).requires_grad
    False
"""
import weakref

from ..eager import grad_mode
from ..eager.autograd_api import grad as _autograd_grad
from ..eager.creation import zeros_like
from ..eager.graph import AccumulateGrad
from ..eager.tensor import Tensor
from ._pytree import tree_map


class Level:
    """The state of one transform call (see the module docstring)."""

    def __init__(self):
        # whether the caller's autograd records: results may then stay attached to it
        self.track = grad_mode.is_grad_enabled()
        self._fresh = {}    # id -> leaf made here (kept alive so that ids stay unique)
        # node -> whether it reaches a leaf from outside; a node's history never changes
        self._outside = weakref.WeakKeyDictionary()

    def differentiable(self, t):
        """A tensor standing for input ``t`` that this level differentiates with respect to."""
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if self.track and t.requires_grad:
            return t.view_as(t)
        leaf = t.detach().requires_grad_()
        self._fresh[id(leaf)] = leaf
        return leaf

    def new_leaf(self, t):
        """``t`` made a fresh leaf of this level (the cotangents of the double-vjp trick)."""
        t.requires_grad_()
        self._fresh[id(t)] = t
        return t

    def grads(self, outputs, inputs, grad_outputs=None, retain_graph=True, create_graph=None,
              fill_zeros=True):
        """``autograd.grad`` over the outputs that require grad. Unused inputs get zeros (or
        None with ``fill_zeros=False``); ``create_graph`` defaults to whether the results could
        depend on a tensor from outside this level."""
        if grad_outputs is None:
            grad_outputs = [None] * len(outputs)
        if create_graph is None:
            create_graph = self.track and self.connected(list(outputs) + list(grad_outputs))
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
        if pairs:
            outs = [o for o, _ in pairs]
            gos = [g for _, g in pairs]
            with grad_mode.enable_grad():
                res = list(_autograd_grad(outs, list(inputs), None if all(g is None for g in gos) else gos,
                                          retain_graph=retain_graph, create_graph=create_graph,
                                          allow_unused=True))
        else:
            res = [None] * len(inputs)
        # autograd.grad can hand back a gradient promoted past its input's dtype (float32 input,
        # int64 factor): PyTorch casts it back
        res = [r.to(x.dtype) if r is not None and r.dtype != x.dtype else r for r, x in zip(res, inputs)]
        if fill_zeros:
            res = [zeros_like(x) if r is None else r for r, x in zip(res, inputs)]
        return res

    def unwrap(self, t, track=None):
        """``t`` as the caller sees it: detached unless its history reaches a tensor from
        outside this level (and the caller records, ``track``: default ``self.track``)."""
        if not isinstance(t, Tensor) or not t.requires_grad:
            return t
        if track is None:
            track = self.track
        if track and self._reaches_outside(t):
            return t
        return t.detach()

    def connected(self, tensors):
        """Whether any of ``tensors`` has a history reaching a tensor from outside this level."""
        return any(isinstance(t, Tensor) and t.requires_grad and self._reaches_outside(t) for t in tensors)

    def _reaches_outside(self, t):
        if t.grad_fn is None:
            return id(t) not in self._fresh
        memo = self._outside
        stack = [t.grad_fn]
        while stack:
            node = stack[-1]
            if node in memo:
                stack.pop()
                continue
            if type(node) is AccumulateGrad:
                memo[node] = id(node.variable) not in self._fresh
                stack.pop()
                continue
            nexts = [n for n, _ in node.next_functions if n is not None]
            pending = [n for n in nexts if n not in memo]
            if pending:
                stack.extend(pending)
                continue
            memo[node] = any(memo[n] for n in nexts)
            stack.pop()
        return memo[t.grad_fn]


def check_aux(aux, unwrap):
    """``aux`` with its tensors unwrapped; PyTorch's error for a non-tensor leaf."""
    def one(x):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        return unwrap(x)
    return tree_map(one, aux)
