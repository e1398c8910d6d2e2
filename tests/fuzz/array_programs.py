"""A hypothesis strategy for random whole-array numpy programs: element-wise chains with
broadcasting, ``@`` both ways round, ``.T``, sums and dot products, values used more than
once. They exercise what the llvm backend computes lazily (backends/llvm/fusion.py).
Indexing (issue 11): ``x[:, None]``, ``X[..., 1]``, index lists with a place named twice
(``y[[0, 2, 2, 4, 1]]``, ``X[:, [2, 0]]``), masks (``np.sum(y[y > 0.0])``), and copies written
through a mask, an index list, ``+=`` on one, or ``np.add.at``.

The constructs of issue 9 sit behind the names of programs.FEATURES (SRCGRAD_FUZZ_SKIP
switches them off): ``floor_mod`` (``y % 1.5``, ``w // -0.7``), ``allocations`` (arrays of one
shape made by np.zeros, np.empty, np.zeros_like, np.ones_like, written in place, then read
whole), ``argument_writes`` (``y[0] = ...``, ``X[1, 0] += ...``: the caller sees them) and
``math_names`` (the function named ``exp`` or ``tanh``). One line in seven is linear algebra
(linalg_templates.py)."""
from hypothesis import strategies as st

from .linalg_templates import linalg_lines
from .programs import enabled

# the shapes: n rows, m columns (X is n×m), scalars
_VARS = {"n": ["y"], "m": ["w"], "nm": ["X"], "s": ["c"]}
_SIZE = {"n": 5, "m": 3}
_UNARY = ["np.sin({})", "np.tanh({})", "np.exp(0.1 * {})", "({0} * {0})", "np.log1p(np.exp({}))",
          "-{}", "np.maximum({}, 0.2)",
          # numpy's arithmetic as functions
          "np.square({})", "np.negative({})", "np.exp2(0.3 * {})", "np.reciprocal(1.5 + {0} * {0})"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1.0 + {} * {}))",
           "np.add({}, {})", "np.subtract({}, {})", "np.multiply({}, {})", "np.divide({}, (1.0 + {} * {}))"]
