"""``srcgrad.optim``'s Adadelta, Adamax, NAdam, RAdam, ASGD and LBFGS, and the schedulers ConstantLR,
LinearLR, PolynomialLR, SequentialLR, ChainedScheduler, ReduceLROnPlateau,
CosineAnnealingWarmRestarts and OneCycleLR, against ``torch.optim``: parameters and state step by
step (float32 and float64), options, state_dict layout and round trips, reprs, errors, and the
learning rates (and momenta) of the schedulers over 45 epochs. Helpers come from test_optim."""
import copy
import warnings

import numpy as np
import pytest

import srcgrad
import srcgrad.optim as optim

from .test_optim import _close, _error, _optim, _params, _set_grads, _state_layout, _train

torch = pytest.importorskip("torch")

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True, "weight_decay": 0.05}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.3, 0.9), "weight_decay": 0.1}),     # beta1 < 0.5: lerp's other branch
    ("Adamax", {"lr": 0.05, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("NAdam", {"lr": 0.05, "betas": (0.4, 0.99)}),
    ("RAdam", {}),                                      # rho_t > 5 from step 7: both branches
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.3, 0.9)}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "t0": 5, "lambd": 0.01, "alpha": 0.5, "weight_decay": 0.1}),    # averaging from step 6
    ("ASGD", {"lr": 0.002, "t0": 3, "maximize": True}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _state_arrays(opt):
    """Every state value of a state_dict as a float64 numpy array, keyed by (index, name)."""
    return {(i, k): np.asarray(v.detach().numpy(), np.float64)
            for i, s in opt.state_dict()["state"].items() for k, v in s.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_matches_torch(name, kwargs, dtype):
    ours, o = _train(srcgrad, name, kwargs, dtype)
    theirs, t = _train(torch, name, kwargs, dtype)
    _close(ours, theirs, dtype)
    # the state too: moments, infinity norms, mu_product, eta, mu, averages, steps
    so, st = _state_arrays(o), _state_arrays(t)
    assert so.keys() == st.keys()
    _close({str(k): v for k, v in so.items()}, {str(k): v for k, v in st.items()}, dtype)


@pytest.mark.parametrize("name,kwargs", CASES[1::3], ids=IDS[1::3])
def test_training_with_backward_matches_torch(name, kwargs):
    ours, _ = _train(srcgrad, name, kwargs, "float64", backward=True)
    theirs, _ = _train(torch, name, kwargs, "float64", backward=True)
    _close(ours, theirs, "float64")


GROUP_CASES = [
    ("Adadelta", {}, {"rho": 0.5, "lr": 0.3}),
    ("Adamax", {"lr": 0.01}, {"betas": (0.5, 0.6)}),
    ("NAdam", {"lr": 0.01}, {"lr": 0.05, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01}, {"betas": (0.8, 0.9), "weight_decay": 0.2}),
    ("ASGD", {"lr": 0.01, "t0": 4}, {"lr": 0.03, "lambd": 0.1}),
]


@pytest.mark.parametrize("name,kwargs,group_opts", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_param_groups_match_torch(name, kwargs, group_opts):
    ours, o = _train(srcgrad, name, kwargs, "float64", group_opts=group_opts)
    theirs, t = _train(torch, name, kwargs, "float64", group_opts=group_opts)
    _close(ours, theirs, "float64")
    assert repr(o) == repr(t)


NO_MAX = [(n, k) for n, k in CASES if not k.get("maximize")]


def _round_trip(T, name, kwargs):
    """6 steps, then a new optimizer (made with another lr) loaded with the state, then 6 more."""
    O = _optim(T)
    p = _params(T, "float64")
    first = getattr(O, name)(list(p.values()), **kwargs)
    for _ in range(6):
        _set_grads(T, p, "float64")
        first.step()
    second = getattr(O, name)(list(p.values()), **dict(kwargs, lr=123.0))
    second.load_state_dict(copy.deepcopy(first.state_dict()))
    assert second.param_groups[0]["lr"] == first.param_groups[0]["lr"]
    for _ in range(6):
        _set_grads(T, p, "float64")
        second.step()
    return {k: np.array(v.detach().numpy()) for k, v in p.items()}, second


@pytest.mark.parametrize("name,kwargs", NO_MAX, ids=[f"{n}-{i}" for i, (n, k) in enumerate(CASES)
                                                     if not k.get("maximize")])
def test_state_dict_layout_and_round_trip(name, kwargs):
    _, o = _train(srcgrad, name, kwargs, "float32", steps=3)
    _, t = _train(torch, name, kwargs, "float32", steps=3)
    assert _state_layout(o.state_dict()) == _state_layout(t.state_dict())

    # loading casts the float32 scalar states (mu_product, eta, mu) to the parameters' float64,
    # as PyTorch does; the 'step' stays float32
    ours, o2 = _round_trip(srcgrad, name, kwargs)
    theirs, t2 = _round_trip(torch, name, kwargs)
    _close(ours, theirs, "float64")
    assert _state_layout(o2.state_dict()) == _state_layout(t2.state_dict())
    if name in ("Adadelta", "Adamax", "RAdam"):         # no scalar state: the same as 12 steps straight
        straight, _ = _train(srcgrad, name, kwargs, "float64", steps=12)
        for k in straight:
            np.testing.assert_array_equal(ours[k], straight[k])


REPR_CASES = [
    ("Adadelta", {}), ("Adadelta", {"rho": 0.5, "foreach": False}), ("Adamax", {}), ("NAdam", {}),
    ("NAdam", {"decoupled_weight_decay": True, "momentum_decay": 0.01}), ("RAdam", {}),
    ("RAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}), ("ASGD", {}), ("ASGD", {"t0": 10}),
    ("LBFGS", {}), ("LBFGS", {"line_search_fn": "strong_wolfe", "max_iter": 7}),
]


@pytest.mark.parametrize("name,kwargs", REPR_CASES)
def test_repr_and_defaults(name, kwargs):
    o = getattr(optim, name)([srcgrad.ones(2, requires_grad=True)], **kwargs)
    t = getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **kwargs)
    assert repr(o) == repr(t)
    assert o.defaults == t.defaults
    assert list(o.param_groups[0]) == list(t.param_groups[0])


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD"])
def test_unsupported_flags(name):
    w = srcgrad.ones(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        getattr(optim, name)([w], differentiable=True)
    with pytest.raises(NotImplementedError, match="capturable"):
        getattr(optim, name)([w], capturable=True)
    # foreach picks kernels in PyTorch; here it is accepted and changes nothing
    ours, _ = _train(srcgrad, name, {"foreach": True}, "float64", steps=3)
    plain, _ = _train(srcgrad, name, {}, "float64", steps=3)
    for k in plain:
        np.testing.assert_array_equal(ours[k], plain[k])


VERSION_CASES = [("Adadelta", {}), ("Adamax", {}), ("NAdam", {}),
                 ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}), ("RAdam", {}),
                 ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}), ("ASGD", {})]


