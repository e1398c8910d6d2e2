"""``srcgrad.optim`` against ``torch.optim``: the same parameters after many steps of each
optimizer and option set (float32 and float64), state_dict layout and round trips, reprs,
errors, closures, zero_grad, version counters, and the learning-rate schedulers."""
import copy
import warnings

import numpy as np
import pytest

import srcgrad
import srcgrad.optim as optim

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 5))
Y = RNG.standard_normal((8, 3))
INIT = {"W": RNG.standard_normal((5, 3)), "b": RNG.standard_normal(3), "v": RNG.standard_normal(4)}
STEPS = 20


def _optim(T):
    return optim if T is srcgrad else torch.optim


def _params(T, dtype):
    return {k: T.tensor(v, dtype=getattr(T, dtype), requires_grad=True) for k, v in INIT.items()}


def _loss(T, p, dtype):
    x = T.tensor(X, dtype=getattr(T, dtype))
    y = T.tensor(Y, dtype=getattr(T, dtype))
    fit = ((x @ p["W"] + p["b"]).tanh() - y) ** 2
    return fit.sum() + (p["v"] ** 4).sum() * 0.25 - p["v"].sum()


def _set_grads(T, p, dtype):
    """The gradients of 0.5 |X W + b - Y|^2 + 0.25 sum(v^4) - sum(v), computed in float64 by
    numpy from the current values: both libraries then get bit-identical gradients for equal
    parameters, so the comparison sees the optimizers' arithmetic only (float32 backward passes
    of the two libraries differ by an ulp here and there, which 20 steps can amplify)."""
    w, b, v = (np.asarray(p[k].detach().numpy(), np.float64) for k in ("W", "b", "v"))
    r = X @ w + b - Y
    grads = {"W": X.T @ r, "b": r.sum(0), "v": v ** 3 - 1}
    for k, g in grads.items():
        p[k].grad = T.tensor(g, dtype=getattr(T, dtype))


def _groups(p, group_opts):
    if group_opts is None:
        return list(p.values())
    return [{"params": [p["W"], p["b"]]}, dict({"params": [p["v"]]}, **group_opts)]


def _train(T, name, kwargs, dtype, steps=STEPS, group_opts=None, backward=False):
    p = _params(T, dtype)
    opt = getattr(_optim(T), name)(_groups(p, group_opts), **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        if backward:
            _loss(T, p, dtype).backward()
        else:
            _set_grads(T, p, dtype)
        opt.step()
    return {k: np.array(v.detach().numpy()) for k, v in p.items()}, opt


def _close(ours, theirs, dtype):
    # float32: PyTorch fuses multiply-adds (or not: that follows its CPU kernel) and has its own
    # sqrt, so single ops differ by an ulp, and 20 steps carry those ulps on (to 0.9e-6 seen)
    rtol, atol = (1e-5, 1e-5) if dtype == "float32" else (1e-12, 1e-12)
    for k in theirs:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=rtol, atol=atol, err_msg=k)


CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    ("SGD", {"lr": 0.01, "weight_decay": 0.2, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True, "alpha": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "eps": 1e-6}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch(name, kwargs, dtype):
    ours, _ = _train(srcgrad, name, kwargs, dtype)
    theirs, _ = _train(torch, name, kwargs, dtype)
    _close(ours, theirs, dtype)


@pytest.mark.parametrize("name,kwargs", CASES[::3], ids=[f"{n}-{3 * i}" for i, (n, _) in enumerate(CASES[::3])])
def test_training_with_backward_matches_torch(name, kwargs):
    ours, _ = _train(srcgrad, name, kwargs, "float64", backward=True)
    theirs, _ = _train(torch, name, kwargs, "float64", backward=True)
    _close(ours, theirs, "float64")


GROUP_CASES = [
    ("SGD", {"lr": 0.01, "momentum": 0.9}, {"lr": 0.05, "nesterov": True}),
    ("Adam", {"lr": 0.01}, {"lr": 0.05, "betas": (0.5, 0.6), "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}, {"centered": True, "momentum": 0.3}),
    ("Adagrad", {"lr": 0.05}, {"lr_decay": 0.1}),
]


@pytest.mark.parametrize("name,kwargs,group_opts", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_param_groups_match_torch(name, kwargs, group_opts):
    ours, o = _train(srcgrad, name, kwargs, "float64", group_opts=group_opts)
    theirs, t = _train(torch, name, kwargs, "float64", group_opts=group_opts)
    _close(ours, theirs, "float64")
    assert repr(o) == repr(t)


def _state_layout(sd):
    """A state_dict with tensors replaced by (dtype name, shape) and steps by their value."""
    def leaf(k, v):
        if k == "step":
            return ("step", str(v.dtype).split(".")[-1], float(v))
        if hasattr(v, "shape"):
            return (str(v.dtype).split(".")[-1], tuple(v.shape))
        return v
    state = {i: {k: leaf(k, v) for k, v in s.items()} for i, s in sd["state"].items()}
    return {"state": state, "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[1].get("maximize") is not True],
                         ids=[f"{n}-{i}" for i, (n, k) in enumerate(CASES) if k.get("maximize") is not True])
def test_state_dict_layout_and_round_trip(name, kwargs):
    _, o = _train(srcgrad, name, kwargs, "float32", steps=3)
    _, t = _train(torch, name, kwargs, "float32", steps=3)
    assert _state_layout(o.state_dict()) == _state_layout(t.state_dict())

    # 6 steps, a new optimizer loaded with the state, 6 more: as 12 steps of one optimizer
    straight, _ = _train(srcgrad, name, kwargs, "float64", steps=12)
    p = _params(srcgrad, "float64")
    first = getattr(optim, name)(list(p.values()), **kwargs)
    for _ in range(6):
        _set_grads(srcgrad, p, "float64")
        first.step()
    second = getattr(optim, name)(list(p.values()), **dict(kwargs, lr=123.0))
    second.load_state_dict(copy.deepcopy(first.state_dict()))
    assert second.param_groups[0]["lr"] == first.param_groups[0]["lr"]
    for _ in range(6):
        _set_grads(srcgrad, p, "float64")
        second.step()
    for k in straight:
        np.testing.assert_array_equal(p[k].detach().numpy(), straight[k])


def test_load_state_dict_casts_to_param_dtype_and_keeps_step():
    p = _params(srcgrad, "float64")
    opt = optim.Adam(list(p.values()))
    _loss(srcgrad, p, "float64").backward()
    opt.step()
    q = _params(srcgrad, "float32")
    opt32 = optim.Adam(list(q.values()))
    opt32.load_state_dict(opt.state_dict())
    s = opt32.state[q["W"]]
    assert s["exp_avg"].dtype is srcgrad.float32 and s["step"].dtype is srcgrad.float32
    assert float(s["step"]) == 1.0


def test_state_dict_with_param_names():
    for T in (srcgrad, torch):
        p = _params(T, "float32")
        opt = _optim(T).SGD(list(p.items()), lr=0.1)
        assert opt.state_dict()["param_groups"][0]["param_names"] == ["W", "b", "v"]
    assert repr(optim.SGD(list(_params(srcgrad, "float32").items()))) == \
        repr(torch.optim.SGD(list(_params(torch, "float32").items())))


REPR_CASES = [
    ("SGD", {}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {}),
    ("Adam", {"betas": (0.5, 0.6), "amsgrad": True, "foreach": False}), ("AdamW", {}),
    ("RMSprop", {}), ("RMSprop", {"centered": True, "momentum": 0.1}), ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 1e-4}),
]


@pytest.mark.parametrize("name,kwargs", REPR_CASES)
def test_repr_and_defaults(name, kwargs):
    o = getattr(optim, name)([srcgrad.ones(2, requires_grad=True)], **kwargs)
    t = getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **kwargs)
    assert repr(o) == repr(t)
    assert o.defaults == t.defaults
    assert list(o.param_groups[0]) == list(t.param_groups[0])


def _error(fn):
    try:
        fn()
    except Exception as e:          # noqa: BLE001  the exception itself is what is compared
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda T, O, w: O.SGD(T.ones(2)),
    lambda T, O, w: O.SGD([]),
    lambda T, O, w: O.SGD([1]),
    lambda T, O, w: O.SGD([{"params": {w}}]),
    lambda T, O, w: O.SGD([w * 2]),
    lambda T, O, w: O.SGD([w], lr=-1.0),
    lambda T, O, w: O.SGD([w], momentum=-0.5),
    lambda T, O, w: O.SGD([w], weight_decay=-1),
    lambda T, O, w: O.SGD([w], nesterov=True),
    lambda T, O, w: O.SGD([w], momentum=0.9, dampening=0.1, nesterov=True),
    lambda T, O, w: O.SGD([w], lr=T.tensor([0.1, 0.2])),
    lambda T, O, w: O.SGD([w], fused=True, foreach=True),
    lambda T, O, w: O.SGD([{"params": [w]}, {"params": [w]}]),
    lambda T, O, w: O.SGD([w]).add_param_group([w]),
    lambda T, O, w: O.SGD([w]).add_param_group({"params": w}),
    lambda T, O, w: O.SGD([w]).load_state_dict({"state": {}, "param_groups": []}),
    lambda T, O, w: O.SGD([w]).load_state_dict(O.SGD([w, T.ones(1, requires_grad=True)]).state_dict()),
    lambda T, O, w: O.SGD([("a", w), T.ones(1, requires_grad=True)]),
    lambda T, O, w: O.Adam([w], lr=-1.0),
    lambda T, O, w: O.Adam([w], eps=-1.0),
    lambda T, O, w: O.Adam([w], betas=(1.0, 0.9)),
    lambda T, O, w: O.Adam([w], betas=(0.9, -0.1)),
    lambda T, O, w: O.Adam([w], betas=(0, 0.9)),
    lambda T, O, w: O.Adam([w], weight_decay=-1e-2),
    lambda T, O, w: O.AdamW([w], lr=-1.0),
    lambda T, O, w: O.RMSprop([w], alpha=-1.0),
    lambda T, O, w: O.RMSprop([w], momentum=-1.0),
    lambda T, O, w: O.RMSprop([w], eps=-1.0),
    lambda T, O, w: O.Adagrad([w], lr_decay=-1.0),
    lambda T, O, w: O.Adagrad([w], initial_accumulator_value=-1.0),
    lambda T, O, w: O.Adagrad([w], eps=-1.0),
    lambda T, O, w: O.Optimizer([w], {}).step(),
    lambda T, O, w: O.lr_scheduler.StepLR(3, 3),
    lambda T, O, w: O.lr_scheduler.StepLR(O.SGD([w]), 3, last_epoch=5),
    lambda T, O, w: O.lr_scheduler.LambdaLR(O.SGD([w]), [lambda e: 1.0] * 2),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _error(lambda: ERRORS[i](srcgrad, optim, srcgrad.ones(2, requires_grad=True)))
        theirs = _error(lambda: ERRORS[i](torch, torch.optim, torch.ones(2, requires_grad=True)))
    assert ours == theirs and theirs is not None


def test_unsupported_flags():
    w = srcgrad.ones(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.SGD([w], differentiable=True)
    with pytest.raises(NotImplementedError, match="capturable"):
        optim.Adam([w], capturable=True)
    # foreach and fused pick kernels in PyTorch; here they are accepted and change nothing
    for flags in ({"foreach": True}, {"fused": True}):
        ours, _ = _train(srcgrad, "Adam", flags, "float64")
        plain, _ = _train(srcgrad, "Adam", {}, "float64")
        for k in plain:
            np.testing.assert_array_equal(ours[k], plain[k])


def test_duplicate_parameter_warns():
    w = srcgrad.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w])


