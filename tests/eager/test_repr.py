"""``repr`` of tensors equals PyTorch's: integer/fixed/scientific modes, alignment, wrapping,
summarisation, dtype and autograd suffixes."""
import numpy as np
import pytest

import srcgrad

VALUES = [
    [1.0, 2.0, 3.0],
    [[1.0, 2.0], [3.0, 4.0]],
    [0.1, 1.0, 0.0001],
    [1e-5, 1.0],
    [102.4, 1024.0, 0.1024],
    [1e9, 1.0],
    [-1408.8143, 136.5251, 675.6753],
    [[0.4213, 1.2301], [-21.0248, 21.2918]],
    [float("nan"), 1.0, float("inf"), -float("inf")],
    [float("nan"), 1.5],
    [0.0, 0.0],
    [-0.0, 1.0],
    3.0,
    27.0,
    -0.5,
    1e-10,
    [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]],
    list(np.linspace(-3, 3, 40)),
    list(np.arange(2000.0)),
    np.arange(3000.0).reshape(30, 100).tolist(),
    np.arange(24.0).reshape(2, 3, 4).tolist(),
    [123456.789, 0.5],
]


def _both(fn):
    torch = pytest.importorskip("torch")
    return fn(srcgrad), fn(torch)


@pytest.mark.parametrize("i", range(len(VALUES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_repr(i, dtype):
    ours, theirs = _both(lambda T: repr(T.tensor(VALUES[i], dtype=getattr(T, dtype))))
    assert ours == theirs


@pytest.mark.parametrize("data", [[1, 2, 3], [[10, -200], [3, 4]], 5, list(range(1500)), [True, False],
                                  [[True], [False]]])
def test_int_and_bool_repr(data):
    ours, theirs = _both(lambda T: repr(T.tensor(data)))
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda T: T.ones(2, 2, requires_grad=True),
    lambda T: T.ones(2, 2, requires_grad=True) * 3,
    lambda T: (T.ones(2, 2, requires_grad=True) * 3).mean(),
    lambda T: T.ones(3, dtype=T.float64, requires_grad=True).sum(),
    lambda T: T.zeros(0),
    lambda T: T.zeros(0, 3),
    lambda T: T.zeros(2, 0, dtype=T.int64),
    lambda T: T.zeros(0, dtype=T.float64),
    lambda T: T.arange(10),
    lambda T: T.linspace(0, 1, 5, dtype=T.float16),
    lambda T: T.ones(5, 50, requires_grad=True) * 1.5,
    lambda T: T.eye(3) > 0,
    lambda T: T.tensor(2, dtype=T.int32),
])
def test_misc_repr(make):
    ours, theirs = _both(lambda T: repr(make(T)))
    import re
    assert re.sub("0x[0-9a-f]+", "", ours) == re.sub("0x[0-9a-f]+", "", theirs)


def test_str_and_format_of_scalars():
    ours, theirs = _both(lambda T: (str(T.tensor(2.5)), f"{T.tensor(2.5):.3f}", str(T.Size([2, 3])),
                                    repr(T.float32), str(T.ones(2).dtype), repr(T.ones(2, 3).shape)))
    assert ours == theirs


def test_set_printoptions():
    def run(T):
        T.set_printoptions(precision=2)
        try:
            return repr(T.tensor([1.12345, 2.0]))
        finally:
            T.set_printoptions(profile="default")
    ours, theirs = _both(run)
    assert ours == theirs
