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
import threading


class Specialisation:
    """The compiled code of one argument signature: the primal IR, the IR that runs (the
    derivative's), its Python source, the callable, and the stages shown (``llvm_ir``, ``ptx``);
    ``backend`` says which backend runs it.

    Made with ``compile`` (a function returning ``(run, backend, llvm_ir)``) instead of ``run``,
    the native code is built at the first use of ``run``, ``backend`` or ``llvm_ir``: a
    compiled function that another one only inlines (``grad(jit(f))``, a ``jacobian`` inside a
    ``jit``) is never built for itself."""

    def __init__(self, ir, code_ir, source, run=None, backend=None, llvm_ir=None, ptx=None, compile=None):
        self.ir, self.code_ir, self.source, self.ptx = ir, code_ir, source, ptx
        self._run, self._backend, self._llvm_ir = run, backend, llvm_ir
        self._compile = compile
        self._lock = threading.Lock()
        self.result_tree = ir.result_tree
        self.timings = {}           # stage -> seconds, as Compiled.stages shows them

    def _built(self):
        if self._compile is not None:
            with self._lock:
                if self._compile is not None:
                    self._run, self._backend, self._llvm_ir = self._compile()
                    self._compile = None
        return self

    @property
    def run(self):
        return self._run if self._compile is None else self._built()._run

    @property
    def backend(self):
        return self._built()._backend

    @property
    def llvm_ir(self):
        return self._built()._llvm_ir

    def results(self, out):
        """The compiled code's flat results as the function returns them (containers rebuilt)."""
        if self.result_tree is None:
            return out
        return self.result_tree.rebuild(list(out) if isinstance(out, tuple) else [out])


__all__ = ["Specialisation"]
