"""A hypothesis strategy for random programs in the language of API.md §1: straight-line code,
nested ``if``/``for``/``while`` (with data-dependent exits), ``break``, ``continue``, early
``return`` (in loops too), helper calls, reads of the argument array ``v``, reads and writes
(overwrites included) of a local array ``buf``, reductions and broadcasting.

Each program is the source of a module whose last function, ``f`` or a name like ``sin``,
takes ``(x, y, v)`` and returns a float. Values stay bounded (tanh and sin squash, divisions
by 1 + e*e), so finite differences are a fair reference away from branch boundaries; every
loop runs a bounded number of times.

Constructs that once gave wrong answers (issue 9) each sit behind a name in ``FEATURES``;
``SRCGRAD_FUZZ_SKIP=name,name`` switches some off (a feature still being fixed, say):

- ``floor_mod``: float ``//`` and ``%`` with negative and constant operands;
- ``functions`` (array programs): lambdas, nested ``def`` closing over the function's values,
  defaults, keywords, ``*args``, a numpy function passed as a value;
- ``containers`` (array programs): tuples, lists and dicts of the values made so far, indexed,
  unpacked, summed, iterated (``for v in L``, ``enumerate``, ``zip``), grown by ``append`` and
  read in comprehensions;
- ``short_circuit``: ``and``/``or`` guarding an index or a division, in ``if`` and ``while``
  conditions, conditional expressions and values (``(y != 0.0 and x / y) or 0.5``);
- ``allocations``: several arrays of one shape (``np.zeros(3)``, ``np.empty(3)``,
  ``np.zeros_like(v)``, ``np.ones_like(v)``) written in place and read;
- ``argument_writes``: writes into the argument array ``v`` (the caller sees them; ``jvp``
  leaves the caller's tangent array as it was);
- ``math_names``: helpers named ``exp``/``tanh`` calling numpy's, and ``f`` itself named
  ``sin``, ``cos`` or ``sqrt``;
- ``many_returns``: a helper returning a tuple of 2 to 12 values from inside a loop;
- ``widening``: chains ``w0 = 0; w1 = 0; ...`` of ints that a loop shifts floats into;
- ``zero_points``: ``abs(a - a)``, ``(a - a) ** 2.0``, ``abs(a) ** 2.0``, ``math.sqrt(a * a)``,
  ``math.sqrt((a - a) ** 2.0)`` (whose derivative at 0, infinite times 0, is NaN in both modes,
  as in PyTorch), and x or y exactly 0.0 (test_fuzz.POINTS);
- ``defaults``: a helper with a default parameter called with and without keywords, and ``f``
  with a default ``scale`` the checks pass or leave out;
- ``views``: a view of ``buf`` or ``v`` (``buf[1:]``, ``buf[:2]``, ``buf[::2]``), written and read
  through either name in any order (compiled code must see every write, as Python does; the
  derivative passes refuse a view used after a write through the other name);
- ``joins``: in the array programs, np.concatenate / stack / hstack / vstack / column_stack,
  np.split / array_split unpacked, np.roll, np.diag / diagonal / trace / eye / identity,
  np.tril / triu, np.linspace, np.tile, np.repeat and np.kron (array_programs._JOINS);
- ``loop_writes``: in the array programs, a copy written in place in a loop: element, row and
  slice writes under if/else and in a nested loop, read whole (np.sum, np.dot, @) and element
  by element in the same iteration (array_programs._loop_writes; issue 12);
- ``slice_writes``: in the array programs, an array built piece by piece (``z[0] = ...;
  z[1:] = ...``) and slice writes reading the array they write (``z[1:] += z[:-1] * s``),
  whose values the llvm backend computes inside the write's loop (array_programs._slice_writes);
- ``compiled_calls``: calls of functions srcgrad compiled, which are compiled in place (issue
  13): a ``@srcgrad.jit`` helper, the gradient of a helper with a branch, a gradient returning
  a tuple, ``grad`` of a helper with a loop, so that f's gradient is a second derivative of
  them (and jvp(grad(f)) a third); reverse mode through the loop's tape is refused clearly;
  ``srcgrad.vectorize`` of a helper and of a gradient, mapped over ``v`` (checks.py also
  vectorizes every program checked for second derivatives over a grid of points).
"""
import os

from hypothesis import strategies as st

FEATURES = frozenset({"floor_mod", "short_circuit", "allocations", "argument_writes", "math_names",
                      "many_returns", "widening", "zero_points", "defaults", "views", "containers", "functions",
                      "joins", "loop_writes", "compiled_calls", "slice_writes"})
