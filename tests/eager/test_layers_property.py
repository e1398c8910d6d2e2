"""Random convolution, pooling and normalisation setups (hypothesis picks shapes, strides,
padding, dilation, groups and values): outputs, the gradients of every input, and the
tangents of forward-mode AD agree with PyTorch's."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import srcgrad

torch = pytest.importorskip("torch")


@st.composite
def conv_setup(draw):
    groups = draw(st.integers(1, 3))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from([0, 1, (1, 0), "valid"] + (["same"] if stride == (1, 1) else [])))
    size = (draw(st.integers(1, 2)), cin, draw(st.integers(3, 7)), draw(st.integers(3, 7)))
    return dict(size=size, weight=(cout, cin // groups) + k, stride=stride, padding=padding, dilation=dilation,
                groups=groups, bias=draw(st.booleans()))


def _run_conv(lib, s, x, w, b):
    F = lib.nn.functional
    xs = lib.tensor(x, requires_grad=True)
    ws = lib.tensor(w, requires_grad=True)
    bs = lib.tensor(b, requires_grad=True) if s["bias"] else None
    out = F.conv2d(xs, ws, bs, s["stride"], s["padding"], s["dilation"], s["groups"])
    (out * out).sum().backward()
    return [out, xs.grad, ws.grad] + ([bs.grad] if s["bias"] else [])


@settings(max_examples=25, deadline=None)
@given(conv_setup(), st.integers(0, 2 ** 16))
def test_conv2d_matches_torch(s, seed):
    k_eff = [(k - 1) * d + 1 for k, d in zip(s["weight"][2:], s["dilation"])]
    pad = {"valid": (0, 0), "same": (0, 0)}.get(s["padding"], s["padding"])
    pad = (pad, pad) if isinstance(pad, int) else pad
    assume(all(n + 2 * p >= k for n, p, k in zip(s["size"][2:], pad, k_eff)))
    rng = np.random.default_rng(seed)
    x, w, b = rng.standard_normal(s["size"]), rng.standard_normal(s["weight"]), rng.standard_normal(s["weight"][0])
    for ours, theirs in zip(_run_conv(srcgrad, s, x, w, b), _run_conv(torch, s, x, w, b)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(1, 2), st.booleans(),
       st.sampled_from(["max", "avg"]), st.integers(4, 7), st.integers(0, 2 ** 16))
def test_pooling_matches_torch(kernel, stride, padding, dilation, ceil_mode, kind, size, seed):
    assume(padding <= kernel // 2)
    assume(kind == "max" or dilation == 1)
    assume(dilation * (kernel - 1) + 1 <= size + 2 * padding)      # else both refuse: no output
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, size, size + 1))
    results = []
    for lib in (srcgrad, torch):
        F = lib.nn.functional
        xs = lib.tensor(x, requires_grad=True)
        if kind == "max":
            out = F.max_pool2d(xs, kernel, stride, padding, dilation, ceil_mode=ceil_mode)
        else:
            out = F.avg_pool2d(xs, kernel, stride, padding, ceil_mode=ceil_mode)
        (out * out).sum().backward()
        results.append((out.detach().numpy(), xs.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


NORMS = {
    "batch_norm": lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    "layer_norm": lambda F, x, w, b: F.layer_norm(x, x.shape[-1:], w[:x.shape[-1]], b[:x.shape[-1]]),
    "group_norm": lambda F, x, w, b: F.group_norm(x, 1, w, b),
    "gelu": lambda F, x, w, b: F.gelu(x) * w.sum() + b.sum(),
    "self_product": lambda F, x, w, b: (x * x + x.maximum(x)) * w.sum() + b.sum(),     # x used twice
}


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(NORMS)), st.integers(2, 4), st.integers(1, 5), st.integers(0, 2 ** 16), st.booleans())
def test_normalisations_and_their_forward_tangents_match_torch(name, n, length, seed, primal_requires_grad):
    rng = np.random.default_rng(seed)
    x, t = rng.standard_normal((n, 3, length)) * 2 + 0.5, rng.standard_normal((n, 3, length))
    w, b = rng.standard_normal(max(3, length)), rng.standard_normal(max(3, length))
    w, b = (w[:3], b[:3]) if name in ("batch_norm", "group_norm") else (w, b)
    results = []
    for lib in (srcgrad, torch):
        F, fwAD = lib.nn.functional, lib.autograd.forward_ad
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        out = NORMS[name](F, xs, ws, bs)
        (out * out).sum().backward()
        with fwAD.dual_level():
            # (a primal that requires grad is differentiated as it is: forward over reverse)
            primal = lib.tensor(x, requires_grad=primal_requires_grad)
            tangent = fwAD.unpack_dual(NORMS[name](F, fwAD.make_dual(primal, lib.tensor(t)),
                                                   lib.tensor(w), lib.tensor(b))).tangent.detach()
        assert tangent is not None, (name, lib.__name__)
        results.append([out.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy(), tangent.numpy()])
    for a, b_ in zip(*results):
        np.testing.assert_allclose(a, b_, rtol=1e-9, atol=1e-10)
