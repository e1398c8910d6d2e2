"""Creation functions and dtypes, and PyTorch's type promotion, compared with PyTorch."""
import itertools

import pytest

import srcgrad

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
SCALARS = [True, 2, 2.5]


def _torch():
    return pytest.importorskip("torch")


def _t(T, name, dim):
    d = getattr(T, name)
    return T.ones(3, dtype=d) if dim else T.ones((), dtype=d)


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("dims", [(1, 1), (1, 0), (0, 1)])
def test_tensor_tensor_promotion(a, b, dims):
    torch = _torch()
    ours = (_t(srcgrad, a, dims[0]) + _t(srcgrad, b, dims[1])).dtype if "bool" not in (a, b) or a != b else None
    theirs = (_t(torch, a, dims[0]) + _t(torch, b, dims[1])).dtype if ours is not None else None
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("a", DTYPES[1:])
@pytest.mark.parametrize("s", SCALARS)
@pytest.mark.parametrize("op", ["mul", "div", "sub"])
def test_tensor_scalar_promotion(a, s, op):
    torch = _torch()

    def run(T):
        x = _t(T, a, 1)
        try:
            return str({"mul": lambda: x * s, "div": lambda: x / s, "sub": lambda: x - s}[op]().dtype)
        except RuntimeError as e:   # bool subtraction is refused by both
            return str(e)
    assert run(srcgrad) == run(torch)


@pytest.mark.parametrize("make", [
    lambda T: T.tensor([1, 2]), lambda T: T.tensor([1.0, 2]), lambda T: T.tensor([True]),
    lambda T: T.tensor(3.5), lambda T: T.Tensor([1, 2]), lambda T: T.FloatTensor([9]),
    lambda T: T.DoubleTensor([1]), lambda T: T.LongTensor([1, 2]),
    lambda T: T.arange(5), lambda T: T.arange(0, 1, 0.25), lambda T: T.arange(5.0),
    lambda T: T.linspace(0, 1, 5), lambda T: T.eye(3), lambda T: T.eye(2, 3),
    lambda T: T.full((2, 2), 7), lambda T: T.full((2,), 1.5), lambda T: T.zeros_like(T.ones(2, dtype=T.int64)),
    lambda T: T.ones_like(T.ones(2), dtype=T.float64), lambda T: T.zeros(2, 3), lambda T: T.ones((2, 3)),
    lambda T: T.tensor(__import__("numpy").ones(2)), lambda T: T.from_numpy(__import__("numpy").arange(3)),
    lambda T: T.tensor([[1, 2], [3, 4]]).float().mean(),
])
def test_creation_matches_pytorch(make):
    torch = _torch()
    ours, theirs = make(srcgrad), make(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


def test_legacy_constructor_with_sizes():
    t = srcgrad.Tensor(2, 3)       # uninitialised in PyTorch; zeros here
    assert t.shape == (2, 3) and t.dtype is srcgrad.float32


def test_default_dtype_switch():
    srcgrad.set_default_dtype(srcgrad.float64)
    try:
        assert srcgrad.tensor([1.0]).dtype is srcgrad.float64
        assert srcgrad.ones(2).dtype is srcgrad.float64
        assert (srcgrad.ones(2, dtype=srcgrad.int64) * 0.5).dtype is srcgrad.float64
    finally:
        srcgrad.set_default_dtype(srcgrad.float32)
    assert srcgrad.get_default_dtype() is srcgrad.float32


def test_manual_seed_repeats_random_numbers():
    srcgrad.manual_seed(3)
    a = srcgrad.randn(4)
    srcgrad.manual_seed(3)
    assert srcgrad.randn(4).tolist() == a.tolist()
    assert srcgrad.rand(2, 2).dtype is srcgrad.float32
    assert 0 <= srcgrad.rand(100).min().item() and srcgrad.rand(100).max().item() < 1


def test_gradient_dtype_follows_the_leaf():
    x = srcgrad.ones(3, dtype=srcgrad.float64, requires_grad=True)
    (x.float() * 2).sum().backward()
    assert x.grad.dtype is srcgrad.float64