# features that still fail, left out unless SRCGRAD_FUZZ_SKIP says otherwise ("" runs them all)
STILL_FAILING = frozenset()


def enabled():
    """The features in use: all but those named in SRCGRAD_FUZZ_SKIP (default: STILL_FAILING)."""
    skip = os.environ.get("SRCGRAD_FUZZ_SKIP", ",".join(sorted(STILL_FAILING)))
    return FEATURES - {s.strip() for s in skip.split(",")}


UNARY = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))", "math.atan({})",
         "({}) * ({})", "abs({})", "math.sqrt(1.0 + ({}) * ({}))", "math.log1p(({}) * ({}))"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.0 + ({}) * ({}))", "max({}, {})",
          "min({}, {})", "math.atan2({}, 1.0 + ({}) * ({}))"]
# whole-array reductions of v and buf (3 elements each) with broadcasting against a number
ARRAY = ["np.sum(v * ({}))", "np.dot(v, buf) * ({})", "np.max(np.tanh(v + ({})))", "np.sum(np.sin(buf * ({}) + v))",
         "np.mean(np.maximum(v, {}))", "np.min(v - ({}))"]
CALLS = ["helper({}, {})", "squash({})"]

FEATURE_UNARY = {
    # CPython's bits: 1.0 // 0.1 is 9.0 (floor(1.0 / 0.1) is 10.0), 0.0 % -c is -0.0 (atan2 tells)
    "floor_mod": ["({}) % 1.5", "({}) % -0.7", "({}) // 0.5", "({}) // -1.5", "-2.5 % (0.5 + ({}) * ({}))",
                  "(({}) * 3.0) // (1.0 + ({}) * ({}))", "(1.0 + 0.0 * ({})) // 0.1", "(1.0 + 0.0 * ({})) % 0.1",
                  "math.atan2(0.0 % -(1.0 + ({}) * ({})), -1.0)"],
    "zero_points": ["abs(({}) - ({}))", "(({}) - ({})) ** 2.0", "abs({}) ** 2.0", "math.sqrt(({}) * ({}))",
                    "math.sqrt((({}) - ({})) ** 2.0)"],
}
FEATURE_BINARY = {
    "floor_mod": ["({}) % (1.0 + ({}) * ({}))", "({}) // -(0.5 + ({}) * ({}))", "({}) % -(1.0 + ({}) * ({}))",
                  "(({0}) % ({1}) if ({1}) != 0.0 else ({0}))", "(({0}) // ({1}) if ({1}) != 0.0 else ({1}))"],
    # the right operand runs only where the left one does not decide
    "short_circuit": ["(1.0 if ({1}) != 0.0 and ({0}) / ({1}) > 1.0 else 0.0)",
                      "((({1}) != 0.0 and ({0}) / ({1})) or 0.5)",
                      "(({0}) if ({1}) != 0.0 and ({0}) / ({1}) > 0.5 else ({1}))",
                      "(({0}) if ({1}) == 0.0 or ({0}) / ({1}) < -0.5 else ({1}) * 0.5)"],
}
FEATURE_CALLS = {
    "math_names": ["exp({})", "tanh({})"],
    # (1.0 * e: a loop index drawn as an argument would ask a gradient in an int, a clear error)
    "compiled_calls": ["jitted({}, {})", "dsquash(1.0 * ({}))", "dhelper(1.0 * ({}), 1.0 * ({}))[1]",
                       "dlooped(1.0 * ({}), 1.0 * ({}))", "np.sum(vsquash(v * ({})))",
                       "np.dot(vdhelper(v, 1.0 * ({}))[0], v)"],
    "defaults": ["scaled({})", "scaled({}, b={})", "scaled(a={}, b={})", "scaled(b={}, a={})"],
}

HELPERS = '''

def helper(a, b):
    return math.tanh(a) * b + 0.5 * a


def squash(a):
    if a > 0.0:
        return a / (1.0 + a)
    return math.tanh(a)
'''
# helpers named after the numpy functions they call (math_names), except one named like f
MATH_HELPERS = {"exp": "np.exp(0.5 * np.tanh(a))", "tanh": "np.tanh(a) * 0.9"}
FEATURE_HELPERS = {
    "compiled_calls": '''


@srcgrad.jit
def jitted(a, b):
    return math.sin(a) * b + 0.5 * a


dsquash = srcgrad.grad(squash)


def looped(a, b):
    s = 0.0
    for i in range(3):
        s = math.tanh(s * a + b * i)
    return s


dlooped = srcgrad.grad(looped, wrt=1)
dhelper = srcgrad.grad(helper, wrt=(0, 1))
vsquash = srcgrad.vectorize(squash)
vdhelper = srcgrad.vectorize(dhelper)
''',
    "defaults": '''

def scaled(a, b=0.5):
    return a * b + math.sin(a)
''',
}

