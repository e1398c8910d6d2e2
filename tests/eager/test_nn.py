"""srcgrad.nn against torch.nn 2.13 (issue 16, point 1): modules built the same way in both,
with srcgrad's parameters copied from torch's, give the same outputs, gradients, names,
reprs and errors."""
import copy
import pickle

import numpy as np
import pytest

import srcgrad as st

from .test_saved_tensors import _Values

torch = pytest.importorskip("torch")


def same_weights(ours, theirs):
    """Copy ``theirs``' parameters and buffers into ``ours`` (the same names in both)."""
    state = {k: st.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    return ours


def both(build, *inputs, dtype="float32"):
    """``build(lib)`` with each library, same weights; returns (ours, theirs) and the inputs as
    tensors of each."""
    theirs = build(torch).to(getattr(torch, dtype))
    ours = same_weights(build(st).to(getattr(st, dtype)), theirs)
    ins = [(st.tensor(a), torch.tensor(a)) for a in inputs]
    return ours, theirs, ins


def check_close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


class Net:
    """A model written the way the tutorials write one, for either library."""

    @staticmethod
    def build(lib):
        nn = lib.nn

        class TwoLayer(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.act = nn.Tanh()
                self.heads = nn.ModuleDict({"a": nn.Linear(8, 3), "b": nn.Linear(8, 3, bias=False)})
                self.register_buffer("scale", lib.linspace(0.5, 1.5, 3))

            def forward(self, x):
                h = self.act(self.fc1(x))
                return self.heads["a"](h) * self.scale + self.heads["b"](h)
        return TwoLayer()


def test_a_model_runs_as_in_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    ours, theirs, [(sx, tx)] = both(Net.build, x)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    out, tout = ours(sx), theirs(tx)
    # float32 matrix products and their sums over the batch, rounded as the CPU's BLAS blocks them:
    # an element near 0 keeps the rounding of terms of size ~1 (up to 7e-7 seen), hence atol 1e-5
    check_close(out, tout, atol=1e-5)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        check_close(p.grad, q.grad, atol=1e-5)
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())
    ours.zero_grad(set_to_none=False)


@pytest.mark.parametrize("name", ["Linear", "Bilinear", "Identity", "ReLU", "Tanh", "Sigmoid", "GELU", "LeakyReLU",
                                  "Softmax", "LogSoftmax", "Flatten", "SiLU"])
def test_layers_against_torch(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    args = {"Linear": (4, 5), "Bilinear": (4, 4, 2), "LeakyReLU": (0.2,), "Softmax": (1,), "LogSoftmax": (1,)}
    ours, theirs, [(sx, tx)] = both(lambda lib: getattr(lib.nn, name)(*args.get(name, ())), x)
    assert repr(ours) == repr(theirs)
    sx.requires_grad_(), tx.requires_grad_()
    out, tout = (ours(sx, sx), theirs(tx, tx)) if name == "Bilinear" else (ours(sx), theirs(tx))
    check_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    check_close(sx.grad, tx.grad)
    for p, q in zip(ours.parameters(), theirs.parameters()):     # (sums over the batch: see the model's test)
        check_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,target", [("MSELoss", "float"), ("L1Loss", "float"), ("SmoothL1Loss", "float"),
                                         ("HuberLoss", "float"), ("CrossEntropyLoss", "index"),
                                         ("NLLLoss", "index"), ("BCELoss", "prob"), ("BCEWithLogitsLoss", "prob"),
                                         ("CrossEntropyLoss", "prob")])
