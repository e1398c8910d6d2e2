"""Saved tensors as PyTorch 2.13 shows them: ``grad_fn._saved_<name>`` / ``_raw_saved_<name>``,
saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``),
``register_multi_grad_hook``; and the smaller API pieces of the same issue: the
``autograd.gradcheck`` module, ``Tensor.new*``, ``randint`` overloads, bound built-in methods.
Every expectation is checked against the installed torch."""
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad.eager.creation import randint_like

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
A = rng.standard_normal((2, 3)).astype(np.float32)
B = rng.standard_normal((2, 3)).astype(np.float32)
M = rng.standard_normal((3, 4)).astype(np.float32)
V = rng.standard_normal(3).astype(np.float32)

# each op: f(T, a, b, m, v, c) with a, b, m, v requiring grad and c not
OPS = {
    "add": lambda T, a, b, m, v, c: a + b,
    "add_alpha": lambda T, a, b, m, v, c: T.add(a, b, alpha=2),
    "sub": lambda T, a, b, m, v, c: a - b,
    "rsub": lambda T, a, b, m, v, c: 2 - a,
    "mul": lambda T, a, b, m, v, c: a * b,
    "mul_const": lambda T, a, b, m, v, c: a * c,
    "mul_float": lambda T, a, b, m, v, c: a * 2.5,
    "mul_int": lambda T, a, b, m, v, c: a * 2,
    "mul_bcast": lambda T, a, b, m, v, c: a * v,
    "div": lambda T, a, b, m, v, c: a / b,
    "div_scalar": lambda T, a, b, m, v, c: a / 2,
    "pow2": lambda T, a, b, m, v, c: a.pow(2),
    "pow_float": lambda T, a, b, m, v, c: a.abs() ** 2.5,
    "pow_tensor": lambda T, a, b, m, v, c: a.abs().pow(v),
    "rpow": lambda T, a, b, m, v, c: 2 ** a,
    "square": lambda T, a, b, m, v, c: a.square(),
    "exp": lambda T, a, b, m, v, c: a.exp(),
    "log": lambda T, a, b, m, v, c: a.abs().log(),
    "sin": lambda T, a, b, m, v, c: a.sin(),
    "cos": lambda T, a, b, m, v, c: a.cos(),
    "tanh": lambda T, a, b, m, v, c: a.tanh(),
    "sigmoid": lambda T, a, b, m, v, c: a.sigmoid(),
    "relu": lambda T, a, b, m, v, c: a.relu(),
    "neg": lambda T, a, b, m, v, c: -a,
    "sqrt": lambda T, a, b, m, v, c: a.abs().sqrt(),
    "abs": lambda T, a, b, m, v, c: a.abs(),
    "clamp": lambda T, a, b, m, v, c: a.clamp(-0.5, 0.5),
    "clamp_min": lambda T, a, b, m, v, c: a.clamp(min=0),
    "where": lambda T, a, b, m, v, c: T.where(c > 0, a, b),
    "maximum": lambda T, a, b, m, v, c: T.maximum(a, v),
    "mm": lambda T, a, b, m, v, c: a.mm(m),
    "mm_transposed": lambda T, a, b, m, v, c: a.mm(b.t()),
    "mm_const": lambda T, a, b, m, v, c: c.mm(m),
    "matmul": lambda T, a, b, m, v, c: a @ m,
    "matmul_vector": lambda T, a, b, m, v, c: v @ m,
    "mv": lambda T, a, b, m, v, c: a.mv(v),
    "dot": lambda T, a, b, m, v, c: v.dot(v * 2),
    "bmm": lambda T, a, b, m, v, c: T.bmm(a.unsqueeze(0), m.unsqueeze(0)),
    "addmm": lambda T, a, b, m, v, c: T.addmm(m[0], a, m),
    "sum": lambda T, a, b, m, v, c: a.sum(),
    "sum_dim": lambda T, a, b, m, v, c: a.sum(1),
    "sum_neg_keepdim": lambda T, a, b, m, v, c: a.sum(-1, keepdim=True),
    "sum_dims": lambda T, a, b, m, v, c: a.sum((1, 0)),
    "mean": lambda T, a, b, m, v, c: a.mean(),
    "mean_dim": lambda T, a, b, m, v, c: a.mean(-1),
    "max": lambda T, a, b, m, v, c: a.max(),
    "max_dim": lambda T, a, b, m, v, c: a.max(1)[0],
    "min_dim_keepdim": lambda T, a, b, m, v, c: a.min(-1, keepdim=True)[0],
    "norm": lambda T, a, b, m, v, c: a.norm(),
    "norm_dim": lambda T, a, b, m, v, c: a.norm(1, dim=-1),
    "prod": lambda T, a, b, m, v, c: a.prod(),
    "var": lambda T, a, b, m, v, c: a.var(),
    "var_dim": lambda T, a, b, m, v, c: a.var(1),
    "var_unbiased_false": lambda T, a, b, m, v, c: a.var(unbiased=False),
    "std_dim": lambda T, a, b, m, v, c: a.std(-1, keepdim=True),
    "logsumexp": lambda T, a, b, m, v, c: a.logsumexp(1),
    "cumsum": lambda T, a, b, m, v, c: a.cumsum(-1),
    "gather": lambda T, a, b, m, v, c: a.gather(1, T.tensor([[0], [2]])),
    "view": lambda T, a, b, m, v, c: a.view(6),
    "reshape": lambda T, a, b, m, v, c: a.reshape(-1),
    "reshape_copy": lambda T, a, b, m, v, c: a.t().reshape(6),
    "t": lambda T, a, b, m, v, c: a.t(),
    "T": lambda T, a, b, m, v, c: a.T,
    "transpose": lambda T, a, b, m, v, c: a.transpose(0, -1),
    "permute": lambda T, a, b, m, v, c: a.permute(-1, 0),
    "unsqueeze": lambda T, a, b, m, v, c: a.unsqueeze(-1),
    "squeeze": lambda T, a, b, m, v, c: a.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda T, a, b, m, v, c: a.unsqueeze(0).squeeze(-3),
    "expand": lambda T, a, b, m, v, c: a[:1].expand(3, 3),
    "select": lambda T, a, b, m, v, c: a[-1],
    "select_dim": lambda T, a, b, m, v, c: a.select(-1, 0),
    "slice": lambda T, a, b, m, v, c: a[:, 1:],
    "slice_negative": lambda T, a, b, m, v, c: a[:, -2:],
    "slice_stop": lambda T, a, b, m, v, c: a[:, :-1],
    "slice_step": lambda T, a, b, m, v, c: a[:, ::2],
    "narrow": lambda T, a, b, m, v, c: a.narrow(-1, 1, 2),
    "narrow_negative_start": lambda T, a, b, m, v, c: a.narrow(0, -1, 1),
    "index": lambda T, a, b, m, v, c: a[[0, 1]],
    "index_second_dim": lambda T, a, b, m, v, c: a[:, [0, 2]],
    "index_mask": lambda T, a, b, m, v, c: a[c > 0],
    "clone": lambda T, a, b, m, v, c: a.clone(),
    "cat": lambda T, a, b, m, v, c: T.cat([a, b], -1),
    "stack": lambda T, a, b, m, v, c: T.stack([a, b]),
    "split": lambda T, a, b, m, v, c: a.split(1)[0],
    "split_sizes": lambda T, a, b, m, v, c: a.split([1, 2], -1)[0],
    "chunk": lambda T, a, b, m, v, c: a.chunk(2, -1)[0],
    "unbind": lambda T, a, b, m, v, c: a.unbind(-1)[0],
    "flip": lambda T, a, b, m, v, c: a.flip(-1),
    "to": lambda T, a, b, m, v, c: a.double(),
    "chain": lambda T, a, b, m, v, c: (a * b).sin().exp(),
}


