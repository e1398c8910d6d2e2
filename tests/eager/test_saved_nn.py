"""Saved tensors of the nn ops as PyTorch 2.13 shows them: ``grad_fn._saved_<name>`` /
``_raw_saved_<name>`` and what ``saved_tensors_hooks`` pack, for softmax, the losses,
convolution, pooling, padding, the norms, embedding and GELU; and custom Functions'
``saved_tensors``. Every expectation is checked against the installed torch (see
test_saved_tensors.py for the elementwise, reduction, shape and matmul ops)."""
import warnings

import numpy as np
import pytest

import srcgrad

from .test_saved_tensors import _describe, _Values

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
X = rng.standard_normal((2, 3)).astype(np.float32)
P = rng.uniform(0.05, 0.95, (2, 3)).astype(np.float32)
IMG = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
W = rng.standard_normal((3, 4, 3, 3)).astype(np.float32)
B = rng.standard_normal(3).astype(np.float32)
C4 = rng.uniform(0.5, 1.5, 4).astype(np.float32)

# each op: f(T, F, x, p, img, w, b, c) with x, p, img, w, b, c requiring grad (c: 4 per-channel values)
OPS = {
    "softmax": lambda T, F, x, p, img, w, b, c: F.softmax(x, -1),
    "softmax_dim0": lambda T, F, x, p, img, w, b, c: F.softmax(x, 0),
    "log_softmax": lambda T, F, x, p, img, w, b, c: F.log_softmax(x, 1),
    "log_softmax_negative": lambda T, F, x, p, img, w, b, c: F.log_softmax(x, -2),
    "mse_loss": lambda T, F, x, p, img, w, b, c: F.mse_loss(x, p),
    "mse_loss_none": lambda T, F, x, p, img, w, b, c: F.mse_loss(x, p.detach(), reduction="none"),
    "mse_loss_sum": lambda T, F, x, p, img, w, b, c: F.mse_loss(x, p, reduction="sum"),
    "nll_loss": lambda T, F, x, p, img, w, b, c: F.nll_loss(x, T.tensor([0, 2])),
    "nll_loss_weight_sum": lambda T, F, x, p, img, w, b, c: F.nll_loss(x, T.tensor([0, 2]), weight=T.tensor(
        [1.0, 2.0, 3.0]), reduction="sum"),
    "nll_loss_ignore_none": lambda T, F, x, p, img, w, b, c: F.nll_loss(x, T.tensor([1, 2]), ignore_index=1,
                                                                         reduction="none"),
    "nll_loss_1d": lambda T, F, x, p, img, w, b, c: F.nll_loss(x[0], T.tensor(2)),
    "cross_entropy": lambda T, F, x, p, img, w, b, c: F.cross_entropy(x, T.tensor([0, 2])),
    "bce": lambda T, F, x, p, img, w, b, c: F.binary_cross_entropy(p, T.tensor(P[::-1].copy())),
    "bce_weight": lambda T, F, x, p, img, w, b, c: F.binary_cross_entropy(p, T.tensor(P[::-1].copy()),
                                                                          weight=T.ones(2, 3), reduction="sum"),
    "bce_logits": lambda T, F, x, p, img, w, b, c: F.binary_cross_entropy_with_logits(x, p),
    "bce_logits_weights": lambda T, F, x, p, img, w, b, c: F.binary_cross_entropy_with_logits(
        x, p.detach(), weight=T.ones(3), pos_weight=T.tensor([1.0, 2.0, 3.0]), reduction="none"),
    "conv2d": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w, b, stride=2, padding=1),
    "conv2d_no_bias": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w),
    "conv2d_input_only": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w.detach()),
    "conv2d_weight_only": lambda T, F, x, p, img, w, b, c: F.conv2d(img.detach(), w, dilation=(1, 2)),
    "conv2d_bias_only": lambda T, F, x, p, img, w, b, c: F.conv2d(img.detach(), w.detach(), b),
    "conv2d_groups": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w[:2, :2], groups=2, stride=(1, 2),
                                                               padding=(0, 1)),
    "conv2d_same": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w, padding="same"),
    "conv2d_same_even": lambda T, F, x, p, img, w, b, c: F.conv2d(img, w[:, :, :2], padding="same"),
    "conv2d_unbatched": lambda T, F, x, p, img, w, b, c: F.conv2d(img[0], w, b),
    "conv1d": lambda T, F, x, p, img, w, b, c: F.conv1d(img[:, :, 0], w[:, :, 0], b, padding=1, stride=2),
    "max_pool2d": lambda T, F, x, p, img, w, b, c: F.max_pool2d(img, 2),
    "max_pool2d_args": lambda T, F, x, p, img, w, b, c: F.max_pool2d(img, (2, 3), stride=(1,), padding=(1,),
                                                                     dilation=2, ceil_mode=True),
    "max_pool2d_lists": lambda T, F, x, p, img, w, b, c: F.max_pool2d(img, [2], stride=[]),
    "max_pool2d_indices": lambda T, F, x, p, img, w, b, c: F.max_pool2d(img, 3, 1, 1, return_indices=True)[0],
    "max_pool1d": lambda T, F, x, p, img, w, b, c: F.max_pool1d(img[:, :, 0], 3),
    "avg_pool2d": lambda T, F, x, p, img, w, b, c: F.avg_pool2d(img, 2),
    "avg_pool2d_args": lambda T, F, x, p, img, w, b, c: F.avg_pool2d(img, 3, 2, 1, ceil_mode=True,
                                                                     count_include_pad=False, divisor_override=4),
    "avg_pool1d": lambda T, F, x, p, img, w, b, c: F.avg_pool1d(img[:, :, 0], 2),
    "pad_constant": lambda T, F, x, p, img, w, b, c: F.pad(img, (1, 2)),
    "pad_constant_negative": lambda T, F, x, p, img, w, b, c: F.pad(img, (-1, 2, 0, 1), value=3.0),
    "pad_reflect": lambda T, F, x, p, img, w, b, c: F.pad(img, (1, 2, 1, 1), mode="reflect"),
    "pad_reflect1d": lambda T, F, x, p, img, w, b, c: F.pad(img[:, :, 0], (1, 2), mode="reflect"),
    "pad_replicate": lambda T, F, x, p, img, w, b, c: F.pad(img, (1, 2, 0, 3), mode="replicate"),
    "pad_replicate1d": lambda T, F, x, p, img, w, b, c: F.pad(img[0], (2, 0), mode="replicate"),
    "batch_norm": lambda T, F, x, p, img, w, b, c: F.batch_norm(img, T.zeros(4), T.ones(4), c, c * 0.5,
                                                                training=True),
    "batch_norm_no_stats": lambda T, F, x, p, img, w, b, c: F.batch_norm(img, None, None, training=True, eps=1e-3),
    "batch_norm_eval": lambda T, F, x, p, img, w, b, c: F.batch_norm(img, T.zeros(4), T.tensor(C4), training=False),
    "batch_norm_eval_weight": lambda T, F, x, p, img, w, b, c: F.batch_norm(img, T.zeros(4), T.ones(4), c,
                                                                            training=False),
    "layer_norm": lambda T, F, x, p, img, w, b, c: F.layer_norm(img, (5, 5), img[0, 0] * 1, img[0, 1] * 1),
    "layer_norm_plain": lambda T, F, x, p, img, w, b, c: F.layer_norm(x, [3]),
    "group_norm": lambda T, F, x, p, img, w, b, c: F.group_norm(img, 2, c, c * 0.5, eps=1e-4),
    "group_norm_plain": lambda T, F, x, p, img, w, b, c: F.group_norm(x, 3),
    "embedding": lambda T, F, x, p, img, w, b, c: F.embedding(T.tensor([[0, 2], [1, 1]]), x.t()),
    "embedding_options": lambda T, F, x, p, img, w, b, c: F.embedding(T.tensor([0, 2, 2]), x.t(), padding_idx=-2,
                                                                      scale_grad_by_freq=True),
    "gelu": lambda T, F, x, p, img, w, b, c: F.gelu(x),
    "gelu_tanh": lambda T, F, x, p, img, w, b, c: F.gelu(x, approximate="tanh"),
}