def test_losses_against_torch(name, target):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4))
    if name == "BCELoss":
        x = 1 / (1 + np.exp(-x))
    if name == "NLLLoss":
        x = x - np.log(np.exp(x).sum(1, keepdims=True))
    t = {"float": rng.standard_normal((6, 4)), "index": rng.integers(0, 4, 6),
         "prob": rng.random((6, 4))}[target]
    weight = np.array([0.5, 1.0, 2.0, 0.25]) if name in ("CrossEntropyLoss", "NLLLoss") else None
    for reduction in ("mean", "sum", "none"):
        kw = {"reduction": reduction}
        extra = [{}]
        if name == "CrossEntropyLoss":
            extra = [{}, {"label_smoothing": 0.1}, {"weight": weight, "label_smoothing": 0.2}]
            if target == "index":
                extra.append({"weight": weight, "ignore_index": 1, "label_smoothing": 0.1})
        elif weight is not None:
            extra = [{}, {"weight": weight}]
        for more in extra:
            ours_kw = {**kw, **{k: st.tensor(v) if isinstance(v, np.ndarray) else v for k, v in more.items()}}
            theirs_kw = {**kw, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in more.items()}}
            sx, tx = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            loss = getattr(st.nn, name)(**ours_kw)(sx, st.tensor(t))
            tloss = getattr(torch.nn, name)(**theirs_kw)(tx, torch.tensor(t))
            check_close(loss, tloss, rtol=1e-12, atol=1e-12)
            loss.sum().backward()
            tloss.sum().backward()
            check_close(sx.grad, tx.grad, rtol=1e-12, atol=1e-12)
            assert repr(getattr(st.nn, name)()) == repr(getattr(torch.nn, name)())


def test_containers():
    for lib in (st, torch):
        seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        assert len(seq) == 3 and isinstance(seq[0], lib.nn.Linear) and len(seq[1:]) == 2
        seq.append(lib.nn.Sigmoid())
        seq.insert(-1, lib.nn.Identity())
        del seq[1]
        lst = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
        lst.append(lib.nn.Tanh())
        lst.extend([lib.nn.ReLU()])
        d = lib.nn.ModuleDict({"x": lib.nn.ReLU()})
        d["y"] = lib.nn.Tanh()
        assert list(d.keys()) == ["x", "y"] and "x" in d
        from collections import OrderedDict
        named = lib.nn.Sequential(OrderedDict([("conv", lib.nn.Linear(1, 1)), ("act", lib.nn.ReLU())]))
        yield_ = (repr(seq), repr(lst), repr(d), repr(named), repr(seq[1:]))
        if lib is st:
            ours = yield_
    assert ours == yield_


def test_init_bounds_and_distributions():
    st.manual_seed(0)
    lin = st.nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound and w.std() == pytest.approx(bound / np.sqrt(3), rel=0.02)
    conv = st.nn.Conv2d(8, 16, 3, groups=2)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / np.sqrt(4 * 9)
    t = st.empty(200, 300)
    for fn, std in ((st.nn.init.xavier_uniform_, np.sqrt(2 / 500)), (st.nn.init.xavier_normal_, np.sqrt(2 / 500)),
                    (lambda x: st.nn.init.kaiming_normal_(x, nonlinearity="relu"), np.sqrt(2 / 300)),
                    (lambda x: st.nn.init.kaiming_uniform_(x, mode="fan_out"), np.sqrt(2 / 200)),
                    (lambda x: st.nn.init.normal_(x, 0.0, 0.5), 0.5),
                    (lambda x: st.nn.init.trunc_normal_(x, std=1.0), 0.8796)):
        assert fn(t) is t
        assert t.detach().numpy().std() == pytest.approx(std, rel=0.03)
    for name, param in (("tanh", None), ("relu", None), ("leaky_relu", 0.2), ("selu", None), ("linear", None)):
        assert st.nn.init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))
    e = st.nn.init.eye_(st.empty(3, 4))
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 4))
    q = st.nn.init.orthogonal_(st.empty(4, 6)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-6)
    emb = st.nn.Embedding(5, 3, padding_idx=1)
    assert not emb.weight[1].detach().numpy().any()


def test_state_dict_errors_and_attribute_errors_match_torch():
    messages = []
    for lib in (st, torch):
        m = lib.nn.Linear(2, 3)
        got = [repr(m.load_state_dict(m.state_dict()))]
        sd = m.state_dict()
        del sd["bias"]
        sd["extra"] = lib.zeros(1)
        for bad, kw in ((sd, {}), ({"weight": lib.zeros(3, 3), "bias": lib.zeros(3)}, {})):
            with pytest.raises(RuntimeError) as e:
                m.load_state_dict(bad, **kw)
            got.append(str(e.value))
        got.append(repr(m.load_state_dict({"weight": lib.ones(3, 2)}, strict=False)))
        assert m.weight.sum().item() == 6.0
        for action, exc in ((lambda: setattr(m, "weight", lib.zeros(3, 2)), TypeError),
                            (lambda: m.nothing, AttributeError), (lambda: lib.nn.Module()(1), NotImplementedError),
                            (lambda: m.register_buffer("weight", lib.zeros(1)), KeyError),
                            (lambda: m.register_parameter("a.b", None), KeyError),
                            (lambda: lib.nn.Dropout(1.5), ValueError),
                            (lambda: lib.nn.Sequential(lib.nn.ReLU())[3], IndexError)):
            with pytest.raises(exc) as e:
                action()
            got.append(str(e.value))
        messages.append(got)
    assert messages[0] == messages[1]