def _inputs(T):
    return (T.tensor(A, requires_grad=True), T.tensor(B, requires_grad=True), T.tensor(M, requires_grad=True),
            T.tensor(V, requires_grad=True), T.tensor(A))


class _Values:
    """A tensor's values, equal to another's where they agree to float32 rounding (integers:
    exactly). Saved results of exp, sin, softmax, norms, variances, matrix products, ... are
    float32 values whose last bits follow the CPU kernel (Sleef or libm, the summation order of
    the vector width; issue 27): rounded to a few digits and compared exactly, a value that
    happens to lie at a rounding boundary would flip from one machine to the next."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __eq__(self, other):
        if not isinstance(other, _Values):
            return False
        a, b = self.values, other.values
        if a.shape != b.shape or (a.dtype.kind == "f") != (b.dtype.kind == "f"):
            return False
        if a.dtype.kind != "f":
            return np.array_equal(a, b)
        return np.allclose(a, b, rtol=1e-5, atol=1e-5, equal_nan=True)

    def __repr__(self):
        return repr(self.values.tolist())


def _describe(value, T):
    """A saved value in comparable form: tensors by dtype, shape, values and autograd identity."""
    if isinstance(value, T.Tensor):
        return ("Tensor", str(value.dtype), tuple(value.shape), _Values(value.detach().numpy().copy()),
                value.requires_grad, value.grad_fn.name() if value.grad_fn is not None else None)
    if isinstance(value, tuple):
        return tuple(_describe(v, T) for v in value)
    return (type(value).__name__, value)


def _saved_view(T, op):
    fn = op(T, *_inputs(T)).grad_fn
    names = sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")))
    values = {n: _describe(getattr(fn, n), T) for n in names if n.startswith("_saved_")}
    return fn.name(), names, values


def _mismatches(view):
    """{op name: (srcgrad's view, torch's)} for the ops of OPS where the two differ (one test for
    all of them: pytest's per-test overhead would be most of the run time)."""
    out = {}
    for name, op in sorted(OPS.items()):
        ours, theirs = view(srcgrad, op), view(torch, op)
        if ours != theirs:
            out[name] = (ours, theirs)
    return out


def test_saved_attributes_match_torch():
    # names, values and types; negative dims read back as PyTorch's unsigned numbers
    assert _mismatches(_saved_view) == {}


def _hook_log(T, op, detach):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), str(t.dtype), t.requires_grad,
                    t.grad_fn.name() if t.grad_fn is not None else None))
        return t.detach() if detach else t

    def unpack(t):
        log.append(("unpack", tuple(t.shape), str(t.dtype)))
        return t

    xs = _inputs(T)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = op(T, *xs)
    log.append("backward")
    out.sum().backward()
    grads = [None if x.grad is None else _Values(x.grad.numpy().copy()) for x in xs[:4]]
    return log, grads


