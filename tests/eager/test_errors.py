"""The error cases of API.md §2: PyTorch's exception type and first sentence, and shape
mismatches that name both shapes."""
import warnings

import pytest

import srcgrad as torch_like


def _nonscalar(T):
    x = T.ones(3, requires_grad=True)
    (x * 2).backward()


def _second_backward(T):
    x = T.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _no_grad_backward(T):
    T.ones(2).sum().backward()


def _requires_grad_nonleaf(T):
    x = T.ones(3, requires_grad=True)
    (x * 2).requires_grad_(False)


def _inplace_saved_output(T):
    x = T.ones(3, requires_grad=True)
    b = (x * 1).tanh()
    b.mul_(2)
    b.sum().backward()


def _inplace_saved_input(T):
    x = T.ones(3, requires_grad=True)
    a = x * 1
    b = a * a
    a.add_(1)
    b.sum().backward()


def _inplace_saved_leaf(T):
    leaf = T.ones(3, requires_grad=True)
    b = leaf * leaf
    with T.no_grad():
        leaf.add_(1)
    b.sum().backward()


def _inplace_leaf(T):
    T.ones(3, requires_grad=True).add_(1)


def _inplace_leaf_setitem(T):
    T.ones(3, requires_grad=True)[0] = 1.0


def _broadcast(T):
    T.ones(2, 3) + T.ones(4)


def _mm_shapes(T):
    T.ones(2, 3).mm(T.ones(4, 2))


def _matmul_shapes(T):
    T.ones(2, 3) @ T.ones(4)


def _view_shape(T):
    T.ones(2, 3).view(4)


def _grad_shape(T):
    x = T.ones(3, requires_grad=True)
    (x * 2).backward(T.ones(2))


def _unused_input(T):
    x = T.ones(3, requires_grad=True)
    T.autograd.grad((x * 2).sum(), [x, T.ones(2, requires_grad=True)])


def _int_requires_grad(T):
    T.ones(2, dtype=T.int64, requires_grad=True)


def _item(T):
    T.ones(3).item()


def _numpy_requires_grad(T):
    T.ones(3, requires_grad=True).numpy()


def _nll_target_out_of_bounds(T):
    T.nn.functional.nll_loss(T.zeros(2, 3), T.tensor([0, 3]))


CASES = {
    _nll_target_out_of_bounds: (IndexError, "Target 3 is out of bounds."),
    _nonscalar: (RuntimeError, "grad can be implicitly created only for scalar outputs"),
    _second_backward: (RuntimeError, "Trying to backward through the graph a second time"),
    _no_grad_backward: (RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"),
    _requires_grad_nonleaf: (RuntimeError, "you can only change requires_grad flags of leaf variables."),
    _inplace_saved_output: (RuntimeError, "one of the variables needed for gradient computation has been "
                                          "modified by an inplace operation: [torch.FloatTensor [3]], which is "
                                          "output 0 of Tanh, is at version 1; expected version 0 instead."),
    _inplace_saved_input: (RuntimeError, "one of the variables needed for gradient computation has been modified "
                                         "by an inplace operation: [torch.FloatTensor [3]], which is output 0 of "
                                         "Add, is at version 1; expected version 0 instead."),
    _inplace_saved_leaf: (RuntimeError, "one of the variables needed for gradient computation has been modified by "
                                        "an inplace operation: [torch.FloatTensor [3]] is at version 1; expected "
                                        "version 0 instead."),
    _inplace_leaf: (RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."),
    _inplace_leaf_setitem: (RuntimeError, "a view of a leaf Variable that requires grad is being used in an "
                                          "in-place operation."),
    _broadcast: (RuntimeError, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                               "dimension 1"),
    _mm_shapes: (RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)"),
    _matmul_shapes: (RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    _view_shape: (RuntimeError, "shape '[4]' is invalid for input of size 6"),
    _grad_shape: (RuntimeError, "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] "
                                "has a shape of torch.Size([3])."),
    _unused_input: (RuntimeError, "The differentiated Tensor at index 1 appears to not have been used in the graph."),
    _int_requires_grad: (RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"),
    _item: (RuntimeError, "a Tensor with 3 elements cannot be converted to Scalar"),
    _numpy_requires_grad: (RuntimeError, "Can't call numpy() on Tensor that requires grad."),
}


def _first_sentence(msg):
    return msg.split(". ")[0]


@pytest.mark.parametrize("case", list(CASES), ids=lambda f: f.__name__.strip("_"))
def test_error_type_and_message(case):
    exc, text = CASES[case]
    with pytest.raises(exc) as info:
        case(torch_like)
    assert str(info.value).startswith(text) or _first_sentence(str(info.value)) == _first_sentence(text), \
        str(info.value)


@pytest.mark.parametrize("case", list(CASES), ids=lambda f: f.__name__.strip("_"))
def test_same_as_pytorch(case):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        case(torch)
    with pytest.raises(Exception) as ours:
        case(torch_like)
    assert type(ours.value) is type(theirs.value)
    assert _first_sentence(str(ours.value)) == _first_sentence(str(theirs.value))


NUMBER_ARGUMENTS = ["add(1.0, 2.0)", "add(1.0, t)", "mul(2, t)", "sub(1.0, t)", "div(1.0, 2.0)", "remainder(5, t)",
                    "add(1, 2)", "tanh(0.5)", "sum(3.0)", "maximum(t, 0.5)", "dot(1.0, t)", "eq(1.0, t)",
                    "lt(1.0, 2.0)", "exp(t)"]


@pytest.mark.parametrize("call", NUMBER_ARGUMENTS)
def test_numbers_where_functions_take_tensors_as_pytorch(call):
    """torch.add(1.0, t) works; torch.tanh(0.5) is a TypeError naming the argument."""
    torch = pytest.importorskip("torch")
    results = []
    for T in (torch, torch_like):
        t = T.tensor([1.0, 2.0])
        try:
            results.append(repr(eval(f"T.{call}")))
        except TypeError as e:
            results.append(("TypeError", str(e).splitlines()[0].split(" - ")[0]))
    assert results[0] == results[1]


def test_nonleaf_grad_warns_and_is_none():
    x = torch_like.ones(2, requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert len(caught) == 1 and caught[0].category is UserWarning
    assert "is not a leaf Tensor is being accessed" in str(caught[0].message)
    assert caught[0].filename == __file__      # points at the user's line


def test_retain_grad_silences_the_warning():
    x = torch_like.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad.tolist() == [4.0, 4.0]


def test_add_only_graph_can_run_backward_twice():
    """Like PyTorch: nodes that saved nothing have nothing to free."""
    x = torch_like.ones(3, requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