# ops whose result is a view (SqueezeBackward1) of the node to look at
INNER = {"conv2d_unbatched", "max_pool1d", "avg_pool1d"}

# what srcgrad does not show as PyTorch does, each for a reason:
KNOWN = {
    # padding="same" with an even kernel: PyTorch pads the input first (a ConstantPadNd node) and
    # saves the padded input; srcgrad pads inside the convolution (same _saved_padding, input unpadded)
    "conv2d_same_even": {"_saved_input"},
    # PyTorch's group-norm statistics are differentiable outputs of the node (requires_grad, grad_fn
    # NativeGroupNormBackward0); srcgrad's node has one output, so they read as plain tensors
    "group_norm": {"_saved_result1", "_saved_result2"},
    "group_norm_plain": {"_saved_result1", "_saved_result2"},
}
# max pooling keeps each max's window offset (int8), not PyTorch's int64 indices: _saved_result1 is
# computed from it on demand, so there is no _raw_saved_result1, and the hooks do not pack it
for _name in OPS:
    if _name.startswith("max_pool"):
        KNOWN[_name] = {"_raw_saved_result1"}


def _inputs(T):
    return tuple(T.tensor(a, requires_grad=True) for a in (X, P, IMG, W, B, C4))


def _run(T, name, *xs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # padding="same" with an even kernel
        return OPS[name](T, T.nn.functional, *xs)


def _saved_view(T, name):
    fn = _run(T, name, *_inputs(T)).grad_fn
    if name in INNER:
        fn = fn.next_functions[0][0]
    skip = KNOWN.get(name, ())
    names = sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")) and n not in skip)
    values = {n: _describe(getattr(fn, n), T) for n in names if n.startswith("_saved_")}
    return fn.name(), names, values


def test_nn_saved_attributes_match_torch():
    mismatches = {}
    for name in sorted(OPS):
        ours, theirs = _saved_view(srcgrad, name), _saved_view(torch, name)
        if ours != theirs:
            mismatches[name] = (ours, theirs)
    assert mismatches == {}


def _hook_log(T, name):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), str(t.dtype), t.requires_grad,
                    t.grad_fn.name() if t.grad_fn is not None else None))
        return t.detach()

    def unpack(t):
        log.append(("unpack", tuple(t.shape), str(t.dtype)))
        return t

    xs = _inputs(T)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = _run(T, name, *xs)
    log.append("backward")
    (out * T.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape), dtype=out.dtype)).sum().backward()
    return log, [None if x.grad is None else x.grad.numpy() for x in xs]