def test_saved_tensors_hooks_calls_match_torch():
    # what is packed (inputs, outputs, index tensors), in which order, and the unpacks in backward
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _mismatches(lambda T, op: _hook_log(T, op, detach=True)) == {}


def _tutorial(T):
    """The saved-tensor-hooks tutorial's first steps, printed lines collected."""
    out = []
    x = T.randn(5, requires_grad=True)
    y = x.pow(2)
    out.append((y.grad_fn._saved_self is x, y.grad_fn._saved_self.equal(x), y.grad_fn._saved_exponent))
    y = x.exp()
    out.append((y.grad_fn._saved_result is y, y.grad_fn._saved_result.equal(y),
                y.grad_fn._saved_result.grad_fn is y.grad_fn))

    def pack_hook(t):
        out.append(("Packing", t.tolist(), t.requires_grad, t.grad_fn is not None))
        return t.detach()

    def unpack_hook(t):
        out.append(("Unpacking", t.tolist()))
        return t

    a = T.ones(5, requires_grad=True)
    b = T.ones(5, requires_grad=True) * 2
    with T.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    with T.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * a                       # one tensor saved twice: packed twice
    y.sum().backward()
    x = T.ones(5, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
        y = T.pow(x, 2)
    y.sum().backward()
    out.append(x.grad.tolist())
    return out


def test_tutorial_saved_tensor_steps_match_torch():
    assert _tutorial(srcgrad) == _tutorial(torch)


def test_saved_tensors_are_freed_by_backward():
    for T in (srcgrad, torch):
        x = T.randn(3, requires_grad=True)
        y = x * T.randn(3)
        e = x.exp()
        (y.sum() + e.sum()).backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            e.grad_fn._saved_result
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.grad_fn._saved_other
        assert y.grad_fn._saved_self is None          # nothing was saved there
        assert x.sum(0).grad_fn._saved_dim == (0,)    # plain values stay


def test_saved_input_modified_in_place_raises_torch_error():
    msgs = []
    for T in (srcgrad, torch):
        c = T.randn(3, requires_grad=True) * 1
        y = c * c
        with T.no_grad():
            c.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.grad_fn._saved_self
        msgs.append(str(info.value).split("[")[0])
    assert msgs[0] == msgs[1]


def _raw_hooks(T):
    out = []
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = T.tensor([4.0, 5.0, 6.0])
    y = x * z
    raw = y.grad_fn._raw_saved_other
    out.append(raw is y.grad_fn._raw_saved_other)
    out.append((raw.data.tolist(), raw.unpack().tolist(), raw.unpack_hook))
    out.append((y.grad_fn._raw_saved_self.data, y.grad_fn._raw_saved_self.unpack()))
    raw.register_hooks(lambda t: (out.append(("pack", t.tolist())), t * 2)[1],
                       lambda t: (out.append(("unpack", t.tolist())), t / 2)[1])
    out.append(("packed data", raw.data.tolist(), raw.unpack_hook is not None))
    out.append(y.grad_fn._saved_other.tolist())
    for args in ((lambda t: t, lambda t: t), (1, 2)):
        try:
            raw.register_hooks(*args)
        except (RuntimeError, TypeError) as e:
            out.append((type(e).__name__, str(e).split("\n")[0]))
    try:
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        out.append(str(e))
    y.sum().backward()
    out.append(x.grad.tolist())
    try:
        raw.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        out.append(str(e))
    out.append(raw.data)
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach(), lambda t: 1)
    try:
        y.sum().backward()
    except TypeError as e:
        out.append(str(e))
    return out