@pytest.mark.parametrize("name,kwargs", VERSION_CASES)
def test_step_bumps_version_like_torch(name, kwargs):
    versions = []
    for T in (srcgrad, torch):
        w = T.ones(3, requires_grad=True)
        w.grad = T.ones(3)
        opt = getattr(_optim(T), name)([w], lr=0.1, **kwargs)
        saved = (w * w).sum()            # saves w for backward
        opt.step()
        versions.append(w._version)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            saved.backward()
    assert versions[0] == versions[1]


def _lbfgs_step(T, O, w, **kwargs):
    opt = O.LBFGS([w], **kwargs)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    return opt.step(closure)


ERRORS = [
    lambda T, O, w: O.Adadelta([w], lr=-1.0),
    lambda T, O, w: O.Adadelta([w], lr=T.tensor([0.1, 0.2])),
    lambda T, O, w: O.Adadelta([w], rho=1.5),
    lambda T, O, w: O.Adadelta([w], rho=-0.1),
    lambda T, O, w: O.Adadelta([w], eps=-1.0),
    lambda T, O, w: O.Adadelta([w], weight_decay=-1.0),
    lambda T, O, w: O.Adamax([w], lr=-1.0),
    lambda T, O, w: O.Adamax([w], eps=-1.0),
    lambda T, O, w: O.Adamax([w], betas=(1.0, 0.9)),
    lambda T, O, w: O.Adamax([w], betas=(0.9, 1.0)),
    lambda T, O, w: O.Adamax([w], weight_decay=-1.0),
    lambda T, O, w: O.NAdam([w], lr=-1.0),
    lambda T, O, w: O.NAdam([w], eps=-1.0),
    lambda T, O, w: O.NAdam([w], betas=(-0.1, 0.9)),
    lambda T, O, w: O.NAdam([w], betas=(0.9, 1.5)),
    lambda T, O, w: O.NAdam([w], weight_decay=-1.0),
    lambda T, O, w: O.NAdam([w], momentum_decay=-1.0),
    lambda T, O, w: O.RAdam([w], lr=-1.0),
    lambda T, O, w: O.RAdam([w], eps=-1.0),
    lambda T, O, w: O.RAdam([w], betas=(1.0, 0.9)),
    lambda T, O, w: O.RAdam([w], betas=(0.9, -1.0)),
    lambda T, O, w: O.RAdam([w], weight_decay=-1.0),
    lambda T, O, w: O.ASGD([w], lr=-1.0),
    lambda T, O, w: O.ASGD([w], weight_decay=-1.0),
    lambda T, O, w: O.ASGD([]),
    lambda T, O, w: O.LBFGS([w], lr=-1.0),
    lambda T, O, w: O.LBFGS([w], lr=T.tensor([0.1, 0.2])),
    lambda T, O, w: O.LBFGS([{"params": [w]}, {"params": [T.ones(1, requires_grad=True)]}]),
    lambda T, O, w: O.LBFGS([w]).step(),
    lambda T, O, w: _lbfgs_step(T, O, w, line_search_fn="wolfe"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _error(lambda: ERRORS[i](srcgrad, optim, srcgrad.ones(2, requires_grad=True)))
        theirs = _error(lambda: ERRORS[i](torch, torch.optim, torch.ones(2, requires_grad=True)))
    assert ours == theirs and theirs is not None


# ------------------------------------------------------------------------------------------ LBFGS
X0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.3, -0.7])
A = np.random.default_rng(1).standard_normal((6, 6))
A = A @ A.T + np.eye(6)


