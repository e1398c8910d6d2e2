"""Programs covering each construct of API.md §1 that the compiler handles so far, with
arguments to differentiate at. Shared by the gradient, jit and source tests."""
import math

import numpy as np


def scalar_expression(x, y):
    return math.sin(x) * y + x ** 2 / (1.0 + y * y) - math.exp(-x) + math.sqrt(y) * math.log(x)


def all_unary(x):
    s = math.sin(x) + math.cos(x) + math.tan(x) + math.asin(x / 4) + math.acos(x / 4) + math.atan(x)
    s += math.sinh(x) + math.cosh(x) + math.tanh(x) + math.exp(x) + math.expm1(x) + math.log(x)
    s += math.log1p(x) + math.log2(x) + math.log10(x) + math.sqrt(x) + math.erf(x) + math.fabs(-x)
    s += np.sin(x) + np.tanh(x) + np.exp(x) + np.log(x) + np.sqrt(x) + np.arctan(x)
    return s


def binary_functions(x, y):
    return math.atan2(y, x) + math.hypot(x, y) + math.pow(x, y) + max(x, y) * min(x, 2.0) + abs(x - y) + (x % 1.5)


def branch(x):
    if x > 0.5:
        y = x * x
    elif x > 0:
        y = math.sin(x)
    else:
        y = -x
    return y * 3.0


def early_return(x, w):
    if x > 1.0:
        return x * w
    z = x - w
    if z < 0:
        return z * z
    return math.exp(z)


def conditional_expression(x):
    return x * 2.0 if x > 0 else x ** 3


def for_accumulator(x, n):
    s = 0
    for i in range(n):
        s += math.sin(x * i) * math.exp(-1e-3 * i)
    return s + x * x


def for_with_step(x):
    p = 1.0
    for k in range(10, 1, -3):
        p = p * (x + k)
    return p


def nested_loops(x):
    s = 0.0
    for i in range(3):
        t = x
        for j in range(i + 1):
            t = t * x + j
        s = s + t
    return s


def while_loop(x):
    y = x
    n = 0
    while y < 100.0:
        y = y * 1.7 + 0.1
        n += 1
    return y + n


