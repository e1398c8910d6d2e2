"""``Compiled``: what every transformation returns. It keeps one specialisation per argument
signature (dtype and rank, not shape), compiled once across threads, binds arguments as
Python does, and shows each stage (``.ir``, ``.adjoint_source``, ``.llvm_ir``, ``.ptx``). What
a kind of transformation builds and returns is its record in srcgrad/transforms.py.

Example:
    >>> import math, srcgrad
    >>> def f(x):
    ...     return math.sin(x) * x
    >>> g = srcgrad.grad(f)
    >>> round(g(1.0), 6), g.backend
    (1.381773, 'llvm')
"""
import functools
import inspect
import threading
import time

import numpy as np

from . import arguments
from .ad.checkpoint import Policy
from .ad.compose import jacobian_function, with_value
from .arguments import CONTAINERS, leaves, unit_axes
from .backends import llvm as llvm_backend      # the default backend: loaded with srcgrad
from .backends import python as python_backend
from .bridge import call_on_tensors, has_tensor
from .errors import TypingError, UnsupportedSyntaxError
from .frontend.lower import lower, source_of
from .frontend.numpy_shapes import NeedsUnitAxes
from .frontend.reads import recording, unchanged
from .ir.core import Builder, Function
from .ir.inline import inline
from .ir.printer import format_function
from .ir.types import F64, I64, ArrayType, type_of
from .pickling import reduce_compiled
from .pipeline import pipeline
from .reuse import shared
from .specialisation import Specialisation
from .transforms import TRANSFORMS
from .trees import Tree, flatten

BACKENDS = ("auto", "python", "llvm")      # auto (the default): llvm, falling back to python where it must


def _check_backend(backend):
    if backend is None:
        return "auto"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    return backend


