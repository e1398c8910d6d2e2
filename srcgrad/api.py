"""``grad``, ``value_and_grad``, ``jit`` and ``show``: the compiler's front door. Each wires the
stages — frontend (source → IR), ad (adjoint IR), backend (IR → runnable code) — and caches
one specialisation per argument signature (dtype and rank, not shape).

Example:
    >>> import math, srcgrad
    >>> @srcgrad.grad
    ... def f(x):
    ...     return math.sin(x) * x
    >>> round(f(1.0), 6)
    1.381773
"""
import functools
import inspect
import threading
import weakref

import numpy as np

from .ad.checkpoint import Policy
from .ad.compose import hessian_function, hvp_function, jacobian_function, with_value
from .ad.forward import forward
from .ad.reverse import reverse
from .backends import llvm as llvm_backend      # the default backend: loaded with srcgrad
from .backends import python as python_backend
from .bridge import call_on_tensors, has_tensor
from .errors import TypingError, UnsupportedSyntaxError
from .frontend.lower import lower, source_of
from .frontend.numpy_shapes import NeedsUnitAxes
from .ir.core import Builder, Function, walk_ops
from .ir.inline import inline
from .ir.types import F64, I64, ArrayType, TapeType, UndoLogType, is_float, type_of
from .ir.passes import optimize
from .ir.printer import format_function
from .ir.vectorize import element_type, vectorize_function
from .ir.verifier import verify
from .pickling import reduce_compiled
from .trees import Tree, flatten, leaves_of

BACKENDS = ("python", "llvm")      # the default (None) is llvm, falling back to python where it must


def _check_backend(backend):
    if backend is None:
        return "auto"        # llvm, or python for what the llvm backend does not handle yet
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    return backend


class _Specialisation:
    def __init__(self, ir, code_ir, source, run, llvm_ir=None, ptx=None):
        self.ir, self.code_ir, self.source, self.run, self.llvm_ir = ir, code_ir, source, run, llvm_ir
        self.ptx = ptx
        self.result_tree = ir.result_tree

    def results(self, out):
        """The compiled code's flat results as the function returns them (containers rebuilt)."""
        if self.result_tree is None:
            return out
        return self.result_tree.rebuild(list(out) if isinstance(out, tuple) else [out])


