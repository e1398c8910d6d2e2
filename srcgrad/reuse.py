"""The compiled objects handed out lately, so that ``srcgrad.grad(f)(x)`` written inside a loop
compiles ``f`` once: a transformation asked again of the same function object with the same
options gets the object it got before, with its specialisations, as long as every global,
closure cell and attribute its code froze still holds what it held then
(``Compiled.reads_unchanged``); otherwise it gets a new object, compiled afresh, as if nothing
were remembered. The least recently asked-for object is forgotten first (at most ``SIZE``
kept, each holding its function alive).

Example:
    >>> import srcgrad
    >>> def f(x):
    ...     return x * x * SCALE
    >>> SCALE = 2.0
    >>> srcgrad.grad(f)(1.0), srcgrad.grad(f) is srcgrad.grad(f)
    (4.0, True)
    >>> SCALE = 3.0                     # read at compile time: a new object sees the new value
    >>> srcgrad.grad(f)(1.0)
    6.0
"""
import collections
import threading

SIZE = 128
_RECENT = collections.OrderedDict()     # (id(fun), kind, options) -> (fun, compiled object)
_LOCK = threading.RLock()     # (make may ask for another object)


def shared(kind, fun, options, make):
    """The object ``make()`` builds for ``kind`` of ``fun`` with ``options`` (a dict), or the
    one it built before for the same request, if that one's reads are unchanged."""
    try:
        key = (id(fun), kind, tuple(sorted((k, _hashable(v)) for k, v in options.items())))
        hash(key)
    except TypeError:                   # an option that cannot be compared: nothing shared
        return make()
    with _LOCK:
        entry = _RECENT.get(key)
        if entry is not None and entry[0] is fun and entry[1].reads_unchanged():
            _RECENT.move_to_end(key)
            return entry[1]
        compiled = make()
        _RECENT[key] = (fun, compiled)
        _RECENT.move_to_end(key)
        while len(_RECENT) > SIZE:
            _RECENT.popitem(last=False)
        return compiled


def forget():
    """Drop every object kept (tests that count compiles start from nothing)."""
    with _LOCK:
        _RECENT.clear()


def _hashable(v):
    return tuple(_hashable(x) for x in v) if isinstance(v, (list, tuple)) else v
