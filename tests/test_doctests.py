"""Every ``>>>`` example in srcgrad's docstrings runs, as a doctest, and shows what it prints
(issue 28: an example either runs or is a plain code block, which doctest does not collect).

One test per module of the package, each module imported (none is skipped: the CUDA modules
import without a GPU and only their examples need none), its examples run by the standard
``doctest`` module in the module's own namespace, as ``python -m doctest`` would. An example
imports what it uses beyond that namespace, prints numbers rounded, and leaves no global
setting changed, so that the tests do not depend on their order or on the machine.
"""
import doctest
import importlib
import pathlib
import pkgutil

import pytest

import srcgrad


def _raise(name):
    raise ImportError(f"walk_packages could not import {name}")


def _modules():
    """srcgrad and every module under it. walk_packages does not enter a folder without an
    ``__init__.py`` (a namespace package: srcgrad/eager/ops), so each such folder is walked too."""
    root = pathlib.Path(srcgrad.__file__).parent
    names = {srcgrad.__name__}
    names.update(m.name for m in pkgutil.walk_packages(srcgrad.__path__, "srcgrad.", onerror=_raise))
    for folder in sorted(root.rglob("*")):
        if folder.is_dir() and folder.name != "__pycache__" and not (folder / "__init__.py").exists():
            prefix = ".".join(("srcgrad",) + folder.relative_to(root).parts) + "."
            names.update(m.name for m in pkgutil.walk_packages([str(folder)], prefix, onerror=_raise))
    return sorted(names)


MODULES = _modules()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for test in doctest.DocTestFinder().find(module, name):     # what the module defines, not imports
        runner.run(test, out=report.append)
    assert not runner.failures, f"{runner.failures} of {runner.tries} examples failed in {name}:\n" + "".join(report)