class Compiled:
    """A compiled function: call it like the original; ``.ir`` and ``.adjoint_source`` show the
    stages of its most recent specialisation."""

    def __init__(self, fun, kind, wrt=0, backend=None, boundscheck=True, cache=False, checkpoint=None, target="cpu"):
        # not updated=("__dict__",): a compiled ``fun`` (grad of grad) keeps its own state
        functools.update_wrapper(self, fun, updated=())
        self.target = target
        self.checkpoint = Policy.of(checkpoint, kind)
        self.fun, self.kind, self.backend = fun, kind, _check_backend(backend)
        self.boundscheck = bool(boundscheck)
        self.cache = bool(cache)
        self._sig = inspect.signature(fun)
        self._params = list(self._sig.parameters)
        self._variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self._sig.parameters.values())
        self.wrt = self._resolve_wrt(wrt) if kind not in ("jit", "vectorize") else None
        self._cache = {}
        self._by_unit_axes = False      # set when the function squeezes an argument without axis=
        self._last = None
        self._lock = threading.Lock()
        try:
            inner = _original(fun)
            source_of(getattr(inner, "fun", inner))     # read now: editing the file later changes nothing
        except UnsupportedSyntaxError:
            pass                                       # said again, with the line, at the first call

    def _resolve_wrt(self, wrt):
        single = not isinstance(wrt, (tuple, list))
        items = [wrt] if single else list(wrt)
        out = []
        for w in items:
            if isinstance(w, str):
                if w not in self._params:
                    raise ValueError(f"wrt={w!r}: {self.fun.__name__} has no argument named {w!r} "
                                     f"(its arguments: {', '.join(self._params)})")
                out.append(self._params.index(w))
            elif isinstance(w, int) and -len(self._params) <= w < len(self._params):
                out.append(w % len(self._params))
            else:
                raise ValueError(f"wrt={w!r} is not an argument index or name of {self.fun.__name__}")
        self._single = single
        return out

    def _signature(self, args):
        """The compiler type of each argument; a container's is a Tree of its leaves' types (the
        container's structure is part of the signature)."""
        return tuple(self._type_of(a, self._params[k] if k < len(self._params) else f"#{k}")
                     for k, a in enumerate(args))

    def _type_of(self, a, name):
        if not isinstance(a, _CONTAINERS):          # the common case, first: a number or an array
            return self._leaf_type(a, name)
        tree = flatten(a)
        parts = tree.keys if tree.keys is not None else range(len(tree))
        return Tree(tree.kind, [self._type_of(v, f"{name}[{k!r}]") for k, v in zip(parts, a.values() if
                                isinstance(a, dict) else a)], tree.keys)

    def _leaf_type(self, a, name):
        t = type_of(a)
        if t is None and self.target == "cuda":
            t = _device_array_type(a)
        if t is None:
            raise TypingError(f"argument '{name}' of {self.fun.__name__} is a {type(a).__name__}"
                              + (f" of dtype {a.dtype}" if isinstance(a, np.ndarray) else "")
                              + "; compiled functions take float, int and bool numbers, numpy arrays of "
                                "float64, float32, int64 or bool, and tuples, lists, dicts and namedtuples of them")
        if t is I64 and not -2**63 <= int(a) < 2**63:
            raise OverflowError(f"argument '{name}' of {self.fun.__name__} is {a}, beyond the 64-bit integers "
                                "compiled code computes with (-2**63 to 2**63 - 1)")
        return t

    def _specialise(self, key):
        types, units = key if self._by_unit_axes else (key, None)
        if self.kind == "vectorize":
            return self._specialise_vectorize(types)
        if isinstance(self.fun, Compiled):
            ir = self.fun.as_primal(types)          # grad(grad(f)), jvp(grad(f)), jit(grad(f)): its IR
        else:
            ir = verify(optimize(verify(lower(self.fun, list(types), unit_axes=units))))
            if self.kind in ("grad", "value_and_grad", "hessian", "hvp"):
                ir = _number_result(ir)
        code_ir = ir
        result_tree = ir.result_tree
        if self.kind in ("grad", "value_and_grad"):
            code_ir = verify(optimize(verify(reverse(ir, self._wrt_leaves(types),
                                                     with_value=self.kind == "value_and_grad",
                                                     checkpoint=self.checkpoint)), keep_errors=False))
        elif self.kind in ("hvp", "hessian"):
            wrt = self._wrt_leaves(types, containers=False)
            gradient = verify(optimize(verify(reverse(ir, wrt, with_value=False)), keep_errors=False))
            code_ir = verify(hvp_function(gradient, wrt))
            if self.kind == "hessian":
                hvp = verify(optimize(code_ir, keep_errors=False))
                code_ir = verify(hessian_function(ir, hvp, wrt, self._single))
                result_tree = code_ir.result_tree
            code_ir = verify(optimize(code_ir, keep_errors=False))
        elif self.kind == "jacobian":
            results = ir.result_types
            if len(results) != 1 or not is_float(results[0]):
                raise TypingError(f"jacobian needs a function returning one float or float array; "
                                  f"{self.fun.__name__} returns {', '.join(str(t) for t in results)}")
            code_ir = jacobian_function(ir, self._wrt_leaves(types, containers=False), self.mode, self._single)
            result_tree = code_ir.result_tree
            code_ir = verify(optimize(verify(code_ir), keep_errors=False))
        elif self.kind == "vjp":
            code_ir = verify(optimize(verify(reverse(ir, _float_params(types), cotangents=True,
                                                     checkpoint=self.checkpoint)), keep_errors=False))
        elif self.kind == "jvp":
            code_ir = verify(optimize(verify(forward(ir)), keep_errors=False))
        elif self.kind == "vjp_jvp":
            # the eager bridge's second derivative (bridge.py): forward mode over the vjp, with
            # tangents for the float arguments: (args, cotangents, w) -> (f, J^T ct, J w, H_ct w)
            floats = _float_params(types)
            pullback = verify(optimize(verify(reverse(ir, floats, cotangents=True)), keep_errors=False))
            code_ir = verify(optimize(verify(forward(pullback, floats)), keep_errors=False))
        return self._build(ir, code_ir, result_tree)

    def _specialise_vectorize(self, types):
        """The function of numbers compiled for the arguments' element types, in a loop over
        their broadcast shape (ir/vectorize.py)."""
        for k, t in enumerate(types):
            if isinstance(t, Tree):
                raise TypingError(f"vectorize maps a function of numbers over arrays; argument "
                                  f"'{self._params[k]}' is {t.words()}")
        elements = [element_type(t) for t in types]
        if isinstance(self.fun, Compiled):
            ir = self.fun.as_primal(elements)       # vectorize(grad(f)): the gradient, per element
            if self.target == "cuda" and _allocates(ir) and self.fun.kind in ("grad", "value_and_grad"):
                ir = self.fun.forward_gradient(elements)     # a kernel has no tapes: forward mode, per input
        else:
            ir = verify(optimize(verify(lower(self.fun, elements))))
        if self.target == "cuda":
            from .backends.cuda.launch import Kernel, current_device
            made = _first_allocation(ir)
            if made is not None:
                raise UnsupportedSyntaxError(
                    f"vectorize({self.fun.__name__}, target='cuda'): a GPU kernel maps a function of numbers and "
                    f"cannot make arrays, tapes or logs per element; this line makes one ({made.prim})", made.loc,
                    hint="compute with numbers only there, or use target='cpu'")
            kernel = Kernel(ir, list(types), self.boundscheck, cache=self.cache)
            name, params = self.fun.__name__, list(self._params)
            spec = _Specialisation(ir, ir, python_backend.generate(ir)[0],
                                   lambda *args: kernel.run(current_device(), args, name, params),
                                   kernel.llvm_ir, kernel.ptx)
            return spec
        code_ir = verify(optimize(verify(vectorize_function(ir, list(types), self.fun.__name__)), keep_errors=False))
        return self._build(ir, code_ir, ir.result_tree)

    def _build(self, ir, code_ir, result_tree):
        """The runnable specialisation of ``code_ir`` on this object's backend."""
        source, externals = python_backend.generate(code_ir)
        spec = None
        if self.backend in ("llvm", "auto"):
            try:
                run, llvm_ir = llvm_backend.compile_function(code_ir, self.boundscheck, self.cache)
                spec = _Specialisation(ir, code_ir, source, run, llvm_ir)
            except NotImplementedError:
                if self.backend == "llvm":
                    raise
                # the default: what the llvm backend does not handle yet (a float np.arange, say)
                # runs on the python backend (docs/compiler.md)
        if spec is None:
            spec = _Specialisation(ir, code_ir, source, python_backend.compile_function(code_ir, source, externals))
        spec.result_tree = result_tree
        return spec

    def _wrt_leaves(self, types, containers=True):
        """The leaf positions of the ``wrt`` arguments: a container's float leaves (its other
        leaves get no derivative); a plain int argument, or a container of no float, is an error."""
        for k in self.wrt:
            if isinstance(types[k], Tree) and not containers:
                raise TypeError(f"{self.kind} with respect to a container argument ('{self._params[k]}') is not "
                                "supported yet; pass its leaves as separate arguments")
            if isinstance(types[k], Tree) and not _leaf_positions(types, k, float_only=True):
                raise TypingError(f"cannot take the gradient with respect to argument '{self._params[k]}' of "
                                  f"{self.fun.__name__}: {types[k].words()} holding no float number or array")
        return [i for k in self.wrt for i in _leaf_positions(types, k, float_only=isinstance(types[k], Tree))]

    def as_primal(self, types):
        """The code this object runs for arguments of compiler types ``types``, as an IR Function
        that another transformation takes as its primal (grad of grad): its results come in the
        container this object returns (``result_tree``). The Function is shared with this
        object's cache: transformations build new Functions, never change the one they read."""
        if self.kind in ("vjp", "jvp", "hvp", "vjp_jvp"):
            raise TypeError(f"{self!r} takes cotangents, tangents or a direction after its arguments; transform "
                            "the function itself (jvp(grad(f)), grad(f)) instead")
        if self.target == "cuda":
            raise TypeError(f"vectorize({self.fun.__name__}, target='cuda') is a GPU kernel: it is called, not "
                            "transformed or compiled into other code; transform the function of numbers and "
                            "vectorize the result (vectorize(grad(f), target='cuda'))")
        key = tuple(types)
        if self._by_unit_axes:
            raise TypeError(f"{self.fun.__name__} squeezes an argument without axis=; it cannot be transformed "
                            "again (pass axis= to squeeze)")
        spec = self._cache.get(key)
        if spec is None:
            with self._lock:
                spec = self._cache.get(key) or self._specialise(key)
                self._cache[key] = spec
        fn = spec.code_ir
        if self.kind in ("grad", "value_and_grad") and fn.result_tree is None:
            for k in self.wrt:
                if isinstance(types[k], Tree):
                    raise TypeError(f"a gradient with respect to a container argument ('{self._params[k]}') "
                                    "cannot be transformed again yet; pass its leaves as separate arguments")
            grads = None if self._single else Tree(tuple, [None] * len(self.wrt))
            fn.result_tree = grads if self.kind == "grad" else Tree(tuple, [spec.result_tree, grads])
        return fn

    def forward_gradient(self, types):
        """This gradient (or value and gradient) of a function of numbers for arguments of
        ``types``, computed by forward mode, one tangent per ``wrt`` input (ad/compose.py's
        jacobian by columns): no tape, so no memory beyond the registers, as a GPU thread
        needs. Its results come as ``as_primal``'s do."""
        reverse_mode = self.as_primal(types)
        primal = self._cache[tuple(types)].ir
        wrt = self._wrt_leaves(types, containers=False)
        fn = jacobian_function(primal, wrt, "fwd", self._single)
        if self.kind == "value_and_grad":
            fn = with_value(primal, fn)
        fn = verify(optimize(verify(fn), keep_errors=False))
        fn.result_tree = reverse_mode.result_tree
        return fn

    def __call__(self, *args, **kwargs):
        if has_tensor(args, kwargs):
            return call_on_tensors(self, args, kwargs)      # the eager bridge (bridge.py)
        if self.kind in ("vjp", "jvp"):
            return self.call_with_extra(args[:len(self._params)], args[len(self._params):])
        if self.kind == "hvp":
            return self._call_hvp(args, kwargs)
        return self._call(self._bind(args, kwargs))

    def _call_hvp(self, args, kwargs):
        """hvp(f)(*args, v): one direction per ``wrt`` argument (a tuple of them for a tuple ``wrt``)."""
        if kwargs or len(args) != len(self._params) + 1:
            raise TypeError(f"hvp of {self.fun.__name__} takes its {len(self._params)} arguments, then the "
                            f"direction v ({len(args)} given)")
        args, v = args[:-1], args[-1]
        vs = (v,) if self._single else tuple(v)
        if len(vs) != len(self.wrt):
            raise TypeError(f"hvp of {self.fun.__name__}: {len(self.wrt)} directions for wrt={tuple(self.wrt)}, "
                            f"got {len(vs)}")
        vs = [_like(d, args[k]) for d, k in zip(vs, self.wrt)]
        out = self.call_with_extra(args, vs)
        out = out if isinstance(out, tuple) else (out,)
        hv = [_like(h, args[k]) for h, k in zip(out, self.wrt)]
        return hv[0] if self._single else tuple(hv)

    def _bind(self, args, kwargs):
        """The arguments in parameter order, as Python binds them: by position, by keyword, else
        the default (each default specialises like a passed argument of its type)."""
        if not kwargs and len(args) == len(self._params) and not self._variadic:
            return args
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.fun.__name__}(): {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments[p] for p in self._params)

    def _specialisation_for(self, args):
        """The compiled code for these arguments' signature, compiled once (also across threads)."""
        if len(args) != len(self._params):
            raise TypeError(f"{self.fun.__name__}() takes {len(self._params)} arguments but {len(args)} were given")
        key = self._signature(args)
        if self._by_unit_axes:
            key = (key, _unit_axes(args))
        spec = self._cache.get(key)
        if spec is None:
            with self._lock:
                spec = self._cache.get(key)
                if spec is None:
                    try:
                        spec = self._cache[key] = self._specialise(key)
                    except NeedsUnitAxes:
                        if self._by_unit_axes:
                            raise
                        # x.squeeze() of an argument: its rank depends on which axes have size 1,
                        # so from now on they are part of the specialisation key
                        self._by_unit_axes = True
                        self._cache.clear()
                        key = (key, _unit_axes(args))
                        spec = self._cache[key] = self._specialise(key)
        self._last = spec
        return spec

    def call_with_extra(self, args, extra):
        """vjp/jvp: specialise on ``args``; ``extra`` (cotangents or tangents, flat) follow their leaves."""
        return self._specialisation_for(args).run(*_leaves(args), *extra)

    def _call(self, args):
        spec = self._specialisation_for(args)
        if self.kind == "vectorize" and self.target == "cpu":     # the cuda launcher checks, for device arrays too
            _broadcast_check(self.fun.__name__, self._params, args)
        out = spec.run(*_leaves(args))
        if self.kind in ("jit", "hessian", "jacobian", "vectorize"):
            return spec.results(out)
        out = out if isinstance(out, tuple) else (out,)
        if self.kind == "grad":
            value, grads = None, list(out)
        else:
            value, grads = out[0], list(out[1:])
        grads = iter(grads)
        per_arg = [_gradient_like(args[i], grads) for i in self.wrt]
        g = per_arg[0] if self._single else tuple(per_arg)
        return (value, g) if self.kind == "value_and_grad" else g

    def _spec(self):
        if self._last is None:
            raise RuntimeError(f"{self.fun.__name__} is compiled for the argument types of its first call; call it "
                               "once before asking for .ir or .adjoint_source")
        return self._last

    @property
    def ir(self):
        """The SSA IR as text: the primal function, then (for gradients) the adjoint."""
        return self.ir_text()

    def ir_text(self, locs=False):
        """``.ir``; with ``locs``, each op group below a comment with the user's source line."""
        s = self._spec()
        if s.code_ir is s.ir:
            return format_function(s.ir, locs)
        return f"{format_function(s.ir, locs)}\n\n{format_function(s.code_ir, locs)}"

    @property
    def adjoint_source(self):
        """The generated code as readable Python source."""
        return self._spec().source

    @property
    def ptx(self):
        """The PTX of the kernel (``vectorize(..., target="cuda")``), for this process's GPU
        (sm_90 where there is none)."""
        s = self._spec()
        if s.ptx is None:
            raise RuntimeError(f"{self.fun.__name__} is compiled for the CPU; vectorize(f, target='cuda') makes PTX")
        return s.ptx

    @property
    def llvm_ir(self):
        """The optimised LLVM IR (backend="llvm")."""
        s = self._spec()
        if s.llvm_ir is None:
            raise RuntimeError(f"{self.fun.__name__} was compiled with backend={self.backend!r}; pass "
                               "backend='llvm' for LLVM IR")
        return s.llvm_ir

    def __repr__(self):
        return f"<srcgrad.{self.kind} of {self.fun.__qualname__}>"

    def __reduce__(self):
        """Pickles by reference or by value, never compiled code (srcgrad/pickling.py)."""
        return reduce_compiled(self)


