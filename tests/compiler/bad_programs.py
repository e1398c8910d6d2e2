"""Functions the compiler must refuse with a clear error (kept in a file so that the error
can point at their source lines)."""
import math
import statistics

import numpy as np

try:
    import scipy.special as scipy_special
except ImportError:            # scipy is a test extra: the tests that call it skip
    scipy_special = None


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = 0.0
    return y


def uses_with(x):
    with open("f") as f:
        y = x
    return y


def uses_list_comprehension(x):
    n = int(x) + 2
    return sum([x * i for i in range(n)])


def unknown_callable(x):
    return math.gamma(x)


def global_write(x):
    global COUNTER
    COUNTER = 1
    return x


def returns_two_values(x):
    return x, x * 2


def maybe_unbound(x):
    if x > 0:
        y = x
    return y


def string_constant(x):
    s = "hello"
    return x


def class_inside(x):
    class A:
        pass
    return x


def bad_type_mix(x):
    a = np.ones(3)
    return x


def index_with_float(x):
    return x[0.5]


def recursive(x):
    if x < 1:
        return x
    return recursive(x / 2)


def returns_on_some_paths(x):
    if x > 0.0:
        if x > 1.0:
            return x


async def async_function(x):
    return x


def uses_eval(x):
    return eval("x * x")


def uses_exec(x):
    exec("y = x")
    return x


def generator(x):
    yield x


def generator_that_returns_first(x):
    return x
    yield x  # noqa: unreachable, but it makes the function a generator


def delegating_generator(x):
    y = yield from range(3)
    return y


def uses_eigenvalues(x):
    return np.linalg.eigvalsh(x)       # np.linalg.det compiles (issue 11); eigenvalues do not


def arctan_of_two(a, b):
    return np.arctan(b, a)


def math_atan_of_two(a, b):
    return math.atan(b, a)


def sin_of_nothing(x):
    return np.sin()


def max_of_an_array(x):
    return max(x)


def mixed_index_arrays(x):
    return np.sum(x[[0, 1], 1:])


def float_index_array(x):
    return np.sum(x[x * 2.0])


def array_in_condition(x):
    if x:
        return 1.0
    return 0.0


def array_or(x, y):
    return np.sum(x or y)


def branches_of_different_types(x, c):
    return x if c > 0.0 else 0.0


def numpy_python_function(x):
    return np.linalg.pinv(x)


def array_method(x):
    return np.sum(x.tolist())


def sorts_in_place(x):
    x.sort()
    return np.sum(x)


def uses_fft(x):
    return np.sum(np.fft.fft(x).real)


def uses_walrus(x):
    return (y := x * 2) + y


def standard_library_function(x):
    return statistics.fmean(x)


def pair(x):
    return x, 2.0 * x


def uses_a_pair_as_one_value(x):
    return pair(x) + 1.0


def returns_what_a_helper_returns(x):
    return pair(x)


pair_of_lambdas = (lambda t: t * t, lambda t: t)      # two lambdas on one line: which one is called?


def calls_one_of_two_lambdas(x):
    first = pair_of_lambdas[0]
    return first(x) + 1.0


def calls_logsumexp(x):
    return scipy_special.logsumexp(x)


def calls_logsumexp_with_every_argument(x):
    return scipy_special.logsumexp(x, axis=0, b=x, keepdims=False, return_sign=False)
