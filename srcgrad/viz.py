"""Graphviz pictures of the ``grad_fn`` graph.

Example:
    >>> import srcgrad as torch
    >>> from srcgrad.viz import make_dot
    >>> w = torch.ones(3, requires_grad=True)
    >>> print(make_dot((w * 2).sum(), params={"w": w}).source.splitlines()[0])
    digraph {
"""
import shutil

from .eager.graph import AccumulateGrad
from .eager.tensor import Tensor


class Dot:
    """DOT source of a graph; ``render`` writes PNG/SVG with the ``graphviz`` package and program."""

    def __init__(self, source):
        self.source = source

    def __str__(self):
        return self.source

    def _repr_svg_(self):
        return self.pipe("svg").decode()

    def pipe(self, format="svg"):
        return self._graph(format).pipe()

    def render(self, filename="graph", format="png", cleanup=True, directory=None):
        """Write ``filename.format`` (PNG or SVG) and return its path."""
        return self._graph(format).render(filename, directory=directory, cleanup=cleanup)

    def _graph(self, format):
        try:
            import graphviz
        except ImportError:
            raise RuntimeError("rendering needs the 'graphviz' Python package: pip install graphviz "
                               "(or pip install 'srcgrad[viz]'); .source has the DOT text meanwhile") from None
        if shutil.which("dot") is None:
            raise RuntimeError("rendering needs the Graphviz program 'dot' on the PATH (apt install graphviz, "
                               "brew install graphviz); .source has the DOT text meanwhile")
        return graphviz.Source(self.source, format=format)


def _shape(t):
    return "(" + ", ".join(str(d) for d in t.shape) + ")"


def _quote(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def make_dot(var, params=None, show_attrs=False):
    """The grad_fn graph behind ``var`` (a tensor or tuple of tensors) as DOT.

    Leaves are light blue boxes with their name (from ``params``) and shape, backward nodes
    grey boxes named as PyTorch names them, the outputs dark green — the look of torchviz.
    """
    names = {id(v): k for k, v in (params or {}).items()}
    outputs = var if isinstance(var, (tuple, list)) else (var,)
    lines = ["digraph {", "\tgraph [size=\"12,12\"]",
             "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]"]
    seen = set()

    def node_id(obj):
        return str(id(obj))

    def add_node(fn):
        if fn in seen:
            return
        seen.add(fn)
        if isinstance(fn, AccumulateGrad):
            v = fn.variable
            label = (names.get(id(v), "") + "\n" if id(v) in names else "") + _shape(v)
            lines.append(f"\t{node_id(v)} [label={_quote(label)} fillcolor=lightblue]")
            lines.append(f"\t{node_id(v)} -> {node_id(fn)}")
            lines.append(f"\t{node_id(fn)} [label=AccumulateGrad]")
        else:
            lines.append(f"\t{node_id(fn)} [label={_quote(fn.name())}]")
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                lines.append(f"\t{node_id(nxt)} -> {node_id(fn)}")
                add_node(nxt)

    for out in outputs:
        if not isinstance(out, Tensor):
            raise TypeError(f"make_dot expects tensors, got {type(out).__name__}")
        label = _shape(out)
        lines.append(f"\t{node_id(out)} [label={_quote(label)} fillcolor=darkolivegreen1]")
        if out.grad_fn is not None:
            add_node(out.grad_fn)
            lines.append(f"\t{node_id(out.grad_fn)} -> {node_id(out)}")
    lines.append("}")
    return Dot("\n".join(lines) + "\n")