# the values a helper returns from inside its loop, the first k of them
MANY = ["a", "b", "a * b", "a - b", "math.sin(a)", "math.tanh(b)", "a + 0.5", "b * b", "math.cos(a + b)",
        "0.25 * a", "a * a - b", "b - 1.0"]
COMPARE = ["0.0", "0.3", "-0.2"]
# points x, y where the features' edges are (test_fuzz.POINTS draws them now and then): exact
# zeros for zero_points, decimals that floor division and % round differently for floor_mod
SPECIAL_POINTS = {"zero_points": [0.0], "floor_mod": [1.0, 0.1, 0.7, -0.3, 0.3]}


class _Context:
    """What the program being drawn may use, and a counter for fresh names."""

    def __init__(self, features, many, name="f"):
        self.features, self.many, self.name = features, many, name
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"


@st.composite
def expression(draw, names, depth=2, ctx=None):
    features = ctx.features if ctx else frozenset()
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return f"{draw(st.sampled_from(['v', 'buf']))}[{draw(st.integers(0, 2))}]"
        if draw(st.booleans()):
            return draw(st.sampled_from(names))
        return repr(draw(st.sampled_from([0.5, 1.5, -0.7, 2.0, 0.25])))
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        a = draw(expression(names, depth - 1, ctx))
        tmpl = draw(st.sampled_from(UNARY + [t for f in features for t in FEATURE_UNARY.get(f, [])]))
        return tmpl.format(*([a] * tmpl.count("{}")))
    if kind == 4:
        return draw(st.sampled_from(ARRAY)).format(draw(expression(names, depth - 1, ctx)))
    if kind == 5:
        calls = CALLS + [t for f in features for t in FEATURE_CALLS.get(f, [])]
        tmpl = draw(st.sampled_from([c for c in calls if not c.startswith(f"{ctx.name}(")] if ctx else calls))
        return tmpl.format(*[draw(expression(names, depth - 1, ctx)) for _ in range(tmpl.count("{}"))])
    a = draw(expression(names, depth - 1, ctx))
    b = draw(expression(names, depth - 1, ctx))
    tmpl = draw(st.sampled_from(BINARY + [t for f in features for t in FEATURE_BINARY.get(f, [])]))
    if "{0}" in tmpl:
        return tmpl.format(a, b)
    args = [a, b] + [b] * (tmpl.count("{}") - 2)
    return tmpl.format(*args)


def _result(expr):
    return f"math.tanh({expr}) + x * y + buf[0] * v[1]"


@st.composite
def condition(draw, names, ctx, loop_var=None):
    """An ``if`` test; with short_circuit, maybe one whose right side needs the left (an index
    in range, a divisor not zero)."""
    test = f"{draw(expression(names, 2, ctx))} > {draw(st.sampled_from(COMPARE))}"
    if ctx is None or "short_circuit" not in ctx.features or draw(st.integers(0, 2)):
        return test
    a, b = draw(expression(names, 1, ctx)), draw(st.sampled_from(names))
    guards = [f"{b} != 0.0 and {a} / {b} > 1.0", f"{b} == 0.0 or {a} / {b} < 0.5",
              f"not ({b} != 0.0 and {a} / {b} > 1.0) and {test}"]
    if loop_var is not None:
        guards += [f"{loop_var} < 3 and v[{loop_var}] > {draw(st.sampled_from(COMPARE))}",
                   f"{loop_var} >= 3 or buf[{loop_var}] < {draw(st.sampled_from(COMPARE))}"]
    return draw(st.sampled_from(guards))


