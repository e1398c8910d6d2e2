"""Pickling compiled objects, so that they travel to worker processes (multiprocessing,
concurrent.futures, Dask, Ray).

A compiled object pickles by reference where its module holds it under its name (a function
decorated at module level: the worker imports the module, which decorates it again), and
otherwise by value: the function it transforms (plain or itself compiled), its options and
the function's source text, never compiled code or pointers. The receiving process compiles
at the first call, from the on-disk cache where ``cache=True`` and this machine compiled it
before (the cache's key holds srcgrad's and LLVM's versions: other versions compile again).
Closures and functions of ``__main__`` pickle by value under cloudpickle, which pickles the
function itself; the source text travels with it, so a worker without the file compiles it.
A process unpickling the same object again (a Dask task after task, each carrying the
function) gets the object it rebuilt the first time, with what it compiled: each pickle
carries a token of the object it came from.

Example:
    >>> import pickle, srcgrad
    >>> import cloudpickle                # pickle alone, where loss is a module-level function
    >>> def loss(x):
    ...     return x * x
    >>> g = pickle.loads(cloudpickle.dumps(srcgrad.grad(loss)))     # loss by value, with its source
    >>> g(3.0)
    6.0
"""
import collections
import sys
import threading
import uuid

from .frontend.source import remember_source, source_of


def reduce_compiled(c):
    """``__reduce__`` of a ``Compiled``: (callable, args) that rebuild it."""
    module = sys.modules.get(getattr(c, "__module__", None) or "")
    name = _name_in(module, c)
    if name is not None:
        return _import_attribute, (module.__name__, name)
    options = {"wrt": None if c.wrt is None else (c.wrt[0] if c.single else tuple(c.wrt)),
               "backend": None if c.requested_backend == "auto" else c.requested_backend,
               "boundscheck": c.boundscheck, "cache": c.cache, "checkpoint": c.checkpoint, "mode": c.mode,
               "target": c.target}
    token = c.__dict__.setdefault("_pickle_token", uuid.uuid4().hex)       # the same for every pickle of c
    return _rebuild, (type(c), _function(c.fun), c.kind, options, _source(c.fun), token)


def _name_in(module, obj):
    """The name ``module`` holds ``obj`` under (its own name first), or None."""
    if module is None or _by_value(module.__name__):
        return None
    qualname = getattr(obj, "__qualname__", "")
    if "<locals>" not in qualname and _lookup(module, qualname) is obj:
        return qualname
    return next((k for k, v in vars(module).items() if v is obj), None)


def _by_value(module_name):
    """Whether objects of this module go by value: ``__main__``'s where cloudpickle is loaded
    (it sends them by value; a remote worker has no ``__main__`` of ours)."""
    return module_name == "__main__" and "cloudpickle" in sys.modules


def _function(fun):
    """``fun``, or, for a plain function whose module holds a compiled object of it under its
    name (it was decorated), a reference that pickle can follow (pickle looks the name up and
    finds the compiled object, not the function)."""
    if hasattr(fun, "as_primal") or _by_value(getattr(fun, "__module__", None)):
        return fun
    module = sys.modules.get(getattr(fun, "__module__", None) or "")
    held = _lookup(module, getattr(fun, "__qualname__", "")) if module is not None else None
    if held is not fun and hasattr(held, "as_primal") and _plain(held) is fun:
        return _DecoratedFunction(module.__name__, fun.__qualname__)
    return fun


class _DecoratedFunction:
    """Pickles as the plain function under the compiled object ``module.qualname``."""

    def __init__(self, module, qualname):
        self.module, self.qualname = module, qualname

    def __reduce__(self):
        return _plain_under, (self.module, self.qualname)


def _plain_under(module, qualname):
    return _plain(_import_attribute(module, qualname))


def _plain(fun):
    while hasattr(fun, "as_primal"):
        fun = fun.fun
    return fun


def _lookup(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def _source(fun):
    """The source text of the plain function under ``fun``, where it can be read."""
    try:
        return source_of(_plain(fun))
    except Exception:       # no source (a lambda typed at the REPL): the worker says so at its first call
        return None


def _import_attribute(module, qualname):
    __import__(module)
    return _lookup(sys.modules[module], qualname)


# token -> the object rebuilt from it in this process, the most recent KEEP of them: kept
# alive between tasks (a task's copy of the function dies with the task)
_rebuilt = collections.OrderedDict()
KEEP = 256
_lock = threading.Lock()


def _rebuild(cls, fun, kind, options, source, token=None):
    with _lock:
        known = _rebuilt.get(token) if token is not None else None
        if known is None:
            known = _build(cls, fun, kind, options, source)
            if token is not None:
                known._pickle_token = token         # pickled again here, it stays the same object elsewhere
                _rebuilt[token] = known
                while len(_rebuilt) > KEEP:
                    _rebuilt.popitem(last=False)
        else:
            _rebuilt.move_to_end(token)
        return known


def _build(cls, fun, kind, options, source):
    """A new ``cls`` (srcgrad.compiled.Compiled, passed by the pickle) of ``fun``."""
    inner = _plain(fun)
    if source is not None:
        remember_source(inner, source)          # a worker without the file compiles from this
    wrt = 0 if options["wrt"] is None else options["wrt"]
    c = cls(fun, kind, wrt, options["backend"], options["boundscheck"], options["cache"],
            target=options["target"], mode=options["mode"])
    c.checkpoint = options["checkpoint"]
    return c


__all__ = ["reduce_compiled"]
