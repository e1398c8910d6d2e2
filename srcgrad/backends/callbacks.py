"""Calls from compiled code back into Python: the user's ``custom_vjp`` functions and rules.

A ``call_custom`` or ``call_custom_vjp`` op compiles to a call through a table of function
pointers that the entry stub passes in (so object code cached on disk holds no addresses).
Each entry is a ctypes callback ``int bridge(void **args, void **results)``: it reads the
operands (numbers, or array structs it copies into numpy arrays), calls the Python function,
checks and writes the results, and returns 0; an exception is kept for the entry stub to
raise and the callback returns 1, which makes the compiled code stop.

Example:
    bridge = make_bridge(op)        # keep it alive as long as the compiled code
"""
import ctypes
import threading

import numpy as np

from ..errors import TypingError
from ..ir.types import BOOL, F64
from .marshal import ctype_of, memory_view, numpy_dtype

BRIDGE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))

_state = threading.local()


class CallState:
    """What one call of compiled code needs from its callbacks: arrays they returned (alive
    until the call ends) and the first exception. Calls may nest (a custom function calling
    compiled code), so each call saves and restores the thread's state."""

    def __enter__(self):
        self.keep, self.error = [], None
        self.saved = getattr(_state, "current", None)
        _state.current = self
        return self

    def __exit__(self, *exc):
        _state.current = self.saved


def make_bridge(op):
    """The ctypes callback for a ``call_custom`` or ``call_custom_vjp`` op."""
    fobj = op.attrs["fn"]
    vjp = op.prim == "call_custom_vjp"
    fn = fobj.vjp if vjp else fobj.fun
    in_types = [v.type for v in op.operands]
    out_types = [r.type for r in op.results]
    what = f"the vjp of {fobj.__name__}" if vjp else fobj.__name__

    def bridge(argv, resv):
        state = _state.current
        try:
            args = [_read(argv[k], t) for k, t in enumerate(in_types)]
            out = fn(*args)
            if vjp:
                out = _cotangents(out, op.attrs["targets"], op.attrs["n_args"], what)
            elif len(out_types) == 1:
                out = [out]
            elif not isinstance(out, tuple) or len(out) != len(out_types):
                raise TypingError(f"{what} returned {out!r}; compiled code expects {len(out_types)} values")
            for k, (value, t) in enumerate(zip(out, out_types)):
                _write(resv[k], t, value, state.keep, what)
            return 0
        except BaseException as e:      # noqa: BLE001 - re-raised by the entry stub
            if state.error is None:
                state.error = e
            return 1
    return BRIDGE(bridge)


def _read(address, t):
    if t.is_array:
        s = ctypes.cast(address, ctypes.POINTER(ctype_of(t))).contents
        return memory_view(s, t, None).copy()        # the function may keep it: its own copy
    value = ctypes.cast(address, ctypes.POINTER(ctype_of(t))).contents.value
    return bool(value) if t is BOOL else value


def _cotangents(out, targets, n_args, what):
    if not isinstance(out, tuple) or len(out) != n_args:
        raise TypingError(f"{what} returned {out!r}; it must return a tuple of {n_args} cotangents, one per argument")
    picked = []
    for k in targets:
        if out[k] is None:
            raise TypingError(f"{what} returned None for argument {k}, whose gradient is needed")
        picked.append(out[k])
    return picked


def checked_vjp(op):
    """The user's vjp of a ``call_custom_vjp`` op for the python backend, its cotangents checked
    as the bridge checks them: both backends raise the same TypingError for a bad one."""
    fobj = op.attrs["fn"]
    what = f"the vjp of {fobj.__name__}"
    out_types = [r.type for r in op.results]

    def vjp(*args):
        out = fobj.vjp(*args)
        for value, t in zip(_cotangents(out, op.attrs["targets"], op.attrs["n_args"], what), out_types):
            _checked(t, value, what)
        return out
    vjp.__name__ = fobj.vjp.__name__
    return vjp


def _checked(t, value, what):
    """``value`` as compiled code takes a ``t``: a Python number, or a fresh array of t's dtype."""
    if not t.is_array:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raise TypingError(f"{what} returned an array of shape {value.shape} where a number is expected")
        py = float if t is F64 else (bool if t is BOOL else int)
        if not isinstance(value, (int, float, np.integer, np.floating, np.bool_, np.ndarray)) or \
                isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            raise TypingError(f"{what} returned {value!r} where a {py.__name__} is expected")
        number = py(value)
        if py is int and not -2 ** 63 <= number < 2 ** 63:      # ctypes would wrap it around silently
            raise OverflowError(f"{what} returned {number}, beyond the 64-bit integers compiled code computes with "
                                "(-2**63 to 2**63 - 1)")
        return number
    try:
        a = np.array(value, dtype=numpy_dtype(t), copy=True)
    except (TypeError, ValueError):
        raise TypingError(f"{what} returned {value!r} where an array of {numpy_dtype(t).name} is expected") \
            from None
    if a.ndim != t.ndim:
        raise TypingError(f"{what} returned an array of {a.ndim} dimensions where {t.ndim} are expected")
    return a


def _write(address, t, value, keep, what):
    value = _checked(t, value, what)
    if not t.is_array:
        ctypes.cast(address, ctypes.POINTER(ctype_of(t))).contents.value = value
        return
    a = value
    keep.append(a)
    s = ctypes.cast(address, ctypes.POINTER(ctype_of(t))).contents
    s.data = a.ctypes.data
    s.shape[:] = a.shape
    s.strides[:] = [st // a.itemsize for st in a.strides]