def test_raw_saved_tensor_hooks_match_torch():
    assert _raw_hooks(srcgrad) == _raw_hooks(torch)


def test_saved_tensor_hooks_skip_version_checks_and_nest_innermost():
    def run(T):
        log = []
        a = T.randn(3, requires_grad=True)
        c = a * 1
        with T.autograd.graph.saved_tensors_hooks(lambda t: (log.append("outer pack"), t)[1],
                                                  lambda t: (log.append("outer unpack"), t)[1]):
            with T.autograd.graph.saved_tensors_hooks(lambda t: (log.append("inner pack"), t)[1],
                                                      lambda t: (log.append("inner unpack"), t)[1]):
                y = c.sin()
            z = a.cos()
        with T.no_grad():
            c.mul_(2)                     # no version error: the hooks own what was saved
        (y + z).sum().backward()
        return log
    assert run(srcgrad) == run(torch)


def test_pack_hook_runs_without_grad_mode_and_hooks_are_per_thread():
    import threading

    def run(T):
        x = T.ones(3, requires_grad=True)
        seen = []

        def pack(t):
            seen.append((T.is_grad_enabled(), (t * t).grad_fn is None))   # no recursion into the hooks
            return t.detach()

        with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.sin()
            other = threading.Thread(target=lambda: x.cos())                # another thread: no hooks
            other.start()
            other.join()
        y.sum().backward()
        return seen
    assert run(srcgrad) == run(torch) == [(False, True)]


def test_unpacked_leaf_keeps_its_gradient_path_under_create_graph():
    def run(T):
        a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            y = (a * a).sum()
        (g,) = T.autograd.grad(y, a, create_graph=True)
        g.sum().backward()
        return g.tolist(), a.grad.tolist()
    assert run(srcgrad) == run(torch)