def _rosenbrock(x):
    """The extended Rosenbrock function and its gradient, in float64 numpy."""
    f = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return f, g


def _quadratic(x):
    return 0.5 * x @ A @ x - x.sum(), A @ x - 1


def _lbfgs_run(T, kwargs, dtype="float64", steps=3, fn=_rosenbrock, autograd=False, x0=X0):
    """``steps`` LBFGS steps on fn over two parameters (4 and 2 elements); the closure sets
    gradients computed in float64 by numpy (bit-identical for both libraries), or, with
    ``autograd``, by each library's backward. Returns the iterates, losses and optimizer."""
    dt = getattr(T, dtype)
    a = T.tensor(x0[:4], dtype=dt, requires_grad=True)
    b = T.tensor(x0[4:], dtype=dt, requires_grad=True)
    opt = _optim(T).LBFGS([a, b], **kwargs)

    def closure():
        opt.zero_grad()
        if autograd:
            x = T.cat([a, b])
            loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
            loss.backward()
            return loss
        x = np.concatenate([a.detach().numpy(), b.detach().numpy()]).astype(np.float64)
        f, g = fn(x)
        a.grad, b.grad = T.tensor(g[:4], dtype=dt), T.tensor(g[4:], dtype=dt)
        return T.tensor(f, dtype=dt)

    xs, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure).detach()))
        xs.append(np.concatenate([a.detach().numpy(), b.detach().numpy()]))
    return np.array(xs), losses, opt