# indexing: new axes, ..., index lists (a place named twice), masks; {n} {m} {nm} are arrays of that kind
_INDEXING = {
    "n": ["{n}[[0, 2, 2, 4, 1]]", "{nm}[..., 1]", "{nm}[[4, 0, 1, 1, -2], 2]", "({n}[:, None] * {m}[None, :])[:, 1]",
          "{nm}[:, [2, 0]][:, 1]"],
    "m": ["{m}[[2, 0, 0]]", "{nm}[2, [2, 0, 1]]", "{nm}[..., 0][[0, 1, 4]]", "{nm}[[3, 3, 1]][1]"],
    "nm": ["({nm}[:, 0][:, None] * {nm})", "({n}[:, None] * {m}[None, :])", "{nm}[[4, 3, 3, 1, 0]]",
           "{nm}[:, [2, 2, 0]]", "{nm}[..., None][..., 0]", "({nm}[None, :, :] * {m})[0]"],
}
# the reductions family (issue 11), by the kind of their result: {0} is a value of that kind,
# {n} {m} {nm} {s} values of the others
_REDUCTIONS = {
    "n": ["np.cumsum({0})", "np.clip({0}, -0.5, 0.5)", "np.logaddexp({0}, {s})", "(np.sign({0}) * {0})",
          "(np.floor({0} * 2.0) + {0})", "np.cumprod(0.9 + 0.1 * {0})", "np.where(np.isfinite({0}), {0}, 0.0)",
          "(np.sum({nm}, axis=1) * {0})", "(np.max({nm}, axis=-1) + {0})", "(np.var({nm}, axis=1) * {0})",
          "{0}.clip(None, 0.3)", "(np.average({nm}, axis=1, weights={nm} * {nm} + 0.1) + {0})",
          "(np.diff({0}, n=2)[0] + {0})", "np.round({0}, 1)", "(np.trunc({0} * 3.0) - np.rint({0}) + {0})",
          "np.sort({0})", "np.sort({nm}, axis=1)[:, 0] * {0}"],
    "m": ["np.cumsum({0}, axis=0)", "(np.mean({nm}, axis=0) + {0})", "(np.std({nm}, axis=0, ddof=1) * {0})",
          "np.logaddexp2({0}, {m})", "(np.ceil({0}) + {0})", "np.clip({0}, a_min={s}, a_max=None)"],
    "nm": ["(np.sum({0}, axis=0, keepdims=True) * {0})", "({0} - np.max({0}, axis=1, keepdims=True))",
           "np.cumsum({0}, axis=1)", "np.cumprod(1.0 + 0.1 * {0}, axis=0)", "np.clip({0}, -0.5, {m})",
           "np.logaddexp({0}, {m})", "(np.mean({0}, axis=(0, 1), keepdims=True) * {0})",
           "({0} / (1.0 + np.std({0}, axis=-1, keepdims=True)))"],
    "s": ["np.var({n})", "np.std({nm})", "np.sum(np.diff({n}))", "np.sum(np.diff({nm}, axis=0) ** 2)",
          "{n}[np.argmax({n})]", "{m}[np.argmin({nm}[1])]", "np.logaddexp({0}, 0.5)", "np.clip({0}, -1.0, 1.0)",
          "np.average({n}, weights=1.0 + {n} * {n})",
          "np.sum(np.sort({n}) * {n})", "np.sum(np.sort({nm}, axis=0) * {nm})", "{n}[np.argsort({n})[1]]"],
}
_FLOOR_MOD = ["({} % 1.5)", "({} // -0.7)", "({} % -0.4)", "(({} * 3.0) // 1.25)"]
# joining, splitting and building arrays, by the kind they make; "line|expression" binds a
# split's parts first (p{k}, q{k}: names of this step)
_JOINS = {
    "n": ["np.concatenate([{y}[:2], {y}[2:]])", "np.roll({y}, 2)", "np.hstack([{w}, {y}[:2]])",
          "np.linspace(0.0, {c}, 5) * {y}", "np.concatenate([np.diag({X}[:3, :]), {y}[3:]])",
          "np.vstack([{X}, {w}])[1:, 0]", "np.roll({X}, 1)[:, 1]",
          "p{k}, q{k} = np.split({y}, [2])|np.concatenate([q{k}, p{k} * 2.0])",
          "p{k}, q{k} = np.array_split({y}, 2)|np.hstack([q{k}, p{k}])",
          "p{k}, q{k} = np.hsplit({X}, [1])|p{k}[:, 0] * np.sum(q{k}, axis=1)", "np.tile({w}, 2)[:5]",
          "np.repeat({w}, 2)[1:]", "np.repeat({X}, 2, axis=1)[:, 1]",
          "np.kron({y}[:1], {y})", "np.concatenate([{X}[:1, :2], {w}], axis=None)",
          "{w}.repeat(2)[1:]", "np.repeat({w}, np.arange(1, 4))[1:]"],
    "m": ["np.roll({w}, -1)", "np.diag(np.outer({w}, {w}))", "np.sum(np.stack([{w}, {w} * 2.0]), axis=0)",
          "np.tril({X}[:3, :]) @ {w}", "np.triu({X}[:3, :], 1) @ {w}", "np.eye(3) @ {w}",
          "np.identity(3) @ {w}", "np.linspace({c}, 1.0, 3) * {w}", "np.diagonal({X}) * {w}",
          "np.column_stack([{w}, {w} * {c}]) @ np.ones(2)",
          "p{k}, q{k} = np.split(np.concatenate([{w}, {w}]), 2)|p{k} * q{k}", "np.tile({w}[:1], 3)",
          "np.repeat({y}, 3)[::5]", "np.kron({w}[:1], {w})", "{X}.diagonal() * {w}",
          "np.repeat({w}, np.arange(3))"],
    "nm": ["np.roll({X}, (1, -2), axis=(0, 1))", "np.tri(5, 3, -1) * {X}", "np.roll({X}, 1, axis=0)", "np.roll({X}, -2, axis=1)", "np.roll({X}, 4)",
           "np.column_stack([{y}, {X}[:, 1:]])", "np.concatenate([{X}[3:], {X}[:3]])",
           "np.vstack([{X}[:2], np.tril({X}[2:])])", "np.hstack([{X}[:, :1], np.triu({X}[:, 1:], -1)])",
           "np.stack([{y}, {y} * 2.0, {y}], axis=1)", "(np.tril({X}, -1) + np.triu({X}))",
           "np.eye(5, 3, k=-1) * {X}", "({X} @ np.diag({w}))", "np.tile({w}, (5, 1))",
           "np.repeat({X}[:, :1], 3, axis=1)", "np.tile({X}[:, :1], 3)",
           "np.kron({X}[:, :1], {X}[:1, :])"],
    "s": ["np.trace({X}[:3, :])", "np.trace({X}, 1)", "np.sum(np.stack([{w}, {w} * 2.0]))",
          "np.sum(np.linspace(0.0, {c}, 4))", "np.sum(np.diag({w}) @ {w})", "np.sum(np.roll({X}, 2, axis=0) * {X})",
          "np.sum(np.repeat({X}, 2, axis=0) ** 2)", "np.sum(np.kron({w}, {y}) * np.kron({y}, {w}))",
          "{X}[:3, :].trace(-1)"],
}


