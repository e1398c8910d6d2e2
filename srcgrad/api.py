"""The compiler's front door: ``grad``, ``value_and_grad``, ``jit``, ``vjp``, ``jvp``,
``hessian``, ``hvp``, ``jacobian`` (``jacfwd``, ``jacrev``), ``vectorize`` and ``show``. Each
makes a ``Compiled`` object (srcgrad/compiled.py) of its kind of transformation, whose record
in srcgrad/transforms.py says what it builds and returns.

Example:
    >>> import math, srcgrad
    >>> @srcgrad.grad
    ... def f(x):
    ...     return math.sin(x) * x
    >>> round(f(1.0), 6)
    1.381773
"""
from .ad.checkpoint import Policy
from .compiled import Compiled, compiled_for
from .reuse import shared
from .transforms import pullback_at, tangents_at


def _make(kind, fun, **options):
    """``Compiled(fun, kind, ...)``, or the decorator that makes it where ``fun`` is not given; the
    same object as last time for the same request while what it read is unchanged (reuse.py)."""
    Policy.of(options.get("checkpoint"), kind)      # a bad checkpoint= is said now, not at the first call
    if fun is None:
        return lambda f: _make(kind, f, **options)
    return shared(kind, fun, options, lambda: Compiled(fun, kind, **options))


def grad(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False, checkpoint=None):
    """The gradient of a scalar-valued function with respect to argument(s) ``wrt`` (an index,
    a name, or a tuple of them: then a tuple of gradients), each like its argument.

    >>> import numpy as np, srcgrad
    >>> def loss(w, x):
    ...     return np.sum((x * w) ** 2)
    >>> srcgrad.grad(loss)(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([18., 64.])

    ``checkpoint=64`` (snapshots) or ``checkpoint="100MB"`` (a budget for them) reverses the
    loops at the function's top level by binomial checkpointing: bounded memory, some
    iterations recomputed, the same gradient bit for bit (ad/checkpoint.py).
    """
    return _make("grad", fun, wrt=wrt, backend=backend, boundscheck=boundscheck, cache=cache, checkpoint=checkpoint)


def value_and_grad(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False, checkpoint=None):
    """Like ``grad``, returning ``(value, gradient)``.

    >>> import srcgrad
    >>> def square(x):
    ...     return x * x
    >>> srcgrad.value_and_grad(square)(3.0)
    (9.0, 6.0)
    """
    return _make("value_and_grad", fun, wrt=wrt, backend=backend, boundscheck=boundscheck, cache=cache,
                 checkpoint=checkpoint)


