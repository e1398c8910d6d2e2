"""Scalar semantics against CPython at edge values: // % ** abs min max round int float, the
comparisons and unary minus, for int, float and mixed operands, on both backends. A result
must have CPython's type and value bits (-0.0 and NaN included); where CPython raises, the
compiled code raises the same exception type. Compiled ints are 64 bits: where CPython's int
does not fit, an OverflowError is the answer (DESIGN.md)."""
import math
import struct

import numpy as np
import pytest

import srcgrad

BACKENDS = ("python", "llvm")
INF, NAN = math.inf, math.nan
INTS = [0, 1, -1, 7, -7, 2 ** 53, 2 ** 53 + 1]
FLOATS = [0.0, -0.0, INF, -INF, NAN, 0.5, -0.5, 2.5, -2.5, 1e308, 5e-324, 7.0, -7.0, 1.0, -1.0, 2.0 ** 53]
VALUES = {"int": INTS, "float": FLOATS}
I64 = (-2 ** 63, 2 ** 63 - 1)


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def power(a, b):
    return a ** b


def minimum(a, b):
    return min(a, b)


def maximum(a, b):
    return max(a, b)


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def absolute(a):
    return abs(a)


def negative(a):
    return -a


def rounded(a):
    return round(a)


def to_int(a):
    return int(a)


def to_float(a):
    return float(a)


BINARY = [floordiv, mod, power, minimum, maximum, lt, le, gt, ge, eq, ne]
UNARY = [absolute, negative, rounded, to_int, to_float]
KINDS = [("int", "int"), ("int", "float"), ("float", "int"), ("float", "float")]


def outcome(fn, args):
    """(the value, None) or (None, the exception type) of fn(*args)."""
    try:
        return fn(*args), None
    except (ArithmeticError, ValueError) as e:
        return None, type(e)


def bits(x):
    return struct.pack("<d", x)


def ieee(fn, args):
    """What the llvm backend documents where CPython raises or leaves the reals (docs/compiler.md,
    "Not yet"): float //, % and ** as numpy computes them on doubles."""
    op = {floordiv: np.floor_divide, mod: np.remainder, power: np.power}.get(fn)
    if op is None or not any(isinstance(a, float) for a in args):
        return None
    with np.errstate(all="ignore"):
        return float(op(*(np.float64(a) for a in args)))


def expected_outcome(fn, args, backend):
    want, exc = outcome(fn, args)
    if backend == "llvm" and (exc in (ZeroDivisionError, OverflowError) or isinstance(want, complex)):
        value = ieee(fn, args)
        if value is not None:
            return value, None
    if isinstance(want, complex):
        return None, ValueError        # the python backend refuses a complex result (docs/compiler.md)
    if fn is power and type(args[0]) is int and type(args[1]) is int and args[1] < 0:
        return None, ValueError        # an int ** int stays an int; a negative exponent is refused (docs)
    if fn in (minimum, maximum) and type(args[0]) is not type(args[1]):
        return float(want), None       # an int and a float unify to float (DESIGN.md), as Numba
    return want, exc


def mismatch(expected, got):
    """Why the compiled outcome differs from the expected one, or None where it is the same."""
    (want, want_exc), (value, exc) = expected, got
    if want_exc is not None:
        return None if exc is want_exc else f"CPython raises {want_exc.__name__}, compiled gives {value!r} {exc}"
    if type(want) is int and not I64[0] <= want <= I64[1]:
        # compiled ints are 64 bits (llvm raises); the python backend computes with Python's int
        return None if exc is OverflowError or value == want else f"{want} is beyond 64 bits, got {value!r}"
    if exc is not None:
        return f"CPython gives {want!r}, compiled raises {exc.__name__}"
    if type(value) is not type(want):
        return f"CPython gives {type(want).__name__} {want!r}, compiled {type(value).__name__} {value!r}"
    if isinstance(want, float):
        same = (math.isnan(want) and math.isnan(value)) or bits(want) == bits(value)
        return None if same else f"CPython gives {want!r}, compiled {value!r}"
    return None if want == value else f"CPython gives {want!r}, compiled {value!r}"


def check(fn, kinds, backend):
    compiled = srcgrad.jit(fn, backend=backend)
    problems = []
    for args in _points(kinds):
        if fn is power and type(args[1]) is int and abs(args[1]) > 64 and args[0] not in (0, 1, -1):
            continue        # CPython would build an int of 2**53 digits
        why = mismatch(expected_outcome(fn, args, backend), outcome(compiled, args))
        if why:
            problems.append(f"{fn.__name__}{args!r}: {why}")
    return problems


def _points(kinds):
    if len(kinds) == 1:
        return [(a,) for a in VALUES[kinds[0]]]
    return [(a, b) for a in VALUES[kinds[0]] for b in VALUES[kinds[1]]]


KNOWN = {}        # (fn, kinds) -> why it still differs from CPython


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kinds", KINDS, ids="-".join)
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_operator_matches_cpython(fn, kinds, backend, request):
    if (fn, kinds) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=False, reason=KNOWN[fn, kinds]))
    problems = check(fn, kinds, backend)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_unary_operation_matches_cpython(fn, kind, backend):
    problems = check(fn, (kind,), backend)
    assert not problems, "\n".join(problems)


def round_to_digits(x):
    return round(x, 2)


def test_round_with_digits_is_refused_with_the_line():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as e:
        srcgrad.jit(round_to_digits)(1.234)
    assert "round(x, ndigits)" in str(e.value) and "return round(x, 2)" in str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_halves_to_even_and_has_no_derivative(backend):
    def f(x):
        return x * round(x)
    assert [srcgrad.jit(rounded, backend=backend)(v) for v in (0.5, 1.5, 2.5, -2.5, 2.675)] == [0, 2, 2, -2, 3]
    assert srcgrad.grad(f, backend=backend)(2.5) == 2.0        # round is piecewise constant


def np_maximum(a, b):
    return np.maximum(a, b)


def np_minimum(a, b):
    return np.minimum(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [np_maximum, np_minimum], ids=lambda f: f.__name__)
def test_numpy_maximum_of_scalars_matches_numpy(fn, backend):
    """np.maximum(1.0, nan) is nan (Python's max(1.0, nan) is 1.0), and of equal values numpy
    returns the second: np.maximum(0.0, -0.0) is -0.0."""
    compiled = srcgrad.jit(fn, backend=backend)
    for a in FLOATS:
        for b in FLOATS:
            want, got = float(fn(a, b)), compiled(a, b)
            assert type(got) is float and (bits(got) == bits(want) or math.isnan(want) and math.isnan(got)), (a, b)