def _join_expr(draw, kind, pick, k, lines):
    """A random construct of the joining family making an array of ``kind``."""
    form = draw(st.sampled_from(_JOINS[kind])).format(y=pick("n"), w=pick("m"), X=pick("nm"), c=pick("s"), k=k)
    if "|" in form:
        line, form = form.split("|")
        lines.append(f"    {line}")
    return form


# shapes and views (issue 11), by the kind they make: {0} is an array of that kind, {n}, {m},
# {nm}, {s} others, each a computed array (an argument a program writes in place would be
# stale in a view taken before the write, and a reshape of it is refused: numpy_shapes.py)
_SHAPES = {
    "n": ["np.flip({0})", "{nm}.reshape(15)[:5]", "np.ravel({nm})[3:8]", "{nm}.T.reshape(15)[::3]",
          "np.flip({nm}, 1)[:, 0]", "np.expand_dims({0}, 0).squeeze(0)", "np.array([{s}, {s} * 2.0, 1.0, {s} * {s}, 0.5])",
          "np.moveaxis(np.expand_dims({0}, 1), 0, 1)[0]", "np.array([{0}, {0} * {s}])[1]", "np.flipud({0})",
          "(np.squeeze(y) * {0})"],
    "m": ["np.flip({0})", "(np.transpose({nm}) @ {n})", "np.array([{s}, {s} * 2.0, 1.0])", "{nm}.reshape(3, 5)[:, 0]",
          "np.fliplr({nm})[0]", "(({0} > 0.0).astype(float) * {0})", "np.swapaxes({nm}, 0, 1)[:, 2]", "np.asarray({0})",
          "np.sum({nm}, axis=0, dtype={0}.dtype)", "np.asarray({0}, dtype=np.dtype('float64'))"],
    "nm": ["({n}.reshape(5, 1) * {m})", "np.swapaxes(np.transpose({0}), 0, 1)", "np.flipud({0})",
           "{0}.ravel().reshape({0}.shape)", "np.array([{m}, {m} * {s}, {m}, np.flip({m}), {m}])",
           "(np.zeros({0}.shape) + {0})", "np.transpose(np.sin({0}).reshape(3, 5))", "np.flip({0})",
           "np.array([[{s}, 1.0, {s}], [2.0, {s}, 0.5], [{s}, {s}, {s}], [1.0, 2.0, 3.0], [0.0, {s}, 1.0]])",
           "np.expand_dims({0}, 2)[:, :, 0]", "{0}.flatten().reshape(5, -1)",
           "(np.zeros({0}.shape, dtype={n}.dtype) + {0}.astype({m}.dtype))", "(X.squeeze() - {0})"],
    "s": ["np.sum(np.flip({n}) * {n})", "np.sum({nm}.ravel() * np.arange(15.0))",
          "np.sum(np.array([{s}, 1.0]) * 2.0)"],
}