def hessian(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False):
    """The Hessian of a scalar-valued function in argument(s) ``wrt``: a float for a float
    argument, shape ``x.shape + x.shape`` for an array (an (n, n) matrix for a vector), a tuple
    of tuples of blocks ``H[i][j]`` (shape ``x_i.shape + x_j.shape``) for a tuple ``wrt``. One
    compiled call: a loop over basis vectors e_k around H e_k, forward mode over the gradient.

    >>> import numpy as np, srcgrad
    >>> def quadratic(x):
    ...     return x[0] * x[0] * x[1]
    >>> srcgrad.hessian(quadratic)(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    return _make("hessian", fun, wrt=wrt, backend=backend, boundscheck=boundscheck, cache=cache)


def jacobian(fun=None, *, wrt=0, mode="auto", backend=None, boundscheck=True, cache=False):
    """The Jacobian of a function returning a float or a float array, in argument(s) ``wrt``:
    shape ``out.shape + x.shape`` (a tuple of them for a tuple ``wrt``). ``mode="fwd"`` builds
    it by columns (one jvp per input element), ``"rev"`` by rows (one vjp per output element),
    ``"auto"`` picks forward mode at run time where the inputs have no more elements than the
    output (called directly, it runs the function once per new set of argument shapes to learn
    the output's size, and compiles only the mode it picks). One compiled call: the loop over
    basis vectors is inside the native code.

    >>> import numpy as np, srcgrad
    >>> def scaled(x):
    ...     return np.array([2.0, 3.0]) * x
    >>> srcgrad.jacobian(scaled)(np.ones(2))
    array([[2., 0.],
           [0., 3.]])
    """
    if mode not in ("auto", "fwd", "rev"):
        raise ValueError(f"mode must be 'auto', 'fwd' or 'rev', got {mode!r}")
    return _make("jacobian", fun, wrt=wrt, mode=mode, backend=backend, boundscheck=boundscheck, cache=cache)


def jacfwd(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False):
    """``jacobian(fun, mode="fwd")``: by columns, forward mode (few inputs, many outputs)."""
    return jacobian(fun, wrt=wrt, mode="fwd", backend=backend, boundscheck=boundscheck, cache=cache)


def jacrev(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False):
    """``jacobian(fun, mode="rev")``: by rows, reverse mode (many inputs, few outputs)."""
    return jacobian(fun, wrt=wrt, mode="rev", backend=backend, boundscheck=boundscheck, cache=cache)


def hvp(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False):
    """The Hessian-vector product of a scalar-valued function: ``hvp(f)(*args, v)`` is ``H v``
    (like ``args[wrt]``; for a tuple ``wrt``, ``v`` is a tuple of directions and so is the
    result), forward mode over the gradient, without forming H: about the cost of 2-3 gradients.

    >>> import numpy as np, srcgrad
    >>> def cubic(x):
    ...     return np.sum(x ** 3)
    >>> srcgrad.hvp(cubic)(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    return _make("hvp", fun, wrt=wrt, backend=backend, boundscheck=boundscheck, cache=cache)


def jit(fun=None, *, backend=None, boundscheck=True, cache=False):
    """The function compiled (forward only); same results as calling it directly.
    ``boundscheck=False`` trusts array indices (llvm backend): faster, and undefined when wrong.

    >>> import srcgrad
    >>> def power(x, n):
    ...     p = 1.0
    ...     for _ in range(n):
    ...         p *= x
    ...     return p
    >>> srcgrad.jit(power)(2.0, 10)
    1024.0
    """
    return _make("jit", fun, backend=backend, boundscheck=boundscheck, cache=cache)


def vectorize(fun=None, *, target="cpu", backend=None, boundscheck=True, cache=False):
    """``fun``, a function of numbers, mapped elementwise over array arguments with numpy's
    broadcasting: one compiled loop, one array per result (a tuple of them for a function, or a
    gradient, returning several). Numbers are passed to every call as they are. Results are
    float64 arrays (float32 where every array argument is float32), int64 or bool for int and
    bool results. ``fun`` may be a compiled object: ``vectorize(grad(f, wrt=(0, 1)))`` gives the
    gradient at every point, and a vectorized function is one too (``.ir``, ``.llvm_ir``,
    ``jit(vectorize(f))``, ``vjp(vectorize(f), x)``).

    >>> import numpy as np, srcgrad
    >>> def bump(x, y):
    ...     return x * y + 1.0
    >>> srcgrad.vectorize(srcgrad.grad(bump, wrt=(0, 1)))(np.array([1.0, 2.0]), 3.0)
    (array([3., 3.]), array([1., 2.]))
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if target == "cuda" and backend == "python":
        raise ValueError("vectorize(target='cuda') compiles through LLVM; backend='python' runs on the CPU only")
    return _make("vectorize", fun, backend=backend, boundscheck=boundscheck, cache=cache, target=target)


def vjp(fun, *primals, backend=None, checkpoint=None):
    """``(outputs, pullback)``: ``pullback(cotangent)`` gives one vector-Jacobian product per
    argument (None for integer and bool arguments).

    >>> import srcgrad
    >>> def product(x, y):
    ...     return x * y
    >>> y, pullback = srcgrad.vjp(product, 1.0, 2.0)
    >>> y, pullback(1.0)
    (2.0, (2.0, 1.0))
    """
    Policy.of(checkpoint, "vjp")
    return pullback_at(compiled_for(fun, "vjp", backend, checkpoint), primals)


def jvp(fun, primals, tangents, backend=None):
    """``(outputs, output tangents)``: forward-mode derivative of ``fun`` at ``primals`` in the
    direction ``tangents`` (one per argument; those of integer arguments are ignored).

    >>> import srcgrad
    >>> def product(x, y):
    ...     return x * y
    >>> srcgrad.jvp(product, (1.0, 2.0), (1.0, 0.0))
    (2.0, 2.0)
    """
    return tangents_at(compiled_for(fun, "jvp", backend), primals, tangents)


def show(obj, stage="adjoint", locs=False):
    """Print one stage of a compiled function: ``"ir"``, ``"adjoint"``, ``"llvm"`` or ``"ptx"``
    (a ``vectorize(f, target="cuda")``'s kernel), or ``"stages"``: the compile time of each; with
    ``locs``, the IR shows the user's source line above the ops made from it.

    >>> import srcgrad
    >>> def cube(x):
    ...     return x * x * x
    >>> df = srcgrad.grad(cube)
    >>> df(2.0)
    12.0
    >>> srcgrad.show(df, "adjoint")       # doctest: +ELLIPSIS
    from srcgrad.runtime import np
    <BLANKLINE>
    <BLANKLINE>
    def cube_grad(x):
    ...
    """
    if stage == "ir":
        print(obj.ir_text(locs))
    elif stage == "adjoint":
        print(obj.adjoint_source)
    elif stage == "llvm":
        print(obj.llvm_ir)
    elif stage == "ptx":
        print(obj.ptx)
    elif stage == "stages":
        print(obj.stages)
    else:
        raise ValueError(f"stage must be 'ir', 'adjoint', 'llvm', 'ptx' or 'stages', got {stage!r}")


__all__ = ["grad", "value_and_grad", "jit", "vjp", "jvp", "hessian", "hvp", "jacobian", "jacfwd", "jacrev", "show",
           "vectorize", "Compiled"]