LBFGS_CASES = [                                            # (options, steps)
    ({"max_iter": 5}, 4),
    ({"lr": 0.5, "history_size": 3, "max_iter": 7}, 4),
    ({"line_search_fn": "strong_wolfe"}, 2),               # up to 20 iterations a step
    ({"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 10, "max_eval": 12}, 4),
    ({"line_search_fn": "strong_wolfe", "lr": 0.3, "tolerance_change": 1e-4}, 4),
]


@pytest.mark.parametrize("kwargs,steps", LBFGS_CASES)
def test_lbfgs_rosenbrock_matches_torch(kwargs, steps):
    ours, lo, o = _lbfgs_run(srcgrad, kwargs, steps=steps)
    theirs, lt, t = _lbfgs_run(torch, kwargs, steps=steps)
    # step by step. PyTorch's dot products (MKL) round differently from numpy's, by an ulp, and
    # along the Rosenbrock valley such differences grow with the iterations: hence a few steps
    # (20 to 40 iterations) and 1e-10. The evaluation and iteration counts are identical.
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(lo, lt, rtol=1e-10, atol=1e-10)
    so, st = o.state_dict()["state"][0], t.state_dict()["state"][0]
    assert (so["func_evals"], so["n_iter"]) == (st["func_evals"], st["n_iter"])


def test_lbfgs_strong_wolfe_converges_and_autograd_closure():
    kwargs = {"line_search_fn": "strong_wolfe"}
    ours, _, _ = _lbfgs_run(srcgrad, kwargs, steps=4, autograd=True)
    theirs, _, _ = _lbfgs_run(torch, kwargs, steps=4, autograd=True)
    # each library's own backward: its roundings follow PyTorch's CPU kernel, and 4 steps along the
    # valley grow them (3e-11 with the scalar kernel, 3e-12 with AVX2/AVX-512)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours[-1], np.ones(6), atol=1e-5)     # the minimum of Rosenbrock


@pytest.mark.parametrize("kwargs", [{}, {"line_search_fn": "strong_wolfe", "history_size": 3}])
def test_lbfgs_float32_quadratic(kwargs):
    x0 = np.linspace(-1, 1, 6)
    ours, _, _ = _lbfgs_run(srcgrad, kwargs, "float32", steps=2, fn=_quadratic, x0=x0)
    theirs, _, _ = _lbfgs_run(torch, kwargs, "float32", steps=2, fn=_quadratic, x0=x0)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[-1], np.linalg.solve(A, np.ones(6)), rtol=1e-4, atol=1e-4)


def _lbfgs_layout(value):
    if isinstance(value, list):
        return [_lbfgs_layout(v) for v in value]
    if hasattr(value, "shape"):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape))
    return type(value).__name__


@pytest.mark.parametrize("kwargs", [{"history_size": 4, "max_iter": 5}, {"line_search_fn": "strong_wolfe"}])
def test_lbfgs_state_dict_layout_and_round_trip(kwargs):
    _, _, o = _lbfgs_run(srcgrad, kwargs, steps=2)
    _, _, t = _lbfgs_run(torch, kwargs, steps=2)
    so, st = o.state_dict(), t.state_dict()
    assert so["param_groups"] == st["param_groups"]
    assert list(so["state"]) == list(st["state"]) == [0]
    assert list(so["state"][0]) == list(st["state"][0])
    assert {k: _lbfgs_layout(v) for k, v in so["state"][0].items()} == \
        {k: _lbfgs_layout(v) for k, v in st["state"][0].items()}

    # 2 steps, a new optimizer loaded with the state, 2 more: as 4 steps of one optimizer
    straight, _, _ = _lbfgs_run(srcgrad, kwargs, steps=4)
    x = o.param_groups[0]["params"]
    again = optim.LBFGS(x, **kwargs)
    again.load_state_dict(copy.deepcopy(so))

    def closure():
        again.zero_grad()
        f, g = _rosenbrock(np.concatenate([p.detach().numpy() for p in x]))
        x[0].grad, x[1].grad = srcgrad.tensor(g[:4]), srcgrad.tensor(g[4:])
        return srcgrad.tensor(f)
    for _ in range(2):
        again.step(closure)
    np.testing.assert_array_equal(np.concatenate([p.detach().numpy() for p in x]), straight[-1])


