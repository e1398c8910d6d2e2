"""Graph semantics: next_functions, hooks, retain_grad, freeing, create_graph, autograd.grad,
version counters, grad modes per thread, autograd.Function and Variable."""
import gc
import threading
import weakref

import numpy as np
import pytest

import srcgrad as torch


def test_next_functions_and_names():
    x = torch.ones(5)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    assert z.grad_fn.name() == "AddBackward0"
    (sq, _), (acc, _) = z.grad_fn.next_functions
    assert sq.name() == "SqueezeBackward4"
    assert acc.name() == "AccumulateGrad" and acc.variable is b
    assert (x * 2).grad_fn is None
    assert (w * 2).grad_fn.next_functions[1] == (None, 0)


def test_leaf_shares_one_accumulate_grad():
    w = torch.ones(2, requires_grad=True)
    a, b = w * 2, w * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_graph_is_freed_after_backward():
    x = torch.ones(3, requires_grad=True)
    hidden = x * 2
    ref = weakref.ref(hidden)
    out = (hidden * hidden).sum()
    del hidden
    gc.collect()
    assert ref() is not None          # saved by MulBackward0
    out.backward()
    gc.collect()
    assert ref() is None              # released by backward() without retain_graph
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_retain_graph_keeps_saved_tensors():
    x = torch.ones(3, requires_grad=True)
    out = (x * x).sum()
    out.backward(retain_graph=True)
    out.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_whole_graph_is_collected_when_dropped():
    x = torch.ones(3, requires_grad=True)
    out = (x.exp() * 2).tanh().sum()
    ref = weakref.ref(out.grad_fn)
    del out
    assert ref() is None              # no reference cycles: freed without the cycle collector


def test_backward_with_gradient_argument():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).backward(torch.tensor([0.1, 1.0, 0.0001]))
    assert np.allclose(x.grad.numpy(), [0.2, 2.0, 0.0002])


def test_gradients_accumulate_and_zero():
    x = torch.ones(2, requires_grad=True)
    for _ in range(3):
        (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]


def test_grad_is_not_an_alias_of_the_given_gradient():
    x = torch.ones(2, requires_grad=True)
    v = torch.tensor([1.0, 2.0])
    (x + 0).backward(v)
    x.grad.zero_()
    assert v.tolist() == [1.0, 2.0]


def test_two_leaves_fed_by_one_add_get_separate_grads():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    (a + b).sum().backward()
    a.grad.mul_(5)
    assert b.grad.tolist() == [1.0, 1.0]


def test_broadcast_gradients_are_summed_to_the_input_shape():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    c = torch.ones(2, 1, requires_grad=True)
    (a * b * c).sum().backward()
    assert b.grad.shape == (3,) and b.grad.tolist() == [2.0, 2.0, 2.0]
    assert c.grad.shape == (2, 1) and c.grad.tolist() == [[3.0], [3.0]]


def test_create_graph_gives_higher_order_gradients():
    x = torch.tensor([2.0], requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [12.0] and g.grad_fn is not None
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    assert h.tolist() == [12.0]
    (k,) = torch.autograd.grad(h.sum(), x)
    assert k.tolist() == [6.0]


def test_backward_create_graph_records_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x.sin() * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    expected = 2 * np.cos([1.0, 2.0]) - np.array([1.0, 2.0]) * np.sin([1.0, 2.0])
    assert np.allclose(x.grad.numpy(), expected, atol=1e-6)


def test_autograd_grad_allow_unused_and_does_not_touch_grad():
    x = torch.ones(2, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    gx, gu = torch.autograd.grad((x * 3).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [3.0, 3.0] and gu is None
    assert x.grad is None


def test_autograd_grad_of_intermediate():
    x = torch.ones(2, requires_grad=True)
    h = x * 2
    (gh,) = torch.autograd.grad((h * h).sum(), h)
    assert gh.tolist() == [4.0, 4.0]


def test_autograd_backward_function_and_inputs():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    torch.autograd.backward([(a * b).sum()], inputs=[a])
    assert a.grad.tolist() == [1.0, 1.0] and b.grad is None


def test_tensor_hooks_change_the_gradient():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    assert x.grad.tolist() == [60.0, 60.0]
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_node_hooks():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda gout: calls.append(("pre", gout[0].tolist())))
    y.grad_fn.register_hook(lambda gin, gout: calls.append(("post", gin[0].tolist())))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [2.0, 2.0])]