@st.composite
def statements(draw, names, indent, depth, in_loop=False, ctx=None, loop_var=None):
    """A list of source lines; may add names to ``names`` (a list it extends)."""
    features = ctx.features if ctx else frozenset()
    lines = []
    pad = "    " * indent
    kinds = ["assign", "assign", "aug", "write", "if", "for", "while", "return"] if depth else \
        ["assign", "aug", "write"]
    if in_loop:
        kinds = kinds + ["break", "continue"]
    kinds += [k for k in ("allocations", "argument_writes", "many_returns", "widening", "views") if k in features]
    if "widening" in features and not depth:
        kinds.remove("widening")       # it makes a loop
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        if kind == "write":
            op = draw(st.sampled_from(["=", "+="]))
            lines.append(f"{pad}buf[{draw(st.integers(0, 2))}] {op} math.tanh({draw(expression(names, 2, ctx))})")
        elif kind == "assign":
            target = draw(st.sampled_from(["a", "b", "c"] + names[:2]))
            lines.append(f"{pad}{target} = {draw(expression(names, 2, ctx))}")
            if target not in names:
                names.append(target)
        elif kind == "aug":
            # not a loop's index: it is read as an array index further down
            target = draw(st.sampled_from([n for n in names if not n.startswith("i")]))
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            lines.append(f"{pad}{target} {op} math.tanh({draw(expression(names, 2, ctx))})")
        elif kind == "if":
            lines.append(f"{pad}if {draw(condition(names, ctx, loop_var))}:")
            lines += draw(statements(list(names), indent + 1, depth - 1, in_loop, ctx, loop_var))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(statements(list(names), indent + 1, depth - 1, in_loop, ctx, loop_var))
        elif kind == "for":
            var = f"i{indent}"
            lines.append(f"{pad}for {var} in range({draw(st.integers(0, 4))}):")
            lines += draw(statements(names + [var], indent + 1, depth - 1, True, ctx, var))
        elif kind == "while":
            # a data-dependent exit, and a counter that bounds the trip count
            var = f"k{indent}"
            lines.append(f"{pad}{var} = 0")
            if "short_circuit" in features and draw(st.booleans()):
                test = f"v[{var}] < {draw(st.sampled_from(['0.8', '1.5']))}"      # v[3] would be out of range
                lines.append(f"{pad}while {var} < 3 and {test}:")
            else:
                test = f"{draw(expression(names, 1, ctx))} < {draw(st.sampled_from(['0.8', '1.5']))}"
                lines.append(f"{pad}while {var} < {draw(st.integers(0, 3))} and {test}:")
            lines.append(f"{pad}    {var} += 1")
            lines += draw(statements(list(names), indent + 1, depth - 1, True, ctx, var))
        elif kind == "return":
            lines.append(f"{pad}if {draw(condition(names, ctx, loop_var))}:")
            lines.append(f"{pad}    return {_result(draw(expression(names, 2, ctx)))}")
        elif kind == "allocations":
            lines += draw(allocations(names, pad, ctx, loop_var))
        elif kind == "argument_writes":
            k = draw(st.integers(0, 2))
            op = draw(st.sampled_from(["=", "+=", "*="]))
            lines.append(f"{pad}v[{k}] {op} math.tanh({draw(expression(names, 1, ctx))})")
        elif kind == "many_returns":
            ms = [ctx.fresh("m") for _ in range(ctx.many)]
            a, b = draw(expression(names, 1, ctx)), draw(expression(names, 1, ctx))
            lines.append(f"{pad}{', '.join(ms)} = many({a}, {b})")
            target = draw(st.sampled_from(["a", "b", "c"] + names[:2]))
            weights = [0.5, -0.25, 1.0, 0.75]
            lines.append(f"{pad}{target} = " + " + ".join(f"{weights[j % 4]} * {m}" for j, m in enumerate(ms)))
            if target not in names:
                names.append(target)
        elif kind == "widening":
            lines += draw(widening(names, pad, ctx))
        elif kind == "views":
            lines += draw(views(names, pad, ctx))
        else:                      # break / continue, under a condition
            lines.append(f"{pad}if {draw(condition(names, ctx, loop_var))}:")
            lines.append(f"{pad}    {kind}")
    return lines


@st.composite
def allocations(draw, names, pad, ctx, loop_var):
    """Arrays of one shape made several ways, written in place (an index from a loop too), read."""
    makers = ["np.zeros(3)", "np.empty(3)", "np.zeros_like(v)", "np.ones_like(v)", "np.zeros(3)"]
    made = []
    lines = []
    for _ in range(draw(st.integers(2, 4))):
        name = ctx.fresh("z")
        maker = draw(st.sampled_from(makers))
        lines.append(f"{pad}{name} = {maker}")
        made.append((name, maker))
    reads = []
    for name, maker in made:
        k = draw(st.sampled_from(["0", "1", "2"] + ([loop_var] if loop_var and loop_var.startswith("i") else [])))
        if k == loop_var:
            k = f"{loop_var} % 3"
        if maker == "np.empty(3)":
            k = "1"          # only the written element of an np.empty array is read
        lines.append(f"{pad}{name}[{k}] = {draw(expression(names, 1, ctx))}")
        reads.append(f"{name}[{k}]")
        if maker != "np.empty(3)" and draw(st.booleans()):
            reads.append(f"{name}[{draw(st.integers(0, 2))}]")
    lines.append(_read_into_variable(draw, names, pad, reads))
    return lines


