"""``Specialisation``: the compiled code of a ``Compiled`` object for one argument signature
(srcgrad/compiled.py keeps one per signature; srcgrad/transforms.py builds them).

Example:
    >>> import srcgrad
    >>> def f(x):
    ...     return 2.0 * x
    >>> g = srcgrad.grad(f)
    >>> g(1.0), g.specialisation.backend
    (2.0, 'llvm')
"""


class Specialisation:
    """The compiled code of one argument signature: the primal IR, the IR that runs (the
    derivative's), its Python source, the callable, and the stages shown (``llvm_ir``, ``ptx``);
    ``backend`` says which backend runs it."""

    def __init__(self, ir, code_ir, source, run, backend, llvm_ir=None, ptx=None):
        self.ir, self.code_ir, self.source, self.run, self.llvm_ir = ir, code_ir, source, run, llvm_ir
        self.backend, self.ptx = backend, ptx
        self.result_tree = ir.result_tree

    def results(self, out):
        """The compiled code's flat results as the function returns them (containers rebuilt)."""
        if self.result_tree is None:
            return out
        return self.result_tree.rebuild(list(out) if isinstance(out, tuple) else [out])


__all__ = ["Specialisation"]