def array_loop(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.tanh(x[i] * w)
    return s


def matrix_loop(a, v):
    s = 0.0
    for i in range(a.shape[0]):
        row = 0.0
        for j in range(len(v)):
            row += a[i, j] * v[j]
        s += row * row
    return s


def tuple_unpacking(x, y):
    a, b = x * y, x + y
    a, b = b, a
    return a * 2.0 - b


def int_float_mixing(x, k):
    s = 0
    for i in range(k):
        s = s + i
    s = s * x
    return s / k + k // 2 + 7 % 3


def loop_in_branch(x):
    if x > 0:
        for i in range(3):
            x = x * 1.5 - i
    else:
        x = x * 0.5
    return x


def branch_in_loop(x):
    s = 0.0
    for i in range(6):
        if i % 2 == 0:
            s = s + x * i
        else:
            s = s * x
    return s


def with_assert_and_print(x):
    assert x > 0, "x must be positive"
    print("ignored in compiled code")
    return x * x


CASES = {
    # name: (function, args, wrt)
    "scalar_expression": (scalar_expression, (1.3, 0.7), (0, 1)),
    "all_unary": (all_unary, (0.6,), 0),
    "binary_functions": (binary_functions, (1.3, 0.7), (0, 1)),
    "branch_then": (branch, (0.8,), 0),
    "branch_elif": (branch, (0.3,), 0),
    "branch_else": (branch, (-0.3,), 0),
    "early_return_1": (early_return, (1.5, 0.3), (0, 1)),
    "early_return_2": (early_return, (0.2, 0.5), (0, 1)),
    "early_return_3": (early_return, (0.9, 0.5), (0, 1)),
    "conditional_expression": (conditional_expression, (-0.7,), 0),
    "for_accumulator": (for_accumulator, (0.3, 50), 0),
    "for_zero_trips": (for_accumulator, (0.3, 0), 0),
    "for_with_step": (for_with_step, (0.4,), 0),
    "nested_loops": (nested_loops, (0.9,), 0),
    "while_loop": (while_loop, (1.5,), 0),
    "array_loop": (array_loop, (np.array([0.5, -1.0, 2.0]), 0.7), (0, 1)),
    "matrix_loop": (matrix_loop, (np.arange(6.0).reshape(2, 3) / 7, np.array([0.3, -0.2, 0.9])), ("a", "v")),
    "tuple_unpacking": (tuple_unpacking, (1.1, 0.4), (0, 1)),
    "int_float_mixing": (int_float_mixing, (0.8, 5), 0),
    "loop_in_branch": (loop_in_branch, (0.8,), 0),
    "loop_in_branch_else": (loop_in_branch, (-0.8,), 0),
    "branch_in_loop": (branch_in_loop, (0.9,), 0),
    "with_assert_and_print": (with_assert_and_print, (1.5,), 0),
}


def _helper(a, b):
    if a > b:
        return a * b, a
    return a + b, b


def _square(t):
    return t * t


def calls_helpers(x, y):
    p, q = _helper(x, y)
    return _square(p) + math.sin(q)


CASES["calls_helpers_1"] = (calls_helpers, (1.5, 0.5), (0, 1))
CASES["calls_helpers_2"] = (calls_helpers, (0.2, 0.5), (0, 1))


def thirty_lines(x, w, n):
    """The function of benchmarks/compile_time.py."""
    s = 0.0
    prev = 0.0
    for i in range(n):
        t = x * i + w
        if t > 1.0:
            u = math.sin(t) * math.exp(-0.01 * i)
        elif t > 0.0:
            u = t * t - 0.5 * t
        else:
            u = -math.tanh(t)
        prev = 0.9 * prev + 0.1 * u
        s += prev * prev + math.log1p(abs(u))
    k = 0
    y = s
    while y > 1.0 and k < 20:
        y = math.sqrt(y) + 0.01 * w
        k += 1
    a = y * x - w / (1.0 + x * x)
    b = max(a, 0.0) + min(a, 0.0) * 0.1
    c = math.atan2(b, 1.0 + w * w)
    d = math.hypot(c, x) + math.cos(w) ** 2
    e = d / (1.0 + abs(c))
    return e + 0.5 * s


CASES["thirty_lines"] = (thirty_lines, (0.31, 0.7, 50), (0, 1))   # 0.3 sits on the branch t > 1.0
CASES["thirty_lines_negative"] = (thirty_lines, (-0.05, -0.2, 30), (0, 1))


def zero_trip_overwrite(x, y):
    """Found by the random-program test: a zero-trip loop passes x through unchanged."""
    for i1 in range(0):
        x = 0.5
    return math.tanh(0.5) + x * y


CASES["zero_trip_overwrite"] = (zero_trip_overwrite, (0.3, 1.0), (0, 1))


def with_continue(x):
    s = 0.0
    for i in range(8):
        if i % 3 == 0:
            continue
        s += math.sin(x * i)
    return s


def with_break(x):
    s = 0.0
    for i in range(20):
        s = s + x * i
        if s > 5.0:
            break
        s = s * 1.1
    return s


def while_with_break(x):
    y = x
    k = 0
    while k < 100:
        y = y * 1.3 + 0.2
        if y > 10.0:
            break
        k += 1
    return y * k


def nested_break(x):
    total = 0.0
    for i in range(4):
        t = x
        for j in range(10):
            t = t * x + i
            if t > 3.0:
                break
        total += t
    return total


CASES["with_continue"] = (with_continue, (0.7,), 0)
CASES["with_break"] = (with_break, (0.4,), 0)
CASES["with_break_never"] = (with_break, (0.001,), 0)
CASES["while_with_break"] = (while_with_break, (0.5,), 0)
CASES["nested_break"] = (nested_break, (1.2,), 0)


def whole_arrays(x, w):
    y = np.tanh(x * w + 0.5) - np.exp(-x * x)
    return np.sum(y * y) + np.mean(x) * w


def logistic_loss(X, y, w):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z))) + 0.5 * 0.1 * np.dot(w, w)


def matrix_ops(a, b):
    c = a @ b.T
    return np.sum(np.sin(c) * 2.0) + np.sum(np.sum(a, axis=0) * np.sum(b, axis=1)[0])


def broadcasting(m, v, s):
    return np.sum((m + v) * s - np.maximum(m, v) + np.where(m > v, m * v, 0.0))


_rng = np.random.default_rng(1)
CASES["whole_arrays"] = (whole_arrays, (np.array([0.3, -1.2, 0.8]), 0.7), (0, 1))
CASES["logistic_loss"] = (logistic_loss, (_rng.standard_normal((5, 3)), np.sign(_rng.standard_normal(5)),
                                          _rng.standard_normal(3)), ("X", "w"))
CASES["matrix_ops"] = (matrix_ops, (_rng.standard_normal((2, 3)), _rng.standard_normal((4, 3))), (0, 1))
CASES["broadcasting"] = (broadcasting, (_rng.standard_normal((3, 2)), _rng.standard_normal(2), 1.7), (0, 1, 2))


def fill_array(x, w):
    """An array loop with in-place writes."""
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * w + math.sin(x[i])
    return np.sum(y * y)


