"""Tuples, lists, dicts and namedtuples (issue 11, item 1): as arguments (gradients of the same
structure), as results (jit, vjp, jvp), and as local values (indexing, unpacking, len, sum,
iteration, comprehensions, append), through branches and loops. Values against plain Python,
gradients against PyTorch and finite differences, on both backends."""
import collections

import numpy as np
import pytest
import torch

import srcgrad

from .test_gradients import numeric_gradient

BACKENDS = ("python", "llvm")
Layer = collections.namedtuple("Layer", "w b")


def mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum(h * params["w2"]) + params["c"]


def mlp_torch(params, x):
    h = torch.tanh(params["W1"] @ x + params["b1"])
    return torch.sum(h * params["w2"]) + params["c"]


def make_params():
    rng = np.random.default_rng(0)
    return {"W1": rng.normal(size=(4, 3)), "b1": rng.normal(size=4), "w2": rng.normal(size=4), "c": 0.3}


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_of_parameters_gets_a_dict_of_gradients(backend):
    params, x = make_params(), np.array([0.5, -1.0, 2.0])
    g = srcgrad.grad(mlp, backend=backend)(params, x)
    assert isinstance(g, dict) and list(g) == list(params)
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    expected = torch.autograd.grad(mlp_torch(tp, torch.tensor(x)), list(tp.values()))
    for k, e in zip(params, expected):
        np.testing.assert_allclose(g[k], e.numpy(), rtol=1e-12)
    # one leaf against finite differences
    eps = 1e-6
    plus, minus = dict(params, c=params["c"] + eps), dict(params, c=params["c"] - eps)
    assert g["c"] == pytest.approx((mlp(plus, x) - mlp(minus, x)) / (2 * eps), rel=1e-6)
    assert srcgrad.jit(mlp, backend=backend)(params, x) == pytest.approx(mlp(params, x), rel=1e-14)