def test_post_accumulate_grad_hook():
    x = torch.ones(2, requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 4).sum().backward()
    assert seen == [[4.0, 4.0]]


def test_retain_grad_on_intermediate():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    y.retain_grad()
    (y * y * 3).mean().backward()
    assert y.retains_grad and y.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_version_counter_counts_inplace_changes_and_views_share_it():
    x = torch.ones(3)
    v = x[1:]
    assert x._version == 0
    x.add_(1)
    v.mul_(2)
    assert x._version == 2 and v._version == 2
    assert x.tolist() == [2.0, 4.0, 4.0]


def test_inplace_on_nonleaf_rebases_history():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_setitem_records_copyslices():
    x = torch.ones(3, requires_grad=True)
    v = torch.tensor([5.0], requires_grad=True)
    y = x * 2
    y[1:2] = v * 3
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0] and v.grad.tolist() == [3.0]


def test_inplace_on_view_of_graph_tensor_is_a_clear_error():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="in-place change of a view"):
        y[1:].mul_(2)


def test_no_grad_enable_grad_set_grad_enabled_inference_mode():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()
    with torch.inference_mode():
        assert not (x * 2).requires_grad

    @torch.no_grad()
    def f(t):
        return t * 2

    @torch.enable_grad
    def g(t):
        return t * 2

    with torch.no_grad():
        assert g(x).requires_grad
    assert not f(x).requires_grad


def test_grad_mode_is_per_thread():
    seen = {}
    barrier = threading.Barrier(2)

    def worker(name, enabled):
        torch.set_grad_enabled(enabled)
        barrier.wait()
        x = torch.ones(2, requires_grad=True)
        seen[name] = ((x * 2).requires_grad, torch.is_grad_enabled())

    threads = [threading.Thread(target=worker, args=("off", False)),
               threading.Thread(target=worker, args=("on", True))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"off": (False, False), "on": (True, True)}
    assert torch.is_grad_enabled()


def test_detach_shares_data_but_not_history():
    x = torch.ones(2, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)
    assert x.tolist() == [2.0, 2.0] and x._version == 1


def test_requires_grad_flags():
    x = torch.ones(2)
    assert x.requires_grad_() is x and x.is_leaf
    y = x * 2
    assert not y.is_leaf
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, gy):
        (y,) = ctx.saved_tensors
        return gy * y


class MulConst(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        assert ctx.needs_input_grad == (True, False)
        return g * ctx.k, None


def test_custom_function():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    MulConst.apply(y, 3.0).sum().backward()
    assert np.allclose(x.grad.numpy(), 3 * np.exp([0.0, 1.0]))


def test_custom_function_double_backward_and_gradcheck():
    x = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Exp.apply, (x,))
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    assert np.allclose(h.numpy(), np.exp(0.5))


def test_custom_function_saved_tensor_version_check():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    a = torch.ones(2, requires_grad=True)
    h = a * 1
    out = Square.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_variable_is_the_deprecated_tensor_wrapper():
    from srcgrad.autograd import Variable
    var = Variable(torch.FloatTensor([9]))
    assert isinstance(var, Variable) and isinstance(var, torch.Tensor) and not var.requires_grad
    w = Variable(torch.FloatTensor([3]), requires_grad=True)
    (var * w).backward()
    assert w.grad.tolist() == [9.0]


def test_gradcheck_catches_a_wrong_gradient():
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g       # should be 2 x g

    x = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(Wrong.apply, (x,))


def test_gradient_seen_by_a_hook_is_not_updated_later():
    w = torch.ones(3, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    assert seen[0].tolist() == [2.0, 2.0, 2.0] and w.grad.tolist() == [4.0, 4.0, 4.0]


def test_weight_gradient_of_linear_is_laid_out_like_the_weight():
    x = torch.ones(4, 3)
    w = torch.ones(2, 3, requires_grad=True)
    torch.nn.functional.linear(x, w).sum().backward()
    assert w.grad.is_contiguous() and w.grad.tolist() == [[4.0] * 3] * 2