def recurrence(x, a):
    """y[i] reads y[i - 1]: a written array read back inside the loop (taped reads)."""
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = a * y[i - 1] + x[i]
    return np.sum(y) + y[n - 1] * y[n - 1]


def overwrite(x):
    """A value that was used, then overwritten: its old value must not leak into the gradient."""
    a = np.zeros(2)
    a[0] = x * x
    b = a[0] * 3.0
    a[0] = math.sin(x)
    a[1] += a[0] * b
    return a[0] + a[1]


def writes_argument(x, w):
    """Writes into an argument array (the caller sees it, as in Python)."""
    x[0] = x[0] * w
    return np.sum(x * x)


def matrix_fill(a):
    m, n = a.shape[0], a.shape[1]
    out = np.zeros((n, m))
    for i in range(m):
        for j in range(n):
            out[j, i] = a[i, j] * (i + 1)
    return np.sum(out * out)


def accumulate_into_array(x):
    acc = np.zeros(3)
    for i in range(x.shape[0]):
        acc[i % 3] += x[i] * x[i]
    return acc[0] * acc[1] + acc[2]


CASES["fill_array"] = (fill_array, (np.array([0.5, -1.0, 2.0]), 0.7), (0, 1))
CASES["recurrence"] = (recurrence, (np.array([0.5, -1.0, 2.0, 0.3]), 0.8), (0, 1))
CASES["overwrite"] = (overwrite, (0.7,), 0)
CASES["matrix_fill"] = (matrix_fill, (np.arange(6.0).reshape(2, 3) / 5,), 0)
CASES["accumulate_into_array"] = (accumulate_into_array, (np.array([0.5, -1.0, 2.0, 0.3, 1.1]),), 0)


def swap_in_loop(x, y):
    """Found by the random-program test: the yield reads the old x after x's new value exists."""
    for i1 in range(1):
        y = x
        x += math.tanh(0.5)
    return math.tanh(0.5) + x * y


CASES["swap_in_loop"] = (swap_in_loop, (1.0, 1.0), (0, 1))


def shared_gradients(x):
    """x + x gives one gradient to two operands; in-place updates must not mix them."""
    y = x + x
    z = np.zeros(3)
    for i in range(3):
        z[i] = y[i] * 2.0 + x[i]
    z[0] += y[1]
    return np.sum(z * z) + np.sum(y * x)


CASES["shared_gradients"] = (shared_gradients, (np.array([0.5, -1.0, 2.0]),), 0)
CASES["recurrence_while"] = (recurrence, (np.array([0.1, 0.2]), -1.5), (0, 1))


def rotate_in_loop(x, y, v):
    """Found by the random-program test: the loop's yield is a parallel move (x, y = y, v[0])."""
    for i1 in range(2):
        x = y
        y = v[0] * x
    return x * y


CASES["rotate_in_loop"] = (rotate_in_loop, (1.0, 0.7, np.array([0.4, -0.9])), (0, 1, 2))


def return_in_loop(x):
    s = 0.0
    for i in range(10):
        s = s + x * i
        if s > 3.0:
            return s * s
    return -s


def return_in_while(x):
    y = x
    while True:
        y = y * 1.5
        if y > 4.0:
            return math.log(y) + x
    return 0.0


def return_in_nested_loop(x):
    for i in range(3):
        for j in range(4):
            t = x * (i + 1) * (j + 1)
            if t > 2.5:
                return t * x, i
    return x, -1


def return_first_found(x, v):
    for i in range(v.shape[0]):
        if v[i] > 0.5:
            return v[i] * x
    return x


CASES["return_in_loop"] = (return_in_loop, (0.23,), 0)
CASES["return_in_loop_never"] = (return_in_loop, (0.01,), 0)
CASES["return_in_while"] = (return_in_while, (0.7,), 0)
CASES["return_first_found"] = (return_first_found, (1.3, np.array([0.1, 0.7, 0.9])), (0, 1))


def return_in_nested_loop_value(x):
    t, i = return_in_nested_loop(x)
    return t + i


CASES["return_in_nested_loop"] = (return_in_nested_loop_value, (0.45,), 0)
CASES["return_in_nested_loop_late"] = (return_in_nested_loop_value, (0.3,), 0)


def reductions(x, m):
    return (np.prod(x) + np.max(x) * np.min(x) + np.sum(np.prod(m, axis=1)) + np.sum(np.max(m, axis=0))
            + np.sum(np.outer(x, x)) * 0.1 + np.sum(np.arange(3) * x))


def prod_with_zero(x):
    return np.prod(x) + np.max(x)