def test_train_eval_dtype_and_copies():
    net = st.nn.Sequential(st.nn.Linear(3, 3), st.nn.Dropout(0.5))
    assert net.training and net[1].training
    net.eval()
    assert not net[1].training
    x = st.ones(2, 3)
    np.testing.assert_array_equal(net(x).detach().numpy(), net[0](x).detach().numpy())
    net.train()
    out = net(st.ones(1000, 3)).detach().numpy()
    assert 0.4 < (out == 0).mean() < 0.6
    w = net[0].weight
    assert net.double() is net and net[0].weight is w and w.dtype == st.float64
    assert net.to(st.float32)[0].weight.dtype == st.float32
    with pytest.raises(RuntimeError, match="cuda"):
        net.to("cuda")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    twin = copy.deepcopy(net)
    assert isinstance(twin[0].weight, st.nn.Parameter) and twin[0].weight is not w
    again = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(again[0].weight.detach().numpy(), w.detach().numpy())
    assert repr(st.nn.Parameter(st.zeros(2))) == repr(torch.nn.Parameter(torch.zeros(2)))
    assert net.apply(lambda m: None) is net
    assert [type(c).__name__ for c in net.children()] == ["Linear", "Dropout"]


def test_hooks_against_torch():
    x = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    ours, theirs, [(sx, tx)] = both(lambda lib: lib.nn.Linear(3, 2), x)
    seen = []
    for m, inp in ((ours, sx), (theirs, tx)):
        calls = []
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h = m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_full_backward_hook(lambda mod, gin, gout: calls.append(
            ("bwd", [None if g is None else _Values(g.detach().numpy().copy()) for g in gin],
             [_Values(g.detach().numpy().copy()) for g in gout])))
        m.register_full_backward_pre_hook(lambda mod, gout: calls.append(("pre", len(gout))))
        inp.requires_grad_()
        out = m(inp)
        (out * 3).sum().backward()
        calls.append(_Values(out.detach().numpy().copy()))
        calls.append(_Values(inp.grad.numpy().copy()))
        h.remove()
        calls.append(_Values(m(inp).detach().numpy().copy()))
        seen.append(calls)
    assert seen[0] == seen[1]     # (values of float32 products: to float32 rounding, _Values)


def test_clip_grad_against_torch():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    for norm_type in (2.0, 1.0, float("inf")):
        for max_norm in (0.5, 100.0):
            ps = [st.tensor(a, requires_grad=True) for a in arrays]
            ts = [torch.tensor(a, requires_grad=True) for a in arrays]
            for p, t in zip(ps, ts):
                (p * p * p).sum().backward()
                (t * t * t).sum().backward()
            total = st.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
            ttotal = torch.nn.utils.clip_grad_norm_(ts, max_norm, norm_type)
            assert total.item() == pytest.approx(ttotal.item(), rel=1e-12)
            for p, t in zip(ps, ts):
                check_close(p.grad, t.grad, rtol=1e-12)
    st.nn.utils.clip_grad_value_(ps, 0.1)
    assert np.abs(ps[0].grad.numpy()).max() <= 0.1
    v = st.nn.utils.parameters_to_vector(ps)
    assert v.shape == (17,)


@pytest.mark.parametrize("name,args,shape", [("BatchNorm1d", (4,), (6, 4)), ("BatchNorm1d", (4,), (6, 4, 5)),
                                             ("BatchNorm2d", (3,), (4, 3, 5, 5)), ("LayerNorm", ((5,),), (4, 3, 5)),
                                             ("LayerNorm", ([3, 5],), (4, 3, 5))])