def test_save_on_cpu_matches_torch():
    def run(T, pin_memory):
        a = T.ones(3, requires_grad=True)
        c = a * 1
        with T.autograd.graph.save_on_cpu(pin_memory=pin_memory):
            y = (c.sin() * a).sum()
        with T.no_grad():
            c.mul_(2)                     # without pinning, CPU tensors are kept, not copied
        y.backward()
        return _Values(a.grad.numpy().copy())
    for pin in (False, True):
        assert run(srcgrad, pin) == run(torch, pin)


def test_disable_saved_tensors_hooks_messages():
    def run(T):
        g = T.autograd.graph
        out = []
        with g.disable_saved_tensors_hooks("hooks are off here"):
            try:
                with g.save_on_cpu():
                    pass
            except RuntimeError as e:
                out.append(str(e))
        with g.disable_saved_tensors_hooks("outer"):
            with g.disable_saved_tensors_hooks("inner"):
                pass
            try:
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                out.append(str(e))
        x = T.randn(3, requires_grad=True)
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            try:
                with g.disable_saved_tensors_hooks("no saving now"):
                    x.sin()
            except RuntimeError as e:
                out.append(str(e))
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            x.sin()                       # enabled again
        return out
    assert run(srcgrad) == run(torch) == ["hooks are off here", "outer", "no saving now"]


def test_register_multi_grad_hook():
    def run(T):
        out = []
        a = T.rand(2, 3, requires_grad=True)
        b = T.rand(2, 3, requires_grad=True)
        c, d = a * b, a * b
        h = T.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: out.append([g is not None for g in gs]))
        c.sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward(retain_graph=True)
        T.autograd.graph.register_multi_grad_hook((a, b), lambda g: out.append(tuple(g.shape)), mode="any")
        (a * b).sum().backward()
        (a * b).sum().backward()
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            T.autograd.graph.register_multi_grad_hook((a,), print, mode="some")
        return out
    assert run(srcgrad) == run(torch)


# ------------------------------------------------------------------------------- gradcheck module


def test_gradcheck_is_a_function_and_a_module():
    from srcgrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
    x = srcgrad.randn(3, dtype=srcgrad.float64, requires_grad=True)
    assert gradcheck(srcgrad.sin, (x,)) and gradgradcheck(srcgrad.sin, (x,))
    assert srcgrad.autograd.gradcheck(srcgrad.sin, (x,))          # still callable after the import
    assert issubclass(GradcheckError, RuntimeError)
    from torch.autograd.gradcheck import gradcheck as torch_gradcheck   # the same two paths in torch
    assert callable(torch.autograd.gradcheck) and callable(torch_gradcheck)


def test_gradcheck_restores_its_input_when_the_function_raises():
    # (PyTorch leaves the element it was perturbing off by eps; srcgrad puts it back)
    x = srcgrad.randn(3, 2, dtype=srcgrad.float64).t().requires_grad_()    # not contiguous
    before = x.detach().clone()
    calls = [0]

    def f(t):
        calls[0] += 1
        if calls[0] == 3:
            raise ValueError("boom")
        return t.exp()
    with pytest.raises(ValueError, match="boom"):
        srcgrad.autograd.gradcheck(f, (x,))
    assert srcgrad.equal(x.detach(), before)
    assert srcgrad.autograd.gradcheck(lambda t: t.exp(), (x,))     # perturbs x itself, not a copy


# ------------------------------------------------------------------------------- Tensor.new*, randint

NEW_CASES = ["x.new()", "x.new(2, 3).shape", "x.new([1, 2])", "x.new((1, 2))", "x.new(T.Size([2])).shape",
             "x.new(i)", "i.new([1.5])", "x.new(2.5)", "x.new(x).grad_fn.name()",
             "x.new_zeros(2, 3)", "x.new_zeros((2, 3))", "x.new_zeros(2, dtype=T.int64)",
             "x.new_zeros(2, requires_grad=True)", "i.new_zeros(2, requires_grad=True)", "x.new_ones(size=(2,))",
             "x.new_empty((2, 3)).shape", "x.new_full((2,), 7)", "i.new_full((2,), 7.5)", "x.new_full(2, 7)",
             "x.new_full((2,), 7, dtype=T.int32)", "x.new_tensor([1, 2])", "x.new_tensor([1.5], requires_grad=True)",
             "i.new_tensor([1.5])", "x.new_tensor(i)", "x.new_zeros()", "x.new_zeros(-1)", "x.new_full((2,))",
             "T.Tensor(T.Size([2, 3])).shape", "T.Tensor(2.5)"]