def test_lbfgs_stops_at_optimum_and_on_tolerance():
    for T in (srcgrad, torch):
        # zero gradient: one evaluation, nothing moves
        w = T.ones(3, dtype=T.float64, requires_grad=True)
        opt = _optim(T).LBFGS([w])

        def flat():
            opt.zero_grad()
            loss = ((w - 1) ** 2).sum()
            loss.backward()
            return loss
        with T.no_grad():                   # the closure runs with grad enabled all the same
            assert float(opt.step(flat)) == 0.0
        assert opt.state[w] == {"func_evals": 1, "n_iter": 0} and w.tolist() == [1.0, 1.0, 1.0]
    # a loose tolerance_change stops early, at the same iteration as PyTorch
    ours, _, o = _lbfgs_run(srcgrad, {"tolerance_change": 1e-2}, steps=2)
    theirs, _, t = _lbfgs_run(torch, {"tolerance_change": 1e-2}, steps=2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert o.state[o.param_groups[0]["params"][0]]["n_iter"] == t.state[t.param_groups[0]["params"][0]]["n_iter"]


@pytest.mark.parametrize("kwargs", [{"max_iter": 3}, {"line_search_fn": "strong_wolfe", "max_iter": 3}])
def test_lbfgs_bumps_version_like_torch(kwargs):
    versions = []
    for T in (srcgrad, torch):
        w = T.tensor([1.5, -0.5], dtype=T.float64, requires_grad=True)
        opt = _optim(T).LBFGS([w], **kwargs)

        def closure():
            opt.zero_grad()
            loss = ((w - 1) ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)
        versions.append(w._version)
    assert versions[0] == versions[1] > 0


# ------------------------------------------------------------------------------------- schedulers
def _run_schedule(T, build, epochs=45, optimizer="SGD", nudge=True):
    """The learning rates (and momenta / beta1) after each of ``epochs`` steps of the scheduler
    ``build(lr_scheduler, opt)``, over two parameter groups; at epoch 17 the first group's lr is
    halved from outside (the chainable forms follow it)."""
    O = _optim(T)
    p = _params(T, "float64")
    extra = {"momentum": 0.9} if optimizer == "SGD" else {}
    opt = getattr(O, optimizer)([{"params": [p["W"]]}, {"params": [p["b"]], "lr": 0.3}], lr=0.1, **extra)
    sched = build(O.lr_scheduler, opt)

    def momenta():
        return [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]
    lrs, moms = [sched.get_last_lr()], [momenta()]
    for epoch in range(epochs):
        opt.step()
        sched.step()
        if nudge and epoch == 17:
            opt.param_groups[0]["lr"] *= 0.5
        lrs.append(sched.get_last_lr())
        moms.append(momenta())
    assert [g["lr"] for g in opt.param_groups] == lrs[-1]
    return np.array(lrs), np.array(moms), sched


SCHEDULERS = [
    ("ConstantLR", lambda S, o: S.ConstantLR(o)),
    ("ConstantLR-2", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=12)),
    ("LinearLR", lambda S, o: S.LinearLR(o)),
    ("LinearLR-2", lambda S, o: S.LinearLR(o, start_factor=0.05, end_factor=0.5, total_iters=25)),
    ("PolynomialLR", lambda S, o: S.PolynomialLR(o)),
    ("PolynomialLR-2", lambda S, o: S.PolynomialLR(o, total_iters=30, power=0.9)),
    ("CosineAnnealingWarmRestarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=7)),
    ("CosineAnnealingWarmRestarts-2", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)),
    ("SequentialLR", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)], milestones=[5])),
    ("SequentialLR-3", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.2, total_iters=4), S.CosineAnnealingLR(o, T_max=10), S.StepLR(o, 5, 0.5)],
        milestones=[6, 20])),
    ("ChainedScheduler", lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=20), S.ExponentialLR(o, gamma=0.9)])),
    ("ChainedScheduler-3", lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, total_iters=8), S.MultiStepLR(o, [10, 30], 0.3), S.PolynomialLR(o, 40, 2.0)], optimizer=o)),
    ("OneCycleLR", lambda S, o: S.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=45)),
    ("OneCycleLR-linear-3phase", lambda S, o: S.OneCycleLR(
        o, max_lr=0.4, epochs=9, steps_per_epoch=5, anneal_strategy="linear", three_phase=True,
        base_momentum=0.8, max_momentum=[0.9, 0.95])),
    ("OneCycleLR-no-momentum", lambda S, o: S.OneCycleLR(
        o, max_lr=0.4, total_steps=50, cycle_momentum=False, pct_start=0.25, div_factor=10.0, final_div_factor=100.0)),
]


