"""A view (t = a[1:], a.T) and the array it views are one buffer, as in Python: compiled code
reads what was written through either name, and the derivative passes, whose array versions
cannot follow such a write yet, refuse it clearly instead of returning a wrong gradient."""
import numpy as np
import pytest

import srcgrad


def read_view_after_base_write(x):
    a = np.zeros((2, 2))
    a[0, 1] = x
    t = a.T
    s = t[1, 0] * x
    a[0, 1] = x * x
    s += t[1, 0] * x
    return s


def read_slice_after_base_write(x):
    a = np.zeros(3)
    a[1] = x
    t = a[1:]
    s = t[0] * x
    a[1] = x * x
    s += t[0] * x
    return s


def read_base_after_view_write(x):
    a = np.zeros(3)
    s = a[1:]
    s[0] = x * x
    return a[1] * x


def sum_argument_after_view_write(x, v):
    s = v[1:]
    s[0] = x * x
    return np.sum(v) * x


def views_read_before_any_write(x):
    a = np.zeros(3)
    a[1] = x
    t = a[1:]
    return np.sum(t * t)


CASES = [(read_view_after_base_write, (1.5,)), (read_slice_after_base_write, (1.5,)),
         (read_base_after_view_write, (1.5,)), (sum_argument_after_view_write, (1.5, np.ones(3)))]


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("backend", ["python", "llvm"])
@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_compiled_code_sees_writes_through_either_name(f, args, backend):
    assert srcgrad.jit(f, backend=backend)(*_copy(args)) == f(*_copy(args))


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_derivatives_refuse_what_their_versions_cannot_follow(f, args):
    for transform in (lambda: srcgrad.grad(f)(*_copy(args)), lambda: srcgrad.jvp(f, _copy(args), _copy(args))):
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="cannot differentiate this yet: .* may share memory") as e:
            transform()
        assert f.__name__ in str(e.value) and "^" in str(e.value)


def test_a_view_read_before_any_later_write_is_differentiated():
    g = srcgrad.grad(views_read_before_any_write)(1.5)
    assert g == pytest.approx(2 * 1.5)