_CONTAINERS = (tuple, list, dict)      # namedtuples are tuples


def _number_result(fn):
    """``fn`` itself, or, where its one result is a 0-d float array (``x * x`` of a 0-d array
    argument), ``fn`` returning that array's number: a gradient's function returns one float,
    and numpy's own arithmetic on 0-d arrays gives numbers."""
    ret = fn.body.terminator
    if len(ret.operands) != 1 or ret.operands[0].type != ArrayType(F64, 0):
        return fn
    out = Function(fn.name, [(p.name, p.type) for p in fn.params], fn.loc)
    with Builder(out.body, fn.loc) as b:
        (r,) = inline(fn, list(out.params))
        b.ret([b.emit("index", [r], {"wrap": True})])
    return verify(optimize(verify(out)))


def _first_allocation(fn):
    """The first op of an IR function that makes an array, a tape or an undo log (memory a GPU
    thread lacks), or None."""
    return next((op for op in walk_ops(fn.body)
                 if any(isinstance(r.type, (ArrayType, TapeType, UndoLogType)) for r in op.results)), None)


def _allocates(fn):
    return _first_allocation(fn) is not None


def _device_array_type(a):
    """The compiler type of a device array (``__cuda_array_interface__``), or None."""
    from .backends.cuda.launch import device_array_type
    found = device_array_type(a)
    if found is None or found[0] is None:
        return None
    return ArrayType(found[0], len(found[1]))


