"""The functions whose generated gradients docs/adjoint-source.md shows (one under
``checkpoint=3``: each entry may end with the options of ``srcgrad.grad``, and
``transform``, another transformation than ``grad``: the last one is a Hessian).

Regenerate the page with:  python docs/examples/make_adjoint_doc.py
(tests/compiler/test_adjoint_doc.py fails when the page is out of date)."""
import math

import numpy as np


def scalar_expression(x, y):
    return math.sin(x) * y + x * x / y


def with_if(x):
    if x > 0.0:
        y = x * x
    else:
        y = -x
    return 3.0 * y


def loop_accumulator(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i)
    return s


def with_while(x):
    y = x
    while y < 10.0:
        y = y * y + 1.0
    return y


def iterated_map(x, n):
    s = x
    for i in range(n):
        s = math.sin(s) + 0.5 * s
    return s


def array_loop(x, a):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = a * y[i - 1] + np.tanh(x[i])
    return np.sum(y * y)


def chain(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


EXAMPLES = [
    ("A scalar expression", scalar_expression, (1.0, 2.0), (0, 1)),
    ("An `if`", with_if, (0.5,), 0),
    ("A `for` loop with an accumulator", loop_accumulator, (0.3, 10), 0),
    ("A `while` loop", with_while, (1.5,), 0),
    ("An array loop with in-place writes", array_loop, (np.ones(3), 0.5), (0, 1)),
    ("A long loop under `checkpoint=3` (binomial checkpointing)", iterated_map, (0.5, 100), 0,
     {"checkpoint": 3}),
    ("A Hessian: a loop over basis vectors around forward mode over the gradient", chain, (np.ones(3),), 0,
     {"transform": "hessian"}),
]
