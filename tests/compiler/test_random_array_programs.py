"""Random whole-array programs: the llvm backend (lazy element-wise chains, row dot products,
sums) computes the values and gradients the python backend (numpy op by op) does."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import srcgrad

from .random_array_programs import array_program
from .test_random_programs import _load


@settings(max_examples=int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(array_program())
def test_random_array_program(tmp_path_factory, source):
    f = _load(source, tmp_path_factory)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(5) * 0.5, rng.standard_normal(3) * 0.5, 0.7)
    expected = f(*args)
    assert srcgrad.jit(f, backend="llvm")(*args) == pytest.approx(expected, rel=1e-11), source
    native = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="llvm")(*args)
    python = srcgrad.grad(f, wrt=(0, 1, 2, 3), backend="python")(*args)
    for a, b in zip(native, python):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=source)
