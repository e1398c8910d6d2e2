"""The backends keep Python's and numpy's semantics where compiled code usually slips
(issue 9): symbol names, error messages, float and integer ``//`` and ``%``, and the names
in IndexErrors raised by gradient code."""
import importlib.util
import math
import sys
import textwrap

import numpy as np
import pytest

import srcgrad

BACKENDS = ["python", "llvm"]


def _module(tmp_path, name, source):
    """Import ``source`` as a new module (inspect.getsource needs a file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- symbol names

_NAMED_LIKE = ["exp", "tanh", "sin", "cos", "log", "pow", "sqrt", "tan", "atan2", "hypot", "erf", "floor",
               "malloc", "calloc", "realloc", "free", "memcpy", "memset", "main", "ipow", "abs", "min", "max",
               "float", "int", "bool", "len", "math", "round", "_sum_to", "_broadcast_like", "_reduce_grad", "_power",
               "résumé_λ"]


@pytest.mark.parametrize("name", _NAMED_LIKE)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_named_like_what_its_code_calls(tmp_path, name, backend):
    # the body calls libm (as intrinsics and by name), allocates, frees a tape and raises to a
    # power, and the python backend's code calls float(), len(), math...: each would reach the
    # user's function if it shared its name
    mod = _module(tmp_path, f"named_{name}_{backend}", f"""
        import numpy as np

        def {name}(a, v):
            w = np.zeros(3)
            s = 0.0
            for i in range(3):
                w[i] = v[i] * a
                s += np.tanh(w[i]) * np.sin(a) + np.exp(a) ** 1.5
            return s + np.log(a + 2.0) + np.sqrt(a + 2.0) + a ** 2.0 + np.sum(w) + 3 ** 2
        """)
    fn = getattr(mod, name)
    v = np.array([1.0, 2.0, 3.0])
    expect = fn(0.5, v)
    assert srcgrad.jit(fn, backend=backend)(0.5, v) == pytest.approx(expect, rel=1e-12)
    g = srcgrad.grad(fn, backend=backend)(0.5, v)
    h = 1e-6
    assert g == pytest.approx((fn(0.5 + h, v) - fn(0.5 - h, v)) / (2 * h), rel=1e-6)


def test_helpers_named_like_libm_and_builtins_compiled_in_place(tmp_path):
    mod = _module(tmp_path, "inlined_helpers", """
        import numpy as np

        def exp(a):
            return np.exp(a) * 2.0

        def malloc(a):
            return np.zeros(2) + a

        def float(a):
            return a + 1.0

        def f(x):
            return exp(x) + np.sum(malloc(x)) + float(x)
        """)
    expect = mod.f(0.5)
    for backend in BACKENDS:
        assert srcgrad.jit(mod.f, backend=backend)(0.5) == pytest.approx(expect, rel=1e-12)
        assert srcgrad.grad(mod.f, backend=backend)(0.5) == pytest.approx(2.0 * math.exp(0.5) + 3.0, rel=1e-12)


def test_two_functions_of_one_name_from_two_modules(tmp_path):
    one = _module(tmp_path, "first_f", "def f(x):\n    return x + 1.0\n")
    two = _module(tmp_path, "second_f", "def f(x):\n    return x * 10.0\n")
    for backend in BACKENDS:
        a, b = srcgrad.jit(one.f, backend=backend), srcgrad.jit(two.f, backend=backend)
        assert (a(2.0), b(2.0), a(3.0), b(3.0)) == (3.0, 20.0, 4.0, 30.0)
        assert (srcgrad.grad(one.f, backend=backend)(2.0), srcgrad.grad(two.f, backend=backend)(2.0)) == (1.0, 10.0)


def test_a_cached_function_named_exp(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "cache"))
    mod = _module(tmp_path, "cached_exp", "import numpy as np\n\ndef exp(a):\n    return np.exp(a)\n")
    first = srcgrad.jit(mod.exp, backend="llvm", cache=True)
    assert first(1.0) == math.exp(1.0)
    srcgrad.reuse.forget()          # as in a new process: the next object is made afresh
    second = srcgrad.jit(mod.exp, backend="llvm", cache=True)       # loads the object code
    assert second(2.0) == math.exp(2.0)
    assert not first._spec().run.from_cache and second._spec().run.from_cache


# ---------------------------------------------------------------- errors: numpy's and Python's words

def max_all(x):
    return np.max(x)


def min_all(x):
    return np.min(x)


def max_rows(x):
    return np.max(x, axis=1)


def min_columns(x):
    return np.min(x, axis=0)


def added(x, y):
    return x + y


def chosen(x, y):
    return np.where(x > 0.0, y, 1.0)


def matrix_times(m, w):
    return m @ w


def stepped(x, s):
    return x[::s]


def assigned(x):
    y = np.zeros(5)
    y[0:2] = x
    return y


def assigned_one(x):
    y = np.zeros(5)
    y[0:1] = x          # x of 3 elements does not fit (it used to be read at its first element)
    return y


def sized(n):
    return np.zeros(n)


def ranged(x, s):
    t = 0.0
    for i in range(0, 3, s):
        t += x
    return t


def int_range(s):
    return np.arange(0, 5, s)


def int_floordiv(a, b):
    return a // b


def int_mod(a, b):
    return a % b


_FAILING = [
    (max_all, (np.zeros(0),)),
    (min_all, (np.zeros(0),)),
    (max_rows, (np.zeros((3, 0)),)),
    (max_rows, (np.zeros((0, 0)),)),
    (min_columns, (np.zeros((0, 4)),)),
    (added, (np.ones(3), np.ones(4))),
    (added, (np.ones((2, 3)), np.ones(4))),
    (chosen, (np.ones(3), np.ones(2))),
    (matrix_times, (np.ones((2, 3)), np.ones(2))),
    (matrix_times, (np.ones(3), np.ones(2))),
    (matrix_times, (np.ones((2, 3)), np.ones((2, 3)))),
    (stepped, (np.ones(3), 0)),
    (assigned, (np.ones(3),)),
    (assigned_one, (np.ones(3),)),
    (sized, (-1,)),
    (ranged, (1.0, 0)),
    (int_range, (0,)),
    (int_floordiv, (7, 0)),
    (int_mod, (7, 0)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", _FAILING, ids=lambda v: getattr(v, "__name__", ""))
def test_errors_say_what_python_and_numpy_say(fn, args, backend):
    with pytest.raises(Exception) as expected:
        fn(*args)
    with pytest.raises(type(expected.value)) as got:
        srcgrad.jit(fn, backend=backend)(*args)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_that_numpy_allows_on_empty_arrays(backend):
    for fn, x in [(max_rows, np.zeros((0, 3))), (min_columns, np.zeros((3, 0)))]:
        got = srcgrad.jit(fn, backend=backend)(x)
        assert got.shape == fn(x).shape == (0,)
    assert srcgrad.jit(lambda_free_prod, backend=backend)(np.zeros(0)) == 1.0
    assert srcgrad.jit(lambda_free_sum, backend=backend)(np.zeros((0, 2))) == 0.0


def lambda_free_prod(x):
    return np.prod(x)


def lambda_free_sum(x):
    return np.sum(x)


def test_each_error_code_has_one_condition():
    from srcgrad.backends.llvm import error_codes as llvm
    codes = [llvm.ZERO_DIVISION, llvm.INT_MODULO, llvm.INT_OVERFLOW, llvm.RANGE_STEP, llvm.ARANGE_STEP,
             llvm.FLOAT_ARANGE_STEP, llvm.SLICE_STEP, llvm.EMPTY_MAX, llvm.EMPTY_MIN, llvm.NEGATIVE_SIZE, llvm.MEMORY]
    assert len(set(codes)) == len(codes) and set(codes) == set(llvm._ERRORS)
    texts = [str(llvm._ERRORS[c]([1, 8])) for c in codes]
    assert len(set(texts)) == len(texts)


# ---------------------------------------------------------------- // and %, exactly as CPython

_FLOATS = [0.0, -0.0, 1.0, -1.0, 2.3, 0.7, -2.3, -0.7, 3.0, -3.0, 2.0 ** 53, -(2.0 ** 53), 2.0 ** 53 + 2.0, 1e308,
           -1e308, 5e-324, -5e-324, 1e-300, 7.5, math.inf, -math.inf, math.nan]
_INTS = [0, 1, -1, 2, -2, 7, -7, 3, -3, 2 ** 62, -2 ** 62, 2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1]


def _bits(x):
    """A float as its exact bits: -0.0 and 0.0 differ, every nan is one value."""
    return "nan" if isinstance(x, float) and math.isnan(x) else (type(x).__name__, repr(x))


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def both(a, b):
    return a // b, a % b


def mixed(a, n):
    return a % n + n // a


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_floordiv_and_mod_give_cpythons_bits(backend):
    fd, md, bt = (srcgrad.jit(f, backend=backend) for f in (floordiv, mod, both))
    for a in _FLOATS:
        for b in _FLOATS:
            if b == 0.0:
                continue
            expect = (_bits(a // b), _bits(a % b))
            assert (_bits(fd(a, b)), _bits(md(a, b))) == expect, (a, b)
            assert tuple(_bits(v) for v in bt(a, b)) == expect, (a, b)
    assert md(2.3, 0.7) == 0.19999999999999996


def test_float_floordiv_and_mod_by_zero():
    # the python backend raises as Python does; the llvm backend gives numpy's (IEEE's) results,
    # as for division (docs/compiler.md)
    for f, compute in ((floordiv, lambda: 1.0 // 0.0), (mod, lambda: 1.0 % 0.0)):
        with pytest.raises(ZeroDivisionError) as expected:
            compute()
        with pytest.raises(ZeroDivisionError, match=str(expected.value)):
            srcgrad.jit(f, backend="python")(1.0, 0.0)
        native = srcgrad.jit(f, backend="llvm")
        for a in _FLOATS:
            for zero in (0.0, -0.0):
                with np.errstate(all="ignore"):
                    expect = getattr(np, "floor_divide" if f is floordiv else "remainder")(np.float64(a), zero)
                assert _bits(native(a, zero)) == _bits(float(expect)), (a, zero)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_floordiv_and_mod_of_arrays_follow_numpy(backend):
    x = np.repeat(np.array(_FLOATS), len(_FLOATS))
    y = np.tile(np.array(_FLOATS), len(_FLOATS))
    with np.errstate(all="ignore"):
        q, r = srcgrad.jit(both, backend=backend)(x, y)
        expect_q, expect_r = np.floor_divide(x, y), np.remainder(x, y)
    assert [_bits(float(v)) for v in q] == [_bits(float(v)) for v in expect_q]
    assert [_bits(float(v)) for v in r] == [_bits(float(v)) for v in expect_r]
    # numpy agrees with CPython wherever CPython gives a number
    for a, b, qq, rr in zip(x, y, q, r):
        if b != 0.0:
            assert (_bits(float(qq)), _bits(float(rr))) == (_bits(float(a) // float(b)), _bits(float(a) % float(b)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_floordiv_and_mod_floor_toward_minus_infinity(backend):
    fd, md = srcgrad.jit(floordiv, backend=backend), srcgrad.jit(mod, backend=backend)
    for a in _INTS:
        for b in _INTS:
            if b == 0 or (a, b) == (-2 ** 63, -1):
                continue
            assert (fd(a, b), md(a, b)) == (a // b, a % b), (a, b)
            assert type(fd(a, b)) is int
    assert md(-2 ** 63, -1) == 0
    for f, compute in ((fd, lambda: 1 // 0), (md, lambda: 1 % 0)):
        with pytest.raises(ZeroDivisionError) as expected:
            compute()
        with pytest.raises(ZeroDivisionError) as got:
            f(5, 0)
        assert str(got.value) == str(expected.value)


def test_int_floordiv_overflow_is_an_error_on_llvm():
    with pytest.raises(OverflowError, match="beyond the 64-bit integers"):
        srcgrad.jit(floordiv, backend="llvm")(-2 ** 63, -1)
    assert srcgrad.jit(floordiv, backend="llvm")(-2 ** 63 + 1, -1) == 2 ** 63 - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_int_and_float_operands(backend):
    f = srcgrad.jit(mixed, backend=backend)
    for a in [2.5, -0.7, 0.7, 1e-300, -1e308, 3.0]:
        for n in [7, -7, 2 ** 53 + 1, -2 ** 62, 1]:
            assert _bits(f(a, n)) == _bits(mixed(a, n)), (a, n)


# ---------------------------------------------------------------- IndexErrors name the user's array and line

def read_only_for_gradient(x):
    s = 0.0
    for i in range(4):
        s += 2.0 * x[i]          # the gradient does not need x[i]: only dx[i] += ... indexes
    return s


def read_2d(m, j):
    s = 0.0
    for i in range(m.shape[0]):
        s += 3.0 * m[i, j]
    return s


def rows_of(m):
    s = 0.0
    for i in range(4):
        s += np.sum(m[i, :]) * 2.0
    return s


def written(x):
    y = np.zeros(2)
    for i in range(3):
        y[i] = x[i] * 2.0
    return np.sum(y)


_INDEXING = [   # (function, arguments, array, index, axis, size, line in the function)
    (read_only_for_gradient, (np.ones(3),), "x", 3, 0, 3, 3),
    (read_2d, (np.ones((2, 3)), 5), "m", 5, 1, 3, 3),
    (read_2d, (np.ones((2, 3)), -4), "m", -4, 1, 3, 3),
    (rows_of, (np.ones((3, 2)),), "m", 3, 0, 3, 3),
    (written, (np.ones(3),), "y", 2, 0, 2, 3),
]


@pytest.mark.parametrize("kind", ["jit", "grad"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, name, index, axis, size, line", _INDEXING,
                         ids=lambda v: getattr(v, "__name__", None))
def test_index_errors_name_the_users_array_and_line(fn, args, name, index, axis, size, line, backend, kind):
    with pytest.raises(IndexError) as got:
        getattr(srcgrad, kind)(fn, backend=backend)(*args)
    where = f"{__file__}:{fn.__code__.co_firstlineno + line}:"
    start = f"index {index} is out of bounds for axis {axis} of '{name}' with size {size} ("
    assert str(got.value).startswith(start + where), str(got.value)


# ---------------------------------------------------------------- integer overflow is an error, not a wrap

def int_ops(a, b):
    return a + b, a - b, a * b, -a, a ** 3, abs(a)


@pytest.mark.parametrize("a, b", [(2 ** 62, 2 ** 62), (-2 ** 63, 1), (2 ** 32, 2 ** 31), (-2 ** 63, 0),
                                  (2 ** 21, 0), (-2 ** 21 - 1, 0)])
def test_int_overflow_raises_on_llvm(a, b):
    exact = int_ops(a, b)
    fits = all(-2 ** 63 <= v < 2 ** 63 for v in exact)
    assert srcgrad.jit(int_ops, backend="python")(a, b) == exact          # Python's unbounded ints
    native = srcgrad.jit(int_ops, backend="llvm")
    if fits:
        assert native(a, b) == exact
    else:
        with pytest.raises(OverflowError, match="integer overflow: the result of .* is beyond the 64-bit"):
            native(a, b)



# ---------------------------------------------------------------- float ** at its edges

def power(a, b):
    return a ** b


def test_float_power_edges():
    py, native = srcgrad.jit(power, backend="python"), srcgrad.jit(power, backend="llvm")
    for a, b in [(0.0, 0.0), (math.nan, 0.0), (1.0, math.nan), (math.inf, -1.0), (-math.inf, 3.0), (2.0, 0.5),
                 (-1.0, math.inf), (2.0, -1074.0), (0.0, -math.inf), (-2.0, 3.0), (-0.0, 3.0), (1e-300, 0.5)]:
        assert _bits(py(a, b)) == _bits(native(a, b)) == _bits(a ** b), (a, b)
    # where Python raises or gives a complex number: the python backend raises, the llvm
    # backend follows IEEE as np.power does (docs/compiler.md)
    for a, b, error in [(0.0, -1.0, ZeroDivisionError), (-0.0, -3.0, ZeroDivisionError),
                        (10.0, 400.0, OverflowError), (-8.0, 1 / 3, ValueError), (-2.0, 0.5, ValueError)]:
        with pytest.raises(error):
            py(a, b)
        with np.errstate(all="ignore"):
            assert _bits(native(a, b)) == _bits(float(np.power(a, b))), (a, b)


# ------------------------------------------------ np.minimum/np.maximum and np.max/np.min: numpy's NaN and ties

def elementwise_extremes(x, y):
    return np.minimum(x, y), np.maximum(x, y), np.minimum(x, 0.0), np.maximum(0.0, y)


def reduced_extremes(m):
    return np.max(m), np.min(m), np.max(m, axis=0), np.min(m, axis=1)


def scalar_extremes(a, b):
    return min(a, b), max(a, b)


def _all_bits(values):
    return [_bits(float(v)) for v in np.ravel(values)]


_EDGES = [np.nan, 1.0, -0.0, 0.0, -1.0, np.inf, -np.inf]


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpys_minimum_and_maximum_keep_nan_and_the_second_of_ties(backend):
    x = np.repeat(np.array(_EDGES), len(_EDGES))
    y = np.tile(np.array(_EDGES), len(_EDGES))
    got = srcgrad.jit(elementwise_extremes, backend=backend)(x, y)
    for g, e in zip(got, elementwise_extremes(x, y)):
        assert _all_bits(g) == _all_bits(e)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rows", [[[-0.0, 0.0], [0.0, -0.0]], [[1.0, np.nan], [2.0, 0.5]], [[np.nan, 1.0], [0.0, -0.0]],
                                  [[-0.0, -0.0], [0.0, 0.0]]])
def test_numpys_max_and_min_reductions(backend, rows):
    m = np.array(rows)
    got = srcgrad.jit(reduced_extremes, backend=backend)(m)
    for g, e in zip(got, reduced_extremes(m)):
        assert _all_bits(g) == _all_bits(e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pythons_min_and_max_of_floats(backend):
    f = srcgrad.jit(scalar_extremes, backend=backend)
    for a in _EDGES:
        for b in _EDGES:
            assert [_bits(v) for v in f(a, b)] == [_bits(v) for v in scalar_extremes(a, b)], (a, b)


# ------------------------------------------------ a custom vjp's bad cotangent: one error on both backends

@srcgrad.custom_vjp
def doubled(x, v):
    return x * 2.0 + np.sum(v)


@doubled.defvjp
def doubled_vjp(x, v, y, gy):
    return BAD_COTANGENTS[0]


BAD_COTANGENTS = [None]


def uses_doubled(x, v):
    return doubled(x, v) * 3.0


@pytest.mark.parametrize("bad, text", [
    (("oops", np.ones(2)), "the vjp of doubled returned 'oops' where a float is expected"),
    ((1.0j, np.ones(2)), "returned 1j where a float is expected"),
    ((np.ones(2), np.ones(2)), "returned an array of shape (2,) where a number is expected"),
    ((1.0, "many"), "returned 'many' where an array of float64 is expected"),
    ((1.0, np.ones((2, 2))), "returned an array of 2 dimensions where 1 are expected"),
    ((1.0,), "it must return a tuple of 2 cotangents"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_cotangent_is_one_clear_error(bad, text, backend):
    BAD_COTANGENTS[0] = bad
    try:
        with pytest.raises(srcgrad.TypingError) as got:
            srcgrad.grad(uses_doubled, wrt=(0, 1), backend=backend)(1.0, np.ones(2))
    finally:
        BAD_COTANGENTS[0] = None
    assert text in str(got.value)


# ---------------------------------------------------------------- writes into read-only arguments

def write_first(x, go):
    if go:
        x[0] = 5.0
    return x[1] * 2.0


def write_slice(x):
    x[0:2] = 1.0
    return x[2]


def _read_only_arrays():
    flagged = np.arange(3.0)
    flagged.flags.writeable = False
    return [flagged, np.broadcast_to(np.arange(3.0), (3,)), np.frombuffer(np.arange(3.0).tobytes())]


@pytest.mark.parametrize("backend", BACKENDS)
def test_writing_a_read_only_argument_raises_as_numpy_does(backend):
    for x in _read_only_arrays():
        before = x.copy()
        with pytest.raises(ValueError, match="assignment destination is read-only"):
            srcgrad.jit(write_first, backend=backend)(x, True)
        with pytest.raises(ValueError, match="assignment destination is read-only"):
            srcgrad.jit(write_slice, backend=backend)(x)
        assert srcgrad.jit(write_first, backend=backend)(x, False) == 2.0      # the write is not reached
        np.testing.assert_array_equal(x, before)
        with pytest.raises(ValueError, match="assignment destination is read-only"):
            srcgrad.grad(write_slice, backend=backend)(x)


def zeros_like_keeps_the_dtype(v):
    return np.zeros_like(v)


@pytest.mark.parametrize("backend", ["python", "llvm"])
@pytest.mark.parametrize("arr", [np.array([1, 2]), np.array([True, False]), np.array([1.0], np.float32)])
def test_new_arrays_keep_the_dtype_on_both_backends(backend, arr):
    """np.zeros_like of an int or bool array is an int or bool array (the python backend once made float64)."""
    out = srcgrad.jit(zeros_like_keeps_the_dtype, backend=backend)(arr)
    assert out.dtype == arr.dtype and not out.any()


def new_arrays_with_dtypes(x):
    return (np.ones((2, 2), dtype=int), np.full(3, 2.5, dtype=np.float32), np.zeros_like(x, dtype=bool),
            np.ones_like(x, dtype=float), np.zeros(2, dtype=x.dtype), np.zeros(2, dtype="int64"))


@pytest.mark.parametrize("backend", ["python", "llvm"])
def test_new_arrays_take_a_dtype(backend):
    x = np.ones(3, dtype=np.float32)
    for got, want in zip(srcgrad.jit(new_arrays_with_dtypes, backend=backend)(x), new_arrays_with_dtypes(x)):
        assert got.dtype == want.dtype and np.array_equal(got, want)