@st.composite
def array_program(draw, features=None):
    features = enabled() if features is None else frozenset(features)
    names = {k: list(v) for k, v in _VARS.items()}
    lines = []
    unary = _UNARY + (_FLOOR_MOD if "floor_mod" in features else [])

    def pick(kind):
        return draw(st.sampled_from(names[kind]))

    extra = [f for f in ("allocations", "argument_writes", "containers", "functions", "loop_writes",
                         "slice_writes")
             if f in features]
    for k in range(draw(st.integers(2, 9))):
        kind = draw(st.sampled_from(["n", "m", "nm", "s"]))
        if draw(st.integers(0, 6)) == 0:         # linear algebra and contractions
            lines += linalg_lines(draw, f"t{k}", kind, pick)
            names[kind].append(f"t{k}")
            continue
        form = draw(st.integers(0, 5 + len(extra)))
        special = extra[form - 6] if form >= 6 else None
        name = f"t{k}"
        if form == 0:
            form = draw(st.sampled_from(unary + _REDUCTIONS[kind] + _SHAPES[kind]))
            if form in _SHAPES[kind]:
                computed = {kd: v if v.startswith("t") or kd == "s" else f"({v} + 0.0)"
                            for kd, v in ((kd, pick(kd)) for kd in ("n", "m", "nm", "s"))}
                expr = form.format(computed[kind], **computed)
            else:
                expr = form.format(pick(kind), **{k: pick(k) for k in ("n", "m", "nm", "s")})
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
        elif form == 3 and kind != "s":
            expr = draw(st.sampled_from(_INDEXING[kind])).format(**{k: pick(k) for k in ("n", "m", "nm")})
        elif form == 3 and kind == "s":
            reduce = draw(st.sampled_from(["np.sum({})", "{}.sum()", "{}.mean()", "{}.max()", "np.min({})",
                                           "np.sum({0}[{0} > 0.0])"]))
            expr = reduce.format(pick(draw(st.sampled_from(['n', 'm', 'nm']))))
        elif form == 5 and kind == "s":
            r, q = f"r{k}", f"q{k}"
            lines.append(f"    {r}, {q} = X.shape")
            expr = f"({pick('s')} * {r} / ({q} + X.ndim + y.size))"
        elif form == 4 and kind == "s":
            vec = draw(st.sampled_from(["n", "m"]))
            dot = draw(st.sampled_from(["np.dot({}, {})", "{}.dot({})"]))
            expr = dot.format(pick(vec), pick(vec))
        elif form == 4 and kind in ("n", "m"):
            lines += _masked_writes(draw, name, kind, pick)
            names[kind].append(name)
            continue
        elif special == "allocations" and kind in ("n", "m"):
            lines += _allocations(draw, name, kind, pick)
            names[kind].append(name)
            continue
        elif special == "loop_writes" and kind in ("n", "nm"):
            lines += _loop_writes(draw, name, kind, pick, k)
            names[kind].append(name)
            continue
        elif special == "slice_writes" and kind in ("n", "m"):
            lines += _slice_writes(draw, name, kind, pick)
            names[kind].append(name)
            continue
        elif special == "functions":
            lines += _functions(draw, name, kind, pick)
            names[kind].append(name)
            continue
        elif special == "containers":
            lines += _containers(draw, name, kind, pick)
            names[kind].append(name)
            continue
        elif special == "argument_writes":
            i, j = draw(st.integers(0, 4)), draw(st.integers(0, 2))
            target = draw(st.sampled_from([f"y[{i}]", f"w[{j}]", f"X[{i}, {j}]"]))
            op = draw(st.sampled_from(["=", "+=", "*="]))
            lines.append(f"    {target} {op} np.tanh({pick('s')} + np.sum({pick(draw(st.sampled_from(['n', 'm'])))}))")
            continue
        elif "joins" in features and draw(st.booleans()):
            expr = _join_expr(draw, kind, pick, k, lines)
        else:
            expr = draw(st.sampled_from(unary)).format(pick(kind))
        lines.append(f"    {name} = {expr}")
        names[kind].append(name)
    parts = [f"np.sum({names[k][-1]})" for k in ("n", "m", "nm")] + [names["s"][-1]]
    body = "\n".join(lines)
    fname = draw(st.sampled_from(["f", "exp", "tanh"])) if "math_names" in features else "f"
    return f"import numpy as np\n\n\ndef {fname}(X, y, w, c):\n{body}\n    return {' + '.join(parts)}\n"


