"""A hypothesis strategy for random programs: straight-line code, branches, `for` and `while`
loops, reads of an argument array ``v`` and reads and writes of a local array ``buf``. Each program is Python source for ``def f(x, y): ...`` whose
values stay bounded (tanh/sin squash, divisions by 1 + v*v), so finite differences are a
fair reference away from branch boundaries."""
from hypothesis import strategies as st

UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))", "math.atan({})",
         "({}) * ({})", "abs({})", "math.sqrt(1.0 + ({}) * ({}))", "math.log1p(({}) * ({}))"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.0 + ({}) * ({}))", "max({}, {})",
          "min({}, {})", "math.atan2({}, 1.0 + ({}) * ({}))"]


@st.composite
def expression(draw, names, depth=2):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return f"{draw(st.sampled_from(['v', 'buf']))}[{draw(st.integers(0, 2))}]"
        if draw(st.booleans()):
            return draw(st.sampled_from(names))
        return repr(draw(st.sampled_from([0.5, 1.5, -0.7, 2.0, 0.25])))
    if draw(st.booleans()):
        a = draw(expression(names, depth - 1))
        tmpl = draw(st.sampled_from(UNARY))
        return tmpl.format(*([a] * tmpl.count("{}")))
    a = draw(expression(names, depth - 1))
    b = draw(expression(names, depth - 1))
    tmpl = draw(st.sampled_from(BINARY))
    args = [a, b] + [b] * (tmpl.count("{}") - 2)
    return tmpl.format(*args)


@st.composite
def statements(draw, names, indent, depth):
    """A list of source lines; may add names to ``names`` (a list it extends)."""
    lines = []
    pad = "    " * indent
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["assign", "assign", "aug", "write", "if", "for", "while"] if depth
                                    else ["assign", "aug", "write"]))
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
            lines.append(f"{pad}if {draw(expression(names))} > {draw(st.sampled_from(['0.0', '0.3', '-0.2']))}:")
            inner = list(names)
            lines += draw(statements(inner, indent + 1, depth - 1))
            lines.append(f"{pad}else:")
            lines += draw(statements(list(names), indent + 1, depth - 1))
        elif kind == "for":
            var = f"i{indent}"
            lines.append(f"{pad}for {var} in range({draw(st.integers(0, 4))}):")
            inner = names + [var]
            body = draw(statements(inner, indent + 1, depth - 1))
            lines += body
        else:
            var = f"k{indent}"
            lines.append(f"{pad}{var} = 0")
            lines.append(f"{pad}while {var} < {draw(st.integers(0, 3))}:")
            body = draw(statements(list(names), indent + 1, depth - 1))
            lines += body
            lines.append(f"{pad}    {var} += 1")
    return lines


@st.composite
def program(draw):
    names = ["x", "y"]
    body = draw(statements(names, 1, 2))
    result = draw(expression(names))
    return ("import math\n\nimport numpy as np\n\n\ndef f(x, y, v):\n    buf = np.zeros(3)\n" + "\n".join(body)
            + f"\n    return math.tanh({result}) + x * y + buf[0] * v[1]\n")
