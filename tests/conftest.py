"""What every test process shares (issue 27): nothing the suite does writes to the user's home
or to the source tree outside a temporary directory.

- compiled code kept on disk (``cache=True``, the trimmed libdevice) goes to a scratch folder
  of this process, not ``~/.cache/srcgrad``; the subprocesses tests start inherit it;
- Hypothesis keeps its example database and constants cache there too, not in ``.hypothesis/``
  of the working directory: a failing example is printed with its seed, and
  tests/fuzz/regressions/ is where found programs stay;
- every function is built once, by O3 (``SRCGRAD_TIERS=off``), so that two compiled objects
  give the same bits whatever their size; tests/compiler/test_tiers.py and the fuzzer's
  ``quick_tier`` check the quick tier of large functions.
"""
import os
import shutil
import tempfile

from hypothesis.configuration import set_hypothesis_home_dir

_scratch = []


def pytest_configure(config):
    """Each test process (xdist's workers too) makes its scratch folder before collection."""
    _scratch.append(tempfile.mkdtemp(prefix="srcgrad-tests-"))
    os.environ["SRCGRAD_CACHE_DIR"] = os.path.join(_scratch[0], "cache")
    os.environ.setdefault("SRCGRAD_TIERS", "off")
    set_hypothesis_home_dir(os.path.join(_scratch[0], "hypothesis"))


def pytest_unconfigure(config):
    """And takes it away when it is done."""
    while _scratch:
        shutil.rmtree(_scratch.pop(), ignore_errors=True)
