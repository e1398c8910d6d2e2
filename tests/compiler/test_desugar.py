"""The desugaring before lowering (frontend/desugar.py): `return` and `break` inside loops,
`for` over an array and `for` with `break` become plain Python, which prints and runs as the
original does; the names it makes up never clash with the user's."""
import ast
import textwrap

import astor
import numpy as np
import pytest

from srcgrad.frontend.desugar import desugar

SEARCH = textwrap.dedent("""\
    def search(x, n):
        s = 0.0
        for i in range(n):
            j = 0
            while j < 4:
                s += x * j
                if s > 5.0:
                    return s, i
                if s > 3.0:
                    break
                j += 1
            s = s * 0.5
        return s, -1
    """)

SEARCH_DESUGARED = textwrap.dedent("""\
    def search(x, n):
        s = 0.0
        retval0 = None
        retval1 = None
        returned0 = False
        range0 = range(n)
        k0 = 0
        broken0 = False
        while not broken0 and k0 < len(range0):
            i = range0[k0]
            k0 = k0 + 1
            j = 0
            broken1 = False
            while not broken1 and j < 4:
                s += x * j
                if s > 5.0:
                    retval0 = s
                    retval1 = i
                    returned0 = True
                    broken1 = True
                    continue
                if s > 3.0:
                    broken1 = True
                    continue
                j += 1
            if returned0:
                broken0 = True
                continue
            s = s * 0.5
        if returned0:
            return retval0, retval1
        return s, -1
    """)


def _run(source, *args):
    scope = {"np": np}
    exec(compile(source, "<test>", "exec"), scope)
    return scope[ast.parse(source).body[0].name](*args)


def test_return_and_break_in_loops_print_as_python():
    assert astor.to_source(desugar(ast.parse(SEARCH))) == SEARCH_DESUGARED


@pytest.mark.parametrize("x, n", [(0.1, 3), (0.5, 2), (0.9, 10), (2.0, 5), (-1.0, 4), (1.0, 0)])
def test_desugared_source_runs_as_the_original(x, n):
    assert _run(SEARCH_DESUGARED, x, n) == _run(SEARCH, x, n)


ROWS = textwrap.dedent("""\
    def rows(m, limit):
        total = 0.0
        for row in m * 2.0:
            for e in row:
                if e > limit:
                    break
                total += e
        return total
    """)


@pytest.mark.parametrize("limit", [-1.0, 0.5, 3.0, 100.0])
def test_for_over_arrays_with_break_run_as_the_original(limit):
    m = np.arange(6.0).reshape(2, 3) / 3.0 - 0.4
    desugared = astor.to_source(desugar(ast.parse(ROWS)))
    assert "range0 = range(len(iter1))" in desugared      # the inner `for` with break, as a while
    assert _run(desugared, m, limit) == _run(ROWS, m, limit)


def test_made_up_names_do_not_clash_with_the_users():
    source = textwrap.dedent("""\
        def f(broken0, k0):
            for i in range(3):
                if broken0 > i:
                    break
                k0 = k0 + i
            return k0
        """)
    desugared = astor.to_source(desugar(ast.parse(source)))
    assert "broken1 = False" in desugared and "k1 = 0" in desugared
    for args in ((0.5, 1), (5.0, 0), (-1.0, 2)):
        assert _run(desugared, *args) == _run(source, *args)


def _return_in_loop_in_branch(x):
    if x > 0:
        for i in range(3):
            if x > i:
                return x * i
    return -x


@pytest.mark.parametrize("x", [0.5, 2.5, 7.0, -1.0, 0.0])
def test_a_loop_with_return_in_a_branch_that_falls_through_compiles(x):
    """Desugared before lowering, the `if returned0: return ...` after the loop is seen as an
    early return of the branch, and the statements after the `if` fold into it."""
    import srcgrad
    assert srcgrad.jit(_return_in_loop_in_branch, backend="python")(x) == _return_in_loop_in_branch(x)


def _users_names_like_made_up_ones(x, broken0, k0):
    retval0 = 0.0
    returned0 = x
    for range0 in range(6):
        if range0 * x > broken0:
            break
        retval0 += returned0 * range0
        k0 = k0 + range0
    for iter0 in range(4):
        if retval0 > 10.0:
            return retval0 * k0
        retval0 = retval0 * 1.5
    return retval0 + k0


@pytest.mark.parametrize("x, broken0, k0", [(0.5, 1.0, 2), (0.2, 5.0, 0), (3.0, 2.0, 1), (-1.0, 0.5, 3)])
def test_made_up_names_do_not_clash_when_compiled(x, broken0, k0):
    import srcgrad
    for backend in ("python", "llvm"):
        assert srcgrad.jit(_users_names_like_made_up_ones, backend=backend)(x, broken0, k0) == \
            _users_names_like_made_up_ones(x, broken0, k0)
