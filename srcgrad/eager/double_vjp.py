"""Jacobian-vector products from reverse mode: the double-vjp trick, shared by
``srcgrad.func`` (``jvp``, ``jacfwd``), ``torch.autograd.functional`` (``jvp``, ``hvp``,
``jacobian(strategy="forward-mode")``) and ``torch.autograd.forward_ad`` (each op's tangent).

With a cotangent ``u`` (zeros, a leaf requiring grad), the vjp ``g = Jᵀu`` is computed with
its graph recorded; it is linear in ``u``, so the vjp of ``g`` with respect to ``u`` along a
tangent ``v`` is ``J v``. The function runs once, the first vjp once, and each tangent pushed
costs one more backward pass.

The callers differ in how a gradient is taken (a ``srcgrad.func`` level decides for itself
whether the results keep a graph, ``autograd.functional`` casts them back to the input's
dtype, ``forward_ad`` calls ``autograd.grad`` as it is), so ``Linearization`` is given their
``grad``; argument checks, strict mode and the making of the cotangents stay with them.

Example:
    >>> import functools
    >>> import srcgrad as torch
    >>> from srcgrad.eager.autograd_api import grad
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> u = torch.zeros(2, requires_grad=True)
    >>> lin = Linearization([x ** 2], [x], [u], functools.partial(grad, allow_unused=True))
    >>> lin.push([torch.tensor([1.0, 1.0])], create_graph=False)
    [tensor([2., 4.])]
"""


class Linearization:
    """``outputs`` linearised at ``inputs`` by the double-vjp trick: ``push(tangents)`` returns
    J v for each output, None where no tangent reaches it.

    ``cotangents`` has one zero leaf requiring grad per output, or None for an output left out
    (it gets None from ``push``). ``grad(outputs, inputs, grad_outputs, create_graph=...)`` is
    the caller's ``autograd.grad``: it skips outputs that do not require grad and gives None
    for an input they do not reach."""

    def __init__(self, outputs, inputs, cotangents, grad):
        self.cotangents, self.grad = cotangents, grad
        # create_graph=True: these vjps are differentiated again, with respect to the cotangents
        self.vjps = grad(outputs, inputs, cotangents, create_graph=True)
        # a vjp without a graph does not depend on its cotangents: it pushes no tangent
        self._live = [g if g is not None and g.requires_grad else None for g in self.vjps]
        self._leaves = [u for u in cotangents if u is not None]
        self._every = len(self._leaves) == len(cotangents)     # no output left out

    def push(self, tangents, create_graph):
        """J v for each output: one tangent per input (None: zero along that input), or
        ``tangents=None`` for autograd.grad's implicit ones (inputs of one element)."""
        if tangents is None:
            pairs = [(g, None) for g in self._live if g is not None]
        else:
            pairs = [(g, v) for g, v in zip(self._live, tangents) if g is not None and v is not None]
        if not pairs or not self._leaves:
            return [None] * len(self.cotangents)
        grad_outputs = None if tangents is None else [v for _, v in pairs]
        res = self.grad([g for g, _ in pairs], self._leaves, grad_outputs, create_graph=create_graph)
        if self._every:
            return list(res)
        res = iter(res)
        return [None if u is None else next(res) for u in self.cotangents]