@pytest.mark.parametrize("build", [b for _, b in SCHEDULERS], ids=[n for n, _ in SCHEDULERS])
def test_scheduler_matches_torch(build):
    ours, om, o = _run_schedule(srcgrad, build)
    theirs, tm, t = _run_schedule(torch, build)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(om, tm, rtol=1e-13, atol=0)
    so, st = o.state_dict(), t.state_dict()
    assert so.keys() == st.keys()
    for inner_o, inner_t in zip(so.get("_schedulers", []), st.get("_schedulers", [])):
        assert inner_o.keys() == inner_t.keys()
    assert getattr(o, "last_epoch", None) == getattr(t, "last_epoch", None)


def test_one_cycle_cycles_adam_beta1_and_stops_at_total_steps():
    build = lambda S, o: S.OneCycleLR(o, max_lr=0.2, total_steps=45, pct_start=0.4)  # noqa: E731
    ours, om, o = _run_schedule(srcgrad, build, optimizer="Adam", nudge=False)
    theirs, tm, t = _run_schedule(torch, build, optimizer="Adam", nudge=False)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(om, tm, rtol=1e-13, atol=0)
    assert o.optimizer.param_groups[0]["betas"][1] == 0.999
    errors = []
    for sched in (o, t):
        sched.optimizer.step()
        errors.append(_error(sched.step))
    assert errors[0] == errors[1] == ("ValueError", "Tried to step 46 times. The specified number of total steps "
                                      "is 45")


PLATEAU = [
    {},
    {"factor": 0.5, "patience": 2, "cooldown": 1},
    {"mode": "max", "factor": 0.7, "patience": 1, "threshold": 0.05, "threshold_mode": "abs", "min_lr": [0.01, 0.1]},
    {"patience": 0, "threshold_mode": "abs", "threshold": 0.0, "min_lr": 0.02, "eps": 1e-3},
]


