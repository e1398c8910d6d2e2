"""A hypothesis strategy for random whole-array numpy programs: element-wise chains with
broadcasting, ``@`` both ways round, ``.T``, sums and dot products, values used more than
once. They exercise what the llvm backend computes lazily (backends/fusion.py)."""
from hypothesis import strategies as st

# the shapes: n rows, m columns (X is n×m), scalars
_VARS = {"n": ["y"], "m": ["w"], "nm": ["X"], "s": ["c"]}
_UNARY = ["np.sin({})", "np.tanh({})", "np.exp(0.1 * {})", "({0} * {0})", "np.log1p(np.exp({}))",
          "-{}", "np.maximum({}, 0.2)"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1.0 + {} * {}))"]


@st.composite
def array_program(draw):
    names = {k: list(v) for k, v in _VARS.items()}
    lines = []

    def pick(kind):
        return draw(st.sampled_from(names[kind]))

    for k in range(draw(st.integers(2, 9))):
        kind = draw(st.sampled_from(["n", "m", "nm", "s"]))
        form = draw(st.integers(0, 5))
        if form == 0:
            expr = draw(st.sampled_from(_UNARY)).format(pick(kind))
        elif form == 1:
            op = draw(st.sampled_from(_BINARY))
            a, b = pick(kind), pick(draw(st.sampled_from([kind, "s"])))
            expr = op.format(a, b, b) if op.count("{}") == 3 else op.format(a, b)
        elif form == 2 and kind == "n":
            expr = f"X @ {pick('m')}"
        elif form == 2 and kind == "m":
            expr = f"X.T @ {pick('n')}"
        elif form == 2 and kind == "nm":
            expr = f"({pick('nm')} * {pick('m')})"           # a row broadcast over X's rows
        elif form == 3 and kind == "s":
            expr = f"np.sum({pick(draw(st.sampled_from(['n', 'm', 'nm'])))})"
        elif form == 4 and kind == "s":
            vec = draw(st.sampled_from(["n", "m"]))
            expr = f"np.dot({pick(vec)}, {pick(vec)})"
        else:
            expr = draw(st.sampled_from(_UNARY)).format(pick(kind))
        name = f"t{k}"
        lines.append(f"    {name} = {expr}")
        names[kind].append(name)
    parts = [f"np.sum({names[k][-1]})" for k in ("n", "m", "nm")] + [names["s"][-1]]
    body = "\n".join(lines)
    return f"import numpy as np\n\n\ndef f(X, y, w, c):\n{body}\n    return {' + '.join(parts)}\n"