@pytest.mark.parametrize("T", [srcgrad, torch], ids=["srcgrad", "torch"])
def test_closure_zero_grad_and_skipped_params(T):
    p = _params(T, "float64")
    frozen = T.ones(3, dtype=T.float64, requires_grad=True)
    opt = _optim(T).Adam(list(p.values()) + [frozen], lr=0.1)
    calls = []

    def closure():
        calls.append(T.is_grad_enabled())
        opt.zero_grad()
        loss = _loss(T, p, "float64")
        loss.backward()
        return loss

    with T.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert float(loss.detach()) == pytest.approx(float(_loss(T, _params(T, "float64"), "float64").detach()))
    assert len(opt.state[frozen]) == 0 and frozen.tolist() == [1.0, 1.0, 1.0]
    assert p["W"].is_leaf and p["W"].requires_grad and p["W"].grad_fn is None

    opt.zero_grad(set_to_none=False)
    assert p["W"].grad is not None and p["W"].grad.abs().sum().item() == 0
    opt.zero_grad()
    assert all(v.grad is None for v in p.values())


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_step_bumps_version_like_torch(name):
    versions = []
    for T in (srcgrad, torch):
        w = T.ones(3, requires_grad=True)
        w.grad = T.ones(3)
        opt = getattr(_optim(T), name)([w], lr=0.1)
        saved = (w * w).sum()            # saves w for backward
        opt.step()
        versions.append(w._version)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            saved.backward()
    assert versions[0] == versions[1]