def layers(net, x):
    for layer in net:
        x = np.tanh(layer.w @ x + layer.b)
    return np.sum(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_of_namedtuples(backend):
    rng = np.random.default_rng(1)
    net = [Layer(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(3)]
    x = np.array([0.1, 0.2, -0.3])
    g = srcgrad.grad(layers, backend=backend)(net, x)
    assert isinstance(g, list) and all(isinstance(gl, Layer) for gl in g)
    tnet = [Layer(torch.tensor(l.w, requires_grad=True), torch.tensor(l.b, requires_grad=True)) for l in net]
    t = torch.tensor(x)
    for layer in tnet:
        t = torch.tanh(layer.w @ t + layer.b)
    expected = torch.autograd.grad(torch.sum(t), [p for l in tnet for p in l])
    got = [p for l in g for p in l]
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e.numpy(), rtol=1e-12)
    gx = srcgrad.grad(layers, wrt=1, backend=backend)(net, x)
    np.testing.assert_allclose(gx, numeric_gradient(layers, (net, x), 1), rtol=1e-6)


def affine(t, x, n):
    a, b = t
    return a * x ** n + b


def test_tuple_argument_with_an_int_leaf_gets_none():
    assert srcgrad.grad(affine)((2.0, 1.0), 3.0, 2) == (9.0, 1.0)
    assert srcgrad.grad(affine)([2.0, 1], 3.0, 2) == [9.0, None]
    assert srcgrad.grad(affine, wrt=(0, 1))((2.0, 1.0), 3.0, 2) == ((9.0, 1.0), 12.0)


def test_structure_is_part_of_the_signature():
    f = srcgrad.jit(first_plus_len)
    assert f((1.0, 2.0)) == 3.0
    assert f((1.0, 2.0, 4)) == 4.0         # another structure compiles again
    assert f([1.0, 2.0]) == 3.0
    assert f({0: 1.5}) == 2.5
    assert len(f._cache) == 4


def first_plus_len(c):
    return c[0] + len(c)


def locals_and_indexing(x, y):
    t = (x, 2.0 * x, y)
    first, *rest = t
    lst = [0.0] * 3
    lst[1] = t[-1] * first
    lst = lst + [rest[0]]
    d = {"a": x, "b": t[1:]}
    d["c"] = d["a"] * d["b"][1]
    return lst[1] + lst[-1] + d["c"] + len(rest) + len(d) + sum(lst) + max(t) + min(x, y)


def iteration(x, y):
    ws = [1.0, 2.0, 3.0]
    s = 0.0
    for i, w in enumerate(ws):
        s += w * x ** (i + 1)
    for a, b in zip(ws, [x, y, x * y]):
        s += a * b
    for k, v in {"p": x, "q": y}.items():
        s += v * v
    pows = [x ** k for k in range(4) if k != 2]
    pairs = [a * b for a in (x, y) for b in (1.0, 2.0)]
    grown = []
    for i in range(3):
        grown.append(y * i)
    return s + sum(pows) + sum(pairs) + grown[-1] + sum(x * k for k in range(3))


def branches_and_loops(x, n):
    acc = [x, 1.0]
    for i in range(n):
        acc = [acc[1] + x, acc[0] * 0.5]
    pair = (x, x)
    if x > 0.0:
        pair = (x * 2.0, acc[0])
    state = {"s": 0.0, "k": 0}
    while state["k"] < n:
        state = {"s": state["s"] + pair[1] * x, "k": state["k"] + 1}
    return acc[0] + acc[1] + pair[0] + state["s"]


def runtime_generators(y, n):
    return sum(v * v for v in y if v > 0.0) + sum(y[i] * i for i in range(n)) + sum(a * b for a, b in zip(y, y)) \
        + sum(np.tanh(y)) + sum(i * v for i, v in enumerate(y))


def helper_pair(a, b):
    return {"sum": a + b, "prod": (a * b, [a - b])}


def calls_helpers(x, y):
    r = helper_pair(x, y)
    return r["sum"] * r["prod"][0] + r["prod"][1][0] + helper_sum([x, y, x * y])


def helper_sum(values):
    total = 0.0
    for v in values:
        total += v
    return total


@pytest.mark.parametrize("fn,args", [
    (locals_and_indexing, (0.7, -1.3)),
    (iteration, (0.7, -1.3)),
    (branches_and_loops, (0.7, 3)),
    (branches_and_loops, (-0.7, 2)),
    (calls_helpers, (0.7, -1.3)),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_local_containers(fn, args, backend):
    assert srcgrad.jit(fn, backend=backend)(*args) == pytest.approx(fn(*args), rel=1e-13)
    g = srcgrad.grad(fn, backend=backend)(*args)
    assert g == pytest.approx(numeric_gradient(fn, args, 0), rel=1e-6)
    _, dot = srcgrad.jvp(fn, args, (1.0,) + tuple(0 * a for a in args[1:]), backend=backend)
    assert dot == pytest.approx(g, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_generators_over_runtime_ranges_and_arrays(backend):
    y, n = np.array([1.0, -2.0, 3.0]), 2
    assert srcgrad.jit(runtime_generators, backend=backend)(y, n) == pytest.approx(runtime_generators(y, n))
    g = srcgrad.grad(runtime_generators, backend=backend)(y, n)
    ty = torch.tensor(y, requires_grad=True)
    value = (torch.sum(torch.where(ty > 0, ty * ty, 0.0)) + ty[1] * 1 + torch.sum(ty * ty) + torch.sum(torch.tanh(ty))
             + torch.sum(torch.arange(3) * ty))
    np.testing.assert_allclose(g, torch.autograd.grad(value, ty)[0].numpy(), rtol=1e-12)


def nested_result(x, w):
    return {"value": x * np.sum(w), "parts": (w * x, [x * x])}


@pytest.mark.parametrize("backend", BACKENDS)
def test_container_results_of_jit_vjp_and_jvp(backend):
    x, w = 1.5, np.array([1.0, 2.0])
    out = srcgrad.jit(nested_result, backend=backend)(x, w)
    assert out["value"] == 4.5 and isinstance(out["parts"], tuple) and out["parts"][1] == [2.25]
    np.testing.assert_allclose(out["parts"][0], [1.5, 3.0])
    y, pullback = srcgrad.vjp(nested_result, x, w, backend=backend)
    gx, gw = pullback({"value": 1.0, "parts": (np.ones(2), [1.0])})
    assert gx == pytest.approx(3.0 + 3.0 + 3.0)
    np.testing.assert_allclose(gw, [1.5 + 1.5, 1.5 + 1.5])
    with pytest.raises(TypeError, match="structure"):
        pullback((1.0, 2.0))
    _, tangent = srcgrad.jvp(nested_result, (x, w), (1.0, np.zeros(2)), backend=backend)
    assert tangent["value"] == 3.0 and tangent["parts"][1] == [3.0]
    np.testing.assert_allclose(tangent["parts"][0], w)


def dict_tangents(p):
    return p["a"] * p["b"]


def test_jvp_takes_tangents_of_the_arguments_structure():
    y, t = srcgrad.jvp(dict_tangents, ({"a": 2.0, "b": 3.0},), ({"a": 1.0, "b": 0.0},))
    assert (y, t) == (6.0, 3.0)


def writes_a_tuple(x):
    t = (x, x)
    t[0] = 1.0
    return t[0]


def indexes_at_run_time(x, n):
    lst = [x, x * 2.0]
    return lst[n]


def grows_in_a_runtime_loop(x, n):
    lst = [x]
    for i in range(n):
        lst = lst + [x]
    return lst[0]


def missing_key(x):
    d = {"a": x}
    return d["b"]


def zips_a_list_with_an_array(x, y):
    s = 0.0
    for a, b in zip([x, x], y):
        s += a * b
    return s


@pytest.mark.parametrize("fn,args,error,message", [
    (writes_a_tuple, (1.0,), srcgrad.TypingError, "'tuple' object does not support item assignment"),
    (indexes_at_run_time, (1.0, 1), srcgrad.UnsupportedSyntaxError, "known only at run time"),
    (grows_in_a_runtime_loop, (1.0, 2), srcgrad.TypingError, "keeps its structure through a loop"),
    (missing_key, (1.0,), srcgrad.TypingError, "KeyError: 'b'"),
    (zips_a_list_with_an_array, (1.0, np.ones(2)), srcgrad.UnsupportedSyntaxError, "zip of a list or tuple with an"),
])
def test_refusals_name_the_line(fn, args, error, message):
    with pytest.raises(error, match=message) as info:
        srcgrad.grad(fn)(*args)
    assert "test_containers.py" in str(info.value)


def arrays_from_comprehensions(x, n):
    a = np.array([x * i for i in range(n)])
    b = np.array([v * v for v in a])
    c = np.array([i * 2 for i in range(n)])
    return np.sum(a * b) + np.sum(c)


def int_array_from_a_comprehension(n):
    return np.array([i * 2 for i in range(n)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_np_array_of_a_comprehension_over_a_runtime_range(backend):
    assert srcgrad.jit(arrays_from_comprehensions, backend=backend)(1.5, 4) == arrays_from_comprehensions(1.5, 4)
    assert srcgrad.grad(arrays_from_comprehensions, backend=backend)(1.5, 4) == pytest.approx(3 * 1.5 ** 2 * 36)
    out = srcgrad.jit(int_array_from_a_comprehension, backend=backend)(3)
    assert out.dtype == np.int64 and out.tolist() == [0, 2, 4]


def joins_of_containers(x):
    parts = [x, 2.0 * x]
    parts.append(x * x)
    rows = np.stack([p * p for p in parts])
    return np.sum(np.concatenate(parts) * np.repeat(rows.sum(axis=0), 3)) + np.sum(np.vstack((x, x)))


def joins_of_containers_torch(x):
    parts = [x, 2.0 * x, x * x]
    rows = torch.stack([p * p for p in parts])
    return torch.sum(torch.cat(parts) * torch.repeat_interleave(rows.sum(dim=0), 3)) + torch.sum(torch.vstack((x, x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_joins_take_container_values(backend):
    x = np.array([0.5, -1.0])
    assert srcgrad.jit(joins_of_containers, backend=backend)(x) == pytest.approx(joins_of_containers(x), rel=1e-14)
    tx = torch.tensor(x, requires_grad=True)
    expected = torch.autograd.grad(joins_of_containers_torch(tx), tx)[0].numpy()
    np.testing.assert_allclose(srcgrad.grad(joins_of_containers, backend=backend)(x), expected, rtol=1e-12)


def readme_loss(params, X, y):
    predict = lambda X: np.tanh(X @ params["w"] + params["b"])      # noqa: E731 (the README's example)
    return np.mean((predict(X) - y) ** 2) + 0.01 * sum(np.sum(p ** 2) for p in params.values())


def test_the_readme_example():
    rng = np.random.default_rng(5)
    params, X, y = {"w": rng.normal(size=3), "b": 0.2}, rng.normal(size=(5, 3)), rng.normal(size=5)
    g = srcgrad.grad(readme_loss)(params, X, y)
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    t = torch.mean((torch.tanh(torch.tensor(X) @ tp["w"] + tp["b"]) - torch.tensor(y)) ** 2) \
        + 0.01 * sum(torch.sum(p ** 2) for p in tp.values())
    ew, eb = torch.autograd.grad(t, (tp["w"], tp["b"]))
    np.testing.assert_allclose(g["w"], ew.numpy(), rtol=1e-12)
    assert g["b"] == pytest.approx(eb.item(), rel=1e-12)
