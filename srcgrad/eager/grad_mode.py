"""Grad modes: whether ops record a graph. The flag is per thread, as in PyTorch.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
"""
import functools
import inspect
import threading


class _State(threading.local):
    enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    """True when new ops record their ``grad_fn`` in this thread."""
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    def _target(self):
        raise NotImplementedError

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        state.enabled, state.inference = self._target()

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        return False

    def __call__(self, fn):
        mode_cls, args = type(self), self._args()

        if inspect.isgeneratorfunction(fn):
            raise TypeError(f"{mode_cls.__name__} cannot decorate a generator function")

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with mode_cls(*args):
                return fn(*a, **kw)

        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return type(self)(*self._args())


class _PlainMode(_Mode):
    """A mode without arguments, usable as ``@mode``, ``@mode()`` and ``with mode():``."""

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if callable(fn):          # used as @mode without parentheses
            return self(fn)
        return self

    def __init__(self, fn=None):
        pass


class no_grad(_PlainMode):
    """Ops inside record no graph: results have ``requires_grad=False``.

    >>> @no_grad()
    ... def predict(w, x): return w * x
    """

    def _target(self):
        return False, state.inference


class enable_grad(_PlainMode):
    """Turns recording back on, e.g. inside a ``no_grad`` block."""

    def _target(self):
        return True, state.inference


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` switches recording off now; as a context manager it
    restores the previous mode on exit.

    >>> with set_grad_enabled(False):
    ...     pass
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode = mode
        self._prev = (state.enabled, state.inference)
        state.enabled = mode

    def _args(self):
        return (self.mode,)

    def _target(self):
        return self.mode, state.inference

    def __enter__(self):
        # the previous mode was captured in __init__, before it changed the flag
        pass

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        return False


class inference_mode(_Mode):
    """Like ``no_grad``, for code that will never need gradients."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode=True):
        if not callable(mode):
            self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def _target(self):
        if self.mode:
            return False, True
        return state.enabled, False
