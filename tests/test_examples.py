"""Every script in examples/ runs to the end."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path):
    # in a scratch folder: graph_picture.py writes its pictures, Dask its worker space, there
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_autograd_tutorial_prints_what_the_tutorial_shows(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLES[0].parent / "autograd_tutorial.py")], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path).stdout
    assert "Gradient function for z = <AddBackward0 object at 0x" in out
    assert "Gradient function for loss = <BinaryCrossEntropyWithLogitsBackward0 object at 0x" in out
    assert "First call\n tensor([[4., 2., 2., 2., 2.]," in out
    assert "Second call\n tensor([[8., 4., 4., 4., 4.]," in out
    assert "Call after zeroing gradients\n tensor([[4., 2., 2., 2., 2.]," in out