def _broadcast_check(name, params, args):
    """numpy's error for arguments whose shapes do not broadcast, before any is read."""
    shapes = [np.shape(a) for a in args]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"vectorize({name}): the arguments' shapes cannot be broadcast together: "
                         + ", ".join(f"{p} {s}" for p, s in zip(params, shapes))) from None


def _original(fun):
    """The user's function under any number of compiled layers (grad(jit(f)) -> f)."""
    while isinstance(fun, Compiled):
        fun = fun.fun
    return fun


def _float_params(types):
    """The positions of the float leaves among all arguments' leaves."""
    leaves = [t for ty in types for t in (ty.leaves() if isinstance(ty, Tree) else [ty])]
    return [k for k, t in enumerate(leaves) if is_float(t)]


def _leaf_positions(types, k, float_only=False):
    """The positions of argument ``k``'s leaves among all arguments' leaves (its float ones)."""
    start = sum(len(t.leaves()) if isinstance(t, Tree) else 1 for t in types[:k])
    mine = types[k].leaves() if isinstance(types[k], Tree) else [types[k]]
    return [start + j for j, t in enumerate(mine) if not float_only or is_float(t)]


def _unit_axes(args):
    """For each leaf of the arguments, the axes of size 1 of an array (None for a number)."""
    return tuple(tuple(k for k, n in enumerate(a.shape) if n == 1) if isinstance(a, np.ndarray) else None
                 for a in _leaves(args))