def _read_into_variable(draw, names, pad, reads):
    """``target = math.tanh(r1 + r2 ...)`` into one of the program's variables (a new one of
    a, b, c joins ``names``)."""
    target = draw(st.sampled_from(["a", "b", "c"] + names[:2]))
    if target not in names:
        names.append(target)
    return f"{pad}{target} = math.tanh({' + '.join(reads)})"


@st.composite
def views(draw, names, pad, ctx):
    """A view of buf (or of the argument v) and its base, each written and read, in any order."""
    base = draw(st.sampled_from(["buf", "buf", "v"] if "argument_writes" in ctx.features else ["buf"]))
    view, size = draw(st.sampled_from([("[1:]", 2), ("[:2]", 2), ("[::2]", 2)]))
    t = ctx.fresh("t")
    lines = [f"{pad}{t} = {base}{view}"]
    reads = []
    for _ in range(draw(st.integers(1, 4))):
        step = draw(st.sampled_from(["write base", "write view", "read base", "read view"]))
        if step == "write base":
            lines.append(f"{pad}{base}[{draw(st.integers(0, 2))}] = math.tanh({draw(expression(names, 1, ctx))})")
        elif step == "write view":
            lines.append(f"{pad}{t}[{draw(st.integers(0, size - 1))}] = math.tanh({draw(expression(names, 1, ctx))})")
        elif step == "read base":
            reads.append(f"{base}[{draw(st.integers(0, 2))}]")
        else:
            reads.append(f"{t}[{draw(st.integers(0, size - 1))}]")
        if reads and draw(st.booleans()):
            lines.append(_read_into_variable(draw, names, pad, reads))
            reads = []
    return lines


@st.composite
def widening(draw, names, pad, ctx):
    """``w0 = 0; w1 = 0; ...`` (ints), then a loop shifting floats along the chain."""
    n = draw(st.integers(2, 6))
    ws = [ctx.fresh("w") for _ in range(n)]
    var = ctx.fresh("j")
    lines = [f"{pad}{w} = 0" for w in ws]
    lines.append(f"{pad}for {var} in range({draw(st.integers(0, n + 1))}):")
    for k in range(n - 1, 0, -1):
        lines.append(f"{pad}    {ws[k]} = {ws[k - 1]}")
    lines.append(f"{pad}    {ws[0]} = {draw(expression(names, 1, ctx))}")
    lines.append(_read_into_variable(draw, names, pad, ws))
    return lines


def _many_helper(k, threshold):
    values = ", ".join(MANY[:k])
    return f'''

def many(a, b):
    for i in range(3):
        if a * i > {threshold}:
            return {values}
        a = math.tanh(a + b)
    return {", ".join(reversed(MANY[:k]))}
'''


@st.composite
def program(draw, features=None):
    features = enabled() if features is None else frozenset(features)
    ctx = _Context(features, draw(st.integers(2, 12)))
    # the function itself may be named like the math functions it calls (math.exp inside exp)
    ctx.name = draw(st.sampled_from(["f", "exp", "sin", "cos", "tanh", "sqrt", "log1p"])) \
        if "math_names" in features else "f"
    names = ["x", "y"]
    body = draw(statements(names, 1, 2, ctx=ctx))
    result = draw(expression(names, 2, ctx))
    helpers = HELPERS + "".join(h for f, h in FEATURE_HELPERS.items() if f in features)
    if "math_names" in features:
        helpers += "".join(f"\n\ndef {n}(a):\n    return {e}\n" for n, e in MATH_HELPERS.items() if n != ctx.name)
    if "many_returns" in features:
        helpers += _many_helper(ctx.many, draw(st.sampled_from(["0.5", "-0.3", "1.2"])))
    params, scale = "x, y, v", ""
    if "defaults" in features and draw(st.booleans()):
        params, scale = "x, y, v, scale=1.0", " * scale"
    end = f"    return ({_result(result)}){scale}\n"
    if "argument_writes" in features and draw(st.booleans()):
        # a write into the caller's array that nothing reads afterwards
        end = (f"    out = ({_result(result)}){scale}\n"
               f"    v[{draw(st.integers(0, 2))}] = math.tanh(out)\n    return out\n")
    header = "import math\n\nimport numpy as np\n" + ("\nimport srcgrad\n" if "compiled_calls" in features else "")
    return (header + helpers + f"\n\ndef {ctx.name}({params}):\n    buf = np.zeros(3)\n"
            + "\n".join(body) + "\n" + end)