CASES["reductions"] = (reductions, (np.array([0.5, -1.2, 2.0]), np.array([[0.3, -0.7, 1.1], [2.0, 0.4, -0.2]])),
                       (0, 1))
CASES["prod_with_zero"] = (prod_with_zero, (np.array([0.5, 0.0, 2.0]),), 0)


def slices(x, m):
    head = x[:2]
    tail = x[1:]
    row = m[1]
    col = m[:, 0]
    every_other = x[::2]
    return np.sum(head * tail) + np.dot(row, row) + np.sum(col * x[0:2]) + np.sum(every_other) * m[0, 1]


def slice_writes(x, w):
    y = np.zeros(4)
    y[1:3] = x[:2] * w
    y[0] = w
    y[3:] = 2.0 * w
    y[1:] += x
    return np.sum(y * y)


def rows_of_matrix(m, v):
    total = 0.0
    for i in range(m.shape[0]):
        r = m[i]
        total += np.dot(r, v) ** 2
    return total


_r2 = np.random.default_rng(2)
CASES["slices"] = (slices, (np.array([0.5, -1.2, 2.0]), _r2.standard_normal((2, 3))), (0, 1))
CASES["slice_writes"] = (slice_writes, (np.array([0.5, -1.2, 2.0]), 0.7), (0, 1))
CASES["rows_of_matrix"] = (rows_of_matrix, (_r2.standard_normal((3, 2)), np.array([0.3, -0.8])), (0, 1))


def for_over_array(x, m):
    s = 0.0
    for v in x:
        s += math.sin(v) * v
    for row in m:
        s += np.sum(row * row)
    return s


CASES["for_over_array"] = (for_over_array, (np.array([0.5, -1.2, 2.0]), _r2.standard_normal((2, 3))), (0, 1))


WEIGHTS = np.array([0.5, -1.0, 2.0])


def uses_global_array(x):
    return np.sum(WEIGHTS * np.sin(x)) + WEIGHTS[1] * x[0]


CASES["uses_global_array"] = (uses_global_array, (np.array([0.3, 0.1, -0.7]),), 0)


# found by tests/fuzz: an `if` whose nested `if` ends the iteration or the function on some
# path only; the statements after the outer `if` ran on every path
def nested_partial_continue(x, y):
    s = 0.0
    for i in range(3):
        if x > 0.5:
            if y > 0.5:
                continue
        s += math.sin(x * y + i)
    return s


def nested_partial_break(x, y):
    s = 0.0
    for i in range(3):
        if x > 0.5:
            if y * i > 0.5:
                break
        s += math.sin(x * y + i)
    return s


def nested_partial_return(x, y):
    if x > 0.0:
        if y > 0.0:
            return math.tanh(x) + y
    a = x * y
    return math.tanh(a) + x * y


CASES["nested_partial_continue"] = (nested_partial_continue, (0.7, 0.8), (0, 1))
CASES["nested_partial_continue_falls"] = (nested_partial_continue, (0.7, 0.3), (0, 1))
CASES["nested_partial_break"] = (nested_partial_break, (0.7, 0.9), (0, 1))
CASES["nested_partial_return"] = (nested_partial_return, (0.7, 0.8), (0, 1))
CASES["nested_partial_return_falls"] = (nested_partial_return, (0.7, -0.8), (0, 1))


# found by fuzzing: a `return` in a loop under an `if` decided while compiling (the condition
# is constant): the return slot is never stored into, and stays an unused bool
def return_under_a_constant_false_if(x, y):
    for i in range(3):
        if -0.7 > 0.0:
            return x * y
    return x * y + 1.0


CASES["return_under_a_constant_false_if"] = (return_under_a_constant_false_if, (0.7, 0.8), (0, 1))


# the python backend named the inner loop's carried array after the outer loop's (u = un before
# the inner loop), so the inner loop read the new array where it meant the old one: a wrong value
# in jit too (issue 12's heat stencil)
def stencil_into_a_fresh_copy(u0, k):
    u = u0.copy()
    for step in range(3):
        un = u.copy()
        for i in range(1, u.shape[0] - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = un
    return np.sum(u * u)


CASES["stencil_into_a_fresh_copy"] = (stencil_into_a_fresh_copy, (np.array([0.5, -1.0, 2.0, 0.3, 1.1, -0.4]), 0.2),
                                      (0, 1))


# forward mode gave y = x.copy() the tangent of x itself, then wrote y's tangent in place: the
# tangent of x (and the caller's tangent array) changed with it
def write_into_a_copy(x):
    y = x.copy()
    y[0] = 5.0
    return np.sum(y * y) + np.sum(x * x)


CASES["write_into_a_copy"] = (write_into_a_copy, (np.array([1.0, 2.0, 3.0]),), 0)
