"""Programs in the style of PyTorch's autograd tutorials print the same with srcgrad as with
PyTorch (same random numbers fed to both; addresses masked)."""
import pytest

import srcgrad

from .replay import replay
from .tutorial_cells import TUTORIALS

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_tutorial_matches_pytorch(name):
    cells = TUTORIALS[name]
    ours = replay(cells, srcgrad)
    theirs = replay(cells, torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"{name}, cell {i}:\n{cells[i]}\nsrcgrad: {a}\ntorch:   {b}"
