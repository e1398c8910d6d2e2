"""Draw the grad_fn graph of the autograd tutorial's one-layer network.

Prints the Graphviz DOT text; with the `graphviz` Python package and the Graphviz program
installed, also writes the picture:  python examples/graph_picture.py [out.png]
"""
import shutil
import sys

import srcgrad as torch
from srcgrad.viz import make_dot

torch.manual_seed(0)
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

dot = make_dot(loss, params={"w": w, "b": b})
print(dot.source)

if len(sys.argv) > 1:
    out = sys.argv[1]
    if shutil.which("dot") is None:
        sys.exit("the Graphviz program 'dot' is not installed; the DOT text above can be pasted into any viewer")
    name, fmt = out.rsplit(".", 1)
    print("wrote", dot.render(name, format=fmt))
