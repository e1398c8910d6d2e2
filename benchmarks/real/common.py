"""What benchmarks/real_programs.py and tests/test_real_programs.py share: one layout for every
tool's derivative, relative differences, central finite differences, and timing.

Each objective module (gmm, ba, hand, lstm) gives, besides its four derivatives:

- ``standard(result)``: the tool's derivative as a tuple of float64 numpy arrays in one layout
  (torch tensors and JAX arrays converted);
- ``blocks(inp)``: the differentiated inputs, in order (their elements, flattened and joined,
  are the coordinates finite differences move);
- ``outputs(inp, values)``: the objective's outputs, flattened, at ``values`` (one array per
  block), and ``column(std, inp, j)``: the derivative's column for coordinate ``j`` (the
  outputs' derivatives in that coordinate, flattened like ``outputs``) — BA's Jacobian is
  sparse, so its module computes only the outputs and the column entries a coordinate touches.
"""
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

TOOLS = ("srcgrad", "jax", "torch", "hand")
_SETUP = set()


def setup(tool):
    """One thread everywhere, float64 in JAX: what a tool needs before its first derivative."""
    if tool in _SETUP:
        return
    if tool == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
    elif tool == "torch":
        import torch
        torch.set_num_threads(1)
    _SETUP.add(tool)


def derivative(module, tool, inp):
    """The zero-argument callable computing ``tool``'s derivative of ``module``'s objective."""
    setup(tool)
    return getattr(module, f"{tool}_derivative")(inp)


def as_numpy(a):
    if hasattr(a, "detach"):
        a = a.detach().numpy()
    return np.asarray(a, dtype=np.float64)


def relative_difference(a, b):
    """max |a - b| / max |b| over all entries of the two standard layouts (b the reference)."""
    a, b = [np.concatenate([np.ravel(x) for x in t]) for t in (a, b)]
    if a.shape != b.shape:
        return float("inf")
    scale = np.max(np.abs(b)) if b.size else 0.0
    return float(np.max(np.abs(a - b)) / (scale or 1.0)) if b.size else 0.0


def coordinates(module, inp, per_block=3):
    """A few coordinates of each differentiated block: its first, middle and last element."""
    coords, start = [], 0
    for block in module.blocks(inp):
        size = np.size(block)
        coords += sorted({start, start + size // 2, start + size - 1})[:per_block]
        start += size
    return coords


def finite_difference_error(module, inp, std, coords=None, step=1e-5, plain=True):
    """max over ``coords`` of |central difference - derivative| on the derivative's column for
    the coordinate, over max |derivative| (all of it, as ``relative_difference``); each coordinate
    moves by ``step`` times max(1, |value|). ``plain``: the objective runs as plain Python;
    otherwise a module may run it compiled by ``srcgrad.jit`` (long loops)."""
    coords = coordinates(module, inp) if coords is None else coords
    base = [np.array(b, dtype=np.float64, copy=True) for b in module.blocks(inp)]
    sizes = np.cumsum([0] + [b.size for b in base])
    scale = max(float(np.max(np.abs(a))) if np.size(a) else 0.0 for a in std) or 1.0
    worst = 0.0
    for j in coords:
        k = int(np.searchsorted(sizes, j, side="right") - 1)
        at = np.unravel_index(j - sizes[k], base[k].shape)
        x0 = float(base[k][at])
        h = step * max(1.0, abs(x0))
        values = []
        for sign in (1.0, -1.0):
            moved = [b.copy() for b in base]
            moved[k][at] = x0 + sign * h
            values.append(np.asarray(module.outputs(inp, moved, j, plain), dtype=np.float64))
        fd = (values[0] - values[1]) / (2 * h)
        ad = np.asarray(module.column(std, inp, j), dtype=np.float64)
        worst = max(worst, float(np.max(np.abs(fd - ad))) / scale if ad.size else 0.0)
    return worst


def timed(cases, repeats, budget=10.0, least=3):
    """Median seconds per call of each zero-argument callable; the cases take turns, one call
    each a round, so machine noise hits them alike. A case stops taking turns once it has
    ``least`` samples and has spent ``budget`` seconds (a slow tool does not hold up the run)."""
    times = {k: [] for k in cases}
    for _ in range(repeats):
        for k, fn in cases.items():
            if len(times[k]) >= least and sum(times[k]) > budget:
                continue
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items() if v}, {k: len(v) for k, v in times.items()}


FIRST_CALL = r'''
import os, sys, time
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
sys.path.insert(0, {benchmarks!r})
import numpy, srcgrad
from real import common
common.setup({tool!r})
t0 = time.perf_counter()
from real import {module}                      # srcgrad's decorations are at the module's top level
t1 = time.perf_counter()
inp = {module}.inputs(**{size!r})              # not timed
t2 = time.perf_counter()
fn = {module}.{tool}_derivative(inp)
fn()
print(time.perf_counter() - t2 + t1 - t0)
'''


def first_call(module_name, tool, size, timeout=600):
    """Seconds from building ``tool``'s derivative (decoration, jit) to its first result, in a
    fresh Python process (imports and inputs excluded, no compiled code cached), or the error."""
    import subprocess
    import sys
    benchmarks = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = FIRST_CALL.format(benchmarks=benchmarks, module=module_name, tool=tool, size=size)
    env = dict(os.environ, SRCGRAD_TIERS=os.environ.get("SRCGRAD_USER_TIERS", "auto"), PYTHONPATH=os.pathsep.join(
        [os.path.dirname(benchmarks)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env,
                          timeout=timeout)
    if done.returncode:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    return float(done.stdout.strip().splitlines()[-1])
