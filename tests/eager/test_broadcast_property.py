"""Random broadcasting shapes: values and the gradients summed back to each input's shape
agree with PyTorch (hypothesis picks shapes, ops and values)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import srcgrad

torch = pytest.importorskip("torch")

OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5),
    "maximum": lambda a, b: a.maximum(b) if hasattr(a, "maximum") else None,
    "chain": lambda a, b: (a * b).tanh() + a.exp() * 0.1 - b.sigmoid(),
}


@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    def operand():
        keep = draw(st.integers(0, len(out)))
        return [1 if draw(st.booleans()) else d for d in out[len(out) - keep:]]
    return tuple(out), tuple(operand()), tuple(operand())


@settings(max_examples=60, deadline=None)
@given(broadcast_pair(), st.sampled_from(sorted(OPS)), st.integers(0, 2 ** 16))
def test_broadcast_gradients_match_pytorch(shapes, op, seed):
    _, sa, sb = shapes
    rng = np.random.default_rng(seed)
    va, vb = rng.standard_normal(sa), rng.standard_normal(sb)
    results = []
    for T in (srcgrad, torch):
        a = T.tensor(va, dtype=T.float64, requires_grad=True)
        b = T.tensor(vb, dtype=T.float64, requires_grad=True)
        out = OPS[op](a, b)
        out.sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