def test_normalisation_layers_train_and_eval_against_torch(name, args, shape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
    kws = [{}] if name == "LayerNorm" else [{}, {"momentum": None}, {"affine": False},
                                             {"track_running_stats": False}]
    for kw in kws:
        ours, theirs, [(sx, tx)] = both(lambda lib: getattr(lib.nn, name)(*args, **kw), x)
        assert repr(ours) == repr(theirs)
        for mode in ("train", "train", "eval"):
            getattr(ours, mode)(), getattr(theirs, mode)()
            a, b = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            out, tout = ours(a), theirs(b)
            check_close(out, tout, rtol=1e-4, atol=1e-5)
            (out * out).sum().backward()
            (tout * tout).sum().backward()
            check_close(a.grad, b.grad, rtol=1e-3, atol=1e-4)
            for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
                check_close(p.grad, q.grad, rtol=1e-3, atol=1e-4)
            for (n, p), (_, q) in zip(ours.named_buffers(), theirs.named_buffers()):
                check_close(p, q, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="expected 4D input"):
        st.nn.BatchNorm2d(3)(st.ones(2, 3))


def test_embedding_layer_against_torch():
    idx = np.array([[1, 2, 0], [4, 1, 1]])
    ours, theirs, _ = both(lambda lib: lib.nn.Embedding(5, 3, padding_idx=0))
    assert repr(ours) == repr(theirs)
    out, tout = ours(st.tensor(idx)), theirs(torch.tensor(idx))
    check_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    check_close(ours.weight.grad, theirs.weight.grad)
    pre = st.nn.Embedding.from_pretrained(st.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert not pre.weight.requires_grad and pre(st.tensor([1])).tolist() == [[3.0, 4.0]]


def test_device_queries_say_cpu_and_gpu_work_is_a_clear_error():
    assert not st.cuda.is_available() and st.cuda.device_count() == 0
    assert not st.accelerator.is_available() and st.accelerator.current_accelerator() is None
    assert not st.backends.mps.is_available() and not st.distributed.is_available()
    device = "cuda" if st.cuda.is_available() else "cpu"
    assert st.nn.Linear(2, 2).to(device).weight.dtype == st.float32
    for action, words in ((lambda: st.ones(2).cuda(), "Tensor.cuda()"), (lambda: st.compile(st.nn.ReLU()), "compile"),
                          (lambda: st.nn.ReLU().compile(), "compile"), (lambda: st.cuda.synchronize(), "cuda"),
                          (lambda: st.distributed.init_process_group("gloo"), "distributed"),
                          (lambda: st.nn.Linear(2, 2).cuda(), "cuda")):
        with pytest.raises(RuntimeError, match=words):
            action()


def test_save_and_load_a_model_and_its_optimizer(tmp_path):
    model = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.BatchNorm1d(4), st.nn.ReLU())
    opt = st.optim.Adam(model.parameters())
    model(st.randn(5, 3)).sum().backward()
    opt.step()
    st.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ckpt.pt")
    again = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.BatchNorm1d(4), st.nn.ReLU())
    ckpt = st.load(tmp_path / "ckpt.pt", weights_only=True)
    assert repr(again.load_state_dict(ckpt["model"])) == "<All keys matched successfully>"
    for a, b in zip(model.state_dict().values(), again.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    opt2 = st.optim.Adam(again.parameters())
    opt2.load_state_dict(ckpt["opt"])
    st.save(model, tmp_path / "whole.pt")            # a module pickles whole, as in PyTorch
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        st.load(tmp_path / "whole.pt")
    whole = st.load(tmp_path / "whole.pt", weights_only=False)
    assert repr(whole) == repr(model)
    with pytest.raises(RuntimeError, match="CPU only"):
        st.load(tmp_path / "ckpt.pt", map_location="cuda:0")


@pytest.mark.parametrize("build,shape", [
    (lambda lib: lib.nn.Conv2d(2, 4, 3), (2, 2, 6, 7)),
    (lambda lib: lib.nn.Conv2d(4, 4, (3, 2), stride=2, padding=1, dilation=(1, 2), groups=2, bias=False), (1, 4, 7, 8)),
    (lambda lib: lib.nn.Conv2d(2, 2, 3, padding="same", padding_mode="reflect"), (1, 2, 5, 5)),
    (lambda lib: lib.nn.Conv1d(3, 2, 2, padding=1, padding_mode="replicate"), (2, 3, 6)),
    (lambda lib: lib.nn.ConvTranspose2d(2, 4, 3, stride=2), (2, 2, 4, 5)),
    (lambda lib: lib.nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=1, output_padding=(1, 2), groups=2,
                                        dilation=(1, 2), bias=False), (1, 4, 4, 5)),
    (lambda lib: lib.nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1), (2, 3, 6)),
    (lambda lib: lib.nn.ConvTranspose1d(3, 2, 2), (3, 6)),
    (lambda lib: lib.nn.MaxPool2d(2), (1, 2, 5, 6)),
    (lambda lib: lib.nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True), (1, 2, 5, 6)),
    (lambda lib: lib.nn.AvgPool2d(2, padding=1, count_include_pad=False), (1, 2, 5, 6)),
    (lambda lib: lib.nn.MaxPool1d(2), (2, 3, 6)),
    (lambda lib: lib.nn.AvgPool1d(3, stride=2), (2, 3, 7)),
])
def test_conv_and_pool_layers_against_torch(build, shape):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    ours, theirs, [(sx, tx)] = both(build, x)
    assert repr(ours) == repr(theirs)
    sx.requires_grad_(), tx.requires_grad_()
    out, tout = ours(sx), theirs(tx)
    check_close(out, tout, rtol=1e-5, atol=1e-5)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    check_close(sx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        check_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)


