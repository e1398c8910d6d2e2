"""Unsupported code raises UnsupportedSyntaxError (a SyntaxError) naming the file, the line,
the column, showing the line with a caret and saying what to do instead; type problems raise
TypingError; never an internal traceback."""
import inspect

import numpy as np
import pytest

import srcgrad

from . import bad_programs as bad


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


@pytest.mark.parametrize("fn,marker,instead", [
    (bad.uses_try, "try:", "check inputs"),
    (bad.calls_one_of_two_lambdas, "first(x)", "define it with def"),
    (bad.uses_with, "with open", "move the `with` block"),
    (bad.uses_list_comprehension, "sum([", "sum(... for i in range(n))"),
    (bad.global_write, "global COUNTER", "pass the value in"),
    (bad.class_inside, "class A", "define the class outside"),
])
def test_unsupported_constructs(fn, marker, instead):
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(1.0)
    err = info.value
    assert isinstance(err, SyntaxError) and isinstance(err, srcgrad.SrcGradError)
    text = str(err)
    assert err.filename.endswith("bad_programs.py")
    assert err.lineno == _line_of(fn, marker)
    assert marker.strip() in text and "^" in text
    assert instead in text


def test_unknown_callable_names_it():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="calling math.gamma"):
        srcgrad.jit(bad.unknown_callable)(1.0)


def test_maybe_unbound_variable():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="'y' may be used before it has a value"):
        srcgrad.jit(bad.maybe_unbound)(1.0)


def test_grad_needs_a_scalar_result():
    with pytest.raises(srcgrad.TypingError, match="use srcgrad.vjp|Use srcgrad.vjp"):
        srcgrad.grad(bad.returns_two_values)(1.0)


def scaled_sum(x, n):
    return np.sum(x * n)


def test_gradient_of_an_int_argument_is_an_error():
    def f(x, n):
        return x * n
    with pytest.raises(srcgrad.TypingError, match="argument 'n' of type int:"):
        srcgrad.grad(f, wrt=1)(1.0, 3)
    with pytest.raises(srcgrad.TypingError, match="argument 'n' of type bool:"):
        srcgrad.grad(f, wrt=1)(1.0, True)
    with pytest.raises(srcgrad.TypingError, match="argument 'n' of type int64 array:"):
        srcgrad.grad(scaled_sum, wrt=1)(1.0, np.arange(3))


def test_unsupported_argument_types():
    with pytest.raises(srcgrad.TypingError, match="argument 'x' of uses_try is a str"):
        srcgrad.grad(bad.uses_try)("a")
    with pytest.raises(srcgrad.TypingError, match="dtype complex128"):
        srcgrad.grad(bad.uses_try)(np.ones(2, dtype=complex))


def test_float_index_is_a_typing_error():
    with pytest.raises(srcgrad.TypingError, match="array indices must be integers, got f64"):
        srcgrad.jit(bad.index_with_float)(np.ones(3))


def test_string_constant():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="the constant 'hello'"):
        srcgrad.jit(bad.string_constant)(1.0)


def test_function_without_source_file():
    namespace = {}
    exec("def f(x):\n    return x * 2\n", namespace)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="inspect.getsource"):
        srcgrad.grad(namespace["f"])(1.0)


def test_wrong_argument_count_and_bad_wrt():
    def f(x, y):
        return x * y
    with pytest.raises(TypeError, match="missing a required argument: 'y'"):
        srcgrad.grad(f)(1.0)
    with pytest.raises(ValueError, match="no argument named 'z'"):
        srcgrad.grad(f, wrt="z")
    with pytest.raises(ValueError, match="wrt=5"):
        srcgrad.grad(f, wrt=5)


def test_ir_before_first_call_says_what_to_do():
    with pytest.raises(RuntimeError, match="call it once"):
        srcgrad.grad(bad.uses_try).ir


def float_range_sum(x, step):
    return np.sum(np.arange(0.1, x, step))


def test_float_arange_on_both_backends():
    for backend in ("python", "llvm"):
        f = srcgrad.jit(float_range_sum, backend=backend)
        for x, step in [(1.0, 0.3), (2.05, 0.1), (0.0, 0.5), (-1.0, -0.25)]:
            assert f(x, step) == float_range_sum(x, step)
        with pytest.raises(ZeroDivisionError):
            f(1.0, 0.0)


def test_recursion_is_a_clear_error():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="recursion"):
        srcgrad.grad(bad.recursive)(3.0)


def test_a_path_without_return_is_a_clear_error():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="ends without `return`") as e:
        srcgrad.grad(bad.returns_on_some_paths)(2.0)
    assert "bad_programs.py" in str(e.value)