def test_add_param_group_later():
    for T in (srcgrad, torch):
        w, b = T.ones(2, requires_grad=True), T.ones(1, requires_grad=True)
        opt = _optim(T).SGD([w], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": b, "lr": 0.5})
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
        assert opt.param_groups[1]["momentum"] == 0.9


# ------------------------------------------------------------------------------------ schedulers
SCHEDULERS = [
    ("StepLR", {"step_size": 7}),
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [5, 12, 12, 20], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.93}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 13, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda e: 1 / (1 + e)}),
]


def _schedule(T, name, kwargs, epochs=40):
    p = _params(T, "float64")
    opt = _optim(T).SGD([{"params": [p["W"]]}, {"params": [p["b"]], "lr": 0.3}], lr=0.1, momentum=0.9)
    sched = getattr(_optim(T).lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for epoch in range(epochs):
        opt.step()
        sched.step()
        if epoch == 17:           # a change from outside that the chainable forms follow
            opt.param_groups[0]["lr"] *= 0.5
        lrs.append(sched.get_last_lr())
    assert [g["lr"] for g in opt.param_groups] == lrs[-1]
    return lrs, sched


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_matches_torch(name, kwargs):
    ours, o = _schedule(srcgrad, name, kwargs)
    theirs, t = _schedule(torch, name, kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-13, atol=0)
    assert o.state_dict().keys() == t.state_dict().keys()
    assert o.last_epoch == t.last_epoch and o.base_lrs == t.base_lrs


@pytest.mark.parametrize("name,kwargs", SCHEDULERS[:6], ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS[:6])])
def test_scheduler_resume_and_epoch_argument(name, kwargs):
    results = []
    for T in (srcgrad, torch):
        O = _optim(T)
        w = T.ones(2, requires_grad=True)
        opt = O.SGD([w], lr=0.1)
        sched = getattr(O.lr_scheduler, name)(opt, **kwargs)
        for _ in range(9):
            opt.step()
            sched.step()
        # resume: a new scheduler made with last_epoch, then its state loaded
        resumed = getattr(O.lr_scheduler, name)(opt, last_epoch=sched.last_epoch, **kwargs)
        resumed.load_state_dict(sched.state_dict())
        lrs = []
        for _ in range(15):
            opt.step()
            resumed.step()
            lrs.append(resumed.get_last_lr()[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resumed.step(31)            # deprecated: the closed form
        lrs.append(resumed.get_last_lr()[0])
        results.append(lrs)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13, atol=0)


def test_scheduler_warnings():
    for T in (srcgrad, torch):
        O = _optim(T)
        opt = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched = O.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="before `optimizer.step"):
            sched.step()
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()
        opt2 = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched2 = O.lr_scheduler.ExponentialLR(opt2, 0.5)
        opt2.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched2.step()


def test_lambda_scheduler_state_dict():
    class Factor:
        def __init__(self, f):
            self.f = f

        def __call__(self, epoch):
            return self.f ** epoch

    dicts = []
    for T in (srcgrad, torch):
        opt = _optim(T).SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched = _optim(T).lr_scheduler.LambdaLR(opt, Factor(0.5))
        opt.step()
        sched.step()
        sd = sched.state_dict()
        other = _optim(T).lr_scheduler.LambdaLR(opt, Factor(0.9))
        other.load_state_dict(sd)
        assert other.lr_lambdas[0].f == 0.5 and "lr_lambdas" in sd
        dicts.append(sd)
    assert dicts[0] == dicts[1]
