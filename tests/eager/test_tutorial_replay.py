"""Every code cell of the five tutorials in shared/seeds/, and more programs in the style of
PyTorch's autograd and nn tutorials, print with srcgrad what they print with PyTorch (same random
numbers fed to both; addresses masked; printed decimals compared to within float32 rounding,
replay.same_output)."""
import pytest

import srcgrad

from .nn_tutorial_cells import NN_TUTORIALS
from .replay import replay, same_output
from .seed_cells import SEEDS
from .tutorial_cells import TUTORIALS

PROGRAMS = {**{f"seed_{k}": v for k, v in SEEDS.items()}, **TUTORIALS, **NN_TUTORIALS}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    cells = PROGRAMS[name]
    ours = replay(cells, srcgrad)
    theirs = replay(cells, torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert same_output(a, b), f"{name}, cell {i}:\n{cells[i]}\nsrcgrad: {a}\ntorch:   {b}"


def test_seed_cells_raise_only_where_the_tutorial_shows_an_error():
    for seed, cells in SEEDS.items():
        for i, out in enumerate(replay(cells, srcgrad)):
            if out["error"]:
                assert out["error"].startswith("RuntimeError: grad can be implicitly created"), (seed, i, out)