def _allocations(draw, name, kind, pick):
    """Arrays of one shape made several ways, written in place, combined into ``name``."""
    n = _SIZE[kind]
    like = pick(kind)
    made = []
    lines = []
    for j, maker in enumerate(draw(st.lists(st.sampled_from(
            [f"np.zeros({n})", f"np.empty({n})", f"np.zeros_like({like})", f"np.ones_like({like})"]),
            min_size=2, max_size=4))):
        z = f"{name}_{j}"
        lines.append(f"    {z} = {maker}")
        if maker.startswith("np.empty"):
            lines.append(f"    {z}[:] = {pick(kind)}")        # every element written before the array is read
        lines.append(f"    {z}[{draw(st.integers(0, n - 1))}] = np.sum({pick(kind)}) * {pick('s')}")
        made.append(z)
    lines.append(f"    {name} = {' * '.join(made)} + {pick(kind)}")
    return lines


def _containers(draw, name, kind, pick):
    """Values of one kind put in a tuple, list or dict and taken out again into ``name``."""
    vals = [pick(kind) for _ in range(draw(st.integers(2, 3)))]
    c = f"{name}_c"
    form = draw(st.integers(0, 7))
    if form == 0:
        return [f"    {c} = [{', '.join(vals)}]", f"    {name} = sum({c}) * {c}[-1]"]
    if form == 1:
        return [f"    {c} = ({', '.join(vals)},)", f"    {name}, *{c}_rest = {c}",
                f"    {name} = {name} + len({c}_rest) * {c}[1]"]
    if form == 2:
        items = ", ".join(f"'k{j}': {v}" for j, v in enumerate(vals))
        return [f"    {c} = {{{items}}}", f"    {c}['k0'] = {c}['k1'] * {pick('s')}",
                f"    {name} = sum({c}[k] for k in {c})"]
    if form == 3:
        return [f"    {c} = [{', '.join(vals)}]", f"    {name} = {c}[0] * 0.0",
                f"    for j_{name}, v_{name} in enumerate({c}):", f"        {name} = {name} + (j_{name} + 1) * v_{name}"]
    if form == 4:
        return [f"    {c} = []", f"    for j_{name} in range({len(vals)}):",
                f"        {c}.append({vals[0]} * (j_{name} + 0.5))", f"    {name} = {c}[-1] - {c}[0]"]
    if form == 5:
        return [f"    {c} = [v_{name} * {pick('s')} for v_{name} in ({', '.join(vals)}) if True]",
                f"    {name} = sum(a_{name} * b_{name} for a_{name}, b_{name} in zip({c}, [{', '.join(vals)}]))"]
    if form == 6:     # a list carried through a loop whose trip count is known only at run time
        # (copies: a loop may not read an argument array written in place yet, issue 12)
        return [f"    {c} = [{vals[0]} * 1.0, {vals[1]} * 1.0]", f"    for j_{name} in range(X.shape[0] - 3):",
                f"        {c} = [{c}[1] * 0.5, {c}[0] + 1.0]", f"    {name} = {c}[0] + {c}[1]"]
    return [f"    {c} = {{'a': {vals[0]}, 'b': ({vals[1]}, {vals[0]})}}",
            f"    if {pick('s')} > 0.0:", f"        {c} = {{'a': {c}['b'][1], 'b': ({c}['a'], {vals[1]})}}",
            f"    {name} = {c}['a'] * {c}['b'][0]"]


def _functions(draw, name, kind, pick):
    """``name`` computed through a lambda, a nested def (a closure, with defaults, keywords and
    ``*args``) or a numpy function passed as a value."""
    a, b, s = pick(kind), pick(kind), pick("s")
    g = f"g_{name}"
    form = draw(st.integers(0, 3))
    if form == 0:
        return [f"    {g} = lambda v: np.tanh(v) * {s}", f"    {name} = {g}({a}) + {g}({b})"]
    if form == 1:
        return [f"    def {g}(v, p=0.5):", f"        return v * {s} + p * {a}",
                f"    {name} = {g}({b}) + {g}({b}, p=1.5)"]
    if form == 2:
        return [f"    def {g}(*vs, scale=1.0):", f"        return sum(v * scale for v in vs)",
                f"    {name} = {g}({a}, {b}, scale={s})"]
    return [f"    def {g}(fn, v):", f"        return fn(v)",
            f"    {name} = {g}(np.sin, {a}) + {g}(lambda v: v * {s}, {b})"]


