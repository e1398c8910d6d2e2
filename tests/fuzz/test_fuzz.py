"""Random programs, a bounded number per CI run (SRCGRAD_FUZZ_EXAMPLES raises it; for long runs
use ``python -m tests.fuzz --minutes N``), and every program a fuzz run ever found failing
(tests/fuzz/regressions/), checked the ways of checks.py."""
import os
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import checks
from .array_programs import array_program
from .checks import check_array_program, check_program
from .programs import SPECIAL_POINTS, enabled, program

# 40: since issue 12 every scalar program's writes are differentiated (none skipped as refused)
# and its checkpointed gradient checked, so each costs more; the long runs (python -m
# tests.fuzz) are where the numbers are
# 16 since issue 13, whose second derivatives made each program cost more again (CI: 10 minutes;
# 24 took 675 s of pytest on a fresh clone)
EXAMPLES = int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "16"))
# second derivatives on one random program in six here (issue 13: they cost three to five more
# compiles each); every program in the long runs and every regression program
checks.SECOND_ORDER_EVERY = int(os.environ.get("SRCGRAD_FUZZ_SECOND_ORDER_EVERY", "6"))
# exact zeros sit on many generated branch boundaries (sin(0) > 0.0), where differences lie:
# one point in eight is a feature's edge (programs.SPECIAL_POINTS: 0.0, 1.0, 0.1...), where the
# checks skip finite differences that straddle a kink or a jump
_NONZERO = st.floats(-1.5, 1.5).filter(lambda v: abs(v) > 1e-2)
_SPECIAL = sorted({p for f in enabled() for p in SPECIAL_POINTS.get(f, [])})
POINTS = st.integers(0, 7).flatmap(lambda k: st.sampled_from(_SPECIAL) if k == 0 else _NONZERO) \
    if _SPECIAL else _NONZERO
REGRESSIONS = sorted((pathlib.Path(__file__).parent / "regressions").glob("*.py"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program(), POINTS, POINTS)
def test_random_program(tmp_path_factory, source, x, y):
    check_program(source, tmp_path_factory.mktemp("programs"), x, y)


# half as many array programs: with the features of issue 9 and translation validation each
# costs about twice what it did (mostly LLVM compiling in-place writes), and CI's time stays
@settings(max_examples=max(EXAMPLES // 2, 1), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(array_program())
def test_random_array_program(tmp_path_factory, source):
    check_array_program(source, tmp_path_factory.mktemp("programs"))


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_regression(tmp_path, path):
    """A program once found failing; its first line says at which (x, y)."""
    source = path.read_text()
    x, y = (float(a) for a in source.splitlines()[0].lstrip("# xy=").split(","))
    if "(X, y, w, c):" in source:
        check_array_program(source, tmp_path, second_order=path.stem.startswith("second_order"))
    else:
        check_program(source, tmp_path, x, y, fuzzing=False, second_order=path.stem.startswith("second_order"))
