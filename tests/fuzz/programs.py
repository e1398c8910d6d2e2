"""A hypothesis strategy for random programs in the language of API.md §1: straight-line code,
nested ``if``/``for``/``while`` (with data-dependent exits), ``break``, ``continue``, early
``return`` (in loops too), helper calls, reads of the argument array ``v``, reads and writes
(overwrites included) of a local array ``buf``, reductions and broadcasting.

Each program is the source of a module with ``def f(x, y, v)`` returning a float. Values stay
bounded (tanh and sin squash, divisions by 1 + e*e), so finite differences are a fair
reference away from branch boundaries; every loop runs a bounded number of times.
"""
from hypothesis import strategies as st

UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))", "math.atan({})",
         "({}) * ({})", "abs({})", "math.sqrt(1.0 + ({}) * ({}))", "math.log1p(({}) * ({}))"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.0 + ({}) * ({}))", "max({}, {})",
          "min({}, {})", "math.atan2({}, 1.0 + ({}) * ({}))"]
# whole-array reductions of v and buf (3 elements each) with broadcasting against a number
ARRAY = ["np.sum(v * ({}))", "np.dot(v, buf) * ({})", "np.max(np.tanh(v + ({})))", "np.sum(np.sin(buf * ({}) + v))",
         "np.mean(np.maximum(v, {}))", "np.min(v - ({}))"]
CALLS = ["helper({}, {})", "squash({})"]

HELPERS = '''

def helper(a, b):
    return math.tanh(a) * b + 0.5 * a


def squash(a):
    if a > 0.0:
        return a / (1.0 + a)
    return math.tanh(a)
'''

COMPARE = ["0.0", "0.3", "-0.2"]


@st.composite
def expression(draw, names, depth=2):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return f"{draw(st.sampled_from(['v', 'buf']))}[{draw(st.integers(0, 2))}]"
        if draw(st.booleans()):
            return draw(st.sampled_from(names))
        return repr(draw(st.sampled_from([0.5, 1.5, -0.7, 2.0, 0.25])))
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        a = draw(expression(names, depth - 1))
        tmpl = draw(st.sampled_from(UNARY))
        return tmpl.format(*([a] * tmpl.count("{}")))
    if kind == 4:
        return draw(st.sampled_from(ARRAY)).format(draw(expression(names, depth - 1)))
    if kind == 5:
        tmpl = draw(st.sampled_from(CALLS))
        return tmpl.format(*[draw(expression(names, depth - 1)) for _ in range(tmpl.count("{}"))])
    a = draw(expression(names, depth - 1))
    b = draw(expression(names, depth - 1))
    tmpl = draw(st.sampled_from(BINARY))
    args = [a, b] + [b] * (tmpl.count("{}") - 2)
    return tmpl.format(*args)


def _result(expr):
    return f"math.tanh({expr}) + x * y + buf[0] * v[1]"


@st.composite
def statements(draw, names, indent, depth, in_loop=False):
    """A list of source lines; may add names to ``names`` (a list it extends)."""
    lines = []
    pad = "    " * indent
    kinds = ["assign", "assign", "aug", "write", "if", "for", "while", "return"] if depth else \
        ["assign", "aug", "write"]
    if in_loop:
        kinds = kinds + ["break", "continue"]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        if kind == "write":
            op = draw(st.sampled_from(["=", "+="]))
            lines.append(f"{pad}buf[{draw(st.integers(0, 2))}] {op} math.tanh({draw(expression(names))})")
        elif kind == "assign":
            target = draw(st.sampled_from(["a", "b", "c"] + names[:2]))
            lines.append(f"{pad}{target} = {draw(expression(names))}")
            if target not in names:
                names.append(target)
        elif kind == "aug":
            target = draw(st.sampled_from(names))
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            lines.append(f"{pad}{target} {op} math.tanh({draw(expression(names))})")
        elif kind == "if":
            lines.append(f"{pad}if {draw(expression(names))} > {draw(st.sampled_from(COMPARE))}:")
            lines += draw(statements(list(names), indent + 1, depth - 1, in_loop))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(statements(list(names), indent + 1, depth - 1, in_loop))
        elif kind == "for":
            var = f"i{indent}"
            lines.append(f"{pad}for {var} in range({draw(st.integers(0, 4))}):")
            lines += draw(statements(names + [var], indent + 1, depth - 1, True))
        elif kind == "while":
            # a data-dependent exit, and a counter that bounds the trip count
            var = f"k{indent}"
            lines.append(f"{pad}{var} = 0")
            test = f"{draw(expression(names, 1))} < {draw(st.sampled_from(['0.8', '1.5']))}"
            lines.append(f"{pad}while {var} < {draw(st.integers(0, 3))} and {test}:")
            lines.append(f"{pad}    {var} += 1")
            lines += draw(statements(list(names), indent + 1, depth - 1, True))
        elif kind == "return":
            lines.append(f"{pad}if {draw(expression(names))} > {draw(st.sampled_from(COMPARE))}:")
            lines.append(f"{pad}    return {_result(draw(expression(names)))}")
        else:                      # break / continue, under a condition
            lines.append(f"{pad}if {draw(expression(names))} > {draw(st.sampled_from(COMPARE))}:")
            lines.append(f"{pad}    {kind}")
    return lines


@st.composite
def program(draw):
    names = ["x", "y"]
    body = draw(statements(names, 1, 2))
    result = draw(expression(names))
    return ("import math\n\nimport numpy as np\n" + HELPERS + "\n\ndef f(x, y, v):\n    buf = np.zeros(3)\n"
            + "\n".join(body) + f"\n    return {_result(result)}\n")