def _leaves(args):
    """The arguments as the compiled code takes them: each container as its leaves."""
    if not any(isinstance(a, _CONTAINERS) for a in args):
        return args
    out = []
    for a in args:
        out += leaves_of(a)
    return out


def structure_of(obj):
    tree = flatten(obj)
    return tree.structure() if isinstance(tree, Tree) else None


def _gradient_like_or_none(arg, grads):
    """vjp: the gradient for ``arg`` like ``_gradient_like``, None for a number or array that is not a float."""
    if not isinstance(flatten(arg), Tree) and not is_float(type_of(arg)):
        return None
    return _gradient_like(arg, grads)


def _gradient_like(arg, grads):
    """The gradient for ``arg`` from the iterator of float leaves' gradients: a number or array
    like ``arg``, or a container like it (None where a leaf is not a float)."""
    if not isinstance(arg, _CONTAINERS):
        return _like(next(grads), arg)
    tree = flatten(arg)
    if not isinstance(tree, Tree):
        return _like(next(grads), arg)
    return tree.rebuild([_like(next(grads), leaf) if is_float(type_of(leaf)) else None for leaf in tree.leaves()])


def _like(g, arg):
    """A gradient has its argument's type: float for a number, an array of the same dtype for an array."""
    if isinstance(arg, np.ndarray):
        return np.asarray(g, dtype=arg.dtype).reshape(arg.shape)
    return float(g)