class Compiled:
    """A compiled function: call it like the original; ``.ir`` and ``.adjoint_source`` show the
    stages of its most recent specialisation, ``.backend`` the backend it ran on."""

    def __init__(self, fun, kind, wrt=0, backend=None, boundscheck=True, cache=False, checkpoint=None, target="cpu",
                 mode="auto"):
        # not updated=("__dict__",): a compiled ``fun`` (grad of grad) keeps its own state
        functools.update_wrapper(self, fun, updated=())
        self.transform = TRANSFORMS[kind]
        self.target, self.mode = target, mode
        self.checkpoint = Policy.of(checkpoint, kind)
        self.fun, self.kind, self.requested_backend = fun, kind, _check_backend(backend)
        self.boundscheck = bool(boundscheck)
        self.cache = bool(cache)
        self._sig = inspect.signature(fun)
        self.params = list(self._sig.parameters)
        self._variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self._sig.parameters.values())
        self._wrt_given = wrt
        self.wrt = self._resolve_wrt(wrt) if self.transform.has_wrt else None
        self._cache = {}
        self._by_unit_axes = False      # set when the function squeezes an argument without axis=
        self._last = None
        self._timings = {}
        self.chosen_modes = {}          # a jacobian with mode="auto": call shapes -> "fwd" or "rev"
        self._modes = {}
        self._lock = threading.Lock()
        self._reads = {}                # what the compiles read outside the function (frontend/reads.py)
        self._code = getattr(original(fun), "__code__", None)
        try:
            inner = original(fun)
            source_of(getattr(inner, "fun", inner))     # read now: editing the file later changes nothing
        except UnsupportedSyntaxError:
            pass                                       # said again, with the line, at the first call

    @property
    def backend(self):
        """The backend the most recent call ran on ("llvm", or "python" where the default fell
        back from llvm: docs/compiler.md), or the one asked for before the first call."""
        return self._last.backend if self._last is not None else self.requested_backend

    def _resolve_wrt(self, wrt):
        single = not isinstance(wrt, (tuple, list))
        items = [wrt] if single else list(wrt)
        out = []
        for w in items:
            if isinstance(w, str):
                if w not in self.params:
                    raise ValueError(f"wrt={w!r}: {self.fun.__name__} has no argument named {w!r} "
                                     f"(its arguments: {', '.join(self.params)})")
                out.append(self.params.index(w))
            elif isinstance(w, int) and -len(self.params) <= w < len(self.params):
                out.append(w % len(self.params))
            else:
                raise ValueError(f"wrt={w!r} is not an argument index or name of {self.fun.__name__}")
        self.single = single
        return out

    # ------------------------------------------------------------------ signatures and specialisations
    def signature(self, args):
        """The compiler type of each argument; a container's is a Tree of its leaves' types (the
        container's structure is part of the signature)."""
        return tuple(self._type_of(a, self.params[k] if k < len(self.params) else f"#{k}")
                     for k, a in enumerate(args))

    def _type_of(self, a, name):
        if not isinstance(a, CONTAINERS):          # the common case, first: a number or an array
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

    def specialisation_for(self, args):
        """The compiled code for these arguments' signature, compiled once (also across threads)."""
        if len(args) != len(self.params):
            raise TypeError(f"{self.fun.__name__}() takes {len(self.params)} arguments but {len(args)} were given")
        key = self.signature(args)
        if self._by_unit_axes:
            key = (key, unit_axes(args))
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
                        key = (key, unit_axes(args))
                        spec = self._cache[key] = self._specialise(key)
        self._last = spec
        return spec

    def _specialise(self, key):
        types, units = key if self._by_unit_axes else (key, None)
        self._timings = {}          # the stages of this specialisation, filled as they run (.stages)
        with recording() as reads:  # (a custom_vjp's derivative is lowered after the frontend)
            spec = self.transform.specialise(self, types, units)
        self._reads.update(reads)
        return spec

    def primal_ir(self, types, units=None):
        """The IR of the function this object transforms, for arguments of ``types``: lowered from
        the source, or the code of a compiled function (grad of grad: its derivative's IR)."""
        if isinstance(self.fun, Compiled):
            return self.fun.as_primal(types)
        clock = time.perf_counter()
        ir = pipeline(lower(self.fun, list(types), unit_axes=units))
        self._timings["frontend"] = time.perf_counter() - clock
        return _number_result(ir) if self.transform.number_result else ir

    def build(self, ir, code_ir, result_tree):
        """The runnable specialisation of ``code_ir``: on llvm, or (the default, "auto") on the
        python backend where llvm does not handle an op yet (``.backend`` then says "python").
        The native code is built at its first run, the Python source at its first use
        (Specialisation)."""
        timings = self._timings
        generated = []

        def python_source():
            if not generated:
                clock = time.perf_counter()
                generated.extend(python_backend.generate(code_ir))
                timings["python source"] = time.perf_counter() - clock
            return generated

        def compile():
            if self.requested_backend in ("llvm", "auto"):
                try:
                    run, llvm_ir, later = llvm_backend.compile_tiers(code_ir, self.boundscheck, self.cache,
                                                                     timings=timings)
                    return run, "llvm", llvm_ir, later
                except NotImplementedError:
                    if self.requested_backend == "llvm":
                        raise
            return python_backend.compile_function(code_ir, *python_source()), "python", None, None
        spec = Specialisation(ir, code_ir, lambda: python_source()[0], compile=compile)
        spec.result_tree = result_tree
        spec.timings = timings
        return spec

    def wrt_leaves(self, types, containers=True):
        """The leaf positions of the ``wrt`` arguments: a container's float leaves (its other
        leaves get no derivative); a plain int argument, or a container of no float, is an error."""
        for k in self.wrt:
            if isinstance(types[k], Tree) and not containers:
                raise TypeError(f"{self.kind} with respect to a container argument ('{self.params[k]}') is not "
                                "supported yet; pass its leaves as separate arguments")
            if isinstance(types[k], Tree) and not arguments.leaf_positions(types, k, float_only=True):
                raise TypingError(f"cannot take the gradient with respect to argument '{self.params[k]}' of "
                                  f"{self.fun.__name__}: {types[k].words()} holding no float number or array")
        return [i for k in self.wrt for i in arguments.leaf_positions(types, k, float_only=isinstance(types[k], Tree))]

    def as_primal(self, types):
        """The code this object runs for arguments of compiler types ``types``, as an IR Function
        that another transformation takes as its primal (grad of grad): its results come in the
        container this object returns (``result_tree``). The Function is shared with this
        object's cache: transformations build new Functions, never change the one they read."""
        if self.transform.takes_extra:
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
        spec = self.specialisation_of(key)
        fn = spec.code_ir
        if fn.result_tree is None:
            self.transform.primal_results(self, types, spec)
        return fn

    def specialisation_of(self, types):
        """The specialisation for argument types ``types`` (made now if it is not yet)."""
        key = tuple(types)
        spec = self._cache.get(key)
        if spec is None:
            with self._lock:
                spec = self._cache.get(key) or self._specialise(key)
                self._cache[key] = spec
        return spec

    def forward_gradient(self, types):
        """This gradient (or value and gradient) of a function of numbers for arguments of
        ``types``, computed by forward mode, one tangent per ``wrt`` input (ad/compose.py's
        jacobian by columns): no tape, so no memory beyond the registers, as a GPU thread
        needs. Its results come as ``as_primal``'s do."""
        reverse_mode = self.as_primal(types)
        primal = self.specialisation_of(types).ir
        fn = jacobian_function(primal, self.wrt_leaves(types, containers=False), "fwd", self.single)
        if self.kind == "value_and_grad":
            fn = with_value(primal, fn)
        fn = pipeline(fn, keep_errors=False)
        fn.result_tree = reverse_mode.result_tree
        return fn

    # ------------------------------------------------------------------ calls
    def __call__(self, *args, **kwargs):
        if has_tensor(args, kwargs):
            return call_on_tensors(self, args, kwargs)      # the eager bridge (bridge.py)
        return self.transform.call(self, args, kwargs)

    def bind(self, args, kwargs):
        """The arguments in parameter order, as Python binds them: by position, by keyword, else
        the default (each default specialises like a passed argument of its type)."""
        if not kwargs and len(args) == len(self.params) and not self._variadic:
            return args
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.fun.__name__}(): {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments[p] for p in self.params)

    def call_with_extra(self, args, extra):
        """vjp/jvp: specialise on ``args``; ``extra`` (cotangents or tangents, flat) follow their leaves."""
        return self.specialisation_for(args).run(*leaves(args), *extra)

    def call_bound(self, args):
        """The result of a call with arguments in parameter order, as the transformation returns it."""
        spec = self.specialisation_for(args)
        return self.transform.results(self, spec, args, spec.run(*leaves(args)))

    def by_mode(self, mode):
        """This jacobian's function compiled as a jacobian of ``mode`` ("fwd", "rev"), or as
        itself (``"jit"``), with this object's options: made at the first request."""
        with self._lock:
            if mode not in self._modes:
                kind, extra = ("jit", {}) if mode == "jit" else ("jacobian", {"wrt": self._wrt_given, "mode": mode})
                self._modes[mode] = Compiled(self.fun, kind, backend=self.requested_backend,
                                             boundscheck=self.boundscheck, cache=self.cache, **extra)
            return self._modes[mode]

    def reads_unchanged(self, seen=None):
        """Whether every global, closure cell and attribute this object's compiles read (and froze
        into its code) still holds what it did, and the function has the same code: then a new
        request for this transformation can have this object (srcgrad/reuse.py)."""
        seen = set() if seen is None else seen
        if getattr(original(self.fun), "__code__", None) is not self._code or not unchanged(self._reads, seen):
            return False
        inner = [self.fun] if isinstance(self.fun, Compiled) else []
        for c in inner + list(self._modes.values()):
            if id(c) not in seen:
                seen.add(id(c))
                if not c.reads_unchanged(seen):
                    return False
        return True

    def sibling(self, kind):
        """The compiled object of another ``kind`` of transformation of the same function, with the
        same backend (the eager bridge's vjp and second derivative of a ``jit``)."""
        return compiled_for(self.fun, kind, None if self.requested_backend == "auto" else self.requested_backend)

    # ------------------------------------------------------------------ the stages
    @property
    def specialisation(self):
        """The specialisation of the most recent call (its IR, source, backend)."""
        return self._spec()

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
    def stages(self):
        """How long each stage of the most recent specialisation took to compile, as a table:
        the frontend (source to optimised IR), the derivative (the transformation and its
        passes), the Python source (made where it runs or is asked for), and on llvm its
        lowering, LLVM's optimisation and the machine code. A large function's quick tier and
        the O3 build that replaces it (backends/llvm/tiers.py) are shown apart: the total is the
        time to the first call.
        Seconds, also as ``.specialisation.timings``."""
        s = self._spec()
        s.backend                               # built: the llvm stages are timed too
        timings = dict(s.timings)               # (a build in the background may add to it)
        first = {k: v for k, v in timings.items() if not k.endswith("(background)")}
        rows = [f"{stage:<36} {seconds * 1e3:10.1f} ms" for stage, seconds in first.items()]
        rows.append(f"{'total':<36} {sum(first.values()) * 1e3:10.1f} ms")
        rows += [f"{stage:<36} {seconds * 1e3:10.1f} ms" for stage, seconds in timings.items() if stage not in first]
        if s.building:
            rows.append("(the O3 build is still running in the background)")
        return "\n".join(rows)

    @property
    def llvm_ir(self):
        """The optimised LLVM IR (backend="llvm")."""
        s = self._spec()
        if s.llvm_ir is None:
            raise RuntimeError(f"{self.fun.__name__} ran on the {s.backend} backend; pass backend='llvm' for LLVM IR")
        return s.llvm_ir

    def __repr__(self):
        return f"<srcgrad.{self.kind} of {self.fun.__qualname__}>"

    def __reduce__(self):
        """Pickles by reference or by value, never compiled code (srcgrad/pickling.py)."""
        return reduce_compiled(self)


def compiled_for(fun, kind, backend, checkpoint=None):
    """The ``Compiled`` of ``fun`` for ``kind`` and these options, the one made before while what
    it read is unchanged (vjp and jvp are functions, not decorators: srcgrad/reuse.py keeps it)."""
    options = {"backend": backend, "checkpoint": checkpoint}
    return shared(kind, fun, options, lambda: Compiled(fun, kind, **options))


def original(fun):
    """The user's function under any number of compiled layers (grad(jit(f)) -> f)."""
    while isinstance(fun, Compiled):
        fun = fun.fun
    return fun


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
        b.ret([b.emit("index", [r])])
    return pipeline(out)


def _device_array_type(a):
    """The compiler type of a device array (``__cuda_array_interface__``), or None."""
    from .backends.cuda.launch import device_array_type     # the CUDA target loads only when used
    found = device_array_type(a)
    if found is None or found[0] is None:
        return None
    return ArrayType(found[0], len(found[1]))


__all__ = ["BACKENDS", "Compiled", "compiled_for", "original"]
