"""The real programs of benchmarks/real_programs.py (ADBench's GMM, bundle adjustment, hand
tracking and LSTM, benchmarks/real/), at tiny sizes: srcgrad's derivative of each, as the
benchmark calls it, against central finite differences of the plain Python objective and
against PyTorch's derivative (torch is a test extra), and JAX's where it is installed.

Both backends: the python backend compiles each in a fraction of a second; the llvm backend
is tested on the objectives it compiles in a few seconds. The hand tracking Jacobian is left
to the benchmark on llvm: with jacobian's default mode="auto" both sweeps are compiled, about
25 s of LLVM (benchmarks/RESULTS.md, real_programs).
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import srcgrad  # noqa: E402
from real import ba, common, gmm, hand, lstm  # noqa: E402

MODULES = {"gmm": gmm, "ba": ba, "hand": hand, "lstm": lstm}
LSTM_ARGS = ("main_params", "extra_params", "state", "sequence")


def srcgrad_derivative(name, inp, backend):
    """The zero-argument derivative call: on llvm the benchmark's own (module-level objects), on
    the python backend the same transformations of the same functions."""
    if backend == "llvm":
        if name == "ba":                  # the benchmark's batched loop compiles for 8 s: per observation
            return ba.srcgrad_derivative(inp, batched=False)
        return MODULES[name].srcgrad_derivative(inp)
    if name == "gmm":
        g = srcgrad.grad(gmm.gmm_objective, wrt=(0, 1, 2), backend=backend)
        return lambda: g(*gmm.objective_args(inp))
    if name == "lstm":
        g = srcgrad.grad(lstm.lstm_objective, wrt=(0, 1), backend=backend)
        return lambda: g(*(inp[k] for k in LSTM_ARGS))
    if name == "hand":
        jac = srcgrad.jacobian(hand.hand_objective, backend=backend)
        return lambda: jac(inp["theta"], *(inp[k] for k in hand.ARGS))
    # per observation here too: inlining the module's jacobian into a python-backend loop
    # would compile that jacobian on llvm first (Compiled.as_primal builds the whole specialisation)
    jac = srcgrad.jacobian(ba.reproj_err, wrt=(0, 1, 2), backend=backend)
    slope = srcgrad.vectorize(srcgrad.grad(ba.w_err), backend=backend)

    def per_observation():
        J = np.zeros((inp["obs"].shape[0], 2, 15))
        for i, (c, j) in enumerate(inp["obs"]):
            jc, jx, jw = jac(inp["cams"][c], inp["X"][j], inp["w"][i], inp["feats"][i])
            J[i] = np.concatenate([jc, jx, jw[:, None]], axis=1)
        return J, slope(inp["w"])
    return per_observation


CASES = [(name, backend) for backend in ("python", "llvm") for name in MODULES
         if (name, backend) != ("hand", "llvm")]


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    common.setup("torch")
    return torch


@pytest.mark.parametrize("name, backend", CASES)
def test_derivative_matches_finite_differences_and_pytorch(name, backend, torch):
    module = MODULES[name]
    inp = module.inputs(**module.TINY)
    ours = module.standard(srcgrad_derivative(name, inp, backend)())
    coords = list(range(sum(np.size(b) for b in module.blocks(inp))))      # every coordinate
    assert common.finite_difference_error(module, inp, ours, coords=coords, plain=True) < 1e-7
    theirs = module.standard(module.torch_derivative(inp)())
    assert common.relative_difference(ours, theirs) < 1e-12


@pytest.mark.parametrize("name", ["gmm", "ba", "lstm"])     # hand's jit takes 3 s: the benchmark checks it
def test_jax_agrees(name, torch):
    pytest.importorskip("jax")
    module = MODULES[name]
    inp = module.inputs(**module.TINY)
    common.setup("jax")
    theirs = module.standard(module.jax_derivative(inp)())
    assert common.relative_difference(theirs, module.standard(module.torch_derivative(inp)())) < 1e-12


def test_objectives_run_as_plain_python_and_compiled():
    """The forward functions srcgrad compiles give what Python gives (finite differences at the
    benchmark's sizes use the compiled ones)."""
    inp = gmm.inputs(**gmm.TINY)
    args = gmm.objective_args(inp)
    assert gmm.gmm_value(*args) == pytest.approx(gmm.gmm_objective(*args), rel=1e-13)
    inp = lstm.inputs(**lstm.TINY)
    args = [inp[k] for k in LSTM_ARGS]
    assert lstm.lstm_value(*args) == pytest.approx(lstm.lstm_objective(*args), rel=1e-13)