def _decorator(kind):
    def make(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False, checkpoint=None):
        Policy.of(checkpoint, kind)      # a bad checkpoint= is said now, not at the first call
        if fun is None:
            return lambda f: Compiled(f, kind, wrt, backend, boundscheck, cache, checkpoint)
        return Compiled(fun, kind, wrt, backend, boundscheck, cache, checkpoint)
    return make


grad = _decorator("grad")
grad.__doc__ = """The gradient of a scalar-valued function with respect to argument(s) ``wrt``.

    >>> import srcgrad
    >>> def f(x, y):                     # a def: srcgrad compiles a function's source, not a lambda
    ...     return x * x * y
    >>> df = srcgrad.grad(f, wrt=(0, 1))
    >>> df(3.0, 2.0)
    (12.0, 9.0)

``checkpoint=64`` (snapshots) or ``checkpoint="100MB"`` (a budget for them) reverses the
loops at the function's top level by binomial checkpointing: bounded memory, some
iterations recomputed, the same gradient bit for bit (ad/checkpoint.py).
"""
value_and_grad = _decorator("value_and_grad")
value_and_grad.__doc__ = "Like ``grad``, returning ``(value, gradient)``."


def hessian(fun=None, *, wrt=0, backend=None, boundscheck=True, cache=False):
    """The Hessian of a scalar-valued function in argument(s) ``wrt``: a float for a float
    argument, shape ``x.shape + x.shape`` for an array (an (n, n) matrix for a vector), a tuple
    of tuples of blocks ``H[i][j]`` (shape ``x_i.shape + x_j.shape``) for a tuple ``wrt``. One
    compiled call: a loop over basis vectors e_k around H e_k, forward mode over the gradient.

    >>> import numpy as np, srcgrad
    >>> A = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> def f(x):
    ...     return x @ A @ x
    >>> H = srcgrad.hessian(f)(np.ones(2))          # f(x) = x @ A @ x: H = A + A.T
    >>> H
    array([[2., 2.],
           [2., 6.]])
    """
    if fun is None:
        return lambda f: Compiled(f, "hessian", wrt, backend, boundscheck, cache)
    return Compiled(fun, "hessian", wrt, backend, boundscheck, cache)


