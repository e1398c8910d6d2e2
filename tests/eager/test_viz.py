"""srcgrad.viz.make_dot: DOT source of the grad_fn graph, and rendering when Graphviz is there."""
import shutil

import pytest

import srcgrad as torch
from srcgrad.viz import make_dot


def _tutorial_graph():
    x = torch.ones(5)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.zeros(3))
    return loss, w, b


def test_dot_source_names_nodes_like_pytorch_and_shows_leaf_shapes():
    loss, w, b = _tutorial_graph()
    src = make_dot(loss, params={"w": w, "b": b}).source
    assert src.startswith("digraph {")
    for label in ("BinaryCrossEntropyWithLogitsBackward0", "AddBackward0", "SqueezeBackward4", "MmBackward0",
                  "AccumulateGrad", '"w\\n(5, 3)"', '"b\\n(3)"'):
        assert label in src, label
    # every node drawn once, every edge points from an input node to the node using it
    assert src.count("[label=AddBackward0]") == 0 and src.count('[label="AddBackward0"]') == 1
    assert f"{id(loss.grad_fn)} -> {id(loss)}" in src


def test_make_dot_rejects_non_tensors():
    with pytest.raises(TypeError, match="make_dot expects tensors"):
        make_dot([1, 2])


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz program is not installed")
def test_render_svg(tmp_path):
    pytest.importorskip("graphviz")
    loss, w, b = _tutorial_graph()
    path = make_dot(loss, params={"w": w, "b": b}).render(str(tmp_path / "graph"), format="svg")
    assert open(path).read().lstrip().startswith("<?xml")