# what the hooks see differently (see KNOWN above)
HOOKS_DIFFER = {"conv2d_same_even", "group_norm", "group_norm_plain"} | {n for n in OPS if n.startswith("max_pool")}


def test_nn_saved_tensors_hooks_calls_match_torch():
    # what is packed (inputs, outputs, statistics, indices), in which order, the unpacks in backward, the grads
    mismatches = {}
    for name in sorted(set(OPS) - HOOKS_DIFFER):
        (ours, our_grads), (theirs, their_grads) = _hook_log(srcgrad, name), _hook_log(torch, name)
        same_grads = all((a is None) == (b is None) and (a is None or np.allclose(a, b, rtol=1e-4, atol=1e-5))
                         for a, b in zip(our_grads, their_grads))
        if ours != theirs or not same_grads:
            mismatches[name] = (ours, theirs, same_grads)
    assert mismatches == {}


def test_saved_statistics_are_freed_by_backward():
    def run(T):
        F = T.nn.functional
        x, p, img, w, b, c = _inputs(T)
        outs = {"bn": F.batch_norm(img, T.zeros(4), T.ones(4), c, None, training=True),
                "ln": F.layer_norm(x, (3,)),
                "nll": F.nll_loss(x, T.tensor([0, 2])),
                "pool": F.max_pool2d(img, 2),
                "emb": F.embedding(T.tensor([0, 1]), x)}
        sum(o.sum() for o in outs.values()).backward()
        log = []
        for key, attr in (("bn", "_saved_result1"), ("bn", "_saved_input"), ("bn", "_saved_eps"),
                          ("bn", "_saved_training"), ("ln", "_saved_result2"), ("ln", "_saved_normalized_shape"),
                          ("nll", "_saved_total_weight"), ("nll", "_saved_reduction"), ("pool", "_saved_result1"),
                          ("pool", "_saved_kernel_size"), ("emb", "_saved_indices"), ("emb", "_saved_padding_idx")):
            try:
                log.append((key, attr, getattr(outs[key].grad_fn, attr)))
            except RuntimeError as e:
                log.append((key, attr, str(e)[:60]))
        return log
    assert run(srcgrad) == run(torch)


def test_raw_saved_statistics_take_hooks():
    def run(T):
        out = []
        x = T.tensor(X, requires_grad=True)
        y = T.nn.functional.layer_norm(x, (3,))
        raw = y.grad_fn._raw_saved_result2
        raw.register_hooks(lambda t: (out.append(("pack", tuple(t.shape), t.requires_grad)), t * 2)[1],
                           lambda t: (out.append(("unpack", tuple(t.shape))), t / 2)[1])
        out.append(_Values(raw.data.numpy().copy()))             # what the pack hook returned
        (y * T.tensor(P)).sum().backward()
        out.append(_Values(x.grad.numpy().copy()))
        return out
    assert run(srcgrad) == run(torch)


def test_custom_function_saved_tensors_match_torch():
    def run(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, None, b * 2)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                a, _, b2 = ctx.saved_tensors
                return g * b2, None

        out = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, T.ones(2))
        saved = y.grad_fn.saved_tensors
        out.append([None if t is None else (t.tolist(), t.requires_grad) for t in saved])
        out.append(saved[0] is x)
        raw = y.grad_fn._raw_saved_tensors
        out.append((type(raw).__name__, [type(r).__name__ for r in raw], raw[0] is y.grad_fn._raw_saved_tensors[0]))
        raw[2].register_hooks(lambda t: (out.append(("pack", t.tolist(), t.requires_grad)), t * 4)[1],
                              lambda t: (out.append(("unpack", t.tolist())), t / 4)[1])
        y.sum().backward()
        out.append(x.grad.tolist())
        for attr in ("saved_tensors", "_raw_saved_tensors"):
            with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
                getattr(y.grad_fn, attr)
        return out
    assert run(srcgrad) == run(torch)