def jacobian(fun=None, *, wrt=0, mode="auto", backend=None, boundscheck=True, cache=False):
    """The Jacobian of a function returning a float or a float array, in argument(s) ``wrt``:
    shape ``out.shape + x.shape`` (a tuple of them for a tuple ``wrt``). ``mode="fwd"`` builds
    it by columns (one jvp per input element), ``"rev"`` by rows (one vjp per output element),
    ``"auto"`` picks forward mode at run time where the inputs have no more elements than the
    output. One compiled call: the loop over basis vectors is inside the native code.

    >>> import numpy as np, srcgrad
    >>> def f(x):
    ...     return np.array([x[0] * x[1], np.sin(x[0]), 2.0 * x[1]])
    >>> J = srcgrad.jacobian(f)(np.array([1.0, 2.0]))         # f: R^n -> R^m, J: (m, n)
    >>> J.round(4)
    array([[2.    , 1.    ],
           [0.5403, 0.    ],
           [0.    , 2.    ]])
    """
    if mode not in ("auto", "fwd", "rev"):
        raise ValueError(f"mode must be 'auto', 'fwd' or 'rev', got {mode!r}")
    if fun is None:
        return lambda f: jacobian(f, wrt=wrt, mode=mode, backend=backend, boundscheck=boundscheck, cache=cache)
    compiled = Compiled(fun, "jacobian", wrt, backend, boundscheck, cache)
    compiled.mode = mode
    return compiled


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
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> Hv = srcgrad.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    >>> Hv
    array([6., 0.])
    """
    if fun is None:
        return lambda f: Compiled(f, "hvp", wrt, backend, boundscheck, cache)
    return Compiled(fun, "hvp", wrt, backend, boundscheck, cache)


def jit(fun=None, *, backend=None, boundscheck=True, cache=False):
    """The function compiled (forward only); same results as calling it directly.
    ``boundscheck=False`` trusts array indices (llvm backend): faster, and undefined when wrong."""
    if fun is None:
        return lambda f: Compiled(f, "jit", backend=backend, boundscheck=boundscheck, cache=cache)
    return Compiled(fun, "jit", backend=backend, boundscheck=boundscheck, cache=cache)


def vectorize(fun=None, *, target="cpu", backend=None, boundscheck=True, cache=False):
    """``fun``, a function of numbers, mapped elementwise over array arguments with numpy's
    broadcasting: one compiled loop, one array per result (a tuple of them for a function, or a
    gradient, returning several). Numbers are passed to every call as they are. Results are
    float64 arrays (float32 where every array argument is float32), int64 or bool for int and
    bool results. ``fun`` may be a compiled object: ``vectorize(grad(f, wrt=(0, 1)))`` gives the
    gradient at every point, and a vectorized function is one too (``.ir``, ``.llvm_ir``,
    ``jit(vectorize(f))``, ``vjp(vectorize(f), x)``).

    >>> import math, numpy as np, srcgrad
    >>> def f(x, y):
    ...     return math.sin(x) * y
    >>> xs, ys = np.zeros(3), np.arange(3.0)
    >>> dx, dy = srcgrad.vectorize(srcgrad.grad(f, wrt=(0, 1)))(xs, ys)     # xs, ys: arrays
    >>> dx, dy
    (array([0., 1., 2.]), array([0., 0., 0.]))
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if target == "cuda" and backend == "python":
        raise ValueError("vectorize(target='cuda') compiles through LLVM; backend='python' runs on the CPU only")
    if fun is None:
        return lambda f: vectorize(f, target=target, backend=backend, boundscheck=boundscheck, cache=cache)
    return Compiled(fun, "vectorize", backend=backend, boundscheck=boundscheck, cache=cache, target=target)


_compiled_cache = weakref.WeakKeyDictionary()


def _compiled(fun, kind, backend, checkpoint=None):
    per_fun = _compiled_cache.setdefault(fun, {})
    key = (kind, backend, checkpoint)
    if key not in per_fun:
        per_fun[key] = Compiled(fun, kind, backend=backend, checkpoint=checkpoint)
    return per_fun[key]


