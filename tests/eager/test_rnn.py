"""srcgrad.nn's recurrent layers (RNN, LSTM, GRU and their cells, srcgrad/nn/rnn.py) against
torch.nn 2.13: built the same way in both with torch's weights copied into ours, they give the
same outputs, final states, gradients of the inputs, initial states and every parameter, and the
same parameter names, reprs and error messages."""
import warnings

import numpy as np
import pytest

import srcgrad as st

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """torch's thread pool on these tiny problems only contends with other work (seconds per
    test on a busy machine); one thread keeps the reference quick."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _both(build, dtype="float64"):
    """``build(lib)`` in each library, ours with torch's parameters."""
    theirs = build(torch).to(getattr(torch, dtype))
    ours = build(st).to(getattr(st, dtype))
    ours.load_state_dict({k: st.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _pair(a, dtype, grad=True):
    return (st.tensor(a, dtype=getattr(st, dtype), requires_grad=grad),
            torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=grad))


def _flat(result):
    """(output, h) or (output, (h, c)) or (h, c) or h, as a flat list."""
    if not isinstance(result, tuple):
        return [result]
    return [t for part in result for t in (part if isinstance(part, tuple) else (part,))]


def _run_both(build, x, states=(), tuple_state=False, dtype="float64", tol=1e-10, train=False):
    """Forward both on ``x`` (and initial ``states``), compare every result, then backward a
    weighted sum of all of them and compare the gradients of x, the states and each parameter."""
    ours, theirs = _both(build, dtype)
    ours.train(train), theirs.train(train)
    sx, tx = _pair(x, dtype)
    spairs = [_pair(s, dtype) for s in states]
    sargs = [sx] + ([tuple(p[0] for p in spairs)] if tuple_state else [p[0] for p in spairs])
    targs = [tx] + ([tuple(p[1] for p in spairs)] if tuple_state else [p[1] for p in spairs])
    souts, touts = _flat(ours(*sargs)), _flat(theirs(*targs))
    assert len(souts) == len(touts)
    for a, b in zip(souts, touts):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    weights = [np.random.default_rng(i).standard_normal(tuple(b.shape)) for i, b in enumerate(touts)]
    sum(((a * st.tensor(w, dtype=a.dtype)).sum() for a, w in zip(souts, weights)), st.zeros((), dtype=a.dtype)
        ).backward()
    sum((b * torch.tensor(w, dtype=b.dtype)).sum() for b, w in zip(touts, weights)).backward()
    for a, b in [(sx, tx)] + spairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    names = [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == names
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert p.grad is not None, n
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol, err_msg=n)
    return ours, theirs


RNG = np.random.default_rng(0)
L, N, I, H = 5, 3, 4, 6
X = RNG.standard_normal((L, N, I))
XB = X.transpose(1, 0, 2).copy()            # batch_first
H1, C1 = RNG.standard_normal((1, N, H)), RNG.standard_normal((1, N, H))
H4, C4 = RNG.standard_normal((4, N, H)), RNG.standard_normal((4, N, H))

LAYERS = {  # name: (build, input, initial states)
    "rnn tanh": (lambda lib: lib.nn.RNN(I, H), X, ()),
    "rnn relu 2 layers bidirectional h0": (
        lambda lib: lib.nn.RNN(I, H, 2, nonlinearity="relu", bidirectional=True), X, (H4,)),
    "rnn no bias batch_first": (lambda lib: lib.nn.RNN(I, H, bias=False, batch_first=True), XB, (H1,)),
    "lstm": (lambda lib: lib.nn.LSTM(I, H), X, ()),
    "lstm h0 c0": (lambda lib: lib.nn.LSTM(I, H), X, (H1, C1)),
    "lstm 2 layers bidirectional batch_first": (
        lambda lib: lib.nn.LSTM(I, H, num_layers=2, batch_first=True, bidirectional=True), XB, (H4, C4)),
    "lstm no bias dropout eval": (lambda lib: lib.nn.LSTM(I, H, 2, bias=False, dropout=0.5, bidirectional=True),
                                  X, ()),
    "gru": (lambda lib: lib.nn.GRU(I, H), X, (H1,)),
    "gru 2 layers bidirectional": (lambda lib: lib.nn.GRU(I, H, num_layers=2, bidirectional=True), X, (H4,)),
    "gru no bias batch_first": (lambda lib: lib.nn.GRU(I, H, bias=False, batch_first=True), XB, ()),
    # unbatched: (L, I) input, (layers * directions, H) states
    "rnn unbatched": (lambda lib: lib.nn.RNN(I, H, 2), X[:, 0], (RNG.standard_normal((2, H)),)),
    "lstm unbatched batch_first": (lambda lib: lib.nn.LSTM(I, H, batch_first=True, bidirectional=True), X[:, 0],
                                   (RNG.standard_normal((2, H)), RNG.standard_normal((2, H)))),
    "gru unbatched": (lambda lib: lib.nn.GRU(I, H), X[:, 0], ()),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_match_torch(name):
    build, x, states = LAYERS[name]
    _run_both(build, x, states, tuple_state="lstm" in name and bool(states))


def test_float32_and_a_few_training_steps_match_torch():
    ours, theirs = _run_both(lambda lib: lib.nn.LSTM(I, H, 2), X.astype(np.float32), dtype="float32", tol=2e-5)
    sopt = st.optim.SGD(ours.parameters(), lr=0.1)
    for _ in range(3):      # (torch's side by hand: torch.optim's first step takes seconds to set up)
        for model, lib in ((ours, st), (theirs, torch)):
            model.zero_grad()
            out, (h, c) = model(lib.tensor(X, dtype=lib.float32))
            (out.pow(2).mean() + c.sum()).backward()
        sopt.step()
        with torch.no_grad():
            for q in theirs.parameters():
                q -= 0.1 * q.grad
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
    assert ours(st.tensor(X, dtype=st.float32))[0].dtype == st.float32


CELLS = {  # name: (build, input, states, tuple state)
    "rnn cell": (lambda lib: lib.nn.RNNCell(I, H), X[0], (H1[0],)),
    "rnn cell relu no bias": (lambda lib: lib.nn.RNNCell(I, H, bias=False, nonlinearity="relu"), X[0], ()),
    "rnn cell unbatched": (lambda lib: lib.nn.RNNCell(I, H), X[0, 0], (H1[0, 0],)),
    "lstm cell": (lambda lib: lib.nn.LSTMCell(I, H), X[0], (H1[0], C1[0])),
    "lstm cell no state": (lambda lib: lib.nn.LSTMCell(I, H), X[0], ()),
    "lstm cell unbatched no bias": (lambda lib: lib.nn.LSTMCell(I, H, bias=False), X[0, 0], (H1[0, 0], C1[0, 0])),
    "gru cell": (lambda lib: lib.nn.GRUCell(I, H), X[0], (H1[0],)),
    "gru cell unbatched": (lambda lib: lib.nn.GRUCell(I, H), X[0, 0], ()),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_cells_match_torch(name):
    build, x, states = CELLS[name]
    _run_both(build, x, states, tuple_state="lstm" in name and bool(states))


def test_cells_unrolled_equal_the_layer():
    """An LSTMCell run over the sequence with the layer's weights gives the layer's output."""
    lstm, cell = st.nn.LSTM(I, H).double(), st.nn.LSTMCell(I, H).double()
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = st.tensor(X)
    out, (h_n, c_n) = lstm(x)
    h, c = st.zeros(N, H, dtype=st.float64), st.zeros(N, H, dtype=st.float64)
    for t in range(L):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(h.detach().numpy(), out[t].detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.detach().numpy(), c_n[0].detach().numpy(), rtol=1e-12, atol=1e-12)


def test_double_backward_matches_torch():
    ours, theirs = _both(lambda lib: lib.nn.LSTM(I, 3, bidirectional=True))
    grads = []
    for lib, model in ((st, ours), (torch, theirs)):
        x = lib.tensor(X[:3, :2], requires_grad=True)
        out, (h, c) = model(x)
        gx, = lib.autograd.grad((out * out).sum() + c.sum(), [x], create_graph=True)
        second = lib.autograd.grad((gx * gx).sum(), [x, model.weight_hh_l0, model.bias_ih_l0_reverse])
        grads.append([g.detach().numpy() for g in (gx, *second)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    cell = st.nn.GRUCell(2, 3).double()
    assert st.autograd.gradgradcheck(lambda x, h: cell(x, h), (st.randn(2, 2, dtype=st.float64, requires_grad=True),
                                                                st.randn(2, 3, dtype=st.float64, requires_grad=True)))


def test_grad_fn_names_match_torch():
    """The last ops recorded match PyTorch's CPU decomposition (float64: float32 LSTMs run an
    MKL-DNN kernel in PyTorch, with a node of its own)."""
    def top(t):
        return type(t.grad_fn).__name__, type(t.grad_fn.next_functions[0][0]).__name__

    for build, shape in ((lambda lib: lib.nn.LSTM(3, 4), (5, 2, 3)), (lambda lib: lib.nn.GRU(3, 4, 2, True, False, 0.0,
                                                                                              True), (5, 2, 3)),
                         (lambda lib: lib.nn.RNN(3, 4, nonlinearity="relu"), (5, 3)),
                         (lambda lib: lib.nn.LSTMCell(3, 4), (2, 3)), (lambda lib: lib.nn.GRUCell(3, 4), (3,)),
                         (lambda lib: lib.nn.RNNCell(3, 4), (2, 3))):
        names = []
        for lib in (st, torch):
            out = build(lib).double()(lib.zeros(*shape, dtype=lib.float64))
            names.append([top(t) for t in _flat(out)])
        assert names[0] == names[1]


def test_dropout_between_layers_in_training_only():
    st.manual_seed(0)
    model = st.nn.LSTM(I, H, num_layers=3, dropout=0.5).double()
    x = st.tensor(X)
    model.eval()
    first, second = model(x)[0], model(x)[0]
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    model.train()
    trained = model(x)[0]
    assert not np.allclose(trained.detach().numpy(), first.detach().numpy())
    trained.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    one_layer = st.nn.GRU(I, H, dropout=0.0).double()
    np.testing.assert_array_equal(one_layer(x)[0].detach().numpy(), one_layer.eval()(x)[0].detach().numpy())


REPRS = [
    lambda lib: lib.nn.LSTM(10, 20, num_layers=2, batch_first=True),
    lambda lib: lib.nn.RNN(4, 3, 2, "relu", False, True, 0.5, True),
    lambda lib: lib.nn.GRU(4, 3, bidirectional=True),
    lambda lib: lib.nn.LSTM(4, 3, bias=False, dropout=0.25, num_layers=3),
    lambda lib: lib.nn.RNNCell(4, 3, bias=False, nonlinearity="relu"),
    lambda lib: lib.nn.LSTMCell(4, 3),
    lambda lib: lib.nn.GRUCell(4, 3, bias=False),
    lambda lib: lib.nn.Sequential(lib.nn.Embedding(5, 4), lib.nn.LSTM(4, 3)),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_reprs_names_shapes_and_init_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st.manual_seed(0)
        ours, theirs = REPRS[i](st), REPRS[i](torch)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for module in ours.modules():
        if isinstance(module, (st.nn.RNNBase, st.nn.RNNCellBase)):
            bound = 1 / np.sqrt(module.hidden_size)
            values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
            assert np.abs(values).max() <= bound and np.abs(values).max() > 0.5 * bound
    if isinstance(theirs, torch.nn.RNNBase):
        assert [[tuple(p.shape) for p in ws] for ws in ours.all_weights] == \
               [[tuple(p.shape) for p in ws] for ws in theirs.all_weights]
        assert ours._flat_weights_names == theirs._flat_weights_names
        for attr in ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
        ours.flatten_parameters()


ERRORS = {  # name: action(lib) raising the same exception with the same message in both
    "rnn 4-D input": lambda lib: lib.nn.RNN(4, 3)(lib.zeros(1, 2, 3, 4)),
    "lstm 1-D input": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(4)),
    "gru 4-D input": lambda lib: lib.nn.GRU(4, 3)(lib.zeros(1, 2, 3, 4)),
    "input size": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 2, 5)),
    "input dtype": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 2, 4, dtype=lib.float64)),
    "rnn hidden size": lambda lib: lib.nn.RNN(4, 3, 2)(lib.zeros(5, 2, 4), lib.zeros(1, 2, 3)),
    "gru hidden batch": lambda lib: lib.nn.GRU(4, 3, batch_first=True)(lib.zeros(5, 2, 4), lib.zeros(1, 2, 3)),
    "lstm hidden[0]": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 2, 4), (lib.zeros(1, 3, 3), lib.zeros(1, 2, 3))),
    "lstm hidden[1]": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 2, 4), (lib.zeros(1, 2, 3), lib.zeros(2, 2, 3))),
    "batched input, 2-D hx": lambda lib: lib.nn.GRU(4, 3)(lib.zeros(5, 2, 4), lib.zeros(2, 3)),
    "unbatched input, 3-D hx": lambda lib: lib.nn.RNN(4, 3)(lib.zeros(5, 4), lib.zeros(1, 1, 3)),
    "lstm batched input, 2-D hx": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 2, 4), (lib.zeros(2, 3),
                                                                                      lib.zeros(1, 2, 3))),
    "lstm unbatched input, 3-D hx": lambda lib: lib.nn.LSTM(4, 3)(lib.zeros(5, 4), (lib.zeros(1, 1, 3),
                                                                                    lib.zeros(1, 1, 3))),
    "nonlinearity": lambda lib: lib.nn.RNN(4, 3, nonlinearity="sigmoid"),
    "proj_size on gru": lambda lib: lib.nn.GRU(4, 3, proj_size=2),
    "dropout range": lambda lib: lib.nn.LSTM(4, 3, dropout=1.5),
    "dropout bool": lambda lib: lib.nn.LSTM(4, 3, dropout=True),
    "hidden_size zero": lambda lib: lib.nn.GRU(4, 0),
    "hidden_size float": lambda lib: lib.nn.GRU(4, 3.0),
    "input_size zero": lambda lib: lib.nn.RNN(0, 3),
    "num_layers zero": lambda lib: lib.nn.LSTM(4, 3, num_layers=0),
    "bias type": lambda lib: lib.nn.LSTM(4, 3, bias=1),
    "batch_first type": lambda lib: lib.nn.LSTM(4, 3, batch_first=None),
    "proj_size too big": lambda lib: lib.nn.LSTM(4, 3, proj_size=3),
    "proj_size negative": lambda lib: lib.nn.LSTM(4, 3, proj_size=-1),
    "cell 3-D input": lambda lib: lib.nn.RNNCell(4, 3)(lib.zeros(1, 2, 4)),
    "cell 3-D hidden": lambda lib: lib.nn.GRUCell(4, 3)(lib.zeros(2, 4), lib.zeros(1, 2, 3)),
    "lstm cell 3-D hx[1]": lambda lib: lib.nn.LSTMCell(4, 3)(lib.zeros(2, 4), (lib.zeros(2, 3), lib.zeros(1, 2, 3))),
    "cell input size": lambda lib: lib.nn.LSTMCell(4, 3)(lib.zeros(2, 5)),
    "cell batch": lambda lib: lib.nn.RNNCell(4, 3)(lib.zeros(2, 4), lib.zeros(3, 3)),
    "cell hidden size": lambda lib: lib.nn.GRUCell(4, 3)(lib.zeros(2, 4), lib.zeros(2, 5)),
    "lstm cell hidden1": lambda lib: lib.nn.LSTMCell(4, 3)(lib.zeros(2, 4), (lib.zeros(2, 3), lib.zeros(2, 5))),
    "cell unbatched input, batched hidden": lambda lib: lib.nn.RNNCell(4, 3)(lib.zeros(4), lib.zeros(2, 3)),
    "cell nonlinearity": lambda lib: lib.nn.RNNCell(4, 3, nonlinearity="gelu")(lib.zeros(2, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](st)
    assert str(ours.value) == str(theirs.value)


def test_warnings_and_unsupported_features():
    messages = []
    for lib in (st, torch):
        with pytest.warns(UserWarning) as record:
            lib.nn.GRU(4, 3, dropout=0.2)
        messages.append(str(record[0].message))
    assert messages[0] == messages[1]
    with pytest.raises(NotImplementedError, match="proj_size"):
        st.nn.LSTM(4, 3, proj_size=2)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 2, 4), [5, 3])
    with pytest.raises(NotImplementedError, match="PackedSequence"):
        st.nn.LSTM(4, 3)(packed)