def test_conv_transpose_output_size_and_errors_match_torch():
    x = np.random.default_rng(6).standard_normal((1, 4, 5, 5)).astype(np.float32)
    ours, theirs, [(sx, tx)] = both(lambda lib: lib.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1), x)
    for size in ([9, 10], [1, 3, 10, 9]):
        check_close(ours(sx, output_size=size), theirs(tx, output_size=size), rtol=1e-5, atol=1e-5)
    assert tuple(ours(sx[0], output_size=st.Size([3, 10, 10])).shape) == (3, 10, 10)
    assert (ours.transposed, ours.output_padding, tuple(ours.weight.shape)) == (True, (0, 0), (4, 3, 3, 3))
    for action in (lambda lib, m, t: m(t, output_size=[11, 10]), lambda lib, m, t: m(t, output_size=[10]),
                   lambda lib, m, t: lib.nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect"),
                   lambda lib, m, t: lib.nn.ConvTranspose1d(3, 4, 3, groups=2)):
        messages = []
        for lib, m, t in ((st, ours, sx), (torch, theirs, tx)):
            with pytest.raises(ValueError) as e:
                action(lib, m, t)
            messages.append(str(e.value))
        assert messages[0] == messages[1]


def test_default_initialisation_bounds_match_torch():
    """Each layer's parameters lie within PyTorch's default bound 1/sqrt(fan_in) and spread
    uniformly over it (the largest of torch's own draws is never above it either)."""
    st.manual_seed(1)
    for build, fan_in in ((lambda lib: lib.nn.Conv2d(6, 8, 5), 150), (lambda lib: lib.nn.Conv1d(4, 6, 3, groups=2), 6),
                          (lambda lib: lib.nn.Bilinear(5, 6, 7), 5), (lambda lib: lib.nn.Linear(30, 20), 30),
                          # a transposed convolution's fan_in comes from its weight (C_in, C_out/groups, K...)
                          (lambda lib: lib.nn.ConvTranspose2d(6, 8, 5), 200),
                          (lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, groups=2), 9)):
        bound = 1 / np.sqrt(fan_in)
        for p, q in zip(build(st).parameters(), build(torch).parameters()):
            ours, theirs = np.abs(p.detach().numpy()), np.abs(q.detach().numpy())
            assert ours.max() <= bound and theirs.max() <= bound
            if ours.size >= 100:
                assert ours.max() >= 0.95 * bound and ours.mean() == pytest.approx(bound / 2, rel=0.1)
    emb = st.nn.Embedding(2000, 8).weight.detach().numpy()
    assert emb.std() == pytest.approx(1.0, rel=0.05)
