"""The status codes compiled code returns, and the exception each one raises in Python.

Compiled code returns 0, or a code: one per condition (``_ERRORS`` says which exception each
raises), or, for conditions whose message depends on the site (an index, shapes, an assert),
``SITE + k`` for the k-th site of the function, whose i64 numbers the code leaves in the error
slots. The messages are taken from the running Python and numpy where they raise the same
condition, so they read exactly as the python backend's.

Example:
    exception_for(ZERO_DIVISION, [], err)     # ZeroDivisionError('integer division or modulo by zero')
"""
import struct

import numpy as np

(OK, ZERO_DIVISION, INT_MODULO, INT_OVERFLOW, RANGE_STEP, ARANGE_STEP, FLOAT_ARANGE_STEP, SLICE_STEP, EMPTY_MAX,
 EMPTY_MIN, NEGATIVE_SIZE, MEMORY, CALLBACK) = range(13)
SITE = 100
ERR_SLOTS = 64        # i64 numbers a failing call leaves for its message (an index and a size, shapes)


def raised(compute):
    """The exception Python or numpy raises for ``compute`` (their wording changes between
    versions, so it is taken from the running ones)."""
    try:
        compute()
    except Exception as e:      # noqa: BLE001 - any exception is the answer
        return e
    raise AssertionError("srcgrad: expected an exception")


def as_float(bits):
    """The double whose bits an i64 error number holds."""
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _same_as(compute):
    e = raised(compute)
    return lambda err: type(e)(*e.args)


def shape_text(dims):
    """A shape as numpy writes it in messages: (3,) or (2,3)."""
    dims = list(dims)
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ",".join(str(n) for n in dims) + ")"


MATMUL_MESSAGE = str(raised(lambda: np.ones(3) @ np.ones(2)))
MATMUL_MESSAGE = MATMUL_MESSAGE.replace("(size 2 is different from 3)", "(size {} is different from {})") \
    if "(size 2 is different from 3)" in MATMUL_MESSAGE else "matmul: size {} is different from {}"

_ERRORS = {
    ZERO_DIVISION: _same_as(lambda: 1 // 0),
    INT_MODULO: _same_as(lambda: 1 % 0),
    INT_OVERFLOW: lambda err: OverflowError("srcgrad: -9223372036854775808 // -1 is 2**63, beyond the 64-bit "
                                            "integers compiled code computes with (-2**63 to 2**63 - 1)"),
    RANGE_STEP: _same_as(lambda: range(0, 1, 0)),
    ARANGE_STEP: _same_as(lambda: np.arange(0, 1, 0)),
    FLOAT_ARANGE_STEP: _same_as(lambda: np.arange(0.0, 1.0, 0.0)),
    SLICE_STEP: _same_as(lambda: np.zeros(1)[::0]),
    EMPTY_MAX: _same_as(lambda: np.max(np.zeros(0))),
    EMPTY_MIN: _same_as(lambda: np.min(np.zeros(0))),
    NEGATIVE_SIZE: _same_as(lambda: np.zeros(-1)),
    MEMORY: lambda err: MemoryError(f"srcgrad: compiled code needs {err[0]:,} items of {err[1]} bytes "
                                    f"({err[0] * err[1] / 2**30:,.1f} GiB) and could not get them"),
}


def exception_for(status, errors, err):
    """The exception for a compiled call's error status; ``errors`` are the function's sites
    (``(make, count)`` each, from the lowering), ``err`` holds the call's numbers."""
    if status in _ERRORS:
        return _ERRORS[status](err)
    if status >= SITE and status - SITE < len(errors):
        make, count = errors[status - SITE]
        return make(list(err[:count]))
    return RuntimeError(f"srcgrad: compiled code failed with status {status}")