# each refusal names the construct in the user's words, at the user's line, with a caret
@pytest.mark.parametrize("fn,args,error,marker,says", [
    (bad.async_function, (1.0,), srcgrad.UnsupportedSyntaxError, "async def async_function", "`async def`"),
    (bad.uses_eval, (1.0,), srcgrad.UnsupportedSyntaxError, "eval(\"", "calling eval"),
    (bad.uses_exec, (1.0,), srcgrad.UnsupportedSyntaxError, "exec(\"", "calling exec"),
    (bad.generator, (1.0,), srcgrad.UnsupportedSyntaxError, "yield x", "`yield` makes generator a generator"),
    (bad.generator_that_returns_first, (1.0,), srcgrad.UnsupportedSyntaxError, "yield x", "generators"),
    (bad.delegating_generator, (1.0,), srcgrad.UnsupportedSyntaxError, "yield from", "`yield from`"),
    (bad.uses_eigenvalues, (np.eye(2),), srcgrad.UnsupportedSyntaxError, "np.linalg.eigvalsh",
     "calling np.linalg.eigvalsh"),
    (bad.numpy_python_function, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "np.linalg.pinv",
     "calling np.linalg.pinv"),
    (bad.standard_library_function, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "statistics.fmean",
     "calling statistics.fmean (yet)"),
    (bad.array_method, (np.ones(2),), srcgrad.UnsupportedSyntaxError, "x.tolist()", "x.sum()"),
    (bad.arctan_of_two, (1.0, 2.0), srcgrad.TypingError, "np.arctan(b, a)",
     "np.arctan takes one argument (2 given); for the angle of the point (x, y) write np.arctan2(y, x)"),
    (bad.math_atan_of_two, (1.0, 2.0), srcgrad.TypingError, "math.atan(b, a)", "write math.atan2(y, x)"),
    (bad.sin_of_nothing, (1.0,), srcgrad.TypingError, "np.sin()", "np.sin takes one argument (0 given)"),
    (bad.max_of_an_array, (np.ones(2),), srcgrad.TypingError, "max(x)", "np.max(x)"),
    (bad.mixed_index_arrays, (np.ones((2, 2)),), srcgrad.UnsupportedSyntaxError, "x[[0, 1], 1:]",
     "mixture of index arrays with slices"),
    (bad.float_index_array, (np.ones(2),), srcgrad.TypingError, "x[x * 2.0]", "must be of integer (or boolean)"),
    (bad.array_in_condition, (np.ones(2),), srcgrad.TypingError, "if x:", "no single truth value"),
    (bad.array_or, (np.ones(2), np.ones(2)), srcgrad.TypingError, "x or y", "no single truth value for `or`"),
    (bad.branches_of_different_types, (np.ones(2), 1.0), srcgrad.TypingError, "x if c", "are float64 array and float: give both the same type"),
    (bad.uses_a_pair_as_one_value, (1.0,), srcgrad.TypingError, "pair(x) + 1.0",
     "unsupported operand type(s) for +: 'tuple' and 'float'"),
    (bad.uses_walrus, (1.0,), srcgrad.UnsupportedSyntaxError, ":=", "assignment expression `:=`"),
    (bad.sorts_in_place, (np.ones(3),), srcgrad.UnsupportedSyntaxError, "x.sort()", "x = np.sort(x)"),
    (bad.uses_fft, (np.ones(3),), srcgrad.UnsupportedSyntaxError, "np.fft.fft(x)", "docs/compiler.md's tables"),
])
def test_refusals_name_the_construct_and_the_line(fn, args, error, marker, says):
    with pytest.raises(error) as info:
        srcgrad.jit(fn)(*args)
    text = str(info.value)
    assert says in text
    assert info.value.loc.line == _line_of(fn, marker)
    assert marker in text and "^" in text


def test_return_of_what_a_called_function_returns():
    for backend in ("python", "llvm"):
        assert srcgrad.jit(bad.returns_what_a_helper_returns, backend=backend)(1.5) == (1.5, 3.0)


def test_what_to_write_instead_is_said_only_of_refused_node_types():
    """A node type with a handler is never refused by its type, so advice kept for it is stale."""
    from srcgrad.frontend.context import WHAT_INSTEAD, WORDS
    from srcgrad.frontend.lower import EXPRESSIONS, STATEMENTS
    handled = set(STATEMENTS) | set(EXPRESSIONS)
    assert not handled & set(WHAT_INSTEAD), handled & set(WHAT_INSTEAD)
    assert not handled & set(WORDS), handled & set(WORDS)


def test_a_library_function_is_refused_at_the_users_call_saying_why():
    if bad.scipy_special is None:
        pytest.skip("needs scipy")
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as e:
        srcgrad.grad(bad.calls_logsumexp)(np.ones(3))
    text = str(e.value)
    assert "calling logsumexp without its argument 'axis': its default is None" in text
    assert f"line {_line_of(bad.calls_logsumexp, 'return scipy_special.logsumexp(x)')}" in text and "pass axis= explicitly" in text
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as e:
        srcgrad.grad(bad.calls_logsumexp_with_every_argument)(np.ones(3))
    text = str(e.value)
    assert text.startswith("srcgrad does not support calling scipy_special.logsumexp (yet): its source (")
    assert "site-packages" in text or "dist-packages" in text      # where in scipy it stopped
    assert f"line {_line_of(bad.calls_logsumexp_with_every_argument, 'logsumexp(x,')}" in text
    assert text.count("srcgrad does not support") == 1