@pytest.mark.parametrize("kwargs", PLATEAU)
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    # a metric that improves, then stalls and wobbles
    metrics = np.concatenate([1 / np.arange(1, 11), 0.1 + 0.01 * np.sin(np.arange(35))])
    results = []
    for T in (srcgrad, torch):
        O = _optim(T)
        opt = O.SGD([{"params": [T.ones(2, requires_grad=True)]},
                     {"params": [T.ones(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
        sched = O.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        lrs = [sched.get_last_lr()]
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(T.tensor(m) if i % 2 else m)         # a number or a 0-d tensor
            lrs.append(sched.get_last_lr())
        results.append((lrs, sched.state_dict()))
    assert results[0][0] == results[1][0]
    assert results[0][1] == results[1][1]


def test_reduce_lr_on_plateau_state_dict_round_trip():
    opt = optim.SGD([srcgrad.ones(2, requires_grad=True)], lr=0.1)
    sched = optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
    for m in (1.0, 0.5, 0.5):
        sched.step(m)
    other = optim.lr_scheduler.ReduceLROnPlateau(opt)
    other.load_state_dict(sched.state_dict())
    assert other.mode == "max" and other.mode_worse == -float("inf") and other.best == 1.0
    assert other.num_bad_epochs == sched.num_bad_epochs and other.get_last_lr() == [0.010000000000000002]


RESUMABLE = ["ConstantLR-2", "LinearLR-2", "PolynomialLR-2", "CosineAnnealingWarmRestarts-2"]
# the constructor arguments of each, read back from the scheduler's attributes
_ARGS = {"ConstantLR": ["factor", "total_iters"], "LinearLR": ["start_factor", "end_factor", "total_iters"],
         "PolynomialLR": ["total_iters", "power"], "CosineAnnealingWarmRestarts": ["T_0", "T_mult", "eta_min"]}


@pytest.mark.parametrize("name", RESUMABLE)
def test_scheduler_resume_and_epoch_argument(name):
    build = dict(SCHEDULERS)[name]
    results = []
    for T in (srcgrad, torch):
        O = _optim(T)
        opt = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched = build(O.lr_scheduler, opt)
        for _ in range(9):
            opt.step()
            sched.step()
        # resume: a new scheduler made with last_epoch (its arguments as build's), then its state loaded
        resumed = type(sched)(opt, **{k: getattr(sched, k) for k in _ARGS[type(sched).__name__]},
                              last_epoch=sched.last_epoch)
        resumed.load_state_dict(sched.state_dict())
        lrs = []
        for _ in range(15):
            opt.step()
            resumed.step()
            lrs.append(resumed.get_last_lr()[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (31, 3, 50, 7.25, 19.5):           # the closed forms (fractional: CAWR only)
                if isinstance(epoch, float) and not name.startswith("CosineAnnealingWarmRestarts"):
                    continue
                resumed.step(epoch)
                lrs.append(resumed.get_last_lr()[0])
        results.append(lrs)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13, atol=0)


@pytest.mark.parametrize("T_mult", [1, 3])
def test_warm_restarts_fractional_epochs(T_mult):
    results = []
    for T in (srcgrad, torch):
        O = _optim(T)
        opt = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched = O.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=T_mult, eta_min=0.001)
        lrs = []
        for epoch in range(12):
            for i in range(4):
                opt.step()
                sched.step(epoch + i / 4)
                lrs.append((sched.get_last_lr()[0], sched.T_cur, sched.T_i, sched.last_epoch))
        for _ in range(3):                  # and plain steps again, from where it is
            sched.step()
            lrs.append((sched.get_last_lr()[0], sched.T_cur, sched.T_i, sched.last_epoch))
        results.append(lrs)
    np.testing.assert_allclose(np.array(results[0]), np.array(results[1]), rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", ["SequentialLR-3", "ChainedScheduler-3"])
def test_nested_scheduler_state_dict_round_trip(name):
    build = dict(SCHEDULERS)[name]
    results = []
    for T in (srcgrad, torch):
        O = _optim(T)
        opt = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        sched = build(O.lr_scheduler, opt)
        for _ in range(8):
            opt.step()
            sched.step()
        saved = copy.deepcopy(sched.state_dict())
        opt2 = O.SGD([T.ones(2, requires_grad=True)], lr=0.1)
        other = build(O.lr_scheduler, opt2)
        other.load_state_dict(saved)
        opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
        lrs = []
        for _ in range(20):
            opt.step()
            opt2.step()
            sched.step()
            other.step()
            lrs.append((sched.get_last_lr()[0], other.get_last_lr()[0]))
        assert [a for a, _ in lrs] == [b for _, b in lrs]
        results.append(lrs)
    np.testing.assert_allclose(np.array(results[0]), np.array(results[1]), rtol=1e-13, atol=0)


def _sgd(T, O, **kwargs):
    return O.SGD([T.ones(2, requires_grad=True)], lr=0.1, **kwargs)


SCHEDULER_ERRORS = [
    lambda T, O: O.lr_scheduler.ConstantLR(_sgd(T, O), factor=1.5),
    lambda T, O: O.lr_scheduler.ConstantLR(_sgd(T, O), factor=-0.5),
    lambda T, O: O.lr_scheduler.LinearLR(_sgd(T, O), start_factor=0),
    lambda T, O: O.lr_scheduler.LinearLR(_sgd(T, O), end_factor=2.0),
    lambda T, O: O.lr_scheduler.PolynomialLR(3),
    lambda T, O: O.lr_scheduler.CosineAnnealingWarmRestarts(_sgd(T, O), T_0=0),
    lambda T, O: O.lr_scheduler.CosineAnnealingWarmRestarts(_sgd(T, O), T_0=2.5),
    lambda T, O: O.lr_scheduler.CosineAnnealingWarmRestarts(_sgd(T, O), T_0=2, T_mult=0),
    lambda T, O: O.lr_scheduler.CosineAnnealingWarmRestarts(_sgd(T, O), T_0=2, eta_min="0"),
    lambda T, O: O.lr_scheduler.CosineAnnealingWarmRestarts(_sgd(T, O), T_0=2).step(-1),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, total_steps=0),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, epochs=0, steps_per_epoch=3),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, epochs=2, steps_per_epoch=1.5),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, total_steps=10, pct_start=1.5),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, total_steps=10, pct_start=1),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    lambda T, O: O.lr_scheduler.OneCycleLR(_sgd(T, O), max_lr=[1.0, 2.0], total_steps=10),
    lambda T, O: O.lr_scheduler.OneCycleLR(O.Adagrad([T.ones(2, requires_grad=True)]), max_lr=1.0, total_steps=9),
    lambda T, O: O.lr_scheduler.OneCycleLR("opt", max_lr=1.0, total_steps=10),
    lambda T, O: O.lr_scheduler.ReduceLROnPlateau(_sgd(T, O), factor=1.0),
    lambda T, O: O.lr_scheduler.ReduceLROnPlateau(_sgd(T, O), mode="avg"),
    lambda T, O: O.lr_scheduler.ReduceLROnPlateau(_sgd(T, O), threshold_mode="pct"),
    lambda T, O: O.lr_scheduler.ReduceLROnPlateau(_sgd(T, O), min_lr=[0.1, 0.2]),
    lambda T, O: O.lr_scheduler.ReduceLROnPlateau("opt"),
    lambda T, O: O.lr_scheduler.SequentialLR(_sgd(T, O), [], []),
    lambda T, O: O.lr_scheduler.SequentialLR(_sgd(T, O), [3], []),
    lambda T, O: (lambda o: O.lr_scheduler.SequentialLR(o, [O.lr_scheduler.StepLR(o, 2)], [3]))(_sgd(T, O)),
    lambda T, O: (lambda o: O.lr_scheduler.SequentialLR(o, [O.lr_scheduler.StepLR(_sgd(T, O), 2)], []))(_sgd(T, O)),
    lambda T, O: (lambda o: O.lr_scheduler.SequentialLR(o, [O.lr_scheduler.ReduceLROnPlateau(o)], []))(_sgd(T, O)),
    lambda T, O: O.lr_scheduler.ChainedScheduler([]),
    lambda T, O: O.lr_scheduler.ChainedScheduler([3]),
    lambda T, O: O.lr_scheduler.ChainedScheduler([O.lr_scheduler.StepLR(_sgd(T, O), 2),
                                                   O.lr_scheduler.StepLR(_sgd(T, O), 2)]),
    lambda T, O: (lambda o: O.lr_scheduler.ChainedScheduler([O.lr_scheduler.ReduceLROnPlateau(o)]))(_sgd(T, O)),
]


@pytest.mark.parametrize("i", range(len(SCHEDULER_ERRORS)))
def test_scheduler_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _error(lambda: SCHEDULER_ERRORS[i](srcgrad, optim))
        theirs = _error(lambda: SCHEDULER_ERRORS[i](torch, torch.optim))
    assert ours == theirs and theirs is not None
