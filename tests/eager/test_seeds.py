"""Every code cell of the five tutorials in shared/seeds/ prints with srcgrad what it prints
with PyTorch (same random numbers fed to both; addresses masked)."""
import pytest

import srcgrad

from .replay import replay
from .seed_cells import SEEDS

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seed_cells_match_pytorch(seed):
    cells = SEEDS[seed]
    ours = replay(cells, srcgrad)
    theirs = replay(cells, torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"seed {seed}, cell {i}:\n{cells[i]}\nsrcgrad: {a}\ntorch:   {b}"


def test_seed_cells_run_without_torch_errors_where_torch_has_none():
    for seed, cells in SEEDS.items():
        for i, out in enumerate(replay(cells, srcgrad)):
            if out["error"]:
                assert out["error"].startswith("RuntimeError: grad can be implicitly created"), (seed, i, out)