def _evaluate(T, cases, **names):
    out = []
    for case in cases:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = eval(case, {"T": T, **names})
            if isinstance(r, T.Tensor):
                r = (str(r.dtype), tuple(r.shape), r.requires_grad, r.is_leaf,
                     r.tolist() if "empty" not in case and "new(2" not in case else None)
            out.append((case, r, [str(w.message) for w in caught]))
        except (TypeError, RuntimeError) as e:
            out.append((case, type(e).__name__, str(e).split("\n")[0]))
    return out


def test_tensor_new_methods_match_torch():
    def run(T):
        return _evaluate(T, NEW_CASES, x=T.randn(2, 3, dtype=T.float64, requires_grad=True), i=T.tensor([1, 2]))
    assert run(srcgrad) == run(torch)


RANDINT_CASES = ["T.randint(10, (3,))", "T.randint(3, 10, (2, 2))", "T.randint(3, 10, (2,), dtype=T.float32)",
                 "T.randint(10, size=(3,))", "T.randint(low=2, high=5, size=(3,))", "T.randint(high=5, size=(3,))",
                 "T.randint(2, high=5, size=(2,))", "T.randint(10, [3])", "T.randint(10, T.Size([2]))",
                 "T.randint(10, ())", "T.randint(10)", "T.randint(5, 3, (2,))", "T.randint(10, 3)",
                 "T.randint(0, 10, 3)", "T.randint(2.5, (2,))", "T.randint(0, 2.5, (2,))", "T.randint(-5, (2,))",
                 "T.randint(10, (3,), requires_grad=True)", "T.randint(10, (3,), dtype=T.float32, requires_grad=True)",
                 "T.randint(10, (3,), dtype=T.bool)", "T.randint(300, (3,), dtype=T.uint8)",
                 "T.randint(-200, 5, (2,), dtype=T.int8)",
                 "like(f, 10)", "like(f, 3, 10)", "like(f, 10, dtype=T.int64)", "like(f, low=3, high=10)",
                 "like(f)", "like(f, 5, 3)", "like(i, 10)", "like(f, T.tensor(5))"]


def test_randint_overloads_match_torch():
    def run(T, like):
        T.manual_seed(0)
        cases = _evaluate(T, RANDINT_CASES, f=T.randn(2, 3), i=T.tensor([1, 2]), like=like)
        # values differ between generators: compare dtype, shape, flags, and the range
        return [(c, r[:4], w) if isinstance(r, tuple) else (c, r, w) for c, r, w in cases]
    assert run(srcgrad, randint_like) == run(torch, torch.randint_like)
    values = srcgrad.randint(3, 10, (1000,))
    assert values.min().item() == 3 and values.max().item() == 9


# ------------------------------------------------------------------------------- bound built-in methods


def test_builtin_methods_are_proper_bound_methods():
    for T in (srcgrad, torch):
        y = T.randn(2, requires_grad=True) * 2
        m = y.retain_grad
        assert m.__self__ is y and m.__name__ == "retain_grad" and m.__qualname__ == "Tensor.retain_grad"
        assert m == y.retain_grad and hash(m) == hash(y.retain_grad) and not (m != y.retain_grad)
        assert m != T.randn(2, requires_grad=True).retain_grad
        assert repr(m).startswith("<built-in method retain_grad of Tensor object at 0x")
        m()
        assert y.retains_grad
    m = srcgrad.randn(2).retain_grad
    assert m.__func__ is srcgrad.Tensor.retain_grad and m.__doc__ == srcgrad.Tensor.retain_grad.__doc__
