"""Every op of op_cases.py: gradients pass gradcheck (float64), and where torch is installed,
values, grad_fn names and gradients equal PyTorch's on the same inputs."""
import numpy as np
import pytest

import srcgrad

from .op_cases import CASES, NO_GRADCHECK, inputs


def _run(T, name, dtype, create_graph=False):
    fn, shapes = CASES[name]
    xs = [T.tensor(v, dtype=dtype, requires_grad=True) for v in inputs(shapes)]
    out = fn(T, *xs)
    g = np.linspace(0.5, 1.5, int(np.prod(out.shape))).reshape(tuple(out.shape))
    grads = T.autograd.grad(out, xs, T.tensor(g, dtype=dtype), allow_unused=True, create_graph=create_graph)
    return out, grads, xs


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_GRADCHECK))
def test_gradcheck(name):
    fn, shapes = CASES[name]
    xs = tuple(srcgrad.tensor(v, dtype=srcgrad.float64, requires_grad=True) for v in inputs(shapes))
    assert srcgrad.autograd.gradcheck(lambda *a: fn(srcgrad, *a), xs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, our_grads, _ = _run(srcgrad, name, srcgrad.float32)
    theirs, their_grads, _ = _run(torch, name, torch.float32)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(our_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_matches_pytorch(name):
    """Differentiating the gradient again (create_graph=True) gives PyTorch's numbers."""
    torch = pytest.importorskip("torch")
    results = []
    for T in (srcgrad, torch):
        out, grads, xs = _run(T, name, T.float64, create_graph=True)
        total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
        if not isinstance(total, (T.Tensor,)):
            results.append(None)
            continue
        results.append([None if h is None else h.detach().numpy(force=True)
                        for h in T.autograd.grad(total, xs, allow_unused=True)])
    ours, theirs = results
    assert (ours is None) == (theirs is None)
    if ours is not None:
        for a, b in zip(ours, theirs):
            if a is None or b is None:   # an unused input may come back as None or as zeros
                assert np.allclose(a if a is not None else 0, b if b is not None else 0)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
