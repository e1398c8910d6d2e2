"""Functions the compiler must refuse with a clear error (kept in a file so that the error
can point at their source lines)."""
import math

import numpy as np


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


def uses_lambda(x):
    f = lambda t: t * 2  # noqa: E731
    return f(x)


def uses_list_comprehension(x):
    return sum([x * i for i in range(3)])


def unknown_callable(x):
    return math.gamma(x)


def reads_written_array_in_if(x):
    a = np.zeros(2)
    a[0] = x
    if x > 0:
        b = a[0] * 2.0
    else:
        b = x
    a[0] = 0.0
    return b


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


def whole_array_read_of_array_written_in_loop(x, v):
    buf = np.zeros(3)
    a = 0.0
    for i in range(2):
        buf[0] = math.tanh(v[0] * x)
        a = a + np.dot(v, buf)
    return a


def whole_array_read_in_loop_of_array_written_before(x, v):
    buf = np.zeros(3)
    buf[0] = math.tanh(v[0] * x)
    s = 0.0
    for i in range(2):
        s += np.dot(v, buf)
    return s