def _loop_writes(draw, name, kind, pick, k):
    """``name``: a copy of an array written in place in a loop (issue 12): element, row and slice
    writes (=, +=, -=, *=) under if/else and in a nested loop, reading the array whole
    (np.sum, np.dot, @) and element by element, what the iteration wrote included."""
    i, j, s, n, m = f"i{k}", f"j{k}", pick("s"), pick("n"), pick("m")
    if kind == "n":
        steps = [
            [f"{name}[{i} % 5] = np.tanh({name}[({i} + 1) % 5] * {s} + np.sum({name}) * 0.1)"],
            [f"if {name}[{i} % 5] > 0.0:", f"    {name}[{i} % 5] *= 0.5", "else:",
             f"    {name}[({i} + 2) % 5] -= np.tanh(np.dot({name}, {n}) * 0.1)"],
            [f"for {j} in range(2):", f"    {name}[{j}] += 0.1 * np.tanh({name}[{j} + 1] * {s})"],
            [f"{name}[1:3] = np.tanh({name}[2:4] + {s})"],
            [f"{name}[{i} % 5] = {name}[{i} % 5] * 0.5 + np.tanh(X.T @ {name})[{i} % 3]"],
        ]
    else:
        steps = [
            [f"{name}[({i} + 1) % 5] = np.tanh({name}[{i} % 5] * {m} + np.sum({name}) * 0.01)"],
            [f"if {name}[{i} % 5, 0] > 0.0:", f"    {name}[{i} % 5, 1:] *= 0.5", "else:",
             f"    {name}[{i} % 5] += np.tanh({name}.T @ {n}) * 0.1"],
            [f"for {j} in range(3):", f"    {name}[{j}, {j}] -= 0.1 * np.tanh({name}[{j} + 1, {j}] + {s})"],
            [f"{name}[{i} % 5, {i} % 3] = np.tanh(np.sum({name}[{i} % 5]) * {s})"],
        ]
    body = [line for _ in range(draw(st.integers(1, 3))) for line in draw(st.sampled_from(steps))]
    trips = draw(st.integers(0, 4))
    return [f"    {name} = {pick(kind)} * 1.0", f"    for {i} in range({trips}):"] + [f"        {b}" for b in body]


def _slice_writes(draw, name, kind, pick):
    """``name``: an array built piece by piece (``z[0] = ...; z[1:] = ...``, an ODE's right-hand
    side) and written through slices that read it (``z[1:] += z[:-1] * s``: every element read
    before one is written), whose values the llvm backend computes inside the write's loop."""
    a, b, s = pick(kind), pick(kind), pick("s")
    first = draw(st.sampled_from([f"np.zeros_like({a})", f"np.zeros({_SIZE[kind]})", f"{a} * 1.0"]))
    writes = draw(st.lists(st.sampled_from([
        f"{name}[0] = -{s} * {a}[0]",
        f"{name}[1:] = {a}[:-1] * {b}[:-1] - {b}[1:] * {a}[1:]",
        f"{name}[:-1] = np.tanh({a}[1:] + {s})",
        f"{name}[1:] += {name}[:-1] * {s}",
        f"{name}[:-1] -= {name}[1:] * 0.5 + {a}[:-1]",
        f"{name}[1:3] = {name}[2:4] * {b}[1:3]",
        f"{name}[::2] = np.exp(0.1 * {a}[::2]) + {name}[::2]"]), min_size=1, max_size=4))
    return [f"    {name} = {first}"] + [f"    {w}" for w in writes] + [f"    {name} = {name} + 0.5 * {b}"]


def _masked_writes(draw, name, kind, pick):
    """``name``: a copy of an array written through a mask, an index list or ``+=`` on one."""
    n = _SIZE[kind]
    places = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
    write = draw(st.sampled_from([f"{name}[{name} > 0.0] = {pick('s')}",
                                  f"{name}[{name} < 0.1] = {name}[{name} < 0.1] * {pick('s')}",
                                  f"{name}[{places}] = {pick('s')}",
                                  f"{name}[{places}] += {pick(kind)}[{places}]",
                                  f"np.add.at({name}, {places}, {pick('s')})"]))
    return [f"    {name} = {pick(kind)} * 1.0", f"    {write}"]
