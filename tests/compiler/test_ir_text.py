"""The ``.ir`` text says what the program does: scalar constants where they are used, the fill
value of a new array, no variable's name on another after CSE merged them, and (``locs``) the
user's source lines."""
import numpy as np

import srcgrad


def threshold(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
        if s > 1.0:
            s = s * 0.5
    return s


def test_constants_are_written_where_they_are_used():
    g = srcgrad.grad(threshold)
    g(0.3, 4)
    text = g.ir
    assert "= const" not in text
    # the adjoint's seed 1.0 and the comparison's 1.0 were one value after CSE: each use says 1.0
    assert text.count("gt %s") == 3 and text.count(", 1.0 : bool") == 3     # primal, both sweeps
    assert "for %i = 0 to %n step 1 iter(%s.1 = 0.0)" in text
    assert "iter(%ds.1 = 1.0, %dx.1 = 0.0)" in text


def filled(x):
    z = np.full(3, 2.5)
    return np.sum(z * x)


def test_a_new_array_shows_its_fill_value():
    f = srcgrad.jit(filled)
    f(np.ones(3))
    assert "full 3 {value=2.5" in f.ir


def twice(x):
    a = x * x
    b = x * x
    return a + b


def test_a_value_merged_by_cse_keeps_no_variable_name():
    f = srcgrad.jit(twice)
    assert f(3.0) == 18.0
    body = f.ir.splitlines()[1:-1]
    assert len(body) == 3, f.ir                 # one mul, one add, return
    assert "%a" not in f.ir and "%b" not in f.ir


def test_locs_show_the_source_line_above_its_ops(capsys):
    g = srcgrad.grad(threshold)
    g(0.3, 4)
    srcgrad.show(g, "ir", locs=True)
    text = capsys.readouterr().out
    assert "# line 14: s = s * 0.5" in text
    lines = text.splitlines()
    k = lines.index(next(l for l in lines if "# line 13: if s > 1.0:" in l))
    assert "gt %s" in lines[k + 1]
    assert "# line" not in g.ir                 # only when asked


def test_the_command_line_shows_locs(capsys, tmp_path):
    from srcgrad.__main__ import main
    path = tmp_path / "prog.py"
    path.write_text("def f(x):\n    y = x * 2.0\n    return y + 1.0\n")
    main(["show", f"{path}:f", "--stage", "ir", "--locs"])
    out = capsys.readouterr().out
    assert "# line 2: y = x * 2.0" in out and "%y = mul %x, 2.0 : f64" in out