def vjp(fun, *primals, backend=None, checkpoint=None):
    """``(outputs, pullback)``: ``pullback(cotangent)`` gives one vector-Jacobian product per
    argument (None for integer and bool arguments).

    >>> import srcgrad
    >>> def f(x, y):
    ...     return x * y
    >>> y, pullback = srcgrad.vjp(f, 1.0, 2.0)
    >>> dx, dy = pullback(1.0)
    >>> y, dx, dy
    (2.0, 2.0, 1.0)
    """
    Policy.of(checkpoint, "vjp")
    compiled = _compiled(fun, "vjp", backend, checkpoint)
    forward_fn = _compiled(fun, "jit", backend)
    given = len(primals)
    primals = compiled._bind(primals, {})        # parameters not given take their defaults
    out = forward_fn(*primals)
    tree = flatten(out)
    outs = tree.leaves() if isinstance(tree, Tree) else [out]
    def pullback(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        ct_tree = flatten(ct)
        if isinstance(tree, Tree):
            if not isinstance(ct_tree, Tree) or ct_tree.structure() != tree.structure():
                raise TypeError(f"pullback takes a cotangent of the outputs' structure ({tree.words()}), got "
                                f"{ct_tree.words() if isinstance(ct_tree, Tree) else type(ct).__name__}")
            cts = ct_tree.leaves()
        else:
            if len(cotangents) != 1:
                raise TypeError(f"pullback takes one cotangent per output (1), got {len(cotangents)}")
            cts = [ct]
        cts = [_like(c, o) for c, o in zip(cts, outs)]
        res = compiled.call_with_extra(primals, cts)
        grads = iter(res[len(outs):])
        return tuple(_gradient_like_or_none(primals[k], grads) for k in range(given))

    return out, _Pullback(pullback, compiled)


class _Pullback:
    """The pullback of ``vjp``: call it with the output cotangent(s); ``.ir`` and
    ``.adjoint_source`` show the compiled vector-Jacobian product."""

    def __init__(self, fn, compiled):
        self._fn, self._compiled = fn, compiled

    def __call__(self, *cotangents):
        return self._fn(*cotangents)

    @property
    def ir(self):
        return self._compiled.ir

    def ir_text(self, locs=False):
        return self._compiled.ir_text(locs)

    @property
    def adjoint_source(self):
        return self._compiled.adjoint_source


def jvp(fun, primals, tangents, backend=None):
    """``(outputs, output tangents)``: forward-mode derivative of ``fun`` at ``primals`` in the
    direction ``tangents`` (one per argument; those of integer arguments are ignored).

    >>> import srcgrad
    >>> def f(x, y):
    ...     return x * y
    >>> y, ydot = srcgrad.jvp(f, (1.0, 2.0), (1.0, 0.0))
    >>> y, ydot
    (2.0, 2.0)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    compiled = _compiled(fun, "jvp", backend)
    given = len(primals)
    primals = compiled._bind(primals, {})        # parameters not given take their defaults, tangent 0
    tangents += tuple(np.zeros_like(p) if isinstance(p, np.ndarray) else 0.0 for p in primals[given:])
    for k, (p, t) in enumerate(zip(primals, tangents)):
        if structure_of(p) != structure_of(t):
            raise TypeError(f"jvp: the tangent of argument {k} has another structure than the argument")
    floats = _float_params(compiled._signature(primals))
    leaves, tan_leaves = _leaves(primals), _leaves(tangents)
    tans = [_like(tan_leaves[k], leaves[k]) for k in floats]
    res = compiled.call_with_extra(primals, tans)
    res = res if isinstance(res, tuple) else (res,)
    n = len(res) // 2
    outs, touts = res[:n], res[n:]
    touts = tuple(_like(t, o) for t, o in zip(touts, outs))
    tree = compiled._last.result_tree
    if tree is not None:
        return tree.rebuild(list(outs)), tree.rebuild(list(touts))
    return outs[0], touts[0]


def show(obj, stage="adjoint", locs=False):
    """Print one stage of a compiled function: ``"ir"``, ``"adjoint"``, ``"llvm"`` or ``"ptx"``
    (a ``vectorize(f, target="cuda")``'s kernel); with
    ``locs``, the IR shows the user's source line above the ops made from it.

    >>> import srcgrad
    >>> def f(x):
    ...     return x * x
    >>> df = srcgrad.grad(f)
    >>> df(3.0)                          # compiled for the types of its first call
    6.0
    >>> srcgrad.show(df, "ir", locs=True)
    func f(%x: f64) -> f64 {
      # line 2: return x * x
      %0 = mul %x, %x : f64
      return %0
    }
    <BLANKLINE>
    func f_grad(%x: f64) -> f64 {
      # line 2: return x * x
      %dx = add %x, %x : f64
      return %dx
    }
    """
    if stage == "ir":
        print(obj.ir_text(locs))
    elif stage == "adjoint":
        print(obj.adjoint_source)
    elif stage == "llvm":
        print(obj.llvm_ir)
    elif stage == "ptx":
        print(obj.ptx)
    else:
        raise ValueError(f"stage must be 'ir', 'adjoint', 'llvm' or 'ptx', got {stage!r}")


__all__ = ["grad", "value_and_grad", "jit", "vjp", "jvp", "hessian", "hvp", "jacobian", "jacfwd", "jacrev", "show",
           "Compiled"]
