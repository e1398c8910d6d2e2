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
import warnings


class Specialisation:
    """The compiled code of one argument signature: the primal IR, the IR that runs (the
    derivative's), its Python source (or a function making it), the callable, and the stages
    shown (``llvm_ir``, ``ptx``); ``backend`` says which backend runs it.

    Made with ``compile`` (a function returning ``(run, backend, llvm_ir, later)``) instead of
    ``run``,
    the native code is built at the first use of ``run``, ``backend`` or ``llvm_ir``: a
    compiled function that another one only inlines (``grad(jit(f))``, a ``jacobian`` inside a
    ``jit``) is never built for itself. ``later`` is None or a build still running
    (backends/llvm/tiers.py), whose ``(run, llvm_ir)`` replace the first ones at the first call
    after it is done (``llvm_ir`` waits for it)."""

    def __init__(self, ir, code_ir, source, run=None, backend=None, llvm_ir=None, ptx=None, compile=None):
        self.ir, self.code_ir, self._source, self.ptx = ir, code_ir, source, ptx
        self._run, self._backend, self._llvm_ir = run, backend, llvm_ir
        self._compile = compile
        self._later = None
        self._lock = threading.Lock()
        self.result_tree = ir.result_tree
        self.timings = {}           # stage -> seconds, as Compiled.stages shows them

    def _built(self):
        if self._compile is not None:
            with self._lock:
                if self._compile is not None:
                    self._run, self._backend, self._llvm_ir, self._later = self._compile()
                    self._compile = None
        return self

    def _swapped(self, wait):
        """Put the finished build of ``later`` in place of the first one (``wait``: for it to
        finish); a build that failed leaves the first one, with a warning."""
        later = self._later
        if later is not None and (wait or later.done()):
            with self._lock:
                if self._later is later:
                    try:
                        self._run, self._llvm_ir = later.result()
                    except Exception as e:      # noqa: BLE001 -- the first build still runs
                        warnings.warn(f"srcgrad: the optimised build of {self.code_ir.name} failed ({e!r}); "
                                      "its quickly built code goes on running", RuntimeWarning)
                    self._later = None
        return self

    @property
    def run(self):
        if self._compile is None and self._later is None:
            return self._run
        return self._built()._swapped(wait=False)._run

    @property
    def source(self):
        """The Python source of ``code_ir`` (given as a function, it is generated at the first
        use: a first call on llvm does not wait for it)."""
        if callable(self._source):
            with self._lock:
                if callable(self._source):
                    self._source = self._source()
        return self._source

    @property
    def building(self):
        """Whether a build is still running in the background (tiers.py)."""
        return self._later is not None and not self._later.done()

    @property
    def backend(self):
        return self._built()._backend

    @property
    def llvm_ir(self):
        return self._built()._swapped(wait=True)._llvm_ir

    def results(self, out):
        """The compiled code's flat results as the function returns them (containers rebuilt)."""
        if self.result_tree is None:
            return out
        return self.result_tree.rebuild(list(out) if isinstance(out, tuple) else [out])


__all__ = ["Specialisation"]
